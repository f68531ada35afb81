"""The modules of `scripts/diarization_expected.py` (the entry point, next to this folder; its docstring says what
it writes and how to run it).

- `environment`: the pinned packages, and the bootstrap that makes the virtual environment and re-runs the entry
  point inside it;
- `output`: JSON/text writers (byte-stable) and the package versions recorded in the outputs;
- `scoring_cases`: the RTTM/UEM pairs of `testdata/scoring/cases/`, hand-written or drawn from a fixed seed;
- `scoring`: pyannote.metrics on those pairs -> `testdata/scoring/expected.json`;
- `nemo_source`: NeMo's post-processing functions, extracted verbatim from the nemo_toolkit wheel;
- `postprocessing_cases`: the probability arrays and YAML files the post-processing runs on;
- `postprocessing`: NeMo's functions on them -> `testdata/postprocessing/expected.json`;
- `speaker_dicts`: transformers' `extract_speaker_dict` -> `testdata/postprocessing/extract_speaker_dict.json` and
  `testdata/reference/<case>/speaker_dict.json`.

Third-party packages are imported inside the functions: the entry point's first run (the bootstrap) has only the
standard library.
"""
