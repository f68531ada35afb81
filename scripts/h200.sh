#!/usr/bin/env bash
# Runs on the lent NVIDIA H200 (see docs/performance.md): unpacks the Vulkan loader (.gl) and the
# release binaries built here (.dev/bin.tar.xz), runs the GPU test binaries, `nemotron-audio
# bench`, and the PyTorch peer (.peer), writing logs to $OUT. The binaries were compiled with
# this checkout at /work/main, so that path is linked to wherever the tree landed.
set -u
for f in .gl/*.deb; do dpkg -x "$f" /; done
ldconfig
icd=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
[[ -f $icd ]] && export VK_DRIVER_FILES=$icd
mkdir -p /work && ln -sfn "$PWD" /work/main
tar -xJf .dev/bin.tar.xz -C .dev && mkdir -p target/release && cp .dev/nemotron-audio target/release/
export NODEVICE_SELECT=1 RUST_BACKTRACE=1 OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv | tee "$OUT/gpu.txt"
.dev/nemotron-audio info | tee -a "$OUT/gpu.txt"
if [[ "${SKIP_TESTS:-0}" != 1 ]]; then
    for t in .dev/t/*; do
        echo "== $(basename "$t")"
        "$t" --test-threads 4 --nocapture 2>&1 | grep -E "relative|test result|panicked|FAILED|error"
    done > "$OUT/tests.txt" 2>&1
    grep -E "^==|test result|panicked|FAILED" "$OUT/tests.txt"
fi
.dev/nemotron-audio bench ${BENCH_ARGS:---profile} 2>&1 | tee "$OUT/bench.txt"
if [[ "${SKIP_PEER:-0}" != 1 ]]; then
    python3 -m pip install -q --no-index --no-deps --target /tmp/site .peer/*.whl \
        && PYTHONPATH=/tmp/site python3 .peer/torch_peer.py 2>&1 | tee "$OUT/peer.txt"
fi
