"""Every kind of audio argument gives the results of the file it holds: bytes, file objects, numpy arrays of each
dtype and layout, objects with `__array__`, pyannote's and NeMo's dicts; arrays at other rates are resampled as
decoded files are."""

import io
import wave

import numpy as np
import pytest

from conftest import SHORT, STEREO, bits, wav_samples


def same(a, b):
    """Two diarizations are the same: equal segments and equal bits of every tensor."""
    assert a.to_rttm("x") == b.to_rttm("x")
    assert bits(a.logits) == bits(b.logits)
    assert bits(a.probabilities) == bits(b.probabilities)


class TensorLike:
    """A CPU tensor as torch gives one: only `__array__`."""

    def __init__(self, array):
        self.array = array

    def __array__(self, dtype=None, copy=None):
        return self.array


@pytest.fixture(scope="module")
def short(demo):
    return demo.diarize(SHORT)


def test_encoded_files(demo, short):
    data = SHORT.read_bytes()
    same(demo.diarize(data), short)
    same(demo.diarize(bytearray(data)), short)
    same(demo.diarize(io.BytesIO(data)), short)
    with open(SHORT, "rb") as file:
        from_file = demo.diarize(file)
    same(from_file, short)
    assert from_file.uri == "source" and demo.diarize(data).uri == "audio"
    same(demo.diarize({"audio": SHORT}), short)
    same(demo.diarize({"audio_filepath": str(SHORT), "offset": 0, "duration": None}), short)


def test_arrays_of_each_dtype_and_layout(demo, short):
    pcm, rate = wav_samples(SHORT)  # int16, (1, frames)
    mono = pcm[0]
    scaled = mono.astype(np.float32) / 32768
    for array in [
        mono,
        pcm,
        scaled,
        scaled.astype(np.float64),
        np.asfortranarray(pcm),
        np.repeat(mono, 2)[::2],  # a strided view
        np.stack([mono, mono]),  # two equal channels mix to the same samples
        np.stack([mono, mono]).T.copy().T,  # (channels, samples), column-major
        np.stack([scaled, scaled]),  # float32 (channels, samples)
        np.asfortranarray(np.stack([scaled, scaled]).astype(np.float64)),  # float64 (channels, samples), column-major
        np.repeat(scaled.astype(np.float64), 3)[::3],  # a strided float64 view
    ]:
        same(demo.diarize(array, sample_rate=rate), short)
    same(demo.diarize(TensorLike(scaled), sample_rate=rate), short)
    same(demo.diarize({"waveform": pcm, "sample_rate": rate}), short)
    same(demo.diarize(mono, rate), short)


def test_stereo_and_resampled_arrays(demo, tmp_path):
    pcm, rate = wav_samples(STEREO)
    same(demo.diarize(pcm, sample_rate=rate), demo.diarize(STEREO))
    # The same samples declared at 22.05 kHz are resampled to 16 kHz as a 22.05 kHz file is.
    path = tmp_path / "resampled.wav"
    with wave.open(str(path), "wb") as file:
        file.setnchannels(2), file.setsampwidth(2), file.setframerate(22050)
        file.writeframes(pcm.T.astype("<i2").tobytes())
    from_file = demo.diarize(path)
    same(demo.diarize(pcm, sample_rate=22050), from_file)
    assert abs(from_file.duration - pcm.shape[1] / 22050) < 1e-3


def test_diarize_many_keeps_the_order(demo, short):
    stereo = demo.diarize(STEREO)
    results = demo.diarize_many([STEREO, SHORT, STEREO.read_bytes()])
    assert len(results) == 3
    same(results[0], stereo), same(results[1], short), same(results[2], stereo)
    one_by_one = demo.diarize_many([SHORT, STEREO, SHORT], batch_size=1)
    same(one_by_one[0], short), same(one_by_one[1], stereo), same(one_by_one[2], short)
    with pytest.raises(ValueError, match="batch_size: 0: at least 1"):
        demo.diarize_many([SHORT], batch_size=0)
