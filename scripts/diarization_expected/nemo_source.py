"""NeMo's post-processing functions, read verbatim from the nemo_toolkit wheel (without NeMo's dependencies)."""

import sys
import zipfile
from pathlib import Path

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
