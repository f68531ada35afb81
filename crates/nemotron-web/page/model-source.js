// The checkpoint files handed to `Diarizer.load`, as `{ name, bytes }`, picked from the files or folder the visitor
// chose (a URL is the package's: `Diarizer.fromUrl`). Only what the model reads is read: `config.json` and
// `model.safetensors`, or `model.safetensors.index.json` and the shards it names (a folder often holds more, e.g.
// audio or references).

const CONFIG = "config.json";
const SINGLE = "model.safetensors";
const INDEX = "model.safetensors.index.json";

// The shard files an index names (its `weight_map` values), each once, in their first order.
function shardNames(bytes) {
  let index;
  try {
    index = JSON.parse(new TextDecoder().decode(bytes));
  } catch (error) {
    throw new Error(`${INDEX} is not JSON: ${error.message}`);
  }
  const map = index && index.weight_map;
  if (!map || typeof map !== "object") throw new Error(`${INDEX} has no "weight_map" object`);
  return [...new Set(Object.values(map))];
}

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
// checkpoint's files lie, is searched).
export async function fromPicked(fileList, progress) {
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
  return fromNames(byName.has(INDEX), open, progress);
}

async function fromNames(sharded, open, progress) {
  if (!sharded) return readEach([CONFIG, SINGLE], open, progress);
  const [config, index] = await readEach([CONFIG, INDEX], open, progress);
  return [config, index, ...(await readEach(shardNames(index.bytes), open, progress))];
}
