// Type-checked (tsc --noEmit), never bundled or run: the declared API a caller writes against — live sessions, known
// speakers, the result and event types — and calls the declarations must refuse. Each `@ts-expect-error` fails the
// check when the line it marks type-checks.
import init, { Diarizer, LiveDiarization, ModelCache, Speakers, initSync, writeSegments } from "nemotron-audio-web";
import type {
  CachedFile,
  EndedStream,
  LiveEvent,
  NemotronError,
  Segment,
  SpeakerActivity,
  StreamOptions,
  UrlOptions,
} from "nemotron-audio-web";

export async function everyCall(samples: Float32Array, wasm: ArrayBuffer, profile: Uint8Array): Promise<string[]> {
  await init({ module_or_path: new URL("./nemotron_web_bg.wasm", import.meta.url) });
  initSync({ module: wasm });
  const diarizer = await Diarizer.demo();
  const stages: string[] = [];
  const fetching: UrlOptions = { cache: "force-cache", onProgress: (_, stage) => stage && stages.push(stage) };
  (await Diarizer.fromUrl("https://huggingface.co/org/model/resolve/main/", fetching)).free();
  const kept: CachedFile[] = await ModelCache.list();
  const removed: number = (await ModelCache.clear(kept[0]?.url)) + (await ModelCache.clear());
  const cached = kept.map((f) => `${f.url} ${f.size} ${f.etag ?? f.lastModified} ${f.stored.toISOString()}`);
  const revisions = kept.map((f) => f.revision ?? "not a Hub URL");
  const speakers: Speakers = await diarizer.enroll([{ name: "alice", samples }]);
  const again = Speakers.fromBytes(speakers.toBytes());
  const names: string[] = [...again.names, ...Speakers.fromBytes(profile).names];
  const named = await diarizer.segments(samples, { speakers, maxSpeakers: 2, padOnset: 0.1 });
  const byBytes: string = await diarizer.diarize(samples, { speakers: profile, format: "csv" });
  const activity: SpeakerActivity = await diarizer.speakerActivity(samples);
  const options: StreamOptions = { latency: "ultra-low", speakers, postprocessing: "parameters:\n  onset: 0.7\n" };
  const live: LiveDiarization = diarizer.stream(options);
  const events: LiveEvent[] = await live.push(samples);
  const ended: EndedStream = await live.end({ format: "json", uri: "talk" });
  const spans = [...events, ...ended].map((e) => (e.event === "end" ? e.end - e.start : e.time));
  const segment: Segment | undefined = named.segments[0];
  const failure: NemotronError = new Error(segment?.name ?? byBytes);
  diarizer.free();
  const counts = [activity.frames, spans.length, removed].map(String);
  const texts = [ended.text, writeSegments(ended.segments), failure.message];
  return [...names, ...counts, ...stages, ...cached, ...revisions, ...texts];
}

export function refused(diarizer: Diarizer, samples: Float32Array): void {
  // @ts-expect-error: a format the writers do not have
  void diarizer.diarize(samples, { format: "xml" });
  // @ts-expect-error: a live session cannot keep the most active speakers
  diarizer.stream({ maxSpeakers: 2 });
  // @ts-expect-error: snake_case is not an option's name
  void diarizer.segments(samples, { pad_onset: 0.1 });
  // @ts-expect-error: samples are a Float32Array
  void diarizer.diarize([0.1, 0.2]);
  // @ts-expect-error: a latency the sessions do not have
  diarizer.stream({ latency: "instant" });
  // @ts-expect-error: the package makes its objects itself
  new Diarizer();
  // @ts-expect-error: a segment has a start
  writeSegments([{ speaker: 0, end: 1 }]);
  // @ts-expect-error: a cache mode of fetch's that the model cache does not have
  void Diarizer.fromUrl("/models/diar/", { cache: "reload" });
  // @ts-expect-error: the progress is a function
  void Diarizer.fromUrl("/models/diar/", { onProgress: 0.5 });
  // @ts-expect-error: the cache is cleared by URL
  void ModelCache.clear(new URL("/models/diar/", "https://example.org"));
  // @ts-expect-error: the package makes its objects itself
  new ModelCache();
}
