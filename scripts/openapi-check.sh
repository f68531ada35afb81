#!/usr/bin/env bash
# The server's OpenAPI document (`nemotron-audio serve --openapi`, what `GET /openapi.json` answers) checked against
# the OpenAPI 3.1 schema by a standard validator (openapi-spec-validator, pinned, from PyPI, in a virtual environment
# of its own). The CLI is NEMOTRON_AUDIO, else target/debug/nemotron-audio, which it builds when missing.
set -euo pipefail
cd "$(dirname "$0")/.."
export PIP_DISABLE_PIP_VERSION_CHECK=1
venv=target/openapi-check/venv
scripts/python-venv.sh "$venv"
"$venv/bin/pip" install --quiet openapi-spec-validator==0.9.0
cli="${NEMOTRON_AUDIO:-}"
if [[ -z "$cli" ]]; then
    cargo build -p nemotron-audio
    cli="${CARGO_TARGET_DIR:-target}/debug/nemotron-audio"
fi
document=target/openapi-check/openapi.json
"$cli" serve --openapi >"$document"
"$venv/bin/openapi-spec-validator" "$document"
