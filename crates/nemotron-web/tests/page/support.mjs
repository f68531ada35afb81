// What both page tests share (this package's page, in this folder, and the server's, in
// crates/nemotron-server/tests/page): Debian's headless Chromium launched for a test, a fake microphone playing a WAV,
// the errors a page raises, and WAV files read and written. Each test folder pins playwright-core in its own
// package-lock.json, so a test hands its `chromium` in: this module, imported from either folder, resolves no package.

export const SAMPLE_RATE = 16000;

// Chromium's flags: nothing that reaches the network (the tests run on a machine that can reach only itself), audio
// that plays without a gesture, WebGPU on its software adapter (SwiftShader) when `webgpu`, and, when `microphone`
// names a WAV (16-bit PCM: Chromium reads that here), a fake microphone, granted without asking, that plays it in a
// loop.
function flags({ microphone, webgpu }) {
  const args = [
    "--no-sandbox",
    "--disable-quic",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--autoplay-policy=no-user-gesture-required",
  ];
  if (webgpu) args.push("--enable-unsafe-webgpu");
  if (microphone) {
    args.push(
      "--use-fake-ui-for-media-stream",
      "--use-fake-device-for-media-stream",
      `--use-file-for-fake-audio-capture=${microphone}`,
    );
  }
  return args;
}

// Debian's Chromium, headless, with `flags`: a browser context on a fresh profile in the folder `profile` (deleted by
// the test), or, without one, a browser of its own.
export async function launchChromium(chromium, { profile, microphone, webgpu = false, acceptDownloads = false } = {}) {
  const options = { executablePath: "/usr/bin/chromium", headless: true, args: flags({ microphone, webgpu }) };
  if (!profile) return chromium.launch(options);
  return chromium.launchPersistentContext(profile, { ...options, acceptDownloads });
}

// The errors `page` raises from now on, as lines of text: uncaught exceptions and console errors. A resource that
// failed to load is left out: Chromium logs every 404 as a console error, and a page may probe for a file that need
// not exist (a checkpoint's index); what a page makes of a missing file, the tests check on the page.
export function collectErrors(page) {
  const errors = [];
  page.on("pageerror", (error) => errors.push(`page error: ${error.message}`));
  page.on("console", (message) => {
    if (message.type() === "error" && !message.text().startsWith("Failed to load resource")) {
      errors.push(`console error: ${message.text()}`);
    }
  });
  return errors;
}

// The samples of a mono WAV (16-bit PCM or 32-bit float), as numbers in [-1, 1].
export function readWav(bytes) {
  let format;
  for (let at = 12; at + 8 <= bytes.length; ) {
    const id = bytes.toString("ascii", at, at + 4);
    const size = bytes.readUInt32LE(at + 4);
    if (id === "fmt ") format = { tag: bytes.readUInt16LE(at + 8), channels: bytes.readUInt16LE(at + 10) };
    if (id === "data") {
      if (!format || format.channels !== 1) throw new Error("only mono WAV files are read here");
      const data = bytes.subarray(at + 8, at + 8 + size);
      if (format.tag === 3) return Array.from({ length: data.length / 4 }, (_, i) => data.readFloatLE(i * 4));
      if (format.tag === 1) return Array.from({ length: data.length / 2 }, (_, i) => data.readInt16LE(i * 2) / 32768);
      throw new Error(`WAV format ${format.tag} is not read here`);
    }
    at += 8 + size + (size % 2);
  }
  throw new Error("no data chunk in the WAV");
}

// A 16 kHz WAV of `samples` as 16-bit PCM or 32-bit float (what a page recorded is written as float, so the CLI hears
// exactly the samples the page sent). `channels` > 1: `samples` holds the channels interleaved, frame after frame.
export function writeWav(samples, float, channels = 1) {
  const width = float ? 4 : 2;
  const data = Buffer.alloc(samples.length * width);
  samples.forEach((x, i) => {
    if (float) data.writeFloatLE(x, i * 4);
    else data.writeInt16LE(Math.max(-32768, Math.min(32767, Math.round(x * 32767))), i * 2);
  });
  const header = Buffer.alloc(44);
  header.write("RIFF", 0);
  header.writeUInt32LE(36 + data.length, 4);
  header.write("WAVEfmt ", 8);
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(float ? 3 : 1, 20);
  header.writeUInt16LE(channels, 22);
  header.writeUInt32LE(SAMPLE_RATE, 24);
  header.writeUInt32LE(SAMPLE_RATE * channels * width, 28);
  header.writeUInt16LE(channels * width, 32);
  header.writeUInt16LE(width * 8, 34);
  header.write("data", 36);
  header.writeUInt32LE(data.length, 40);
  return Buffer.concat([header, data]);
}
