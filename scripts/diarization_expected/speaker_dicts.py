"""transformers' `Nemotron3DiarizationProcessor.extract_speaker_dict` on the reference cases' logits
(`testdata/reference/<case>/speaker_dict.json`) and on small hand-made inputs
(`testdata/postprocessing/extract_speaker_dict.json`)."""

from pathlib import Path

from .output import package_versions, write_json, write_speaker_dict

REFERENCE_CASES = ["tiny-chunks", "tiny-release-chunks", "diar-tiny"]


def processor():
    from transformers import Nemotron3DiarizationProcessor
    from transformers.models.nemotron_asr_streaming.feature_extraction_nemotron_asr_streaming import (
        NemotronAsrStreamingFeatureExtractor,
    )

    fe = NemotronAsrStreamingFeatureExtractor()
    assert (fe.hop_length, fe.sampling_rate) == (160, 16000)
    return Nemotron3DiarizationProcessor(feature_extractor=fe)


def make_speaker_dicts(root: Path, reference_dir: Path):
    import torch
    from safetensors.numpy import load_file

    proc = processor()
    summary = {}
    for case in REFERENCE_CASES:
        tensors = load_file(str(reference_dir / case / "reference.safetensors"))
        logits = torch.from_numpy(tensors["speaker_logits"])[None]  # [1, frames, 8] f64, 10 ms
        mask = torch.from_numpy(tensors["input_features_mask"])[None]  # [1, frames]
        (segments,) = proc.extract_speaker_dict(logits, mask)
        write_speaker_dict(root / "testdata" / "reference" / case / "speaker_dict.json", segments)
        summary[case] = len(segments)

    # small hand-made inputs: threshold strictness, mask, edges, sorting, other thresholds
    inf = float("inf")
    synthetic = []
    cases = [
        ("edges", "active at the first and the last frame; logit 0 is sigmoid 0.5, not > 0.5", [[3.0, -1.0], [0.0, 2.0], [-2.0, 2.0], [1e-9, -3.0], [4.0, 5.0]], None, 0.5),
        ("mask", "frames past the mask are inactive even with large logits", [[3.0, 3.0], [3.0, -3.0], [3.0, 3.0], [3.0, 3.0]], [1, 1, 1, 0], 0.5),
        ("sorting", "same start: speaker order; speaker 1 starts first", [[-1.0, 2.0, -1.0], [2.0, 2.0, 2.0], [2.0, -1.0, 2.0], [-1.0, -1.0, 2.0]], None, 0.5),
        ("threshold-0.3", "another threshold", [[-0.5, 0.0], [-1.0, 0.0], [-0.84, 1.0], [-0.85, -inf]], None, 0.3),
        ("long", "frame indices whose times are not exact in binary (k * 0.01)", [[1.0 if (k // 7) % 2 else -1.0] for k in range(700)], None, 0.5),
    ]
    for name, description, logits, mask, threshold in cases:
        t = torch.tensor(logits, dtype=torch.float64)[None]
        m = None if mask is None else torch.tensor(mask, dtype=torch.int32)[None]
        (segments,) = proc.extract_speaker_dict(t, m, threshold=threshold)
        synthetic.append(
            {
                "name": name,
                "description": description,
                "logits": [[x if x not in (inf, -inf) else ("inf" if x > 0 else "-inf") for x in row] for row in logits],
                "mask": mask,
                "threshold": threshold,
                "speaker_dict": segments,
            }
        )
    write_json(
        root / "testdata" / "postprocessing" / "extract_speaker_dict.json",
        {
            "generator": "scripts/diarization_expected.py",
            "packages": package_versions(["transformers", "torch"]),
            "function": "transformers Nemotron3DiarizationProcessor.extract_speaker_dict(logits[None], mask[None], threshold) [0]",
            "conventions": {"logits": "[frames][speakers] f64 at 10 ms; the strings 'inf'/'-inf' stand for infinities", "mask": "null: no attention_mask"},
            "cases": synthetic,
        },
    )
    return summary
