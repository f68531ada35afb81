#!/usr/bin/env bash
# Makes the virtual environment VENV unless it exists, installing Debian's python3-venv first where python3 lacks
# venv and ensurepip (Debian keeps them in a package of their own). Used by the scripts that run Python tools.
#
#   scripts/python-venv.sh VENV
set -euo pipefail
venv="$1"
if ! python3 -c 'import ensurepip, venv' 2>/dev/null; then
    as_root=()
    [[ "$(id -u)" == 0 ]] || as_root=(sudo)
    "${as_root[@]}" apt-get update
    "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends python3-venv
fi
[[ -x "$venv/bin/python" ]] || python3 -m venv "$venv"
