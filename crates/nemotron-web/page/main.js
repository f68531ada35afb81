// The page: a checkpoint loaded into the package (./pkg/index.js, built by scripts/web-build.sh), known speakers
// enrolled or loaded if the visitor has any, then a file diarized whole (with its progress, and a Cancel button) or
// the microphone diarized live. Everything runs here, on the visitor's GPU through WebGPU: the model in the package's
// Web Worker (createWorkerDiarizer), so that this page's thread only hands over audio and draws; profiles are read and
// segments written by the package on this thread (small, quick calls).

import { CachedModels } from "./cached-models.js";
import { openMicrophone } from "./capture.js";
import { decodeFile, SAMPLE_RATE } from "./decode.js";
import { fromPicked } from "./model-source.js";
import { Results } from "./results.js";
import { SpeakerRows } from "./speakers.js";

const $ = (id) => document.getElementById(id);
let createWorkerDiarizer; // the package's worker diarizer, once its module is initialised
let Speakers; // the package's known speakers' profile class
let writeSegments; // the package's segment writer (the CLI's RTTM, JSON and CSV)
let weightFiles; // the package's choice of a checkpoint's weight files, from its config.json and index
let cachedModels; // the list of the models the package keeps in this browser
let diarizer = null; // the model loaded, in its worker
let diarizing = null; // the AbortController of the file's diarization in progress
let results = new Results();
let outputs = null; // {uri, segments, json} of the last diarization (the package's), for the downloads
let live = null; // the microphone session: {session, microphone, queue, recorded, failed}
let speakers = null; // the known speakers' profile (a Speakers, or the worker's enrolled profile), if any
// `options` with the `speakers` option where there is a profile (none at all where there is not).
const named = (options) => (speakers ? { ...options, speakers } : options);
const speakerRows = new SpeakerRows($("speaker-rows"), $("speaker-row"), fail);

function setStatus(text, isError = false) {
  $("status").textContent = text;
  $("status").classList.toggle("error", isError);
}

function setState(state) {
  document.body.dataset.state = state;
  const busy = ["loading", "enrolling", "diarizing", "streaming"].includes(state);
  $("model-step").disabled = busy || state === "no-webgpu" || !createWorkerDiarizer;
  $("speakers-step").disabled = busy || !diarizer;
  for (const id of ["speakers-save", "speakers-forget"]) $(id).disabled = !speakers;
  // While the microphone streams only Stop is live in the audio step, while a file is diarized only Cancel.
  const running = state === "streaming" || state === "diarizing";
  $("audio-step").disabled = (busy && !running) || !diarizer;
  for (const id of ["audio-file", "latency", "mic"]) $(id).disabled = running;
  $("stop").disabled = state !== "streaming";
  $("cancel").disabled = state !== "diarizing";
  for (const id of ["download-rttm", "download-json"]) $(id).disabled = busy || !outputs;
}

// A rejected promise: its message, as the package words it (the CLI's sentence).
function fail(error) {
  setStatus(error instanceof Error ? error.message : String(error), true);
  setState("error");
}

// Why this browser cannot run the model, or null when it can.
async function webGpuProblem() {
  if (!navigator.gpu) {
    return "This browser has no WebGPU (navigator.gpu is missing), and the model runs on the GPU through WebGPU. " +
      "Use a browser that has it (Chrome or Edge 113+, Safari 26+; in Firefox and in Chrome on Linux it may have " +
      "to be turned on), on a page served over https or from localhost.";
  }
  const adapter = await navigator.gpu.requestAdapter().catch(() => null);
  if (!adapter) {
    return "This browser has WebGPU but gives it no GPU (navigator.gpu.requestAdapter() returned none): WebGPU " +
      "may be turned off, or this GPU blocked. In Chrome on Linux, turn on chrome://flags/#enable-unsafe-webgpu.";
  }
  return null;
}

// Loads a model into a worker of its own: `open(worker, progress)` loads it there, telling `progress(fraction, stage)`
// how far it is (the package's stages: reading or downloading the files, compiling the model's kernels).
async function loadModel(what, open) {
  setState("loading");
  $("progress").value = 0;
  const progress = (fraction, stage) => {
    $("progress").value = fraction;
    $("model-status").textContent = stage ?? `loading ${what} onto the GPU`;
  };
  $("model-status").classList.remove("error");
  setStatus(`loading ${what}`);
  try {
    // The one before keeps serving until this one is ready.
    const loaded = await createWorkerDiarizer();
    try {
      await open(loaded, progress);
    } catch (error) {
      loaded.free();
      throw error;
    }
    diarizer?.free();
    diarizer = loaded;
    progress(1, `${what} loaded`);
    setStatus("pick an audio file or use the microphone");
    setState("ready");
  } catch (error) {
    $("model-status").textContent = `${what} not loaded`;
    $("model-status").classList.add("error");
    fail(error);
  }
}

function startOver() {
  outputs = null;
  results = new Results();
}

async function diarizeFile(file) {
  startOver();
  const controller = new AbortController();
  diarizing = controller;
  $("diarize-progress").value = 0;
  setState("diarizing");
  try {
    setStatus(`decoding ${file.name}`);
    const samples = await decodeFile(file);
    const seconds = samples.length / SAMPLE_RATE;
    const diarizingText = `diarizing ${file.name} (${seconds.toFixed(2)} s)`;
    setStatus(diarizingText);
    const started = performance.now();
    const uri = file.name.replace(/\.[^.]*$/, "");
    const onProgress = (done, chunks) => {
      $("diarize-progress").value = done / chunks;
      setStatus(`${diarizingText}: chunk ${done}/${chunks}`);
    };
    // The samples' buffer moves to the worker: the page keeps only the segments.
    const options = named({ format: "json", uri, onProgress, signal: controller.signal });
    const { segments, text: json } = await diarizer.segments(samples, options);
    const took = (performance.now() - started) / 1000;
    results.processed = seconds;
    await results.add(segments);
    outputs = { uri, segments, json };
    const voices = new Set(segments.map((s) => s.speaker)).size;
    setStatus(`${file.name}: ${segments.length} segments of ${voices} speakers in ${seconds.toFixed(2)} s of ` +
      `audio, diarized in ${took.toFixed(2)} s (${(seconds / took).toFixed(2)}× realtime)`);
    setState("done");
  } catch (error) {
    if (error === controller.signal.reason) {
      setStatus(`the diarization of ${file.name} was cancelled`);
      setState("cancelled");
    } else {
      fail(error);
    }
  } finally {
    diarizing = null;
  }
}

// The microphone, live: each frame the worklet posts is pushed in order (one push at a time: the session is
// sequential), its events drawn as they come.
async function startMicrophone() {
  startOver();
  const s = { queue: Promise.resolve(), recorded: [] };
  try {
    s.session = await diarizer.stream(named({ latency: $("latency").value }));
  } catch (error) {
    fail(error);
    return;
  }
  live = s;
  const push = async (samples) => {
    // A copy goes to the worker: the page keeps each frame (`sentAudio`).
    const events = await s.session.push(samples, { copy: true });
    results.processed += samples.length / SAMPLE_RATE;
    results.take(events);
  };
  const onSamples = (samples) => {
    if (s.failed) return;
    s.recorded.push(samples);
    s.queue = s.queue.then(() => s.failed || push(samples)).catch((error) => {
      s.failed = true;
      fail(error);
      s.microphone?.stop();
    });
  };
  try {
    s.microphone = await openMicrophone(onSamples);
  } catch (error) {
    fail(new Error(`microphone: ${error.message}`));
    return;
  }
  setStatus(`listening (${$("latency").selectedOptions[0].textContent} latency)`);
  setState("streaming");
}

async function stopMicrophone() {
  const s = live;
  $("stop").disabled = true;
  try {
    await s.microphone.stop();
    await s.queue;
    if (s.failed) return;
    const uri = "microphone";
    // The last events, carrying every segment of the stream and their JSON, as `diarize --stream` writes them.
    const last = await s.session.end({ format: "json", uri });
    results.take(last);
    outputs = { uri, segments: last.segments, json: last.text };
    setStatus(`microphone: ${last.segments.length} segments in ${results.processed.toFixed(2)} s of audio`);
    setState("done");
  } catch (error) {
    fail(error);
  }
}

// The profile every diarization from now on names its speakers by (`null`: none), and where it came from.
function useSpeakers(profile, origin) {
  // A Speakers holds memory of the package's until freed; the worker's profile is plain bytes.
  if (speakers instanceof Speakers) speakers.free();
  speakers = profile;
  $("speakers-status").textContent = profile
    ? `known speakers (${origin}): ${profile.names.join(", ")}`
    : "no known speakers: speakers are spk0, spk1, …";
  setState("ready");
}

async function enrollSpeakers() {
  let clips;
  try {
    clips = speakerRows.clips();
  } catch (error) {
    fail(error);
    return;
  }
  setState("enrolling");
  setStatus(`enrolling ${clips.map((c) => c.name).join(", ")}`);
  try {
    // Copies of the clips go to the worker: the rows keep theirs, to enroll again.
    useSpeakers(await diarizer.enroll(clips, { copy: true }), "enrolled");
    setStatus("enrolled: pick an audio file or use the microphone");
  } catch (error) {
    fail(error);
  }
}

async function loadSpeakers(file) {
  try {
    useSpeakers(Speakers.fromBytes(new Uint8Array(await file.arrayBuffer())), file.name);
    setStatus(`${file.name} loaded: pick an audio file or use the microphone`);
  } catch (error) {
    fail(error);
  }
}

// A file saved by the browser (text or bytes: a Blob behind an object URL, freed once the download has begun).
function download(name, data, type) {
  const url = URL.createObjectURL(new Blob([data], { type }));
  const link = Object.assign(document.createElement("a"), { href: url, download: name });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

// The checkpoint among chosen files, read here, then moved to the worker (the page keeps none of their buffers) and
// uploaded there (the bar again from 0).
const fromFiles = (fileList) => async (worker, progress) => {
  const files = await fromPicked(fileList, weightFiles, progress);
  progress(0);
  await worker.load(files, progress);
};
$("model-folder").addEventListener("change", (e) => loadModel("the folder's model", fromFiles(e.target.files)));
$("model-files").addEventListener("change", (e) => loadModel("the chosen model", fromFiles(e.target.files)));
$("model-url-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  const url = $("model-url").value.trim();
  if (!url) return;
  // The package downloads the files, or reads them from its cache, and keeps what it downloaded.
  await loadModel(url, (worker, onProgress) => worker.fromUrl(url, { onProgress }));
  await cachedModels.show();
});
$("model-demo").addEventListener("click", () => loadModel("the demo model", (worker, progress) => worker.demo(progress)));
$("audio-file").addEventListener("change", (e) => {
  const file = e.target.files[0];
  // Emptied, so that choosing the same file again (say, after loading another model) diarizes it again.
  e.target.value = "";
  if (file) diarizeFile(file);
});
$("speaker-add").addEventListener("click", () => speakerRows.add());
$("speakers-enroll").addEventListener("click", enrollSpeakers);
$("speakers-save").addEventListener("click", () =>
  download("speakers.safetensors", speakers.toBytes(), "application/octet-stream"),
);
$("speakers-load").addEventListener("change", (e) => {
  const file = e.target.files[0];
  e.target.value = "";
  if (file) loadSpeakers(file);
});
$("speakers-forget").addEventListener("click", () => useSpeakers(null));
$("mic").addEventListener("click", startMicrophone);
$("stop").addEventListener("click", stopMicrophone);
$("cancel").addEventListener("click", () => diarizing?.abort());
$("download-rttm").addEventListener("click", () =>
  download(`${outputs.uri}.rttm`, writeSegments(outputs.segments, { format: "rttm", uri: outputs.uri }), "text/plain"),
);
$("download-json").addEventListener("click", () => download(`${outputs.uri}.json`, outputs.json, "application/json"));
window.addEventListener("unhandledrejection", (e) => fail(e.reason));

// For tests and curious users: the 16 kHz samples the last microphone session pushed.
window.sentAudio = () => (live ? live.recorded.flatMap((frame) => Array.from(frame)) : []);

async function start() {
  const problem = await webGpuProblem();
  if (problem) {
    $("gpu-message").textContent = problem;
    $("gpu-message").hidden = false;
    setStatus("no WebGPU: nothing can run here", true);
    setState("no-webgpu");
    return;
  }
  try {
    const pkg = await import("./pkg/index.js");
    await pkg.default();
    createWorkerDiarizer = pkg.createWorkerDiarizer;
    Speakers = pkg.Speakers;
    writeSegments = pkg.writeSegments;
    weightFiles = (config, index) => pkg.Diarizer.weightFiles(config, index);
    cachedModels = new CachedModels(pkg.ModelCache, fail);
  } catch (error) {
    fail(new Error(`the diarizer's package did not start: ${error.message}`));
    return;
  }
  speakerRows.add();
  await cachedModels.show();
  setStatus("pick a model");
  setState("idle");
}

start();
