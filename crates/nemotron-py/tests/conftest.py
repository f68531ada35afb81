"""Shared fixtures: the repository's test data, the CLI binary the results are compared with, the demo model."""

import json
import os
import struct
import subprocess
from pathlib import Path

import numpy as np
import pytest

import nemotron_audio

REPO = Path(__file__).resolve().parents[3]
TESTDATA = REPO / "testdata"
# The demo model is tiny-release-chunks; tiny-chunks is a Transcribe folder model, diar-tiny a standalone diarizer.
REFERENCE = TESTDATA / "reference"
SHORT = TESTDATA / "audio" / "source.wav"  # 16-bit PCM, 16 kHz, mono, 0.5 s
STEREO = TESTDATA / "audio" / "stereo.wav"  # 16-bit PCM, 16 kHz, stereo
SPEECH = REFERENCE / "tiny-chunks" / "audio.wav"  # float32, 16 kHz, mono, 6.4 s


def cli_binary() -> Path:
    """The `nemotron-audio` binary (scripts/python-tests.sh builds it and names it in NEMOTRON_AUDIO_CLI)."""
    path = Path(os.environ.get("NEMOTRON_AUDIO_CLI", REPO / "target" / "debug" / "nemotron-audio"))
    if not path.is_file():
        pytest.fail(f"no CLI binary at {path}: build it (cargo build -p nemotron-audio) or set NEMOTRON_AUDIO_CLI")
    return path


def run_cli(*args: object) -> str:
    """Runs the CLI quietly; its standard output. A failure fails the test with the CLI's error."""
    command = [str(cli_binary()), "--quiet", *map(str, args)]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        pytest.fail(f"{' '.join(command)} exited {done.returncode}: {done.stderr}")
    return done.stdout


def safetensors(source) -> dict:
    """The tensors of a safetensors file or buffer, by name, in file order: (dtype, shape, raw bytes)."""
    data = Path(source).read_bytes() if isinstance(source, (str, Path)) else bytes(source)
    (size,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + size])
    header.pop("__metadata__", None)
    body = data[8 + size :]
    ordered = sorted(header.items(), key=lambda item: item[1]["data_offsets"][0])
    return {name: (t["dtype"], t["shape"], body[t["data_offsets"][0] : t["data_offsets"][1]]) for name, t in ordered}


def wav_samples(path: Path) -> tuple:
    """(samples as (channels, frames) array of the file's own type, sample rate) of a PCM-16 or float32 WAV."""
    data = path.read_bytes()
    assert data[:4] == b"RIFF" and data[8:12] == b"WAVE", path
    position, fmt, samples = 12, None, None
    while position + 8 <= len(data):
        chunk, size = data[position : position + 4], struct.unpack("<I", data[position + 4 : position + 8])[0]
        body = data[position + 8 : position + 8 + size]
        if chunk == b"fmt ":
            fmt = struct.unpack("<HHIIHH", body[:16])
        elif chunk == b"data":
            samples = body
        position += 8 + size + (size & 1)
    tag, channels, rate, _, _, bits = fmt
    dtype = {(1, 16): np.int16, (3, 32): np.float32}[(tag, bits)]
    return np.frombuffer(samples, dtype=dtype).reshape(-1, channels).T.copy(), rate


def bits(array: np.ndarray) -> bytes:
    """The raw little-endian float32 bytes of an array (what a safetensors file holds)."""
    assert array.dtype == np.float32
    return np.ascontiguousarray(array).astype("<f4").tobytes()


@pytest.fixture(scope="session")
def demo() -> nemotron_audio.Model:
    return nemotron_audio.Model.demo()
