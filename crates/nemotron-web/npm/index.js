// The package's entry: the WebAssembly module's API as wasm-bindgen writes it (nemotron_web.js: `init`, `Diarizer`,
// `Speakers`, `writeSegments`, …), unchanged, and the same diarizer run in a dedicated module Web Worker (worker.js)
// behind promises, `createWorkerDiarizer()`, so that a page's main thread never waits for the model. Types:
// index.d.ts.

export * from "./nemotron_web.js";
export { default } from "./nemotron_web.js";

// The buffers behind `views` (typed arrays or ArrayBuffers) that a message moves to the worker instead of copying:
// none when the caller asked for a copy. A SharedArrayBuffer is shared, never moved.
function movable(views, copy) {
  if (copy) return [];
  const buffers = new Set();
  for (const view of views) {
    const buffer = ArrayBuffer.isView(view) ? view.buffer : view;
    if (buffer instanceof ArrayBuffer) buffers.add(buffer);
  }
  return [...buffers];
}

// Known speakers as the worker takes them: a profile's bytes (a `Speakers`, or a `SpeakerProfile` the worker made,
// gives them through `toBytes()`).
function profileBytes(speakers) {
  return typeof speakers?.toBytes === "function" ? speakers.toBytes() : speakers;
}

// A profile the worker enrolled: its names, and a copy of its file's bytes on each `toBytes()`.
function speakerProfile({ names, bytes }) {
  return Object.freeze({ names: Object.freeze([...names]), toBytes: () => bytes.slice() });
}

// What a worker's failed call rejects with: the caller's signal's reason for a cancelled call (as `fetch` does),
// else an `Error` with the package's sentence.
function failure({ name, message }, signal) {
  if (name === "AbortError") return signal?.reason ?? new DOMException(message, "AbortError");
  return new Error(message);
}

const CREATE = Symbol("create");

/** The diarizer in a dedicated module Web Worker: `Diarizer`'s calls, answered by promises. */
export class WorkerDiarizer {
  #worker;
  #calls = new Map(); // id → { resolve, reject, onProgress, signal }
  #next = 0;
  #ended = null; // why no call can be answered any more

  constructor(token, worker) {
    if (token !== CREATE) throw new TypeError("a WorkerDiarizer comes from createWorkerDiarizer()");
    this.#worker = worker;
    worker.onmessage = ({ data }) => this.#answer(data);
    worker.onerror = (event) => {
      event.preventDefault();
      this.#end(new Error(`the diarizer's worker failed: ${event.message ?? "it could not start"}`));
    };
  }

  // Posts `call` with `args` (moving the buffers of `transfer`), `onProgress` told of the worker's reports, `signal`
  // forwarded as an abort of the call.
  #call(call, args = {}, { transfer = [], onProgress, signal } = {}) {
    if (this.#ended) return Promise.reject(this.#ended);
    if (signal?.aborted) return Promise.reject(signal.reason);
    const id = this.#next++;
    return new Promise((resolve, reject) => {
      const message = { id, call, args, progress: typeof onProgress === "function" };
      try {
        this.#worker.postMessage(message, transfer);
      } catch (error) {
        // A buffer the platform cannot move (one of wasm memory, say) is copied instead.
        if (!(error instanceof DOMException && error.name === "DataCloneError") || !transfer.length) throw error;
        this.#worker.postMessage(message);
      }
      const abort = () => this.#worker.postMessage({ abort: id });
      signal?.addEventListener("abort", abort, { once: true });
      const settled = () => {
        this.#calls.delete(id);
        signal?.removeEventListener("abort", abort);
      };
      this.#calls.set(id, {
        resolve: (value) => (settled(), resolve(value)),
        reject: (error) => (settled(), reject(error)),
        onProgress,
        signal,
      });
    });
  }

  #answer({ id, progress, value, error }) {
    const call = this.#calls.get(id);
    if (!call) return;
    if (progress) {
      // Once the caller has aborted, the reports still on their way are not theirs to hear.
      if (call.signal?.aborted) return;
      try {
        call.onProgress?.(...progress);
      } catch (thrown) {
        // As on the main thread, a callback that throws is the caller's business: the call goes on.
        reportError(thrown);
      }
    } else if (error) call.reject(failure(error, call.signal));
    else call.resolve(value);
  }

  #end(reason) {
    this.#ended ??= reason;
    for (const call of this.#calls.values()) call.reject(reason);
    this.#worker.terminate();
  }

  /** @internal Starts the worker's WebAssembly (`createWorkerDiarizer`). */
  [CREATE](wasm) {
    return this.#call("init", { wasm: wasm === undefined ? undefined : new URL(wasm, location.href).href });
  }

  load(files, progress, { copy = false } = {}) {
    const transfer = movable(files.map((file) => file.bytes), copy);
    return this.#call("load", { files }, { transfer, onProgress: progress });
  }

  /** `Diarizer.fromUrl` in the worker (its downloads and the model cache there too). */
  fromUrl(url, { onProgress, cache } = {}) {
    return this.#call("fromUrl", { url: new URL(url, location.href).href, cache }, { onProgress });
  }

  demo(progress) {
    return this.#call("demo", {}, { onProgress: progress });
  }

  info() {
    return this.#call("info");
  }

  #diarize(call, samples, options) {
    const { onProgress, signal, copy = false, speakers, ...rest } = options ?? {};
    const args = { samples, options: { ...rest, speakers: profileBytes(speakers) } };
    return this.#call(call, args, { transfer: movable([samples], copy), onProgress, signal });
  }

  diarize(samples, options) {
    return this.#diarize("diarize", samples, options);
  }

  segments(samples, options) {
    return this.#diarize("segments", samples, options);
  }

  speakerActivity(samples, options) {
    const { onProgress, signal, copy = false, ...rest } = options ?? {};
    const transfer = movable([samples], copy);
    return this.#call("speakerActivity", { samples, options: rest }, { transfer, onProgress, signal });
  }

  async stream(options) {
    const { speakers, ...rest } = options ?? {};
    const session = await this.#call("stream", { options: { ...rest, speakers: profileBytes(speakers) } });
    return new WorkerLiveDiarization(CREATE, (call, args, how) => this.#call(call, { session, ...args }, how));
  }

  async enroll(speakers, { copy = false } = {}) {
    const transfer = movable(speakers.map((speaker) => speaker.samples), copy);
    return speakerProfile(await this.#call("enroll", { speakers }, { transfer }));
  }

  free() {
    this.#end(new Error("this diarizer was freed: load another with createWorkerDiarizer()"));
  }
}

/** A live session in a `WorkerDiarizer`'s worker (`WorkerDiarizer.stream`). */
export class WorkerLiveDiarization {
  #call;

  constructor(token, call) {
    if (token !== CREATE) throw new TypeError("a WorkerLiveDiarization comes from WorkerDiarizer.stream()");
    this.#call = call;
  }

  push(samples, { copy = false } = {}) {
    return this.#call("push", { samples }, { transfer: movable([samples], copy) });
  }

  async end(options) {
    const { events, segments, text } = await this.#call("end", { options });
    return Object.assign(events, { segments, text });
  }
}

/**
 * A diarizer in a dedicated module Web Worker, its WebAssembly started (from `wasm`, a URL, when given; else from
 * beside the package's JS), no model loaded yet.
 */
export async function createWorkerDiarizer({ wasm } = {}) {
  const worker = new Worker(new URL("./worker.js", import.meta.url), { type: "module" });
  const diarizer = new WorkerDiarizer(CREATE, worker);
  try {
    await diarizer[CREATE](wasm);
  } catch (error) {
    diarizer.free();
    throw error;
  }
  return diarizer;
}
