//! The word-timestamp head on the GPU: upstream's `word_timestamp_hidden_states` and `word_timestamp_logits` of both
//! reference cases under both name sets, from the project's own ASR states; the f64 CPU reference against upstream
//! and against the GPU on fresh random inputs; a checkpoint without the head.

mod common;

use std::ops::ControlFlow;

use common::{case_dir, edited_weights, model_dir, test_options};
use nemotron_towers::blocking::Block;

use nemotron_testkit::golden::{Golden, GoldenTower, keys};
use nemotron_testkit::reference;
use nemotron_testkit::{Rng, assert_close, fresh_seed, rel_frobenius, test_gpu};
use nemotron_towers::tensor_file::read_features;
use nemotron_towers::word_timestamps::WordTimestampHead;
use nemotron_towers::{AudioModel, Checkpoint, Model, ModelConfig};

const TOLERANCE: f64 = 1e-5;
const CASES: [&str; 2] = ["tiny-chunks", "tiny-release-chunks"];
const NAME_SETS: [&str; 2] = ["model.safetensors", "model.hf.safetensors"];

fn load(case: &str, file: &str) -> (Box<AudioModel>, Checkpoint) {
    let dir = case_dir(case);
    let config = ModelConfig::from_file(&dir.join("config.json")).unwrap();
    let checkpoint = Checkpoint::open(&dir.join(file)).unwrap();
    let Model::Transcribe(model) =
        Model::from_checkpoint(test_gpu(), config, &checkpoint, &test_options()).block().unwrap()
    else {
        panic!("{case} is a Transcribe checkpoint")
    };
    (model, checkpoint)
}

fn reference(case: &str) -> Checkpoint {
    Checkpoint::open(&case_dir(case).join("reference.safetensors")).unwrap()
}

fn valid_mel_frames(case: &str) -> usize {
    read_features(&case_dir(case).join("reference.safetensors"), 128, 8).unwrap().valid
}

#[test]
fn head_matches_upstream_from_our_own_asr_states() {
    for case in CASES {
        let r = reference(case);
        let (hidden_want, logits_want) =
            (r.f64("word_timestamp_hidden_states").unwrap(), r.f64("word_timestamp_logits").unwrap());
        let mut logits_of_each_name_set = Vec::new();
        for file in NAME_SETS {
            let (model, _) = load(case, file);
            let c = model.config();
            let features =
                read_features(&case_dir(case).join("reference.safetensors"), c.asr.mel_bins, c.asr.subsampling)
                    .unwrap();
            let outputs = model.encode_features(features, &mut |_, _, _| ControlFlow::Continue(())).block().unwrap();
            let head = model.word_timestamp_logits(&outputs).block().unwrap();
            assert_close(
                &format!("{case} {file}: word_timestamp_hidden_states"),
                &head.hidden,
                &hidden_want,
                TOLERANCE,
            );
            assert_close(&format!("{case} {file}: word_timestamp_logits"), &head.logits, &logits_want, TOLERANCE);
            logits_of_each_name_set.push(head.logits);
        }
        assert_eq!(logits_of_each_name_set[0], logits_of_each_name_set[1], "{case}: both name sets hold one model");
    }
}

#[test]
fn head_matches_upstream_from_the_reference_asr_states() {
    for case in CASES {
        let r = reference(case);
        let states: Vec<f32> = r.f64("asr_last_hidden_state").unwrap().iter().map(|&v| v as f32).collect();
        let valid_mel = valid_mel_frames(case);
        let (model, _) = load(case, NAME_SETS[0]);
        let head = model.word_timestamp_head().unwrap();
        let valid = valid_mel.div_ceil(model.config().asr.subsampling);
        let out = head.run(&states, valid).block().unwrap();
        let want = r.f64("word_timestamp_logits").unwrap();
        assert_close(&format!("{case}: logits from the reference ASR states"), &out.logits, &want, TOLERANCE);
    }
}

#[test]
fn cpu_reference_matches_upstream() {
    // The f64 reference differs from upstream's eager f64 run only by upstream's f32 softmax and f32 cos/sin.
    for case in CASES {
        for file in NAME_SETS {
            let r = reference(case);
            let ModelConfig::Transcribe(t) = ModelConfig::from_file(&case_dir(case).join("config.json")).unwrap()
            else {
                panic!()
            };
            let checkpoint = Checkpoint::open(&case_dir(case).join(file)).unwrap();
            let w = reference::load_word_timestamps(&checkpoint, &t.word_timestamps).unwrap();
            let states = r.f64("asr_last_hidden_state").unwrap();
            let valid = valid_mel_frames(case).div_ceil(t.asr.subsampling);
            let hidden =
                reference::word_timestamp_hidden_states(&w, &t.word_timestamps, &t.diarization.chunks, &states, valid)
                    .unwrap();
            let rows = hidden.len() / t.word_timestamps.encoder.hidden;
            let logits = reference::word_timestamp_logits(&w, &hidden, rows);
            let hidden32: Vec<f32> = hidden.iter().map(|&v| v as f32).collect();
            let logits32: Vec<f32> = logits.iter().map(|&v| v as f32).collect();
            let hidden_error = rel_frobenius(&hidden32, &r.f64("word_timestamp_hidden_states").unwrap());
            let logits_error = rel_frobenius(&logits32, &r.f64("word_timestamp_logits").unwrap());
            eprintln!("{case} {file}: f64 reference vs upstream: hidden {hidden_error:.3e}, logits {logits_error:.3e}");
            assert!(hidden_error < 1e-7 && logits_error < 1e-7, "{case} {file}: {hidden_error:e} {logits_error:e}");
        }
    }
}

#[test]
fn gpu_head_matches_the_cpu_reference_on_random_states() {
    let seed = fresh_seed();
    let mut rng = Rng::new(seed);
    for (case, frames, valid) in [("tiny-chunks", 47, 39), ("tiny-release-chunks", 13, 13)] {
        let (model, checkpoint) = load(case, NAME_SETS[1]);
        let t = model.config();
        let c = &t.word_timestamps;
        let states = rng.f32s(frames * c.encoder.hidden, 1.7);
        let got = model.word_timestamp_head().unwrap().run(&states, valid).block().unwrap();
        let w = reference::load_word_timestamps(&checkpoint, c).unwrap();
        let states64: Vec<f64> = states.iter().map(|&v| v as f64).collect();
        let hidden = reference::word_timestamp_hidden_states(&w, c, &t.diarization.chunks, &states64, valid).unwrap();
        let logits = reference::word_timestamp_logits(&w, &hidden, frames * c.upsampling_factor);
        let label = format!("{case}, {frames} frames ({valid} valid), seed {seed}");
        assert_close(&format!("{label}: hidden"), &got.hidden, &hidden, TOLERANCE);
        assert_close(&format!("{label}: logits"), &got.logits, &logits, TOLERANCE);
    }
}

#[test]
fn head_matches_the_committed_golden() {
    let path = case_dir("../golden/word-timestamps-odd.safetensors");
    let golden = Golden::open(Checkpoint::open(&path).unwrap()).unwrap();
    assert_eq!(golden.tower, GoldenTower::WordTimestamps);
    let ModelConfig::Transcribe(t) = &golden.config else { panic!("a Transcribe config") };
    let head = WordTimestampHead::load(test_gpu(), &golden.checkpoint, t, &test_options().matmul).block().unwrap();
    let states = golden.checkpoint.f32(keys::ASR_STATES).unwrap();
    let valid = golden.mask(keys::ASR_STATES_VALID).unwrap().iter().filter(|&&v| v).count();
    let got = head.run(&states, valid).block().unwrap();
    let want = |key| golden.checkpoint.f64(key).unwrap();
    // Its last chunk's window has no valid frame (upstream: NaN rows), which the head runs unmasked.
    assert_close("golden word timestamps: hidden", &got.hidden, &want(keys::EXPECTED_HIDDEN), TOLERANCE);
    assert_close("golden word timestamps: logits", &got.logits, &want(keys::EXPECTED_LOGITS), TOLERANCE);
}

#[test]
fn a_checkpoint_without_the_head_loads_and_says_so() {
    let weights = edited_weights(|name, t| (!name.starts_with("ctc_timestamp.")).then_some(t));
    let dir = model_dir(&weights);
    let Model::Transcribe(model) = Model::load(test_gpu(), dir.path(), &test_options()).block().unwrap() else {
        panic!()
    };
    let error = model.word_timestamp_head().err().expect("no head").to_string();
    assert!(error.contains("the checkpoint has no word-timestamp head"), "{error}");
}

#[test]
fn a_misshapen_head_is_reported_with_the_tensor_named() {
    let weights = edited_weights(|name, mut t| {
        if name == "ctc_timestamp.decoder.decoder_layers.0.weight" {
            t.shape[0] -= 1;
            let row = t.bytes.len() / (t.shape[0] + 1);
            t.bytes.truncate(t.bytes.len() - row);
        }
        Some(t)
    });
    let dir = model_dir(&weights);
    let error = Model::load(test_gpu(), dir.path(), &test_options()).block().err().expect("refused").to_string();
    assert!(error.contains("ctc_timestamp.decoder.decoder_layers.0.weight"), "{error}");
}
