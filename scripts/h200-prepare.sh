#!/usr/bin/env bash
# Prepares, on the build machine, what scripts/h200.sh needs on the GPU machine (which reaches no network and should
# spend its time measuring, not compiling): the Vulkan loader packages under .gl/ (Debian's amd64 .debs), the
# transformers 5.23.0 wheel under .peer/ (scripts/bench/README.md), and .dev/bin.tar.xz: the release `nemotron-audio`,
# the GPU test binaries of gpu-core, audio-kernels, nemotron-towers and nemotron-engine under t/ (those that never
# open a GPU are left out), with WITH_CEILINGS=1 the `ceilings` example, and `built-at`, the checkout the binaries
# were compiled in (they read testdata/ by that path); the binaries stripped. All three are ignored by git; carry
# them with the tree (.gl, .peer, .dev/bin.tar.xz). Prints their sizes: the tree and what it carries must stay under
# the device's 64 MiB, which the ceilings example and the peer wheel do not both fit beside the test binaries.
set -euo pipefail
cd "$(dirname "$0")/.."
for ignored in /.gl/ /.peer/ /.dev/; do
    grep -qxF "$ignored" .git/info/exclude 2>/dev/null || echo "$ignored" >>.git/info/exclude
done

if ! ls .gl/*.deb >/dev/null 2>&1; then
    mkdir -p .gl /tmp/amd64/partial
    apt=(-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=/tmp/amd64)
    apt-get "${apt[@]}" update -qq
    (cd .gl && apt-get "${apt[@]}" download libvulkan1 libegl1 libglvnd0 libopengl0 libgl1 libglx0 libgles2)
fi
if ! ls .peer/*.whl >/dev/null 2>&1; then
    python3 -m pip download -q --no-deps --only-binary=:all: -d .peer transformers==5.23.0
fi

# Test binaries that only read files, parse or write outputs: they run in CI and need no GPU.
cpu_only='^(checkpoint_files|fuzz_regressions|model_file_properties|weight_files|atomic|files|input|input_properties|output|settings|audio|audio_formats|speaker_profile)$'
cargo build --release -p nemotron-audio --bin nemotron-audio
[[ "${WITH_CEILINGS:-0}" == 1 ]] && cargo build --release -p audio-kernels --example ceilings
pack=.dev/pack
rm -rf "$pack" && mkdir -p "$pack/t"
cargo test --release -p gpu-core -p audio-kernels -p nemotron-towers -p nemotron-engine --no-run \
    --message-format=json \
    | python3 -c '
import json, re, sys
for line in sys.stdin:
    message = json.loads(line)
    target = message.get("target", {})
    if message.get("executable") and target.get("kind") in (["test"], ["lib"]):
        name = target["name"] if target["kind"] == ["test"] else target["name"] + "-lib"
        if not re.match(sys.argv[1], name):
            print(name, message["executable"])
' "$cpu_only" \
    | while read -r name executable; do cp "$executable" "$pack/t/$name"; done
cp target/release/nemotron-audio "$pack/"
[[ "${WITH_CEILINGS:-0}" == 1 ]] && cp target/release/examples/ceilings "$pack/"
# Without their line tables: the test binaries shrink from about 2 GB to a tenth (a backtrace then names no lines).
strip "$pack"/t/* "$pack"/nemotron-audio
[[ -e "$pack/ceilings" ]] && strip "$pack/ceilings"
pwd >"$pack/built-at"
# xz's largest dictionary (64 MiB) spans several binaries, which share most of their code: about a third the size.
XZ_OPT=-9 tar -cJf .dev/bin.tar.xz -C "$pack" .
rm -rf "$pack"
echo "test binaries: $(tar -tJf .dev/bin.tar.xz | grep -c '^\./t/.')"
mib() { awk '{ printf "%.1f MiB", $1 / 1048576 }'; }
tree=$(git ls-files -co --exclude-standard -z | du -cb --apparent-size --files0-from=- | tail -1 | cut -f1)
carried=$(du -cb --apparent-size .gl .peer .dev/bin.tar.xz | tail -1 | cut -f1)
du -b --apparent-size -s .gl .peer .dev/bin.tar.xz | while read -r bytes path; do echo "$path: $(mib <<<"$bytes")"; done
echo "the tree $(mib <<<"$tree") + carried $(mib <<<"$carried") = $(mib <<<"$((tree + carried))") of the device's 64 MiB"
