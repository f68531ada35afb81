//! Output handling of every command: paths refused before any work, whole files with the usual mode, one success
//! line, standard input, `--channel`, and no messages from backends the run does not use.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use nemotron_testkit::towers::Checkpoint;

fn testdata(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata").join(path)
}

fn binary() -> Command {
    Command::new(env!("CARGO_BIN_EXE_nemotron-audio"))
}

fn run(args: &[&str]) -> Output {
    let output = binary().args(args).output().expect("the binary runs");
    check_stderr(args, &output);
    output
}

fn check_stderr(args: &[&str], output: &Output) {
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("panicked"), "{args:?} panicked: {stderr}");
    for dump in ["Os {", "kind: ", " { code", "Error(", "Custom {", "\"/", ".partial"] {
        assert!(!stderr.contains(dump), "{args:?} printed `{dump}`: {stderr}");
    }
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// The error line of a failed run, with its exit status.
fn error(args: &[&str]) -> (Option<i32>, String) {
    let output = run(args);
    let text = stderr(&output);
    let line = text.lines().find(|l| l.starts_with("error: ")).unwrap_or_else(|| panic!("no error in {text}"));
    (output.status.code(), line.to_owned())
}

/// Bad output paths are refused before the model is even looked at: the model named here does not exist, so a
/// run that reached it would fail naming it instead.
#[test]
fn output_paths_are_refused_before_any_work() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let wav = testdata("reference/tiny-chunks/audio.wav");
    let wav = wav.to_str().unwrap();
    let model = "/no/such/model-folder";
    let file = d.join("file.txt");
    std::fs::write(&file, "x").unwrap();
    let (file_s, dir_s) = (file.to_str().unwrap(), d.to_str().unwrap());
    let inside_file = format!("{file_s}/o.safetensors");
    let cases: Vec<(Vec<&str>, String)> = vec![
        (
            vec!["encode", "--model", model, "--audio", wav, "--out", "/nonexistent/dir/o.safetensors"],
            "cannot write /nonexistent/dir/o.safetensors: the folder /nonexistent/dir does not exist".into(),
        ),
        (
            vec!["encode", "--model", model, "--audio", wav, "--out", dir_s],
            format!("cannot write {dir_s}: it is a folder"),
        ),
        (
            vec!["encode", "--model", model, "--audio", wav, "--out", &inside_file],
            format!("cannot write {inside_file}: {file_s} is not a folder"),
        ),
        (
            vec!["diarize", "--model", model, "--audio", wav, "--plot", "/nonexistent/t.png"],
            "cannot write /nonexistent/t.png: the folder /nonexistent does not exist".into(),
        ),
        (
            vec!["diarize", "--model", model, "--audio", wav, "--rttm", "/nonexistent/t.rttm"],
            "cannot write /nonexistent/t.rttm".into(),
        ),
        (
            vec!["diarize", "--model", model, "--audio", wav, "--segments", "/nonexistent/t.json"],
            "cannot write /nonexistent/t.json".into(),
        ),
        (
            vec!["diarize", "--model", model, "--stream", "--audio", wav, "--rttm", "/nonexistent/s.rttm"],
            "cannot write /nonexistent/s.rttm".into(),
        ),
        (
            vec!["diarize", "--model", model, "--stream", "--audio", wav, "--out", dir_s],
            format!("cannot write {dir_s}: it is a folder"),
        ),
        (
            vec!["encode", "--model", model, "--audio", wav, "--out-dir", file_s],
            format!("cannot write into {file_s}: it is not a folder"),
        ),
    ];
    for (args, expected) in cases {
        let (code, line) = error(&args);
        assert_eq!(code, Some(1), "{args:?}: {line}");
        assert!(line.contains(&expected), "{args:?}: `{line}` should say `{expected}`");
        assert!(!line.contains("model-folder"), "{args:?} reached the model: {line}");
    }
    let (code, line) = error(&["diarize", "--model", model, "--audio", wav, "--rttm", file_s, "--plot", file_s]);
    assert_eq!(code, Some(2), "{line}");
    assert!(line.contains("named as two outputs"), "{line}");
    assert_eq!(std::fs::read_dir(d).unwrap().count(), 1, "nothing was left behind");
}

/// Files appear with the usual mode (0644 under umask 022, like RTTM and PNG), and one line says what was written.
#[test]
fn outputs_have_the_usual_mode_and_a_success_line() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("o.safetensors");
    let wav = testdata("reference/tiny-chunks/audio.wav");
    let script = format!(
        "umask 022; exec '{}' encode --demo --audio '{}' --out '{}'",
        env!("CARGO_BIN_EXE_nemotron-audio"),
        wav.display(),
        out.display()
    );
    let output = Command::new("sh").arg("-c").arg(&script).output().unwrap();
    check_stderr(&["encode"], &output);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stderr(&output);
    let line = format!("wrote {}: 6.4 s of audio, 80 tokens, ", out.display());
    assert!(text.lines().any(|l| l.starts_with(&line) && l.ends_with("× realtime")), "no success line in {text}");
    assert_eq!(std::fs::metadata(&out).unwrap().permissions().mode() & 0o777, 0o644);
    // `-q` hides the line.
    let output = run(&["-q", "encode", "--demo", "--audio", wav.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(output.status.success() && !stderr(&output).contains("wrote"), "{}", stderr(&output));
}

#[test]
fn diarize_outputs_have_the_usual_mode() {
    let dir = tempfile::tempdir().unwrap();
    let (out, rttm, plot) = (dir.path().join("d.safetensors"), dir.path().join("d.rttm"), dir.path().join("d.png"));
    let wav = testdata("reference/tiny-chunks/audio.wav");
    let script = format!(
        "umask 022; exec '{}' diarize --demo --audio '{}' --out '{}' --rttm '{}' --plot '{}'",
        env!("CARGO_BIN_EXE_nemotron-audio"),
        wav.display(),
        out.display(),
        rttm.display(),
        plot.display()
    );
    let output = Command::new("sh").arg("-c").arg(&script).output().unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(stderr(&output).contains(&format!("wrote {}, {}, {}: ", out.display(), rttm.display(), plot.display())));
    for path in [&out, &rttm, &plot] {
        assert_eq!(std::fs::metadata(path).unwrap().permissions().mode() & 0o777, 0o644, "{}", path.display());
    }
}

/// `--audio -` reads standard input (here an MP3, which is read whole first), and gives what the file gives.
#[test]
fn standard_input_is_an_audio_file() {
    let dir = tempfile::tempdir().unwrap();
    let (piped, direct) = (dir.path().join("piped.safetensors"), dir.path().join("direct.safetensors"));
    let mp3 = testdata("audio/signal.mp3");
    let mut child = binary()
        .args(["-q", "encode", "--demo", "--audio", "-", "--out", piped.to_str().unwrap()])
        .stdin(std::fs::File::open(&mp3).unwrap())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    assert!(child.wait().unwrap().success());
    let output = run(&["-q", "encode", "--demo", "--audio", mp3.to_str().unwrap(), "--out", direct.to_str().unwrap()]);
    assert!(output.status.success(), "{}", stderr(&output));
    let (a, b) = (Checkpoint::open(&piped).unwrap(), Checkpoint::open(&direct).unwrap());
    assert_eq!(a.f32("input_features").unwrap(), b.f32("input_features").unwrap());
}

/// `--channel N` picks a channel; one the file lacks is a usage error naming the channel count.
#[test]
fn channel_choice() {
    let dir = tempfile::tempdir().unwrap();
    let (left, mono) = (dir.path().join("left.safetensors"), dir.path().join("mono.safetensors"));
    let (stereo, source) = (testdata("audio/stereo.wav"), testdata("audio/source.wav"));
    let ok = |args: &[&str]| assert!(run(args).status.success(), "{args:?}");
    ok(&[
        "-q",
        "encode",
        "--demo",
        "--audio",
        stereo.to_str().unwrap(),
        "--channel",
        "0",
        "--out",
        left.to_str().unwrap(),
    ]);
    ok(&["-q", "encode", "--demo", "--audio", source.to_str().unwrap(), "--out", mono.to_str().unwrap()]);
    let (a, b) = (Checkpoint::open(&left).unwrap(), Checkpoint::open(&mono).unwrap());
    assert_eq!(a.f32("input_features").unwrap(), b.f32("input_features").unwrap(), "channel 0 is the left signal");
    let output = run(&[
        "encode",
        "--demo",
        "--audio",
        stereo.to_str().unwrap(),
        "--channel",
        "2",
        "--out",
        left.to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(stderr(&output).contains("channel 2 was asked for, but the audio has 2 channel(s)"), "{}", stderr(&output));
}

/// Mesa's device-select layer would print `XDG_RUNTIME_DIR is invalid` twice on a machine without a display
/// session; the program turns it off for itself.
#[test]
fn no_window_system_messages() {
    let output = binary().arg("info").env_remove("NODEVICE_SELECT").env_remove("XDG_RUNTIME_DIR").output().unwrap();
    assert!(output.status.success());
    let text = stderr(&output);
    assert!(!text.contains("XDG_RUNTIME_DIR"), "{text}");
    assert!(text.lines().all(|l| !l.starts_with("error")), "{text}");
}
