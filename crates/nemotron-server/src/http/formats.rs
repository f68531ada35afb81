//! The `response_format` of each offline route: its names on the wire (serde), the engine's writer and the
//! response's `Content-Type`. The first variant is the route's default.

use nemotron_engine::SegmentFormat;
use serde::Deserialize;

/// `response_format` of `POST /v1/audio/diarizations`: `json` (default), `rttm` or `csv`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DiarizationFormat {
    /// upstream's `{"Start","End","Speaker"}` list.
    #[default]
    Json,
    /// NIST RTTM.
    Rttm,
    /// `start,end,duration,speaker`.
    Csv,
}

impl DiarizationFormat {
    /// The engine's segment format.
    pub fn segments(self) -> SegmentFormat {
        match self {
            DiarizationFormat::Json => SegmentFormat::Json,
            DiarizationFormat::Rttm => SegmentFormat::Rttm,
            DiarizationFormat::Csv => SegmentFormat::Csv,
        }
    }

    /// The response's `Content-Type`.
    pub fn content_type(self) -> &'static str {
        match self {
            DiarizationFormat::Json => "application/json",
            DiarizationFormat::Csv => "text/csv; charset=utf-8",
            DiarizationFormat::Rttm => "text/plain; charset=utf-8",
        }
    }
}

/// `response_format` of `POST /v1/audio/alignments`: `json` (default), `srt` or `vtt`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AlignmentFormat {
    /// `align --out`'s JSON.
    #[default]
    Json,
    /// SubRip subtitles.
    Srt,
    /// WebVTT subtitles.
    Vtt,
}

impl AlignmentFormat {
    /// The response's `Content-Type`.
    pub fn content_type(self) -> &'static str {
        match self {
            AlignmentFormat::Json => "application/json",
            AlignmentFormat::Srt => "application/x-subrip; charset=utf-8",
            AlignmentFormat::Vtt => "text/vtt; charset=utf-8",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::names::parse_name;

    #[test]
    fn formats_have_their_wire_names() {
        assert_eq!(parse_name("rttm"), Ok(DiarizationFormat::Rttm));
        assert_eq!(parse_name("csv").map(DiarizationFormat::segments), Ok(SegmentFormat::Csv));
        assert_eq!(parse_name("vtt"), Ok(AlignmentFormat::Vtt));
        let wrong = "unknown variant `srt`, expected one of `json`, `rttm`, `csv`";
        assert_eq!(parse_name::<DiarizationFormat>("srt"), Err(wrong.into()));
        let wrong = "unknown variant `JSON`, expected one of `json`, `srt`, `vtt`";
        assert_eq!(parse_name::<AlignmentFormat>("JSON"), Err(wrong.into()));
    }
}
