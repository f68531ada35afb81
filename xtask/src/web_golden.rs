//! The browser package's expected values (`testdata/web/`), made by the native code the CLI runs (on whatever
//! adapter is there: lavapipe in CI), which `crates/nemotron-web/tests/browser.rs` compares the browser's run to:
//!
//! - `<case>.safetensors` for the demo model and the upstream reference case diar-tiny: `samples` (the first
//!   seconds of the case's recording, 16 kHz), the speaker logits and probabilities `diarize` computes on them, and
//!   as metadata `segments_json` (`diarize --segments - --format json`'s text), `stream_events`
//!   (`diarize --stream`'s lines, the samples pushed in pieces of `stream_piece`) and `stream_segments_json` (the
//!   JSON segments file `diarize --stream --segments` writes at the stream's end);
//! - `known-speakers.safetensors`: diar-tiny with known speakers. `samples` (the first [`KNOWN_SECONDS`] of its
//!   recording), the enrolled `clips` (metadata: each name with its range of samples), and what
//!   `nemotron-audio enroll` then `diarize --speakers` give with that profile on the first `audio_samples` of the
//!   samples: `segments_rttm` (`--segments - --format rttm`), `stream_events` (`--stream`'s named lines, pieces of
//!   `stream_piece`) and `stream_segments_rttm`;
//! - `errors.json`: bad inputs and the CLI's sentence for each (`nemotron-audio diarize --model DIR` on a
//!   checkpoint folder without `DIR/`: the browser hands files over without a folder).
//!
//! `cargo xtask golden` writes them; `--check` fails when a committed file differs: metadata and samples exactly,
//! the GPU's f32 tensors beyond 1e-5 relative (another adapter or driver may round differently).

use std::collections::HashMap;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

use nemotron_engine::{
    Engine, EngineOptions, Input, ModelSource, SegmentFormat, SegmentSettings, StreamingMode, error_sentence,
    write_named_segments, write_segments,
};
use nemotron_towers::Checkpoint;
use nemotron_towers::tensor_file::{Tensor, serialize};

/// Seconds of each case's recording.
const SECONDS: f64 = 2.5;
/// Samples per push of the stream (the CLI's pieces of a file: 0.1 s).
const PIECE: usize = 1_600;
/// Bytes of diar-tiny's `model.safetensors` the truncated checkpoint keeps.
const TRUNCATED_BYTES: usize = 4_096;
/// The known speakers enrolled from diar-tiny's recording: name, first and last sample (two clips this random model
/// hears in two different slots).
const CLIPS: [(&str, usize, usize); 2] = [("alice", 0, 19_680), ("bob", 48_000, 79_840)];
/// Seconds of diar-tiny's recording the known speakers' file holds: the clips are in them.
const KNOWN_SECONDS: f64 = 5.0;
/// The text of the config that is not JSON.
const NOT_JSON: &str = "this is not JSON";

fn reference(case: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/reference").join(case)
}

fn web_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/web")
}

/// Every file, by name, with its fresh bytes.
pub fn build() -> Result<Vec<(String, Vec<u8>)>, String> {
    let demo = Engine::load(&ModelSource::Demo, &EngineOptions::default(), &mut |_, _, _| {}).map_err(sentence)?;
    let diar_tiny = ModelSource::Folder(reference("diar-tiny"));
    let diar_tiny = Engine::load(&diar_tiny, &EngineOptions::default(), &mut |_, _, _| {}).map_err(sentence)?;
    Ok(vec![
        ("demo.safetensors".into(), case(&demo, "tiny-release-chunks")?),
        ("diar-tiny.safetensors".into(), case(&diar_tiny, "diar-tiny")?),
        ("known-speakers.safetensors".into(), known_speakers(&diar_tiny)?),
        ("errors.json".into(), errors(&demo)?.into_bytes()),
    ])
}

fn sentence(error: nemotron_engine::EngineError) -> String {
    error_sentence(&error)
}

/// The samples of a case's recording (its first `duration` seconds).
fn recording(case: &str, duration: Option<f64>) -> Result<Vec<f32>, String> {
    let options = nemotron_engine::AudioOptions { duration, ..Default::default() };
    match Input::read_path(&reference(case).join("audio.wav"), &options).map_err(sentence)? {
        Input::Samples(samples) => Ok(samples),
        Input::Features(_) => Err("an audio file read as features".into()),
    }
}

/// One model's file: its run on the first [`SECONDS`] of the case's recording.
fn case(engine: &Engine, recording_of: &str) -> Result<Vec<u8>, String> {
    let samples = recording(recording_of, Some(SECONDS))?;
    let diarized =
        engine.diarize(Input::Samples(samples.clone()), &mut |_, _, _| ControlFlow::Continue(())).map_err(sentence)?;
    let segments = diarized.segments(&SegmentSettings::default()).map_err(sentence)?;
    let mut live = engine.stream(StreamingMode::LowLatency, &SegmentSettings::default()).map_err(sentence)?;
    let mut events = Vec::new();
    for piece in samples.chunks(PIECE) {
        events.extend(live.push(piece).map_err(sentence)?);
    }
    let (last, stream_segments) = live.finish().map_err(sentence)?;
    events.extend(last);
    let lines: Vec<String> = events.iter().map(nemotron_engine::event_json_line).collect();
    let metadata = HashMap::from([
        ("segments_json".to_string(), write_segments(&segments, SegmentFormat::Json, "audio")),
        ("stream_events".to_string(), lines.join("\n")),
        ("stream_piece".to_string(), PIECE.to_string()),
        ("stream_segments_json".to_string(), write_segments(&stream_segments, SegmentFormat::Json, "audio")),
    ]);
    let [logits, probabilities] = diarized.speaker_tensors();
    let tensors = [("samples", vec![samples.len()], samples.as_slice()), logits, probabilities]
        .map(|(name, shape, values)| (name.to_string(), Tensor::f32(shape, values)));
    serialize(&tensors, metadata).map_err(|e| e.to_string())
}

/// The first [`SECONDS`] of diar-tiny's recording diarized with the profile of [`CLIPS`], offline and live.
fn known_speakers(engine: &Engine) -> Result<Vec<u8>, String> {
    let samples = recording("diar-tiny", Some(KNOWN_SECONDS))?;
    let clips = CLIPS.iter().map(|&(name, start, end)| (name.to_string(), samples[start..end].to_vec())).collect();
    let (profile, _) = engine.enroll(clips).map_err(sentence)?;
    let audio = &samples[..(SECONDS * f64::from(nemotron_engine::io::audio::SAMPLE_RATE)) as usize];
    let input = Input::Samples(audio.to_vec());
    let diarized =
        engine.diarize_with_speakers(input, &profile, &mut |_, _, _| ControlFlow::Continue(())).map_err(sentence)?;
    let segments = diarized.segments(&SegmentSettings::default()).map_err(sentence)?;
    let segments_rttm = write_named_segments(&segments, SegmentFormat::Rttm, "audio", diarized.names());
    let mut live = engine
        .stream_with_speakers(StreamingMode::LowLatency, &SegmentSettings::default(), &profile)
        .map_err(sentence)?;
    let mut lines = Vec::new();
    for piece in audio.chunks(PIECE) {
        let events = live.push(piece).map_err(sentence)?;
        lines.extend(events.iter().map(|event| event.json_line_named(live.names())));
    }
    let recording = live.finish_recording().map_err(sentence)?;
    let names = recording.diarized.names();
    lines.extend(recording.events.iter().map(|event| event.json_line_named(names)));
    let clips: Vec<_> = CLIPS.iter().map(|(name, start, end)| serde_json::json!([name, start, end])).collect();
    let metadata = HashMap::from([
        ("audio_samples".to_string(), audio.len().to_string()),
        ("clips".to_string(), serde_json::Value::from(clips).to_string()),
        ("segments_rttm".to_string(), segments_rttm),
        ("stream_events".to_string(), lines.join("\n")),
        ("stream_piece".to_string(), PIECE.to_string()),
        (
            "stream_segments_rttm".to_string(),
            write_named_segments(&recording.segments, SegmentFormat::Rttm, "audio", names),
        ),
    ]);
    let tensors = [("samples".to_string(), Tensor::f32(vec![samples.len()], &samples))];
    serialize(&tensors, metadata).map_err(|e| e.to_string())
}

/// The bad inputs and the CLI's sentence for each, as JSON.
fn errors(demo: &Engine) -> Result<String, String> {
    let diar_tiny = reference("diar-tiny");
    let read = |name: &str| std::fs::read(diar_tiny.join(name)).map_err(|e| format!("{name}: {e}"));
    let (config, weights) = (read("config.json")?, read("model.safetensors")?);
    let truncated =
        refusal("truncated", &[("config.json", &config), ("model.safetensors", &weights[..TRUNCATED_BYTES])])?;
    let not_json = refusal("not-json", &[("config.json", NOT_JSON.as_bytes()), ("model.safetensors", &weights)])?;
    let empty = match demo.diarize(Input::Samples(Vec::new()), &mut |_, _, _| ControlFlow::Continue(())) {
        Err(error) => sentence(error),
        Ok(_) => return Err("empty audio was diarized".into()),
    };
    let json = serde_json::json!({
        "truncated_weights": { "keep_bytes": TRUNCATED_BYTES, "message": truncated },
        "config_not_json": { "config": NOT_JSON, "message": not_json },
        "empty_audio": { "message": empty },
    });
    serde_json::to_string_pretty(&json).map(|text| text + "\n").map_err(|e| e.to_string())
}

/// The CLI's sentence (without the folder) for a checkpoint folder of `files`.
fn refusal(name: &str, files: &[(&str, &[u8])]) -> Result<String, String> {
    let dir = std::env::temp_dir().join(format!("nemotron-web-golden-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for (file, bytes) in files {
        std::fs::write(dir.join(file), bytes).map_err(|e| format!("{file}: {e}"))?;
    }
    let loaded = Engine::load(&ModelSource::Folder(dir.clone()), &EngineOptions::default(), &mut |_, _, _| {});
    let _ = std::fs::remove_dir_all(&dir);
    match loaded {
        Err(error) => Ok(sentence(error).replace(&format!("{}/", dir.display()), "")),
        Ok(_) => Err(format!("the {name} checkpoint loaded")),
    }
}

/// Writes the files, or (`check`) names each committed one that differs from its fresh bytes.
pub fn run(check: bool, stale: &mut Vec<String>) -> Result<(), String> {
    let dir = web_dir();
    for (name, fresh) in build()? {
        let path = dir.join(&name);
        if !check {
            std::fs::create_dir_all(&dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
            std::fs::write(&path, &fresh).map_err(|e| format!("writing {}: {e}", path.display()))?;
            println!("wrote {} ({} bytes)", path.display(), fresh.len());
            continue;
        }
        let differs = match std::fs::read(&path) {
            Ok(committed) if name.ends_with(".json") => (committed != fresh).then(|| "differs".to_string()),
            Ok(committed) => same(&name, committed, fresh).err(),
            Err(e) => Some(e.to_string()),
        };
        match differs {
            Some(why) => stale.push(format!("{}: {why}", path.display())),
            None => println!("ok    {}", path.display()),
        }
    }
    Ok(())
}

/// Metadata and samples exactly; the speaker tensors (where the file has them) to 1e-5 relative.
fn same(name: &str, committed: Vec<u8>, fresh: Vec<u8>) -> Result<(), String> {
    let (a, b) = (
        Checkpoint::from_bytes(name, committed).map_err(|e| e.to_string())?,
        Checkpoint::from_bytes(name, fresh).map_err(|e| e.to_string())?,
    );
    if a.metadata() != b.metadata() {
        return Err("the segments or the stream events differ".into());
    }
    let (mut names_a, mut names_b): (Vec<&str>, Vec<&str>) = (a.names().collect(), b.names().collect());
    names_a.sort_unstable();
    names_b.sort_unstable();
    if names_a != names_b {
        return Err(format!("tensors {names_a:?}, fresh {names_b:?}"));
    }
    for tensor in names_a {
        let (va, vb) = (a.f32(tensor).map_err(|e| e.to_string())?, b.f32(tensor).map_err(|e| e.to_string())?);
        if va.len() != vb.len() {
            return Err(format!("`{tensor}` has {} values, fresh {}", va.len(), vb.len()));
        }
        let diff: f64 = va.iter().zip(&vb).map(|(x, y)| f64::from(x - y).powi(2)).sum::<f64>().sqrt();
        let norm: f64 = vb.iter().map(|y| f64::from(*y).powi(2)).sum::<f64>().sqrt();
        let limit = if tensor == "samples" { 0.0 } else { 1e-5 * norm };
        if diff > limit {
            return Err(format!("`{tensor}` differs by {:.3e} relative", diff / norm.max(f64::MIN_POSITIVE)));
        }
    }
    Ok(())
}
