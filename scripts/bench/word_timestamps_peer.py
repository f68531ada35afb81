#!/usr/bin/env python3
"""The PyTorch peer of `nemotron-audio bench`'s `wts-head-60s` case: upstream Transformers 5.23's
`get_word_timestamp_hidden_states` + `word_timestamp_head` (= `get_word_timestamp_logits`), release-sized (16 heads of
80, 2 layers, 23,863 classes), random weights, on the ASR states of 60 s of audio (750 encoder frames, all valid, the
release chunk schedule: two chunks), on the GPU.

The 30B model is not built: its two word-timestamp modules are, and upstream's method runs on a stand-in holding them
(`get_word_timestamp_hidden_states` reads only `word_timestamp_encoder`, `config` and `audio_tower._get_chunks`).
Prints one line per case: median ms and TFLOP/s (upstream's FLOPs: upsampler, encoder over each chunk's window,
classifier over every frame). Run it in the same job as the bench (see scripts/bench/README.md for carrying
the transformers wheel):

    python3 -m pip install -q --no-index --no-deps --target /tmp/site .peer/*.whl
    PYTHONPATH=/tmp/site python3 scripts/bench/word_timestamps_peer.py
"""
import statistics
import types

import torch
from transformers import Nemotron3_5TranscribeConfig
from transformers.models.nemotron3_5_transcribe import modeling_nemotron3_5_transcribe as m

SECONDS = 60
dev = "cuda"
torch.manual_seed(0)
cfg = Nemotron3_5TranscribeConfig()  # release-sized defaults
wcfg = cfg.word_timestamp_config


def bench(fn, reps=10, warm=3):
    for _ in range(warm):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        torch.cuda.synchronize()
        times.append(s.elapsed_time(e))
    return statistics.median(times)


def flops(frames):
    """Upstream's work: per chunk the upsampler and the encoder over its window, then the classifier per frame."""
    d, inter, f, layers, vocab = wcfg.hidden_size, wcfg.intermediate_size, wcfg.upsampling_factor, wcfg.num_hidden_layers, wcfg.vocab_size
    c = cfg.audio_config.diarization_config
    total = 2.0 * frames * f * d * vocab
    for start in range(0, frames, c.chunk_length):
        end = min(start + c.chunk_length, frames)
        n = min(end + c.chunk_right_context, frames) - max(start - c.chunk_left_context, 0)
        rows = f * n
        total += 2.0 * n * d * f * d + layers * (2.0 * rows * (4 * d * d + 2 * d * inter) + 4.0 * rows * rows * d)
    return total


frames = SECONDS * 100 // 8
results = []
for attn in ["sdpa", "eager"]:
    encoder = m.Nemotron3_5TranscribeWordTimestampModel(wcfg).to(dev).eval()
    encoder.config._attn_implementation = attn
    head = torch.nn.Conv1d(wcfg.hidden_size, wcfg.vocab_size, 1).to(dev).eval()
    audio = types.SimpleNamespace(config=cfg.audio_config)
    stand_in = types.SimpleNamespace(
        word_timestamp_encoder=encoder,
        config=cfg,
        audio_tower=types.SimpleNamespace(_get_chunks=lambda n: m.Nemotron3_5TranscribeAudioModel._get_chunks(audio, n)),
    )

    def logits(states, mask):
        hidden = m.Nemotron3_5TranscribeModel.get_word_timestamp_hidden_states(stand_in, states, mask)
        return head(hidden.transpose(1, 2)).transpose(1, 2)

    for dtype, tf32 in [(torch.float32, False), (torch.float32, True), (torch.bfloat16, False)]:
        torch.backends.cuda.matmul.allow_tf32 = tf32
        torch.backends.cudnn.allow_tf32 = tf32
        encoder.to(dtype)
        head.to(dtype)
        name = "bf16" if dtype == torch.bfloat16 else ("fp32+tf32" if tf32 else "fp32")
        with torch.no_grad():
            states = torch.randn(1, frames, wcfg.hidden_size, device=dev, dtype=dtype)
            mask = torch.ones(1, frames * 8, dtype=torch.long, device=dev)
            out = logits(states, mask)
            assert out.shape == (1, frames * wcfg.upsampling_factor, wcfg.vocab_size), out.shape
            ms = bench(lambda: logits(states, mask))
        results.append((f"wts-head-{SECONDS}s {attn}", name, ms, flops(frames) / ms / 1e9))
    del encoder, head
    torch.cuda.empty_cache()

print(f"torch {torch.__version__} on {torch.cuda.get_device_name()}")
for name, precision, ms, rate in results:
    print(f"{name:26s} {precision:10s} median {ms:9.2f} ms   {rate:10.2f} TFLOP/s")
