#!/usr/bin/env python3
# scripts/bench/torch_peer.py: the PyTorch peer of `nemotron-audio bench` (see scripts/bench/README.md). Written for
# this repository and licensed with it (MIT OR Apache-2.0); it imports torch and transformers, and copies no code.
"""The PyTorch peer: GPU timings of the upstream Transformers implementation of the Nemotron 3.5
Transcribe audio towers, release-sized, random weights, in PyTorch.

Prints one line per case: name, precision, median ms, and derived rates. `--compile` adds the two towers under
torch.compile(mode="reduce-overhead") in fp32, then cast to bf16 (CUDA graphs; about 3 minutes more)."""
import sys, time, json, statistics
import torch
from transformers import Nemotron3_5TranscribeConfig, Nemotron3_5TranscribeAudioModel

torch.manual_seed(0)
dev = "cuda"
cfg = Nemotron3_5TranscribeConfig().audio_config  # release-sized defaults


def bench(fn, reps=10, warm=3):
    for _ in range(warm):
        fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record(); fn(); e.record(); torch.cuda.synchronize()
        ts.append(s.elapsed_time(e))
    return statistics.median(ts), min(ts)


def tower_flops(n, d, inter, layers, stack_in):
    per_layer = 2 * n * (d * 3 * d + d * d + 2 * d * inter) + 4 * n * n * d
    return layers * per_layer + 2 * n * stack_in * d


results = []
for attn in ["sdpa", "eager"]:
    model = Nemotron3_5TranscribeAudioModel(cfg).to(dev).eval()
    model.config._attn_implementation = attn
    model.asr_encoder.config._attn_implementation = attn
    model.diarization_model.config._attn_implementation = attn
    model.diarization_model.model.audio_tower.config._attn_implementation = attn
    for tf32 in [False, True]:
        torch.backends.cuda.matmul.allow_tf32 = tf32
        torch.backends.cudnn.allow_tf32 = tf32
        prec = "fp32+tf32" if tf32 else "fp32"
        with torch.no_grad():
            # one ASR chunk with its context: 600 encoder frames = 4800 mel frames
            x = torch.randn(1, 4800, 128, device=dev)
            ms, mn = bench(lambda: model.asr_encoder(x))
            fl = tower_flops(600, 1280, 5120, 32, 1024)
            results.append((f"asr-chunk600 {attn}", prec, ms, fl / ms / 1e9))
            # one Sortformer step at its largest: 828 embedded rows
            e = torch.randn(1, 828, 512, device=dev)
            tw = model.diarization_model.model.audio_tower
            ms, mn = bench(lambda: tw(inputs_embeds=e))
            fl = tower_flops(828, 512, 2048, 31, 0)
            results.append((f"diar-step828 {attn}", prec, ms, fl / ms / 1e9))
            # whole audio module on 60 s and 600 s of features (chunk loops, cache, fusion)
            for secs in [60, 600]:
                f = torch.randn(1, secs * 100, 128, device=dev)
                m = torch.ones(1, secs * 100, dtype=torch.long, device=dev)
                ms, mn = bench(lambda: model(f, input_features_mask=m), reps=3, warm=1)
                results.append((f"audio-module-{secs}s {attn}", prec, ms, secs * 1000.0 / ms))
    if attn == "sdpa" and "--compile" in sys.argv:
        # the strongest practical fp32 peer: torch.compile with CUDA graphs (about 2 minutes of compilation)
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        with torch.no_grad():
            asr = torch.compile(model.asr_encoder, mode="reduce-overhead")
            tw = torch.compile(model.diarization_model.model.audio_tower, mode="reduce-overhead")
            x = torch.randn(1, 4800, 128, device=dev)
            e = torch.randn(1, 828, 512, device=dev)
            ms, mn = bench(lambda: asr(x).last_hidden_state, reps=20, warm=5)
            results.append(("asr-chunk600 compiled", "fp32", ms, tower_flops(600, 1280, 5120, 32, 1024) / ms / 1e9))
            ms, mn = bench(lambda: tw(inputs_embeds=e).last_hidden_state, reps=20, warm=5)
            results.append(("diar-step828 compiled", "fp32", ms, tower_flops(828, 512, 2048, 31, 0) / ms / 1e9))
            torch._dynamo.reset()
            # the throughput peer of `--precision fast`: the same towers cast to bf16 (how the anchors serve them)
            model.to(torch.bfloat16)
            asr = torch.compile(model.asr_encoder, mode="reduce-overhead")
            tw = torch.compile(model.diarization_model.model.audio_tower, mode="reduce-overhead")
            x, e = x.to(torch.bfloat16), e.to(torch.bfloat16)
            ms, mn = bench(lambda: asr(x).last_hidden_state, reps=20, warm=5)
            results.append(("asr-chunk600 compiled", "bf16", ms, tower_flops(600, 1280, 5120, 32, 1024) / ms / 1e9))
            ms, mn = bench(lambda: tw(inputs_embeds=e).last_hidden_state, reps=20, warm=5)
            results.append(("diar-step828 compiled", "bf16", ms, tower_flops(828, 512, 2048, 31, 0) / ms / 1e9))
        torch._dynamo.reset()
    del model
    torch.cuda.empty_cache()

print(f"torch {torch.__version__} on {torch.cuda.get_device_name()}")
for name, prec, ms, rate in results:
    unit = "x realtime" if "module" in name else "TFLOP/s"
    print(f"{name:28s} {prec:10s} median {ms:9.2f} ms   {rate:10.2f} {unit}")
