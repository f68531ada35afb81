"""The pinned packages, and the bootstrap: a virtual environment with them, then the entry point re-run inside it."""

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
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


def install(venv: Path, requirements, work: Path) -> Path:
    """Makes the virtual environment `venv` unless it exists and installs `requirements` into it, every package pinned
    by CONSTRAINTS (`work`: a scratch folder). Returns its Python. Also used by `scripts/upstream_bf16_errors.py`."""
    python = venv / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    constraints = work / "constraints.txt"
    constraints.write_text(CONSTRAINTS)
    pip = [str(python), "-m", "pip", "--disable-pip-version-check"]
    subprocess.run(pip + ["install", "-q", "--only-binary=:all:", "-c", str(constraints)] + requirements, check=True)
    return python


def bootstrap(args, script: Path):
    """Installs the packages, then runs `script` (the entry point) again with INNER_ENV set."""
    tmp = Path(tempfile.mkdtemp(prefix="diar-expected-"))
    try:
        python = install(Path(args.venv) if args.venv else tmp / "venv", REQUIREMENTS, tmp)
        pip = [str(python), "-m", "pip", "--disable-pip-version-check"]
        wheels = tmp / "nemo"
        subprocess.run(pip + ["download", "-q", "--no-deps", "--only-binary=:all:", "-d", str(wheels), NEMO_WHEEL], check=True)
        (wheel,) = wheels.glob("nemo_toolkit-*.whl")
        digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
        if digest != NEMO_WHEEL_SHA256:
            sys.exit(f"unexpected {wheel.name}: sha256 {digest}")
        env = dict(os.environ, **{INNER_ENV: "1"})
        cmd = [str(python), str(script), "--nemo-wheel", str(wheel), "--root", str(args.root)]
        if args.reference_dir:
            cmd += ["--reference-dir", str(args.reference_dir)]
        subprocess.run(cmd, check=True, env=env)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)  # the temporary venv too, unless --venv put it elsewhere
