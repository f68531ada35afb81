//! A PNG of who speaks when: one lane per speaker (speaker 0 on top, its label on the left in its colour), a bar per
//! segment, the encoder-rate speaker probability drawn inside each lane with the threshold(s) as grey lines, and
//! the input file's name in the title.

use plotters::prelude::*;

use nemotron_engine::Segment;

/// DejaVu Sans (Bitstream Vera license, `assets/DejaVuSans.LICENSE`): plotters needs a font for
/// labels, and relying on system fonts would make a fresh machine fail.
static FONT: &[u8] = include_bytes!("../assets/DejaVuSans.ttf");

/// Speaker colours: dark and distinct, each with a contrast ratio of at least 4.5 against white (WCAG's level for
/// text), so labels and lines stay legible; more speakers reuse them in order.
const PALETTE: [RGBColor; 8] = [
    RGBColor(0, 90, 181),  // blue
    RGBColor(200, 40, 40), // red
    RGBColor(0, 128, 0),   // green
    RGBColor(128, 0, 128), // purple
    RGBColor(166, 86, 0),  // brown
    RGBColor(0, 120, 120), // teal
    RGBColor(90, 90, 90),  // grey
    RGBColor(176, 0, 96),  // magenta
];

/// Threshold lines: the first darker than the second, so onset and offset can be told apart.
const THRESHOLD_GREYS: [RGBColor; 2] = [RGBColor(110, 110, 110), RGBColor(175, 175, 175)];

/// Width of the picture, pixels.
pub const WIDTH: u32 = 1200;

/// Height of the picture for this many speakers, pixels.
pub fn height(speakers: usize) -> u32 {
    110 + 36 * speakers as u32
}

/// What the timeline shows.
pub struct Timeline<'a> {
    /// The input file's name, for the title.
    pub file_name: &'a str,
    /// The segments.
    pub segments: &'a [Segment],
    /// `[frames, speakers]` probabilities at `frame_seconds` per frame.
    pub probabilities: &'a [f32],
    /// Speaker lanes.
    pub speakers: usize,
    /// Seconds per probability frame.
    pub frame_seconds: f64,
    /// Length of the recording, seconds.
    pub seconds: f64,
    /// Threshold lines `(name, probability)`: one threshold, or onset and offset.
    pub thresholds: &'a [(&'a str, f64)],
}

impl Timeline<'_> {
    /// The PNG file's bytes ([`WIDTH`] × [`height`]).
    pub fn png(&self) -> Result<Vec<u8>, String> {
        let (width, height) = (WIDTH, height(self.speakers));
        let mut pixels = vec![0u8; width as usize * height as usize * 3];
        self.draw(&mut pixels, (width, height)).map_err(|e| format!("drawing the timeline: {e}"))?;
        let image = image::RgbImage::from_raw(width, height, pixels).ok_or("the timeline buffer has the wrong size")?;
        let mut png = std::io::Cursor::new(Vec::new());
        image.write_to(&mut png, image::ImageFormat::Png).map_err(|e| format!("encoding the timeline: {e}"))?;
        Ok(png.into_inner())
    }

    /// Draws the timeline into `pixels` (RGB, `size` = (width, height)).
    fn draw(&self, pixels: &mut [u8], size: (u32, u32)) -> Result<(), String> {
        let fail = |e: &dyn std::fmt::Display| e.to_string();
        plotters::style::register_font("sans-serif", FontStyle::Normal, FONT)
            .map_err(|_| "loading the font".to_string())?;
        let root = BitMapBackend::with_buffer(pixels, size).into_drawing_area();
        root.fill(&WHITE).map_err(|e| fail(&e))?;
        let lines: Vec<String> = self.thresholds.iter().map(|(name, value)| format!("{name} {value}")).collect();
        let caption = format!("who speaks when: {} ({})", self.file_name, lines.join(", "));
        let lanes = self.speakers as f64;
        let mut chart = ChartBuilder::on(&root)
            .caption(caption, ("sans-serif", 18))
            .margin(10)
            .x_label_area_size(35)
            .y_label_area_size(50)
            .build_cartesian_2d(0f64..self.seconds.max(0.01), 0f64..lanes)
            .map_err(|e| fail(&e))?;
        chart.configure_mesh().x_desc("seconds").disable_y_axis().disable_y_mesh().draw().map_err(|e| fail(&e))?;
        let lane = |s: usize, v: f64| lanes - 1.0 - s as f64 + 0.1 + 0.8 * v;
        let color = |s: usize| PALETTE[s % PALETTE.len()];
        chart
            .draw_series(self.segments.iter().map(|seg| {
                let corners = [(seg.start, lane(seg.speaker, 0.0)), (seg.end, lane(seg.speaker, 1.0))];
                Rectangle::new(corners, color(seg.speaker).mix(0.35).filled())
            }))
            .map_err(|e| fail(&e))?;
        let end = self.seconds.max(0.01);
        for (k, (_, value)) in self.thresholds.iter().enumerate() {
            let grey = THRESHOLD_GREYS[k.min(1)];
            for s in 0..self.speakers {
                let points = [(0.0, lane(s, *value)), (end, lane(s, *value))];
                chart.draw_series(LineSeries::new(points, grey.stroke_width(1))).map_err(|e| fail(&e))?;
            }
        }
        let frames = self.probabilities.len().checked_div(self.speakers).unwrap_or(0);
        for s in 0..self.speakers {
            let points = (0..frames)
                .map(|f| (f as f64 * self.frame_seconds, lane(s, self.probabilities[f * self.speakers + s] as f64)));
            chart.draw_series(LineSeries::new(points, color(s).stroke_width(2))).map_err(|e| fail(&e))?;
        }
        // Labels left of the lanes, in the speaker's colour.
        for s in 0..self.speakers {
            let (_, y) = chart.backend_coord(&(0.0, lane(s, 0.5)));
            let style = ("sans-serif", 15).into_font().color(&color(s)).pos(text_anchor_left_middle());
            root.draw(&Text::new(format!("spk{s}"), (12, y), style)).map_err(|e| fail(&e))?;
        }
        root.present().map_err(|e| fail(&e))
    }
}

fn text_anchor_left_middle() -> plotters::style::text_anchor::Pos {
    use plotters::style::text_anchor::{HPos, Pos, VPos};
    Pos::new(HPos::Left, VPos::Center)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// WCAG's contrast ratio of a colour against white.
    fn contrast_with_white(c: RGBColor) -> f64 {
        let linear = |v: u8| {
            let v = v as f64 / 255.0;
            if v <= 0.04045 { v / 12.92 } else { ((v + 0.055) / 1.055).powf(2.4) }
        };
        let luminance = 0.2126 * linear(c.0) + 0.7152 * linear(c.1) + 0.0722 * linear(c.2);
        1.05 / (luminance + 0.05)
    }

    #[test]
    fn speaker_colours_are_legible_on_white() {
        for (k, c) in PALETTE.iter().enumerate() {
            let ratio = contrast_with_white(*c);
            assert!(ratio >= 4.5, "colour {k} {c:?}: contrast {ratio:.2}");
        }
    }

    #[test]
    fn the_png_decodes_at_its_size() {
        let segments = [Segment { speaker: 0, start: 0.1, end: 0.9 }, Segment { speaker: 2, start: 0.5, end: 1.5 }];
        let probabilities: Vec<f32> = (0..60).map(|i| (i % 7) as f32 / 7.0).collect();
        let thresholds = [("onset", 0.6), ("offset", 0.4)];
        let timeline = Timeline {
            file_name: "meeting.wav",
            segments: &segments,
            probabilities: &probabilities,
            speakers: 3,
            frame_seconds: 0.08,
            seconds: 1.6,
            thresholds: &thresholds,
        };
        let png = timeline.png().unwrap();
        let image = image::load_from_memory_with_format(&png, image::ImageFormat::Png).unwrap().to_rgb8();
        assert_eq!(image.dimensions(), (WIDTH, height(3)));
        // Something of speaker 0's colour was drawn (its label and line).
        let blue = PALETTE[0];
        assert!(image.pixels().any(|p| p.0 == [blue.0, blue.1, blue.2]), "no pixel of speaker 0's colour");
    }
}
