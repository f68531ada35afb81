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
import os
import sys
import tempfile
import warnings
from pathlib import Path

# The code is in the package `diarization_expected/` next to this file (see its __init__.py). Run as a script, this
# folder is already sys.path[0]; a package and a module of the same name in one folder import as the package.
sys.dont_write_bytecode = True  # no __pycache__/ left in scripts/ (the repository does not ignore it)
sys.path.insert(0, str(Path(__file__).resolve().parent))
from diarization_expected.environment import INNER_ENV, bootstrap  # noqa: E402
from diarization_expected.nemo_source import nemo_functions  # noqa: E402
from diarization_expected.postprocessing import make_postprocessing  # noqa: E402
from diarization_expected.scoring import SETTINGS, make_scoring  # noqa: E402
from diarization_expected.speaker_dicts import make_speaker_dicts  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parent.parent, help="repository root (outputs go under ROOT/testdata)")
    parser.add_argument("--reference-dir", type=Path, default=None, help="folder of the reference cases (default ROOT/testdata/reference)")
    parser.add_argument("--venv", help="virtual environment to create or reuse (default: a new one in a temporary folder)")
    parser.add_argument("--nemo-wheel", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if os.environ.get(INNER_ENV) != "1":
        bootstrap(args, Path(__file__).resolve())
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
