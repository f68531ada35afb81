//! The GPU towers against the f64 CPU reference: committed goldens, the upstream reference
//! checkpoints in both name sets on fresh random inputs, batching, and checkpoint errors.

use nemotron_towers::blocking::Block;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

use nemotron_testkit::golden::{self, Golden, GoldenCase, GoldenTower, keys};
use nemotron_testkit::reference::{self, TowerInput};
use nemotron_testkit::{Rng, assert_close, fresh_seed, rel_frobenius, test_gpu, test_matmul};
use nemotron_towers::sortformer::Sortformer;
use nemotron_towers::tensor_file::{Tensor, serialize};
use nemotron_towers::tower::{InputKind, Sequence, Tower, TowerKind};
use nemotron_towers::{Checkpoint, EncoderConfig, ModelConfig};

const TOLERANCE: f64 = 1e-5;

fn testdata(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata").join(path)
}

fn golden_files() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(testdata("golden"))
        .expect("testdata/golden exists (run `cargo xtask golden`)")
        .map(|e| e.expect("readable entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "safetensors"))
        .collect();
    files.sort();
    assert!(files.len() >= 3, "expected the committed golden files, found {files:?}");
    files
}

#[test]
fn towers_match_the_committed_goldens() {
    let gpu = test_gpu();
    for path in golden_files() {
        let golden = Golden::open(Checkpoint::open(&path).unwrap()).unwrap();
        if golden.tower == GoldenTower::WordTimestamps {
            continue; // tests/word_timestamps.rs
        }
        let name = path.file_stem().unwrap().to_string_lossy().to_string();
        let (config, kind) = golden.encoder().unwrap();
        let tower = Tower::load(gpu, &golden.checkpoint, kind, config, &test_matmul()).unwrap();
        let features = golden.checkpoint.f32(keys::FEATURES).unwrap();
        let valid = golden.mask(keys::FEATURES_VALID).unwrap();
        let got = tower.forward(InputKind::Features, &[Sequence { rows: &features, valid: &valid }]).block().unwrap();
        let want = golden.checkpoint.f64(keys::EXPECTED_FEATURES).unwrap();
        assert_close(&format!("{name}: features"), &got[0], &want, TOLERANCE);
        if golden.tower == GoldenTower::Diarization {
            let c = golden.config.diarization();
            let sortformer = Sortformer::load(gpu, &golden.checkpoint, c, &test_matmul()).block().unwrap();
            let rows = golden.checkpoint.f32(keys::EMBEDDINGS).unwrap();
            let valid = golden.mask(keys::EMBEDDINGS_VALID).unwrap();
            let encoded =
                sortformer.tower().forward(InputKind::Embeddings, &[Sequence { rows: &rows, valid: &valid }]).block();
            let want = golden.checkpoint.f64(keys::EXPECTED_EMBEDDINGS).unwrap();
            assert_close(&format!("{name}: embedded rows"), &encoded.unwrap()[0], &want, TOLERANCE);
            let logits = sortformer.logits(&rows, &valid).block().unwrap();
            let want = golden.checkpoint.f64(keys::EXPECTED_LOGITS).unwrap();
            assert_close(&format!("{name}: speaker logits"), &logits, &want, TOLERANCE);
        }
    }
}

/// The upstream `tiny-chunks` checkpoint under one of its two names sets.
fn reference_checkpoint(file: &str) -> (Checkpoint, ModelConfig) {
    let dir = testdata("reference/tiny-chunks");
    let config = ModelConfig::from_file(&dir.join("config.json")).unwrap();
    (Checkpoint::open(&dir.join(file)).unwrap(), config)
}

fn random_sequence(rng: &mut Rng, rows: usize, width: usize, valid: usize) -> (Vec<f32>, Vec<bool>) {
    (rng.f32s(rows * width, 1.7), (0..rows).map(|i| i < valid).collect())
}

fn check_against_reference(
    label: &str,
    tower: &Tower,
    checkpoint: &Checkpoint,
    kind: TowerKind,
    c: &EncoderConfig,
    seed: u64,
) -> Vec<f32> {
    let mut rng = Rng::new(seed);
    let (rows, valid) = random_sequence(&mut rng, 43, c.stacked_features(), 38);
    let host = reference::load_encoder(checkpoint, kind, c).unwrap();
    let rows64: Vec<f64> = rows.iter().map(|&v| v as f64).collect();
    let want = reference::encoder(&host, c, TowerInput::Features(&rows64), &valid).unwrap();
    let got = tower.forward(InputKind::Features, &[Sequence { rows: &rows, valid: &valid }]).block().unwrap();
    assert_close(&format!("{label} (seed {seed})"), &got[0], &want, TOLERANCE);
    got.into_iter().next().unwrap()
}

/// Heads of 128 and 80 dims, as the release ASR tower and word-timestamp head have: on a device with 16×16
/// cooperative matrices their attention takes the tensor cores, with q/k norm and RoPE in its operand pass and the
/// q/k/v product in two slices where that fills the waves better (k of 512 and 640). Built in memory as the golden
/// files are (too large to commit), checked against the f64 reference through both matrix paths.
#[test]
fn towers_with_wide_heads_match_the_cpu_reference() {
    let gpu = test_gpu();
    let recipe = |name: &'static str, config_json: &'static str, seed: u64| GoldenCase {
        name,
        tower: GoldenTower::Asr,
        transformers_names: false,
        config_json,
        rows: 45,
        valid: 40,
        embedded_rows: 0,
        seed,
    };
    let cases = [
        recipe(
            "asr-heads-of-128",
            r#"{"model_type":"nemo_speechlm","audio_config":{"asr_config":{"hidden_size":512,
                "intermediate_size":64,"num_attention_heads":4,"num_hidden_layers":2,"num_mel_bins":8,
                "subsampling_factor":4,"rope_parameters":{"partial_rotary_factor":0.5,"rope_theta":10000.0}},
                "diarization_config":{"audio_config":{"hidden_size":16,"intermediate_size":16,"num_attention_heads":2,
                "num_hidden_layers":1,"num_mel_bins":8,"subsampling_factor":4}}},"text_config":{"hidden_size":24}}"#,
            fresh_seed(),
        ),
        recipe(
            "asr-heads-of-80",
            r#"{"model_type":"nemo_speechlm","audio_config":{"asr_config":{"hidden_size":640,
                "intermediate_size":48,"num_attention_heads":8,"num_hidden_layers":1,"num_mel_bins":8,
                "subsampling_factor":8,"rope_parameters":{"partial_rotary_factor":0.25,"rope_theta":10000.0}},
                "diarization_config":{"audio_config":{"hidden_size":16,"intermediate_size":16,"num_attention_heads":2,
                "num_hidden_layers":1,"num_mel_bins":8,"subsampling_factor":8}}},"text_config":{"hidden_size":24}}"#,
            fresh_seed(),
        ),
    ];
    for case in cases {
        let golden = Golden::open(Checkpoint::from_bytes(case.name, golden::build(&case).unwrap()).unwrap()).unwrap();
        let (config, kind) = golden.encoder().unwrap();
        let tower = Tower::load(gpu, &golden.checkpoint, kind, config, &test_matmul()).unwrap();
        let features = golden.checkpoint.f32(keys::FEATURES).unwrap();
        let valid = golden.mask(keys::FEATURES_VALID).unwrap();
        let got = tower.forward(InputKind::Features, &[Sequence { rows: &features, valid: &valid }]).block().unwrap();
        let want = golden.checkpoint.f64(keys::EXPECTED_FEATURES).unwrap();
        assert_close(&format!("{} (seed {})", case.name, case.seed), &got[0], &want, TOLERANCE);
    }
}

#[test]
fn both_name_sets_load_and_match_the_cpu_reference() {
    let gpu = test_gpu();
    let seed = fresh_seed();
    let mut outputs = Vec::new();
    for file in ["model.safetensors", "model.hf.safetensors"] {
        let (checkpoint, config) = reference_checkpoint(file);
        let ModelConfig::Transcribe(t) = &config else { panic!("tiny-chunks is a Transcribe checkpoint") };
        let (asr, diarization) = (TowerKind::Asr, TowerKind::Diarization);
        let asr_tower = Tower::load(gpu, &checkpoint, asr, &t.asr, &test_matmul()).unwrap();
        let diar_tower = Tower::load(gpu, &checkpoint, diarization, &t.diarization.encoder, &test_matmul()).unwrap();
        outputs.push((
            check_against_reference(&format!("{file}: ASR tower"), &asr_tower, &checkpoint, asr, &t.asr, seed),
            check_against_reference(
                &format!("{file}: Sortformer encoder"),
                &diar_tower,
                &checkpoint,
                diarization,
                &t.diarization.encoder,
                seed,
            ),
        ));
    }
    assert_eq!(
        outputs[0], outputs[1],
        "the two name sets hold the same weights, so the GPU outputs must agree exactly"
    );
}

#[test]
fn the_standalone_diarization_checkpoint_loads_and_matches_the_cpu_reference() {
    let gpu = test_gpu();
    let dir = testdata("reference/diar-tiny");
    let config = ModelConfig::from_file(&dir.join("config.json")).unwrap();
    let ModelConfig::Diarization(c) = &config else { panic!("diar-tiny is a diarization checkpoint") };
    let checkpoint = Checkpoint::open(&dir).unwrap();
    let sortformer = Sortformer::load(gpu, &checkpoint, c, &test_matmul()).block().unwrap();
    check_against_reference(
        "diar-tiny: Sortformer encoder",
        sortformer.tower(),
        &checkpoint,
        TowerKind::Diarization,
        &c.encoder,
        fresh_seed(),
    );
}

#[test]
fn a_batch_of_three_equals_three_single_calls() {
    let gpu = test_gpu();
    let (checkpoint, config) = reference_checkpoint("model.safetensors");
    let ModelConfig::Transcribe(t) = &config else { panic!("tiny-chunks is a Transcribe checkpoint") };
    let tower = Tower::load(gpu, &checkpoint, TowerKind::Asr, &t.asr, &test_matmul()).unwrap();
    let mut rng = Rng::new(fresh_seed());
    let width = t.asr.stacked_features();
    let inputs: Vec<(Vec<f32>, Vec<bool>)> =
        [(17, 17), (40, 33), (5, 1)].iter().map(|&(n, v)| random_sequence(&mut rng, n, width, v)).collect();
    let batch: Vec<Sequence<'_>> = inputs.iter().map(|(rows, valid)| Sequence { rows, valid }).collect();
    let batched = tower.forward(InputKind::Features, &batch).block().unwrap();
    for (i, sequence) in batch.iter().enumerate() {
        let single = tower.forward(InputKind::Features, std::slice::from_ref(sequence)).block().unwrap();
        let single64: Vec<f64> = single[0].iter().map(|&v| v as f64).collect();
        let error = rel_frobenius(&batched[i], &single64);
        eprintln!("sequence {i}: batched vs single relative error {error:.3e}");
        assert!(error <= 1e-6, "sequence {i}: batched output differs from the single call by {error:.3e}");
    }
}

/// `forward_into` reads the rows asked for, each sequence from its own first row, into poisoned targets (the bits of
/// `forward` on the same batch), and refuses targets that do not fit their sequences.
#[test]
fn forward_into_reads_the_asked_rows_and_refuses_others() {
    let gpu = test_gpu();
    let (checkpoint, config) = reference_checkpoint("model.safetensors");
    let ModelConfig::Transcribe(t) = &config else { panic!("tiny-chunks is a Transcribe checkpoint") };
    let tower = Tower::load(gpu, &checkpoint, TowerKind::Asr, &t.asr, &test_matmul()).unwrap();
    let d = t.asr.hidden;
    let mut rng = Rng::new(fresh_seed());
    let width = t.asr.stacked_features();
    let inputs: Vec<(Vec<f32>, Vec<bool>)> =
        [(23, 20), (9, 9)].iter().map(|&(n, v)| random_sequence(&mut rng, n, width, v)).collect();
    let batch: Vec<Sequence<'_>> = inputs.iter().map(|(rows, valid)| Sequence { rows, valid }).collect();
    let whole = tower.forward(InputKind::Features, &batch).block().unwrap();
    let (mut first, mut second) = (vec![f32::NAN; 14 * d], vec![f32::NAN; 9 * d]);
    tower.forward_into(InputKind::Features, &batch, &mut [(5, &mut first[..]), (0, &mut second[..])]).block().unwrap();
    let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<u32>>();
    assert!(bits(&first) == bits(&whole[0][5 * d..19 * d]), "rows 5..19 of the first sequence");
    assert!(bits(&second) == bits(&whole[1]), "all of the second");
    // (first row, values) of each target: past the first sequence's end, not whole rows, one target for two sequences.
    let refused = [
        ("past the end", vec![(5, 19 * d), (0, 9 * d)]),
        ("not whole rows", vec![(0, d + 1), (0, 9 * d)]),
        ("one target for two sequences", vec![(0, 14 * d)]),
    ];
    for (what, shapes) in refused {
        let mut buffers: Vec<Vec<f32>> = shapes.iter().map(|&(_, len)| vec![0.0; len]).collect();
        let mut targets: Vec<(usize, &mut [f32])> =
            shapes.iter().zip(buffers.iter_mut()).map(|(&(first, _), b)| (first, b.as_mut_slice())).collect();
        match tower.forward_into(InputKind::Features, &batch, &mut targets).block() {
            Err(nemotron_towers::Error::Length { .. }) => {}
            other => panic!("{what}: expected a Length error, got {:?}", other.map(|_| ())),
        }
    }
}

/// Two runs of a tower on the same input give the same bits: nothing in the kernels depends on scheduling (split
/// products are added in order, no atomics).
#[test]
fn a_tower_gives_the_same_bits_twice() {
    let gpu = test_gpu();
    let (checkpoint, config) = reference_checkpoint("model.safetensors");
    let ModelConfig::Transcribe(t) = &config else { panic!("tiny-chunks is a Transcribe checkpoint") };
    for (kind, c) in [(TowerKind::Asr, &t.asr), (TowerKind::Diarization, &t.diarization.encoder)] {
        let tower = Tower::load(gpu, &checkpoint, kind, c, &test_matmul()).unwrap();
        let (rows, valid) = random_sequence(&mut Rng::new(fresh_seed()), 77, c.stacked_features(), 70);
        let batch = [Sequence { rows: &rows, valid: &valid }];
        let first = tower.forward(InputKind::Features, &batch).block().unwrap();
        let second = tower.forward(InputKind::Features, &batch).block().unwrap();
        let bits = |out: &Vec<Vec<f32>>| out.iter().flatten().map(|v| v.to_bits()).collect::<Vec<u32>>();
        assert!(bits(&first) == bits(&second), "{kind:?}: two runs differ");
    }
}

#[test]
fn missing_and_misshaped_tensors_are_each_named() {
    let gpu = test_gpu();
    let (checkpoint, config) = reference_checkpoint("model.safetensors");
    let ModelConfig::Transcribe(t) = &config else { panic!("tiny-chunks is a Transcribe checkpoint") };
    let dropped = "perception.encoder.asr_encoder.layers.1.ffn.net.0.weight";
    let reshaped = "perception.encoder.asr_encoder.pre_encode.proj.weight";
    let tensors: Vec<(String, Tensor)> = checkpoint
        .names()
        .filter(|n| *n != dropped)
        .map(|n| {
            let t = checkpoint.tensor(n).unwrap();
            let shape = if n == reshaped { vec![t.shape[1], t.shape[0]] } else { t.shape.to_vec() };
            (n.to_string(), Tensor { dtype: t.dtype, shape, bytes: t.bytes.to_vec() })
        })
        .collect();
    let broken = Checkpoint::from_bytes("broken", serialize(&tensors, HashMap::new()).unwrap()).unwrap();
    let error = match Tower::load(gpu, &broken, TowerKind::Asr, &t.asr, &test_matmul()) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("a checkpoint with a missing and a mis-shaped tensor loaded"),
    };
    assert!(error.contains(&format!("missing tensor `{dropped}` (expected shape [128, 64])")), "{error}");
    assert!(error.contains(&format!("tensor `{reshaped}` has shape [1024, 64], expected [64, 1024]")), "{error}");
}

/// `checkpoint` with every BF16 tensor re-encoded by `encode` (values as f32 → bytes, dtype).
fn reencoded(checkpoint: &Checkpoint, dtype: safetensors::Dtype, encode: impl Fn(f32) -> Vec<u8>) -> Checkpoint {
    let tensors: Vec<(String, Tensor)> = checkpoint
        .names()
        .map(|n| {
            let t = checkpoint.tensor(n).unwrap();
            if t.dtype != safetensors::Dtype::BF16 {
                return (n.to_string(), Tensor { dtype: t.dtype, shape: t.shape.to_vec(), bytes: t.bytes.to_vec() });
            }
            let bytes = checkpoint.f32(n).unwrap().into_iter().flat_map(&encode).collect();
            (n.to_string(), Tensor { dtype, shape: t.shape.to_vec(), bytes })
        })
        .collect();
    Checkpoint::from_bytes("re-encoded", serialize(&tensors, HashMap::new()).unwrap()).unwrap()
}

#[test]
fn matrices_stored_as_f32_or_f16_are_converted_to_bf16() {
    let gpu = test_gpu();
    let (checkpoint, config) = reference_checkpoint("model.safetensors");
    let ModelConfig::Transcribe(t) = &config else { panic!("tiny-chunks is a Transcribe checkpoint") };
    let mut rng = Rng::new(fresh_seed());
    let (rows, valid) = random_sequence(&mut rng, 21, t.asr.stacked_features(), 21);
    let run = |c: &Checkpoint| {
        let tower = Tower::load(gpu, c, TowerKind::Asr, &t.asr, &test_matmul()).unwrap();
        tower.forward(InputKind::Features, &[Sequence { rows: &rows, valid: &valid }]).block().unwrap().remove(0)
    };
    // bf16 widens exactly to f32, so an F32 checkpoint holds the same weights.
    let f32_copy = reencoded(&checkpoint, safetensors::Dtype::F32, |v| v.to_le_bytes().to_vec());
    assert_eq!(run(&f32_copy), run(&checkpoint), "matrices stored as F32");
    // f16 holds tiny values less exactly than bf16: the F16 checkpoint's weights are its own f16
    // values, which loading rounds to bf16 — the same as a BF16 checkpoint of those values.
    let f16_copy = reencoded(&checkpoint, safetensors::Dtype::F16, |v| half::f16::from_f32(v).to_le_bytes().to_vec());
    let rounded = reencoded(&checkpoint, safetensors::Dtype::BF16, |v| {
        half::bf16::from_f32(half::f16::from_f32(v).to_f32()).to_le_bytes().to_vec()
    });
    assert_eq!(run(&f16_copy), run(&rounded), "matrices stored as F16");
}
