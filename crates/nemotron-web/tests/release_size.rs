//! A checkpoint at the release diarizer's shapes in a headless Chromium on WebGPU (`scripts/web-test.sh`): the
//! standalone Sortformer of `docs/model.md` §3.2 (512 wide, 31 layers, bf16 matrices, about 200 MB), with random
//! weights generated here into JS memory, handed to the package as a page hands the files it fetched, loaded (the
//! weights uploaded tensor by tensor, the kernels compiled) and run on a few seconds of audio. It prints what
//! `docs/browser.md` reports (wasm memory, GPU memory, load, compile and diarization times), checks that the load
//! holds the checkpoint once in wasm memory, and that the limits a browser may set too low refuse a checkpoint
//! naming them: storage bindings smaller than its largest tensor, files beyond wasm32's memory. One test in a
//! binary of its own, in that order: the wasm memory it measures is this model's alone.

#![cfg(target_arch = "wasm32")]

mod support;

use std::sync::Arc;

use audio_kernels::random::Rng;
use js_sys::{Array, Float32Array, Reflect, Uint8Array};
use nemotron_engine::{Engine, EngineOptions, GpuOptions, ModelConfig, ModelSource, NamedFiles};
use nemotron_towers::internals::names::ModelNames;
use nemotron_towers::internals::weights::{self, Expectations};
use nemotron_towers::synthetic::seeded_audio;
use nemotron_towers::tensor_file::Tensor;
use nemotron_web::WebError;
use nemotron_web::bindings::Diarizer;
use support::{CompileStart, file, message, now};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::{wasm_bindgen_test, wasm_bindgen_test_configure};

wasm_bindgen_test_configure!(run_in_browser);

/// The release diarizer's `config.json` (a standalone Nemotron 3 Diarization checkpoint): its shapes written out,
/// its schedule upstream's defaults.
const CONFIG: &str = r#"{"model_type": "nemotron3_diarization",
    "audio_config": {"hidden_size": 512, "intermediate_size": 2048, "num_attention_heads": 8,
        "num_hidden_layers": 31, "num_mel_bins": 128, "subsampling_factor": 8,
        "rope_parameters": {"partial_rotary_factor": 1.0, "rope_theta": 10000.0}},
    "head_config": {"hidden_size": 192, "num_speakers": 8}}"#;

/// Seconds of audio diarized: one step of the release schedule (up to 340 encoder frames, 27.2 s), 126 frames,
/// within one 128-row tile of the products, which on SwiftShader cost by the tile: a shorter recording would take
/// about as long.
const SECONDS: f64 = 10.0;

/// Bytes of the package's WebAssembly memory.
fn wasm_memory() -> u64 {
    core::arch::wasm32::memory_size(0) as u64 * 65_536
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / f64::from(1u32 << 20)
}

/// The tensors of [`CONFIG`]'s checkpoint: names and shapes.
fn release_tensors() -> Vec<(String, Vec<usize>)> {
    let config = ModelConfig::from_json(CONFIG).expect("the release config");
    let names = ModelNames::standalone_diarization();
    let mut expected = Expectations::default();
    weights::encoder(&mut expected, &names.diarization, &config.diarization().encoder).expect("the encoder's");
    weights::head(&mut expected, &names.head, config.diarization()).expect("the head's");
    expected.0
}

/// `model.safetensors` of [`CONFIG`] with random weights (the seeded draws of the golden files and `Model::random`:
/// bf16 matrices, f32 vectors), written into JS memory one tensor at a time, as a fetched file lives there: the
/// package's wasm memory holds none of it until the load copies it in. With the bytes of its largest tensor.
fn release_size_checkpoint(seed: u64) -> (Uint8Array, u64) {
    let mut rng = Rng::new(seed);
    let (mut header, mut data, mut offset, mut largest) = (serde_json::Map::new(), Vec::new(), 0usize, 0);
    for (name, shape) in &release_tensors() {
        let Tensor { dtype, shape, bytes } = weights::random_tensor(name, shape, &mut rng);
        largest = largest.max(bytes.len() as u64);
        let end = offset + bytes.len();
        header
            .insert(name.clone(), serde_json::json!({ "dtype": dtype, "shape": shape, "data_offsets": [offset, end] }));
        data.push(Uint8Array::from(bytes.as_slice()));
        offset = end;
    }
    let mut header = serde_json::to_vec(&header).expect("JSON");
    // The data starts 8-byte aligned, as safetensors writes it, so that bf16 tensors are read in place.
    header.resize(header.len().next_multiple_of(8), b' ');
    let start = 8 + header.len();
    let file = Uint8Array::new_with_length((start + offset) as u32);
    file.subarray(0, 8).copy_from(&(header.len() as u64).to_le_bytes());
    file.subarray(8, start as u32).copy_from(&header);
    let mut at = start as u32;
    for tensor in data {
        file.set(&tensor, at);
        at += tensor.length();
    }
    (file, largest)
}

fn number(object: &JsValue, key: &str) -> f64 {
    Reflect::get(object, &key.into()).ok().and_then(|v| v.as_f64()).unwrap_or(f64::NAN)
}

#[wasm_bindgen_test]
async fn a_release_size_checkpoint_loads_and_diarizes() {
    let started = now();
    let (weights, largest) = release_size_checkpoint(0x5e1e_a5ed);
    let checkpoint_bytes = u64::from(weights.length());
    let generated = now();
    let before = wasm_memory();

    let compiling = CompileStart::default();
    let config = Uint8Array::from(CONFIG.as_bytes());
    let files = Array::of2(&file("config.json", &config), &file("model.safetensors", &weights));
    let load = now();
    let diarizer = Diarizer::load(files, Some(compiling.callback()))
        .await
        .map_err(message)
        .expect("the release-size checkpoint loads");
    let loaded = now();
    let after_load = wasm_memory();
    let compile_started = compiling.started();
    let gpu_loaded = number(&diarizer.info().into(), "gpuMemory");

    let samples = Float32Array::from(seeded_audio(SECONDS, 7).as_slice());
    let start = now();
    let activity = JsFuture::from(diarizer.speaker_activity(samples, JsValue::UNDEFINED)).await.map_err(message);
    let diarized = now() - start;
    let activity = activity.expect("the release-size model diarizes");
    let logits = Reflect::get(&activity, &"logits".into()).expect("logits");
    let logits = logits.dyn_into::<Float32Array>().expect("a Float32Array").to_vec();
    let after_diarize = wasm_memory();
    let gpu_peak = number(&diarizer.info().into(), "gpuPeakMemory");

    let line = format!(
        "release-size checkpoint {:.1} MiB (generated in JS in {:.1} s); wasm memory {:.1} MiB before the load, \
         {:.1} MiB after, {:.1} MiB after diarizing; GPU memory {:.1} MiB after the load, {:.1} MiB at the peak \
         (diarizing); load {:.2} s (files copied and weights uploaded {:.2} s, kernels compiled {:.2} s); \
         {SECONDS} s of audio diarized in {:.2} s: {:.2} s of audio per second",
        mib(checkpoint_bytes),
        generated - started,
        mib(before),
        mib(after_load),
        mib(after_diarize),
        gpu_loaded / f64::from(1u32 << 20),
        gpu_peak / f64::from(1u32 << 20),
        loaded - load,
        compile_started - load,
        loaded - compile_started,
        diarized,
        SECONDS / diarized,
    );
    wasm_bindgen_test::console_log!("{line}");

    let frames = (SECONDS * 100.0) as usize;
    assert!(logits.len() >= frames * 8, "{} logits for {frames} frames of 8 speakers", logits.len());
    assert!(logits.iter().all(|v| v.is_finite()), "a logit is not finite");
    // The files are copied into wasm memory once and dropped after the upload; the rest of the growth is the
    // package's own (the upload's staging of one tensor, the GPU context, the allocator).
    let grown = after_load - before;
    assert!(grown <= checkpoint_bytes + (16 << 20), "the load grew wasm memory by {grown} bytes");

    drop(diarizer);
    let refused = load_with_bindings_below(&weights, largest).await;
    assert!(
        refused.contains("`max_storage_buffer_binding_size`") && refused.contains(&format!("requested {largest}")),
        "{refused}"
    );
    let refused = load_beyond_wasm_memory().await;
    let files = 5u64 << 30;
    let limit = "do not fit the package's WebAssembly memory (wasm32: at most 4 GiB in all and under 2 GiB per file";
    assert!(refused.contains(&format!("{files} bytes {limit}")), "{refused}");
}

/// What the engine says of the checkpoint `weights` on a device whose storage bindings hold less than its largest
/// tensor (`largest` bytes), as on a browser offering less; the package's own load asks for the adapter's limits,
/// which no JS argument lowers, so the engine's options do it here.
async fn load_with_bindings_below(weights: &Uint8Array, largest: u64) -> String {
    let mut bytes: Arc<[u8]> = std::iter::repeat_n(0u8, weights.length() as usize).collect();
    weights.copy_to(Arc::get_mut(&mut bytes).expect("held once"));
    let files = [("config.json".to_string(), Arc::from(CONFIG.as_bytes())), ("model.safetensors".to_string(), bytes)];
    let source = ModelSource::Files(NamedFiles::new(files).expect("two names"));
    let gpu = GpuOptions { max_storage_binding_size: Some(largest - 4), ..GpuOptions::default() };
    let options = EngineOptions { gpu, ..EngineOptions::default() };
    match Engine::load_async(&source, &options, &mut |_, _, _| {}).await {
        Ok(_) => panic!("a device with {} bytes per binding loaded a {largest}-byte tensor", largest - 4),
        Err(error) => WebError::from(error).sentence(),
    }
}

/// What the package says of checkpoint files that wasm32's memory cannot hold: five shards of 1 GiB, each holding
/// some of the diarizer's tensors by the index (one JS buffer handed over five times: the page holds 1 GiB, the
/// package would need 5). Refused before any shard is copied.
async fn load_beyond_wasm_memory() -> String {
    let shard = Uint8Array::new_with_length(1 << 30);
    let shards: Vec<String> = (1..=5).map(|i| format!("model-{i:05}-of-00005.safetensors")).collect();
    let weight_map: serde_json::Map<String, serde_json::Value> = release_tensors()
        .into_iter()
        .zip(shards.iter().cycle())
        .map(|((name, _), shard)| (name, shard.as_str().into()))
        .collect();
    let index = serde_json::json!({ "weight_map": weight_map }).to_string();
    let files = Array::of2(
        &file("config.json", &Uint8Array::from(CONFIG.as_bytes())),
        &file("model.safetensors.index.json", &Uint8Array::from(index.as_bytes())),
    );
    for name in &shards {
        files.push(&file(name, &shard));
    }
    Diarizer::load(files, None).await.err().map(message).unwrap_or_default()
}
