#!/usr/bin/env bash
# The browser page (crates/nemotron-web/page) with the wasm package in a real headless Chromium: Debian's `chromium`
# package driven by playwright-core (pinned in crates/nemotron-web/tests/page/package-lock.json; it downloads no
# browser), WebGPU on Chromium's software adapter (SwiftShader), a fake microphone fed from a WAV. The page's
# segments are checked against the CLI's on the same model and audio.
#
#   scripts/web-page-test.sh [SITE]
#
# SITE is a folder scripts/web-build.sh built; without it the script builds one in a temporary folder. The CLI is
# NEMOTRON_AUDIO, else one this script builds. Installs what is missing (apt: chromium, and nodejs with npm unless
# npm is there; npm ci: playwright-core). Run from anywhere; CI runs it from .ci/run after the web build.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/web-tools.sh

command -v chromium >/dev/null || apt_install chromium
install_node
(cd crates/nemotron-web/tests/page && npm ci --no-audit --no-fund --loglevel=error)

site="${1:-}"
if [[ -z "$site" ]]; then
    site="$(mktemp -d)"
    trap 'rm -rf "$site"' EXIT
    scripts/web-build.sh "$site"
fi
if [[ -z "${NEMOTRON_AUDIO:-}" ]]; then
    cargo build -p nemotron-audio
    NEMOTRON_AUDIO="$(realpath "${CARGO_TARGET_DIR:-target}")/debug/nemotron-audio"
fi
NEMOTRON_WEB_SITE="$(realpath "$site")" NEMOTRON_AUDIO="$(realpath "$NEMOTRON_AUDIO")" \
    node --test crates/nemotron-web/tests/page/
