// The page's script: a WebSocket session fed from a file or the microphone, and the timeline of the segment events
// that come back. Plain JS modules, no build: the file decoding, the microphone and the timeline are the browser
// package's page modules (`/decode.js`, `/capture.js` with its worklet `/capture-processor.js`, `/timeline.js`),
// so both pages hear the same 16 kHz mono samples, channels mixed as the CLI mixes them.
import { FRAME, openMicrophone } from "./capture.js";
import { decodeFile, SAMPLE_RATE } from "./decode.js";
import { drawTimeline, segmentRow } from "./timeline.js";

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

// A file: decoded at 16 kHz (decode.js), handed to the socket all at once in frames of 0.1 s. No pacing: the server
// stops reading a session whose buffer is full, so the browser keeps the rest (bufferedAmount) and TCP sends it as
// fast as the server processes; the events arrive as soon as they would with any pacing.
async function streamFile(file) {
  const mono = await decodeFile(file);
  startSession((s) => {
    for (let i = 0; i < mono.length; i += FRAME) send(s, mono.subarray(i, i + FRAME));
    end(s);
  });
}

// The microphone (capture.js), opened before the session starts; its frames go to the socket once the session is
// ready, and those before are dropped.
async function streamMicrophone() {
  let s = null;
  const microphone = await openMicrophone((samples) => {
    if (s && document.body.dataset.state === "streaming") send(s, samples);
  });
  s = startSession(() => {
    $("stop").disabled = false;
  });
  s.stop = async () => {
    await microphone.stop();
    end(s);
  };
}

$("file").addEventListener("change", () => {
  const file = $("file").files[0];
  if (file) streamFile(file).catch((error) => setStatus(error.message, true));
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
