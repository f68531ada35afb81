//! Property tests of the parsers of audio input (audio files, NeMo manifests, raw PCM): whatever the bytes, each
//! answers with a value or a typed error, never a panic; where the input is well formed, the value is the one
//! described. The fuzz targets in `fuzz/` explore the same parsers by coverage; these run in the normal suite. The
//! model-file parsers have theirs in `crates/nemotron-towers/tests/model_file_properties.rs`.

use std::io::Cursor;
use std::path::Path;

use hound::{SampleFormat, WavSpec, WavWriter};
use nemotron_engine::io::audio::{
    AudioError, AudioOptions, MAX_SAMPLE_RATE, MIN_SAMPLE_RATE, MIN_SAMPLES, SAMPLE_RATE, SampleError, read_audio_bytes,
};
use nemotron_engine::io::manifest::{ManifestError, parse_manifest};
use nemotron_engine::io::raw_pcm::{RawDecoder, RawFormat};
use proptest::prelude::*;
use serde_json::{Value, json};

fn config(cases: u32) -> ProptestConfig {
    ProptestConfig { cases, ..ProptestConfig::default() }
}

// ---- WAV ----

#[derive(Clone, Copy, Debug)]
enum WavFormat {
    Int(u16),
    Float,
}

fn wav_format() -> impl Strategy<Value = WavFormat> {
    prop_oneof![prop::sample::select(&[8u16, 16, 24, 32][..]).prop_map(WavFormat::Int), Just(WavFormat::Float)]
}

fn sample_rate() -> impl Strategy<Value = u32> {
    prop_oneof![
        3 => prop::sample::select(&[8_000u32, 11_025, 16_000, 22_050, 44_100, 48_000][..]),
        2 => MIN_SAMPLE_RATE..=96_000,
        1 => any::<u32>(),
        1 => 0u32..MIN_SAMPLE_RATE,
    ]
}

/// A WAV file written by hound: `frames` frames of `channels` channels, samples from `seed`. hound's
/// writer overflows on rates it cannot describe, so it writes 16 kHz and the rate fields are patched
/// after (`None` when the byte rate does not fit the header's 32 bits).
fn wav_bytes(channels: u16, rate: u32, format: WavFormat, frames: usize, seed: u32) -> Option<Vec<u8>> {
    let (bits, sample_format) = match format {
        WavFormat::Int(bits) => (bits, SampleFormat::Int),
        WavFormat::Float => (32, SampleFormat::Float),
    };
    let spec = WavSpec { channels, sample_rate: SAMPLE_RATE, bits_per_sample: bits, sample_format };
    let mut bytes = Vec::new();
    let mut writer = WavWriter::new(Cursor::new(&mut bytes), spec).expect("WAV writer");
    let mut state = seed | 1;
    for _ in 0..frames * usize::from(channels) {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        let written = match format {
            WavFormat::Int(8) => writer.write_sample(state as i8),
            WavFormat::Int(16) => writer.write_sample(state as i16),
            WavFormat::Int(24) => writer.write_sample((state as i32) >> 8),
            WavFormat::Int(_) => writer.write_sample(state as i32),
            WavFormat::Float => writer.write_sample(state as f32 / u32::MAX as f32 * 2.0 - 1.0),
        };
        written.expect("write sample");
    }
    writer.finalize().expect("finalize WAV");
    // RIFF header (12 bytes), fmt chunk header (8), format tag and channels (4), then the rate fields.
    let block_align = u32::from(channels) * u32::from(bits / 8);
    bytes[24..28].copy_from_slice(&rate.to_le_bytes());
    bytes[28..32].copy_from_slice(&block_align.checked_mul(rate)?.to_le_bytes());
    Some(bytes)
}

proptest! {
    #![proptest_config(config(128))]

    /// Every valid format, channel count and rate: the decoded length is the resampled frame count,
    /// and exactly the inputs the reader cannot use are refused, each with its own error.
    #[test]
    fn valid_wavs_decode_to_16k_mono_or_a_typed_error(
        channels in 1u16..=6,
        rate in sample_rate(),
        format in wav_format(),
        frames in prop_oneof![0usize..200, 200usize..600],
        seed in any::<u32>(),
    ) {
        let Some(bytes) = wav_bytes(channels, rate, format, frames, seed) else { return Ok(()) };
        let result = read_audio_bytes(bytes, "prop.wav", &AudioOptions::default());
        let supported = (MIN_SAMPLE_RATE..=MAX_SAMPLE_RATE).contains(&rate);
        let expected = (frames as u64 * u64::from(SAMPLE_RATE)).div_ceil(u64::from(rate.max(1))) as usize;
        match result {
            Ok(samples) => {
                prop_assert!(supported && expected >= MIN_SAMPLES, "{rate} Hz, {frames} frames accepted");
                prop_assert_eq!(samples.len(), expected);
                // Decoded samples lie in [-1, 1]. Resampling filters them with a windowed sinc, which can overshoot
                // on random full-scale input, at most by the filter's absolute sum (2.14 was the largest of 835
                // decodes of this test's inputs); 4 bounds it, while a wrong sample width or byte order would give
                // values of order 2^8 and beyond.
                let peak = if rate == SAMPLE_RATE { 1.0 } else { 4.0 };
                prop_assert!(samples.iter().all(|x| x.is_finite() && x.abs() <= peak));
            }
            Err(AudioError::SampleRate { rate: r, .. }) => prop_assert!(!supported && r == rate),
            Err(AudioError::Samples(SampleError::Empty { .. })) => prop_assert!(supported && frames == 0),
            Err(AudioError::Samples(SampleError::TooShort { samples, .. })) => {
                prop_assert!(supported && samples == expected && samples < MIN_SAMPLES)
            }
            Err(e) => prop_assert!(false, "{rate} Hz, {channels} channels, {format:?}: {e}"),
        }
    }

    /// Damaged headers, damaged data and plain noise: decoded or refused, never a panic.
    #[test]
    fn damaged_wavs_give_typed_errors(
        format in wav_format(),
        rate in sample_rate(),
        edits in prop::collection::vec((0usize..64, any::<u8>()), 0..6),
        truncate in prop::option::of(0usize..400),
        noise in prop::collection::vec(any::<u8>(), 0..300),
        riff_noise in any::<bool>(),
    ) {
        let mut bytes = if riff_noise {
            let mut riff = b"RIFF\0\0\0\0WAVEfmt ".to_vec();
            riff.extend(&noise);
            riff
        } else {
            wav_bytes(2, rate, format, 180, 7).unwrap_or_default()
        };
        for (i, b) in edits {
            if let Some(byte) = bytes.get_mut(i) {
                *byte = b;
            }
        }
        if let Some(n) = truncate {
            bytes.truncate(n);
        }
        if let Ok(samples) = read_audio_bytes(bytes, "damaged.wav", &AudioOptions::default()) {
            prop_assert!(samples.len() >= MIN_SAMPLES && samples.iter().all(|x| x.is_finite()));
        }
    }
}

// ---- manifests ----

/// One generated manifest entry: (audio path, offset, duration (Some(None) = `null`), uniq_id, extra text field).
type EntrySpec = (String, Option<f64>, Option<Option<f64>>, Option<String>, Option<String>);

fn entry_spec() -> impl Strategy<Value = EntrySpec> {
    (
        "[a-z]{1,6}(/[a-z0-9_-]{1,6}){0,2}\\.(wav|flac|mp3)",
        prop::option::of(0.0f64..1e4),
        prop::option::of(prop::option::of(0.001f64..1e4)),
        prop::option::of("[A-Za-z0-9_.-]{1,12}"),
        prop::option::of(".{0,20}"),
    )
}

proptest! {
    #![proptest_config(config(256))]

    /// Well-formed manifests parse to their entries: paths resolved against the folder, cuts, ids (given, or the
    /// file name without its extension), and every field kept.
    #[test]
    fn manifests_parse_to_their_entries(specs in prop::collection::vec(entry_spec(), 0..8), blank in any::<bool>()) {
        let mut lines = Vec::new();
        for (i, (path, offset, duration, id, text)) in specs.iter().enumerate() {
            let mut fields = serde_json::Map::new();
            // Ids made unique by the entry's position, given or derived.
            let path = path.replacen('.', &format!("-{i}."), 1);
            fields.insert("audio_filepath".into(), json!(path));
            if let Some(o) = offset { fields.insert("offset".into(), json!(o)); }
            if let Some(d) = duration { fields.insert("duration".into(), json!(d)); }
            if let Some(id) = id { fields.insert("uniq_id".into(), json!(format!("{id}-{i}"))); }
            if let Some(t) = text { fields.insert("text".into(), json!(t)); }
            lines.push(Value::Object(fields).to_string());
            if blank { lines.push("  ".into()); }
        }
        let entries = parse_manifest(&lines.join("\n"), Path::new("/data"), "m.jsonl").map_err(|e| {
            TestCaseError::fail(e.to_string())
        })?;
        prop_assert_eq!(entries.len(), specs.len());
        for (i, (entry, (path, offset, duration, id, text))) in entries.iter().zip(&specs).enumerate() {
            let path = path.replacen('.', &format!("-{i}."), 1);
            prop_assert_eq!(&entry.audio, &Path::new("/data").join(&path));
            prop_assert_eq!(entry.offset, offset.unwrap_or(0.0));
            prop_assert_eq!(entry.duration, duration.flatten());
            let expected_id = match id {
                Some(id) => format!("{id}-{i}"),
                None => Path::new(&path).file_stem().unwrap().to_string_lossy().into_owned(),
            };
            prop_assert_eq!(&entry.id, &expected_id);
            prop_assert_eq!(entry.fields.get("text").and_then(Value::as_str), text.as_deref());
            prop_assert_eq!(entry.line, if blank { 2 * i + 1 } else { i + 1 });
        }
    }

    /// Arbitrary text, and well-formed lines with a field damaged: entries that keep their promises, or an error
    /// naming the line, never a panic.
    #[test]
    fn damaged_manifests_give_line_errors(
        text in ".{0,300}",
        key in prop::sample::select(&["audio_filepath", "offset", "duration", "uniq_id"][..]),
        value in prop::sample::select(&[
            "-1", "0", "1e400", "\"x\"", "[]", "{}", "true", "null", "\"\"", "\"a/b\"", "\"..\"", "3", "\"ok\"",
        ][..]),
    ) {
        for input in [text.clone(), format!("{{\"audio_filepath\": \"a.wav\", \"{key}\": {value}}}\n{text}")] {
            match parse_manifest(&input, Path::new("/data"), "m.jsonl") {
                Ok(entries) => {
                    for e in entries {
                        prop_assert!(e.offset.is_finite() && e.offset >= 0.0);
                        prop_assert!(e.duration.is_none_or(|d| d.is_finite() && d > 0.0));
                        prop_assert!(!e.id.is_empty() && !e.id.contains('/') && e.id != "..");
                    }
                }
                Err(ManifestError::Line { line, message, .. }) => {
                    prop_assert!(line >= 1 && !message.is_empty())
                }
                Err(ManifestError::DuplicateId { first, line, .. }) => prop_assert!(first < line),
                Err(e) => prop_assert!(false, "{e}"),
            }
        }
    }
}

#[test]
fn duplicate_manifest_ids_name_both_lines() {
    let text = "{\"audio_filepath\": \"a/x.wav\"}\n{\"audio_filepath\": \"y.wav\", \"uniq_id\": \"z\"}\n\
                {\"audio_filepath\": \"b/x.flac\"}\n";
    let error = parse_manifest(text, Path::new("/d"), "m.jsonl").expect_err("duplicate accepted");
    assert!(matches!(&error, ManifestError::DuplicateId { id, first: 1, line: 3, .. } if id == "x"), "{error}");
}

// ---- raw PCM ----

proptest! {
    #![proptest_config(config(256))]

    /// Any bytes cut anywhere decode to the samples of the whole stream; a stream that ends inside a sample
    /// is refused with the stray bytes counted; 16-bit samples read as a 16-bit WAV file reads them.
    #[test]
    fn raw_pcm_decodes_the_same_whatever_the_pieces(
        bytes in prop::collection::vec(any::<u8>(), 0..400),
        cuts in prop::collection::vec(0usize..400, 0..8),
        float in any::<bool>(),
    ) {
        let format = if float { RawFormat::F32le } else { RawFormat::S16le };
        let mut whole = RawDecoder::new(format);
        let expected = whole.decode(&bytes);
        let stray = bytes.len() % format.bytes();
        match whole.finish() {
            Ok(()) => prop_assert_eq!(stray, 0),
            Err(e) => prop_assert!(e.bytes == stray && e.samples == expected.len(), "{e}"),
        }
        let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c.min(bytes.len())).collect();
        cuts.sort_unstable();
        let mut pieces = RawDecoder::new(format);
        let mut got = Vec::new();
        for (from, to) in std::iter::once(0).chain(cuts.iter().copied()).zip(cuts.iter().copied().chain([bytes.len()])) {
            got.extend(pieces.decode(&bytes[from..to]));
        }
        let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        prop_assert_eq!(bits(&got), bits(&expected));
        if !float && stray == 0 && expected.len() >= MIN_SAMPLES {
            let mut wav = Vec::new();
            let spec = WavSpec { channels: 1, sample_rate: SAMPLE_RATE, bits_per_sample: 16, sample_format: SampleFormat::Int };
            let mut writer = WavWriter::new(Cursor::new(&mut wav), spec).expect("WAV writer");
            for pair in bytes.chunks_exact(2) {
                writer.write_sample(i16::from_le_bytes([pair[0], pair[1]])).expect("write sample");
            }
            writer.finalize().expect("finalize WAV");
            let decoded = read_audio_bytes(wav, "raw.wav", &AudioOptions::default()).expect("WAV");
            prop_assert_eq!(bits(&decoded), bits(&expected));
        }
    }
}
