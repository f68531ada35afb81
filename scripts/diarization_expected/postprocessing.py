"""NeMo's post-processing (binarization, filtering, ts_vad_post_processing, the output lines, the YAML loader) on
the post-processing cases: `testdata/postprocessing/expected.json` and `testdata/postprocessing/yaml/`."""

from pathlib import Path

from .environment import NEMO_WHEEL
from .nemo_source import NEMO_SPEAKER_UTILS, NEMO_VAD_UTILS
from .output import package_versions, write_json, write_text
from .postprocessing_cases import POSTPROCESSING_YAMLS, postprocessing_examples


def tensor_segments(t):
    """A [n, 2] float32 tensor (or an empty one) as [[start, end], ...] of exact f64 values."""
    if t.numel() == 0:
        return []
    return [[float(a), float(b)] for a, b in t.tolist()]


def run_postprocessing_example(nemo, ex):
    import torch
    from omegaconf import OmegaConf

    dtype = {"float32": torch.float32, "float64": torch.float64}[ex["dtype"]]
    params = dict(ex["params"])
    if ex["frame_length_in_sec"] is not None:
        params["frame_length_in_sec"] = ex["frame_length_in_sec"]
    speakers = []
    for probabilities in ex["probabilities"]:
        seq = torch.tensor(probabilities, dtype=dtype)
        if ex["raw_binarization"]:
            binarized = nemo.binarization(seq, params)
            segments = nemo.filtering(binarized, params)
        else:
            # as SortformerEncLabelModel._diarize_output_processing: an OmegaConf config, unit = subsampling
            cfg = OmegaConf.create(params)
            frames = torch.repeat_interleave(seq, ex["unit_10ms_frame_count"])
            binarized = nemo.binarization(frames, cfg)
            segments = nemo.ts_vad_post_processing(seq, cfg, unit_10ms_frame_count=ex["unit_10ms_frame_count"])
        speakers.append((binarized, segments))
    rounded = [[[round(s, 2), round(e, 2)] for s, e in tensor_segments(seg)] for _, seg in speakers]
    lines = nemo.generate_diarization_output_lines(speaker_timestamps=rounded, model_spk_num=len(rounded))
    return {
        "binarized": [tensor_segments(b) for b, _ in speakers],
        "segments": [tensor_segments(s) for _, s in speakers],
        "segments_rounded": rounded,
        "output_lines": lines,
    }


def make_postprocessing(root: Path, nemo, reference_dir: Path):
    import torch
    from omegaconf import OmegaConf

    out = root / "testdata" / "postprocessing"
    examples = []
    for ex in postprocessing_examples(reference_dir):
        result = run_postprocessing_example(nemo, ex)
        examples.append(
            {
                "name": ex["name"],
                "description": ex["description"],
                "function": "binarization+filtering" if ex["raw_binarization"] else "ts_vad_post_processing",
                "dtype": ex["dtype"],
                "unit_10ms_frame_count": ex["unit_10ms_frame_count"],
                "frame_length_in_sec": ex["frame_length_in_sec"] if ex["frame_length_in_sec"] is not None else 0.01,
                "params": ex["params"],
                "probabilities": ex["probabilities"],
                **result,
            }
        )

    yaml_dir = out / "yaml"
    yaml_dir.mkdir(parents=True, exist_ok=True)
    loaded = {}
    for name, text in POSTPROCESSING_YAMLS.items():
        write_text(yaml_dir / name, text)
        try:
            params = nemo.load_postprocessing_from_yaml(str(yaml_dir / name))
            loaded[name] = {"nemo": OmegaConf.to_container(params)}
        except Exception as error:  # NeMo's loader needs `parameters:`
            loaded[name] = {"nemo_error": f"{type(error).__name__}: {error}"}

    write_json(
        out / "expected.json",
        {
            "generator": "scripts/diarization_expected.py",
            "packages": {**package_versions(["torch", "omegaconf"]), "nemo_toolkit": NEMO_WHEEL.split("==")[1]},
            "source": f"{NEMO_VAD_UTILS} and {NEMO_SPEAKER_UTILS} of nemo_toolkit, run verbatim (TorchScript)",
            "conventions": {
                "probabilities": "per speaker, one value per input frame; the input frames are repeated unit_10ms_frame_count times (torch.repeat_interleave) into frames of frame_length_in_sec",
                "binarized": "per speaker, binarization() output (before filtering), float32 values as exact f64",
                "segments": "per speaker, ts_vad_post_processing() (binarization then filtering) output, float32 values as exact f64, in NeMo's order",
                "segments_rounded": "per speaker, [round(start, 2), round(end, 2)] (Python round) as SortformerEncLabelModel._diarize_output_processing does",
                "output_lines": "generate_diarization_output_lines(segments_rounded): 'start end speaker_k' with %.3f, the lines Sortformer's diarize() returns",
            },
            "examples": examples,
            "yaml": loaded,
        },
    )
    return examples
