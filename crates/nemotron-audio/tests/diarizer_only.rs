//! `diarize` and `enroll` load only the diarizer of a Transcribe checkpoint. In a sharded copy of the bundled tiny
//! checkpoint whose ASR shard (the ASR tower, fusion, projector and word-timestamp head) is missing, they run —
//! offline, live, as a batch, with enrolled speakers — and write the bytes they write on the whole checkpoint; `encode`,
//! which needs the ASR tower, names the missing shard.

mod cli_support;

use std::collections::HashMap;
use std::path::Path;

use cli_support::{fails, ok, path_str, testdata};
use nemotron_testkit::towers::Checkpoint;
use nemotron_testkit::towers::tensor_file::{Tensor, serialize};

const DIARIZER_SHARD: &str = "model-00001-of-00003.safetensors";
const FRONT_END_SHARD: &str = "model-00002-of-00003.safetensors";
const ASR_SHARD: &str = "model-00003-of-00003.safetensors";

/// `tiny-release-chunks` in `dir` as config, index and the diarizer's and the front end's shards; the index names an
/// ASR shard that is not there.
fn without_the_asr_shard(dir: &Path) {
    let case = testdata("reference/tiny-release-chunks");
    let checkpoint = Checkpoint::open(&case.join("model.safetensors")).unwrap();
    let mut shards: HashMap<&str, Vec<(String, Tensor)>> = HashMap::new();
    let mut weight_map = serde_json::Map::new();
    for name in checkpoint.names() {
        let shard = match name {
            n if n.starts_with("perception.encoder.diarization_model.") => DIARIZER_SHARD,
            n if n.starts_with("perception.preprocessor.") => FRONT_END_SHARD,
            _ => ASR_SHARD,
        };
        let t = checkpoint.tensor(name).unwrap();
        let tensor = Tensor { dtype: t.dtype, shape: t.shape.to_vec(), bytes: t.bytes.to_vec() };
        shards.entry(shard).or_default().push((name.to_owned(), tensor));
        weight_map.insert(name.to_owned(), shard.into());
    }
    for shard in [DIARIZER_SHARD, FRONT_END_SHARD] {
        let tensors = shards.remove(shard).unwrap_or_else(|| panic!("no tensor for {shard}"));
        std::fs::write(dir.join(shard), serialize(&tensors, Default::default()).unwrap()).unwrap();
    }
    assert!(shards.contains_key(ASR_SHARD), "the case has ASR tensors");
    let index = serde_json::json!({ "metadata": { "total_size": 0 }, "weight_map": weight_map });
    std::fs::write(dir.join("model.safetensors.index.json"), index.to_string()).unwrap();
    std::fs::copy(case.join("config.json"), dir.join("config.json")).unwrap();
}

#[test]
fn diarize_and_enroll_read_only_the_diarizers_shards() {
    let dir = tempfile::tempdir().unwrap();
    let partial = dir.path().join("partial");
    std::fs::create_dir(&partial).unwrap();
    without_the_asr_shard(&partial);
    let whole = testdata("reference/tiny-release-chunks");
    let audio = testdata("reference/tiny-release-chunks/audio.wav");
    let audio = path_str(&audio);

    // Each output as (name, bytes): a text with the folder of the run written as `{run}` (the batch's manifest names
    // its files).
    let outputs = |model: &Path, run: &str| -> Vec<(String, Vec<u8>)> {
        let model = path_str(model);
        let out = |name: &str| dir.path().join(run).join(name);
        std::fs::create_dir(dir.path().join(run)).unwrap();
        let profile = out("profile.safetensors");
        let speaker = format!("sam={audio}");
        ok(&["-q", "enroll", "--model", model, "--speaker", &speaker, "--out", path_str(&profile)]);
        let (segments, plot, live, named) = (out("segments.json"), out("plot.svg"), out("live.rttm"), out("named.csv"));
        let diarize = ["-q", "diarize", "--model", model, "--audio", audio];
        ok(&[&diarize[..], &["--segments", path_str(&segments), "--format", "json", "--plot", path_str(&plot)]]
            .concat());
        ok(&[&diarize[..], &["--stream", "--segments", path_str(&live)]].concat());
        ok(&[&diarize[..], &["--speakers", path_str(&profile), "--segments", path_str(&named), "--format", "csv"]]
            .concat());
        ok(&["-q", "diarize", "--model", model, "--audio", audio, "--out-dir", path_str(&out("batch"))]);
        let mut batch: Vec<_> = std::fs::read_dir(out("batch")).unwrap().map(|e| e.unwrap().path()).collect();
        batch.sort();
        assert!(batch.len() >= 2, "the batch wrote {batch:?}");
        let folder = path_str(&dir.path().join(run)).to_owned();
        [vec![profile, segments, plot, live, named], batch]
            .concat()
            .iter()
            .map(|path| {
                let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                let name = path.strip_prefix(dir.path().join(run)).unwrap().display().to_string();
                match String::from_utf8(bytes) {
                    Ok(text) => (name, text.replace(&folder, "{run}").into_bytes()),
                    Err(binary) => (name, binary.into_bytes()),
                }
            })
            .collect()
    };
    let (partial_outputs, whole_outputs) = (outputs(&partial, "from-partial"), outputs(&whole, "from-whole"));
    assert_eq!(partial_outputs.len(), whole_outputs.len());
    for ((name, a), (other, b)) in partial_outputs.iter().zip(&whole_outputs) {
        assert_eq!(name, other);
        assert!(a == b, "{name}: the diarizer-only load wrote other bytes than the whole checkpoint's");
    }

    let out = dir.path().join("features.safetensors");
    fails(&["-q", "encode", "--model", path_str(&partial), "--audio", audio, "--out", path_str(&out)], ASR_SHARD);
}
