// The worker behind `createWorkerDiarizer()` (index.js): the package's WebAssembly runs here, off the page's main
// thread. Each message is a call `{ id, call, args, progress }` of a `Diarizer` (or of a live session); the answer is
// `{ id, value }` or `{ id, error: { name, message } }`, after `{ id, progress: [...] }` reports when the caller
// listens; `{ abort: id }` aborts a call in flight through the AbortSignal it was given.

import init, { Diarizer } from "./nemotron_web.js";

let diarizer = null; // the model loaded
const sessions = new Map(); // live sessions, by number
let sessionCount = 0;
const running = new Map(); // each call's AbortController, by id

function model() {
  if (!diarizer) throw new Error("no model is loaded: call load() or demo() first");
  return diarizer;
}

function session(number) {
  const live = sessions.get(number);
  if (!live) throw new Error("this stream has ended: start another with `stream()`");
  return live;
}

// A model loaded replaces the one before it, whose GPU memory is released at once.
function loaded(next) {
  diarizer?.free();
  diarizer = next;
}

// An answer whose buffers move back to the page instead of being copied.
class Moved {
  constructor(value, buffers) {
    Object.assign(this, { value, buffers });
  }
}

const calls = {
  async init({ wasm }) {
    await init(wasm === undefined ? undefined : { module_or_path: wasm });
  },
  async load({ files }, progress) {
    loaded(await Diarizer.load(files, progress));
  },
  async demo(_, progress) {
    loaded(await Diarizer.demo(progress));
  },
  // The model cache is the global scope's: the worker's origin is the page's, so both see the same kept files.
  async fromUrl({ url, cache }, onProgress) {
    loaded(await Diarizer.fromUrl(url, { cache, onProgress }));
  },
  info: () => model().info(),
  diarize: ({ samples, options }, onProgress, signal) => model().diarize(samples, { ...options, onProgress, signal }),
  segments: ({ samples, options }, onProgress, signal) => model().segments(samples, { ...options, onProgress, signal }),
  async speakerActivity({ samples, options }, onProgress, signal) {
    const activity = await model().speakerActivity(samples, { ...options, onProgress, signal });
    return new Moved(activity, [activity.logits.buffer, activity.probabilities.buffer]);
  },
  stream({ options }) {
    sessions.set(++sessionCount, model().stream(options));
    return sessionCount;
  },
  push: ({ session: number, samples }) => session(number).push(samples),
  async end({ session: number, options }) {
    const live = session(number);
    const events = await live.end(options);
    sessions.delete(number);
    live.free();
    return { events: [...events], segments: events.segments, text: events.text };
  },
  async enroll({ speakers }) {
    const profile = await model().enroll(speakers);
    const answer = { names: profile.names, bytes: profile.toBytes() };
    profile.free();
    return new Moved(answer, [answer.bytes.buffer]);
  },
};

self.onmessage = async ({ data }) => {
  if (data.abort !== undefined) {
    running.get(data.abort)?.abort();
    return;
  }
  const { id, call, args, progress } = data;
  const controller = new AbortController();
  running.set(id, controller);
  const onProgress = progress ? (...values) => self.postMessage({ id, progress: values }) : undefined;
  try {
    const answer = await calls[call](args, onProgress, controller.signal);
    if (answer instanceof Moved) self.postMessage({ id, value: answer.value }, answer.buffers);
    else self.postMessage({ id, value: answer });
  } catch (error) {
    const { name = "Error", message = String(error) } = error instanceof Object ? error : {};
    self.postMessage({ id, error: { name, message } });
  } finally {
    running.delete(id);
  }
};
