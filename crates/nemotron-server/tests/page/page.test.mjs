// The page at `/` in Debian's headless Chromium, driven by playwright-core: streamed from a file (mono, and stereo:
// channels mixed as the CLI mixes them) and from a fake microphone fed by a WAV, the page must show the segments
// `nemotron-audio diarize --stream` finds in the same audio.
// Run by scripts/page-test.sh (which builds the binary and installs Chromium and playwright-core); the binary is
// NEMOTRON_AUDIO, or target/debug/nemotron-audio of this workspace.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, writeFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
// What the browser package's page test uses too: Chromium's launch, the page's errors, the WAV writer.
import { collectErrors, launchChromium, SAMPLE_RATE, writeWav } from "../../../nemotron-web/tests/page/support.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const binary = process.env.NEMOTRON_AUDIO ?? resolve(here, "../../../../target/debug/nemotron-audio");
const work = mkdtempSync(join(tmpdir(), "nemotron-page-"));
let server;
let origin;
let context; // the browser, on a fresh profile

// Eight seconds of two "voices" taking turns every `turn` seconds (tones with vibrato, over a little seeded noise),
// loud enough to matter.
function speech(turn = 1.3) {
  let seed = 12345;
  const noise = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648 - 0.5) * 0.02;
  return Array.from({ length: 8 * SAMPLE_RATE }, (_, i) => {
    const t = i / SAMPLE_RATE;
    const first = Math.floor(t / turn) % 2 === 0;
    const pitch = first ? 140 : 260;
    return 0.4 * Math.sin(2 * Math.PI * pitch * t + 3 * Math.sin(2 * Math.PI * 5 * t)) + noise();
  });
}

// The segments `diarize --stream` prints for `path` (`args`: more of its flags): its end events, as the page writes
// them.
function cliSegments(path, args = []) {
  const command = ["diarize", "--demo", "--stream", "--quiet", "--audio", path, ...args];
  const out = execFileSync(binary, command, { encoding: "utf8" });
  return out
    .trim()
    .split("\n")
    .filter((line) => line)
    .map((line) => JSON.parse(line))
    .filter((event) => event.event === "end")
    .map((e) => [`spk${e.speaker}`, e.start.toFixed(2), e.end.toFixed(2)]);
}

async function pageSegments(page) {
  return page.$$eval("#segments tr", (rows) => rows.map((row) => [...row.cells].map((cell) => cell.textContent)));
}

const speechWav = join(work, "speech.wav");
// Two channels that differ: the speech above, and voices that take turns at another pace.
const stereoWav = join(work, "stereo.wav");

before(async () => {
  writeFileSync(speechWav, writeWav(speech(), false));
  const [left, right] = [speech(), speech(0.7)];
  writeFileSync(stereoWav, writeWav(left.flatMap((x, i) => [x, right[i]]), false, 2));
  // A one-second session buffer: the page hands the whole file to its socket at once, so the server's flow control
  // (it stops reading while the buffer is full) paces that upload.
  const args = ["serve", "--demo", "--listen", "127.0.0.1:0", "--session-buffer", "1"];
  server = spawn(binary, args, { stdio: ["ignore", "ignore", "pipe"] });
  origin = await new Promise((found, fail) => {
    let log = "";
    server.stderr.on("data", (chunk) => {
      log += chunk;
      const address = /listening on (http:\/\/[0-9.:]+)/.exec(log);
      if (address) found(address[1]);
    });
    server.on("exit", (code) => fail(new Error(`the server exited (${code}): ${log}`)));
  });
  for (let i = 0; i < 600; i++) {
    const ready = await fetch(`${origin}/health/ready`).then((r) => r.ok, () => false);
    if (ready) break;
    await new Promise((wake) => setTimeout(wake, 100));
  }
  // A fresh profile of our own, deleted with `work`.
  context = await launchChromium(chromium, { profile: join(work, "profile"), microphone: speechWav });
});

after(async () => {
  await context?.close();
  server?.kill("SIGTERM");
  rmSync(work, { recursive: true, force: true });
});

// Streams `path` from the page's file input: the page must show `expected`, and raise no error.
async function streamFileMatches(path, expected) {
  const page = await context.newPage();
  const errors = collectErrors(page);
  await page.goto(origin);
  await page.setInputFiles("#file", path);
  await page.waitForSelector("body[data-state=closed]", { timeout: 60_000 });
  assert.match(await page.textContent("#status"), /closed \(1000\)/);
  assert.deepEqual(await pageSegments(page), expected);
  assert.deepEqual(errors, []);
  await page.close();
}

test("a file streamed from the page shows the segments of diarize --stream on that file", async () => {
  const expected = cliSegments(speechWav);
  assert.ok(expected.length > 0, "the demo model finds no segment in the test audio: the comparison would be empty");
  await streamFileMatches(speechWav, expected);
});

test("a stereo file streamed from the page is heard as the CLI hears it, its channels mixed", async () => {
  const expected = cliSegments(stereoWav);
  assert.ok(expected.length > 0, "the demo model finds no segment in the stereo audio: the comparison would be empty");
  // Otherwise a page that kept one channel would pass.
  assert.notDeepEqual(cliSegments(stereoWav, ["--channel", "0"]), expected, "the mix sounds like its first channel");
  await streamFileMatches(stereoWav, expected);
});

test("the microphone's audio streamed from the page shows the segments of diarize --stream on that audio", async () => {
  const page = await context.newPage();
  const errors = collectErrors(page);
  await page.goto(origin);
  await page.click("#mic");
  await page.waitForSelector("body[data-state=streaming]", { timeout: 30_000 });
  // Three seconds of the fake microphone (it plays the WAV in a loop), then stop.
  await page.waitForTimeout(3_000);
  await page.click("#stop");
  await page.waitForSelector("body[data-state=closed]", { timeout: 60_000 });
  const sent = await page.evaluate(() => window.sentAudio());
  assert.ok(sent.length > SAMPLE_RATE, `only ${sent.length} samples came from the microphone`);
  const rms = Math.sqrt(sent.reduce((sum, x) => sum + x * x, 0) / sent.length);
  assert.ok(rms > 0.05, `the microphone's audio is near silence (rms ${rms}): the fake device did not play the WAV`);
  const sentWav = join(work, "microphone.wav");
  writeFileSync(sentWav, writeWav(sent, true));
  assert.deepEqual(await pageSegments(page), cliSegments(sentWav));
  assert.deepEqual(errors, []);
  await page.close();
});
