#!/usr/bin/env python3
# scripts/bench/kernel_anchors.py: cuBLAS GEMM and PyTorch attention timings at the towers' shapes (see
# scripts/bench/README.md). Written for this repository and licensed with it (MIT OR Apache-2.0); it imports torch
# only, and copies no code.
"""Per-kernel anchors on the GPU at the towers' exact shapes: cuBLAS GEMMs in fp32 (TF32 off), TF32, fp16 and bf16,
and PyTorch attention (sdpa backends) in fp32 and fp16. Prints ms and TFLOP/s per shape (CUDA events, median)."""
import statistics, torch
import torch.nn.functional as F
from torch.nn.attention import sdpa_kernel, SDPBackend

dev = "cuda"


def bench(fn, reps=50, warm=10):
    for _ in range(warm):
        fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record(); fn(); e.record(); torch.cuda.synchronize()
        ts.append(s.elapsed_time(e))
    return statistics.median(ts)


gemms = [("ASR q/k/v", 600, 3840, 1280), ("ASR out-proj", 600, 1280, 1280), ("ASR fc1", 600, 5120, 1280),
         ("ASR fc2", 600, 1280, 5120), ("8 ASR chunks q/k/v", 4800, 3840, 1280), ("Sortformer q/k/v", 828, 1536, 512),
         ("Sortformer out-proj", 828, 512, 512), ("Sortformer fc1", 828, 2048, 512), ("Sortformer fc2", 828, 512, 2048),
         ("wts vocab", 1500, 23863, 1280)]
print(f"torch {torch.__version__} on {torch.cuda.get_device_name()}")
print("GEMM (n x m x k): ms and TFLOP/s for fp32 | tf32 | fp16 | bf16")
for name, n, m, k in gemms:
    out = []
    for mode in ["fp32", "tf32", "fp16", "bf16"]:
        torch.backends.cuda.matmul.allow_tf32 = mode == "tf32"
        dt = {"fp16": torch.float16, "bf16": torch.bfloat16}.get(mode, torch.float32)
        a = torch.randn(n, k, device=dev, dtype=dt); b = torch.randn(k, m, device=dev, dtype=dt)
        ms = bench(lambda: a @ b)
        out.append(f"{ms:7.3f} {2 * n * m * k / ms / 1e9:6.1f}")
    print(f"{name:22s} {n}x{m}x{k:<6d} " + " | ".join(out))
torch.backends.cuda.matmul.allow_tf32 = False
print("attention (batch 1, heads, rows, head dim; non-causal): ms and TFLOP/s (4 n^2 d per head)")
for name, h, n, d in [("ASR layer", 10, 600, 128), ("Sortformer layer", 8, 828, 64), ("wts head layer", 16, 1100, 80)]:
    out = []
    for dt, backends in [(torch.float32, [SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH]),
                         (torch.float16, [SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION])]:
        q, k_, v = (torch.randn(1, h, n, d, device=dev, dtype=dt) for _ in range(3))
        for be in backends:
            try:
                with sdpa_kernel(be):
                    ms = bench(lambda: F.scaled_dot_product_attention(q, k_, v))
                out.append(f"{str(dt)[6:]}/{be.name[:9]} {ms:6.3f} ms {4 * h * n * n * d / ms / 1e9:5.1f}")
            except Exception as err:
                out.append(f"{str(dt)[6:]}/{be.name[:9]} n/a ({type(err).__name__})")
    print(f"{name:18s} {h}x{n}x{d}: " + " | ".join(out))
