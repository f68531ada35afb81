//! `nemotron-postprocess`: what follows NVIDIA Nemotron 3.5 Transcribe's audio towers and needs no GPU — speaker
//! segments from the diarizer's outputs, NeMo's post-processing, RTTM / JSON / CSV, the DER/JER scorer, and the
//! speaker-attributed forced alignment of a transcript with its subtitles. Plain Rust on plain slices: anyone who
//! only scores RTTM files, or who has the logits from elsewhere, can use it without a GPU stack.
//!
//! - [`diarization`]: segments from speaker activity (upstream's threshold rule, NeMo's post-processing), RTTM /
//!   JSON / CSV, reading RTTM and UEM files, and the DER/JER scorer that matches pyannote.metrics.
//! - [`alignment`]: the word alignment on the word-timestamp head's logits (the head itself runs on the GPU, in
//!   `nemotron-towers`), its tokenizer, and SRT / WebVTT subtitles.
//! - [`math`]: the sigmoid and scipy's assignment solver the two share; [`time`]: the model's 10 ms grid.
//!
//! Scoring a hypothesis against a reference, as `pyannote.metrics` would:
//!
//! ```
//! use nemotron_postprocess::diarization::rttm::parse_rttm;
//! use nemotron_postprocess::diarization::scoring::{ScoreOptions, score};
//!
//! # fn main() -> Result<(), nemotron_postprocess::diarization::DiarizationError> {
//! let reference = parse_rttm(
//!     "SPEAKER call 1 0.00 4.00 <NA> <NA> alice <NA> <NA>\n\
//!      SPEAKER call 1 4.00 4.00 <NA> <NA> bob <NA> <NA>\n",
//!     "reference.rttm",
//! )?;
//! // The hypothesis names its speakers otherwise and hands the turn over one second late.
//! let hypothesis = parse_rttm(
//!     "SPEAKER call 1 0.00 5.00 <NA> <NA> spk0 <NA> <NA>\n\
//!      SPEAKER call 1 5.00 3.00 <NA> <NA> spk1 <NA> <NA>\n",
//!     "hypothesis.rttm",
//! )?;
//! let result = score(&reference, &hypothesis, None, &ScoreOptions::default())?;
//! // One of the eight seconds of speech goes to the wrong speaker.
//! assert_eq!(result.total.confusion, 1.0);
//! assert_eq!(result.total.der(), 1.0 / 8.0);
//! assert_eq!(result.files[0].mapping, [("spk0".into(), "alice".into()), ("spk1".into(), "bob".into())]);
//! # Ok(())
//! # }
//! ```
//!
//! And segments from the diarizer's 10 ms logits (`[frames, speakers]`), written as RTTM:
//!
//! ```
//! use nemotron_postprocess::diarization::formats::to_rttm;
//! use nemotron_postprocess::diarization::threshold_segments;
//!
//! // Two speakers over five frames: the first speaks in frames 1–2, the second in frame 4.
//! let logits: [f32; 10] = [-4.0, -4.0, 3.0, -4.0, 3.0, -4.0, -4.0, -4.0, -4.0, 2.0];
//! let segments = threshold_segments(&logits, 2, 5, 0.5);
//! assert_eq!(
//!     to_rttm("call", &segments),
//!     "SPEAKER call 1 0.01 0.02 <NA> <NA> spk0 <NA> <NA>\n\
//!      SPEAKER call 1 0.04 0.01 <NA> <NA> spk1 <NA> <NA>\n"
//! );
//! ```

#![warn(missing_docs)]

pub mod alignment;
pub mod diarization;
pub mod math;
pub mod samples;
pub mod time;
