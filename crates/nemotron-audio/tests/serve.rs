//! `nemotron-audio serve` run as a user runs it, against the other commands run the same way: every HTTP route
//! answers the bytes of the file the CLI writes for the same input and settings, a WebSocket session's events are
//! `diarize --stream`'s lines (for a file, and for raw PCM on standard input), SIGTERM ends a live stream with its
//! final events and the process exits cleanly, and bad flags are usage errors.

mod cli_support;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use cli_support::{fails, ok, path_str, run, testdata};
use serde_json::Value;
use tungstenite::Message;

/// A `serve --demo` process on an ephemeral loopback port, and its address.
struct Served {
    child: Child,
    address: String,
}

impl Served {
    fn start() -> Self {
        Self::start_with(&[])
    }

    /// `serve --demo` with `flags` besides.
    fn start_with(flags: &[&str]) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_nemotron-audio"))
            .args(["serve", "--demo", "--listen", "127.0.0.1:0"])
            .args(flags)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the binary runs");
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        let address = loop {
            let line = lines.next().expect("the server says where it listens").unwrap();
            if let Some(rest) = line.split("listening on http://").nth(1) {
                break rest.trim().to_string();
            }
        };
        // Keep draining the log so the server never blocks on a full pipe.
        std::thread::spawn(move || lines.for_each(drop));
        let served = Served { child, address };
        let deadline = Instant::now() + Duration::from_secs(120);
        while served.request("GET /health/ready", "", &[]).0 != 200 {
            assert!(Instant::now() < deadline, "not ready within 120 s");
            std::thread::sleep(Duration::from_millis(50));
        }
        served
    }

    /// One HTTP/1.1 request (`Connection: close`), `line` being its method and path: (status, body).
    fn request(&self, line: &str, content_type: &str, body: &[u8]) -> (u16, Vec<u8>) {
        let Ok(mut stream) = TcpStream::connect(&self.address) else { return (0, Vec::new()) };
        stream.set_read_timeout(Some(Duration::from_secs(120))).unwrap();
        let head = format!(
            "{line} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\nContent-Type: {content_type}\r\n\
             Content-Length: {}\r\n\r\n",
            self.address,
            body.len()
        );
        stream.write_all(head.as_bytes()).and_then(|()| stream.write_all(body)).unwrap();
        let mut response = Vec::new();
        stream.read_to_end(&mut response).unwrap();
        let split = response.windows(4).position(|w| w == b"\r\n\r\n").expect("a response head");
        let status = String::from_utf8_lossy(&response[9..12]).parse().unwrap();
        (status, response[split + 4..].to_vec())
    }

    /// A `multipart/form-data` POST of `file` (named `name`) and `fields` to `route`: the body, after checking
    /// the status is 200.
    fn post(&self, route: &str, name: &str, file: &[u8], fields: &[(&str, &str)]) -> Vec<u8> {
        const BOUNDARY: &str = "nemotron-test-boundary-7d1f";
        let mut body = Vec::new();
        for (key, value) in fields {
            let part = format!("--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"{key}\"\r\n\r\n{value}\r\n");
            body.extend_from_slice(part.as_bytes());
        }
        let head = format!(
            "--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{name}\"\r\n\
             Content-Type: application/octet-stream\r\n\r\n"
        );
        body.extend_from_slice(head.as_bytes());
        body.extend_from_slice(file);
        body.extend_from_slice(format!("\r\n--{BOUNDARY}--\r\n").as_bytes());
        let content_type = format!("multipart/form-data; boundary={BOUNDARY}");
        let (status, answer) = self.request(&format!("POST {route}"), &content_type, &body);
        assert_eq!(status, 200, "{route} {fields:?}: {}", String::from_utf8_lossy(&answer));
        answer
    }

    /// A WebSocket session on the stream route, with every read bounded.
    fn connect(&self) -> tungstenite::WebSocket<tungstenite::stream::MaybeTlsStream<TcpStream>> {
        let (socket, _) = tungstenite::connect(format!("ws://{}/v1/audio/diarizations/stream", self.address))
            .expect("the upgrade succeeds");
        if let tungstenite::stream::MaybeTlsStream::Plain(stream) = socket.get_ref() {
            stream.set_read_timeout(Some(Duration::from_secs(120))).unwrap();
        }
        socket
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `seconds` of the demo's recording (32-bit float, 16 kHz mono) from `offset`, written to `dir/name` as the same
/// kind of WAV, so that what the server hears from an f32 stream is exactly what `diarize` reads from the file; and
/// its samples.
fn recording(dir: &Path, name: &str, offset: f64, seconds: f64) -> (PathBuf, Vec<f32>) {
    let source = hound::WavReader::open(testdata("reference/tiny-release-chunks/audio.wav")).unwrap();
    let spec = source.spec();
    assert_eq!((spec.sample_rate, spec.channels, spec.sample_format), (16_000, 1, hound::SampleFormat::Float));
    let samples: Vec<f32> = source
        .into_samples::<f32>()
        .skip((offset * 16_000.0) as usize)
        .take((seconds * 16_000.0) as usize)
        .map(Result::unwrap)
        .collect();
    let path = dir.join(name);
    let mut writer = hound::WavWriter::create(&path, spec).unwrap();
    samples.iter().for_each(|&s| writer.write_sample(s).unwrap());
    writer.finalize().unwrap();
    (path, samples)
}

fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn every_http_route_answers_the_bytes_of_the_clis_file() {
    let dir = tempfile::tempdir().unwrap();
    let (wav, _) = recording(dir.path(), "meeting.wav", 3.0, 6.0);
    let (wav, audio) = (path_str(&wav), read(&wav));
    let out = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let served = Served::start();
    let diarize = |flags: &[&str], fields: &[(&str, &str)], file: &str| {
        let mut args = vec!["diarize", "--demo", "--quiet", "--audio", wav, "--segments", file];
        args.extend_from_slice(flags);
        ok(&args);
        assert_eq!(
            served.post("/v1/audio/diarizations", "meeting.wav", &audio, fields),
            read(Path::new(file)),
            "{flags:?}"
        );
    };
    diarize(&[], &[], &out("default.json"));
    diarize(&["--uri", "room_4"], &[("response_format", "rttm"), ("uri", "room_4")], &out("uri.rttm"));
    diarize(&["--threshold", "0.3"], &[("response_format", "csv"), ("threshold", "0.3")], &out("threshold.csv"));
    diarize(
        &["--onset", "0.6", "--offset", "0.4", "--min-duration-off", "0.2"],
        &[("response_format", "rttm"), ("onset", "0.6"), ("offset", "0.4"), ("min_duration_off", "0.2")],
        &out("postprocessing.rttm"),
    );
    diarize(&["--max-speakers", "2"], &[("max_speakers", "2")], &out("two.json"));
    // The raw file as the body, the fields in the query string; the RTTM file id of a raw body is `audio`.
    let rttm = out("raw.rttm");
    ok(&["diarize", "--demo", "--quiet", "--audio", wav, "--rttm", &rttm, "--uri", "audio"]);
    let (status, body) = served.request("POST /v1/audio/diarizations?response_format=rttm", "audio/wav", &audio);
    assert_eq!((status, body), (200, read(Path::new(&rttm))));

    let transcript = "<spk:0> hello there <spk:1> good morning to you";
    let (json, srt, vtt) = (out("words.json"), out("words.srt"), out("words.vtt"));
    let args = ["align", "--demo", "--quiet", "--audio", wav, "--transcript", transcript];
    ok(&[&args[..], &["--out", &json, "--srt", &srt, "--vtt", &vtt]].concat());
    for (format, file) in [("json", &json), ("srt", &srt), ("vtt", &vtt)] {
        let fields = [("transcript", transcript), ("response_format", format)];
        assert_eq!(served.post("/v1/audio/alignments", "meeting.wav", &audio, &fields), read(Path::new(file)));
    }

    for (flag, value) in [(None, "false"), (Some("--word-timestamps"), "true")] {
        let file = out(&format!("features-{value}.safetensors"));
        let args = ["encode", "--demo", "--quiet", "--audio", wav, "--out", &file];
        ok(&[&args[..], flag.as_slice()].concat());
        let fields = [("word_timestamps", value)];
        assert!(served.post("/v1/audio/features", "m.wav", &audio, &fields) == read(Path::new(&file)), "{flag:?}");
    }
}

/// `serve --diarizer-only` loads the diarizer alone, as `diarize` does: it diarizes to the CLI's bytes, and the routes
/// that need the whole Transcribe model answer 422 saying so.
#[test]
fn a_diarizer_only_server_diarizes_and_refuses_features_and_alignments() {
    let dir = tempfile::tempdir().unwrap();
    let (wav, _) = recording(dir.path(), "meeting.wav", 3.0, 6.0);
    let (wav, audio) = (path_str(&wav), read(&wav));
    let rttm = dir.path().join("meeting.rttm");
    ok(&["diarize", "--demo", "--quiet", "--audio", wav, "--rttm", path_str(&rttm), "--uri", "audio"]);
    let served = Served::start_with(&["--diarizer-only"]);
    let (status, body) = served.request("POST /v1/audio/diarizations?response_format=rttm", "audio/wav", &audio);
    assert_eq!((status, body), (200, read(&rttm)));
    for route in ["/v1/audio/features", "/v1/audio/alignments?transcript=hello"] {
        let (status, body) = served.request(&format!("POST {route}"), "audio/wav", &audio);
        let body = String::from_utf8_lossy(&body);
        assert_eq!(status, 422, "{route}: {body}");
        assert!(body.contains("diarizer alone"), "{route}: {body}");
    }
}

/// Runs one WebSocket session: `start`, `frames`, then `session.end` unless `sigterm` (which SIGTERMs `served`
/// once the server has taken in `seconds` of audio instead). Returns the segment events, `session.done` and the
/// close code.
fn stream(
    served: &mut Served,
    start: &str,
    frames: &[Vec<u8>],
    seconds: f64,
    sigterm: bool,
) -> (Vec<String>, Value, u16) {
    let mut socket = served.connect();
    socket.send(Message::text(start)).unwrap();
    for frame in frames {
        socket.send(Message::binary(frame.clone())).unwrap();
    }
    if !sigterm {
        socket.send(Message::text(r#"{"type":"session.end"}"#)).unwrap();
    }
    let (mut events, mut done, mut terminated) = (Vec::new(), Value::Null, false);
    loop {
        match socket.read() {
            Ok(Message::Text(text)) => {
                let value: Value = serde_json::from_str(&text).unwrap();
                match value["type"].as_str() {
                    None => events.push(text.to_string()),
                    Some("audio.ack")
                        if sigterm && !terminated && value["processed_until"].as_f64() >= Some(seconds) =>
                    {
                        let pid = served.child.id().to_string();
                        assert!(Command::new("kill").args(["-TERM", &pid]).status().unwrap().success());
                        terminated = true;
                    }
                    Some("session.done") => done = value,
                    Some("error") => panic!("the session failed: {text}"),
                    _ => {}
                }
            }
            Ok(Message::Close(frame)) => {
                assert_eq!(terminated, sigterm, "the server acknowledged all the audio before it closed");
                return (events, done, frame.map_or(0, |f| u16::from(f.code)));
            }
            Ok(_) => {}
            Err(e) => panic!("the stream broke: {e}"),
        }
    }
}

/// The lines `diarize --stream` printed and the segment file it wrote (parsed).
fn cli_stream(args: &[&str], stdin: Option<&[u8]>, segments: &Path) -> (Vec<String>, Value) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_nemotron-audio"))
        .args(["diarize", "--demo", "--quiet", "--stream", "--segments", path_str(segments)])
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    if let Some(bytes) = stdin {
        input.write_all(bytes).unwrap();
    }
    drop(input);
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "diarize --stream {args:?}: {}", String::from_utf8_lossy(&output.stderr));
    let lines = String::from_utf8(output.stdout).unwrap().lines().map(str::to_string).collect();
    (lines, serde_json::from_slice(&read(segments)).unwrap())
}

#[test]
fn streams_are_diarize_streams_and_sigterm_ends_one_with_its_final_events() {
    let dir = tempfile::tempdir().unwrap();
    let mut served = Served::start();

    // Raw s16 PCM, post-processing settings: the server's session and `--audio - --raw-format s16le` hear the same.
    let (_, samples) = recording(dir.path(), "raw.wav", 20.0, 5.0);
    let pcm: Vec<u8> =
        samples.iter().flat_map(|&s| ((s * 32768.0).round().clamp(-32768.0, 32767.0) as i16).to_le_bytes()).collect();
    let flags = ["--latency", "very-low", "--onset", "0.55", "--offset", "0.45", "--min-duration-on", "0.1"];
    let raw = ["--audio", "-", "--raw-rate", "16000", "--raw-format", "s16le"];
    let (lines, segments) = cli_stream(&[&raw[..], &flags].concat(), Some(&pcm), &dir.path().join("raw.json"));
    assert!(!lines.is_empty(), "the demo model finds segments in the test audio: the comparison is not empty");
    let start = r#"{"type":"session.start","latency":"very-low","sample_rate":16000,"encoding":"pcm_s16le","onset":0.55,"offset":0.45,"min_duration_on":0.1}"#;
    // Frames of an odd byte count: samples straddle frames.
    let frames: Vec<Vec<u8>> = pcm.chunks(3_001).map(<[u8]>::to_vec).collect();
    let (events, done, close) = stream(&mut served, start, &frames, 5.0, false);
    assert_eq!((events, &done["segments"], close), (lines, &segments, 1000));

    // A file, streamed as f32; SIGTERM once the server has taken all of it in: the final events, then close 1001.
    let (wav, samples) = recording(dir.path(), "file.wav", 12.0, 4.0);
    let (lines, segments) = cli_stream(&["--audio", path_str(&wav)], None, &dir.path().join("file.json"));
    let frames: Vec<Vec<u8>> =
        samples.chunks(8_000).map(|p| p.iter().flat_map(|s| s.to_le_bytes()).collect()).collect();
    let start = r#"{"type":"session.start","sample_rate":16000,"encoding":"pcm_f32le"}"#;
    let (events, done, close) = stream(&mut served, start, &frames, 4.0, true);
    assert_eq!((events, &done["segments"], close), (lines, &segments, 1001));
    assert_eq!(done["seconds"], 4.0);
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(status) = served.child.try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < deadline, "the server did not exit within 60 s of SIGTERM");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success(), "exit status after SIGTERM: {status}");
}

#[test]
fn bad_serve_flags_are_usage_errors_and_a_taken_address_a_runtime_error() {
    for args in [
        &["serve"][..],
        &["serve", "--demo", "--listen", "localhost"],
        &["serve", "--demo", "--max-sessions", "0"],
        &["serve", "--demo", "--request-timeout", "-1"],
        &["serve", "--demo", "--session-buffer", "0.5"],
        &["serve", "--demo", "--socket-send-buffer", "0"],
    ] {
        assert_eq!(run(args).status.code(), Some(2), "{args:?}");
    }
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("keys");
    std::fs::write(&empty, "# nobody yet\n").unwrap();
    fails(&["serve", "--demo", "--api-key-file", path_str(&empty)], "holds no key");
    fails(&["serve", "--demo", "--api-key-file", path_str(&dir.path().join("none"))], "cannot read the API key file");
    // A runtime error, not a usage error: the address is taken.
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = taken.local_addr().unwrap().to_string();
    fails(&["serve", "--demo", "--listen", &address], &format!("cannot listen on {address}"));
}

/// `serve --openapi` prints what `GET /openapi.json` answers, loading no model; with a model it is a usage error.
#[test]
fn serve_prints_its_openapi_document() {
    let printed = ok(&["serve", "--openapi"]);
    let document: Value = serde_json::from_slice(&printed.stdout).expect("the document is JSON");
    let served: Value = serde_json::from_str(nemotron_server::OPENAPI.as_str()).unwrap();
    assert_eq!(document, served);
    assert_eq!(document["openapi"], "3.1.0");
    assert_eq!(run(&["serve", "--openapi", "--demo"]).status.code(), Some(2));
}
