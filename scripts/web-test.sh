#!/usr/bin/env bash
# The browser package's tests in a headless Chromium on WebGPU (SwiftShader, Chromium's software adapter):
# crates/nemotron-web/tests/browser.rs (the package against the native run) and first_result.rs (the first
# diarization after a load against the next ones); pass `-- --nocapture` to see the times it prints. wasm-bindgen-test-runner drives Debian's chromium
# through chromedriver, with the arguments of crates/nemotron-web/webdriver.json (the runner reads it from the crate's
# folder). Installs what is missing: chromium and chromium-driver (apt), the wasm32 target and the pinned
# wasm-bindgen-cli.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/web-tools.sh

as_root=()
[[ "$(id -u)" == 0 ]] || as_root=(sudo)
missing=()
command -v chromium >/dev/null || missing+=(chromium)
command -v chromedriver >/dev/null || missing+=(chromium-driver)
if ((${#missing[@]})); then
    "${as_root[@]}" apt-get update -qq
    "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
install_web_tools

# The runner finds the driver by this variable; chromedriver starts the chromium beside it (Debian's layout).
export CHROMEDRIVER="${CHROMEDRIVER:-$(command -v chromedriver)}"
export CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=wasm-bindgen-test-runner
# Seconds a test module may run: a diarization on SwiftShader takes tens of seconds (the runner's default is 20).
export WASM_BINDGEN_TEST_TIMEOUT="${WASM_BINDGEN_TEST_TIMEOUT:-600}"
# Release: the tests run the model; a debug build of the kernels' host side is needlessly slow in the browser.
cargo test --target wasm32-unknown-unknown -p nemotron-web --release --test browser --test first_result "$@"
