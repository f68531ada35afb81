// The app (src/main.ts, with the npm package installed from its tarball and bundled by Vite into dist/) in Debian's
// headless Chromium on WebGPU's software adapter (SwiftShader): diar-tiny's checkpoint diarizes its recording into
// the RTTM and JSON that `nemotron-audio diarize --segments - --format rttm|json` writes for the same model and
// audio, on the page's thread and in the package's Web Worker (with progress, an abort, and audio transferred or
// copied). Run by scripts/web-npm-test.sh: the bundle is NEMOTRON_WEB_APP, the CLI binary NEMOTRON_AUDIO.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { join, resolve, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { serve } from "../../crates/nemotron-web/tests/page/static-server.mjs";
import { collectErrors, launchChromium } from "../../crates/nemotron-web/tests/page/support.mjs";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const app = process.env.NEMOTRON_WEB_APP;
const binary = process.env.NEMOTRON_AUDIO;
const tiny = join(root, "testdata/reference/diar-tiny");
let server;
let browser;

function cli(format) {
  const args = ["diarize", "--model", tiny, "--quiet", "--audio", join(tiny, "audio.wav"), "--segments", "-"];
  return execFileSync(binary, [...args, "--format", format], { encoding: "utf8" });
}

before(async () => {
  assert.ok(app && binary, "NEMOTRON_WEB_APP must name the bundled app, NEMOTRON_AUDIO the CLI");
  server = await serve([
    ["/models/diar-tiny/", tiny],
    ["/", resolve(app)],
  ]);
  browser = await launchChromium(chromium, { webgpu: true });
});

after(async () => {
  await browser?.close();
  server?.close();
});

test("the bundled app diarizes as the CLI does", { timeout: 300_000 }, async () => {
  const page = await browser.newPage();
  const errors = collectErrors(page);
  await page.goto(`${server.origin}/`);
  await page.waitForFunction(() => window.appResult !== undefined);
  const result = await page.evaluate(() => window.appResult);
  console.log(`${result.info.description} on ${result.info.summary}`);
  const names = ["Diarizer", "LiveDiarization", "ModelCache", "Speakers", "default", "initSync", "writeSegments"];
  for (const name of [...names, "createWorkerDiarizer", "WorkerDiarizer", "WorkerLiveDiarization"]) {
    assert.ok(result.exports.includes(name), `the package exports no ${name}: ${result.exports}`);
  }
  assert.equal(result.progress.at(-1), 1, `the load's progress ends at 1: ${result.progress}`);
  const rttm = cli("rttm");
  assert.ok(rttm.length > 0, "the CLI finds no segment in the test audio: the comparison would be empty");
  assert.equal(result.segments.length, rttm.trim().split("\n").length);
  assert.equal(result.rttm, rttm);
  assert.equal(result.json, cli("json"));
  assert.equal(result.refusal, "threshold: 1.5 is not in [0, 1)");

  const { worker } = result;
  assert.equal(worker.info.description, result.info.description);
  assert.equal(worker.rttm, rttm);
  assert.equal(worker.again, rttm);
  const chunks = worker.progress.at(-1)?.[1];
  assert.ok(chunks > 1, `the worker's progress ends at ${worker.progress.at(-1)}: too few chunks to abort`);
  const every = Array.from({ length: chunks + 1 }, (_, done) => [done, chunks]);
  assert.deepEqual(worker.progress, every, "(0, chunks) first, then each step's count up to (chunks, chunks)");
  assert.deepEqual(worker.abort, { name: "AbortError", isReason: true, progress: every.slice(0, 2) });
  assert.equal(worker.copiedLength, result.samples, "samples sent with `copy` are the caller's still");
  assert.equal(worker.transferredLength, 0, "samples sent without `copy` are transferred (their buffer detached)");
  assert.deepEqual(errors, []);
});
