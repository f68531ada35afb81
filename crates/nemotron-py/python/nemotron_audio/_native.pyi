"""Type stubs of the Rust extension ``nemotron_audio._native`` (see the package's README)."""

import os
from types import TracebackType
from typing import Any, BinaryIO, Dict, Iterable, Iterator, List, Literal, Mapping, Optional, Protocol, Tuple, Type, Union

import numpy as np
import numpy.typing as npt
from typing_extensions import TypedDict, Unpack

__version__: str

class _ArrayLike(Protocol):
    def __array__(self) -> Any: ...

AudioInput = Union[
    str,
    "os.PathLike[str]",
    bytes,
    bytearray,
    BinaryIO,
    "npt.NDArray[np.float32]",
    "npt.NDArray[np.float64]",
    "npt.NDArray[np.int16]",
    _ArrayLike,
    Mapping[str, Any],
]
"""A path; an encoded file as bytes or a binary file object; 1-D or (channels, samples) float32/float64/int16
samples (with ``sample_rate``); anything with ``__array__``; ``{"waveform": array, "sample_rate": rate}``,
``{"audio": path}`` (pyannote) or a NeMo manifest entry ``{"audio_filepath": path, "offset": s, "duration": s}``."""

Latency = Literal["low", "very-low", "ultra-low"]
PostProcessing = Union[str, "os.PathLike[str]", Mapping[str, Any]]

class StreamSegmentOptions(TypedDict, total=False):
    """The keyword arguments of ``Model.stream``: the CLI's segment flags, by their names (``None``: not set)."""

    threshold: Optional[float]
    onset: Optional[float]
    offset: Optional[float]
    pad_onset: Optional[float]
    pad_offset: Optional[float]
    min_duration_on: Optional[float]
    min_duration_off: Optional[float]
    postprocessing: Optional[PostProcessing]

class SegmentOptions(StreamSegmentOptions, total=False):
    """The keyword arguments of ``Model.diarize`` and ``Model.diarize_many``: ``stream``'s and ``max_speakers``
    (known only at the end of a recording)."""

    max_speakers: Optional[int]

class NemotronError(RuntimeError):
    """A run failed for a reason other than its arguments (base of GpuError and InternalError)."""

class GpuError(NemotronError):
    """The GPU refused or failed."""

class InternalError(NemotronError):
    """A bug: an invariant of the library broke."""

class Segment:
    """One speaker's turn, seconds [start, end); unpacks as ``start, end, speaker``. ``name``: the enrolled
    speaker's (``speakers=``), ``None`` for a slot no one enrolled."""

    start: float
    end: float
    speaker: int
    name: Optional[str]
    def __init__(self, start: float, end: float, speaker: int, name: Optional[str] = None) -> None: ...
    @property
    def duration(self) -> float: ...
    def __iter__(self) -> Iterator[Union[float, int]]: ...

class Diarization:
    """Who spoke when in one recording."""

    @property
    def segments(self) -> List[Segment]: ...
    @property
    def probabilities(self) -> "npt.NDArray[np.float32]":
        """[T, speakers] speaker probabilities at the encoder rate (80 ms rows)."""
    @property
    def logits(self) -> "npt.NDArray[np.float32]":
        """[F, speakers] speaker logits at 10 ms."""
    @property
    def speakers(self) -> List[int]: ...
    @property
    def names(self) -> List[Optional[str]]:
        """Each slot's enrolled name (``None`` for the others); empty without ``speakers=``."""
    @property
    def duration(self) -> float: ...
    @property
    def uri(self) -> str: ...
    def to_rttm(self, uri: Optional[str] = None) -> str: ...
    def to_json(self) -> str: ...
    def to_csv(self) -> str: ...
    def to_safetensors(self) -> bytes: ...
    def to_annotation(self, uri: Optional[str] = None) -> Any:
        """A ``pyannote.core.Annotation``; raises ImportError without pyannote.core."""
    def __len__(self) -> int: ...

class Word:
    text: str
    start: float
    end: float
    speaker: Optional[int]

class Alignment:
    @property
    def words(self) -> List[Word]: ...
    @property
    def failed_speakers(self) -> List[Optional[int]]: ...
    def to_json(self) -> str: ...
    def to_srt(self) -> str: ...
    def to_vtt(self) -> str: ...
    def __len__(self) -> int: ...

class Speakers:
    """Named voices (a clip of each enrolled speaker, in enrollment order): ``Model.enroll`` makes one; the file
    ``save`` writes is ``nemotron-audio enroll --out``'s, which ``load`` and ``diarize --speakers`` read."""

    @staticmethod
    def load(path: Union[str, "os.PathLike[str]"]) -> "Speakers": ...
    @staticmethod
    def from_bytes(data: bytes) -> "Speakers": ...
    def save(self, path: Union[str, "os.PathLike[str]"]) -> None: ...
    def to_bytes(self) -> bytes: ...
    @property
    def names(self) -> List[str]:
        """The names, in enrollment order."""
    @property
    def slots(self) -> Optional[List[int]]:
        """Each name's slot in the enrolling model's run (as ``enroll`` prints them); ``None`` when loaded."""
    def __len__(self) -> int: ...

class SegmentEvent:
    kind: Literal["start", "end"]
    speaker: int
    name: Optional[str]
    time: float
    start: float
    end: Optional[float]
    json: str
    def to_json(self) -> str: ...

class StreamSession:
    def push(
        self, samples: Union["npt.NDArray[Any]", Iterable[float], _ArrayLike], sample_rate: int = 16000
    ) -> List[SegmentEvent]: ...
    def finish(self) -> List[SegmentEvent]: ...
    def close(self) -> None: ...
    @property
    def diarization(self) -> Diarization:
        """The whole stream's diarization (after ``finish()``)."""
    @property
    def segments(self) -> List[Segment]: ...
    @property
    def probabilities(self) -> "npt.NDArray[np.float32]": ...
    @property
    def names(self) -> List[Optional[str]]:
        """Each slot's enrolled name; empty without ``speakers=`` and until the enrolled clips are final."""
    @property
    def processed_seconds(self) -> float: ...
    def __enter__(self) -> "StreamSession": ...
    def __exit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        traceback: Optional[TracebackType],
    ) -> bool: ...

class Model:
    @staticmethod
    def from_pretrained(
        id_or_path: Union[str, "os.PathLike[str]"],
        *,
        revision: Optional[str] = None,
        precision: Optional[Literal["auto", "f32", "fast"]] = None,
        cache_dir: Optional[Union[str, "os.PathLike[str]"]] = None,
        offline: bool = False,
        diarizer_only: bool = False,
    ) -> "Model": ...
    @staticmethod
    def demo(
        *, precision: Optional[Literal["auto", "f32", "fast"]] = None, diarizer_only: bool = False
    ) -> "Model": ...
    @property
    def description(self) -> str: ...
    @property
    def is_demo(self) -> bool: ...
    def encode(
        self, audio: AudioInput, sample_rate: Optional[int] = None, word_timestamps: bool = False
    ) -> Dict[str, "npt.NDArray[np.float32]"]: ...
    def diarize(
        self,
        audio: AudioInput,
        sample_rate: Optional[int] = None,
        *,
        speakers: Optional[Speakers] = None,
        **segment_settings: Unpack[SegmentOptions],
    ) -> Diarization: ...
    def enroll(self, speakers: Mapping[str, AudioInput], sample_rate: Optional[int] = None) -> Speakers:
        """``{name: clip}`` in enrollment order: each clip one speaker alone, at least 1 s, in a slot of its own."""
    def diarize_many(
        self,
        audios: Iterable[AudioInput],
        sample_rate: Optional[int] = None,
        batch_size: Optional[int] = None,
        *,
        speakers: Optional[Speakers] = None,
        **segment_settings: Unpack[SegmentOptions],
    ) -> List[Diarization]: ...
    def align(
        self,
        audio: AudioInput,
        transcript: str,
        *,
        sample_rate: Optional[int] = None,
        language: Optional[str] = None,
        diarization: Optional[Diarization] = None,
    ) -> Alignment: ...
    def stream(
        self,
        latency: Latency = "low",
        *,
        speakers: Optional[Speakers] = None,
        **segment_settings: Unpack[StreamSegmentOptions],
    ) -> StreamSession: ...

def read_manifest(path: Union[str, "os.PathLike[str]"]) -> List[Dict[str, Any]]: ...
