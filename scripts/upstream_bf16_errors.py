#!/usr/bin/env python3
"""How close the upstream implementation comes to the f64 reference outputs when run in bfloat16: writes
`testdata/reference/<case>/bf16_errors.json` for every reference case, the yardstick for a matrix path whose products
are single 16-bit ones.

    python3 scripts/upstream_bf16_errors.py            # from the repository root

It makes a virtual environment in a temporary folder (or reuses `--venv DIR`), installs transformers 5.23.0, torch
and safetensors from PyPI, pinned as `scripts/diarization_expected/environment.py` pins them (torch pulls its CUDA
wheels, about 4 GB, though everything here runs on the CPU), and re-runs itself inside it.

Each case's config and weights go into the upstream classes its README names, with eager attention as for the
reference: `Nemotron3_5TranscribeForConditionalGeneration` from `model.hf.safetensors` (the language model, absent
from the file and unused, keeps a seeded random init) or `Nemotron3DiarizationForAudioFrameClassification` from
`model.safetensors`. They run on the reference's `input_features` and `input_features_mask`:

- Transcribe cases: `get_audio_features` gives `asr_last_hidden_state`, `speaker_logits`, `last_hidden_state` and
  `audio_embeds` (its `pooler_output`); `get_word_timestamp_hidden_states` and `get_word_timestamp_logits` run on
  the run's own `asr_last_hidden_state`.
- diar-tiny: the offline forward, and every streaming session of `streaming.safetensors` from its stored per-chunk
  spectrograms, as the processor hands them over (`attention_mask` of ones; every chunk but the last with its
  `num_lookahead_frames`; each forward given the `speaker_cache` the previous one returned). The diarizer takes its
  input in its own dtype (its documentation casts the processor's output to `model.dtype`).
- `speaker_probabilities`: the mean of the sigmoids of each 80 ms frame of the run's logits, in the run's dtype.

Each case runs in five ways:

- `f64`: `model.to(torch.float64)`, checked to land within 1e-6 of the reference (upstream computes its RoPE tables
  and the ASR feature normalisation in f32 even then, so it does not land on it exactly); the baseline of the
  speaker cache's selections below;
- `f32`: the model as built; it must reproduce the `upstream_f32_rel_err_*` of the reference's metadata to within
  10 % (the script fails otherwise), which shows that the driving is the reference's. Torch runs on two CPU
  threads, with which the recorded values come out to four digits (its CPU reductions depend on the count);
- `bf16`: `model.to(torch.bfloat16)`, every parameter and buffer in bf16, RoPE inverse frequencies included: the
  errors at the JSON's top level;
- `bf16_from_pretrained`: `from_pretrained(dtype=torch.bfloat16)`, Transformers' own bf16 loading. It keeps
  `Nemotron3_5TranscribeModel._keep_in_fp32_modules_strict` (`audio_tower`, `multi_modal_projector`) in f32, so
  in the Transcribe cases only the word-timestamp encoder and head run in bf16;
- `bf16_f64_cache`: as `bf16`, but every speaker cache compression keeps the frames the f64 run's kept: the bf16
  arithmetic without the different choices it leads the cache to.

The error is the relative Frobenius error over the whole tensor, `‖run − reference‖_F / ‖reference‖_F` in f64, the
definition of the metadata's `upstream_f32_rel_err_*` and of the tests' `assert_close` (docs/model.md §12). Also
written: in the Transcribe cases, how many speaker activity bits (probability above `speaker_activity_threshold`,
per encoder frame and speaker) differ from the reference's, each moving a row of `last_hidden_state` and
`audio_embeds` by a whole speaker embedding; and how many speaker cache compressions (all sessions) keep other
frames than the f64 run's.
"""

import argparse
import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.dont_write_bytecode = True  # no __pycache__/ left in scripts/ (the repository does not ignore it)
sys.path.insert(0, str(Path(__file__).resolve().parent))
from diarization_expected.environment import install  # noqa: E402
from diarization_expected.output import package_versions, write_json  # noqa: E402

INNER_ENV = "NEMOTRON_BF16_ERRORS_INNER"
REQUIREMENTS = ["transformers==5.23.0", "torch==2.15.0", "safetensors==0.8.0"]
COMMAND = "python3 scripts/upstream_bf16_errors.py"
TRANSCRIBE_CASES = ["tiny-chunks", "tiny-release-chunks"]
DIARIZATION_CASE = "diar-tiny"
F32_MATCH = 0.10  # largest relative deviation of the f32 errors from the recorded upstream_f32_rel_err_*
F64_MATCH = 1e-6  # largest error of the f64 run against the reference
THREADS = 2


def bootstrap(args, script: Path):
    """Installs the packages, then runs `script` (the entry point) again with INNER_ENV set."""
    tmp = Path(tempfile.mkdtemp(prefix="bf16-errors-"))
    try:
        python = install(Path(args.venv) if args.venv else tmp / "venv", REQUIREMENTS, tmp)
        cmd = [str(python), str(script), "--root", str(args.root)]
        if args.reference_dir:
            cmd += ["--reference-dir", str(args.reference_dir)]
        subprocess.run(cmd, check=True, env=dict(os.environ, **{INNER_ENV: "1"}))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)  # the temporary venv too, unless --venv put it elsewhere


def rel_error(got, want) -> float:
    import torch

    got = got.detach().to(torch.float64).reshape(want.shape)
    return float(torch.linalg.vector_norm(got - want) / torch.linalg.vector_norm(want))


def frame_probabilities(logits, factor: int):
    """Mean of the sigmoids of each `factor` frames (the last group may be shorter), in the logits' dtype."""
    import torch

    return torch.stack([group.mean(1) for group in logits.sigmoid().split(factor, dim=1)], dim=1)


@contextlib.contextmanager
def cache_selections(forced=None):
    """Records, for every speaker cache compression in order, the candidate rows upstream's `_compress` keeps (batch
    of one; the silence embedding is the last candidate), matched by value: the compression gathers rows unchanged.
    With `forced` (another run's record), each compression keeps that run's rows instead: how many compressions
    there are depends on the sizes only, so the two runs' compressions pair up."""
    import torch
    from torch import nn
    from transformers.models.nemotron3_diarization.modeling_nemotron3_diarization import (
        Nemotron3DiarizationSpeakerCache as Cache,
    )

    selections, original = [], Cache._compress

    def compress(cache, embeds, probs, silence_embeds):
        kept, kept_probs = original(cache, embeds, probs, silence_embeds)
        candidates = torch.cat([embeds[0], silence_embeds.to(embeds)[None]])
        selections.append([int((candidates == row).all(-1).nonzero()[0, 0]) for row in kept[0]])
        if forced is None:
            return kept, kept_probs
        rows = forced[len(selections) - 1]
        # upstream gives the silence slot a row of zero probabilities, as here
        return candidates[rows][None], nn.functional.pad(probs[0], (0, 0, 0, 1))[rows][None]

    Cache._compress = compress
    try:
        yield selections
    finally:
        Cache._compress = original


def load_weights(model, path: Path, unused_prefixes=()):
    """Loads `path` into `model`; only parameters under `unused_prefixes` may be missing, nothing may be left over."""
    from safetensors.torch import load_file

    result = model.load_state_dict(load_file(str(path)), strict=False)
    missing = [k for k in result.missing_keys if not k.startswith(unused_prefixes)]
    if missing or result.unexpected_keys:
        sys.exit(f"{path}: missing {missing[:5]}, unexpected {result.unexpected_keys[:5]}")


def build(case_dir: Path, variant: str):
    """The upstream model of the case in the precision `variant`."""
    import torch
    from transformers import (
        AutoConfig,
        Nemotron3_5TranscribeForConditionalGeneration,
        Nemotron3DiarizationForAudioFrameClassification,
    )

    transcribe = case_dir.name != DIARIZATION_CASE
    cls = Nemotron3_5TranscribeForConditionalGeneration if transcribe else Nemotron3DiarizationForAudioFrameClassification
    weights = case_dir / ("model.hf.safetensors" if transcribe else "model.safetensors")
    torch.manual_seed(0)  # what the file lacks (the Transcribe language model) keeps a random init: the same each run
    if variant == "bf16_from_pretrained":
        with tempfile.TemporaryDirectory(prefix="bf16-errors-model-") as folder:
            # from_pretrained reads model.safetensors; the Transcribe cases keep their Transformers names beside it
            os.symlink(case_dir / "config.json", Path(folder) / "config.json")
            os.symlink(weights, Path(folder) / "model.safetensors")
            return cls.from_pretrained(folder, dtype=torch.bfloat16, attn_implementation="eager").eval()
    model = cls._from_config(AutoConfig.from_pretrained(case_dir), attn_implementation="eager")
    load_weights(model, weights, ("model.language_model.", "lm_head.") if transcribe else ())
    dtype = {"f64": torch.float64, "f32": torch.float32, "bf16": torch.bfloat16}[variant]
    return model.to(dtype).eval()


def transcribe_outputs(model, reference):
    """The reference's outputs, computed by the Transcribe model from the reference's features and mask."""
    features, mask = reference["input_features"][None], reference["input_features_mask"][None]
    audio = model.get_audio_features(features, mask)
    asr = audio.asr_last_hidden_state
    return {
        "asr_last_hidden_state": asr,
        "speaker_logits": audio.speaker_logits,
        "speaker_probabilities": frame_probabilities(audio.speaker_logits, model.config.audio_config.subsampling_factor),
        "last_hidden_state": audio.last_hidden_state,
        "audio_embeds": audio.pooler_output,
        "word_timestamp_hidden_states": model.model.get_word_timestamp_hidden_states(asr, mask),
        "word_timestamp_logits": model.get_word_timestamp_logits(asr, mask),
    }


def streaming_logits(model, streaming, mode: str):
    """The concatenated logits of one streaming session, one forward per stored chunk."""
    import torch

    chunks = streaming[f"{mode}.input_features"].split(streaming[f"{mode}.chunk_mel_frames"].tolist())
    lookahead = streaming[f"{mode}.chunk_lookahead_frames"].tolist()
    cache, logits = None, []
    for k, chunk in enumerate(chunks):
        extra = {} if k == len(chunks) - 1 else {"num_lookahead_frames": lookahead[k]}
        ones = torch.ones(1, chunk.shape[0], dtype=torch.long)
        out = model(chunk[None].to(model.dtype), attention_mask=ones, speaker_cache=cache, **extra)
        cache = out.speaker_cache
        logits.append(out.logits)
    logits = torch.cat(logits, dim=1)
    expected = int(streaming[f"{mode}.chunk_frames"].sum())
    if logits.shape[1] != expected:
        sys.exit(f"{mode}: {logits.shape[1]} frames of logits, the reference has {expected}")
    return logits


def diarization_outputs(model, reference, streaming, modes):
    """Per session ("offline" and each streaming mode): its outputs."""
    features = reference["input_features"][None].to(model.dtype)
    logits = {"offline": model(features, attention_mask=reference["input_features_mask"][None]).logits}
    logits |= {mode: streaming_logits(model, streaming, mode) for mode in modes}
    factor = model.config.audio_config.subsampling_factor
    return {s: {"speaker_logits": v, "speaker_probabilities": frame_probabilities(v, factor)} for s, v in logits.items()}


def run_case(case_dir: Path):
    """Every variant of one case: {variant: ({output key: error}, cache selections, activity bits differing)}."""
    import json

    import torch
    from safetensors import safe_open
    from safetensors.torch import load_file

    reference = load_file(str(case_dir / "reference.safetensors"))
    streaming_path = case_dir / "streaming.safetensors"
    streaming = load_file(str(streaming_path)) if streaming_path.exists() else {}
    modes = json.loads(safe_open(str(streaming_path), "pt").metadata()["streaming_modes"]) if streaming else {}
    results = {}
    for variant in ["f64", "f32", "bf16", "bf16_from_pretrained", "bf16_f64_cache"]:
        model = build(case_dir, "bf16" if variant == "bf16_f64_cache" else variant)
        forced = results["f64"][1] if variant == "bf16_f64_cache" else None
        with torch.no_grad(), cache_selections(forced) as selections:
            if case_dir.name == DIARIZATION_CASE:
                sessions = diarization_outputs(model, reference, streaming, modes)
            else:
                sessions = {"offline": transcribe_outputs(model, reference)}
        errors, flips = {}, None
        for session, outputs in sessions.items():
            # the reference's keys: "speaker_logits" offline, "low_latency.speaker_logits" for a streaming session
            prefix = "" if session == "offline" else session + "."
            for key, value in outputs.items():
                errors[prefix + key] = rel_error(value, (streaming if prefix else reference)[prefix + key])
        if case_dir.name != DIARIZATION_CASE:
            threshold = model.config.audio_config.speaker_activity_threshold
            got = sessions["offline"]["speaker_probabilities"][0] > threshold
            flips = int((got != (reference["speaker_probabilities"] > threshold)).sum())
        results[variant] = (errors, selections, flips)
    return results


def check(case: str, results, metadata: dict):
    """Fails unless the f64 run lands on the reference and the f32 run reproduces the recorded f32 errors."""
    for key, error in results["f64"][0].items():
        if error > F64_MATCH:
            sys.exit(f"{case}: the f64 run's {key} is {error:.3e} from the reference")
    for name, recorded in metadata.items():
        session, _, output = name.rpartition("upstream_f32_rel_err_")
        got = results["f32"][0][session + output]
        if abs(got / float(recorded) - 1) > F32_MATCH:
            sys.exit(f"{case}: f32 {session + output} error {got:.3e}, the reference records {recorded}")


def differing(selections, baseline) -> int:
    """How many compressions keep other frames than the baseline run's (records of all sessions, in order)."""
    return sum(a != b for a, b in zip(selections, baseline, strict=True))


def summary(results):
    import torch

    def rounded(errors):
        return {key: float(f"{error:.3e}") for key, error in errors.items()}

    variants = ["f32", "bf16", "bf16_from_pretrained"]
    out = {
        "command": COMMAND,
        "transformers": package_versions(["transformers"])["transformers"],
        "torch": torch.__version__,
        "cpu": f"{torch.backends.cpu.get_cpu_capability()}, {THREADS} threads",
        "error": "relative Frobenius error ||run - f64 reference||_F / ||f64 reference||_F over the whole tensor, "
        "as upstream_f32_rel_err_*",
        "runs": {
            "top level": "model.to(torch.bfloat16)",
            "f32": "the model as built, in f32",
            "bf16_from_pretrained": "from_pretrained(dtype=torch.bfloat16), which keeps _keep_in_fp32_modules_strict in f32",
            "bf16_f64_cache": "model.to(torch.bfloat16), every speaker cache compression keeping the f64 run's frames",
        },
        **rounded(results["bf16"][0]),
        "f32": rounded(results["f32"][0]),
        "bf16_from_pretrained": rounded(results["bf16_from_pretrained"][0]),
        "bf16_f64_cache": rounded(results["bf16_f64_cache"][0]),
    }
    if results["bf16"][2] is not None:
        out["speaker_activity_bits_differing"] = {v: results[v][2] for v in variants}
    baseline = results["f64"][1]
    out["speaker_cache_compressions_differing_from_f64"] = {"compressions": len(baseline)} | {
        v: differing(results[v][1], baseline) for v in variants
    }
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parent.parent, help="repository root")
    parser.add_argument("--reference-dir", type=Path, default=None, help="folder of the reference cases (default ROOT/testdata/reference)")
    parser.add_argument("--venv", help="virtual environment to create or reuse (default: a new one in a temporary folder)")
    args = parser.parse_args()
    if os.environ.get(INNER_ENV) != "1":
        bootstrap(args, Path(__file__).resolve())
        return

    import torch
    import transformers
    from safetensors import safe_open

    torch.set_num_threads(THREADS)
    transformers.logging.set_verbosity_error()  # the Transcribe language model's missing weights are expected
    transformers.logging.disable_progress_bar()
    reference_dir = (args.reference_dir or args.root / "testdata" / "reference").resolve()
    for case in TRANSCRIBE_CASES + [DIARIZATION_CASE]:
        case_dir = reference_dir / case
        results = run_case(case_dir)
        metadata = {}
        for name in ["reference.safetensors", "streaming.safetensors"]:
            if (case_dir / name).exists():
                recorded = safe_open(str(case_dir / name), "pt").metadata()
                metadata |= {k: v for k, v in recorded.items() if "upstream_f32_rel_err_" in k}
        check(case, results, metadata)
        write_json(case_dir / "bf16_errors.json", summary(results))
        bf16 = results["bf16"][0]
        print(f"{case}: bf16 " + ", ".join(f"{k} {v:.2e}" for k, v in bf16.items()))


if __name__ == "__main__":
    main()
