"""Known speakers: `Model.enroll` gives the profile and slots of `nemotron-audio enroll`, `Speakers` reads and writes
its file, and `diarize`, `diarize_many` and `stream` with `speakers=` give what `diarize --speakers` gives (offline,
`--stream`), names included; bad clips, names and files raise the documented exceptions."""

import json
import struct

import numpy as np
import pytest

import nemotron_audio
from conftest import REFERENCE, SHORT, SPEECH, bits, run_cli, wav_samples

DIARIZER = REFERENCE / "diar-tiny"
RECORDING = DIARIZER / "audio.wav"  # float32, 16 kHz, mono, 9.1 s
# Two stretches (seconds) that this random model hears in two different slots (the engine's tests chose them).
CLIPS = {"alice": (0.0, 1.23), "bob": (3.0, 4.99)}


def clip(start: float, end: float) -> np.ndarray:
    samples, rate = wav_samples(RECORDING)
    assert rate == 16000
    return samples[0, round(start * rate) : round(end * rate)]


def write_wav(path, samples: np.ndarray):
    """A float32 16 kHz mono WAV of `samples`."""
    data = samples.astype("<f4").tobytes()
    fmt = struct.pack("<HHIIHH", 3, 1, 16000, 16000 * 4, 4, 32)
    path.write_bytes(
        b"RIFF" + struct.pack("<I", 4 + 8 + len(fmt) + 8 + len(data)) + b"WAVE"
        + b"fmt " + struct.pack("<I", len(fmt)) + fmt + b"data" + struct.pack("<I", len(data)) + data
    )
    return path


@pytest.fixture(scope="module")
def diarizer() -> nemotron_audio.Model:
    return nemotron_audio.Model.from_pretrained(DIARIZER)


@pytest.fixture(scope="module")
def enrolled(tmp_path_factory):
    """The CLI's profile of the two clips (its file and the slots it printed), and the clips' files."""
    folder = tmp_path_factory.mktemp("speakers")
    files = {name: write_wav(folder / f"{name}.wav", clip(*span)) for name, span in CLIPS.items()}
    profile = folder / "team.safetensors"
    arguments = [a for name, path in files.items() for a in ("--speaker", f"{name}={path}")]
    printed = run_cli("enroll", "--model", DIARIZER, *arguments, "--out", profile)
    return profile, printed, files


def test_enroll_gives_the_clis_profile_and_slots(diarizer, enrolled, tmp_path):
    profile, printed, files = enrolled
    # One clip as pyannote's samples, the other as a path: any audio argument `diarize` takes.
    alice = {"waveform": clip(*CLIPS["alice"]), "sample_rate": 16000}
    speakers = diarizer.enroll({"alice": alice, "bob": files["bob"]})
    assert speakers.names == ["alice", "bob"] and len(speakers) == 2
    assert "".join(f"{name}\tspk{slot}\n" for name, slot in zip(speakers.names, speakers.slots)) == printed
    assert len(set(speakers.slots)) == 2
    saved = tmp_path / "saved.safetensors"
    speakers.save(saved)
    # The CLI's file, byte for byte.
    assert saved.read_bytes() == profile.read_bytes()
    for loaded in [nemotron_audio.Speakers.load(saved), nemotron_audio.Speakers.load(str(profile))]:
        assert loaded.names == ["alice", "bob"] and loaded.slots is None
        assert loaded.to_bytes() == profile.read_bytes()
    from_bytes = nemotron_audio.Speakers.from_bytes(profile.read_bytes())
    assert from_bytes.names == speakers.names and from_bytes.to_bytes() == profile.read_bytes()
    assert repr(speakers) == "Speakers(['alice', 'bob'])"


@pytest.mark.parametrize("format", ["rttm", "json", "csv"])
def test_diarize_with_speakers_is_the_clis(diarizer, enrolled, tmp_path, format):
    profile, _, files = enrolled
    tensors = tmp_path / "out.safetensors"
    expected = run_cli(
        "diarize", "--model", DIARIZER, "--audio", RECORDING, "--speakers", profile, "--out", tensors,
        "--segments", "-", "--format", format,
    )
    loaded = nemotron_audio.Speakers.load(profile)
    enrolled_now = diarizer.enroll({name: path for name, path in files.items()})
    for speakers in [loaded, enrolled_now]:
        result = diarizer.diarize(RECORDING, speakers=speakers)
        assert {"rttm": result.to_rttm, "json": result.to_json, "csv": result.to_csv}[format]() == expected
        assert result.to_safetensors() == tensors.read_bytes()
    names = result.names
    assert sorted(n for n in names if n) == ["alice", "bob"]
    assert [s.name for s in result.segments] == [names[s.speaker] for s in result.segments]
    assert any(s.name for s in result.segments), "no enrolled speaker speaks: the names go untested"
    # Without speakers the same recording has no names, and other probabilities (the clips come first).
    plain = diarizer.diarize(RECORDING)
    assert plain.names == [] and all(s.name is None for s in plain.segments)
    assert bits(plain.probabilities) != bits(result.probabilities)


def test_annotation_labels_the_enrolled_speakers_by_name(diarizer, enrolled):
    pytest.importorskip("pyannote.core")
    result = diarizer.diarize(RECORDING, speakers=nemotron_audio.Speakers.load(enrolled[0]))
    tracks = sorted((s.start, s.end, label) for s, _, label in result.to_annotation().itertracks(yield_label=True))
    assert tracks == sorted((s.start, s.end, s.name or f"spk{s.speaker}") for s in result.segments)
    # The labels are RTTM's speaker fields.
    assert {label for *_, label in tracks} == {line.split()[7] for line in result.to_rttm().splitlines()}
    assert {"alice", "bob"} & {label for *_, label in tracks}


@pytest.mark.parametrize("latency", ["low", "very-low"])
def test_a_stream_with_speakers_is_the_clis(diarizer, enrolled, tmp_path, latency):
    profile, _, _ = enrolled
    rttm = tmp_path / "out.rttm"
    stdout = run_cli(
        "diarize", "--model", DIARIZER, "--stream", "--latency", latency, "--audio", RECORDING,
        "--speakers", profile, "--rttm", rttm,
    )
    samples, _ = wav_samples(RECORDING)
    events = []
    with diarizer.stream(latency=latency, speakers=nemotron_audio.Speakers.load(profile)) as session:
        # The CLI feeds a file in pieces of 0.1 s.
        for start in range(0, samples.shape[1], 1600):
            events += session.push(samples[0, start : start + 1600])
        events += session.finish()
        diarization = session.diarization
        names = session.names
    assert [event.to_json() for event in events] == stdout.splitlines()
    assert [event.name for event in events] == [json.loads(event.json).get("name") for event in events]
    assert any(event.name for event in events), "no enrolled speaker speaks: the names go untested"
    assert names == diarization.names and sorted(n for n in names if n) == ["alice", "bob"]
    assert diarization.to_rttm() == rttm.read_text()


def test_diarize_many_with_speakers_is_diarize_of_each(diarizer, enrolled):
    speakers = nemotron_audio.Speakers.load(enrolled[0])
    audios = [RECORDING, SPEECH, RECORDING.read_bytes()]
    many = diarizer.diarize_many(audios, batch_size=2, speakers=speakers)
    for audio, result in zip(audios, many):
        alone = diarizer.diarize(audio, speakers=speakers)
        assert result.to_rttm() == alone.to_rttm() and result.to_csv() == alone.to_csv()
        assert bits(result.logits) == bits(alone.logits)
        assert result.names == alone.names != []


@pytest.mark.parametrize(
    "clips, exception, words",
    [
        ({"sam": (0.0, 0.5)}, ValueError, "sam"),  # under 1 s
        ({"two words": (0.0, 1.5)}, ValueError, "whitespace"),
        ({"alice": (0.0, 1.23), "alias": (0.0, 1.23)}, ValueError, "slot"),
        ({f"s{i}": (i, i + 1.0) for i in range(9)}, ValueError, "slots"),
        ({}, ValueError, "at least one"),
    ],
)
def test_bad_clips_and_names_are_refused(diarizer, clips, exception, words):
    with pytest.raises(exception) as raised:
        diarizer.enroll({name: clip(*span) for name, span in clips.items()}, sample_rate=16000)
    assert words in str(raised.value)
    assert diarizer.diarize(SHORT).to_rttm()


def test_bad_arguments_and_files_are_refused(diarizer, enrolled, tmp_path):
    with pytest.raises(TypeError, match="dict"):
        diarizer.enroll([("alice", RECORDING)])
    with pytest.raises(TypeError, match="str"):
        diarizer.enroll({1: RECORDING})
    with pytest.raises(ValueError, match="sample_rate"):
        diarizer.enroll({"alice": clip(0.0, 1.23)})
    with pytest.raises(FileNotFoundError, match="no-such.safetensors"):
        nemotron_audio.Speakers.load(tmp_path / "no-such.safetensors")
    with pytest.raises(ValueError, match="audio.wav"):
        nemotron_audio.Speakers.load(RECORDING)
    truncated = tmp_path / "truncated.safetensors"
    truncated.write_bytes(enrolled[0].read_bytes()[:100])
    with pytest.raises(ValueError, match="truncated.safetensors"):
        nemotron_audio.Speakers.load(truncated)
    with pytest.raises(ValueError, match="not a speaker profile"):
        nemotron_audio.Speakers.from_bytes(b"not a profile")
    with pytest.raises(TypeError):
        diarizer.diarize(RECORDING, speakers=str(enrolled[0]))
    with pytest.raises(OSError):
        nemotron_audio.Speakers.load(enrolled[0]).save(tmp_path / "no-such-folder" / "p.safetensors")
