// Type-checked (tsc --noEmit), never bundled or run: the declared API a caller writes against — live sessions, known
// speakers, the model cache, progress and cancellation, the worker, the result and event types — and calls the
// declarations must refuse. Each `@ts-expect-error` fails the check when the line it marks type-checks.
import init, {
  Diarizer,
  LiveDiarization,
  ModelCache,
  Speakers,
  WorkerDiarizer,
  WorkerLiveDiarization,
  createWorkerDiarizer,
  initSync,
  writeSegments,
} from "nemotron-audio-web";
import type {
  CachedFile,
  CheckpointFile,
  DiarizeSteps,
  EndedStream,
  LiveEvent,
  NemotronError,
  Segment,
  SpeakerActivity,
  SpeakerProfile,
  StepProgress,
  StreamOptions,
  UrlOptions,
  WorkerDiarizeOptions,
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
  const weights: string[] = Diarizer.weightFiles(new TextEncoder().encode("{}"), "{}");
  const names: string[] = [...again.names, ...Speakers.fromBytes(profile).names];
  const named = await diarizer.segments(samples, { speakers, maxSpeakers: 2, padOnset: 0.1 });
  const byBytes: string = await diarizer.diarize(samples, { speakers: profile, format: "csv" });
  const controller = new AbortController();
  const onProgress: StepProgress = (done, chunks) => void (done === chunks || controller.abort());
  const steps: DiarizeSteps = { onProgress, signal: controller.signal };
  const activity: SpeakerActivity = await diarizer.speakerActivity(samples, steps);
  const cancelled: string = await diarizer.diarize(samples, { ...steps, format: "json", threshold: 0.4 });
  const options: StreamOptions = { latency: "ultra-low", speakers, postprocessing: "parameters:\n  onset: 0.7\n" };
  const live: LiveDiarization = diarizer.stream(options);
  const events: LiveEvent[] = await live.push(samples);
  const ended: EndedStream = await live.end({ format: "json", uri: "talk" });
  const spans = [...events, ...ended].map((e) => (e.event === "end" ? e.end - e.start : e.time));
  const segment: Segment | undefined = named.segments[0];
  const failure: NemotronError = new Error(segment?.name ?? byBytes);
  diarizer.free();
  const counts = [activity.frames, spans.length, removed].map(String);
  const texts = [ended.text, writeSegments(ended.segments), failure.message, cancelled];
  return [...names, ...counts, ...stages, ...cached, ...revisions, ...texts, ...weights];
}

export async function inWorker(files: CheckpointFile[], samples: Float32Array, profile: Uint8Array): Promise<string> {
  const wasm = new URL("./nemotron_web_bg.wasm", location.href);
  const diarizer: WorkerDiarizer = await createWorkerDiarizer({ wasm });
  await diarizer.load(files, (fraction, stage) => void `${fraction} ${stage ?? ""}`, { copy: true });
  await diarizer.demo(null);
  const controller = new AbortController();
  const options: WorkerDiarizeOptions = { format: "csv", copy: true, signal: controller.signal, onProgress: () => {} };
  const text: string = await diarizer.diarize(samples, options);
  const { segments } = await diarizer.segments(samples, { speakers: profile, maxSpeakers: 1 });
  const activity: SpeakerActivity = await diarizer.speakerActivity(samples, { copy: true, signal: controller.signal });
  const enrolled: SpeakerProfile = await diarizer.enroll([{ name: "alice", samples }], { copy: true });
  const names: readonly string[] = enrolled.names;
  const live: WorkerLiveDiarization = await diarizer.stream({ latency: "very-low", speakers: enrolled });
  const events: LiveEvent[] = await live.push(samples, { copy: false });
  const ended: EndedStream = await live.end({ format: "rttm" });
  const named = await diarizer.diarize(samples, { speakers: Speakers.fromBytes(enrolled.toBytes()) });
  const { description } = await diarizer.info();
  diarizer.free();
  const counts = [segments.length, events.length, activity.frames].map(String);
  return [text, named, description, ended.text, ...names, ...counts].join();
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
  // @ts-expect-error: a diarization's progress is (done, chunks), not a load's (fraction, stage)
  void diarizer.diarize(samples, { onProgress: (fraction: number, stage: string) => `${fraction}${stage}` });
  // @ts-expect-error: `signal` is an AbortSignal, not its controller
  void diarizer.segments(samples, { signal: new AbortController() });
  // @ts-expect-error: speakerActivity takes no segment options
  void diarizer.speakerActivity(samples, { threshold: 0.5 });
  // @ts-expect-error: only the worker's calls copy or transfer
  void diarizer.diarize(samples, { copy: true });
  // @ts-expect-error: the config's text or bytes, not the object it parses into
  Diarizer.weightFiles({ sortformer: {} });
  // @ts-expect-error: the weight files are named at once, not in a promise
  void Diarizer.weightFiles("{}").then(() => {});
}

export async function refusedInWorker(diarizer: WorkerDiarizer, samples: Float32Array): Promise<void> {
  // @ts-expect-error: the worker's answers are promises
  diarizer.info().description;
  // @ts-expect-error: a worker's live session comes in a promise
  void diarizer.stream().push(samples);
  // @ts-expect-error: a live session takes no signal
  void diarizer.stream({ signal: new AbortController().signal });
  // @ts-expect-error: the package makes its objects itself
  new WorkerDiarizer();
  // @ts-expect-error: `copy` is a boolean
  await diarizer.diarize(samples, { copy: "yes" });
}
