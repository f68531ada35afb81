"""Nemotron 3.5 Transcribe's audio perception on any GPU (wgpu): speech features, who spoke when, word timestamps.

The results are the ``nemotron-audio`` command line's, from the same engine::

    import nemotron_audio

    model = nemotron_audio.Model.demo()            # or Model.from_pretrained("nvidia/Nemotron-3-Diarization")
    diarization = model.diarize("meeting.wav")
    for start, end, speaker in diarization.segments:
        print(f"{start:.2f}-{end:.2f} spk{speaker}")
    open("meeting.rttm", "w").write(diarization.to_rttm())
"""

from ._native import (
    Alignment,
    Diarization,
    GpuError,
    InternalError,
    Model,
    NemotronError,
    Segment,
    SegmentEvent,
    Speakers,
    StreamSession,
    Word,
    __version__,
    read_manifest,
)

__all__ = [
    "Alignment",
    "Diarization",
    "GpuError",
    "InternalError",
    "Model",
    "NemotronError",
    "Segment",
    "SegmentEvent",
    "Speakers",
    "StreamSession",
    "Word",
    "__version__",
    "read_manifest",
]
