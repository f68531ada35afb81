#!/usr/bin/env bash
# The Python package's tests (crates/nemotron-py): a virtual environment with pinned tools, the wheel built by maturin
# in the workspace's target folder and installed, the CLI built (the tests compare with its outputs), then pytest
# (every method against the CLI on the demo model and the reference checkpoints, audio arguments, threads, errors,
# the Ray example on a local cluster). Runs on Mesa's lavapipe where there is no GPU (scripts/setup.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
export NODEVICE_SELECT=1 CARGO_TERM_COLOR=never PIP_DISABLE_PIP_VERSION_CHECK=1
# The dev profile (dependencies at opt-level 2, as the workspace sets it): the demo model is tiny, and a release build
# would compile every dependency at opt-level 3 again. Building one package selects fewer features of the shared
# dependencies than `cargo test --workspace` does, so part of the tree is compiled again either way.
profile=${PYTHON_TESTS_PROFILE:-dev}
venv=target/python-tests/venv
wheels=target/python-tests/wheels

./scripts/setup.sh
python3 -m venv "$venv"
"$venv/bin/pip" install --quiet maturin==1.16.0 pytest==9.2.0 numpy==2.4.6 'ray[data]==2.60.0' pyannote.core==6.1.0

# The CLI the tests compare with: the binary `cargo test --workspace` builds (a no-op after .ci/run's test step; a
# build of the CLI alone would select other features of shared dependencies and rebuild them).
cargo test --workspace --no-run
rm -rf "$wheels"
"$venv/bin/maturin" build --profile "$profile" --manifest-path crates/nemotron-py/Cargo.toml \
    --interpreter "$venv/bin/python" --out "$wheels"
"$venv/bin/pip" install --quiet --force-reinstall --no-deps "$wheels"/nemotron_audio-*.whl

target_dir=$(cargo metadata --format-version 1 --no-deps | "$venv/bin/python" -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
# pytest exits 5 when it collected no test: with `set -e` that fails this script, as any other failure does.
NEMOTRON_AUDIO_CLI="$target_dir/debug/nemotron-audio" \
    "$venv/bin/python" -m pytest crates/nemotron-py/tests -p no:cacheprovider -q
