// Audio files as the diarizer takes them: 16 kHz mono samples. One module for both pages (this package's page and
// the server's, which serves this file too).

export const SAMPLE_RATE = 16000;

// A file decoded by the browser into an OfflineAudioContext running at 16 kHz: decodeAudioData resamples to the
// context's rate, so the audio is resampled once, straight from its own rate (a 16 kHz file keeps its exact
// samples, as in the CLI). Channels are mixed to their mean, as the CLI's `--channel mix` does (summed in double
// precision, rounded to f32 once).
export async function decodeFile(file) {
  const context = new OfflineAudioContext({ numberOfChannels: 1, length: 1, sampleRate: SAMPLE_RATE });
  let audio;
  try {
    audio = await context.decodeAudioData(await file.arrayBuffer());
  } catch (error) {
    throw new Error(`cannot decode ${file.name}: ${error.message}`);
  }
  if (audio.numberOfChannels === 1) return audio.getChannelData(0).slice();
  const channels = Array.from({ length: audio.numberOfChannels }, (_, c) => audio.getChannelData(c));
  const mono = new Float32Array(audio.length);
  for (let i = 0; i < mono.length; i++) {
    let sum = 0;
    for (const channel of channels) sum += channel[i];
    mono[i] = sum / channels.length;
  }
  return mono;
}
