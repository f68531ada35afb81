#!/usr/bin/env bash
# The server's page (`/`) in a real headless Chromium: Debian's `chromium` package driven by playwright-core (pinned
# in crates/nemotron-server/tests/page/package-lock.json; it downloads no browser), the demo model behind
# `nemotron-audio serve`, a file and a fake microphone fed from a WAV. Installs what is missing, builds the CLI, runs
# node's test runner. Run from anywhere; CI runs it from .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v chromium >/dev/null || ! command -v npm >/dev/null; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium nodejs npm
fi
(cd crates/nemotron-server/tests/page && npm ci --no-audit --no-fund --loglevel=error)
cargo build -p nemotron-audio
NEMOTRON_AUDIO="$PWD/target/debug/nemotron-audio" node --test crates/nemotron-server/tests/page/
