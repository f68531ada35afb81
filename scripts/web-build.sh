#!/usr/bin/env bash
# Builds the browser package into DIR: `DIR/pkg/nemotron_web.js` and `nemotron_web_bg.wasm` (crates/nemotron-web,
# release, wasm32-unknown-unknown, bound by wasm-bindgen for ES modules) with the package's entry and its worker
# (crates/nemotron-web/npm/index.js, worker.js), and the page's static files (crates/nemotron-web/page/) beside them;
# and the npm package, `DIR/nemotron-audio-web-<version>.tgz` (`npm pack` of crates/nemotron-web/npm/ with that JS and
# wasm, versioned and licensed as the workspace). Installs what is missing:
# the wasm32 target, wasm-bindgen-cli at the version of the wasm-bindgen crate in Cargo.lock (the two must match),
# Node.js with npm (apt).
# Usage: scripts/web-build.sh DIR
set -euo pipefail
[[ $# == 1 ]] || { echo "usage: $0 DIR" >&2; exit 2; }
out="$(mkdir -p "$1" && cd "$1" && pwd)"
cd "$(dirname "$0")/.."
source scripts/web-tools.sh
install_web_tools
cargo build --target wasm32-unknown-unknown -p nemotron-web --release
wasm-bindgen --target web --out-dir "$out/pkg" \
    "${CARGO_TARGET_DIR:-target}/wasm32-unknown-unknown/release/nemotron_web.wasm"
cp crates/nemotron-web/npm/{index.js,worker.js} "$out/pkg/"
cp -R crates/nemotron-web/page/. "$out/"

# The template's package.json leaves out what the crate's manifest says (its workspace's version and license), so the
# package cannot drift from the crate it is built from.
install_node
version="$(web_crate_field version)"
license="$(web_crate_field license)"
package="$(mktemp -d)"
trap 'rm -rf "$package"' EXIT
cp crates/nemotron-web/npm/{package.json,README.md,index.d.ts,index.js,worker.js} "$out/pkg/nemotron_web.js" \
    "$out/pkg/nemotron_web_bg.wasm" "$package/"
(cd "$package" && npm pkg set "version=$version" "license=$license")
tarball="$(npm pack "$package" --pack-destination "$out" --loglevel=error | tail -n 1)"
echo "wrote $out/pkg/nemotron_web.js and $(du -h "$out/pkg/nemotron_web_bg.wasm" | cut -f1) of wasm; the page in $out;\
 the npm package $out/$tarball"
