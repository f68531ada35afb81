#!/usr/bin/env bash
# The npm package as an app takes it: tests/web-app installs the tarball scripts/web-build.sh packs
# (`npm install` of nemotron-audio-web-<version>.tgz, beside the app's pinned Vite, TypeScript and playwright-core
# from its package-lock.json), type-checks against the package's declarations (`tsc --noEmit`), is bundled by Vite,
# served on localhost and run in Debian's headless Chromium on WebGPU (SwiftShader); its RTTM and JSON are checked
# against the CLI's on the same model and audio.
#
#   scripts/web-npm-test.sh [SITE]
#
# SITE is a folder scripts/web-build.sh built; without it the script builds one in a temporary folder. The CLI is
# NEMOTRON_AUDIO, else one this script builds. Installs what is missing (apt: chromium, nodejs and npm). Run from
# anywhere; CI runs it from .ci/run after the page test.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/web-tools.sh

command -v chromium >/dev/null || apt_install chromium
install_node

site="${1:-}"
if [[ -z "$site" ]]; then
    site="$(mktemp -d)"
    trap 'rm -rf "$site"' EXIT
    scripts/web-build.sh "$site"
fi
tarball="$(realpath "$site")/nemotron-audio-web-$(web_crate_field version).tgz"
[[ -f "$tarball" ]] || { echo "$0: no $tarball: build SITE with scripts/web-build.sh" >&2; exit 1; }
if [[ -z "${NEMOTRON_AUDIO:-}" ]]; then
    cargo build -p nemotron-audio
    NEMOTRON_AUDIO="${CARGO_TARGET_DIR:-target}/debug/nemotron-audio"
fi
NEMOTRON_AUDIO="$(realpath "$NEMOTRON_AUDIO")"

cd tests/web-app
npm ci --no-audit --no-fund --loglevel=error
# Not saved: the lock file pins the app's tools, and the tarball is this build's.
npm install --no-save --no-audit --no-fund --loglevel=error "$tarball"
npx --no-install tsc --noEmit -p .
npx --no-install vite build --logLevel warn
NEMOTRON_WEB_APP="$PWD/dist" NEMOTRON_AUDIO="$NEMOTRON_AUDIO" node --test app.test.mjs
