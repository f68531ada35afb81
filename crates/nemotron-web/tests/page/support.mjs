// Mono 16 kHz WAV files for the page test: read (16-bit PCM or 32-bit float) and written (the fake microphone needs
// 16-bit PCM; what the page recorded is written as float, so the CLI hears exactly the samples the page pushed).
const SAMPLE_RATE = 16000;

// The samples of a mono WAV, as numbers in [-1, 1].
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

// A WAV of `samples` as 16-bit PCM or 32-bit float, mono, 16 kHz.
export function writeWav(samples, float) {
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
  header.writeUInt16LE(1, 22);
  header.writeUInt32LE(SAMPLE_RATE, 24);
  header.writeUInt32LE(SAMPLE_RATE * width, 28);
  header.writeUInt16LE(width, 32);
  header.writeUInt16LE(width * 8, 34);
  header.write("data", 36);
  header.writeUInt32LE(data.length, 40);
  return Buffer.concat([header, data]);
}
