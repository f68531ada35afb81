//! The offline routes: a whole file in, the CLI's output file out (the same bytes, from the same engine functions).
//! The engine's work runs on a blocking thread, never on the async executor.

use std::ops::ControlFlow;
use std::time::Instant;

use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use nemotron_engine::{AlignRequest, AudioOptions, EngineError, Input, write_named_segments};

use super::formats::{AlignmentFormat, DiarizationFormat};
use super::upload::Upload;
use crate::error::ApiError;
use crate::settings::segment_settings;
use crate::state::AppState;

/// `POST /v1/audio/diarizations`: the segments, as `diarize --segments FILE` writes them; with `speakers=PROFILE`,
/// as `diarize --speakers` writes them (that recording runs alone, the profile's clips in front of it).
pub async fn diarize(State(state): State<AppState>, request: Request) -> Result<Response, ApiError> {
    let (engine, queue) = (state.engine()?, state.diarize_queue()?);
    let mut upload = Upload::read(request).await?;
    let format: DiarizationFormat = upload.take_format()?;
    let uri = upload.take_uri()?;
    let known = upload.take("speakers").map(|profile| state.known(&profile)).transpose()?;
    let options = upload.take_audio_options()?;
    let name = upload.name.clone();
    let audio = std::mem::take(&mut upload.audio);
    let settings = segment_settings(upload.rest())?;
    settings.segmenter().map_err(|e| ApiError::from(EngineError::from(e)))?;
    let text = run(&state, "diarize", move || {
        let input = decode(audio, &name, &options)?;
        let seconds = input.seconds();
        let diarized = match &known {
            Some(known) => {
                engine.diarize_with_speakers(input, &known.profile, &mut |_, _, _| ControlFlow::Continue(()))?
            }
            // The front end here, on this request's thread; the steps beside the other requests' on the queue's.
            None => queue.diarize(engine.diarizer_features(input)?)?,
        };
        let segments = diarized.segments(&settings)?;
        Ok((write_named_segments(&segments, format.segments(), &uri, diarized.names()), seconds))
    })
    .await?;
    Ok(([(header::CONTENT_TYPE, format.content_type())], text).into_response())
}

/// `POST /v1/audio/alignments`: each word's start, end and speaker, as `align --out` (JSON), `--srt` or `--vtt`
/// writes them.
pub async fn align(State(state): State<AppState>, request: Request) -> Result<Response, ApiError> {
    let engine = state.engine()?;
    let mut upload = Upload::read(request).await?;
    let format: AlignmentFormat = upload.take_format()?;
    let transcript = upload
        .take("transcript")
        .filter(|t| !t.trim().is_empty())
        .ok_or_else(|| ApiError::bad_request("missing_transcript", "give the transcript in the `transcript` field"))?;
    let request = AlignRequest { transcript, language: upload.take("language") };
    let options = upload.take_audio_options()?;
    let (name, audio) = (upload.name.clone(), std::mem::take(&mut upload.audio));
    upload.no_more_fields()?;
    let text = run(&state, "align", move || {
        let input = decode(audio, &name, &options)?;
        let seconds = input.seconds();
        let aligned = engine.align(input, &request, &mut |_, _, _| ControlFlow::Continue(()))?;
        let text = match format {
            AlignmentFormat::Srt => aligned.to_srt(),
            AlignmentFormat::Vtt => aligned.to_vtt(),
            AlignmentFormat::Json => aligned.to_json()?,
        };
        Ok((text, seconds))
    })
    .await?;
    Ok(([(header::CONTENT_TYPE, format.content_type())], text).into_response())
}

/// `POST /v1/audio/features`: every output tensor, the safetensors file `encode --out` writes (`word_timestamps=true`
/// adds the word-timestamp head's logits, as `--word-timestamps`).
pub async fn features(State(state): State<AppState>, request: Request) -> Result<Response, ApiError> {
    let engine = state.engine()?;
    let mut upload = Upload::read(request).await?;
    let word_timestamps = match upload.take("word_timestamps").as_deref() {
        None | Some("false") => false,
        Some("true") => true,
        Some(other) => {
            return Err(ApiError::bad_request("invalid_setting", format!("word_timestamps `{other}`: true or false")));
        }
    };
    let options = upload.take_audio_options()?;
    let (name, audio) = (upload.name.clone(), std::mem::take(&mut upload.audio));
    upload.no_more_fields()?;
    let bytes = run(&state, "features", move || {
        let input = decode(audio, &name, &options)?;
        let seconds = input.seconds();
        Ok((
            engine.encode(input, word_timestamps, &mut |_, _, _| ControlFlow::Continue(()))?.to_safetensors()?,
            seconds,
        ))
    })
    .await?;
    Ok(([(header::CONTENT_TYPE, "application/octet-stream")], bytes).into_response())
}

/// Decodes the uploaded file; a file that is no audio is 422 `invalid_audio`.
pub(super) fn decode(audio: Vec<u8>, name: &str, options: &AudioOptions) -> Result<Input, ApiError> {
    Input::read_bytes(audio, name, options).map_err(|error| {
        let api = ApiError::from(error);
        match api.status {
            StatusCode::UNPROCESSABLE_ENTITY => ApiError { code: "invalid_audio", ..api },
            _ => api,
        }
    })
}

/// Runs `work` (which returns its output and the seconds of audio it covered) on a blocking thread, timed into the
/// metrics under `task`.
pub(super) async fn run<T: Send + 'static>(
    state: &AppState,
    task: &'static str,
    work: impl FnOnce() -> Result<(T, f64), ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    let metrics = state.metrics.clone();
    let started = Instant::now();
    let (output, seconds) = tokio::task::spawn_blocking(work).await.map_err(|e| {
        ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            format!("the {task} task failed unexpectedly: {e}"),
        )
    })??;
    metrics.engine_call(task, started, seconds);
    Ok(output)
}
