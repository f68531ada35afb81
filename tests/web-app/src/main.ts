// What an app does with the installed package, bundled by Vite: instantiate it, load diar-tiny's checkpoint from
// its files, diarize a recording, write its segments again, and meet a refusal. The test (app.test.mjs) serves the
// checkpoint and the recording at /models/diar-tiny/ and reads `window.appResult`.
import init, { Diarizer, writeSegments } from "nemotron-audio-web";
import * as api from "nemotron-audio-web";
import type { CheckpointFile, DiarizeOptions, DiarizerInfo, Segment } from "nemotron-audio-web";

export interface AppResult {
  /** The package's runtime exports, by name. */
  exports: string[];
  info: DiarizerInfo;
  /** The load's progress fractions, in order. */
  progress: number[];
  segments: Segment[];
  rttm: string;
  json: string;
  /** The message of the refusal of an option out of range. */
  refusal: string;
}

declare global {
  interface Window {
    appResult: Promise<AppResult>;
  }
}

const MODEL = "/models/diar-tiny/";

async function fetched(url: string): Promise<ArrayBuffer> {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
  return response.arrayBuffer();
}

// A 16 kHz mono recording's samples, as the browser decodes them (a 16 kHz file keeps its exact samples).
async function samplesOf(url: string): Promise<Float32Array> {
  const audio = await new OfflineAudioContext(1, 1, 16000).decodeAudioData(await fetched(url));
  return audio.getChannelData(0);
}

async function refusalOf(promise: Promise<string>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof Error) return error.message;
    throw new Error(`rejected with a non-Error: ${String(error)}`);
  }
  throw new Error("an option out of range was taken");
}

async function run(): Promise<AppResult> {
  await init();
  const files: CheckpointFile[] = await Promise.all(
    ["config.json", "model.safetensors"].map(async (name) => ({ name, bytes: await fetched(MODEL + name) })),
  );
  const progress: number[] = [];
  const diarizer = await Diarizer.load(files, (fraction) => progress.push(fraction));
  const samples = await samplesOf(`${MODEL}audio.wav`);
  const options: DiarizeOptions = { format: "rttm", uri: "audio" };
  const { segments, text } = await diarizer.segments(samples, options);
  const result: AppResult = {
    exports: Object.keys(api).sort(),
    info: diarizer.info(),
    progress,
    segments,
    rttm: text,
    json: writeSegments(segments, { format: "json" }),
    refusal: await refusalOf(diarizer.diarize(samples, { threshold: 1.5 })),
  };
  diarizer.free();
  return result;
}

window.appResult = run();
