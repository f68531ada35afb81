//! Property tests of the parsers of model files (safetensors checkpoints and features files, `config.json`): whatever
//! the bytes, each answers with a value or a typed error, never a panic; where the input is well formed, the value is
//! the one described. The fuzz targets in `fuzz/` explore the same parsers by coverage; these run in the normal suite.
//! The audio-input parsers have theirs in `input_properties.rs`.

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
