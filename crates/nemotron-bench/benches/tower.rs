//! Criterion benches of the towers at small shapes (they run on any adapter, lavapipe included;
//! release-sized timings are `nemotron-audio bench`).

use std::ops::ControlFlow;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use nemotron_bench::tower_flops;
use nemotron_testkit::{Rng, test_gpu, test_matmul};
use nemotron_towers::blocking::Block;
use nemotron_towers::tower::{InputKind, Sequence};
use nemotron_towers::{Model, ModelConfig, ModelOptions};

const CONFIG: &str = r#"{"model_type":"nemo_speechlm","audio_config":{"asr_config":{"hidden_size":128,
    "intermediate_size":256,"num_attention_heads":2,"num_hidden_layers":2},"diarization_config":{"audio_config":
    {"hidden_size":64,"intermediate_size":128,"num_attention_heads":2,"num_hidden_layers":2},
    "head_config":{"hidden_size":32}}},"text_config":{"hidden_size":96}}"#;

fn towers(c: &mut Criterion) {
    let gpu = test_gpu();
    let config = ModelConfig::from_json(CONFIG).expect("bench config");
    let Ok(Model::Transcribe(model)) =
        Model::random(gpu, &config, 1, &ModelOptions { matmul: test_matmul(), ..ModelOptions::default() }).block()
    else {
        panic!("random transcribe model")
    };
    let mut rng = Rng::new(2);
    let mut group = c.benchmark_group("tower");
    group.sample_size(10);
    for (name, tower, kind, rows) in [
        ("asr-features-96", model.asr_tower(), InputKind::Features, 96),
        ("diarization-embedded-96", model.diarizer().sortformer().tower(), InputKind::Embeddings, 96),
    ] {
        let width = if kind == InputKind::Features { tower.config().stacked_features() } else { tower.config().hidden };
        let input = rng.f32s(rows * width, 1.0);
        let valid = vec![true; rows];
        let batch = [Sequence { rows: &input, valid: &valid }];
        group.throughput(Throughput::Elements(tower_flops(tower.config(), rows, kind == InputKind::Features) as u64));
        group.bench_function(name, |b| b.iter(|| tower.forward(kind, &batch).block().expect("forward")));
    }
    let audio: Vec<f32> = (0..16_000).map(|i| (i as f32 * 0.05).sin() * 0.1).collect();
    group.bench_function("audio-module-1s", |b| {
        b.iter(|| model.encode_audio(&audio, &mut |_, _, _| ControlFlow::Continue(())).block().expect("encode"))
    });
    group.finish();
}

criterion_group!(benches, towers);
criterion_main!(benches);
