//! Speaker segments from 10 ms logits, and the NIST RTTM lines that carry them.

/// One speaker's continuous activity.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Segment {
    /// Speaker slot in arrival order (logit column; `spk<k>` in RTTM).
    pub speaker: usize,
    /// Start and duration in seconds.
    pub start: f64,
    /// Length of the activity in seconds (whole 10 ms frames when computed from logits).
    pub duration: f64,
}

/// Duration of one logit frame (the mel hop).
pub const FRAME_SECONDS: f64 = 0.01;

/// Segments where `sigmoid(logit) > threshold`, over the first `valid_frames` frames of
/// `logits [frames, speakers]`, ordered by start then speaker.
pub fn segments(logits: &[f32], speakers: usize, valid_frames: usize, threshold: f64) -> Vec<Segment> {
    let frames = (logits.len() / speakers.max(1)).min(valid_frames);
    let mut out = Vec::new();
    for s in 0..speakers {
        let mut start = None;
        for f in 0..=frames {
            let active = f < frames && crate::sortformer::sigmoid(logits[f * speakers + s] as f64) > threshold;
            match (active, start) {
                (true, None) => start = Some(f),
                (false, Some(f0)) => {
                    out.push(Segment {
                        speaker: s,
                        start: f0 as f64 * FRAME_SECONDS,
                        duration: (f - f0) as f64 * FRAME_SECONDS,
                    });
                    start = None;
                }
                _ => {}
            }
        }
    }
    out.sort_by(|a, b| a.start.total_cmp(&b.start).then(a.speaker.cmp(&b.speaker)));
    out
}

/// `SPEAKER <file> 1 <start> <dur> <NA> <NA> spk<k> <NA> <NA>` lines.
pub fn to_rttm(file_id: &str, segments: &[Segment]) -> String {
    let id: String = file_id.chars().map(|c| if c.is_whitespace() { '_' } else { c }).collect();
    segments
        .iter()
        .map(|s| format!("SPEAKER {id} 1 {:.2} {:.2} <NA> <NA> spk{} <NA> <NA>\n", s.start, s.duration, s.speaker))
        .collect()
}

/// Parses RTTM `SPEAKER` lines back into segments (speaker names `spk<k>`).
pub fn parse_rttm(text: &str) -> Result<Vec<Segment>, String> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .enumerate()
        .map(|(i, line)| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let bad = || format!("RTTM line {}: `{line}`", i + 1);
            if fields.len() != 10 || fields[0] != "SPEAKER" {
                return Err(bad());
            }
            let speaker = fields[7].strip_prefix("spk").and_then(|k| k.parse().ok()).ok_or_else(bad)?;
            let start = fields[3].parse().map_err(|_| bad())?;
            let duration = fields[4].parse().map_err(|_| bad())?;
            Ok(Segment { speaker, start, duration })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_follow_the_threshold_and_stop_at_valid_frames() {
        // 2 speakers, 6 frames; speaker 0 on in frames 1–2, speaker 1 on in 3–5 (5 is padding).
        let on = 5.0f32;
        let off = -5.0f32;
        let logits = [off, off, on, off, on, off, off, on, off, on, off, on];
        let segs = segments(&logits, 2, 5, 0.5);
        assert_eq!(segs.len(), 2);
        assert_eq!((segs[0].speaker, segs[1].speaker), (0, 1));
        assert!((segs[0].start - 0.01).abs() < 1e-12 && (segs[0].duration - 0.02).abs() < 1e-12);
        assert!((segs[1].start - 0.03).abs() < 1e-12 && (segs[1].duration - 0.02).abs() < 1e-12);
        let text = to_rttm("my file", &segs);
        assert!(text.starts_with("SPEAKER my_file 1 0.01 0.02 <NA> <NA> spk0 <NA> <NA>\n"));
        let back = parse_rttm(&text).unwrap();
        assert_eq!(back.len(), 2);
        assert_eq!(back[1].speaker, 1);
    }
}
