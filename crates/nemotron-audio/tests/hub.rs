//! Models by Hub id, against a stand-in Hub on 127.0.0.1 (no network): what is fetched, the cache layout, offline
//! reuse, and the errors.

mod stand_in_hub;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use nemotron_testkit::towers::Checkpoint;
use stand_in_hub::{ALIGNMENT_TOKENIZER, COMMIT, LM_SHARD, StandInHub, sharded_repo, single_file_repo};

fn testdata(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata").join(path)
}

/// `nemotron-audio args` with the Hub settings of `env` (HF_* variables of the caller removed).
fn run(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_nemotron-audio"));
    for name in ["HF_HOME", "HF_HUB_CACHE", "HF_HUB_OFFLINE", "HF_ENDPOINT", "HF_TOKEN", "HF_TOKEN_PATH"] {
        command.env_remove(name);
    }
    let output = command.args(args).envs(env.iter().copied()).output().expect("the binary runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("panicked"), "{args:?} panicked: {stderr}");
    output
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn repos() -> HashMap<String, stand_in_hub::Files> {
    let case = testdata("reference/tiny-release-chunks");
    let mut no_config = single_file_repo(&case);
    no_config.remove("config.json");
    HashMap::from([
        ("owner/tiny-sharded".to_owned(), sharded_repo(&case)),
        ("owner/tiny".to_owned(), single_file_repo(&case)),
        ("owner/no-config".to_owned(), no_config),
    ])
}

#[test]
fn a_hub_id_fetches_only_the_audio_shards_then_runs_offline_from_the_cache() {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let hf_home = home.path().to_str().unwrap();
    let hub = StandInHub::start(repos());
    let online = [("HF_HOME", hf_home), ("HF_ENDPOINT", hub.endpoint.as_str())];

    // `download` fetches config, index, the three audio shards and the alignment tokenizer, and prints the
    // snapshot folder.
    let output = run(&["download", "owner/tiny-sharded"], &online);
    assert!(output.status.success(), "{}", stderr(&output));
    let repo = home.path().join("hub/models--owner--tiny-sharded");
    let snapshot = repo.join("snapshots").join(COMMIT);
    assert_eq!(String::from_utf8_lossy(&output.stdout).trim(), snapshot.to_str().unwrap());
    let requested = hub.requests();
    assert!(requested.iter().all(|r| !r.contains(LM_SHARD)), "the LM shard was requested: {requested:?}");
    for file in [
        "config.json",
        "model.safetensors.index.json",
        "model-00001-of-00004.safetensors",
        "model-00002-of-00004.safetensors",
        "model-00003-of-00004.safetensors",
        ALIGNMENT_TOKENIZER,
    ] {
        assert!(requested.iter().any(|r| r.ends_with(&format!("/resolve/main/{file}"))), "{file} not fetched");
        let link = snapshot.join(file);
        assert!(link.symlink_metadata().unwrap().file_type().is_symlink(), "{file} is a link into blobs/");
        assert!(std::fs::canonicalize(&link).unwrap().starts_with(std::fs::canonicalize(repo.join("blobs")).unwrap()));
    }
    assert!(!snapshot.join(LM_SHARD).exists());
    assert_eq!(std::fs::read_to_string(repo.join("refs/main")).unwrap(), COMMIT);
    assert_eq!(
        std::fs::read_dir(repo.join("blobs"))
            .unwrap()
            .filter(|e| { !e.as_ref().unwrap().file_name().to_string_lossy().ends_with(".lock") })
            .count(),
        6
    );

    // The Hub gone and offline: `encode` runs from the cache, and matches the same weights read from the folder.
    drop(hub);
    let wav = testdata("reference/tiny-chunks/audio.wav");
    let (from_hub, from_folder) = (work.path().join("hub.safetensors"), work.path().join("folder.safetensors"));
    let offline = [("HF_HOME", hf_home), ("HF_HUB_OFFLINE", "1")];
    let args = |model: &str, out: &Path| {
        ["-q", "encode", "--model", model, "--audio", wav.to_str().unwrap(), "--out", out.to_str().unwrap()]
            .map(str::to_owned)
    };
    let output = run(&args("owner/tiny-sharded", &from_hub).each_ref().map(String::as_str), &offline);
    assert!(output.status.success(), "{}", stderr(&output));
    let folder = testdata("reference/tiny-release-chunks");
    let output = run(&args(folder.to_str().unwrap(), &from_folder).each_ref().map(String::as_str), &offline);
    assert!(output.status.success(), "{}", stderr(&output));
    let (a, b) = (Checkpoint::open(&from_hub).unwrap(), Checkpoint::open(&from_folder).unwrap());
    for name in ["input_features", "asr_last_hidden_state", "speaker_logits", "audio_embeds"] {
        assert_eq!(a.f32(name).unwrap(), b.f32(name).unwrap(), "{name}");
    }
    // `align` finds the fetched alignment tokenizer in the snapshot.
    let align =
        ["-q", "align", "--model", "owner/tiny-sharded", "--audio", wav.to_str().unwrap(), "--transcript", "hi"];
    let output = run(&align, &offline);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(String::from_utf8_lossy(&output.stdout).contains("\"chunks\""));
}

#[test]
fn a_single_file_checkpoint_is_fetched_whole_and_a_warm_cache_needs_no_hub() {
    let home = tempfile::tempdir().unwrap();
    let hf_home = home.path().to_str().unwrap();
    let hub = StandInHub::start(repos());
    let output = run(&["-q", "download", "owner/tiny"], &[("HF_HOME", hf_home), ("HF_ENDPOINT", &hub.endpoint)]);
    assert!(output.status.success(), "{}", stderr(&output));
    let requested = hub.requests();
    assert!(requested.iter().any(|r| r.ends_with("/resolve/main/model.safetensors")), "{requested:?}");
    drop(hub);
    // Online but the Hub unreachable: the cached snapshot is used, with a warning.
    let dead = dead_endpoint();
    let output = run(&["download", "owner/tiny"], &[("HF_HOME", hf_home), ("HF_ENDPOINT", &dead)]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(stderr(&output).contains("using the cache"), "{}", stderr(&output));
}

/// `diarize --stream` takes a Hub id like every command: a standalone diarization checkpoint fetched into the cache
/// gives the events of the same checkpoint read from its folder.
#[test]
fn diarize_stream_takes_a_hub_id() {
    let home = tempfile::tempdir().unwrap();
    let hf_home = home.path().to_str().unwrap();
    let case = testdata("reference/diar-tiny");
    let hub = StandInHub::start(HashMap::from([("owner/diar-tiny".to_owned(), single_file_repo(&case))]));
    let wav = testdata("reference/diar-tiny/audio.wav");
    let stream = |model: &str, env: &[(&str, &str)]| {
        let args = ["-q", "diarize", "--model", model, "--stream", "--latency", "ultra-low", "--audio"];
        let output = run(&[&args[..], &[wav.to_str().unwrap()]].concat(), env);
        assert!(output.status.success(), "{model}: {}", stderr(&output));
        String::from_utf8(output.stdout).unwrap()
    };
    let from_hub = stream("owner/diar-tiny", &[("HF_HOME", hf_home), ("HF_ENDPOINT", &hub.endpoint)]);
    let from_folder = stream(case.to_str().unwrap(), &[("HF_HOME", hf_home), ("HF_HUB_OFFLINE", "1")]);
    assert!(from_hub.lines().count() > 3, "events: {from_hub}");
    assert_eq!(from_hub, from_folder);
}

/// An address where nothing listens.
fn dead_endpoint() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    format!("http://{}", listener.local_addr().unwrap())
}

/// Exit status 1 and one `error:` line containing every needle, with no Debug text.
fn fails(args: &[&str], env: &[(&str, &str)], needles: &[&str]) {
    let output = run(args, env);
    let text = stderr(&output);
    assert_eq!(output.status.code(), Some(1), "{args:?}: {text}");
    let line = text.lines().find(|l| l.starts_with("error: ")).unwrap_or_else(|| panic!("no error line: {text}"));
    for needle in needles {
        assert!(line.contains(needle), "`{line}` should say `{needle}`");
    }
    for debug in ["Os {", "kind:", " { ", "Error(", "Transport("] {
        assert!(!line.contains(debug), "Debug text in `{line}`");
    }
}

#[test]
fn hub_errors_say_what_is_missing() {
    let home = tempfile::tempdir().unwrap();
    let hf_home = home.path().to_str().unwrap();
    let hub = StandInHub::start(repos());
    let env = [("HF_HOME", hf_home), ("HF_ENDPOINT", hub.endpoint.as_str())];
    let wav = testdata("reference/tiny-chunks/audio.wav");
    let wav = wav.to_str().unwrap();
    let out = home.path().join("out.safetensors");
    let out = out.to_str().unwrap();
    fails(&["download", "owner/nope"], &env, &["repository owner/nope was not found on", &hub.endpoint]);
    fails(
        &["encode", "--model", "owner/nope", "--audio", wav, "--out", out],
        &env,
        &["repository owner/nope was not found", "nor is there a folder owner/nope"],
    );
    fails(&["download", "owner/tiny@v9"], &env, &["owner/tiny has no revision `v9`"]);
    fails(&["download", "owner/no-config"], &env, &["config.json is not in owner/no-config at revision `main`"]);
    let dead = dead_endpoint();
    fails(
        &["download", "owner/tiny"],
        &[("HF_HOME", hf_home), ("HF_ENDPOINT", &dead)],
        &[&format!("cannot reach {dead}"), "config.json of owner/tiny@main is not in the cache"],
    );
    fails(
        &["download", "owner/tiny"],
        &[("HF_HOME", hf_home), ("HF_HUB_OFFLINE", "1")],
        &["config.json of owner/tiny@main is not in the cache", "HF_HUB_OFFLINE"],
    );
    fails(&["encode", "--model", "not/a/repo", "--audio", wav, "--out", out], &env, &["no such file or folder"]);
    assert!(!Path::new(out).exists());
}
