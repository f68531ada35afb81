#!/usr/bin/env bash
# The server's page (`/`) in a real headless Chromium: Debian's `chromium` package driven by playwright-core (pinned
# in crates/nemotron-server/tests/page/package-lock.json; it downloads no browser), the demo model behind
# `nemotron-audio serve`, a file and a fake microphone fed from a WAV. Installs what is missing (apt: chromium, and
# nodejs with npm unless npm is there; npm ci: playwright-core), then runs node's test runner on the binary
# NEMOTRON_AUDIO, else on one it builds. Run from anywhere; CI runs it from .ci/run on the binary `cargo test` built.
set -euo pipefail
cd "$(dirname "$0")/.."

as_root=()
[[ "$(id -u)" == 0 ]] || as_root=(sudo)
missing=()
command -v chromium >/dev/null || missing+=(chromium)
# A Node.js from elsewhere (e.g. NodeSource's, which carries npm) is kept: Debian's npm would conflict with it.
command -v npm >/dev/null || missing+=(nodejs npm)
if ((${#missing[@]})); then
    "${as_root[@]}" apt-get update -qq
    "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
(cd crates/nemotron-server/tests/page && npm ci --no-audit --no-fund --loglevel=error)
if [[ -z "${NEMOTRON_AUDIO:-}" ]]; then
    cargo build -p nemotron-audio
    NEMOTRON_AUDIO="$(realpath "${CARGO_TARGET_DIR:-target}")/debug/nemotron-audio"
fi
NEMOTRON_AUDIO="$(realpath "$NEMOTRON_AUDIO")" node --test crates/nemotron-server/tests/page/
