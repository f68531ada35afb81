// The checkpoint files handed to `Diarizer.load`, as `{ name, bytes }`, picked from the files or folder the visitor
// chose (a URL is the package's: `Diarizer.fromUrl`). Only what the model reads is read: `config.json`, then
// `model.safetensors.index.json` where there is one, then the weight files the package names from those two
// (`Diarizer.weightFiles`): the shards holding the diarizer's tensors, or `model.safetensors`. A folder often holds
// more (audio, references, a Transcribe checkpoint's ASR and language-model shards: gigabytes), which is never read.

const CONFIG = "config.json";
const INDEX = "model.safetensors.index.json";

// The whole of `stream` in one buffer, `onBytes(read)` told as it arrives. `size` (when known) sizes the buffer once:
// a checkpoint can be gigabytes, so it is not gathered in pieces and copied again.
async function readAll(stream, size, onBytes) {
  const reader = stream.getReader();
  let buffer = new Uint8Array(size ?? 1 << 20);
  let read = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (read + value.length > buffer.length) {
      const grown = new Uint8Array(Math.max(buffer.length * 2, read + value.length));
      grown.set(buffer.subarray(0, read));
      buffer = grown;
    }
    buffer.set(value, read);
    read += value.length;
    onBytes(read);
  }
  return read === buffer.length ? buffer : buffer.slice(0, read);
}

// Reads the named files one after the other; `progress(fraction, text)` follows the bytes.
async function readEach(names, open, progress) {
  const sources = [];
  for (const name of names) sources.push({ name, ...(await open(name)) });
  const total = sources.reduce((sum, s) => sum + (s.size ?? 0), 0);
  const files = [];
  let before = 0;
  for (const source of sources) {
    const bytes = await readAll(source.stream, source.size, (read) =>
      progress(total ? (before + read) / total : 0, `reading ${source.name}`),
    );
    before += bytes.length;
    files.push({ name: source.name, bytes });
  }
  return files;
}

// The checkpoint among the chosen files (a plain selection, or a folder: then only its top level, where the
// checkpoint's files lie, is searched). `weightFiles(config, index)` is the package's `Diarizer.weightFiles`; the
// bar follows the weight files' bytes.
export async function fromPicked(fileList, weightFiles, progress) {
  const byName = new Map();
  for (const file of fileList) {
    const depth = file.webkitRelativePath ? file.webkitRelativePath.split("/").length - 1 : 0;
    if (depth <= 1 && !byName.has(file.name)) byName.set(file.name, file);
  }
  const open = async (name) => {
    const file = byName.get(name);
    if (!file) throw new Error(`the chosen files have no ${name}`);
    return { stream: file.stream(), size: file.size };
  };
  const first = await readEach(byName.has(INDEX) ? [CONFIG, INDEX] : [CONFIG], open, (_, text) => progress(0, text));
  const [config, index] = first;
  return [...first, ...(await readEach(weightFiles(config.bytes, index?.bytes), open, progress))];
}
