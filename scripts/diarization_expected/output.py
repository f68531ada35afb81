"""Writers of the output files (deterministic bytes) and the package versions recorded in them."""

import json
from pathlib import Path


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
