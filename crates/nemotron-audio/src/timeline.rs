//! A PNG of who speaks when: one lane per speaker (speaker 0 on top), a bar per segment, and
//! the encoder-rate speaker probability drawn inside each lane.

use plotters::prelude::*;

use nemotron_towers::diarization::Segment;

/// DejaVu Sans (Bitstream Vera license, `assets/DejaVuSans.LICENSE`): plotters needs a font for
/// labels, and relying on system fonts would make a fresh machine fail.
static FONT: &[u8] = include_bytes!("../assets/DejaVuSans.ttf");

/// Renders the timeline of `seconds` of audio as PNG bytes. `probabilities` is `[frames, speakers]`
/// at `frame_seconds` per frame.
pub fn render(
    segments: &[Segment],
    probabilities: &[f32],
    speakers: usize,
    frame_seconds: f64,
    seconds: f64,
) -> Result<Vec<u8>, String> {
    let (width, height) = (1200u32, 90 + 36 * speakers as u32);
    let mut pixels = vec![0u8; width as usize * height as usize * 3];
    draw(&mut pixels, (width, height), segments, probabilities, speakers, frame_seconds, seconds)
        .map_err(|e| format!("drawing the timeline: {e}"))?;
    let image = image::RgbImage::from_raw(width, height, pixels).ok_or("the timeline buffer has the wrong size")?;
    let mut png = std::io::Cursor::new(Vec::new());
    image.write_to(&mut png, image::ImageFormat::Png).map_err(|e| format!("encoding the timeline: {e}"))?;
    Ok(png.into_inner())
}

/// Draws the timeline into `pixels` (RGB, `size` = (width, height)).
fn draw(
    pixels: &mut [u8],
    size: (u32, u32),
    segments: &[Segment],
    probabilities: &[f32],
    speakers: usize,
    frame_seconds: f64,
    seconds: f64,
) -> Result<(), String> {
    let fail = |e: &dyn std::fmt::Display| e.to_string();
    plotters::style::register_font("sans-serif", FontStyle::Normal, FONT)
        .map_err(|_| "loading the font".to_string())?;
    let root = BitMapBackend::with_buffer(pixels, size).into_drawing_area();
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
                [(seg.start, lane(seg.speaker, 0.0)), (seg.end, lane(seg.speaker, 1.0))],
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
