// A Transcribe checkpoint in shards, as a release lays one out, for the page tests of the files a load reads (by URL
// in cache.test.mjs, from a folder in page.test.mjs): which shards the diarizer needs is known from config.json and
// the index alone, and no other shard may be read.
import assert from "node:assert/strict";
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export const DIARIZER_SHARD = "model-00001-of-00003.safetensors";
export const ASR_SHARD = "model-00002-of-00003.safetensors";
export const LM_SHARD = "model-00003-of-00003.safetensors";

// The tensors of a safetensors file: name → { dtype, shape, bytes }.
function readSafetensors(path) {
  const file = readFileSync(path);
  const length = Number(file.readBigUInt64LE(0));
  const header = JSON.parse(file.toString("utf8", 8, 8 + length));
  delete header.__metadata__;
  const data = file.subarray(8 + length);
  return Object.entries(header).map(([name, { dtype, shape, data_offsets: [start, end] }]) => [
    name,
    { dtype, shape, bytes: data.subarray(start, end) },
  ]);
}

// A safetensors file of `tensors` ([name, { dtype, shape, bytes }] pairs), its header padded to 8 bytes.
function writeSafetensors(path, tensors) {
  const header = {};
  let offset = 0;
  for (const [name, { dtype, shape, bytes }] of tensors) {
    header[name] = { dtype, shape, data_offsets: [offset, offset + bytes.length] };
    offset += bytes.length;
  }
  const json = JSON.stringify(header);
  const text = Buffer.from(json.padEnd(Math.ceil(json.length / 8) * 8, " "));
  const length = Buffer.alloc(8);
  length.writeBigUInt64LE(BigInt(text.length));
  writeFileSync(path, Buffer.concat([length, text, ...tensors.map(([, { bytes }]) => bytes)]));
}

// The Transcribe checkpoint in the folder `source` (tiny-release-chunks) written to the new folder `folder` as a
// release checkpoint is laid out: its index places the diarizer's tensors (the front end's with them) in one shard,
// the ASR tower's, the fusion's and the word-timestamp head's in a second, and a language model's in a third, which
// the folder does not even have.
export function shardTranscribe(source, folder) {
  mkdirSync(folder);
  copyFileSync(join(source, "config.json"), join(folder, "config.json"));
  const diarizer = ["perception.encoder.diarization_model.", "perception.preprocessor."];
  const shards = { [DIARIZER_SHARD]: [], [ASR_SHARD]: [] };
  for (const tensor of readSafetensors(join(source, "model.safetensors"))) {
    shards[diarizer.some((prefix) => tensor[0].startsWith(prefix)) ? DIARIZER_SHARD : ASR_SHARD].push(tensor);
  }
  const weightMap = { "language_model.lm_head.weight": LM_SHARD };
  for (const [shard, tensors] of Object.entries(shards)) {
    assert.ok(tensors.length > 0, `${shard} holds tensors`);
    writeSafetensors(join(folder, shard), tensors);
    for (const [name] of tensors) weightMap[name] = shard;
  }
  writeFileSync(join(folder, "model.safetensors.index.json"), JSON.stringify({ weight_map: weightMap }));
}
