//! Property tests of the parsers of user input (safetensors checkpoints and features files, `config.json`,
//! audio files, NeMo manifests, raw PCM): whatever the bytes, each answers with a value or a typed error, never a panic;
//! where the input is well formed, the value is the one described. The fuzz targets in `fuzz/` explore the same parsers by
//! coverage; these run in the normal suite.

use std::io::Cursor;
use std::path::Path;

use hound::{SampleFormat, WavSpec, WavWriter};
use nemotron_towers::audio::{
    AudioError, AudioOptions, MAX_SAMPLE_RATE, MIN_SAMPLE_RATE, MIN_SAMPLES, SAMPLE_RATE, read_audio_bytes,
};
use nemotron_towers::manifest::{ManifestError, parse_manifest};
use nemotron_towers::raw_pcm::{RawDecoder, RawFormat};
use nemotron_towers::tensor_file::read_features;
use nemotron_towers::{Checkpoint, CheckpointError, ConfigError, EncoderConfig, Error, ModelConfig};
use proptest::prelude::*;
use serde_json::{Value, json};

fn config(cases: u32) -> ProptestConfig {
    ProptestConfig { cases, ..ProptestConfig::default() }
}

// ---- safetensors ----

/// Every dtype name safetensors knows (sub-byte ones included), and two it does not.
const DTYPES: &[&str] = &[
    "BOOL", "F4", "F6_E2M3", "F6_E3M2", "U8", "I8", "F8_E5M2", "F8_E4M3", "F8_E8M0", "I16", "U16", "F16", "BF16",
    "I32", "U32", "F32", "C64", "F64", "I64", "U64", "F128", "",
];

/// Dtypes a features mask may have.
const MASK_DTYPES: &[&str] = &["BOOL", "U8", "I8", "I16", "I32", "I64", "F32"];

fn dtype_bits(dtype: &str) -> Option<usize> {
    Some(match dtype {
        "F4" => 4,
        "F6_E2M3" | "F6_E3M2" => 6,
        "BOOL" | "U8" | "I8" | "F8_E5M2" | "F8_E4M3" | "F8_E8M0" => 8,
        "I16" | "U16" | "F16" | "BF16" => 16,
        "I32" | "U32" | "F32" => 32,
        "C64" | "F64" | "I64" | "U64" => 64,
        _ => return None,
    })
}

#[derive(Clone, Debug)]
struct TensorSpec {
    dtype: &'static str,
    shape: Vec<u64>,
}

/// Ways to damage a well-formed file.
#[derive(Clone, Debug)]
enum Damage {
    None,
    /// Overwrites one byte of the header (the index wraps).
    HeaderByte(usize, u8),
    /// Replaces the header-length prefix.
    LengthPrefix(u64),
    Truncate(usize),
    Extend(usize),
    /// Moves one tensor's end offset (the index wraps) to an arbitrary value.
    EndOffset(usize, u64),
}

fn tensor_spec() -> impl Strategy<Value = TensorSpec> {
    (prop::sample::select(DTYPES), prop::collection::vec(0u64..6, 0..4))
        .prop_map(|(dtype, shape)| TensorSpec { dtype, shape })
}

fn damage() -> impl Strategy<Value = Damage> {
    prop_oneof![
        3 => Just(Damage::None),
        2 => (any::<usize>(), any::<u8>()).prop_map(|(i, b)| Damage::HeaderByte(i, b)),
        1 => prop_oneof![any::<u64>(), 0u64..400].prop_map(Damage::LengthPrefix),
        1 => (1usize..64).prop_map(Damage::Truncate),
        1 => (1usize..64).prop_map(Damage::Extend),
        1 => (any::<usize>(), prop_oneof![any::<u64>(), 0u64..200]).prop_map(|(i, e)| Damage::EndOffset(i, e)),
    ]
}

/// A safetensors file of the named tensors, data bytes counting up from `fill`, then damaged. A tensor
/// whose size is not whole bytes is written with the size rounded down.
fn safetensors_bytes(tensors: &[(String, TensorSpec)], fill: u8, damage: &Damage) -> Vec<u8> {
    let mut header = serde_json::Map::new();
    let mut offset = 0u64;
    for (i, (name, t)) in tensors.iter().enumerate() {
        let elements: u64 = t.shape.iter().product();
        let size = elements * dtype_bits(t.dtype).unwrap_or(8) as u64 / 8;
        let end = match damage {
            Damage::EndOffset(j, end) if j % tensors.len() == i => *end,
            _ => offset + size,
        };
        header.insert(name.clone(), json!({"dtype": t.dtype, "shape": t.shape, "data_offsets": [offset, end]}));
        offset += size;
    }
    header.insert("__metadata__".into(), json!({"origin": "proptest"}));
    let header = serde_json::to_vec(&Value::Object(header)).expect("serialize header");
    let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
    bytes.extend_from_slice(&header);
    bytes.extend((0..offset).map(|i| fill.wrapping_add(i as u8)));
    match *damage {
        Damage::HeaderByte(i, b) => bytes[8 + i % header.len()] = b,
        Damage::LengthPrefix(n) => bytes[..8].copy_from_slice(&n.to_le_bytes()),
        Damage::Truncate(n) => bytes.truncate(bytes.len().saturating_sub(n)),
        Damage::Extend(n) => bytes.extend(std::iter::repeat_n(0x7f, n)),
        Damage::None | Damage::EndOffset(..) => {}
    }
    bytes
}

fn numbered(tensors: &[TensorSpec]) -> Vec<(String, TensorSpec)> {
    tensors.iter().enumerate().map(|(i, t)| (format!("t{i}"), t.clone())).collect()
}

/// Calls every accessor on every tensor; each must answer, and agree with the header it was read from.
fn exercise(checkpoint: &Checkpoint) {
    let names: Vec<String> = checkpoint.names().map(str::to_owned).collect();
    for name in &names {
        let tensor = checkpoint.tensor(name).expect("a listed tensor is readable");
        let elements: usize = tensor.shape.iter().product();
        let dtype = format!("{:?}", tensor.dtype);
        assert_eq!(checkpoint.shape(name).expect("shape"), Some(tensor.shape.to_vec()));
        match checkpoint.f32(name) {
            Ok(values) => assert_eq!(values.len(), elements, "`{name}` ({dtype}): one value per element"),
            Err(e) => assert!(matches!(e, CheckpointError::Dtype { .. }), "`{name}` ({dtype}): {e}"),
        }
        match checkpoint.bf16(name) {
            Ok(bits) => assert_eq!(bits.len(), elements, "`{name}` ({dtype}): one bf16 per element"),
            Err(e) => assert!(matches!(e, CheckpointError::Dtype { .. }), "`{name}` ({dtype}): {e}"),
        }
        if let Ok(values) = checkpoint.f64(name) {
            assert_eq!(values.len(), elements, "`{name}` ({dtype}): one f64 per element");
        }
    }
    let expected: Vec<(String, Vec<usize>)> =
        names.iter().map(|n| (n.clone(), vec![1])).chain([("absent".to_owned(), vec![])]).collect();
    assert!(matches!(checkpoint.check(&expected), Err(CheckpointError::Tensors { .. })));
}

proptest! {
    #![proptest_config(config(256))]

    #[test]
    fn arbitrary_bytes_are_no_checkpoint(
        bytes in prop::collection::vec(any::<u8>(), 0..600),
        prefixed in any::<bool>(),
    ) {
        // With a length prefix that fits, parsing gets past the first check into the JSON.
        let bytes = if prefixed { [&(bytes.len() as u64).to_le_bytes()[..], &bytes].concat() } else { bytes };
        match Checkpoint::from_bytes("arbitrary.safetensors", bytes) {
            Ok(checkpoint) => exercise(&checkpoint),
            Err(e) => prop_assert!(matches!(e, CheckpointError::File { .. }), "{e}"),
        }
    }

    #[test]
    fn damaged_safetensors_headers_give_typed_errors(
        tensors in prop::collection::vec(tensor_spec(), 1..5),
        fill in any::<u8>(),
        damage in damage(),
    ) {
        let bytes = safetensors_bytes(&numbered(&tensors), fill, &damage);
        let whole_bytes = |t: &TensorSpec| {
            dtype_bits(t.dtype).is_some_and(|b| (t.shape.iter().product::<u64>() * b as u64).is_multiple_of(8))
        };
        let well_formed = matches!(damage, Damage::None) && tensors.iter().all(whole_bytes);
        match Checkpoint::from_bytes("damaged.safetensors", bytes) {
            Ok(checkpoint) => {
                if matches!(damage, Damage::None) {
                    for (i, t) in tensors.iter().enumerate() {
                        let shape = t.shape.iter().map(|&d| d as usize).collect();
                        prop_assert_eq!(checkpoint.shape(&format!("t{i}")).expect("shape"), Some(shape));
                    }
                }
                exercise(&checkpoint);
            }
            Err(e) => {
                prop_assert!(!well_formed, "a well-formed file was refused: {e}");
                prop_assert!(matches!(&e, CheckpointError::File { path, .. } if path == "damaged.safetensors"), "{e}");
            }
        }
    }

    /// The features file reader on files of every mask dtype and shape, valid or not.
    #[test]
    fn features_files_load_or_name_the_problem(
        frames in mostly((1u64..5).prop_map(|q| 4 * q), 0u64..20),
        bins in mostly(Just(8u64), 0u64..12),
        mask_dtype in mostly(prop::sample::select(MASK_DTYPES), prop::sample::select(DTYPES)),
        mask_frames in mostly(Just(None), (0u64..20).prop_map(Some)),
        fill in any::<u8>(),
    ) {
        let mask = TensorSpec { dtype: mask_dtype, shape: vec![mask_frames.unwrap_or(frames)] };
        let tensors = [
            ("input_features".to_owned(), TensorSpec { dtype: "F32", shape: vec![frames, bins] }),
            ("input_features_mask".to_owned(), mask),
        ];
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("features.safetensors");
        // Small fill values keep most features finite.
        std::fs::write(&path, safetensors_bytes(&tensors, fill % 16, &Damage::None)).expect("write features");
        match read_features(&path, 8, 4) {
            Ok(features) => {
                prop_assert!(frames > 0 && frames % 4 == 0 && bins == 8, "{frames}×{bins} accepted");
                prop_assert_eq!(features.frames as u64, frames);
                prop_assert!(features.valid <= features.frames);
                prop_assert_eq!(features.data.len() as u64, frames * bins);
            }
            Err(e) => prop_assert!(matches!(e, Error::Features { .. } | Error::Checkpoint(_)), "{e}"),
        }
    }
}

// ---- config.json ----

/// Mostly a plausible value, sometimes anything: valid configs come up often, and so do the bounds.
fn mostly<T: std::fmt::Debug + Clone + 'static>(
    plausible: impl Strategy<Value = T> + 'static,
    anything: impl Strategy<Value = T> + 'static,
) -> BoxedStrategy<T> {
    prop_oneof![15 => plausible, 1 => anything].boxed()
}

/// A size: mostly in `plausible`, sometimes zero or any JSON integer.
fn size(plausible: std::ops::RangeInclusive<u64>) -> BoxedStrategy<u64> {
    mostly(plausible, prop_oneof![Just(0u64), any::<u64>()])
}

fn encoder_json() -> impl Strategy<Value = Value> {
    let head_dim = mostly((1u64..=32).prop_map(|q| 4 * q), 0u64..=200);
    (size(1..=12), head_dim, prop::option::weighted(0.1, any::<u64>()), size(1..=300), size(1..=3)).prop_flat_map(
        |(heads, head_dim, odd_hidden, intermediate, layers)| {
            let hidden = odd_hidden.unwrap_or(heads.saturating_mul(head_dim));
            let partial = mostly(prop::sample::select(&[0.5, 1.0][..]), prop_oneof![0.0f64..=1.0, any::<f64>()]);
            let theta = mostly(Just(10_000.0), any::<f64>());
            (partial, theta, mostly(Just(8u64), size(1..=64))).prop_map(move |(partial, theta, subsampling)| {
                json!({
                    "hidden_size": hidden, "intermediate_size": intermediate, "num_attention_heads": heads,
                    "num_hidden_layers": layers, "num_mel_bins": 128, "subsampling_factor": subsampling,
                    "rope_parameters": {"partial_rotary_factor": partial, "rope_theta": theta},
                })
            })
        },
    )
}

fn diarization_json() -> impl Strategy<Value = Value> {
    // Large halves too: the schedule adds the contexts, and two of them overflowed.
    let frames = || prop_oneof![12 => 0u64..=600, 1 => any::<u64>(), 1 => u64::MAX / 2..=u64::MAX].boxed();
    let sizes = (frames(), frames(), frames(), frames(), frames(), frames());
    (encoder_json(), size(1..=64), size(1..=16), sizes, size(16..=400)).prop_map(
        |(audio, head, speakers, (chunk, left, right, fifo, stream_fifo, stream_period), cache)| {
            json!({
                "audio_config": audio, "head_config": {"hidden_size": head, "num_speakers": speakers},
                "chunk_length": chunk, "chunk_left_context": left, "chunk_right_context": right,
                "fifo_length": fifo,
                "streaming_config": {"speaker_cache_length": cache, "fifo_length": stream_fifo,
                                     "speaker_cache_update_period": stream_period},
            })
        },
    )
}

fn assert_consistent(e: &EncoderConfig) {
    assert_eq!(e.head_dim * e.heads, e.hidden, "{e:?}");
    assert!(e.rotary_dims > 0 && e.rotary_dims.is_multiple_of(2) && e.rotary_dims <= e.head_dim, "{e:?}");
    assert!(e.head_dim <= 128 && e.layers > 0 && e.intermediate > 0 && e.mel_bins > 0 && e.subsampling > 0, "{e:?}");
    assert!(e.rope_theta.is_finite() && e.rope_theta > 1.0, "{e:?}");
}

proptest! {
    #![proptest_config(config(256))]

    #[test]
    fn configs_load_consistent_or_give_config_errors(
        asr in encoder_json(),
        diarization in diarization_json(),
        text_hidden in size(1..=64),
        threshold in mostly(0.0f64..=1.0, any::<f64>()),
        standalone in any::<bool>(),
    ) {
        let text = if standalone {
            let mut d = diarization;
            d["model_type"] = json!("nemotron3_diarization");
            d.to_string()
        } else {
            json!({
                "model_type": "nemo_speechlm",
                "audio_config": {"asr_config": asr, "diarization_config": diarization,
                                 "speaker_activity_threshold": threshold},
                "text_config": {"hidden_size": text_hidden},
            })
            .to_string()
        };
        match ModelConfig::from_json(&text) {
            Ok(config) => {
                let d = config.diarization();
                assert_consistent(&d.encoder);
                prop_assert!(d.speakers > 0 && d.chunks.length > 0);
                prop_assert!(d.cache.cache_length / d.speakers > d.cache.silence_frames_per_speaker);
                prop_assert_eq!(d.streaming_cache.cache_length, d.cache.cache_length);
                if let ModelConfig::Transcribe(t) = &config {
                    assert_consistent(&t.asr);
                    prop_assert_eq!(t.asr.stacked_features(), d.encoder.stacked_features());
                    prop_assert!((0.0..=1.0).contains(&t.speaker_activity_threshold) && t.text_hidden > 0);
                }
            }
            Err(e) => prop_assert!(matches!(e, ConfigError::Invalid(_)), "{e}"),
        }
    }

    #[test]
    fn arbitrary_text_is_no_config(text in ".{0,200}", prefix in prop::sample::select(&[
        "", "{\"model_type\":\"nemo_speechlm\",", "{\"model_type\":\"nemotron3_diarization\",\"audio_config\":",
    ][..])) {
        let text = format!("{prefix}{text}");
        if let Err(e) = ModelConfig::from_json(&text) {
            prop_assert!(!e.to_string().is_empty());
        }
    }
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
            Err(AudioError::Empty { .. }) => prop_assert!(supported && frames == 0),
            Err(AudioError::TooShort { samples, .. }) => {
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
