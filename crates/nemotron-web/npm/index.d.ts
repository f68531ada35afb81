// The package's public API, written by hand: wasm-bindgen's own declarations type every option, result and argument
// it converts at run time as `any`. Kept in step with crates/nemotron-web/src/bindings.rs and the modules beside it
// (the app in tests/web-app type-checks against this file and runs against the built package).

/**
 * Every failure rejects the promise (or, for `Diarizer.stream`, `Diarizer.weightFiles`, `writeSegments` and
 * `Speakers.fromBytes`, throws) with a plain `Error` whose `message` is the sentence `nemotron-audio` prints after
 * `error: ` for the same problem: `"threshold: 1.5 is not in [0, 1)"`, `"options: unknown setting `treshold` …"`, a
 * checkpoint's missing file, a GPU limit, `"this stream has ended: start another with `stream()`"`. A diarization
 * cancelled by its `signal` rejects with the signal's reason instead ({@link DiarizeSteps}).
 */
export type NemotronError = Error;

/** A file's bytes: a `Uint8Array`, or an `ArrayBuffer` (read without a copy until the package copies it in). */
export type Bytes = Uint8Array | ArrayBuffer;

/**
 * One file of a checkpoint, by its name in the checkpoint folder: `config.json` with `model.safetensors`, or with
 * `model.safetensors.index.json` and the shards holding the diarizer's tensors (`Diarizer.weightFiles`; the index
 * wins; other files are left alone, their `bytes` never read; a file the load reads given twice is refused).
 */
export interface CheckpointFile {
  name: string;
  bytes: Bytes;
}

/** The segments' text formats, as `diarize --segments - --format` writes them. */
export type SegmentFormat = "rttm" | "json" | "csv";

/** A live session's latency: `low` (1.04 s, the default), `very-low` (0.64 s) or `ultra-low` (0.32 s). */
export type Latency = "low" | "very-low" | "ultra-low";

/**
 * How segments are written as text.
 */
export interface TextOptions {
  /** `rttm` (the default), `json` or `csv`. */
  format?: SegmentFormat;
  /** The RTTM file id (default `audio`; whitespace becomes `_`; empty is refused). */
  uri?: string;
}

/**
 * The CLI's `diarize` segment flags in camelCase: upstream's threshold rule (`threshold`), or NeMo's
 * post-processing (any of the others; `postprocessing` is the text of a NeMo YAML file). Values out of range are
 * refused with the CLI's sentence.
 */
export interface SegmentFlags {
  /** Upstream's rule: a speaker speaks where its probability is at least this, in [0, 1) (default 0.5). */
  threshold?: number;
  onset?: number;
  offset?: number;
  padOnset?: number;
  padOffset?: number;
  minDurationOn?: number;
  minDurationOff?: number;
  /** A NeMo post-processing YAML file's text (a page has no files). */
  postprocessing?: string;
}

/**
 * Known speakers enrolled in a worker (`WorkerDiarizer.enroll`): their names and their profile file's bytes. A
 * `Speakers` is one too.
 */
export interface SpeakerProfile {
  /** The speakers' names, in enrollment order. */
  readonly names: readonly string[];
  /** The profile file's bytes (what `nemotron-audio enroll --out` writes, and `--speakers` reads). */
  toBytes(): Uint8Array;
}

/**
 * Known speakers for a call: a `Speakers` (or a worker's `SpeakerProfile`), or the bytes of a profile file
 * (`Speakers.toBytes`, or what `nemotron-audio enroll --out` writes).
 */
export type KnownSpeakers = Speakers | SpeakerProfile | Bytes;

/**
 * Hears of a diarization's steps: `(0, chunks)` before the first, then `(done, chunks)` after each, the counts
 * increasing to `(chunks, chunks)`.
 */
export type StepProgress = (done: number, chunks: number) => void;

/** What a diarization hears and answers to besides its options. */
export interface DiarizeSteps {
  onProgress?: StepProgress;
  /**
   * Cancels the diarization: it runs no further step, frees the GPU work it held, and the promise rejects with the
   * signal's reason (a `DOMException` named `AbortError` unless `abort(reason)` gave another), as `fetch` does; a
   * signal aborted before the call rejects it at once.
   */
  signal?: AbortSignal;
}

/** The options of `Diarizer.diarize` and `Diarizer.segments`. */
export interface DiarizeOptions extends SegmentFlags, TextOptions, DiarizeSteps {
  /** Keeps the most active speakers (at least 1): needs the whole recording, so a live session refuses it. */
  maxSpeakers?: number;
  /** Names the enrolled speakers, as `diarize --speakers` does. */
  speakers?: KnownSpeakers;
}

/** The options of `Diarizer.stream`. */
export interface StreamOptions extends SegmentFlags {
  latency?: Latency;
  /** Names the enrolled speakers, as `diarize --stream --speakers` does. */
  speakers?: KnownSpeakers;
}

/** Who spoke when: seconds from the start of the samples. */
export interface Segment {
  /** The diarizer's speaker slot, from 0. */
  speaker: number;
  /** The enrolled speaker's name, when the slot is one of the known speakers. */
  name?: string;
  start: number;
  end: number;
}

/** `Diarizer.segments`' result: the segments, and their text in the format asked for. */
export interface SegmentsResult {
  segments: Segment[];
  text: string;
}

/** A speaker started speaking at `time` (seconds, in 0.01 s steps), as `diarize --stream` prints it. */
export interface StartEvent {
  event: "start";
  speaker: number;
  name?: string;
  time: number;
}

/** A speaker's segment from `start` to `end` became final at `time`, as `diarize --stream` prints it. */
export interface EndEvent {
  event: "end";
  speaker: number;
  name?: string;
  time: number;
  start: number;
  end: number;
}

/** The events a live session's samples made final. */
export type LiveEvent = StartEvent | EndEvent;

/**
 * `LiveDiarization.end`'s result: the last events, an array that also carries the whole stream's segments (by
 * start, then speaker) and their text, as `diarize --stream --segments` writes them.
 */
export interface EndedStream extends Array<LiveEvent> {
  segments: Segment[];
  text: string;
}

/** The model, and the GPU adapter it runs on. */
export interface DiarizerInfo {
  description: string;
  /** The diarizer's speaker slots. */
  speakers: number;
  adapter: string;
  backend: string;
  driver: string;
  subgroups: boolean;
  maxStorageBufferBindingSize: number;
  maxComputeWorkgroupStorageSize: number;
  /** The adapter in one line, as `nemotron-audio` logs it. */
  summary: string;
  /** Bytes the model's GPU buffers (weights, workspaces) hold now. */
  gpuMemory: number;
  /** The most bytes they held at once. */
  gpuPeakMemory: number;
}

/** The diarizer's outputs on some samples. */
export interface SpeakerActivity {
  /** `[frames × speakers]`, one row per 10 ms. */
  logits: Float32Array;
  /** `[rows × speakers]`, at the encoder's frame rate. */
  probabilities: Float32Array;
  speakers: number;
  frames: number;
}

/** A known speaker to enroll: a name and a 16 kHz mono clip of at least 1 s, one voice only. */
export interface Enrollment {
  name: string;
  samples: Float32Array;
}

/**
 * Receives a load's progress, a fraction from 0 to 1 (reading the files, then the upload to the GPU), and the stage
 * where the package names it (`"compiling kernels k/n"`, `"downloading <file>"`, …).
 */
export type Progress = (fraction: number, stage?: string) => void;

/**
 * How `Diarizer.fromUrl` uses the model cache (the browser's Cache Storage): `"default"` uses a kept file once a
 * `HEAD` request finds it unchanged on the server (the same `ETag`, `Content-Length` and `Last-Modified`, those both
 * have; a Hugging Face Hub URL of a commit needs no asking) and keeps what it downloads; `"force-cache"` uses a kept
 * file without asking the server (offline); `"no-store"` neither reads nor keeps.
 */
export type CacheMode = "default" | "force-cache" | "no-store";

/** The options of `Diarizer.fromUrl`. */
export interface UrlOptions {
  /**
   * Hears of the load: the files read (the first half; stage `"downloading <file>"` or `"reading <file> from the
   * cache"`), then the kernels compiled (`"compiling kernels k/n"`).
   */
  onProgress?: Progress | null;
  /** `"default"` unless given. */
  cache?: CacheMode;
}

/** A file the model cache keeps (`ModelCache.list`). */
export interface CachedFile {
  url: string;
  /** Bytes. */
  size: number;
  /** The server's `ETag` when it was downloaded, or `null`. */
  etag: string | null;
  /** The server's `Last-Modified` when it was downloaded, or `null`. */
  lastModified: string | null;
  /** When it was downloaded and kept. */
  stored: Date;
  /** A Hugging Face Hub URL's revision (`…/resolve/<revision>/<file>`), else `null`. */
  revision: string | null;
}

/**
 * The models `Diarizer.fromUrl` keeps in the browser's Cache Storage, file by file, keyed by URL. Where the context
 * has no Cache Storage (a page that is not a secure context), the list is empty and nothing is kept.
 */
export class ModelCache {
  private constructor();
  /** The kept files, by URL. */
  static list(): Promise<CachedFile[]>;
  /**
   * Removes the kept files of `url` (a file's URL, or a folder's: every file under it), or every kept file; resolves
   * to the number removed.
   */
  static clear(url?: string | null): Promise<number>;
  free(): void;
}

/** Known speakers: each name with its clip, in enrollment order. */
export class Speakers {
  private constructor();
  /** The profile of a file's bytes that `toBytes` or `nemotron-audio enroll --out` wrote. Throws a `NemotronError`. */
  static fromBytes(bytes: Bytes): Speakers;
  /** The profile file's bytes (what `nemotron-audio enroll --out` writes, and `--speakers` reads). */
  toBytes(): Uint8Array;
  /** The speakers' names, in enrollment order. */
  readonly names: string[];
  /** Releases the profile's memory now instead of at garbage collection. */
  free(): void;
}

/** A diarization model on the GPU. */
export class Diarizer {
  private constructor();
  /**
   * Loads a checkpoint from its files, of which only `config.json`, the index and the weight files they name
   * (`weightFiles`) are copied in. Rejects with a `NemotronError`.
   */
  static load(files: CheckpointFile[], progress?: Progress | null): Promise<Diarizer>;
  /**
   * The weight files `load` reads of the checkpoint whose `config.json` is `config` and whose
   * `model.safetensors.index.json` is `index` (text or bytes; none where the checkpoint has no index): the shards
   * holding the diarizer's tensors (sorted; of a Transcribe checkpoint never its ASR tower's or its language model's),
   * else `["model.safetensors"]`, so that a caller reads only those. Throws a `NemotronError` (the load's sentence)
   * for a config or an index the load would refuse.
   */
  static weightFiles(config: Bytes | string, index?: Bytes | string | null): string[];
  /**
   * Loads the checkpoint folder at `url` (`config.json`, then `model.safetensors.index.json` and the shards holding
   * the diarizer's tensors, of a Transcribe checkpoint's never its ASR tower's or its language model's, or
   * `model.safetensors`), through the model cache (`ModelCache`). Rejects with a `NemotronError` (a file the server
   * refuses names its URL and the HTTP status).
   */
  static fromUrl(url: string, options?: UrlOptions | null): Promise<Diarizer>;
  /** The built-in demo model (random weights: its outputs are meaningless). */
  static demo(progress?: Progress | null): Promise<Diarizer>;
  info(): DiarizerInfo;
  /** Who spoke when in 16 kHz mono samples, as `diarize --segments - --format` writes it. */
  diarize(samples: Float32Array, options?: DiarizeOptions | null): Promise<string>;
  /** `diarize`'s segments as objects too. */
  segments(samples: Float32Array, options?: DiarizeOptions | null): Promise<SegmentsResult>;
  speakerActivity(samples: Float32Array, options?: DiarizeSteps | null): Promise<SpeakerActivity>;
  /** A live session, as `diarize --stream`. Throws a `NemotronError` for options it refuses. */
  stream(options?: StreamOptions | null): LiveDiarization;
  /**
   * Enrolls known speakers as `nemotron-audio enroll` does; rejects unless each clip speaks in a slot of its own.
   */
  enroll(speakers: Enrollment[]): Promise<Speakers>;
  /** Releases the model's GPU memory now instead of at garbage collection. */
  free(): void;
}

/** A live diarization session (`Diarizer.stream`). Pushes take turns: a second waits for the first. */
export class LiveDiarization {
  private constructor();
  /** Feeds 16 kHz mono samples (any number): the events they made final. */
  push(samples: Float32Array): Promise<LiveEvent[]>;
  /** Ends the stream; a push or end afterwards rejects. */
  end(options?: TextOptions | null): Promise<EndedStream>;
  free(): void;
}

/**
 * Segments written by the CLI's writers (a speaker's `name` as `diarize --speakers` writes it). Throws a
 * `NemotronError`.
 */
export function writeSegments(segments: Segment[], options?: TextOptions | null): string;

/**
 * How samples (or a checkpoint's bytes) go to a worker: by default the buffer behind them is transferred, not
 * copied, and is detached on the caller's side (its length becomes 0); `copy: true` copies it and leaves it usable. A
 * buffer that cannot be transferred (a `SharedArrayBuffer`, WebAssembly memory) is copied.
 */
export interface TransferOptions {
  copy?: boolean;
}

/** The options of `WorkerDiarizer.diarize` and `WorkerDiarizer.segments`: `onProgress` and `signal` cross over. */
export interface WorkerDiarizeOptions extends DiarizeOptions, TransferOptions {}

/** The options of `createWorkerDiarizer`. */
export interface WorkerOptions {
  /** The URL of `nemotron_web_bg.wasm`, when it is not beside the package's JS (as `init`'s argument). */
  wasm?: string | URL;
}

/**
 * The diarizer in a dedicated module Web Worker (`createWorkerDiarizer`): `Diarizer`'s calls, each a promise, the
 * work off the page's main thread. One model at a time: `load` or `demo` replaces the one before.
 */
export class WorkerDiarizer {
  private constructor();
  /** Loads a checkpoint from its files (their buffers transferred unless `copy`). Rejects with a `NemotronError`. */
  load(files: CheckpointFile[], progress?: Progress | null, options?: TransferOptions): Promise<void>;
  /** Loads the built-in demo model (random weights: its outputs are meaningless). */
  demo(progress?: Progress | null): Promise<void>;
  /** `Diarizer.fromUrl` in the worker: its downloads, and the model cache (the page's origin's), there. */
  fromUrl(url: string, options?: UrlOptions | null): Promise<void>;
  info(): Promise<DiarizerInfo>;
  diarize(samples: Float32Array, options?: WorkerDiarizeOptions | null): Promise<string>;
  segments(samples: Float32Array, options?: WorkerDiarizeOptions | null): Promise<SegmentsResult>;
  speakerActivity(samples: Float32Array, options?: (DiarizeSteps & TransferOptions) | null): Promise<SpeakerActivity>;
  /** A live session in the worker; rejects with a `NemotronError` for options it refuses. */
  stream(options?: StreamOptions | null): Promise<WorkerLiveDiarization>;
  /** Enrolls known speakers as `Diarizer.enroll` does (the clips' buffers transferred unless `copy`). */
  enroll(speakers: Enrollment[], options?: TransferOptions): Promise<SpeakerProfile>;
  /** Ends the worker and releases everything it holds; calls in flight reject. */
  free(): void;
}

/** A live session in a worker (`WorkerDiarizer.stream`). Pushes take turns: a second waits for the first. */
export class WorkerLiveDiarization {
  private constructor();
  /** Feeds 16 kHz mono samples (their buffer transferred unless `copy`): the events they made final. */
  push(samples: Float32Array, options?: TransferOptions): Promise<LiveEvent[]>;
  /** Ends the stream; a push or end afterwards rejects. */
  end(options?: TextOptions | null): Promise<EndedStream>;
}

/**
 * Starts a diarizer in a dedicated module Web Worker (`new Worker(new URL("./worker.js", import.meta.url), { type:
 * "module" })`, which bundlers such as Vite follow) and its WebAssembly; then `load` or `demo` gives it a model.
 * Needs no `init()` on the calling thread.
 */
export function createWorkerDiarizer(options?: WorkerOptions): Promise<WorkerDiarizer>;

/** Where the package's WebAssembly comes from, when not from beside its JS module (`nemotron_web_bg.wasm`). */
export type InitInput = RequestInfo | URL | Response | BufferSource | WebAssembly.Module;

/** What `init` resolves to: the module's raw WebAssembly exports (the API above is what to call). */
export type InitOutput = WebAssembly.Exports;

/**
 * Instantiates the package's WebAssembly; call it once, before anything else. Without an argument it fetches
 * `nemotron_web_bg.wasm` from beside the JS module (bundlers that handle `new URL(…, import.meta.url)` emit it).
 */
export default function init(
  module_or_path?: { module_or_path: InitInput | Promise<InitInput> } | InitInput | Promise<InitInput>,
): Promise<InitOutput>;

/** `init` from WebAssembly bytes or a compiled module already at hand, without awaiting. */
export function initSync(
  module: { module: BufferSource | WebAssembly.Module } | BufferSource | WebAssembly.Module,
): InitOutput;
