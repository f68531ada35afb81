#!/usr/bin/env python3
"""Regenerates the expected values of the diarization tests from the upstream Python code.

    python3 scripts/diarization_expected.py            # from the repository root

It makes a virtual environment in a temporary folder (or reuses `--venv DIR`), installs the pinned
packages below from PyPI (torch pulls its CUDA wheels: about 4 GB of downloads and 6 GB of disk,
only because `extract_speaker_dict` is torch code), downloads NeMo's wheel without its
dependencies (only two of its source files are read, see `nemo_functions`), re-runs itself inside
the environment and writes:

- `testdata/scoring/cases/NN-name.{ref,hyp}.rttm` (+ `.uem`): RTTM pairs, hand-written or drawn
  from a fixed seed;
- `testdata/scoring/expected.json`: pyannote.metrics' DER (with its components and the optimal
  mapping) and JER for every case, per file and overall, for every (collar, skip_overlap);
- `testdata/postprocessing/expected.json`: NeMo's diarization post-processing
  (`ts_vad_post_processing`, `binarization`, `filtering`, the output lines of Sortformer's
  `diarize`) on small probability arrays, and NeMo's YAML loader on `testdata/postprocessing/yaml/`;
- `testdata/postprocessing/extract_speaker_dict.json`: `Nemotron3DiarizationProcessor.extract_speaker_dict`
  on small hand-made logits (threshold, mask, edges);
- `testdata/reference/<case>/speaker_dict.json`: `extract_speaker_dict` on each reference case's
  `speaker_logits` and `input_features_mask` (default threshold 0.5).

Everything is deterministic: two runs give byte-identical files. Floats are written by Python's
`repr` (shortest round-trip form), so they parse back to the exact f64 values.
"""

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import warnings
import zipfile
from pathlib import Path

# Top-level packages; CONSTRAINTS pins the whole resolved set (as resolved on 2026-11 for CPython 3.11).
REQUIREMENTS = [
    "pyannote.metrics==4.2.0",
    "transformers==5.23.0",
    "torch==2.15.0",
    "safetensors==0.8.0",
    "omegaconf==2.4.0",
    "PyYAML==6.0.4",
]
CONSTRAINTS = """\
numpy==2.4.6
scipy==1.17.1
pandas==3.1.1
scikit-learn==1.9.1
sortedcontainers==2.4.0
pyannote-core==6.1.0
pyannote-database==6.1.1
pyannote-metrics==4.2.0
transformers==5.23.0
tokenizers==0.23.3
huggingface_hub==2.4.0
safetensors==0.8.0
torch==2.15.0
triton==3.9.0
omegaconf==2.4.0
PyYAML==6.0.4
regex==2026.11.19
packaging==26.4
typing_extensions==4.16.0
"""
# NeMo: only nemo/collections/asr/parts/utils/{vad_utils,speaker_utils}.py are read from the wheel.
NEMO_WHEEL = "nemo_toolkit==3.0.0"
NEMO_WHEEL_SHA256 = "f1d8238e35909464cf426e5792af3113a7060de419f194b83bedd81cbe909394"

INNER_ENV = "NEMOTRON_DIAR_EXPECTED_INNER"
REFERENCE_CASES = ["tiny-chunks", "tiny-release-chunks", "diar-tiny"]


# --------------------------------------------------------------------------------------------
# bootstrap: venv + packages, then re-run inside it
# --------------------------------------------------------------------------------------------


def bootstrap(args):
    tmp = Path(tempfile.mkdtemp(prefix="diar-expected-"))
    try:
        venv = Path(args.venv) if args.venv else tmp / "venv"
        python = venv / "bin" / "python"
        if not python.exists():
            subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        constraints = tmp / "constraints.txt"
        constraints.write_text(CONSTRAINTS)
        pip = [str(python), "-m", "pip", "--disable-pip-version-check"]
        subprocess.run(pip + ["install", "-q", "--only-binary=:all:", "-c", str(constraints)] + REQUIREMENTS, check=True)
        wheels = tmp / "nemo"
        subprocess.run(pip + ["download", "-q", "--no-deps", "--only-binary=:all:", "-d", str(wheels), NEMO_WHEEL], check=True)
        (wheel,) = wheels.glob("nemo_toolkit-*.whl")
        digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
        if digest != NEMO_WHEEL_SHA256:
            sys.exit(f"unexpected {wheel.name}: sha256 {digest}")
        env = dict(os.environ, **{INNER_ENV: "1"})
        cmd = [str(python), str(Path(__file__).resolve()), "--nemo-wheel", str(wheel), "--root", str(args.root)]
        if args.reference_dir:
            cmd += ["--reference-dir", str(args.reference_dir)]
        subprocess.run(cmd, check=True, env=env)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)  # the temporary venv too, unless --venv put it elsewhere


# --------------------------------------------------------------------------------------------
# output helpers
# --------------------------------------------------------------------------------------------


def write_json(path: Path, value):
    path.parent.mkdir(parents=True, exist_ok=True)
    # json writes floats with repr(): the shortest string that parses back to the same f64
    path.write_text(json.dumps(value, indent=1, ensure_ascii=False, allow_nan=False) + "\n")


def write_speaker_dict(path: Path, segments):
    """The list of {"Start", "End", "Speaker"} dicts, one per line (same JSON value as json.dumps)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    body = ",\n".join(json.dumps(segment, allow_nan=False) for segment in segments)
    path.write_text("[\n" + body + "\n]\n" if segments else "[]\n")


def write_text(path: Path, text: str):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def package_versions(names):
    from importlib.metadata import version

    return {name: version(name) for name in names}


# --------------------------------------------------------------------------------------------
# 1. scoring: RTTM pairs and pyannote.metrics
# --------------------------------------------------------------------------------------------


def rttm(rows):
    """rows: (uri, start text, duration text, speaker) -> RTTM text (numbers kept as written)."""
    return "".join(f"SPEAKER {uri} 1 {start} {dur} <NA> <NA> {spk} <NA> <NA>\n" for uri, start, dur, spk in rows)


def rows1(uri, items):
    """items: (start, duration, speaker) with numbers as strings or floats."""
    return [(uri, fmt(s), fmt(d), spk) for s, d, spk in items]


def fmt(x):
    return x if isinstance(x, str) else f"{x:.3f}"


def random_conversation(rng, uri, speakers, length, mean_turn=3.0, overlap_prob=0.15):
    """Turns (start, duration, speaker) of a synthetic conversation, times on a 1 ms grid."""
    items = []
    t = rng.uniform(0.0, 1.0)
    previous = None
    while t < length - 0.5:
        spk = rng.choice([s for s in speakers if s != previous] or speakers)
        dur = min(rng.expovariate(1.0 / mean_turn) + 0.2, length - t)
        items.append((round(t, 3), round(dur, 3), spk))
        if rng.random() < overlap_prob:
            other = rng.choice([s for s in speakers if s != spk] or speakers)
            o_start = t + rng.uniform(0.0, dur)
            items.append((round(o_start, 3), round(rng.uniform(0.2, 1.5), 3), other))
        previous = spk
        t += dur + rng.choice([0.0, 0.0, rng.uniform(0.05, 1.0), rng.uniform(-0.4, 0.0)])
    return items


def perturb(rng, items, names, jitter=0.25, miss=0.1, false_alarm=0.1, swap=0.1, length=None):
    """A hypothesis from reference turns: jittered boundaries, renamed speakers, some misses,
    some confusions and some false alarms."""
    out = []
    for start, dur, spk in items:
        if rng.random() < miss:
            continue
        s = max(0.0, start + rng.uniform(-jitter, jitter))
        e = max(s + 0.05, start + dur + rng.uniform(-jitter, jitter))
        name = names[spk]
        if rng.random() < swap:
            name = rng.choice(sorted(set(names.values())))
        out.append((round(s, 3), round(e - s, 3), name))
    if length:
        for _ in range(int(len(items) * false_alarm) + 1):
            s = rng.uniform(0.0, length - 1.0)
            out.append((round(s, 3), round(rng.uniform(0.1, 1.5), 3), rng.choice(sorted(set(names.values())))))
    return out


def scoring_cases():
    """(name, description, ref text, hyp text, uem text or None)."""
    import random

    cases = []

    def add(name, description, ref, hyp, uem=None):
        cases.append((name, description, ref, hyp, uem))

    add(
        "01-identical",
        "hypothesis equals the reference up to speaker names",
        rttm(rows1("rec1", [("0.50", "2.70", "alice"), ("3.40", "1.60", "bob"), ("5.20", "2.30", "alice")])),
        rttm(rows1("rec1", [("0.50", "2.70", "spk0"), ("3.40", "1.60", "spk1"), ("5.20", "2.30", "spk0")])),
    )
    add(
        "02-disjoint",
        "reference and hypothesis never overlap in time: all missed + all false alarm, empty mapping",
        rttm(rows1("rec1", [("0.00", "2.00", "alice"), ("2.50", "1.50", "bob")])),
        rttm(rows1("rec1", [("5.00", "2.00", "spk0"), ("7.50", "1.00", "spk1")])),
    )
    add(
        "03-boundary-errors",
        "three speakers, shifted boundaries, hypothesis names in another order than the reference's",
        rttm(rows1("rec1", [("0.00", "4.00", "alice"), ("4.00", "3.00", "bob"), ("7.00", "2.50", "alice"), ("9.50", "2.00", "carol")])),
        rttm(rows1("rec1", [("0.20", "3.70", "spk1"), ("3.90", "3.30", "spk0"), ("7.20", "2.10", "spk1"), ("9.30", "2.40", "spk2")])),
    )
    add(
        "04-overlap-in-ref",
        "overlapping speech in the reference only (missed in overlap; skip_overlap removes it)",
        rttm(rows1("rec1", [("0.00", "5.00", "alice"), ("3.00", "5.00", "bob"), ("6.00", "2.00", "carol")])),
        rttm(rows1("rec1", [("0.00", "4.00", "spk0"), ("4.00", "4.00", "spk1")])),
    )
    add(
        "05-overlap-in-hyp",
        "overlapping speech in the hypothesis only (false alarm in overlap; skip_overlap keeps it)",
        rttm(rows1("rec1", [("0.00", "4.00", "alice"), ("4.00", "4.00", "bob")])),
        rttm(rows1("rec1", [("0.00", "5.00", "spk0"), ("3.00", "5.00", "spk1"), ("6.50", "1.00", "spk2")])),
    )
    add(
        "06-overlap-both",
        "overlap on both sides, with confusion",
        rttm(rows1("rec1", [("1.0", "3.0", "A"), ("2.0", "4.0", "B"), ("5.5", "2.0", "C"), ("7.0", "1.0", "A")])),
        rttm(rows1("rec1", [("0.8", "2.5", "x"), ("2.2", "4.1", "y"), ("5.0", "1.2", "x"), ("6.9", "1.5", "z")])),
    )
    add(
        "07-missing-hyp-speaker",
        "three reference speakers, two hypothesis speakers (one reference speaker stays unmapped)",
        rttm(rows1("rec1", [("0", "3", "alice"), ("3", "3", "bob"), ("6", "3", "carol"), ("9", "2", "alice")])),
        rttm(rows1("rec1", [("0", "3.1", "s1"), ("2.9", "5.6", "s2"), ("9", "2", "s1")])),
    )
    add(
        "08-extra-hyp-speakers",
        "two reference speakers, five hypothesis speakers (unmapped ones count as confusion or false alarm)",
        rttm(rows1("rec1", [("0", "5", "alice"), ("5", "5", "bob")])),
        rttm(rows1("rec1", [("0", "2.5", "a"), ("2.5", "2.2", "b"), ("5", "2.5", "c"), ("7.6", "2.4", "d"), ("10.5", "1.0", "e")])),
    )
    add(
        "09-empty-ref",
        "empty reference file: no reference speech, DER is 1.0 as soon as there is a false alarm; JER is 1.0",
        "",
        rttm(rows1("rec1", [("1.0", "2.0", "spk0"), ("4.0", "1.0", "spk1")])),
    )
    add(
        "10-empty-hyp",
        "empty hypothesis file: everything missed",
        rttm(rows1("rec1", [("0.5", "2", "alice"), ("3", "2", "bob")])),
        "",
    )
    add(
        "11-both-empty",
        "both files empty: no file at all; the overall values are those of zero components (DER 0.0, JER 1.0)",
        "",
        "",
    )
    add(
        "12-uem-restrict",
        "a UEM that scores [2, 9] only; speech outside it is ignored",
        rttm(rows1("rec1", [("0", "6", "alice"), ("5", "7", "bob")])),
        rttm(rows1("rec1", [("0", "5.5", "s0"), ("5.5", "6.5", "s1"), ("12.5", "2", "s2")])),
        "rec1 1 2.0 9.0\n",
    )
    add(
        "13-uem-multi-segment",
        "a UEM of several segments, two of them overlapping each other (its support is used)",
        rttm(rows1("rec1", [("0.0", "2.5", "alice"), ("2.5", "3.0", "bob"), ("6.0", "4.0", "alice"), ("10.5", "2.0", "bob")])),
        rttm(rows1("rec1", [("0.2", "2.0", "h1"), ("2.2", "3.5", "h2"), ("5.9", "4.4", "h1"), ("10.2", "1.3", "h1"), ("11.5", "1.0", "h2")])),
        "rec1 1 0.0 3.0\nrec1 1 2.0 4.0\nrec1 1 5.0 10.0\nrec1 1 11.0 13.0\n",
    )
    add(
        "14-multi-file",
        "several files in one RTTM: rec_c only in the reference, rec_d only in the hypothesis",
        rttm(
            rows1("rec_a", [("0.0", "3.0", "alice"), ("3.0", "2.0", "bob"), ("5.5", "1.5", "alice")])
            + rows1("rec_b", [("1.0", "4.0", "carol")])
            + rows1("rec_c", [("0.0", "2.0", "dave"), ("2.0", "2.0", "erin")])
        ),
        rttm(
            rows1("rec_b", [("0.5", "4.0", "spk0"), ("4.5", "1.0", "spk1")])
            + rows1("rec_a", [("0.1", "2.8", "spk0"), ("2.9", "2.2", "spk1"), ("5.4", "1.7", "spk0")])
            + rows1("rec_d", [("0.0", "1.0", "spk0")])
        ),
    )

    rng = random.Random(20261130)
    ref15 = random_conversation(rng, "meeting", [f"S{k}" for k in range(7)], 120.0, mean_turn=2.5, overlap_prob=0.25)
    hyp15 = perturb(rng, ref15, {f"S{k}": f"spk{k + 2}" for k in range(7)}, jitter=0.3, length=120.0)
    hyp15 += [(round(rng.uniform(0, 118), 3), round(rng.uniform(0.3, 2.0), 3), spk) for spk in ["spk0", "spk1"] for _ in range(3)]
    add(
        "15-many-speakers",
        "7 reference and 9 hypothesis speakers, 120 s, random (seeded): the Hungarian mapping is not trivial",
        rttm(rows1("meeting", ref15)),
        rttm(rows1("meeting", hyp15)),
    )
    ref16 = random_conversation(rng, "panel", [f"p{k}" for k in range(8)], 90.0, mean_turn=2.0, overlap_prob=0.2)
    names16 = {f"p{k}": f"h{k % 3}" for k in range(8)}
    hyp16 = perturb(rng, ref16, names16, jitter=0.2, length=90.0)
    add(
        "16-more-ref-than-hyp",
        "8 reference speakers, 3 hypothesis speakers, random (seeded)",
        rttm(rows1("panel", ref16)),
        rttm(rows1("panel", hyp16)),
    )
    add(
        "17-tiny-segments",
        "segments shorter than a collar, and a zero-duration line (ignored by pyannote)",
        rttm(rows1("rec1", [("1.0", "0.1", "alice"), ("1.2", "0.05", "bob"), ("2.0", "2.0", "alice"), ("4.0", "0.0", "bob"), ("6.0", "0.2", "carol"), ("6.3", "1.0", "alice")])),
        rttm(rows1("rec1", [("0.95", "0.2", "s0"), ("1.9", "2.2", "s1"), ("6.05", "0.1", "s2"), ("7.0", "0.01", "s3"), ("6.3", "0.9", "s1")])),
    )
    add(
        "18-touching-same-speaker",
        "adjacent (touching) segments of one speaker, split at different places on both sides",
        rttm(rows1("rec1", [("0", "1", "alice"), ("1", "1", "alice"), ("2", "1.5", "alice"), ("3.5", "1", "bob"), ("4.5", "0.5", "alice")])),
        rttm(rows1("rec1", [("0", "1.5", "s0"), ("1.5", "2.0", "s0"), ("3.5", "0.5", "s1"), ("4.0", "0.5", "s1"), ("4.5", "0.5", "s0")])),
    )
    add(
        "19-self-overlap",
        "a speaker overlapping itself in the reference, a duplicated reference line, and self-overlap in the "
        "hypothesis: pyannote keeps one track per RTTM line, so such regions count twice",
        rttm(rows1("rec1", [("0", "3", "alice"), ("2", "3", "alice"), ("5", "2", "bob"), ("5", "2", "bob"), ("8", "1", "carol")])),
        rttm(rows1("rec1", [("0", "5", "s0"), ("5", "2", "s1"), ("6", "1", "s1"), ("7.5", "2", "s2")])),
    )
    add(
        "20-many-decimals",
        "boundaries with many decimals (end = start + duration in f64, e.g. 0.1 + 0.2)",
        rttm(rows1("rec1", [("0.1", "0.2", "spk_a"), ("0.3", "1.987654321", "spk_b"), ("2.111111111", "0.333333333", "spk_a"), ("2.444444444", "3.1415926535", "spk_b"), ("5.5859", "0.0000001", "spk_a")])),
        rttm(rows1("rec1", [("0.09999999999", "0.2000000001", "h1"), ("0.3000000000000001", "2.0123456789", "h2"), ("2.1000000001", "0.3456789012", "h1"), ("2.4567890123", "3.0999999999", "h2"), ("5.55", "0.123456789012345", "h1")])),
    )
    add(
        "21-sub-microsecond",
        "boundaries closer than pyannote's 1 us segment precision (slivers vanish, near-touching segments merge)",
        rttm(rows1("rec1", [("1.0", "1.0", "a"), ("2.0000005", "1.0", "b"), ("3.000002", "1.0", "a"), ("5.0", "0.0000008", "b"), ("6.0", "1.0", "b")])),
        rttm(rows1("rec1", [("1.0000004", "0.9999992", "x"), ("2.0", "1.0000003", "y"), ("3.000002", "0.0000008", "x"), ("3.5", "0.5", "x"), ("6.0000009", "0.9999991", "y")])),
    )
    ref22 = random_conversation(rng, "call", ["A", "B", "C", "D"], 60.0, mean_turn=4.0, overlap_prob=0.2)
    hyp22 = perturb(rng, ref22, {"A": "spk3", "B": "spk0", "C": "spk1", "D": "spk2"}, jitter=0.35, length=60.0)
    add(
        "22-random-long",
        "4 speakers, 60 s, random (seeded) reference and a perturbed hypothesis",
        rttm(rows1("call", ref22)),
        rttm(rows1("call", hyp22)),
    )
    ref23, hyp23, uem23 = [], [], ""
    for k, uri in enumerate(["day1", "day2", "day3"]):
        speakers = [f"{uri}_{s}" for s in "xyz"[: 2 + k % 2]]
        r = random_conversation(rng, uri, speakers, 40.0, mean_turn=3.0, overlap_prob=0.2)
        h = perturb(rng, r, {s: f"spk{i}" for i, s in enumerate(speakers)}, jitter=0.3, length=40.0)
        ref23 += rows1(uri, r)
        hyp23 += rows1(uri, h)
        lo = round(rng.uniform(0.0, 5.0), 3)
        uem23 += f"{uri} 1 {lo:.3f} {round(rng.uniform(25.0, 45.0), 3):.3f}\n"
    add(
        "23-random-multi-file-uem",
        "three files, random (seeded), each scored on a UEM segment",
        rttm(ref23),
        rttm(hyp23),
        uem23,
    )
    add(
        "24-collar-interplay",
        "boundaries closer than a collar (collars merge), a reference segment crossing the UEM end",
        rttm(rows1("rec1", [("0.1", "1.0", "a"), ("1.2", "0.3", "b"), ("1.6", "2.0", "a"), ("3.7", "0.2", "b")])),
        rttm(rows1("rec1", [("0.0", "1.3", "x"), ("1.3", "0.4", "y"), ("1.7", "2.5", "x")])),
        "rec1 1 0.0 3.0\n",
    )
    add(
        "25-silent-file-in-uem",
        "the UEM lists a file that neither RTTM has (scored as empty vs empty), next to a normal file",
        rttm(rows1("rec1", [("0.0", "4.0", "alice"), ("4.5", "3.0", "bob")])),
        rttm(rows1("rec1", [("0.3", "4.0", "s0"), ("4.3", "3.5", "s1")])),
        "rec1 1 0.0 10.0\nrec_silent 1 0.0 5.0\n",
    )
    names26 = ["Z", "a", "10", "9", "B"]
    ref26 = [(f"{3 * i:.1f}", "2.5", names26[i % 5]) for i in range(15)]
    hyp26 = [(f"{3 * i + 0.3 + 0.011 * i:.3f}", f"{1.9 - 0.037 * i:.3f}", f"spk{(7 * i) % 12}") for i in range(15)]
    add(
        "26-label-sorting",
        "speaker names whose string order differs from their numeric or case order, 12 hypothesis speakers (spk10 < spk2)",
        rttm(rows1("rec1", ref26)),
        rttm(rows1("rec1", hyp26)),
    )
    add(
        "27-hungarian-vs-greedy",
        "the greedy mapping (h1->A) is not the optimal one (h1->B, h2->A)",
        rttm(rows1("rec1", [("0", "5", "A"), ("5", "4", "B"), ("10", "4", "A")])),
        rttm(rows1("rec1", [("0", "9", "h1"), ("10", "4", "h2")])),
    )
    other_types = (
        "SPKR-INFO rec1 1 <NA> <NA> <NA> unknown alice <NA> <NA>\n"
        "SPKR-INFO rec1 1 <NA> <NA> <NA> unknown bob <NA> <NA>\n"
        "SPEAKER rec1 1 0.00 2.00 <NA> <NA> alice <NA> <NA>\n"
        "SPEAKER\trec1  1   2.00\t1.50 <NA> <NA> bob <NA> <NA>\n"
        "SPEAKER rec1 2 4.00 1.00 <NA> <NA> alice <NA> <NA>\n"
    )
    add(
        "28-rttm-other-types",
        "non-SPEAKER lines (SPKR-INFO, ignored), tabs and repeated spaces between fields, channel 2",
        other_types,
        rttm(rows1("rec1", [("0.10", "1.80", "1"), ("1.90", "1.70", "2"), ("4.00", "1.20", "1")])),
    )
    return cases


def load_annotations(path: Path):
    from pyannote.database.util import load_rttm

    # load_rttm (pandas.read_csv) fails on a file without any line: an empty file is no annotation
    if not path.read_text().strip():
        return {}
    return load_rttm(str(path))


def check_parse(text: str, annotations):
    """pandas' float parsing must give the correctly rounded values (those of Rust's str::parse)."""
    from pyannote.core import Segment

    expected = {}
    for line in text.splitlines():
        fields = line.split()
        if fields and fields[0] == "SPEAKER":
            start, duration = float(fields[3]), float(fields[4])
            segment = Segment(start, start + duration)
            if segment:
                expected.setdefault(fields[1], set()).add((segment.start, segment.end, fields[7]))
    got = {uri: {(s.start, s.end, label) for s, _, label in a.itertracks(yield_label=True)} for uri, a in annotations.items()}
    got = {uri: v for uri, v in got.items() if v}
    assert got == expected, (got, expected)


def load_uems(path: Path):
    from pyannote.database.util import load_uem

    return load_uem(str(path))


def mapping_is_unique(cooccurrence):
    """Whether the Hungarian mapping (pairs of positive co-occurrence) is the only optimal one:
    forbidding any positive pair of the optimum must lower the optimum."""
    import numpy as np
    from scipy.optimize import linear_sum_assignment

    if cooccurrence.size == 0:
        return True
    rows, cols = linear_sum_assignment(-cooccurrence)
    best = cooccurrence[rows, cols].sum()
    scale = max(1.0, abs(best))
    for r, c in zip(rows, cols):
        if cooccurrence[r, c] <= 0:
            continue
        forbidden = cooccurrence.copy()
        forbidden[r, c] = -1e9
        rr, cc = linear_sum_assignment(-forbidden)
        if abs(forbidden[rr, cc].sum() - best) <= 1e-12 * scale:
            return False
    return True


def score_file(der_metric, jer_metric, ref, hyp, uem):
    """One file with pyannote.metrics: components, rates, mappings (in the files' own labels)."""
    from pyannote.core.utils.generators import int_generator, string_generator

    der = der_metric(ref, hyp, uem=uem, detailed=True)
    jer = jer_metric(ref, hyp, uem=uem, detailed=True)

    # the same steps as DiarizationErrorRate.compute_components, to report the mapping it uses
    R, H, scored = der_metric.uemify(
        ref, hyp, uem=uem, collar=der_metric.collar, skip_overlap=der_metric.skip_overlap, returns_uem=True
    )
    ref_names = dict(zip(R.labels(), string_generator()))
    hyp_names = dict(zip(H.labels(), int_generator()))
    ref_back = {v: k for k, v in ref_names.items()}
    hyp_back = {v: k for k, v in hyp_names.items()}
    Rs = R.rename_labels(generator="string")
    Hi = H.rename_labels(generator="int")
    der_mapping = der_metric.optimal_mapping(Rs, Hi)  # {hyp int: ref str}
    jer_mapping = jer_metric.optimal_mapping(Hi, Rs)  # {ref str: hyp int}
    cooc = Rs * Hi  # [ref labels, hyp labels]

    # per reference speaker JER, with JaccardErrorRate.compute_components' own formulas
    speakers = {}
    for ref_label in Rs.labels():
        hyp_label = jer_mapping.get(ref_label)
        entry = {"hyp": None if hyp_label is None else hyp_back[hyp_label]}
        if hyp_label is None:
            entry.update(jer=1.0)
        else:
            r = Rs.label_timeline(ref_label)
            h = Hi.label_timeline(hyp_label)
            total = r.union(h).support().duration()
            fa = h.duration() - h.crop(r).duration()
            miss = r.duration() - r.crop(h).duration()
            entry.update(union=total, false_alarm=fa, missed=miss, jer=(fa + miss) / total)
        speakers[ref_back[ref_label]] = entry
    assert abs(sum(s["jer"] for s in speakers.values()) - jer["speaker error"]) < 1e-12

    total = der["total"]

    def rate(x):
        return x / total if total > 0 else None

    return {
        "scored_seconds": scored.duration(),
        "reference_speech": total,
        "correct": der["correct"],
        "missed_speech": der["missed detection"],
        "false_alarm_speech": der["false alarm"],
        "confusion_speech": der["confusion"],
        "der": der["diarization error rate"],
        "miss": rate(der["missed detection"]),
        "false_alarm": rate(der["false alarm"]),
        "confusion": rate(der["confusion"]),
        "der_mapping": {hyp_back[h]: ref_back[r] for h, r in sorted(der_mapping.items(), key=lambda kv: str(hyp_back[kv[0]]))},
        "jer": jer["jaccard error rate"],
        "jer_speaker_count": jer["speaker count"],
        "jer_speaker_error": jer["speaker error"],
        "jer_speakers": speakers,
        "mapping_unique": mapping_is_unique(cooc),
        "cooccurrence": [
            [ref_back[rl], hyp_back[hl], float(cooc[i, j])]
            for i, rl in enumerate(Rs.labels())
            for j, hl in enumerate(Hi.labels())
            if cooc[i, j] > 0
        ],
    }


def overall(der_metric, jer_metric):
    acc = der_metric[:]
    jacc = jer_metric[:]
    total = acc["total"]

    def rate(x):
        return x / total if total > 0 else None

    return {
        "reference_speech": total,
        "correct": acc["correct"],
        "missed_speech": acc["missed detection"],
        "false_alarm_speech": acc["false alarm"],
        "confusion_speech": acc["confusion"],
        "der": abs(der_metric),
        "miss": rate(acc["missed detection"]),
        "false_alarm": rate(acc["false alarm"]),
        "confusion": rate(acc["confusion"]),
        "jer": abs(jer_metric),
        "jer_speaker_count": jacc["speaker count"],
        "jer_speaker_error": jacc["speaker error"],
    }


SETTINGS = [(collar, skip) for collar in (0.0, 0.25, 0.5) for skip in (False, True)]


def make_scoring(root: Path):
    from pyannote.core import Annotation
    from pyannote.metrics.diarization import DiarizationErrorRate, JaccardErrorRate

    out = root / "testdata" / "scoring"
    case_dir = out / "cases"
    case_dir.mkdir(parents=True, exist_ok=True)
    for old in case_dir.iterdir():
        old.unlink()
    results = []
    for name, description, ref_text, hyp_text, uem_text in scoring_cases():
        ref_path, hyp_path = case_dir / f"{name}.ref.rttm", case_dir / f"{name}.hyp.rttm"
        write_text(ref_path, ref_text)
        write_text(hyp_path, hyp_text)
        uem_path = None
        if uem_text is not None:
            uem_path = case_dir / f"{name}.uem"
            write_text(uem_path, uem_text)
        refs, hyps = load_annotations(ref_path), load_annotations(hyp_path)
        check_parse(ref_text, refs)
        check_parse(hyp_text, hyps)
        uems = load_uems(uem_path) if uem_path else {}
        uris = sorted(set(refs) | set(hyps) | set(uems), key=str)
        settings = []
        for collar, skip in SETTINGS:
            der_metric = DiarizationErrorRate(collar=collar, skip_overlap=skip)
            jer_metric = JaccardErrorRate(collar=collar, skip_overlap=skip)
            files = {}
            for uri in uris:
                ref = refs.get(uri, Annotation(uri=uri))
                hyp = hyps.get(uri, Annotation(uri=uri))
                files[uri] = score_file(der_metric, jer_metric, ref, hyp, uems.get(uri))
            settings.append({"collar": collar, "skip_overlap": skip, "files": files, "overall": overall(der_metric, jer_metric)})
        results.append(
            {
                "name": name,
                "description": description,
                "ref": f"cases/{ref_path.name}",
                "hyp": f"cases/{hyp_path.name}",
                "uem": f"cases/{uem_path.name}" if uem_path else None,
                "files": uris,
                "settings": settings,
            }
        )
    write_json(
        out / "expected.json",
        {
            "generator": "scripts/diarization_expected.py",
            "packages": package_versions(["pyannote.metrics", "pyannote.core", "pyannote.database", "scipy", "numpy", "pandas"]),
            "conventions": {
                "files": "sorted URIs of ref, hyp and uem together; a file absent from one side is an empty annotation there; a file absent from the UEM (or no UEM) is scored on the union of the extents of ref and hyp",
                "seconds": "reference_speech, correct, missed_speech, false_alarm_speech, confusion_speech are durations in seconds, summed over speakers (a region where k reference speakers talk counts k times)",
                "rates": "der = (missed + false_alarm + confusion) / reference_speech, and 0.0 when all are 0, 1.0 when reference_speech is 0 but not the errors (pyannote); miss, false_alarm, confusion = component / reference_speech, null when reference_speech is 0",
                "overall": "components summed over files, then the rates of the sums; jer = sum of per-speaker JER over all files / number of reference speakers over all files (1.0 when there is none)",
                "der_mapping": "hypothesis speaker -> reference speaker (pairs of positive co-occurrence only), after collars/skip_overlap/UEM",
                "jer_speakers": "per reference speaker (after collars/skip_overlap/UEM): mapped hypothesis speaker (null: none) and its JER",
                "mapping_unique": "false when another mapping has the same total co-occurrence (ties: pyannote takes scipy's choice)",
                "cooccurrence": "[ref, hyp, seconds] for the positive entries of the co-occurrence matrix the mapping maximises",
            },
            "cases": results,
        },
    )
    return results


# --------------------------------------------------------------------------------------------
# 2. NeMo post-processing
# --------------------------------------------------------------------------------------------

NEMO_VAD_UTILS = "nemo/collections/asr/parts/utils/vad_utils.py"
NEMO_SPEAKER_UTILS = "nemo/collections/asr/parts/utils/speaker_utils.py"
NEMO_FUNCTIONS = {
    NEMO_VAD_UTILS: [
        "PostProcessingParams",
        "load_postprocessing_from_yaml",
        "merge_overlap_segment",
        "filter_short_segments",
        "binarization",
        "remove_segments",
        "get_gap_segments",
        "filtering",
        "ts_vad_post_processing",
    ],
    NEMO_SPEAKER_UTILS: ["merge_int_intervals", "fl2int", "int2fl", "merge_float_intervals", "generate_diarization_output_lines"],
}


def nemo_functions(wheel: Path, workdir: Path):
    """Imports NeMo's post-processing functions, verbatim from the wheel's source, as a module (the
    rest of NeMo and its dependencies are not needed; TorchScript compiles them as in NeMo)."""
    import ast
    import importlib

    header = (
        "# Functions copied verbatim by scripts/diarization_expected.py from the nemo_toolkit wheel.\n"
        "import logging\nfrom dataclasses import dataclass\nfrom typing import Dict, List, Tuple\n"
        "import torch\nimport yaml\nfrom omegaconf import DictConfig, OmegaConf\n\n"
    )
    parts = []
    with zipfile.ZipFile(wheel) as archive:
        for path, names in NEMO_FUNCTIONS.items():
            source = archive.read(path).decode()
            lines = source.splitlines(keepends=True)
            found = {}
            for node in ast.parse(source).body:
                if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name in names:
                    first = min([d.lineno for d in node.decorator_list] + [node.lineno])
                    found[node.name] = "".join(lines[first - 1 : node.end_lineno])
            missing = set(names) - set(found)
            if missing:
                sys.exit(f"{path}: missing {sorted(missing)}")
            parts += [found[n] for n in names]
    module_path = workdir / "nemo_postprocessing_extract.py"
    module_path.write_text(header + "\n\n".join(parts))
    sys.path.insert(0, str(workdir))
    return importlib.import_module("nemo_postprocessing_extract")


def tensor_segments(t):
    """A [n, 2] float32 tensor (or an empty one) as [[start, end], ...] of exact f64 values."""
    if t.numel() == 0:
        return []
    return [[float(a), float(b)] for a, b in t.tolist()]


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


# --------------------------------------------------------------------------------------------
# 3. extract_speaker_dict
# --------------------------------------------------------------------------------------------


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


# --------------------------------------------------------------------------------------------


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parent.parent, help="repository root (outputs go under ROOT/testdata)")
    parser.add_argument("--reference-dir", type=Path, default=None, help="folder of the reference cases (default ROOT/testdata/reference)")
    parser.add_argument("--venv", help="virtual environment to create or reuse (default: a new one in a temporary folder)")
    parser.add_argument("--nemo-wheel", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if os.environ.get(INNER_ENV) != "1":
        bootstrap(args)
        return

    warnings.simplefilter("ignore")  # pyannote warns that the UEM was approximated; torch that TorchScript is deprecated
    root = args.root.resolve()
    reference_dir = (args.reference_dir or root / "testdata" / "reference").resolve()
    with tempfile.TemporaryDirectory(prefix="nemo-extract-") as work:
        nemo = nemo_functions(args.nemo_wheel, Path(work))
        examples = make_postprocessing(root, nemo, reference_dir)
    cases = make_scoring(root)
    speaker_dicts = make_speaker_dicts(root, reference_dir)
    print(f"scoring: {len(cases)} cases x {len(SETTINGS)} settings -> testdata/scoring/expected.json")
    print(f"post-processing: {len(examples)} examples -> testdata/postprocessing/expected.json")
    print("speaker dicts: " + ", ".join(f"{case} {n} segments" for case, n in speaker_dicts.items()))


if __name__ == "__main__":
    main()
