// A tiny static file server for the page test: each mount maps a URL prefix to a folder, files are served with the
// MIME types a browser insists on (`application/wasm` for streaming compilation, `text/javascript` for modules), and
// nothing outside a mount's folder is reachable.
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

function fileFor(mounts, pathname) {
  for (const [prefix, folder] of mounts) {
    if (!pathname.startsWith(prefix)) continue;
    const relative = normalize(decodeURIComponent(pathname.slice(prefix.length)) || "index.html");
    if (relative.startsWith("..") || relative.includes(`${sep}..`)) return null;
    const path = join(folder, relative.endsWith(sep) ? `${relative}index.html` : relative);
    try {
      if (statSync(path).isFile()) return path;
    } catch {
      return null;
    }
  }
  return null;
}

// Serves `mounts` ([prefix, folder] pairs, longest prefix first) on 127.0.0.1; resolves to the server's origin.
export async function serve(mounts) {
  const server = createServer((request, response) => {
    const path = fileFor(mounts, new URL(request.url, "http://localhost").pathname);
    if (!path) {
      response.writeHead(404, { "content-type": "text/plain" }).end("not found");
      return;
    }
    response.writeHead(200, {
      "content-type": TYPES[extname(path)] ?? "application/octet-stream",
      "content-length": statSync(path).size,
      "cache-control": "no-store",
    });
    createReadStream(path).pipe(response);
  });
  await new Promise((listening) => server.listen(0, "127.0.0.1", listening));
  return { origin: `http://127.0.0.1:${server.address().port}`, close: () => server.close() };
}
