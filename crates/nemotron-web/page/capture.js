// The microphone as the diarizer takes it: 16 kHz mono samples, in frames. One module for both pages (this
// package's page and the server's, which serves this file and capture-processor.js too).

import { SAMPLE_RATE } from "./decode.js";

// Samples per frame handed over (0.1 s, what `diarize --stream` pushes from a file).
export const FRAME = 1600;

// The microphone through the AudioWorklet in capture-processor.js, on an AudioContext at the rate files are decoded
// to (the browser resamples the microphone to it); the processor mixes the channels to their mean, as the CLI's
// `--channel mix` does. `onSamples(Float32Array)` is called with each frame, in order. `stop()` hands over the last
// partial frame before it resolves.
export async function openMicrophone(onSamples) {
  const media = await navigator.mediaDevices.getUserMedia({
    audio: { channelCount: 1, echoCancellation: false, noiseSuppression: false, autoGainControl: false },
  });
  const context = new AudioContext({ sampleRate: SAMPLE_RATE });
  try {
    await context.audioWorklet.addModule(new URL("capture-processor.js", import.meta.url));
  } catch (error) {
    media.getTracks().forEach((track) => track.stop());
    await context.close();
    throw error;
  }
  const capture = new AudioWorkletNode(context, "capture", { processorOptions: { frame: FRAME } });
  let flushed;
  capture.port.onmessage = (message) => {
    if (message.data === "flushed") flushed();
    else onSamples(message.data);
  };
  context.createMediaStreamSource(media).connect(capture);
  return {
    async stop() {
      media.getTracks().forEach((track) => track.stop());
      await new Promise((resolve) => {
        flushed = resolve;
        capture.port.postMessage("flush");
      });
      await context.close();
    },
  };
}
