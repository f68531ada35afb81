#!/usr/bin/env bash
# Prints the path of a runner that executes a program on Mesa 26's lavapipe, whose software Vulkan has cooperative
# matrices (8×8×8 f16→f32), so the tensor-core kernels run and are tested on a machine without a GPU (CI). Mesa 26
# needs a newer C library than Debian 12 has, so the runner starts the program with Debian 13's dynamic loader and
# libraries, unpacked (not installed) into a folder; the system stays as it is. Programs built here run unchanged.
#
#   runner=$(scripts/coop-lavapipe.sh) && CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUNNER=$runner cargo test ...
#
# The folder is $COOP_LAVAPIPE_DIR (default target/coop-lavapipe); a second call reuses it.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${COOP_LAVAPIPE_DIR:-$PWD/target/coop-lavapipe}
runner=$dir/run
if [[ -x $runner ]]; then
    echo "$runner"
    exit 0
fi
mkdir -p "$dir/lists/partial" "$dir/archives/partial" "$dir/root"
cat > "$dir/sources.list" <<EOF
deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian trixie main
deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian trixie-backports main
EOF
: > "$dir/status"
apt=(-oDir::State::Lists="$dir/lists" -oDir::Etc::SourceList="$dir/sources.list" -oDir::Etc::SourceParts=/dev/null
     -oDir::State::status="$dir/status" -oDir::Cache::archives="$dir/archives" -oAPT::Install-Recommends=false)
apt-get "${apt[@]}" update -qq >&2
# With an empty status file apt fetches every dependency, the C library included.
apt-get "${apt[@]}" install --download-only -y -qq mesa-vulkan-drivers/trixie-backports libvulkan1 >&2
for deb in "$dir"/archives/*.deb; do dpkg -x "$deb" "$dir/root"; done
lib=$dir/root/usr/lib/x86_64-linux-gnu
cat > "$dir/lvp_icd.json" <<EOF
{"ICD": {"api_version": "1.4.0", "library_path": "$lib/libvulkan_lvp.so"}, "file_format_version": "1.0.1"}
EOF
cat > "$runner" <<EOF
#!/bin/sh
export VK_DRIVER_FILES=$dir/lvp_icd.json VK_ICD_FILENAMES=$dir/lvp_icd.json NODEVICE_SELECT=1
exec $lib/ld-linux-x86-64.so.2 --library-path $lib "\$@"
EOF
chmod +x "$runner"
echo "$runner"
