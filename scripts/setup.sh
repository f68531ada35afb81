#!/usr/bin/env bash
# Makes sure a GPU API is available before running the project. On Linux, where no Vulkan driver
# is installed, it installs Mesa's lavapipe (a software Vulkan driver) and says so; on a machine
# with a GPU driver it changes nothing, and the GPU is used.
set -euo pipefail

if [[ "$(uname -s)" != "Linux" ]]; then
    exit 0 # Metal (macOS) and DX12 (Windows) ship with the operating system.
fi

have_vulkan_driver() {
    local dirs=(/usr/share/vulkan/icd.d /etc/vulkan/icd.d /usr/local/share/vulkan/icd.d)
    [[ -n "${VK_DRIVER_FILES:-}${VK_ICD_FILENAMES:-}" ]] && return 0
    for dir in "${dirs[@]}"; do
        compgen -G "$dir/*.json" >/dev/null && return 0
    done
    return 1
}

if have_vulkan_driver; then
    exit 0
fi

echo "setup: no Vulkan driver found; installing Mesa's lavapipe (software Vulkan, runs on the CPU)." >&2
as_root=()
if [[ "$(id -u)" != 0 ]]; then
    command -v sudo >/dev/null || { echo "setup: need root (or sudo) to install mesa-vulkan-drivers" >&2; exit 1; }
    as_root=(sudo)
fi
if ! command -v apt-get >/dev/null; then
    echo "setup: no apt-get; install your distribution's Mesa Vulkan drivers (lavapipe) by hand" >&2
    exit 1
fi
"${as_root[@]}" apt-get update -qq
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends mesa-vulkan-drivers >/dev/null
echo "setup: lavapipe installed; the project will run on the CPU through Vulkan." >&2
