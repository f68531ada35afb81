//! A PNG of who speaks when: one lane per speaker (speaker 0 on top), a bar per segment, and
//! the encoder-rate speaker probability drawn inside each lane.

use std::path::Path;

use plotters::prelude::*;

use crate::rttm::Segment;

/// DejaVu Sans (Bitstream Vera license, `assets/DejaVuSans.LICENSE`): plotters needs a font for
/// labels, and relying on system fonts would make a fresh machine fail.
static FONT: &[u8] = include_bytes!("../assets/DejaVuSans.ttf");

/// Renders the timeline of `seconds` of audio to `path`. `probabilities` is `[frames, speakers]`
/// at `frame_seconds` per frame.
pub fn render(
    path: &Path,
    segments: &[Segment],
    probabilities: &[f32],
    speakers: usize,
    frame_seconds: f64,
    seconds: f64,
) -> Result<(), String> {
    let fail = |e: &dyn std::fmt::Display| format!("drawing {}: {e}", path.display());
    plotters::style::register_font("sans-serif", FontStyle::Normal, FONT)
        .map_err(|_| "loading the font".to_string())?;
    let height = 90 + 36 * speakers as u32;
    let root = BitMapBackend::new(path, (1200, height)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| fail(&e))?;
    let lanes = speakers as f64;
    let mut chart = ChartBuilder::on(&root)
        .caption("who speaks when", ("sans-serif", 20))
        .margin(10)
        .x_label_area_size(35)
        .y_label_area_size(10)
        .build_cartesian_2d(0f64..seconds.max(0.01), 0f64..lanes)
        .map_err(|e| fail(&e))?;
    chart.configure_mesh().x_desc("seconds").disable_y_axis().disable_y_mesh().draw().map_err(|e| fail(&e))?;
    let lane = |s: usize, v: f64| lanes - 1.0 - s as f64 + 0.1 + 0.8 * v;
    chart
        .draw_series(segments.iter().map(|seg| {
            let color = Palette99::pick(seg.speaker).mix(0.55).filled();
            Rectangle::new(
                [(seg.start, lane(seg.speaker, 0.0)), (seg.start + seg.duration, lane(seg.speaker, 1.0))],
                color,
            )
        }))
        .map_err(|e| fail(&e))?;
    chart
        .draw_series((0..speakers).map(|s| Text::new(format!("spk{s}"), (0.0, lane(s, 0.7)), ("sans-serif", 13))))
        .map_err(|e| fail(&e))?;
    let frames = probabilities.len() / speakers.max(1);
    for s in 0..speakers {
        let points = (0..frames).map(|f| (f as f64 * frame_seconds, lane(s, probabilities[f * speakers + s] as f64)));
        chart.draw_series(LineSeries::new(points, Palette99::pick(s).stroke_width(1))).map_err(|e| fail(&e))?;
    }
    root.present().map_err(|e| fail(&e))
}
