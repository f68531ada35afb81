#!/usr/bin/env bash
# Runs on the lent NVIDIA H200 (see docs/performance.md): unpacks the Vulkan loader (.gl) and the release binaries
# built beforehand by scripts/h200-prepare.sh (.dev/bin.tar.xz: `nemotron-audio`, GPU test binaries under t/, the
# `ceilings` example where it was packed), then runs, each writing a
# log to $OUT: the GPU tests through both matrix paths (tensor cores, then NEMOTRON_PRECISION=f32), the ceilings
# example, `nemotron-audio bench` (the tensor-core path, f32, and the fast precision), and the PyTorch peers of scripts/bench (`torch_peer.py --compile`,
# `word_timestamps_peer.py`, `kernel_anchors.py`; `.peer/` carries only the transformers wheel they import, see
# scripts/bench/README.md). The binaries read testdata/ by the path of the checkout they were compiled in (`built-at`),
# so that path is linked to wherever the tree landed.
# Steps can be skipped: SKIP_TESTS=1, SKIP_CEILINGS=1, SKIP_BENCH=1, SKIP_PEER=1; BENCH_ARGS replaces `--profile`;
# ROUNDS=n runs the benches and the peers n times, alternating.
# Two more run when asked, each minutes long: RUN_STREAM=1 (`bench --stream`, sessions batched in lockstep;
# STREAM_ARGS replaces its default arguments) and RUN_SERVE=1 (`bench --serve`: real-time WebSocket clients and each mode's admission; SERVE_ARGS replaces the
# default trials).
set -u
for f in .gl/*.deb; do dpkg -x "$f" /; done
ldconfig
icd=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
[[ -f $icd ]] && export VK_DRIVER_FILES=$icd
tar -xJf .dev/bin.tar.xz -C .dev && mkdir -p target/release && cp .dev/nemotron-audio target/release/
built_at=$(cat .dev/built-at)
[[ "$built_at" == "$PWD" ]] || { mkdir -p "$(dirname "$built_at")" && ln -sfn "$PWD" "$built_at"; }
export NODEVICE_SELECT=1 RUST_BACKTRACE=1 OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv | tee "$OUT/gpu.txt"
.dev/nemotron-audio info | tee -a "$OUT/gpu.txt"
if [[ "${SKIP_TESTS:-0}" != 1 ]]; then
    for precision in auto f32; do
        for t in .dev/t/*; do
            echo "== $(basename "$t") ($precision)"
            # A hung binary (seen once, not reproduced) must not take the rest of the call with it.
            NEMOTRON_PRECISION=$precision timeout 300 "$t" --test-threads 4 --nocapture 2>&1 \
                | grep -E "relative|test result|panicked|FAILED|error|expected"
            echo "exit ${PIPESTATUS[0]}"
        done
    done > "$OUT/tests.txt" 2>&1
    grep -E "^==|^exit|test result|panicked|FAILED" "$OUT/tests.txt"
fi
if [[ "${SKIP_CEILINGS:-0}" != 1 && -x .dev/ceilings ]]; then
    .dev/ceilings 2>&1 | tee "$OUT/ceilings.txt"
fi
# Ours and the peer alternate, ROUNDS times (default 1; logs of round r > 1 end in -r): each comparison is between
# runs minutes apart on the same machine.
[[ "${SKIP_PEER:-0}" != 1 ]] && python3 -m pip install -q --no-index --no-deps --target /tmp/site .peer/*.whl
for round in $(seq "${ROUNDS:-1}"); do
    r=$([[ $round == 1 ]] || echo "-$round")
    if [[ "${SKIP_BENCH:-0}" != 1 ]]; then
        .dev/nemotron-audio bench ${BENCH_ARGS:---profile} 2>&1 | tee "$OUT/bench$r.txt"
        .dev/nemotron-audio --precision f32 bench --seconds 60 --corpus 0 2>&1 | tee "$OUT/bench-f32$r.txt"
        .dev/nemotron-audio --precision fast bench ${BENCH_ARGS:-} 2>&1 | tee "$OUT/bench-fast$r.txt"
    fi
    if [[ "${SKIP_PEER:-0}" != 1 ]]; then
        PYTHONPATH=/tmp/site python3 scripts/bench/torch_peer.py --compile 2>&1 | tee "$OUT/peer$r.txt"
        PYTHONPATH=/tmp/site python3 scripts/bench/word_timestamps_peer.py 2>&1 | tee "$OUT/peer-wts$r.txt"
    fi
done
if [[ "${SKIP_PEER:-0}" != 1 ]]; then
    python3 scripts/bench/kernel_anchors.py 2>&1 | tee "$OUT/anchors.txt"
fi
if [[ "${RUN_STREAM:-0}" == 1 ]]; then
    .dev/nemotron-audio bench --stream ${STREAM_ARGS:---seconds 30 --max-sessions 1024} 2>&1 | tee "$OUT/bench-stream.txt"
fi
if [[ "${RUN_SERVE:-0}" == 1 ]]; then
    .dev/nemotron-audio bench --serve ${SERVE_ARGS:---seconds 30 --latencies low,ultra-low --clients 200,560 --admission-trials 3} \
        2>&1 | tee "$OUT/bench-serve.txt"
fi
