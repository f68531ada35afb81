//! The known speakers' routes: the profiles of the speaker folder listed, enrolled (`Engine::enroll`, the enrollment
//! of every front end, then written into the folder) and removed. A profile's name is its file's stem.

use axum::Json;
use axum::extract::{Path, Request, State};
use axum::http::StatusCode;
use nemotron_engine::{AudioOptions, Input};
use serde_json::{Value, json};

use super::tasks::{decode, run};
use super::upload::{Part, media_type, parts};
use crate::error::ApiError;
use crate::speakers::{SpeakersError, check_name};
use crate::state::{AppState, unknown_speakers};
use crate::stream::protocol::SAMPLE_RATE;

/// `GET /v1/speakers`: every profile and its speakers' names, ordered by profile name.
pub async fn list(State(state): State<AppState>) -> Result<Json<Value>, ApiError> {
    let profiles: Vec<Value> = state
        .speakers()?
        .list()
        .into_iter()
        .map(|(profile, names)| json!({ "profile": profile, "names": names }))
        .collect();
    Ok(Json(json!({ "profiles": profiles })))
}

/// `PUT /v1/speakers/{profile}`: enrolls one audio part per speaker (the part's name is the speaker's), writes the
/// profile into the folder (in place of one of that name) and answers each name with its slot, in the parts' order.
pub async fn put(
    State(state): State<AppState>,
    Path(profile): Path<String>,
    request: Request,
) -> Result<Json<Value>, ApiError> {
    let speakers = state.speakers()?.clone();
    check_name(&profile).map_err(ApiError::from)?;
    let engine = state.engine()?;
    let (content_type, media) = media_type(&request);
    if media != "multipart/form-data" {
        let message = format!(
            "Content-Type `{content_type}`: send multipart/form-data with one audio part per speaker, named by the \
             speaker"
        );
        return Err(ApiError::new(StatusCode::UNSUPPORTED_MEDIA_TYPE, "unsupported_media_type", message));
    }
    let parts = parts(request).await?;
    if parts.is_empty() {
        return Err(ApiError::bad_request("missing_audio", "no part: send one audio part per speaker"));
    }
    let name = profile.clone();
    let enrolled = run(&state, "enroll", move || {
        let clips = parts.into_iter().map(clip).collect::<Result<Vec<_>, _>>()?;
        let seconds = clips.iter().map(|(_, samples)| samples.len()).sum::<usize>() as f64 / f64::from(SAMPLE_RATE);
        let (profile, slots) = engine.enroll(clips)?;
        let names: Vec<String> = profile.names().map(String::from).collect();
        speakers.put(&name, profile)?;
        Ok((names.into_iter().zip(slots).collect::<Vec<_>>(), seconds))
    })
    .await?;
    let speakers: Vec<Value> = enrolled.into_iter().map(|(name, slot)| json!({ "name": name, "slot": slot })).collect();
    Ok(Json(json!({ "profile": profile, "speakers": speakers })))
}

/// `DELETE /v1/speakers/{profile}`: removes the profile and its file.
pub async fn delete(State(state): State<AppState>, Path(profile): Path<String>) -> Result<Json<Value>, ApiError> {
    let speakers = state.speakers()?.clone();
    check_name(&profile).map_err(ApiError::from)?;
    let name = profile.clone();
    let removed = tokio::task::spawn_blocking(move || speakers.delete(&name))
        .await
        .map_err(|e| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", format!("deleting failed: {e}")))??;
    match removed {
        true => Ok(Json(json!({ "profile": profile, "deleted": true }))),
        false => Err(unknown_speakers(&profile)),
    }
}

/// A part's speaker and samples, decoded as uploads are (channels mixed); errors name the part's file, else the
/// speaker.
fn clip(part: Part) -> Result<(String, Vec<f32>), ApiError> {
    let file = part.file_name.unwrap_or_else(|| part.name.clone());
    match decode(part.bytes, &file, &AudioOptions::default())? {
        Input::Samples(samples) => Ok((part.name, samples)),
        Input::Features(_) => {
            let message = format!("{file}: a speaker's clip is audio, not a features file");
            Err(ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, "invalid_audio", message))
        }
    }
}

impl From<SpeakersError> for ApiError {
    /// A name that is no profile name is the client's (400); the folder's trouble is the server's (500, logged with
    /// the file and its cause, which the client is not told).
    fn from(error: SpeakersError) -> Self {
        match error {
            SpeakersError::InvalidName(_) => ApiError::bad_request("invalid_profile_name", error.to_string()),
            _ => {
                match std::error::Error::source(&error) {
                    Some(source) => log::error!("{error}: {source}"),
                    None => log::error!("{error}"),
                }
                ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", error.to_string())
            }
        }
    }
}
