// What an app does with the installed package, bundled by Vite: instantiate it, load diar-tiny's checkpoint from
// its files, diarize a recording, write its segments again, and meet a refusal; then the same in the package's Web
// Worker (which Vite bundles from the package's `new Worker(new URL("./worker.js", import.meta.url))`), with the
// diarization's progress, an aborted one, and the samples' buffers transferred or copied. The test (app.test.mjs)
// serves the checkpoint and the recording at /models/diar-tiny/ and reads `window.appResult`.
import init, { Diarizer, createWorkerDiarizer, writeSegments } from "nemotron-audio-web";
import * as api from "nemotron-audio-web";
import type { CheckpointFile, DiarizeOptions, DiarizerInfo, Segment, WorkerDiarizer } from "nemotron-audio-web";

export interface AppResult {
  /** The package's runtime exports, by name. */
  exports: string[];
  info: DiarizerInfo;
  /** The load's progress fractions, in order. */
  progress: number[];
  /** The recording's length in samples. */
  samples: number;
  segments: Segment[];
  rttm: string;
  json: string;
  /** The message of the refusal of an option out of range. */
  refusal: string;
  worker: WorkerResult;
}

type Report = [done: number, chunks: number];

/** What the worker gave. */
export interface WorkerResult {
  info: DiarizerInfo;
  /** Its segments of the recording, as RTTM, and the diarization's progress reports. */
  rttm: string;
  progress: Report[];
  /** The diarization aborted at its report of one chunk done: the rejection, and the reports heard. */
  abort: { name: string; isReason: boolean; progress: Report[] };
  /** The RTTM of a diarization after the aborted one. */
  again: string;
  /** The length of samples after a call that copied them, and after one that transferred them. */
  copiedLength: number;
  transferredLength: number;
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

async function inWorker(files: CheckpointFile[], samples: Float32Array): Promise<WorkerResult> {
  const diarizer: WorkerDiarizer = await createWorkerDiarizer();
  try {
    await diarizer.load(files);
    const copied = samples.slice();
    const progress: Report[] = [];
    const onProgress = (done: number, chunks: number) => progress.push([done, chunks]);
    const { text: rttm } = await diarizer.segments(copied, { format: "rttm", onProgress, copy: true });

    const controller = new AbortController();
    const heard: Report[] = [];
    const abortAtOne = (done: number, chunks: number) => {
      heard.push([done, chunks]);
      if (done === 1) controller.abort();
    };
    let rejection: unknown = null;
    try {
      await diarizer.diarize(samples.slice(), { onProgress: abortAtOne, signal: controller.signal });
    } catch (error) {
      rejection = error;
    }
    const name = rejection instanceof DOMException ? rejection.name : String(rejection);
    const abort = { name, isReason: rejection === controller.signal.reason, progress: heard };

    const transferred = samples.slice();
    const again = await diarizer.diarize(transferred);
    const info = await diarizer.info();
    return { info, rttm, progress, abort, again, copiedLength: copied.length, transferredLength: transferred.length };
  } finally {
    diarizer.free();
  }
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
    samples: samples.length,
    segments,
    rttm: text,
    json: writeSegments(segments, { format: "json" }),
    refusal: await refusalOf(diarizer.diarize(samples, { threshold: 1.5 })),
    // Last: the checkpoint's buffers move to the worker.
    worker: await inWorker(files, samples),
  };
  diarizer.free();
  return result;
}

window.appResult = run();
