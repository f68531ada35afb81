"""examples/ray_diarize.py on a local Ray cluster (2 CPUs, two workers, the demo model) writes what the CLI's
`diarize --manifest` (and `diarize --audio FOLDER`) writes: the same segment and tensor files, and the same output
manifest, the corrupt entry reported and the others written."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from conftest import REFERENCE, SHORT, STEREO, SPEECH, TESTDATA, cli_binary

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "ray_diarize.py"


def manifest_lines(out: Path) -> list:
    """The output manifest's entries, the output folder's name taken out of their output paths."""
    lines = (out / "manifest.jsonl").read_text(encoding="utf-8").splitlines()
    return [line.replace(str(out), "DIR") for line in lines]


def test_ray_example_writes_what_the_cli_writes(tmp_path):
    corrupt = tmp_path / "corrupt.wav"
    corrupt.write_bytes(b"RIFF\x10\x00\x00\x00WAVEdata but no audio")
    entries = [
        {"audio_filepath": str(SHORT), "text": "ein Grüßchen …", "uniq_id": "short"},
        {"audio_filepath": "corrupt.wav", "uniq_id": "corrupt"},
        {"duration": 0.4, "audio_filepath": str(STEREO), "offset": 0.05},
        {"audio_filepath": str(SPEECH), "uniq_id": "speech", "lang": "en"},
        {"audio_filepath": str(REFERENCE / "diar-tiny" / "audio.wav"), "uniq_id": "diar"},
        {"audio_filepath": str(TESTDATA / "audio" / "signal.flac")},
    ]
    manifest = tmp_path / "manifest.jsonl"
    manifest.write_text("".join(json.dumps(e, ensure_ascii=False) + "\n" for e in entries), encoding="utf-8")
    flags = ["--onset", "0.4", "--pad-offset", "0.1"]

    cli_out = tmp_path / "cli"
    cli = subprocess.run(
        [cli_binary(), "--quiet", "diarize", "--demo", "--manifest", manifest, "--out-dir", cli_out, *flags],
        capture_output=True, text=True,
    )
    assert cli.returncode == 1, cli.stderr  # one entry failed

    ray_out = tmp_path / "ray"
    ray = run_example("--manifest", manifest, "--out-dir", ray_out, "--batch-size", "2", *flags)
    assert ray.returncode == 1, ray.stderr[-4000:]

    expected = manifest_lines(cli_out)
    assert manifest_lines(ray_out) == expected
    statuses = [json.loads(line)["status"] for line in expected]
    assert statuses == ["ok", "error", "ok", "ok", "ok", "ok"]
    assert "corrupt.wav" in json.loads(expected[1])["error"]
    files = sorted(p.name for p in cli_out.iterdir())
    assert files == sorted(p.name for p in ray_out.iterdir())
    assert len(files) == 1 + 2 * 5
    for name in files:
        if name != "manifest.jsonl":
            assert (ray_out / name).read_bytes() == (cli_out / name).read_bytes(), name
            assert (ray_out / name).stat().st_mode == (cli_out / name).stat().st_mode, name


def run_example(*args) -> subprocess.CompletedProcess:
    command = [sys.executable, EXAMPLE, "--model", "demo", "--workers", "2", "--num-cpus", "2", *map(str, args)]
    return subprocess.run(command, capture_output=True, text=True, env=dict(os.environ, RAY_DEDUP_LOGS="0"))


def test_ray_example_on_a_folder_writes_what_the_cli_writes(tmp_path):
    folder = tmp_path / "calls"
    folder.mkdir()
    for source in [SHORT, STEREO, TESTDATA / "audio" / "signal.flac"]:
        shutil.copy(source, folder / source.name)
    (folder / "corrupt.wav").write_bytes(b"RIFF\x10\x00\x00\x00WAVEdata but no audio")
    (folder / "notes.txt").write_text("not audio: not listed")

    cli_out, ray_out = tmp_path / "cli", tmp_path / "ray"
    cli = subprocess.run(
        [cli_binary(), "--quiet", "diarize", "--demo", "--audio", folder, "--out-dir", cli_out, "--format", "json"],
        capture_output=True, text=True,
    )
    assert cli.returncode == 1, cli.stderr
    ray = run_example("--audio-dir", folder, "--out-dir", ray_out, "--format", "json")
    assert ray.returncode == 1, ray.stderr[-4000:]

    expected = manifest_lines(cli_out)
    assert manifest_lines(ray_out) == expected
    assert [json.loads(line)["status"] for line in expected] == ["error", "ok", "ok", "ok"]
    files = sorted(p.name for p in cli_out.iterdir())
    assert files == sorted(p.name for p in ray_out.iterdir()) and len(files) == 1 + 2 * 3
    for name in files:
        if name != "manifest.jsonl":
            assert (ray_out / name).read_bytes() == (cli_out / name).read_bytes(), name
