// The model cache, on the page in Debian's headless Chromium (WebGPU on SwiftShader): a checkpoint loaded by URL is
// kept in the browser's Cache Storage (the package's `ModelCache`), so that loading it again downloads nothing — the
// server sees one HEAD request per file, and none at all with `cache: "force-cache"` — and diarizes as
// `nemotron-audio diarize` does; a file changed on the server (a new ETag, or a new size where the server sends no
// ETag) is downloaded again; the page lists what is kept and clears it. A file larger than the site's storage quota,
// and a browser context without Cache Storage, still load, downloaded and not kept, with a warning. Of a sharded
// Transcribe checkpoint, only the shard holding the diarizer's tensors is downloaded (and kept). Run by
// scripts/web-page-test.sh beside page.test.mjs: the built site is NEMOTRON_WEB_SITE, the CLI binary NEMOTRON_AUDIO.
// Each load runs in a page of its own: on SwiftShader a second model loaded in the same page waits for the first
// one's kernels to compile, tens of seconds that test nothing here.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import {
  appendFileSync,
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { etagOf, serve } from "./static-server.mjs";
import { DIARIZER_SHARD, shardTranscribe } from "./sharded.mjs";
import { collectErrors, launchChromium } from "./support.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, "../../../..");
const site = process.env.NEMOTRON_WEB_SITE;
const binary = process.env.NEMOTRON_AUDIO ?? join(root, "target/debug/nemotron-audio");
const tiny = join(root, "testdata/reference/diar-tiny");
// A Transcribe checkpoint (ASR tower, fusion, word-timestamp head beside the diarizer), sharded by the tests.
const transcribe = join(root, "testdata/reference/tiny-release-chunks");
const audio = join(tiny, "audio.wav");
const work = mkdtempSync(join(tmpdir(), "nemotron-web-cache-"));
// A copy of diar-tiny's checkpoint, changed by the tests, and its mount's options (validators turned off by one).
const model = join(work, "tiny");
// tiny-release-chunks' checkpoint in shards (`shardTranscribe`).
const sharded = join(work, "transcribe");
const served = {};
const SLOW = { timeout: 300_000 };
const PACKAGE = "/pkg/nemotron_web.js";
let server;
let context;

// The requests for the files under `prefix` since the log held `since` of them, as "METHOD file status".
function requestsSince(since, prefix) {
  return server.requests
    .slice(since)
    .filter((r) => r.path.startsWith(prefix))
    .map((r) => `${r.method} ${r.path.slice(prefix.length)} ${r.status}`);
}

// A new page (`setUp(page)` before it starts), started; the errors it raises and the package's warnings.
async function openPage(setUp) {
  const page = await context.newPage();
  await setUp?.(page);
  const errors = collectErrors(page);
  const warnings = [];
  page.on("console", (message) => {
    const text = message.text();
    if (message.type() === "warning" && text.startsWith("nemotron-audio-web: ")) warnings.push(text);
  });
  await page.goto(`${server.origin}/`);
  await page.waitForSelector("body[data-state=idle]", { timeout: 60_000 });
  return { page, errors, warnings };
}

// Loads the checkpoint at `prefix` through the page's URL form; the requests it made for the checkpoint's files.
async function loadUrl(page, prefix) {
  const since = server.requests.length;
  await page.fill("#model-url", `${server.origin}${prefix}`);
  await page.click("#model-url-load");
  await page.waitForSelector("body:is([data-state=ready], [data-state=error])", SLOW);
  assert.equal(await page.getAttribute("body", "data-state"), "ready", await page.textContent("#status"));
  return requestsSince(since, prefix);
}

// What the package keeps (`ModelCache.list()`), `stored` in milliseconds.
function kept(page) {
  return page.evaluate(async (url) => {
    const { ModelCache } = await import(url);
    return (await ModelCache.list()).map((entry) => ({ ...entry, stored: entry.stored.getTime() }));
  }, PACKAGE);
}

// `Diarizer.fromUrl` called on a page with `options` (the model freed at once); its rejection's message, if any.
function fromUrl(page, prefix, options) {
  return page.evaluate(
    async ([pkg, url, options]) => {
      const { Diarizer } = await import(pkg);
      try {
        (await Diarizer.fromUrl(url, options)).free();
        return null;
      } catch (error) {
        return error.message;
      }
    },
    [PACKAGE, `${server.origin}${prefix}`, options],
  );
}

// The lines of the page's list of kept models.
const listed = (page) => page.$$eval("#cached-models li", (items) => items.map((item) => item.textContent));

// The model's file `name` as ModelCache.list() gives it once kept (but for the time it was stored).
function entry(name) {
  const stat = statSync(join(model, name));
  const url = `${server.origin}/models/tiny/${name}`;
  return { url, size: stat.size, etag: etagOf(stat), lastModified: stat.mtime.toUTCString(), revision: null };
}

before(async () => {
  assert.ok(site, "NEMOTRON_WEB_SITE must name the built site (scripts/web-build.sh DIR)");
  mkdirSync(model);
  for (const file of ["config.json", "model.safetensors"]) copyFileSync(join(tiny, file), join(model, file));
  shardTranscribe(transcribe, sharded);
  server = await serve([
    ["/models/tiny/", model, served],
    ["/models/transcribe/", sharded],
    ["/", resolve(site)],
  ]);
  context = await launchChromium(chromium, { profile: join(work, "profile"), webgpu: true, acceptDownloads: true });
});

after(async () => {
  await context?.close();
  server?.close();
  rmSync(work, { recursive: true, force: true });
});

test("a model loaded by URL is kept, and its next load downloads nothing", SLOW, async () => {
  const first = await openPage();
  assert.ok(await first.page.isVisible("#cache-none"));
  assert.ok(await first.page.isDisabled("#cache-clear"));
  const started = Date.now();
  assert.deepEqual(await loadUrl(first.page, "/models/tiny/"), [
    "GET config.json 200",
    "GET model.safetensors.index.json 404",
    "GET model.safetensors 200",
  ]);
  const files = await kept(first.page);
  assert.deepEqual(
    files.map(({ stored, ...file }) => file),
    ["config.json", "model.safetensors"].map(entry),
  );
  assert.ok(files.every((f) => f.stored >= started && f.stored <= Date.now()), JSON.stringify(files));
  const line = await listed(first.page);
  assert.equal(line.length, 1);
  assert.match(line[0], new RegExp(`^${server.origin}/models/tiny/: 2 files, 0\\.14 MB, stored `));
  assert.ok(await first.page.isHidden("#cache-none"));
  assert.deepEqual([...first.errors, ...first.warnings], []);
  await first.page.close();

  // A later visit: the server is asked whether each file changed (HEAD, no body), and nothing is downloaded.
  const again = await openPage();
  assert.deepEqual(await loadUrl(again.page, "/models/tiny/"), ["HEAD config.json 200", "HEAD model.safetensors 200"]);
  await again.page.setInputFiles("#audio-file", audio);
  await again.page.waitForSelector("body:is([data-state=done], [data-state=error])", SLOW);
  assert.equal(await again.page.getAttribute("body", "data-state"), "done", await again.page.textContent("#status"));
  const [download] = await Promise.all([again.page.waitForEvent("download"), again.page.click("#download-json")]);
  const args = ["diarize", "--model", tiny, "--quiet", "--audio", audio, "--segments", "-", "--format", "json"];
  assert.equal(readFileSync(await download.path(), "utf8"), execFileSync(binary, args, { encoding: "utf8" }));
  assert.deepEqual([...again.errors, ...again.warnings], []);
  await again.page.close();

  // force-cache: not even a HEAD request.
  const offline = await openPage();
  const since = server.requests.length;
  assert.equal(await fromUrl(offline.page, "/models/tiny/", { cache: "force-cache" }), null);
  assert.deepEqual(requestsSince(since, "/models/tiny/"), []);
  assert.deepEqual([...offline.errors, ...offline.warnings], []);
  await offline.page.close();
});

test("a file changed on the server is downloaded again: a new ETag, or a new size without one", SLOW, async () => {
  const config = join(model, "config.json");
  const changed = ["HEAD config.json 200", "GET config.json 200", "HEAD model.safetensors 200"];
  // The same bytes, touched: a new ETag (and date) for config.json.
  const later = new Date(Date.now() + 60_000);
  utimesSync(config, later, later);
  const touched = await openPage();
  assert.deepEqual(await loadUrl(touched.page, "/models/tiny/"), changed);
  const kept1 = (await kept(touched.page)).find((f) => f.url.endsWith("/config.json"));
  assert.equal(kept1.etag, etagOf(statSync(config)));
  assert.deepEqual([...touched.errors, ...touched.warnings], []);
  await touched.page.close();

  // The server sends neither ETags nor dates any more: the size tells.
  served.validators = false;
  appendFileSync(config, "\n");
  const grown = await openPage();
  assert.deepEqual(await loadUrl(grown.page, "/models/tiny/"), changed);
  const kept2 = (await kept(grown.page)).find((f) => f.url.endsWith("/config.json"));
  assert.deepEqual([kept2.size, kept2.etag, kept2.lastModified], [statSync(config).size, null, null]);
  const refused = await fromUrl(grown.page, "/models/tiny/", { cache: "reload" });
  assert.equal(refused, "options: cache: `reload` is not a cache mode (`default`, `force-cache`, `no-store`)");
  const missing = await fromUrl(grown.page, "/models/missing/", {});
  assert.equal(missing, `${server.origin}/models/missing/config.json: HTTP 404 Not Found`);
  assert.deepEqual([...grown.errors, ...grown.warnings], []);
  await grown.page.close();

  // no-store: downloaded, and the cache left as it is.
  const uncached = await openPage();
  const before = await kept(uncached.page);
  const since = server.requests.length;
  assert.equal(await fromUrl(uncached.page, "/models/tiny/", { cache: "no-store" }), null);
  assert.deepEqual(requestsSince(since, "/models/tiny/"), [
    "GET config.json 200",
    "GET model.safetensors.index.json 404",
    "GET model.safetensors 200",
  ]);
  assert.deepEqual(await kept(uncached.page), before);
  assert.deepEqual([...uncached.errors, ...uncached.warnings], []);
  await uncached.page.close();
});

test("Clear empties the cache; a file over the storage quota loads, not kept, with a warning", SLOW, async () => {
  const { page, errors, warnings } = await openPage();
  assert.equal((await listed(page)).length, 1);
  await page.click("#cache-clear");
  await page.waitForSelector("#cache-none:not([hidden])");
  assert.deepEqual(await kept(page), []);
  assert.ok(await page.isDisabled("#cache-clear"));
  // Room for config.json (3 kB), not for model.safetensors (137 kB).
  const devtools = await context.newCDPSession(page);
  await devtools.send("Storage.overrideQuotaForOrigin", { origin: server.origin, quotaSize: 64 * 1024 });
  try {
    assert.deepEqual(await loadUrl(page, "/models/tiny/"), [
      "GET config.json 200",
      "GET model.safetensors.index.json 404",
      "GET model.safetensors 200",
    ]);
  } finally {
    await devtools.send("Storage.overrideQuotaForOrigin", { origin: server.origin });
  }
  assert.deepEqual(
    (await kept(page)).map((f) => f.url),
    [`${server.origin}/models/tiny/config.json`],
  );
  assert.equal(warnings.length, 1, warnings.join("\n"));
  const quota = new RegExp(
    `^nemotron-audio-web: ${server.origin}/models/tiny/model\\.safetensors \\(0\\.1 MB\\) is loaded but not cached: ` +
      "the browser's storage quota for this site is too small for it \\(QuotaExceededError: ",
  );
  assert.match(warnings[0], quota);
  assert.deepEqual(errors, []);
  await page.close();
});

test("without Cache Storage a model loads, downloaded and not kept, with a warning", SLOW, async () => {
  // As in a context that is not secure, where `caches` does not exist; the files sent without their length. The
  // package is called on the page's own thread: the page's worker (a scope of its own) still has `caches`.
  served.length = false;
  const { page, errors, warnings } = await openPage((p) => p.addInitScript(() => delete globalThis.caches));
  assert.equal(await page.evaluate(() => typeof caches), "undefined");
  const since = server.requests.length;
  assert.equal(await fromUrl(page, "/models/tiny/"), null);
  assert.deepEqual(requestsSince(since, "/models/tiny/"), [
    "GET config.json 200",
    "GET model.safetensors.index.json 404",
    "GET model.safetensors 200",
  ]);
  assert.equal(warnings.length, 1, warnings.join("\n"));
  const none = /^nemotron-audio-web: this context has no Cache Storage .* downloaded again at every load$/;
  assert.match(warnings[0], none);
  assert.deepEqual(await listed(page), []);
  assert.deepEqual(errors, []);
  await page.close();
});

test("of a sharded Transcribe checkpoint only the diarizer's shard is downloaded, and kept", SLOW, async () => {
  const { page, errors, warnings } = await openPage();
  const since = server.requests.length;
  const stages = await page.evaluate(
    async ([pkg, url]) => {
      const { Diarizer } = await import(pkg);
      const stages = new Set();
      const diarizer = await Diarizer.fromUrl(url, { onProgress: (_, stage) => stage && stages.add(stage) });
      diarizer.free();
      return [...stages].filter((stage) => !stage.startsWith("compiling kernels"));
    },
    [PACKAGE, `${server.origin}/models/transcribe/`],
  );
  assert.deepEqual(requestsSince(since, "/models/transcribe/"), [
    "GET config.json 200",
    "GET model.safetensors.index.json 200",
    `GET ${DIARIZER_SHARD} 200`,
  ]);
  assert.deepEqual(stages, [`downloading ${DIARIZER_SHARD}`]);
  const folder = `${server.origin}/models/transcribe/`;
  assert.deepEqual(
    (await kept(page)).filter((f) => f.url.startsWith(folder)).map((f) => f.url.slice(folder.length)),
    ["config.json", DIARIZER_SHARD, "model.safetensors.index.json"],
  );
  assert.deepEqual([...errors, ...warnings], []);
  await page.close();
});
