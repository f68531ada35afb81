// The browser page (crates/nemotron-web/page, served with the wasm package as scripts/web-build.sh lays them out)
// in Debian's headless Chromium, driven by playwright-core, on WebGPU's software adapter (SwiftShader). A model loaded
// each way the page offers (the demo, a folder, files, a URL), a WAV diarized whole (also with known speakers, their
// profile loaded or enrolled on the page) and a fake microphone diarized live must show, and download, what
// `nemotron-audio diarize` writes for the same model and audio; of a sharded Transcribe folder, only the files the
// diarizer needs may be read; a long file, diarized in the package's worker, must leave the page's thread free (no
// task of 50 ms or more) and be cancellable; a broken checkpoint and a browser without WebGPU must say what is wrong.
// Run by scripts/web-page-test.sh: the built site is NEMOTRON_WEB_SITE, the CLI binary NEMOTRON_AUDIO.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { ASR_SHARD, DIARIZER_SHARD, shardTranscribe } from "./sharded.mjs";
import { serve } from "./static-server.mjs";
import { collectErrors, launchChromium, readWav, SAMPLE_RATE, writeWav } from "./support.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, "../../../..");
const site = process.env.NEMOTRON_WEB_SITE;
const binary = process.env.NEMOTRON_AUDIO ?? join(root, "target/debug/nemotron-audio");
const tiny = join(root, "testdata/reference/diar-tiny");
// A Transcribe checkpoint (an ASR tower, fusion and word-timestamp head beside the diarizer), sharded by the tests.
const transcribe = join(root, "testdata/reference/tiny-release-chunks");
const audio = join(tiny, "audio.wav");
const work = mkdtempSync(join(tmpdir(), "nemotron-web-page-"));
// tiny-release-chunks' checkpoint in shards (`shardTranscribe`: its language-model shard absent).
const sharded = join(work, "transcribe");
// SwiftShader runs WebGPU on the CPU: loading and diarizing take seconds, not milliseconds.
const SLOW = { timeout: 300_000 };
let server;
let context; // the browser with WebGPU, on a fresh profile

// What the CLI writes for `audio` with the model `model` (a folder, or "--demo"): JSON and RTTM segments; with
// `speakers` (a profile file), the enrolled speakers named.
function cli(model, path, format, speakers) {
  const source = model === "--demo" ? ["--demo"] : ["--model", model];
  const args = ["diarize", ...source, "--quiet", "--audio", path, "--segments", "-", "--format", format];
  if (speakers) args.push("--speakers", speakers);
  return execFileSync(binary, args, { encoding: "utf8" });
}

// The live session's end events and its `--segments` JSON, as `diarize --stream` writes them.
function cliStream(model, path, latency) {
  const json = join(work, "stream.json");
  const args = ["diarize", "--model", model, "--quiet", "--stream", "--latency", latency, "--audio", path];
  const out = execFileSync(binary, [...args, "--segments", json], { encoding: "utf8" });
  const ends = out
    .split("\n")
    .filter((line) => line)
    .map((line) => JSON.parse(line))
    .filter((event) => event.event === "end");
  const rows = ends.map((e) => [`spk${e.speaker}`, e.start.toFixed(2), e.end.toFixed(2)]);
  return { rows, json: readFileSync(json, "utf8") };
}

// The table rows of a JSON segment file, as the page writes them (an enrolled speaker by name).
function rowsOf(json) {
  return JSON.parse(json).map((s) => [s.Name ?? `spk${s.Speaker}`, s.Start.toFixed(2), s.End.toFixed(2)]);
}

async function pageRows(page) {
  return page.$$eval("#segments tr", (rows) => rows.map((row) => [...row.cells].map((cell) => cell.textContent)));
}

// The text of the file a download button saves.
async function downloaded(page, button) {
  const [download] = await Promise.all([page.waitForEvent("download"), page.click(button)]);
  return readFileSync(await download.path(), "utf8");
}

// A new page (`setUp(page)` before it starts), started, and the errors it raises (each test checks there are none).
async function openPage(setUp) {
  const page = await context.newPage();
  await setUp?.(page);
  const errors = collectErrors(page);
  await page.goto(`${server.origin}/`);
  await page.waitForSelector("body[data-state=idle]", { timeout: 60_000 });
  return { page, errors };
}

// Loads a model by `how`, then waits until the page says it is loaded (or fails the test with the page's message).
async function loadModel(page, how) {
  await how(page);
  await page.waitForSelector("body:is([data-state=ready], [data-state=error])", SLOW);
  assert.equal(await page.getAttribute("body", "data-state"), "ready", await page.textContent("#status"));
}

const fromFolder = (page) => page.setInputFiles("#model-folder", tiny);

// Diarizes a WAV file on the page, until the page says it is done (or fails the test with its message).
async function diarizeOnPage(page, path) {
  await page.setInputFiles("#audio-file", path);
  await page.waitForSelector("body:is([data-state=done], [data-state=error])", SLOW);
  const status = await page.textContent("#status");
  assert.equal(await page.getAttribute("body", "data-state"), "done", status);
  console.log(status); // the speed, in the test log
  assert.equal(await page.evaluate(() => document.getElementById("diarize-progress").value), 1);
}

// Diarizes the test WAV on the page and checks the result against the CLI's (`diarizedAsCli`).
async function diarizeMatchesCli(page, model, speakers) {
  await diarizeOnPage(page, audio);
  return diarizedAsCli(page, model, speakers, audio);
}

// Checks the table and both downloads of the page's diarization of `path` against the CLI's files (with `speakers`,
// the profile the page uses, given to the CLI's `--speakers`). The RTTM, for a caller to look into.
async function diarizedAsCli(page, model, speakers, path) {
  const json = cli(model, path, "json", speakers);
  assert.ok(rowsOf(json).length > 0, "the CLI finds no segment in the test audio: the comparison would be empty");
  assert.deepEqual(await pageRows(page), rowsOf(json));
  assert.equal(await downloaded(page, "#download-json"), json);
  const rttm = cli(model, path, "rttm", speakers);
  assert.equal(await downloaded(page, "#download-rttm"), rttm);
  return rttm;
}

// The speakers an RTTM file names (its eighth field), each once.
const rttmSpeakers = (rttm) => [...new Set(rttm.trim().split("\n").map((line) => line.split(/\s+/)[7]))].sort();

// Two clips of the test WAV, each one voice alone (as testdata/web/known-speakers.safetensors enrolls them), written
// as float WAVs so that the CLI and the page read the same samples.
const CLIPS = [
  ["alice", 0, 19_680],
  ["bob", 48_000, 79_840],
];
function writeClips() {
  const samples = readWav(readFileSync(audio));
  return CLIPS.map(([name, start, end]) => {
    const path = join(work, `${name}.wav`);
    writeFileSync(path, writeWav(samples.slice(start, end), true));
    return [name, path];
  });
}

// A 60 s recording: the test WAV over and over, written as float so that the CLI and the page read the same samples.
function writeLongAudio() {
  const samples = readWav(readFileSync(audio));
  const long = Array.from({ length: Math.ceil((60 * SAMPLE_RATE) / samples.length) }, () => samples).flat();
  const path = join(work, "long.wav");
  writeFileSync(path, writeWav(long.slice(0, 60 * SAMPLE_RATE), true));
  return path;
}

// The durations of the page's long tasks (50 ms or more on its main thread) from now on, in `window.longTasks`.
async function watchLongTasks(page) {
  await page.evaluate(() => {
    window.longTasks = [];
    const observer = new PerformanceObserver((list) => {
      for (const task of list.getEntries()) window.longTasks.push(`${task.name}: ${task.duration} ms`);
    });
    observer.observe({ type: "longtask" });
  });
}

// Waits until the page's known speakers' line names `names` (or the page fails, and the test with its status).
async function speakersShown(page, names) {
  const shown = (line) =>
    document.getElementById("speakers-status").textContent.endsWith(line) || document.body.dataset.state === "error";
  await page.waitForFunction(shown, `: ${names.join(", ")}`, SLOW);
  assert.equal(await page.getAttribute("body", "data-state"), "ready", await page.textContent("#status"));
}

before(async () => {
  assert.ok(site, "NEMOTRON_WEB_SITE must name the built site (scripts/web-build.sh DIR)");
  // A checkpoint whose config.json is not JSON, for the package's own error.
  const broken = join(work, "broken");
  mkdirSync(broken);
  writeFileSync(join(broken, "config.json"), "{ not json");
  copyFileSync(join(tiny, "model.safetensors"), join(broken, "model.safetensors"));
  shardTranscribe(transcribe, sharded);
  server = await serve([
    ["/models/diar-tiny/", tiny],
    ["/models/broken/", broken],
    ["/", resolve(site)],
  ]);
  // The fake microphone plays the test audio in a loop (Chromium reads 16-bit PCM here).
  const microphone = join(work, "microphone-source.wav");
  writeFileSync(microphone, writeWav(readWav(readFileSync(audio)), false));
  const profile = join(work, "profile");
  context = await launchChromium(chromium, { profile, microphone, webgpu: true, acceptDownloads: true });
});

after(async () => {
  await context?.close();
  server?.close();
  rmSync(work, { recursive: true, force: true });
});

test("without WebGPU the page says so and offers nothing to run", async () => {
  // The same Chromium without --enable-unsafe-webgpu: navigator.gpu is there but gives no adapter.
  const browser = await launchChromium(chromium);
  try {
    const page = await browser.newPage();
    const errors = collectErrors(page);
    await page.goto(`${server.origin}/`);
    await page.waitForSelector("body[data-state=no-webgpu]", { timeout: 60_000 });
    assert.ok(await page.isVisible("#gpu-message"));
    assert.match(await page.textContent("#gpu-message"), /has WebGPU but gives it no GPU/);
    assert.ok(await page.isDisabled("#model-demo"));
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
  }
});

test("the demo model diarizes a WAV as diarize --demo does", SLOW, async () => {
  const { page, errors } = await openPage();
  await loadModel(page, (p) => p.click("#model-demo"));
  await diarizeMatchesCli(page, "--demo");
  assert.deepEqual(errors, []);
  await page.close();
});

test("a checkpoint folder diarizes a WAV as diarize --model does", SLOW, async () => {
  const { page, errors } = await openPage();
  await loadModel(page, fromFolder);
  assert.equal(await page.evaluate(() => document.getElementById("progress").value), 1);
  await diarizeMatchesCli(page, tiny);
  assert.deepEqual(errors, []);
  await page.close();
});

test("a checkpoint from chosen files, and from a URL, diarizes a WAV as diarize --model does", SLOW, async () => {
  const { page, errors } = await openPage();
  // Files the model does not read among those chosen are left alone.
  const files = ["config.json", "model.safetensors", "audio.wav", "reference.safetensors"].map((f) => join(tiny, f));
  await loadModel(page, (p) => p.setInputFiles("#model-files", files));
  await diarizeMatchesCli(page, tiny);
  await loadModel(page, async (p) => {
    await p.fill("#model-url", `${server.origin}/models/diar-tiny`);
    await p.click("#model-url-load");
  });
  await diarizeMatchesCli(page, tiny);
  assert.deepEqual(errors, []);
  await page.close();
});

// Before the page's scripts run: `window.filesRead` lists the File objects read (by name, in order), and reading
// `unreadable` throws, as a file the browser cannot read does.
function watchFileReads(unreadable) {
  window.filesRead = [];
  const watch = (prototype, methods, fileOf) => {
    for (const method of methods) {
      const original = prototype[method];
      prototype[method] = function (...args) {
        const file = fileOf(this, args);
        if (file instanceof File) {
          window.filesRead.push(file.name);
          if (file.name === unreadable) throw new DOMException(`${file.name} cannot be read`, "NotReadableError");
        }
        return original.apply(this, args);
      };
    }
  };
  watch(Blob.prototype, ["stream", "arrayBuffer", "text", "bytes", "slice"], (blob) => blob);
  const reads = ["readAsArrayBuffer", "readAsBinaryString", "readAsDataURL", "readAsText"];
  watch(FileReader.prototype, reads, (_, [blob]) => blob);
}

test("of a sharded Transcribe folder only config.json, the index and the diarizer's shard are read", SLOW, async () => {
  const { page, errors } = await openPage((p) => p.addInitScript(watchFileReads, ASR_SHARD));
  await loadModel(page, (p) => p.setInputFiles("#model-folder", sharded));
  const read = await page.evaluate(() => window.filesRead);
  assert.deepEqual(read, ["config.json", "model.safetensors.index.json", DIARIZER_SHARD]);
  await diarizeMatchesCli(page, sharded);
  assert.deepEqual(errors, []);
  await page.close();
});

test("a broken checkpoint shows what is wrong, and the page stays usable", SLOW, async () => {
  const { page, errors } = await openPage();
  await page.setInputFiles("#model-files", join(tiny, "config.json"));
  await page.waitForSelector("body[data-state=error]", SLOW);
  assert.equal(await page.textContent("#status"), "the chosen files have no model.safetensors");
  // The package's own refusal, its message shown as it words it.
  await page.fill("#model-url", `${server.origin}/models/broken/`);
  await page.click("#model-url-load");
  await page.waitForSelector("body[data-state=error]", SLOW);
  assert.match(await page.textContent("#status"), /config\.json/);
  assert.ok(await page.isEnabled("#model-demo"));
  assert.deepEqual(errors, []);
  await page.close();
});

test("the microphone diarized live shows the segments of diarize --stream on that audio", SLOW, async () => {
  const { page, errors } = await openPage();
  await loadModel(page, fromFolder);
  await page.selectOption("#latency", "very-low");
  await page.click("#mic");
  await page.waitForSelector("body[data-state=streaming]", { timeout: 30_000 });
  // Some seconds of the fake microphone (it plays the WAV in a loop), then stop.
  const enough = () => window.sentAudio().length > 4 * 16000 || document.body.dataset.state === "error";
  await page.waitForFunction(enough, null, SLOW);
  assert.equal(await page.getAttribute("body", "data-state"), "streaming", await page.textContent("#status"));
  await page.click("#stop");
  await page.waitForSelector("body:is([data-state=done], [data-state=error])", SLOW);
  assert.equal(await page.getAttribute("body", "data-state"), "done", await page.textContent("#status"));
  const sent = await page.evaluate(() => window.sentAudio());
  const rms = Math.sqrt(sent.reduce((sum, x) => sum + x * x, 0) / sent.length);
  assert.ok(rms > 0.01, `the microphone's audio is near silence (rms ${rms}): the fake device did not play the WAV`);
  const recorded = join(work, "microphone.wav");
  writeFileSync(recorded, writeWav(sent, true));
  const expected = cliStream(tiny, recorded, "very-low");
  assert.ok(expected.rows.length > 0, "the CLI finds no segment in the microphone's audio");
  assert.deepEqual(await pageRows(page), expected.rows);
  assert.equal(await downloaded(page, "#download-json"), expected.json);
  assert.deepEqual(errors, []);
  await page.close();
});

test("known speakers, loaded or enrolled on the page, are named as diarize --speakers names them", SLOW, async () => {
  const clips = writeClips();
  const profile = join(work, "speakers.safetensors");
  const enroll = ["enroll", "--model", tiny, "--quiet", "--out", profile];
  execFileSync(binary, [...enroll, ...clips.flatMap(([name, path]) => ["--speaker", `${name}=${path}`])]);
  const { page, errors } = await openPage();
  await loadModel(page, fromFolder);
  await page.setInputFiles("#speakers-load", profile);
  await speakersShown(page, ["alice", "bob"]);
  const rttm = await diarizeMatchesCli(page, tiny, profile);
  const named = rttmSpeakers(rttm).filter((speaker) => !/^spk\d+$/.test(speaker));
  assert.deepEqual(named, ["alice", "bob"], "the CLI does not name both enrolled speakers: nothing to compare");
  const legend = await page.textContent("#legend");
  assert.ok(named.every((name) => legend.includes(name)), `the timeline's legend names not both: ${legend}`);
  // The same voices enrolled on the page, from the clips as files: the profile it saves is one the CLI reads as
  // its own.
  await page.click("#speakers-forget");
  await page.click("#speaker-add");
  const rows = await page.$$("#speaker-rows > .row");
  assert.equal(rows.length, clips.length);
  for (const [i, [name, path]] of clips.entries()) {
    await (await rows[i].$("[data-field=name]")).fill(name);
    await (await rows[i].$("[data-field=clip]")).setInputFiles(path);
  }
  // Each row says how long its clip is once it is decoded.
  const decoded = () =>
    [...document.querySelectorAll("#speaker-rows [data-field=status]")].every((s) => / s$/.test(s.textContent));
  await page.waitForFunction(decoded, null, SLOW);
  await page.click("#speakers-enroll");
  await speakersShown(page, ["alice", "bob"]);
  const saved = join(work, "saved.safetensors");
  const [download] = await Promise.all([page.waitForEvent("download"), page.click("#speakers-save")]);
  await download.saveAs(saved);
  assert.equal(cli(tiny, audio, "rttm", saved), rttm);
  assert.deepEqual(errors, []);
  await page.close();
});

test("a 60 s file diarized in the worker leaves the page's thread free, and can be cancelled", SLOW, async () => {
  const long = writeLongAudio();
  const { page, errors } = await openPage();
  await loadModel(page, fromFolder);

  // Cancelled once a step is done: the page says so and takes the next file.
  await page.setInputFiles("#audio-file", long);
  const started = () =>
    document.getElementById("diarize-progress").value > 0 || document.body.dataset.state !== "diarizing";
  await page.waitForFunction(started, null, SLOW);
  await page.click("#cancel");
  await page.waitForSelector("body:not([data-state=diarizing])", SLOW);
  const status = await page.textContent("#status");
  assert.equal(await page.getAttribute("body", "data-state"), "cancelled", status);
  assert.equal(status, "the diarization of long.wav was cancelled");

  // The whole file, while the page's long tasks are watched: none, from the file chosen to the segments shown.
  await watchLongTasks(page);
  await diarizeOnPage(page, long);
  assert.deepEqual(await page.evaluate(() => window.longTasks), [], "tasks of 50 ms or more on the page's thread");
  await diarizedAsCli(page, tiny, undefined, long);
  // The observer sees a long task when the page runs one (a timer's: a script the test evaluates is no task of the
  // page's).
  await page.evaluate(() => {
    window.longTasks = [];
    setTimeout(() => {
      const end = performance.now() + 80;
      while (performance.now() < end);
    });
  });
  await page.waitForFunction(() => window.longTasks.length > 0, null, { timeout: 10_000 });
  assert.deepEqual(errors, []);
  await page.close();
});
