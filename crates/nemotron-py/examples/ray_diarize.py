"""Diarize a corpus on a Ray cluster with Ray Data: a NeMo manifest or a folder of audio files in, the outputs of
`nemotron-audio diarize --manifest FILE --out-dir DIR` out, byte for byte:

- `DIR/<uniq_id>.rttm` (or `.json`, `.csv` with `--format`) and `DIR/<uniq_id>.safetensors` (`speaker_logits`,
  `speaker_probabilities`) per entry, each written atomically;
- `DIR/manifest.jsonl`: one line per entry in manifest order, the entry's fields (`audio_filepath` absolute) plus
  `outputs`, `audio_seconds`, `status` (`ok`, `skipped`, `error`) and `error`. A failing entry is reported there and
  the others go on; the exit status is 1 if any failed. The workers read each file by its absolute path (their
  working folder need not be the driver's), so an error names the file by that path where the CLI, given a
  relative manifest or folder, names it relative.

Each Ray worker (an actor of `map_batches`) loads the model once and diarizes its batches with it; give each worker
a GPU with `--gpus-per-worker 1` on a GPU cluster. Audio paths must be readable from every node (a shared file
system). docs/scaling.md shows how to run this on a Ray cluster (KubeRay, `ray up`).

    python examples/ray_diarize.py --model nvidia/Nemotron-3-Diarization --manifest corpus.jsonl \
        --out-dir out --workers 8 --gpus-per-worker 1 --address auto
    python examples/ray_diarize.py --model demo --audio-dir calls/ --out-dir out --workers 2 --num-cpus 2
"""

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

import ray

import nemotron_audio

# The extensions the CLI takes from a folder of audio files.
AUDIO_EXTENSIONS = {".wav", ".wave", ".rf64", ".flac", ".mp3", ".ogg", ".oga", ".m4a", ".mp4", ".aac"}
# The CLI's segment flags, by their keyword names.
SEGMENT_SETTINGS = [
    "threshold", "onset", "offset", "pad_onset", "pad_offset", "min_duration_on", "min_duration_off",
    "postprocessing", "max_speakers",
]


def folder_entries(folder: Path) -> list:
    """The audio files of a folder in sorted order, as manifest entries (ids: the file names without extension)."""
    files = sorted(p for p in folder.iterdir() if p.is_file() and p.suffix.lower() in AUDIO_EXTENSIONS)
    entries = [{"audio_filepath": str(p.absolute()), "uniq_id": p.stem} for p in files]
    ids = [e["uniq_id"] for e in entries]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        sys.exit(f"error: several files would write outputs named {duplicates}; use a manifest with a uniq_id each")
    return entries


def write_atomic(path: Path, data: bytes) -> None:
    """Writes `path` whole or not at all: a temporary file beside it, synced, then renamed."""
    with tempfile.NamedTemporaryFile(dir=path.parent, prefix=f".{path.name}.", suffix=".partial", delete=False) as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.chmod(f.name, 0o666 & ~current_umask())
    os.replace(f.name, path)


def current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


class Diarizer:
    """One Ray worker: the model, loaded once, then `diarize` of every entry of its batches."""

    def __init__(self, model: str, out_dir: str, format: str, skip_existing: bool, settings: dict):
        self.model = nemotron_audio.Model.demo() if model == "demo" else nemotron_audio.Model.from_pretrained(model)
        self.out_dir, self.format, self.skip_existing, self.settings = out_dir, format, skip_existing, settings

    def __call__(self, batch: dict) -> dict:
        return {"line": [json.dumps(self.process(json.loads(e)), ensure_ascii=False, separators=(",", ":"))
                         for e in batch["entry"]]}

    def process(self, entry: dict) -> dict:
        """The output manifest's line of one entry, after writing its outputs."""
        uid = entry["uniq_id"]
        outputs = [os.path.join(self.out_dir, f"{uid}.{self.format}"), os.path.join(self.out_dir, f"{uid}.safetensors")]
        record = dict(entry)
        if self.skip_existing and all(os.path.isfile(p) for p in outputs):
            record.update(outputs=outputs, audio_seconds=None, status="skipped", error=None)
            return record
        try:
            result = self.model.diarize(entry, **self.settings)
            segments = {"rttm": lambda: result.to_rttm(uid), "json": result.to_json, "csv": result.to_csv}[self.format]
            write_atomic(Path(outputs[0]), segments().encode())
            write_atomic(Path(outputs[1]), result.to_safetensors())
            record.update(outputs=outputs, audio_seconds=result.duration, status="ok", error=None)
        except (ValueError, OSError, nemotron_audio.NemotronError) as error:
            record.update(outputs=[], audio_seconds=None, status="error", error=str(error))
        return record


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--manifest", type=Path, help="a NeMo manifest (JSON lines with audio_filepath, …)")
    source.add_argument("--audio-dir", type=Path, help="a folder of audio files")
    parser.add_argument("--model", required=True, help="a Hub id, a checkpoint folder, or `demo`")
    parser.add_argument("--out-dir", required=True, help="where the outputs and manifest.jsonl go")
    parser.add_argument("--format", choices=["rttm", "json", "csv"], default="rttm")
    parser.add_argument("--skip-existing", action="store_true", help="skip entries whose outputs all exist")
    parser.add_argument("--workers", type=int, default=1, help="Ray workers (each loads the model once)")
    parser.add_argument("--gpus-per-worker", type=float, default=0, help="1 on a GPU cluster")
    parser.add_argument("--cpus-per-worker", type=float, default=1)
    parser.add_argument("--batch-size", type=int, default=4, help="entries per map_batches call")
    parser.add_argument("--address", help="a running cluster (`auto`); default: a local one")
    parser.add_argument("--num-cpus", type=int, help="CPUs of the local cluster")
    for name in SEGMENT_SETTINGS:
        kind = str if name == "postprocessing" else int if name == "max_speakers" else float
        parser.add_argument("--" + name.replace("_", "-"), type=kind, dest=name)
    args = parser.parse_args()

    entries = nemotron_audio.read_manifest(args.manifest) if args.manifest else folder_entries(args.audio_dir)
    os.makedirs(args.out_dir, exist_ok=True)
    settings = {name: getattr(args, name) for name in SEGMENT_SETTINGS if getattr(args, name) is not None}

    ray.init(address=args.address, num_cpus=None if args.address else args.num_cpus, include_dashboard=False)
    # Lines come back in manifest order, as the CLI writes them.
    ray.data.DataContext.get_current().execution_options.preserve_order = True
    lines = ray.data.from_items([{"entry": json.dumps(e, ensure_ascii=False)} for e in entries]).map_batches(
        Diarizer,
        fn_constructor_kwargs=dict(
            model=args.model, out_dir=args.out_dir, format=args.format, skip_existing=args.skip_existing,
            settings=settings,
        ),
        batch_size=args.batch_size,
        concurrency=args.workers,
        num_gpus=args.gpus_per_worker,
        num_cpus=args.cpus_per_worker,
    )
    failed = 0
    with open(os.path.join(args.out_dir, "manifest.jsonl"), "a", encoding="utf-8") as manifest:
        for row in lines.iter_rows():
            manifest.write(row["line"] + "\n")
            manifest.flush()
            os.fsync(manifest.fileno())
            failed += json.loads(row["line"])["status"] == "error"
    print(f"{len(entries)} entries: {len(entries) - failed} ok or skipped, {failed} failed", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
