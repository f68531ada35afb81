"""Every method's outputs equal the CLI's for the same input and settings: the same bits for tensors, the same
bytes for RTTM, JSON, CSV, SRT and WebVTT."""

import json

import numpy as np
import pytest

import nemotron_audio
from conftest import REFERENCE, SPEECH, TESTDATA, bits, run_cli, safetensors, wav_samples

YAML = TESTDATA / "postprocessing" / "yaml" / "parameters.yaml"


@pytest.mark.parametrize("word_timestamps", [False, True])
def test_encode(demo, tmp_path, word_timestamps):
    out = tmp_path / "out.safetensors"
    run_cli("encode", "--demo", "--audio", SPEECH, "--out", out, *(["--word-timestamps"] if word_timestamps else []))
    expected = safetensors(out)
    same_tensors(demo.encode(str(SPEECH), word_timestamps=word_timestamps), expected)


def same_tensors(tensors, expected):
    """`encode`'s arrays are the CLI's file's tensors: the same names, shapes and bits (the file stores them sorted by
    name, the dict in the order `encode` documents)."""
    assert sorted(tensors) == sorted(expected)
    for name, array in tensors.items():
        dtype, shape, raw = expected[name]
        assert (dtype, list(array.shape)) == ("F32", shape), name
        assert bits(array) == raw, name


@pytest.mark.parametrize(
    "flags, settings",
    [
        ([], {}),
        (["--threshold", "0.3", "--max-speakers", "2"], {"threshold": 0.3, "max_speakers": 2}),
        (
            ["--postprocessing", YAML, "--min-duration-off", "0.5"],
            {"postprocessing": str(YAML), "min_duration_off": 0.5},
        ),
    ],
)
def test_diarize(demo, tmp_path, flags, settings):
    result = demo.diarize(SPEECH, **settings)
    for format, text in [("rttm", result.to_rttm()), ("json", result.to_json()), ("csv", result.to_csv())]:
        out = tmp_path / f"segments.{format}"
        tensors = tmp_path / f"{format}.safetensors"
        run_cli("diarize", "--demo", "--audio", SPEECH, "--segments", out, "--out", tensors, *flags)
        assert text == out.read_text(), format
        assert result.to_safetensors() == tensors.read_bytes()
    expected = safetensors(tensors)
    assert bits(result.logits) == expected["speaker_logits"][2]
    assert bits(result.probabilities) == expected["speaker_probabilities"][2]
    assert result.uri == "audio" and result.to_rttm("talk") == result.to_rttm().replace(" audio ", " talk ")


def test_postprocessing_dict_is_the_yaml_file(demo):
    parameters = {"onset": 0.641, "offset": 0.561, "pad_onset": 0.229, "pad_offset": 0.079}
    parameters.update(min_duration_on=0.511, min_duration_off=0.296)
    from_dict = demo.diarize(SPEECH, postprocessing={"parameters": parameters})
    assert from_dict.to_rttm() == demo.diarize(SPEECH, postprocessing=YAML).to_rttm()
    assert from_dict.to_rttm() != demo.diarize(SPEECH).to_rttm()


@pytest.mark.parametrize("folder", ["tiny-chunks", "diar-tiny"])
def test_folder_models(tmp_path, folder):
    model = nemotron_audio.Model.from_pretrained(str(REFERENCE / folder))
    audio = REFERENCE / folder / "audio.wav"
    rttm, tensors = tmp_path / "out.rttm", tmp_path / "out.safetensors"
    run_cli("diarize", "--model", REFERENCE / folder, "--audio", audio, "--rttm", rttm, "--out", tensors)
    result = model.diarize(audio)
    assert result.to_rttm() == rttm.read_text()
    assert result.to_safetensors() == tensors.read_bytes()
    assert not model.is_demo and model.description == str(REFERENCE / folder)
    if folder == "tiny-chunks":  # a Transcribe checkpoint: encode too
        run_cli("encode", "--model", REFERENCE / folder, "--audio", audio, "--out", tensors)
        same_tensors(model.encode(audio), safetensors(tensors))


def test_align(demo, tmp_path):
    transcript = "<spk:0> the quick brown fox <spk:1> she sells sea shells"
    out, srt, vtt = tmp_path / "words.json", tmp_path / "subs.srt", tmp_path / "subs.vtt"
    run_cli("align", "--demo", "--audio", SPEECH, "--transcript", transcript, "--out", out, "--srt", srt, "--vtt", vtt)
    alignment = demo.align(SPEECH, transcript)
    assert alignment.to_json() == out.read_text()
    assert alignment.to_srt() == srt.read_text()
    assert alignment.to_vtt() == vtt.read_text()
    chunks = json.loads(out.read_text())["chunks"]
    assert [(w.text, w.start, w.end, w.speaker) for w in alignment.words] == [
        (c["text"], c["timestamp"][0], c["timestamp"][1], c["speaker"]) for c in chunks
    ]


def test_align_with_a_diarization(demo, tmp_path):
    transcript = "<spk:0> the quick brown fox <spk:1> she sells sea shells"
    out, segments = tmp_path / "words.json", tmp_path / "segments.json"
    run_cli("align", "--demo", "--audio", SPEECH, "--transcript", transcript, "--out", out)
    # The model's own diarization of the recording gives the CLI's alignment.
    assert demo.align(SPEECH, transcript, diarization=demo.diarize(SPEECH)).to_json() == out.read_text()
    # Another diarizer's: the words are placed on its speakers, and the result's diarization is that diarizer's
    # segments as the CLI writes them (the 10 ms threshold rule).
    diarizer = REFERENCE / "diar-tiny"
    other = nemotron_audio.Model.from_pretrained(diarizer).diarize(SPEECH)
    aligned = json.loads(demo.align(SPEECH, transcript, diarization=other).to_json())
    run_cli("diarize", "--model", diarizer, "--audio", SPEECH, "--segments", segments)
    expected = [(s["Start"], s["End"], s["Speaker"]) for s in json.loads(segments.read_text())]
    got = [(round(s["timestamp"][0], 2), round(s["timestamp"][1], 2), s["speaker"]) for s in aligned["diarization"]]
    assert sorted(got) == sorted(expected)
    assert aligned["diarization"] != json.loads(out.read_text())["diarization"]


@pytest.mark.parametrize("latency, settings, flags", [("very-low", {}, []), ("low", {"onset": 0.4}, ["--onset", "0.4"])])
def test_stream(demo, tmp_path, latency, settings, flags):
    rttm, tensors = tmp_path / "out.rttm", tmp_path / "out.safetensors"
    stdout = run_cli(
        "diarize", "--demo", "--stream", "--latency", latency, "--audio", SPEECH, "--rttm", rttm, "--out", tensors, *flags
    )
    samples, _ = wav_samples(SPEECH)
    lines = []
    with demo.stream(latency=latency, **settings) as session:
        # The CLI feeds a file in pieces of 0.1 s.
        for start in range(0, samples.shape[1], 1600):
            lines += [event.to_json() for event in session.push(samples[0, start : start + 1600])]
        lines += [event.to_json() for event in session.finish()]
        segments = session.segments
        diarization = session.diarization
    assert lines == stdout.splitlines()
    closed = [(e["start"], e["end"], e["speaker"]) for e in map(json.loads, lines) if e["event"] == "end"]
    assert sorted(closed) == sorted((round(s.start, 2), round(s.end, 2), s.speaker) for s in segments)
    assert diarization.to_rttm() == rttm.read_text()
    assert diarization.to_safetensors() == tensors.read_bytes()
    assert bits(session.probabilities) == bits(diarization.probabilities)
