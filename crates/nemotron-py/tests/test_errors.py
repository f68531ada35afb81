"""Bad inputs raise the documented exception, naming the argument, and the model keeps working afterwards."""

import sys
import threading
import time

import numpy as np
import pytest

import nemotron_audio
from conftest import REFERENCE, SHORT, SPEECH, TESTDATA, bits, wav_samples


@pytest.mark.parametrize(
    "call, exception, words",
    [
        (lambda m: m.diarize(np.array([0.0, np.nan, 0.1], np.float32), sample_rate=16000), ValueError, "audio"),
        (lambda m: m.diarize(np.array([0.0, np.inf], np.float64), sample_rate=16000), ValueError, "audio"),
        (lambda m: m.diarize(np.zeros(0, np.float32), sample_rate=16000), ValueError, "audio"),
        (lambda m: m.diarize(np.zeros((2, 0), np.int16), sample_rate=16000), ValueError, "audio"),
        (lambda m: m.diarize(np.zeros((1, 2, 800), np.float32), sample_rate=16000), ValueError, "audio: shape"),
        (lambda m: m.diarize(np.zeros((16000, 2), np.float32), sample_rate=16000), ValueError, "(channels, samples)"),
        (lambda m: m.diarize(np.zeros(800, np.int32), sample_rate=16000), ValueError, "dtype int32"),
        (lambda m: m.diarize(np.zeros(800, np.float32)), ValueError, "sample_rate"),
        (lambda m: m.diarize(np.zeros(800, np.float32), sample_rate=0), ValueError, "audio"),
        (lambda m: m.diarize(np.zeros(800, np.float32), sample_rate=-16000), ValueError, "sample_rate"),
        (lambda m: m.diarize(np.zeros(800, np.float32), sample_rate=10**7), ValueError, "audio"),
        (lambda m: m.diarize(SHORT, sample_rate=16000), ValueError, "sample_rate"),
        (lambda m: m.diarize(TESTDATA / "no-such-file.wav"), FileNotFoundError, "no-such-file.wav"),
        (lambda m: m.diarize(REFERENCE / "tiny-chunks" / "config.json"), ValueError, "config.json"),
        (lambda m: m.diarize(TESTDATA / "audio" / "signal.opus"), ValueError, "Opus"),
        (lambda m: m.diarize(b"not audio at all"), ValueError, "bytes"),
        (lambda m: m.diarize(12), TypeError, "int"),
        (lambda m: m.diarize(SHORT, threshold=1.5), ValueError, "threshold"),
        (lambda m: m.diarize(SHORT, max_speakers=0), ValueError, "max_speakers"),
        (lambda m: m.diarize(SHORT, threshold=0.4, onset=0.5), ValueError, "threshold"),
        (lambda m: m.diarize(SHORT, postprocessing=TESTDATA / "none.yaml"), FileNotFoundError, "none.yaml"),
        (lambda m: m.diarize(SHORT, postprocessing={"onset": "high"}), ValueError, "onset"),
        (lambda m: m.diarize(SHORT, frobnicate=1), TypeError, "frobnicate"),
        (lambda m: m.stream(latency="instant"), ValueError, "latency"),
        (lambda m: m.stream(max_speakers=2), ValueError, "max_speakers"),
        (lambda m: m.stream().push(np.zeros((2, 100), np.float32)), ValueError, "samples"),
        (lambda m: m.stream().push(np.array([np.nan], np.float32)), ValueError, "audio"),
        (lambda m: m.stream().push(np.zeros(100, np.float32), sample_rate=8000), ValueError, "sample_rate"),
        (lambda m: m.encode(SHORT, sample_rate=16000), ValueError, "sample_rate"),
        (lambda m: m.align(SPEECH, "<spk:0> hello", diarization=m.diarize(SHORT)), ValueError, "diarization"),
    ],
)
def test_bad_input_raises_and_the_model_keeps_working(demo, call, exception, words):
    with pytest.raises(exception) as raised:
        call(demo)
    assert words in str(raised.value)
    assert demo.diarize(SHORT).to_rttm() == demo.diarize(SHORT.read_bytes()).to_rttm().replace(" audio ", " source ")


def test_models_that_cannot_do_a_task():
    with pytest.raises(FileNotFoundError):
        nemotron_audio.Model.from_pretrained(str(TESTDATA / "no-such-model"))
    with pytest.raises(ValueError, match="precision"):
        nemotron_audio.Model.demo(precision="f16")
    with pytest.raises(ValueError, match="revision"):
        nemotron_audio.Model.from_pretrained(REFERENCE / "diar-tiny", revision="main")
    diarizer = nemotron_audio.Model.from_pretrained(REFERENCE / "diar-tiny")
    with pytest.raises(ValueError, match="diarizer alone"):
        diarizer.encode(SHORT)
    assert len(diarizer.diarize(SHORT).probabilities) > 0


def test_a_transcribe_checkpoint_loaded_for_its_diarizer_diarizes_alike(demo):
    # `diarizer_only` loads what the CLI's `diarize` loads: the same diarization, and no ASR tower to encode with.
    alone = nemotron_audio.Model.demo(diarizer_only=True)
    assert bits(alone.diarize(SPEECH).probabilities) == bits(demo.diarize(SPEECH).probabilities)
    for call in (lambda m: m.encode(SPEECH), lambda m: m.align(SPEECH, "hello there")):
        with pytest.raises(ValueError, match="diarizer alone"):
            call(alone)


def test_a_device_lost_in_a_shared_step_raises_gpu_error():
    # Recordings side by side share each step: the device lost in one is the GPU's failure, not their audio's.
    model = nemotron_audio.Model._demo_losing_device_at_step_of(2)
    assert len(model.diarize(SPEECH).probabilities) > 0, "steps of one recording run"
    with pytest.raises(nemotron_audio.GpuError, match="device lost"):
        model.diarize_many([SPEECH, SPEECH.read_bytes()])


def test_ended_streams(demo):
    session = demo.stream()
    session.push(np.zeros(1600, np.float32))
    session.finish()
    with pytest.raises(RuntimeError, match="ended"):
        session.push(np.zeros(1600, np.float32))
    with demo.stream() as closed:
        pass
    with pytest.raises(RuntimeError, match="ended"):
        closed.finish()
    with pytest.raises(RuntimeError, match="finish"):
        demo.stream().segments


def test_annotation_without_pyannote(demo, monkeypatch):
    monkeypatch.setitem(sys.modules, "pyannote.core", None)
    with pytest.raises(ImportError, match="pip install pyannote.core"):
        demo.diarize(SHORT).to_annotation()


def test_annotation(demo):
    core = pytest.importorskip("pyannote.core")
    diarization = demo.diarize(SHORT, threshold=0.2)
    annotation = diarization.to_annotation()
    assert isinstance(annotation, core.Annotation) and annotation.uri == "source"
    tracks = sorted((s.start, s.end, label) for s, _, label in annotation.itertracks(yield_label=True))
    assert tracks == sorted((s.start, s.end, f"spk{s.speaker}") for s in diarization.segments)
    assert len(tracks) == len(diarization)


def test_threads_give_each_file_its_solo_result(demo):
    files = sorted(p for p in (TESTDATA / "audio").iterdir() if p.suffix != ".opus")[:8]
    solo = {str(f): demo.diarize(f) for f in files}
    results, errors = {}, []
    barrier = threading.Barrier(len(files))

    def work(path):
        try:
            barrier.wait()
            results[str(path)] = demo.diarize(path)
        except BaseException as error:  # reported below
            errors.append(error)

    threads = [threading.Thread(target=work, args=(f,)) for f in files]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert len(threads) == 8
    for name, expected in solo.items():
        assert results[name].to_rttm() == expected.to_rttm(), name
        assert bits(results[name].logits) == bits(expected.logits), name


def test_the_gil_is_released_while_the_model_runs(demo):
    # A minute of audio: the run lasts long enough for this thread to be seen running in its middle.
    samples, rate = wav_samples(SPEECH)
    minute = np.tile(samples[0], 10)
    span, started = [], threading.Event()

    def work():
        started.set()
        span.append(time.perf_counter())
        demo.diarize(minute, sample_rate=rate)
        span.append(time.perf_counter())

    worker = threading.Thread(target=work)
    worker.start()
    started.wait()
    moments = []
    while worker.is_alive():
        moments.append(time.perf_counter())
        time.sleep(0.001)
    begin, end = span
    assert end - begin > 0.1, "the run is too short to tell"
    # This thread ran Python code all through the run: the run did not hold the GIL (holding it, the call would have
    # let no other thread in until it returned).
    inside = [t for t in moments if begin + 0.02 < t < end - 0.02]
    assert len(inside) >= 10, (len(inside), end - begin)
