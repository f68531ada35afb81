"""The inputs of NeMo's post-processing: probability arrays with their parameters, and the YAML files of
`testdata/postprocessing/yaml/`."""

from pathlib import Path


def postprocessing_examples(reference_dir: Path):
    """(name, description, dict(unit=..., frame_length_in_sec=..., dtype=..., params=..., probabilities=[per speaker]))."""
    import random

    rng = random.Random(7)
    ex = []

    def add(name, description, probabilities, params, unit=8, dtype="float32", frame_length_in_sec=None, raw=False):
        ex.append(
            dict(
                name=name,
                description=description,
                probabilities=probabilities,
                params=params,
                unit_10ms_frame_count=unit,
                dtype=dtype,
                frame_length_in_sec=frame_length_in_sec,
                raw_binarization=raw,
            )
        )

    default = dict(onset=0.5, offset=0.5, pad_onset=0.0, pad_offset=0.0, min_duration_on=0.0, min_duration_off=0.0)
    add(
        "01-default-80ms",
        "defaults (0.5/0.5, no padding, no filtering) on 80 ms probabilities repeated 8x to 10 ms: p == 0.5 never starts "
        "speech (> onset) but never ends it either (< offset); speech running to the last frame ends at (8N-1)*0.01",
        [
            [0.1, 0.6, 0.7, 0.5, 0.4, 0.5, 0.9, 0.2, 0.8, 0.8],
            [0.5, 0.5, 0.51, 0.49, 0.0, 1.0, 1.0, 0.3, 0.3, 0.3],
        ],
        default,
    )
    add(
        "02-hysteresis",
        "onset 0.7, offset 0.3: speech starts above 0.7 and lasts until a frame below 0.3",
        [[0.2, 0.6, 0.71, 0.5, 0.31, 0.3, 0.29, 0.65, 0.75, 0.2, 0.8, 0.1]],
        dict(default, onset=0.7, offset=0.3),
    )
    add(
        "03-onset-below-offset",
        "onset 0.56 < offset 1.0 (a shipped DIHARD3 tuning): every active 10 ms frame ends at the next frame, "
        "which is not re-tested for onset, so speech alternates 10 ms on / 10 ms off; padding then merges it",
        [[0.1, 0.7, 0.9, 0.9, 0.2, 0.6, 0.1]],
        dict(default, onset=0.56, offset=1.0, pad_onset=0.063, pad_offset=0.002, min_duration_on=0.007, min_duration_off=0.151),
    )
    add(
        "04-onset-below-offset-nopad",
        "the same thresholds without padding or filtering: the raw alternation",
        [[0.1, 0.7, 0.9, 0.2, 0.6]],
        dict(default, onset=0.56, offset=1.0),
    )
    add(
        "05-pad-clamp-start",
        "pad_onset larger than the start: the start is clamped at 0; pad_offset past the last frame is not clamped "
        "(the last segment ends at 0.71 + 0.15 = 0.86 > 0.72 s of input)",
        [[0.9, 0.9, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.8]],
        dict(default, pad_onset=0.23, pad_offset=0.15),
    )
    add(
        "06-padding-merges",
        "padded segments of one speaker that overlap or touch merge (merge_overlap_segment uses end >= next start)",
        [[0.9, 0.1, 0.1, 0.9, 0.1, 0.1, 0.1, 0.9, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.9, 0.1]],
        dict(default, pad_onset=0.08, pad_offset=0.08),
    )
    add(
        "07-min-duration-off",
        "gaps shorter than min_duration_off (0.16) are filled; a gap of 0.16 s (0.24 to 0.40) is kept",
        [[0.9, 0.1, 0.9, 0.1, 0.1, 0.9, 0.1, 0.1, 0.1, 0.9]],
        dict(default, min_duration_off=0.16),
    )
    add(
        "08-min-duration-on",
        "segments shorter than min_duration_on (0.16) are removed; 0.16 s (0.16 to 0.32) is kept (duration >= threshold)",
        [[0.9, 0.1, 0.9, 0.9, 0.1, 0.9, 0.9, 0.9, 0.1, 0.1]],
        dict(default, min_duration_on=0.16),
    )
    add(
        "09-filter-speech-first",
        "filter_speech_first (NeMo's default 1.0): drop short speech, then fill short gaps; compare 10",
        [[0.9, 0.9, 0.9, 0.1, 0.9, 0.1, 0.9, 0.9, 0.9, 0.1, 0.1, 0.1]],
        dict(default, min_duration_on=0.1, min_duration_off=0.1, filter_speech_first=1.0),
    )
    add(
        "10-filter-gaps-first",
        "filter_speech_first = 0.0 on the same input: fill short gaps first, then drop short speech",
        [[0.9, 0.9, 0.9, 0.1, 0.9, 0.1, 0.9, 0.9, 0.9, 0.1, 0.1, 0.1]],
        dict(default, min_duration_on=0.1, min_duration_off=0.1, filter_speech_first=0.0),
    )
    add(
        "11-empty-and-full",
        "no frame above onset (no segment); every frame above onset (one segment, to (8N-1)*0.01 + pad_offset)",
        [[0.1, 0.2, 0.3, 0.4], [0.6, 0.7, 0.8, 0.9]],
        dict(default, pad_onset=0.1, pad_offset=0.1, min_duration_on=0.1, min_duration_off=0.1),
    )
    add(
        "12-10ms-last-frame",
        "10 ms frames (unit 1): speech starting at the last frame gives a zero-length segment [s, s] "
        "(binarization keeps it, the output lines drop it); speech over the last two frames ends at the last frame's start",
        [[0.1, 0.1, 0.1, 0.1, 0.9], [0.1, 0.1, 0.1, 0.9, 0.9]],
        default,
        unit=1,
    )
    add(
        "13-masked-tail",
        "example 01's first speaker followed by four padding frames of probability 0 (NeMo's batched, masked "
        "frames): speech that reached the last valid frame now ends at the first padded frame (0.80, not 0.79)",
        [[0.1, 0.6, 0.7, 0.5, 0.4, 0.5, 0.9, 0.2, 0.8, 0.8, 0.0, 0.0, 0.0, 0.0]],
        default,
    )
    add(
        "14-rounding-ties",
        "pad_onset 0.035 puts starts at 0.16 - 0.035 = 0.125 and 2.16 - 0.035 = 2.125 (exact in f32): Python's "
        "round() gives 0.12 and 2.12 (exact binary value, ties to even); 0.40 - 0.035 = 0.365 is 0.36500000954 in f32: 0.37",
        [[0.1, 0.1, 0.9, 0.9, 0.1, 0.9, 0.9] + [0.1] * 20 + [0.9, 0.1]],
        dict(default, pad_onset=0.035),
    )
    add(
        "15-rounding-float32",
        "pad_onset 0.005: 0.08 - 0.005 = 0.075 is 0.07499999999999999722 in f64 (round: 0.07) but 0.07500000298 "
        "in f32, which NeMo rounds: 0.08",
        [[0.1, 0.9, 0.9, 0.1, 0.1, 0.1]],
        dict(default, pad_onset=0.005),
    )
    add(
        "16-float32-thresholds",
        "float32 probabilities are compared with the thresholds rounded to float32: speaker 0's 0.6f32 "
        "(0.60000002384) is not > onset 0.6 (both f32: equal), speaker 1's 0.29f32 (0.28999999166) is not < offset 0.29; "
        "compare 17",
        [[0.1, 0.6000000238418579, 0.9, 0.1], [0.95, 0.28999999165534973, 0.5, 0.1]],
        dict(default, onset=0.6, offset=0.29),
        dtype="float32",
    )
    add(
        "17-float64-thresholds",
        "the same values as float64, compared with the f64 thresholds: speaker 0 starts one 80 ms frame earlier, "
        "speaker 1 ends two frames earlier",
        [[0.1, 0.6000000238418579, 0.9, 0.1], [0.95, 0.28999999165534973, 0.5, 0.1]],
        dict(default, onset=0.6, offset=0.29),
        dtype="float64",
    )
    add(
        "18-float32-duration-keeps",
        "min_duration_on 0.16 and the segment [0.08, 0.24]: f32 0.24 - f32 0.08 = 0.16 (f32) >= f32 0.16, kept "
        "(in f64, 0.24 - 0.08 = 0.15999999999999998 < 0.16 would drop it)",
        [[0.1, 0.9, 0.9, 0.1, 0.1]],
        dict(default, min_duration_on=0.16),
    )
    add(
        "19-float32-duration-drops",
        "min_duration_on 0.4 and the segment [0.24, 0.64]: f32 0.64 - f32 0.24 = 0.39999998 < f32 0.4, dropped "
        "(in f64, 0.64 - 0.24 = 0.4 would keep it); min_duration_off follows the same arithmetic on gaps",
        [[0.1, 0.1, 0.1, 0.9, 0.9, 0.9, 0.9, 0.9, 0.1, 0.1]],
        dict(default, min_duration_on=0.4),
    )
    probs = [[round(rng.random() ** (0.6 if s % 2 else 1.6), 4) for _ in range(60)] for s in range(4)]
    add(
        "20-callhome-v2-params",
        "4 speakers x 60 frames (random, seeded) with the parameters of NeMo's diar_streaming_sortformer_4spk-v2 CallHome YAML",
        probs,
        dict(onset=0.641, offset=0.561, pad_onset=0.229, pad_offset=0.079, min_duration_on=0.511, min_duration_off=0.296),
    )
    add(
        "21-dihard3-v1-params",
        "the same probabilities with the parameters of NeMo's sortformer_diar_4spk-v1 DIHARD3 YAML (offset > onset)",
        probs,
        dict(onset=0.64, offset=0.74, pad_onset=0.06, pad_offset=0.0, min_duration_on=0.1, min_duration_off=0.15),
    )
    add(
        "22-raw-binarization-frame-length",
        "binarization + filtering called directly on 80 ms frames (frame_length_in_sec 0.08, no repetition), "
        "as the VAD code does: the same rules with another frame length",
        [[0.1, 0.6, 0.7, 0.5, 0.4, 0.5, 0.9, 0.2, 0.8, 0.8]],
        dict(default, pad_onset=0.05, min_duration_off=0.2),
        unit=1,
        frame_length_in_sec=0.08,
        raw=True,
    )
    from safetensors.numpy import load_file

    tensors = load_file(str(reference_dir / "diar-tiny" / "reference.safetensors"))
    diar = [[float(x) for x in column] for column in tensors["speaker_probabilities"].T]  # [8][115] f64, 80 ms
    add(
        "23-diar-tiny-defaults",
        "the diar-tiny reference case's speaker_probabilities (f64, 8 speakers x 115 frames of 80 ms, all rows) with the defaults",
        diar,
        default,
        dtype="float64",
    )
    add(
        "24-diar-tiny-callhome-v2",
        "the same probabilities with NeMo's CallHome v2 parameters",
        diar,
        dict(onset=0.641, offset=0.561, pad_onset=0.229, pad_offset=0.079, min_duration_on=0.511, min_duration_off=0.296),
        dtype="float64",
    )
    return ex


POSTPROCESSING_YAMLS = {
    "parameters.yaml": (
        "# NeMo's layout: the values under `parameters:` (these are NeMo's CallHome v2 tuning)\n"
        "parameters:\n  onset: 0.641\n  offset: 0.561\n  pad_onset: 0.229\n  pad_offset: 0.079\n"
        "  min_duration_on: 0.511\n  min_duration_off: 0.296\n"
    ),
    "parameters_filter_speech_first.yaml": (
        "# filter_speech_first and an unknown key under `parameters:`, integers for floats\n"
        "parameters:\n  onset: 0.6\n  offset: 0.4\n  pad_onset: 0\n  pad_offset: 0.1\n"
        "  min_duration_on: 0.2\n  min_duration_off: 0.3\n  filter_speech_first: false\n  window_length_in_sec: 0.63\n"
    ),
    "partial.yaml": "# only some keys: the others keep their defaults\nparameters:\n  onset: 0.7\n  min_duration_off: 0.25\n",
    "top_level.yaml": (
        "# the parameters at the top level (accepted by the issue, not by NeMo's loader)\n"
        "onset: 0.64\noffset: 0.74\npad_onset: 0.06\npad_offset: 0.0\nmin_duration_on: 0.1\nmin_duration_off: 0.15\n"
    ),
}
