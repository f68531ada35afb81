//! The library's answer to what users feed it: bad checkpoints, configs, samples and features give
//! typed errors naming the problem; device limits and faults give typed errors, not panics or
//! hangs; one loaded model serves several threads with the sequential answer, bit for bit.

mod common;

use nemotron_towers::blocking::Block;
use std::collections::HashMap;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use common::{edited_weights, model_dir, test_options};
use gpu_core::{Gpu, GpuError, GpuOptions};
use nemotron_testkit::{Rng, rel_frobenius, test_gpu};
use nemotron_towers::SampleError;
use nemotron_towers::frontend::Features;
use nemotron_towers::synthetic::synthetic_audio;
use nemotron_towers::tensor_file::{Tensor, serialize};
use nemotron_towers::tower::{InputKind, Sequence};
use nemotron_towers::{AudioModel, BatchLimits, Diarizer, DiarizerSession, Model, ModelOptions, StreamingMode};
use nemotron_towers::{Checkpoint, CheckpointError, ConfigError, Error, ModelConfig};

fn testdata(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata").join(path)
}

fn load_transcribe(gpu: &Gpu, case: &str) -> Box<AudioModel> {
    match Model::load(gpu, &testdata(&format!("reference/{case}")), &test_options()).block() {
        Ok(Model::Transcribe(model)) => model,
        Ok(Model::Diarization(_)) => panic!("{case} is a Transcribe checkpoint"),
        Err(e) => panic!("loading {case}: {e}"),
    }
}

/// The `tiny-chunks` model (chunks of 20 encoder frames, 1.6 s), loaded once per test binary.
fn tiny() -> &'static AudioModel {
    static MODEL: OnceLock<Box<AudioModel>> = OnceLock::new();
    MODEL.get_or_init(|| load_transcribe(test_gpu(), "tiny-chunks"))
}

fn load_error(dir: &Path) -> Error {
    match Model::load(test_gpu(), dir, &test_options()).block() {
        Ok(_) => panic!("{} loaded", dir.display()),
        Err(e) => e,
    }
}

#[test]
fn truncated_and_oversized_safetensors_are_file_errors() {
    let real = std::fs::read(testdata("reference/tiny-release-chunks/model.safetensors")).unwrap();
    let json_header = |json: &str| [&(json.len() as u64).to_le_bytes()[..], json.as_bytes(), &[0u8; 16]].concat();
    let cases: [(&str, Vec<u8>); 4] = [
        ("cut in half", real[..real.len() / 2].to_vec()),
        ("a header length of 2^62 bytes", [&(1u64 << 62).to_le_bytes()[..], b"{}"].concat()),
        (
            "a tensor of 2^64 elements",
            json_header(r#"{"w":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,16]}}"#),
        ),
        (
            "data past the end",
            json_header(r#"{"w":{"dtype":"F32","shape":[1099511627776],"data_offsets":[0,4398046511104]}}"#),
        ),
    ];
    for (what, bytes) in cases {
        match Checkpoint::from_bytes("weights.safetensors", bytes.clone()) {
            Err(CheckpointError::File { path, message }) => {
                assert_eq!(path, "weights.safetensors", "{what}");
                assert!(message.contains("not a safetensors file"), "{what}: {message}");
            }
            other => panic!("{what}: expected a file error, got {other:?}"),
        }
        let dir = model_dir(&bytes);
        match load_error(dir.path()) {
            Error::Checkpoint(CheckpointError::File { path, .. }) => assert!(path.ends_with("model.safetensors")),
            other => panic!("{what}: expected a file error naming model.safetensors, got {other}"),
        }
    }
}

#[test]
fn a_wrong_dtype_and_a_wrong_shape_are_both_named_at_load() {
    let integer = "perception.encoder.asr_encoder.layers.0.ffn.net.0.weight";
    let transposed = "perception.encoder.diarization_model.sortformer_modules.encoder_proj.weight";
    let weights = edited_weights(|name, t| {
        Some(match name {
            n if n == integer => Tensor { dtype: safetensors::Dtype::I32, bytes: vec![0; t.bytes.len() * 2], ..t },
            n if n == transposed => Tensor { shape: vec![t.shape[1], t.shape[0]], ..t },
            _ => t,
        })
    });
    let dir = model_dir(&weights);
    let Error::Checkpoint(CheckpointError::Tensors { problems, .. }) = load_error(dir.path()) else {
        panic!("expected tensor problems")
    };
    assert_eq!(problems.len(), 2, "{problems:?}");
    assert!(problems.iter().any(|p| p.contains(integer) && p.contains("I32")), "{problems:?}");
    assert!(problems.iter().any(|p| p.contains(transposed) && p.contains("[32, 24]")), "{problems:?}");
}

#[test]
fn weights_without_audio_tensors_say_so() {
    let unrelated = vec![("lm_head.weight".to_string(), Tensor::f32(vec![2, 2], &[1.0; 4]))];
    let dir = model_dir(&serialize(&unrelated, HashMap::new()).unwrap());
    match load_error(dir.path()) {
        Error::Checkpoint(CheckpointError::UnknownNames { looked_for, .. }) => {
            assert!(looked_for.contains("perception.encoder.asr_encoder"), "{looked_for}")
        }
        other => panic!("expected UnknownNames, got {other}"),
    }
}

#[test]
fn configs_with_zero_or_absurd_sizes_name_the_field() {
    // Python's `Infinity` (in the language model's part) is not JSON.
    let text = std::fs::read_to_string(testdata("reference/tiny-release-chunks/config.json")).unwrap();
    let base: serde_json::Value = serde_json::from_str(&text.replace("Infinity", "null")).unwrap();
    let asr = "/audio_config/asr_config";
    for (field, value, needle) in [
        ("hidden_size", serde_json::json!(0), "asr_config.hidden_size = 0"),
        ("num_attention_heads", serde_json::json!(5), "5 heads do not divide hidden_size 64"),
        ("num_hidden_layers", serde_json::json!(100_000), "asr_config.num_hidden_layers = 100000"),
        ("intermediate_size", serde_json::json!(1u64 << 40), "asr_config.intermediate_size"),
        ("rope_parameters", serde_json::json!({"partial_rotary_factor": 0.5625}), "rotary dimensions 9"),
    ] {
        let mut config = base.clone();
        config.pointer_mut(asr).unwrap()[field] = value;
        match ModelConfig::from_json(&config.to_string()) {
            Err(ConfigError::Invalid(message)) => assert!(message.contains(needle), "{message} lacks `{needle}`"),
            other => panic!("{field}: expected an invalid config, got {other:?}"),
        }
    }
}

#[test]
fn empty_short_and_non_finite_samples_are_audio_errors() {
    let model = tiny();
    let mut infinite = vec![0.1f32; 4000];
    infinite[1234] = f32::NEG_INFINITY;
    let mut nan = vec![0.1f32; 4000];
    nan[7] = f32::NAN;
    for (samples, what) in [(vec![], "empty"), (vec![0.5], "1 sample"), (infinite, "-inf"), (nan, "NaN")] {
        let encoded = model.encode_audio(&samples, &mut |_, _, _| ControlFlow::Continue(())).block().map(|_| ());
        let diarized =
            model.diarizer().diarize_audio(&samples, &mut |_, _, _| ControlFlow::Continue(())).block().map(|_| ());
        for result in [encoded, diarized] {
            match (what, result) {
                ("empty", Err(Error::Samples(SampleError::Empty { .. })))
                | ("1 sample", Err(Error::Samples(SampleError::TooShort { samples: 1, .. })))
                | ("-inf", Err(Error::Samples(SampleError::NonFinite { index: 1234, .. })))
                | ("NaN", Err(Error::Samples(SampleError::NonFinite { index: 7, .. }))) => {}
                (what, other) => panic!("{what}: got {other:?}"),
            }
        }
    }
}

#[test]
fn malformed_features_are_input_errors() {
    let model = tiny();
    let features = |frames: usize, valid: usize| Features { data: vec![-3.0; frames * 128], frames, valid };
    let mut nan = features(16, 12);
    nan.data[5 * 128 + 3] = f32::NAN;
    let mut infinite = features(16, 12);
    infinite.data[0] = f32::INFINITY;
    let too_few = Features { data: vec![0.0; 16 * 128 - 1], frames: 16, valid: 12 };
    for (f, needle) in [
        (features(13, 12), "multiple of 8"),
        (nan, "feature value 643 is not finite"),
        (infinite, "feature value 0 is not finite"),
        (features(16, 17), "17 valid frames of only 16"),
        (features(16, 0), "no valid frame"),
        (too_few, "2047 values for 16 frames"),
    ] {
        let encoded = model.encode_features(f.clone(), &mut |_, _, _| ControlFlow::Continue(())).block().map(|_| ());
        let diarized =
            model.diarizer().diarize_features(f, &mut |_, _, _| ControlFlow::Continue(())).block().map(|_| ());
        for result in [encoded, diarized] {
            match result {
                Err(Error::Features { problem, .. }) => assert!(problem.contains(needle), "{problem} lacks `{needle}`"),
                other => panic!("expected an input error naming `{needle}`, got {other:?}"),
            }
        }
    }
}

/// Compile-time: a loaded model can be shared across threads.
fn assert_send_sync<T: Send + Sync>() {}

#[test]
fn the_loaded_model_is_send_and_sync() {
    assert_send_sync::<Model>();
    assert_send_sync::<AudioModel>();
    assert_send_sync::<Diarizer>();
}

#[test]
fn four_threads_on_one_model_get_the_sequential_bits() {
    let model = tiny();
    let mut rng = Rng::new(11);
    // Different lengths: 2 to 10 chunks, one or two batches, workspaces grown by other calls.
    let inputs: Vec<Vec<f32>> = [2.3, 15.1, 0.7, 6.1].iter().map(|&s| synthetic_audio(s, &mut rng)).collect();
    let sequential: Vec<_> = inputs
        .iter()
        .map(|s| model.encode_audio(s, &mut |_, _, _| ControlFlow::Continue(())).block().unwrap())
        .collect();
    let concurrent: Vec<_> = std::thread::scope(|scope| {
        let handles: Vec<_> = inputs
            .iter()
            .map(|s| {
                scope.spawn(move || model.encode_audio(s, &mut |_, _, _| ControlFlow::Continue(())).block().unwrap())
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for (i, (a, b)) in sequential.iter().zip(&concurrent).enumerate() {
        let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        for (name, x, y) in [
            ("features", &a.features.data, &b.features.data),
            ("asr_hidden", &a.asr_hidden, &b.asr_hidden),
            ("speaker_logits", &a.speaker_logits, &b.speaker_logits),
            ("speaker_probabilities", &a.speaker_probabilities, &b.speaker_probabilities),
            ("fused", &a.fused, &b.fused),
            ("audio_embeds", &a.audio_embeds, &b.audio_embeds),
        ] {
            assert!(bits(x) == bits(y), "input {i}: concurrent {name} differs from the sequential one");
        }
    }
}

#[test]
fn a_tower_batch_beyond_one_binding_is_refused_naming_the_limit() {
    let tower = tiny().asr_tower();
    let c = tower.config();
    let rows = vec![0.5f32; 600 * c.stacked_features()];
    let valid = vec![true; 600];
    // Many views of one chunk: enough rows to exceed the binding without the host memory.
    let batch = vec![Sequence { rows: &rows, valid: &valid }; tower.max_rows() / 600 + 1];
    match tower.forward(InputKind::Features, &batch).block() {
        Err(Error::Gpu(GpuError::LimitExceeded { limit, requested, max, what })) => {
            assert_eq!(limit, "max_storage_buffer_binding_size");
            assert!(requested > max, "{requested} > {max}");
            assert!(what.contains(&format!("at most {} rows fit", tower.max_rows())), "{what}");
        }
        other => panic!("expected LimitExceeded, got {:?}", other.map(|_| ())),
    }
}

#[test]
fn a_small_device_splits_the_recording_and_gets_the_same_answer() {
    // 256 KiB bindings hold 64 rows of the tiny towers: two 30-row ASR chunks per batch, the
    // input projection in blocks of 64 rows.
    let options = GpuOptions { max_storage_binding_size: Some(256 << 10), ..nemotron_testkit::test_gpu_options() };
    let small = Gpu::with_options(&options).block().unwrap();
    let model = load_transcribe(&small, "tiny-chunks");
    assert_eq!(model.asr_tower().max_rows(), 64);
    // 6.4 s: four chunks, two batches on the small device, one on the full one.
    let samples = synthetic_audio(6.4, &mut Rng::new(5));
    let got = model.encode_audio(&samples, &mut |_, _, _| ControlFlow::Continue(())).block().unwrap();
    let want = tiny().encode_audio(&samples, &mut |_, _, _| ControlFlow::Continue(())).block().unwrap();
    for (name, x, y) in [
        ("asr_hidden", &got.asr_hidden, &want.asr_hidden),
        ("speaker_logits", &got.speaker_logits, &want.speaker_logits),
        ("fused", &got.fused, &want.fused),
        ("audio_embeds", &got.audio_embeds, &want.audio_embeds),
    ] {
        let error = rel_frobenius(x, &y.iter().map(|&v| f64::from(v)).collect::<Vec<_>>());
        eprintln!("256 KiB bindings: {name} relative error {error:.3e} against the full device");
        assert!(error <= 1e-6, "{name}: the split run differs by {error:.3e}");
    }
}

#[test]
fn a_lost_device_is_a_typed_error_at_every_step() {
    let gpu = Gpu::new().block().unwrap();
    let model = load_transcribe(&gpu, "tiny-chunks");
    let samples = synthetic_audio(2.0, &mut Rng::new(3));
    model.encode_audio(&samples, &mut |_, _, _| ControlFlow::Continue(())).block().unwrap();
    gpu.device().destroy();
    for attempt in 0..2 {
        match model.encode_audio(&samples, &mut |_, _, _| ControlFlow::Continue(())).block() {
            Err(Error::Gpu(GpuError::DeviceLost(reason))) => assert!(reason.contains("Destroyed"), "{reason}"),
            other => panic!("attempt {attempt}: expected DeviceLost, got {:?}", other.map(|_| ())),
        }
    }
    match Model::load(&gpu, &testdata("reference/tiny-release-chunks"), &test_options()).block() {
        Err(Error::Gpu(GpuError::DeviceLost(_))) => {}
        other => panic!("loading onto a lost device: expected DeviceLost, got {:?}", other.map(|_| ())),
    }
}

/// The `diar-tiny` diarizer on a device of its own that it loses (as a driver reset would lose it) at its first step
/// of two sequences or more, and two recordings of a few chunks each.
fn losing_device_at_a_step_of_two() -> (Gpu, Model, [Vec<f32>; 2]) {
    let gpu = Gpu::with_options(&nemotron_testkit::test_gpu_options()).block().unwrap();
    let options = ModelOptions { lose_device_at_step_of: Some(2), ..test_options() };
    let model = Model::load(&gpu, &testdata("reference/diar-tiny"), &options).block().expect("diar-tiny loads");
    let recordings = [synthetic_audio(5.0, &mut Rng::new(11)), synthetic_audio(6.5, &mut Rng::new(12))];
    (gpu, model, recordings)
}

/// The error every entry of a batched step got: the step's own, shared (one error, not a copy per entry).
fn shared_source<T>(results: &[Result<T, Error>]) -> &Error {
    let sources: Vec<&Arc<Error>> = results
        .iter()
        .enumerate()
        .map(|(i, result)| match result {
            Err(Error::BatchedStep(source)) => source,
            other => panic!("entry {i}: expected a failed batched step, got {:?}", other.as_ref().err()),
        })
        .collect();
    assert!(sources.windows(2).all(|pair| Arc::ptr_eq(pair[0], pair[1])), "one error shared by every entry");
    sources[0]
}

fn assert_lost_device(source: &Error) {
    assert!(matches!(source, Error::Gpu(GpuError::DeviceLost(_))), "the step's error is the lost device: {source:?}");
}

#[test]
fn a_device_lost_in_a_batched_step_is_the_source_of_every_recordings_error() {
    let (_gpu, model, recordings) = losing_device_at_a_step_of_two();
    let diarizer = model.diarizer();
    // Steps of one recording run: the device is lost only once two share a step.
    diarizer
        .diarize_audio(&recordings[0], &mut |_, _, _| ControlFlow::Continue(()))
        .block()
        .expect("a recording alone runs");
    let mut batch = diarizer.batch(&BatchLimits::default());
    for samples in &recordings {
        batch.add(diarizer.features(samples).unwrap());
    }
    let mut reported = batch.step(&mut |_, _, _| {}).block();
    assert!(batch.is_empty(), "the failed step reported every recording");
    reported.sort_by_key(|(number, _)| *number);
    let results: Vec<_> = reported.into_iter().map(|(_, result)| result).collect();
    assert_eq!(results.len(), recordings.len());
    let source = shared_source(&results);
    assert_lost_device(source);
    // What a front end prints names the cause.
    let sentence = nemotron_towers::error_sentence(results[0].as_ref().unwrap_err());
    assert!(sentence.contains("batched step") && sentence.contains("lost"), "{sentence}");
}

#[test]
fn a_device_lost_in_a_batched_streaming_step_is_the_source_of_every_sessions_error() {
    let (_gpu, model, recordings) = losing_device_at_a_step_of_two();
    let diarizer = model.diarizer();
    let mut sessions: Vec<DiarizerSession> =
        (0..2).map(|_| diarizer.session(StreamingMode::LowLatency).unwrap()).collect();
    let mut pushes: Vec<(&mut DiarizerSession, &[f32])> =
        sessions.iter_mut().zip(&recordings).map(|(session, samples)| (session, samples.as_slice())).collect();
    let outputs = nemotron_towers::streaming::push_many(&mut pushes).block();
    assert_lost_device(shared_source(&outputs));
}
