// Audio for the diarizer: 16 kHz mono samples, from a file or from the microphone.

export const SAMPLE_RATE = 16000;
// Samples per push to a live session (0.1 s, what `diarize --stream` pushes from a file).
const FRAME = 1600;

// A file decoded by the browser into an OfflineAudioContext running at 16 kHz: decodeAudioData resamples to the
// context's rate, so the audio is resampled once, straight from its own rate (a 16 kHz file keeps its exact
// samples, as in the CLI). Channels are mixed to their mean, as the CLI's `--channel mix` does.
export async function decodeFile(file) {
  const context = new OfflineAudioContext({ numberOfChannels: 1, length: 1, sampleRate: SAMPLE_RATE });
  let audio;
  try {
    audio = await context.decodeAudioData(await file.arrayBuffer());
  } catch (error) {
    throw new Error(`cannot decode ${file.name}: ${error.message}`);
  }
  if (audio.numberOfChannels === 1) return audio.getChannelData(0).slice();
  const mono = new Float32Array(audio.length);
  for (let i = 0; i < mono.length; i++) {
    let sum = 0;
    for (let c = 0; c < audio.numberOfChannels; c++) sum += audio.getChannelData(c)[i];
    mono[i] = sum / audio.numberOfChannels;
  }
  return mono;
}

// The microphone at 16 kHz through the AudioWorklet in capture-processor.js: `onSamples(Float32Array)` is called
// with each frame, in order. `stop()` hands over the last partial frame before it resolves.
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
