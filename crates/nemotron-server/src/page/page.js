// The page's script: a WebSocket session fed from a file (decoded at 16 kHz by the browser) or the microphone (an
// AudioContext at 16 kHz resamples it), and the timeline of the segment events that come back. Plain JS modules, no
// build: the timeline is the browser package's (`/timeline.js`).
import { drawTimeline, segmentRow } from "./timeline.js";

const SAMPLE_RATE = 16000;
// Samples per frame sent (0.1 s).
const FRAME = 1600;

const $ = (id) => document.getElementById(id);
let session = null;

function setStatus(text, isError) {
  $("status").textContent = text;
  $("status").className = isError ? "error" : "";
}

// One session: the socket, what came back, what was sent.
function startSession(onReady) {
  const url = new URL("v1/audio/diarizations/stream", location.href);
  url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
  const key = $("key").value.trim();
  if (key) url.searchParams.set("access_token", key);
  const s = {
    ws: new WebSocket(url),
    open: new Map(), // speaker → start of the segment it is in
    segments: [],
    processed: 0,
    recorded: [], // the frames sent, kept so the audio can be checked against the CLI
  };
  session = s;
  document.body.dataset.state = "connecting";
  $("segments").replaceChildren();
  s.ws.binaryType = "arraybuffer";
  s.ws.onopen = () => {
    const latency = $("latency").value;
    s.ws.send(JSON.stringify({ type: "session.start", latency, sample_rate: SAMPLE_RATE, encoding: "pcm_f32le" }));
  };
  s.ws.onmessage = (message) => receive(s, JSON.parse(message.data), onReady);
  s.ws.onclose = (close) => {
    if (document.body.dataset.state !== "error") document.body.dataset.state = "closed";
    if (!$("status").classList.contains("error")) setStatus(`closed (${close.code})`);
    $("stop").disabled = true;
    draw(s);
  };
  return s;
}

function receive(s, message, onReady) {
  if (message.event === "start") {
    s.open.set(message.speaker, message.time);
  } else if (message.event === "end") {
    s.open.delete(message.speaker);
    s.segments.push({ speaker: message.speaker, start: message.start, end: message.end });
    addRow(message.speaker, message.start, message.end);
  } else if (message.type === "session.ready") {
    document.body.dataset.state = "streaming";
    setStatus(`session ${message.id}: streaming`);
    onReady(s);
  } else if (message.type === "audio.ack") {
    s.processed = message.processed_until;
  } else if (message.type === "session.done") {
    document.body.dataset.state = "done";
    setStatus(`session ${message.id}: done, ${message.segments.length} segments in ${message.seconds.toFixed(2)} s`);
  } else if (message.type === "error") {
    document.body.dataset.state = "error";
    setStatus(`error ${message.code}: ${message.message}`, true);
  }
  draw(s);
}

function addRow(speaker, start, end) {
  $("segments").append(segmentRow({ speaker, start, end }));
}

function send(s, samples) {
  if (s.ws.readyState !== WebSocket.OPEN || samples.length === 0) return;
  const copy = Float32Array.from(samples);
  s.recorded.push(copy);
  s.ws.send(copy.buffer);
}

function end(s) {
  if (s.ws.readyState === WebSocket.OPEN) s.ws.send(JSON.stringify({ type: "session.end" }));
}

// The speaker rows, the segments made final (solid) and those still open (light), up to the audio processed.
function draw(s) {
  drawTimeline($("timeline"), $("legend"), s);
}

// A file: decoded and resampled to 16 kHz by the browser, channels mixed, and handed to the socket all at once. No
// pacing: the server stops reading a session whose buffer is full, so the browser keeps the rest (bufferedAmount)
// and TCP sends it as fast as the server processes; the events arrive as soon as they would with any pacing.
async function streamFile(file) {
  const decoder = new OfflineAudioContext(1, 1, SAMPLE_RATE);
  const audio = await decoder.decodeAudioData(await file.arrayBuffer());
  const mono = new Float32Array(audio.length);
  for (let c = 0; c < audio.numberOfChannels; c++) {
    const channel = audio.getChannelData(c);
    for (let i = 0; i < mono.length; i++) mono[i] += channel[i] / audio.numberOfChannels;
  }
  startSession((s) => {
    for (let i = 0; i < mono.length; i += FRAME) send(s, mono.subarray(i, i + FRAME));
    end(s);
  });
}

// The microphone through an AudioWorklet (its module from a Blob: no second file to serve).
const CAPTURE = `registerProcessor("capture", class extends AudioWorkletProcessor {
  process(inputs) { if (inputs[0].length) this.port.postMessage(inputs[0][0].slice()); return true; }
});`;

async function streamMicrophone() {
  const media = await navigator.mediaDevices.getUserMedia({
    audio: { channelCount: 1, echoCancellation: false, noiseSuppression: false, autoGainControl: false },
  });
  const context = new AudioContext({ sampleRate: SAMPLE_RATE });
  await context.audioWorklet.addModule(URL.createObjectURL(new Blob([CAPTURE], { type: "text/javascript" })));
  const capture = new AudioWorkletNode(context, "capture");
  context.createMediaStreamSource(media).connect(capture);
  let buffered = [];
  let length = 0;
  const s = startSession(() => {
    $("stop").disabled = false;
  });
  capture.port.onmessage = (message) => {
    if (s.ws.readyState !== WebSocket.OPEN || document.body.dataset.state !== "streaming") return;
    buffered.push(message.data);
    length += message.data.length;
    if (length >= FRAME) flush();
  };
  const flush = () => {
    const frame = new Float32Array(length);
    let at = 0;
    for (const piece of buffered) {
      frame.set(piece, at);
      at += piece.length;
    }
    buffered = [];
    length = 0;
    send(s, frame);
  };
  s.stop = async () => {
    media.getTracks().forEach((track) => track.stop());
    await context.close();
    flush();
    end(s);
  };
}

$("file").addEventListener("change", () => {
  const file = $("file").files[0];
  if (file) streamFile(file).catch((error) => setStatus(`cannot read ${file.name}: ${error}`, true));
});
$("mic").addEventListener("click", () => {
  streamMicrophone().catch((error) => setStatus(`microphone: ${error}`, true));
});
$("stop").addEventListener("click", () => {
  $("stop").disabled = true;
  if (session && session.stop) session.stop();
});

// For tests and curious users: the audio this page sent in the current session, as 16 kHz samples.
window.sentAudio = () => {
  const frames = session ? session.recorded : [];
  return Array.from(frames.flatMap((frame) => Array.from(frame)));
};
