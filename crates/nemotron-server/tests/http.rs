//! The HTTP routes on the demo model: each response's bytes are the engine's output for the same input and settings
//! (the functions the CLI writes its files with), and every bad request gets its documented status and code while
//! the server keeps serving.

mod common;

use std::ops::ControlFlow;
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{audio, client, engine, start, start_on, wav};
use nemotron_engine::{
    AlignRequest, Engine, EngineOptions, Input, ModelOptions, ModelSource, Origin, SegmentFormat, SegmentSettings,
    write_segments,
};
use nemotron_server::{ApiKeys, ServerOptions};
use reqwest::multipart::{Form, Part};
use reqwest::{Response, StatusCode};

/// The modules the page at `/` loads, served beside it (the browser package's page modules among them); they are not
/// API, so the OpenAPI document leaves them out.
const PAGE_SCRIPTS: [&str; 5] = ["/page.js", "/decode.js", "/capture.js", "/capture-processor.js", "/timeline.js"];

fn upload(wav: &[u8], fields: &[(&str, &str)]) -> Form {
    let form = Form::new().part("file", Part::bytes(wav.to_vec()).file_name("meeting.wav"));
    fields.iter().fold(form, |form, (key, value)| form.text(key.to_string(), value.to_string()))
}

/// The error of a response: (status, code), checking the body's shape.
async fn error_of(response: Response) -> (StatusCode, String) {
    let status = response.status();
    let body: serde_json::Value = response.json().await.expect("a JSON error body");
    let code = body["error"]["code"].as_str().expect("error.code").to_string();
    assert!(body["error"]["message"].as_str().is_some_and(|m| !m.is_empty()), "error.message: {body}");
    (status, code)
}

/// The segments `diarize --segments` writes for `samples` with `settings` in `format`.
fn expected_segments(samples: &[f32], settings: &SegmentSettings, format: SegmentFormat, uri: &str) -> String {
    let diarized =
        engine().diarize(Input::Samples(samples.to_vec()), &mut |_, _, _| ControlFlow::Continue(())).unwrap();
    let segments = diarized.segments(settings).unwrap();
    write_segments(&segments, format, uri)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn diarizations_are_the_clis_segment_files() {
    let server = start(ServerOptions::default()).await;
    let samples = audio(3.0, 6.0);
    let file = wav(&samples);
    let post_processing = SegmentSettings { onset: Some(0.6), min_duration_off: Some(0.2), ..Default::default() };
    // (form fields, the settings they mean, the format, the RTTM file id)
    type Case<'a> = (&'a [(&'a str, &'a str)], SegmentSettings, SegmentFormat, &'a str);
    let cases: [Case; 4] = [
        (&[], SegmentSettings::default(), SegmentFormat::Json, "meeting"),
        (&[("response_format", "rttm"), ("uri", "room 4")], SegmentSettings::default(), SegmentFormat::Rttm, "room 4"),
        (
            &[("response_format", "csv"), ("threshold", "0.3")],
            SegmentSettings { threshold: Some(0.3), ..Default::default() },
            SegmentFormat::Csv,
            "meeting",
        ),
        (
            &[("response_format", "rttm"), ("onset", "0.6"), ("min_duration_off", "0.2")],
            post_processing,
            SegmentFormat::Rttm,
            "meeting",
        ),
    ];
    for (fields, settings, format, uri) in cases {
        let response =
            client().post(server.url("/v1/audio/diarizations")).multipart(upload(&file, fields)).send().await.unwrap();
        assert_eq!(response.status(), 200, "{fields:?}");
        assert_eq!(response.text().await.unwrap(), expected_segments(&samples, &settings, format, uri), "{fields:?}");
    }
    // The raw file as the body, the fields in the query string.
    let response = client()
        .post(server.url("/v1/audio/diarizations?response_format=rttm&max_speakers=1"))
        .header("content-type", "audio/wav")
        .body(file.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let settings = SegmentSettings { max_speakers: Some(1), ..Default::default() };
    assert_eq!(response.text().await.unwrap(), expected_segments(&samples, &settings, SegmentFormat::Rttm, "audio"));
    server.stop().await.unwrap();
}

/// Concurrent uploads of different lengths are diarized side by side (`--offline-batch` of them per GPU submission,
/// the others joining as places free up): each answer is still the CLI's file for that recording alone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_diarizations_are_each_the_clis_file_alone() {
    let server = start(ServerOptions { offline_batch: 3, ..ServerOptions::default() }).await;
    let recordings: Vec<Vec<f32>> =
        [(0.0, 1.0), (2.0, 31.0), (5.0, 3.0), (1.0, 12.0), (7.0, 0.5), (3.0, 20.0), (0.5, 6.0)]
            .iter()
            .map(|&(start, seconds)| audio(start, seconds))
            .collect();
    let requests = recordings.iter().map(|samples| {
        let form = upload(&wav(samples), &[("response_format", "rttm")]);
        client().post(server.url("/v1/audio/diarizations")).multipart(form).send()
    });
    let responses = futures_util::future::join_all(requests).await;
    for (i, (response, samples)) in responses.into_iter().zip(&recordings).enumerate() {
        let response = response.unwrap();
        assert_eq!(response.status(), 200, "recording {i}");
        let want = expected_segments(samples, &SegmentSettings::default(), SegmentFormat::Rttm, "meeting");
        assert_eq!(response.text().await.unwrap(), want, "recording {i}");
    }
    // Every recording was in the queue at one of its steps at least.
    let metrics = client().get(server.url("/metrics")).send().await.unwrap().text().await.unwrap();
    let sum: f64 = metrics
        .lines()
        .find_map(|line| line.strip_prefix("nemotron_diarize_queue_recordings_sum "))
        .map_or(0.0, |value| value.parse().unwrap());
    assert!(sum >= recordings.len() as f64, "queue sizes at the steps sum to {sum}: {metrics}");
    server.stop().await.unwrap();
}

/// A device lost while concurrent uploads share a step (`ModelOptions::lose_device_at_step_of`, through wgpu's own
/// loss) is the server's failure for each of them, not a fault of their audio: 500 `internal`, naming the loss.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_device_lost_in_a_shared_step_fails_every_upload_in_it_as_the_servers_fault() {
    let model = ModelOptions { lose_device_at_step_of: Some(2), ..ModelOptions::default() };
    let options = EngineOptions { model, ..EngineOptions::default() };
    let engine = Engine::load(&ModelSource::Demo, &options, &mut |_, _, _| {}).expect("the demo model loads");
    let server = start_on(ServerOptions::default(), Arc::new(engine)).await;
    let post = |samples: &[f32]| {
        client().post(server.url("/v1/audio/diarizations")).multipart(upload(&wav(samples), &[])).send()
    };
    // Four minutes, whose steps run alone (the device stays) until the second upload joins them.
    let long: Vec<f32> = (0..8).flat_map(|_| audio(0.0, 30.0)).collect();
    let first = tokio::spawn(post(&long));
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let metrics = client().get(server.url("/metrics")).send().await.unwrap().text().await.unwrap();
        let count = metrics.lines().find_map(|line| line.strip_prefix("nemotron_diarize_queue_recordings_count "));
        if count.is_some_and(|steps| steps != "0") {
            break;
        }
        assert!(Instant::now() < deadline, "the first upload's steps did not start within 60 s");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let second = post(&audio(2.0, 5.0)).await;
    for (i, response) in [first.await.unwrap(), second].into_iter().enumerate() {
        let response = response.unwrap();
        let status = response.status();
        let body: serde_json::Value = response.json().await.expect("a JSON error body");
        let code = body["error"]["code"].as_str();
        assert_eq!((status, code), (StatusCode::INTERNAL_SERVER_ERROR, Some("internal")), "upload {i}: {body}");
        let message = body["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains("GPU device lost"), "upload {i}: {message}");
    }
    server.stop().await.unwrap();
}

/// `nemotron_gpu_memory_bytes` is the engine's GPU memory at the scrape: a gauge in bytes, more than nothing (the
/// weights) and at most the most the context has held.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_metrics_export_the_gpu_memory_in_use() {
    let server = start(ServerOptions::default()).await;
    let metrics = client().get(server.url("/metrics")).send().await.unwrap().text().await.unwrap();
    for line in ["# TYPE nemotron_gpu_memory_bytes gauge", "# UNIT nemotron_gpu_memory_bytes bytes"] {
        assert!(metrics.lines().any(|l| l == line), "no `{line}` in\n{metrics}");
    }
    let bytes: u64 = metrics
        .lines()
        .find_map(|line| line.strip_prefix("nemotron_gpu_memory_bytes "))
        .unwrap_or_else(|| panic!("no GPU memory in\n{metrics}"))
        .parse()
        .unwrap();
    let peak = engine().gpu().peak_memory();
    assert!(bytes > 0 && bytes <= peak, "{bytes} bytes in use, {peak} at the peak");
    server.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn alignments_and_features_are_the_clis_files() {
    let server = start(ServerOptions::default()).await;
    let samples = audio(20.0, 4.0);
    let file = wav(&samples);
    let transcript = "<spk:0> hello there <spk:1> good morning";
    let aligned = engine()
        .align(
            Input::Samples(samples.clone()),
            &AlignRequest { transcript: transcript.into(), language: None },
            &mut |_, _, _| ControlFlow::Continue(()),
        )
        .unwrap();
    for (format, expected) in
        [("json", aligned.to_json().unwrap()), ("srt", aligned.to_srt()), ("vtt", aligned.to_vtt())]
    {
        let form = upload(&file, &[("transcript", transcript), ("response_format", format)]);
        let response = client().post(server.url("/v1/audio/alignments")).multipart(form).send().await.unwrap();
        assert_eq!(response.status(), 200, "{format}");
        assert_eq!(response.text().await.unwrap(), expected, "{format}");
    }
    for word_timestamps in [false, true] {
        let expected = engine()
            .encode(Input::Samples(samples.clone()), word_timestamps, &mut |_, _, _| ControlFlow::Continue(()))
            .unwrap()
            .to_safetensors()
            .unwrap();
        let form = upload(&file, &[("word_timestamps", if word_timestamps { "true" } else { "false" })]);
        let response = client().post(server.url("/v1/audio/features")).multipart(form).send().await.unwrap();
        assert_eq!(response.status(), 200);
        assert_eq!(response.bytes().await.unwrap().as_ref(), expected.as_slice(), "word_timestamps {word_timestamps}");
    }
    server.stop().await.unwrap();
}

/// A value a client may send for each setting, as form text.
fn sample(name: &str) -> &'static str {
    match name {
        "threshold" | "onset" | "offset" => "0.4",
        "pad_onset" | "pad_offset" => "-0.05",
        "min_duration_on" | "min_duration_off" => "0.1",
        "postprocessing_yaml" => "parameters:\n  onset: 0.7\n",
        "max_speakers" => "1",
        other => panic!("no sample value for the setting `{other}`: add one"),
    }
}

/// Every segment setting of the engine's list that a client may send is a field of the route, and the OpenAPI
/// document describes exactly these.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_segment_setting_is_a_field_and_in_the_document() {
    let server = start(ServerOptions::default()).await;
    let samples = audio(0.0, 1.0);
    let c = client();
    for name in Origin::Remote.names() {
        let fields = [(name, sample(name))];
        let response = c.post(server.url("/v1/audio/diarizations")).multipart(upload(&wav(&samples), &fields)).send();
        let response = response.await.unwrap();
        assert_eq!(response.status(), 200, "{name}");
        // A form's text is a number where it reads as one.
        let value = serde_json::from_str(sample(name)).unwrap_or_else(|_| serde_json::json!(sample(name)));
        let form = serde_json::json!({ name: value });
        let settings = SegmentSettings::from_fields(form, Origin::Remote).unwrap();
        assert_ne!(settings, SegmentSettings::default(), "{name}");
        let expected = expected_segments(&samples, &settings, SegmentFormat::Json, "meeting");
        assert_eq!(response.text().await.unwrap(), expected, "{name}");
    }
    let document: serde_json::Value = c.get(server.url("/openapi.json")).send().await.unwrap().json().await.unwrap();
    let schema = &document["components"]["schemas"]["SegmentSettings"]["properties"];
    let mut described: Vec<&str> = schema.as_object().unwrap().keys().map(String::as_str).collect();
    let mut names = Origin::Remote.names();
    described.sort_unstable();
    names.sort_unstable();
    assert_eq!(described, names);
    server.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_requests_get_their_documented_status_and_the_server_keeps_serving() {
    let options = ServerOptions { max_body_bytes: 200_000, ..ServerOptions::default() };
    let server = start(options).await;
    let small = wav(&audio(0.0, 1.0));
    let diarize = server.url("/v1/audio/diarizations");
    let c = client();
    let cases: Vec<(&str, reqwest::RequestBuilder, StatusCode, &str)> = vec![
        (
            "not audio",
            c.post(&diarize).multipart(upload(b"this is not a sound file at all", &[])),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_audio",
        ),
        (
            "empty body",
            c.post(&diarize).header("content-type", "audio/wav").body(Vec::new()),
            StatusCode::BAD_REQUEST,
            "missing_audio",
        ),
        (
            "no file part",
            c.post(&diarize).multipart(Form::new().text("threshold", "0.5")),
            StatusCode::BAD_REQUEST,
            "missing_audio",
        ),
        (
            "text body",
            c.post(&diarize).header("content-type", "text/plain").body("hello"),
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "unsupported_media_type",
        ),
        (
            "too large",
            c.post(&diarize).multipart(upload(&wav(&audio(0.0, 4.0)), &[])),
            StatusCode::PAYLOAD_TOO_LARGE,
            "payload_too_large",
        ),
        (
            "too large raw",
            c.post(&diarize).header("content-type", "audio/wav").body(vec![0u8; 300_000]),
            StatusCode::PAYLOAD_TOO_LARGE,
            "payload_too_large",
        ),
        (
            "threshold out of range",
            c.post(&diarize).multipart(upload(&small, &[("threshold", "1.5")])),
            StatusCode::BAD_REQUEST,
            "invalid_setting",
        ),
        (
            "unknown field",
            c.post(&diarize).multipart(upload(&small, &[("treshold", "0.5")])),
            StatusCode::BAD_REQUEST,
            "invalid_setting",
        ),
        (
            "a server path",
            c.post(&diarize).multipart(upload(&small, &[("postprocessing", "/etc/passwd")])),
            StatusCode::BAD_REQUEST,
            "invalid_setting",
        ),
        (
            "bad format",
            c.post(&diarize).multipart(upload(&small, &[("response_format", "xml")])),
            StatusCode::BAD_REQUEST,
            "invalid_setting",
        ),
        (
            "channel the file lacks",
            c.post(&diarize).multipart(upload(&small, &[("channel", "3")])),
            StatusCode::BAD_REQUEST,
            "invalid_setting",
        ),
        (
            "no transcript",
            c.post(server.url("/v1/audio/alignments")).multipart(upload(&small, &[])),
            StatusCode::BAD_REQUEST,
            "missing_transcript",
        ),
        ("wrong method", c.get(&diarize), StatusCode::METHOD_NOT_ALLOWED, "method_not_allowed"),
        ("no such route", c.get(server.url("/v1/audio/nothing")), StatusCode::NOT_FOUND, "not_found"),
        (
            "plain GET of the stream",
            c.get(server.url("/v1/audio/diarizations/stream")),
            StatusCode::UPGRADE_REQUIRED,
            "websocket_required",
        ),
    ];
    for (name, request, status, code) in cases {
        let (got_status, got_code) = error_of(request.send().await.unwrap()).await;
        assert_eq!((got_status, got_code.as_str()), (status, code), "{name}");
        let after = c.post(&diarize).multipart(upload(&small, &[("response_format", "rttm")])).send().await.unwrap();
        assert_eq!(after.status(), 200, "the request after `{name}`");
    }
    // Each error was counted by route and code.
    let metrics = c.get(server.url("/metrics")).send().await.unwrap().text().await.unwrap();
    for line in [
        r#"nemotron_http_errors_total{route="/v1/audio/diarizations",code="invalid_audio"} 1"#,
        r#"nemotron_http_errors_total{route="/v1/audio/diarizations",code="payload_too_large"} 2"#,
        r#"nemotron_http_requests_total{route="/v1/audio/diarizations",method="POST",status="200"} 15"#,
        r#"nemotron_http_errors_total{route="unmatched",code="not_found"} 1"#,
    ] {
        assert!(metrics.lines().any(|l| l == line), "no `{line}` in\n{metrics}");
    }
    assert!(
        metrics.contains("nemotron_gpu_step_duration_seconds_bucket{le=\"+Inf\",task=\"diarize\"} 15"),
        "{metrics}"
    );
    server.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn api_keys_guard_every_route_but_the_health_checks_and_the_page() {
    let keys = ApiKeys::parse("# the team\nsecret-one\nsecret-two\n").unwrap();
    let server = start(ServerOptions { api_keys: Some(keys), ..ServerOptions::default() }).await;
    let c = client();
    for open in ["/health/live", "/health/ready", "/"].into_iter().chain(PAGE_SCRIPTS) {
        assert_eq!(c.get(server.url(open)).send().await.unwrap().status(), 200, "{open}");
    }
    for script in PAGE_SCRIPTS {
        let response = c.get(server.url(script)).send().await.unwrap();
        assert_eq!(response.headers()["content-type"], "text/javascript; charset=utf-8", "{script}");
    }
    for guarded in ["/v1/models", "/metrics", "/openapi.json"] {
        let (status, code) = error_of(c.get(server.url(guarded)).send().await.unwrap()).await;
        assert_eq!((status, code.as_str()), (StatusCode::UNAUTHORIZED, "missing_api_key"), "{guarded}");
        let wrong = c.get(server.url(guarded)).bearer_auth("secret-three").send().await.unwrap();
        assert_eq!(wrong.headers()["www-authenticate"], "Bearer");
        let (status, code) = error_of(wrong).await;
        assert_eq!((status, code.as_str()), (StatusCode::UNAUTHORIZED, "invalid_api_key"), "{guarded}");
        // The query parameter is for the WebSocket route only.
        let query = c.get(server.url(&format!("{guarded}?access_token=secret-two"))).send().await.unwrap();
        assert_eq!(query.status(), 401, "{guarded}");
        for key in ["secret-one", "secret-two"] {
            assert_eq!(c.get(server.url(guarded)).bearer_auth(key).send().await.unwrap().status(), 200, "{guarded}");
        }
    }
    let upload = upload(&wav(&audio(0.0, 1.0)), &[]);
    let response = c.post(server.url("/v1/audio/diarizations")).multipart(upload).send().await.unwrap();
    assert_eq!(response.status(), 401);
    server.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readiness_waits_for_the_model_and_the_openapi_document_names_every_route() {
    // With a speaker folder, so that its routes answer as routes (without one they say 404 `no_speaker_folder`).
    let speakers = tempfile::tempdir().unwrap();
    let options = ServerOptions {
        listen: "127.0.0.1:0".parse().unwrap(),
        speakers: Some(speakers.path().to_path_buf()),
        ..ServerOptions::default()
    };
    let server = nemotron_server::Server::bind(options).await.unwrap();
    let address = server.local_addr().unwrap();
    let (release, released) = std::sync::mpsc::channel::<()>();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(server.run(
        move || {
            let _ = released.recv_timeout(Duration::from_secs(60));
            Ok(engine())
        },
        async move {
            let _ = stopped.await;
        },
    ));
    let url = |path: &str| format!("http://{address}{path}");
    let c = client();
    assert_eq!(c.get(url("/health/live")).send().await.unwrap().status(), 200);
    let loading = c.get(url("/health/ready")).send().await.unwrap();
    assert_eq!(loading.headers()["retry-after"], "5");
    assert_eq!(error_of(loading).await, (StatusCode::SERVICE_UNAVAILABLE, "model_loading".to_string()));
    let early =
        c.post(url("/v1/audio/diarizations")).multipart(upload(&wav(&audio(0.0, 1.0)), &[])).send().await.unwrap();
    // Refused before its body was read: the connection closes, and says so, so the client does not reuse it.
    assert_eq!(early.headers()["connection"], "close");
    assert_eq!(error_of(early).await, (StatusCode::SERVICE_UNAVAILABLE, "model_loading".to_string()));
    release.send(()).unwrap();
    let mut ready = false;
    for _ in 0..1200 {
        if c.get(url("/health/ready")).send().await.unwrap().status() == 200 {
            ready = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(ready, "ready within 60 s of the load");
    let models: serde_json::Value = c.get(url("/v1/models")).send().await.unwrap().json().await.unwrap();
    assert_eq!(models["data"][0]["id"], engine().description());
    assert_eq!(models["data"][0]["demo"], true);

    // The document is the one served, and its paths are the routes but the page's scripts: each answers its method
    // (not 404 or 405).
    let document: serde_json::Value = c.get(url("/openapi.json")).send().await.unwrap().json().await.unwrap();
    assert_eq!(document, serde_json::from_str::<serde_json::Value>(&nemotron_server::OPENAPI).unwrap());
    let paths = document["paths"].as_object().unwrap();
    let mut routes: Vec<&str> = paths.keys().map(String::as_str).collect();
    routes.sort_unstable();
    let mut known = [
        "/",
        "/health/live",
        "/health/ready",
        "/metrics",
        "/openapi.json",
        "/v1/models",
        "/v1/audio/diarizations",
        "/v1/audio/alignments",
        "/v1/audio/features",
        "/v1/audio/diarizations/stream",
        "/v1/speakers",
        "/v1/speakers/{profile}",
    ];
    known.sort_unstable();
    assert_eq!(routes, known);
    for (path, methods) in paths {
        for method in methods.as_object().unwrap().keys() {
            let request = c.request(method.to_uppercase().parse().unwrap(), url(path));
            let status = request.send().await.unwrap().status();
            assert!(status != 404 && status != 405, "{method} {path}: {status}");
        }
    }
    stop.send(()).unwrap();
    task.await.unwrap().unwrap();
}

/// The upload is 1 s of audio (32 KB), small enough to be written whole before the 1 ms timeout answers: with 8 s
/// (256 KB) a loaded machine still wrote the body when the server answered and closed, and the client saw a broken
/// pipe instead of the 408.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_past_the_timeout_gets_408() {
    let server = start(ServerOptions { request_timeout: Duration::from_millis(1), ..ServerOptions::default() }).await;
    let response = client()
        .post(server.url("/v1/audio/diarizations"))
        .multipart(upload(&wav(&audio(0.0, 1.0)), &[]))
        .send()
        .await
        .unwrap();
    assert_eq!(error_of(response).await, (StatusCode::REQUEST_TIMEOUT, "request_timeout".to_string()));
    assert_eq!(client().get(server.url("/health/ready")).send().await.unwrap().status(), 200);
    server.stop().await.unwrap();
}
