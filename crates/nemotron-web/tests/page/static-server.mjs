// A tiny static file server for the page tests: each mount maps a URL prefix to a folder, files are served with the
// MIME types a browser insists on (`application/wasm` for streaming compilation, `text/javascript` for modules), and
// nothing outside a mount's folder is reachable. Files carry an `ETag` and a `Last-Modified` made from their size and
// time of change (as most servers make them), unless their mount's options say `validators: false`, and their
// `Content-Length`, unless they say `length: false` (then the body is chunked); `HEAD` gets the headers alone. Every
// request is logged, for tests that count what a page asks for.
import { createServer } from "node:http";
import { createReadStream, statSync } from "node:fs";
import { extname, join, normalize, sep } from "node:path";

const TYPES = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json",
  ".wasm": "application/wasm",
  ".wav": "audio/wav",
  ".safetensors": "application/octet-stream",
};

// The `ETag` the server sends for a file of this size and time of change (`stat`).
export function etagOf(stat) {
  return `W/"${stat.size.toString(16)}-${Math.floor(stat.mtimeMs).toString(16)}"`;
}

// The file a path names, with its mount's options; or null.
function fileFor(mounts, pathname) {
  for (const [prefix, folder, options = {}] of mounts) {
    if (!pathname.startsWith(prefix)) continue;
    const relative = normalize(decodeURIComponent(pathname.slice(prefix.length)) || "index.html");
    if (relative.startsWith("..") || relative.includes(`${sep}..`)) return null;
    const path = join(folder, relative.endsWith(sep) ? `${relative}index.html` : relative);
    try {
      if (statSync(path).isFile()) return { path, options };
    } catch {
      return null;
    }
  }
  return null;
}

// Serves `mounts` ([prefix, folder, options?] triples, longest prefix first; the options, read at each request, as
// above) on 127.0.0.1. Resolves to the server's origin, its log of requests (`{ method, path, status }`, in order)
// and `close`.
export async function serve(mounts) {
  const requests = [];
  const server = createServer((request, response) => {
    const pathname = new URL(request.url, "http://localhost").pathname;
    const found = fileFor(mounts, pathname);
    requests.push({ method: request.method, path: pathname, status: found ? 200 : 404 });
    if (!found) {
      response.writeHead(404, { "content-type": "text/plain" }).end("not found");
      return;
    }
    const stat = statSync(found.path);
    const type = TYPES[extname(found.path)] ?? "application/octet-stream";
    const headers = { "content-type": type, "cache-control": "no-store" };
    if (found.options.length !== false) headers["content-length"] = stat.size;
    if (found.options.validators !== false) {
      headers.etag = etagOf(stat);
      headers["last-modified"] = stat.mtime.toUTCString();
    }
    response.writeHead(200, headers);
    if (request.method === "HEAD") {
      response.end();
      return;
    }
    createReadStream(found.path).pipe(response);
  });
  await new Promise((listening) => server.listen(0, "127.0.0.1", listening));
  return { origin: `http://127.0.0.1:${server.address().port}`, requests, close: () => server.close() };
}
