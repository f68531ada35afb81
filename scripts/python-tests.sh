#!/usr/bin/env bash
# The Python package's tests (crates/nemotron-py), from a fresh clone or after `cargo test --workspace`: a virtual
# environment with pinned tools, the wheel built by maturin in the workspace's target folder and installed, the CLI
# the tests compare with, then pytest (every method against the CLI on the demo model and the reference checkpoints,
# every kind of audio argument, threads, errors, the Ray example on a local cluster). Runs on Mesa's lavapipe where
# there is no GPU (scripts/setup.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
export NODEVICE_SELECT=1 CARGO_TERM_COLOR=never PIP_DISABLE_PIP_VERSION_CHECK=1
venv=target/python-tests/venv
wheels=target/python-tests/wheels

./scripts/setup.sh
scripts/python-venv.sh "$venv"
"$venv/bin/pip" install --quiet maturin==1.16.0 pytest==9.2.0 numpy==2.4.6 'ray[data]==2.60.0' pyannote.core==6.1.0

# The CLI the tests compare with: the binary `cargo test --workspace` builds (a no-op after .ci/run's test step; a
# build of the CLI alone would select other features of shared dependencies and compile them again).
cargo test --workspace --no-run --quiet
# The dev profile: its dependencies are the test suite's (opt-level 2, one target/debug folder), so only the
# workspace's own crates and pyo3 are compiled for the wheel. (`--profile test` would build a test harness, and a
# profile of our own would have a folder of its own, sharing nothing.)
rm -rf "$wheels"
"$venv/bin/maturin" build --profile dev --manifest-path crates/nemotron-py/Cargo.toml \
    --interpreter "$venv/bin/python" --out "$wheels"
"$venv/bin/pip" install --quiet --force-reinstall --no-deps "$wheels"/nemotron_audio-*.whl

target_dir=$(cargo metadata --format-version 1 --no-deps | "$venv/bin/python" -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
# pytest exits 5 when it collected no test: with `set -e` that fails this script, as any other failure does.
NEMOTRON_AUDIO_CLI="$target_dir/debug/nemotron-audio" \
    "$venv/bin/python" -m pytest crates/nemotron-py/tests -p no:cacheprovider -q --durations=5
