//! One WebSocket session: the protocol's state machine over the scheduler. Frames are read while a step runs, until
//! the audio received and not yet processed (waiting for a step, or in the step running) reaches the session's
//! buffer: then the session stops reading its connection until the step ends, so TCP makes a client that sends
//! faster than the server processes wait instead of losing its session. A client that reads none of its events
//! for the idle timeout (its connection's send buffer full) gets `backpressure`. A shutdown ends the session as
//! `session.end` would, with its final events.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::ws::{CloseFrame, Message, WebSocket, close_code};
use nemotron_engine::{Engine, EngineError, RawDecoder, RawFormat, SegmentEvent, StreamingMode};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::protocol::{self, ClientMessage, DoneSegment, ProtocolError, SAMPLE_RATE, ServerMessage, SessionStart};
use super::scheduler::{SchedulerHandle, SessionId, Step, StepError};
use super::{MAX_MESSAGE_BYTES, STREAM};
use crate::metrics::Metrics;
use crate::settings::segment_settings;
use crate::speakers::{Known, Speakers};

/// How long a closing session waits for the client's close frame.
const CLOSE_WAIT: Duration = Duration::from_secs(5);
/// How long a closing session whose reads failed keeps the connection open for the client to read the close frame.
const CLOSE_LINGER: Duration = Duration::from_millis(500);

/// What a session needs from the server.
pub struct Context {
    /// The streaming scheduler.
    pub scheduler: SchedulerHandle,
    /// The model, to prime sessions with known speakers.
    pub engine: Arc<Engine>,
    /// The speaker folder's profiles, when the server has one.
    pub speakers: Option<Arc<Speakers>>,
    /// Longest silence from the client.
    pub idle_timeout: Duration,
    /// Most samples waiting for a step.
    pub buffer_samples: usize,
    /// Cancelled when the server shuts down.
    pub shutdown: CancellationToken,
    /// Where errors are counted.
    pub metrics: Arc<Metrics>,
}

/// How a session ends early: the error to send, with its message.
struct Abort(ProtocolError, String);

impl Abort {
    fn new(error: ProtocolError, message: impl Into<String>) -> Self {
        Self(error, message.into())
    }
}

/// Known speakers that cannot be named in the stream are the client's profile's fault; anything else the server's.
impl From<StepError> for Abort {
    fn from(error: StepError) -> Self {
        match error {
            StepError::Engine(EngineError::Enrollment(e)) => Abort::new(ProtocolError::SpeakersUnusable, e.to_string()),
            other => Abort::new(ProtocolError::Internal, other.to_string()),
        }
    }
}

/// The client went away (a failed send): nothing more to tell it.
impl From<axum::Error> for Abort {
    fn from(error: axum::Error) -> Self {
        Abort::new(ProtocolError::Internal, format!("sending: {error}"))
    }
}

/// Runs a session to its end, then frees it.
pub async fn run(socket: WebSocket, context: Context) {
    context.metrics.sessions.inc();
    context.metrics.active_sessions.inc();
    let mut session = Session { socket, context, id: None, public_id: String::new(), deaf: false };
    if let Err(Abort(error, message)) = session.serve().await {
        session.context.metrics.error(STREAM, error.code());
        // The client may be gone already (nothing to do about a failed send then), or read nothing any more (then
        // the idle timeout bounds the wait as it bounds every send).
        let limit = session.context.idle_timeout + CLOSE_WAIT;
        let report = async {
            // An error message always serialises (strings and a code).
            let Ok(text) = error.message(&message) else { return };
            if session.socket.send(Message::Text(text.into())).await.is_ok() {
                let _ = session.close(error.close_code(), error.code()).await;
            }
        };
        let _ = tokio::time::timeout(limit, report).await;
    }
    if let Some(id) = session.id {
        session.context.scheduler.close(id);
    }
    session.context.metrics.active_sessions.dec();
}

type StepFuture = Pin<Box<dyn Future<Output = Result<Step, StepError>> + Send>>;

/// The end of the step in flight (never, when there is none).
async fn step_done(running: &mut Option<StepFuture>) -> Result<Step, StepError> {
    match running {
        Some(step) => step.await,
        None => std::future::pending().await,
    }
}

/// What woke the session up.
enum Wake {
    Message(Option<Result<Message, axum::Error>>),
    StepDone(Result<Step, StepError>),
    Idle,
    Shutdown,
}

struct Session {
    socket: WebSocket,
    context: Context,
    /// The scheduler's session, until it finished or was dropped.
    id: Option<SessionId>,
    /// The id the client sees.
    public_id: String,
    /// A read failed: the connection takes no more messages.
    deaf: bool,
}

impl Session {
    async fn serve(&mut self) -> Result<(), Abort> {
        let Some((format, mode)) = self.start().await? else { return Ok(()) };
        // At most one chunk of a session's audio per step: a client that sent more (a recording, faster than real
        // time) takes one chunk per round like the others, instead of holding up the round for all its chunks.
        let per_step = mode.chunk_samples();
        let id = self.id.ok_or_else(|| Abort::new(ProtocolError::Internal, "the session did not open"))?;
        let max_frame_bytes = SAMPLE_RATE as usize * format.bytes();
        let mut decoder = RawDecoder::new(format);
        let mut pending: Vec<f32> = Vec::new();
        // Samples of the step running.
        let mut in_step = 0usize;
        let mut received = 0usize;
        let mut running: Option<StepFuture> = None;
        let mut heard = Instant::now();
        let mut was_reading = true;
        let close = loop {
            if running.is_none() && !pending.is_empty() {
                let samples: Vec<f32> = pending.drain(..pending.len().min(per_step)).collect();
                let scheduler = self.context.scheduler.clone();
                in_step = samples.len();
                running = Some(Box::pin(async move { scheduler.push(id, samples).await }));
            }
            // Stop reading only while a step runs (its end resumes reading): with none, nothing waits (pending audio
            // starts one above).
            let reading = running.is_none() || pending.len() + in_step < self.context.buffer_samples;
            if reading && !was_reading {
                // The client was not heard because it was not listened to: its silence counts from now.
                heard = Instant::now();
            }
            was_reading = reading;
            let wake = tokio::select! {
                message = self.socket.recv(), if reading => Wake::Message(message),
                step = step_done(&mut running), if running.is_some() => Wake::StepDone(step),
                () = tokio::time::sleep_until(heard + self.context.idle_timeout), if reading => Wake::Idle,
                () = self.context.shutdown.cancelled() => Wake::Shutdown,
            };
            match wake {
                Wake::StepDone(step) => {
                    running = None;
                    in_step = 0;
                    self.send_step(step?).await?;
                }
                Wake::Idle => {
                    let seconds = self.context.idle_timeout.as_secs_f64();
                    return Err(Abort::new(ProtocolError::IdleTimeout, format!("no message for {seconds} s")));
                }
                Wake::Shutdown => break close_code::AWAY,
                Wake::Message(Some(Err(error))) => {
                    self.deaf = true;
                    return past_the_limit(error);
                }
                Wake::Message(None | Some(Ok(Message::Close(_)))) => return Ok(()),
                Wake::Message(Some(Ok(message))) => {
                    heard = Instant::now();
                    match message {
                        Message::Binary(bytes) if bytes.len() > max_frame_bytes => {
                            let message = format!(
                                "a frame of {} bytes: at most 1 s of audio ({max_frame_bytes} bytes) per frame",
                                bytes.len()
                            );
                            return Err(Abort::new(ProtocolError::FrameTooLarge, message));
                        }
                        Message::Binary(bytes) => {
                            let samples = decoder.decode(&bytes);
                            received += samples.len();
                            pending.extend(samples);
                            self.context.metrics.buffered(pending.len() + in_step);
                        }
                        Message::Text(text) if protocol::is_session_end(&text) => break close_code::NORMAL,
                        Message::Text(_) => {
                            let message = "after session.start: binary PCM frames, or {\"type\":\"session.end\"}";
                            return Err(Abort::new(ProtocolError::ExpectedAudio, message));
                        }
                        Message::Ping(_) | Message::Pong(_) | Message::Close(_) => {}
                    }
                }
            }
        };
        if let Some(step) = running.take() {
            self.send_step(step.await?).await?;
        }
        while !pending.is_empty() {
            let samples: Vec<f32> = pending.drain(..pending.len().min(per_step)).collect();
            let step = self.context.scheduler.push(id, samples).await?;
            self.send_step(step).await?;
        }
        decoder.finish().map_err(|e| Abort::new(ProtocolError::PartialSample, e.to_string()))?;
        self.finish(id, close, received as f64 / f64::from(SAMPLE_RATE)).await
    }

    /// Waits for `session.start`, opens the session and answers `session.ready`; its format and mode, `None` when the
    /// client left.
    async fn start(&mut self) -> Result<Option<(RawFormat, StreamingMode)>, Abort> {
        let expected = |detail: &str| {
            let message = format!(
                "the first message must be {{\"type\":\"session.start\",\"sample_rate\":16000,\"encoding\":\
                 \"pcm_s16le\"|\"pcm_f32le\",…}}: {detail}"
            );
            Err(Abort::new(ProtocolError::ExpectedSessionStart, message))
        };
        let idle = tokio::time::timeout(self.context.idle_timeout, self.socket.recv());
        let text = tokio::select! {
            message = idle => match message {
                Err(_) => return Err(Abort::new(ProtocolError::IdleTimeout, "no session.start")),
                Ok(Some(Err(error))) => {
                    self.deaf = true;
                    return past_the_limit(error).map(|()| None);
                }
                Ok(None | Some(Ok(Message::Close(_)))) => return Ok(None),
                Ok(Some(Ok(Message::Text(text)))) => text,
                Ok(Some(Ok(_))) => return expected("a binary or control message came first"),
            },
            () = self.context.shutdown.cancelled() => return Ok(None),
        };
        let start: SessionStart = match serde_json::from_str(&text) {
            Ok(start) => start,
            Err(e) => return expected(&e.to_string()),
        };
        match start.kind.0 {
            Ok(ClientMessage::SessionStart) => {}
            Ok(ClientMessage::SessionEnd) => return expected("type `session.end`"),
            Err(why) => return expected(&format!("type: {why}")),
        }
        let encoding = start
            .encoding
            .0
            .map_err(|why| Abort::new(ProtocolError::UnsupportedEncoding, format!("encoding: {why}")))?;
        let format = RawFormat::from(encoding);
        if start.sample_rate != SAMPLE_RATE {
            let message = format!("sample_rate {}: only 16000 (resample on the client)", start.sample_rate);
            return Err(Abort::new(ProtocolError::UnsupportedSampleRate, message));
        }
        let mode = match start.latency {
            None => StreamingMode::LowLatency,
            // The mode's own message: "latency `…`: one of low, very-low, ultra-low".
            Some(latency) => latency.0.map_err(|why| Abort::new(ProtocolError::InvalidSetting, why))?,
        };
        let settings = segment_settings(start.settings)
            .map_err(|error| Abort::new(ProtocolError::InvalidSetting, error.message))?;
        let known = start.speakers.map(|profile| self.known(&profile)).transpose()?;
        let opened = match known {
            None => self.context.scheduler.open(mode, settings).await,
            Some(known) => self.open_with(known, mode, settings).await,
        };
        let id = opened.map_err(|error| match error {
            StepError::Engine(e) if e.kind() == nemotron_engine::ErrorKind::Usage && !is_enrollment(&e) => {
                Abort::new(ProtocolError::InvalidSetting, e.to_string())
            }
            other => other.into(),
        })?;
        self.id = Some(id);
        self.public_id = format!("sess_{id}");
        let max_frame_bytes = SAMPLE_RATE as usize * format.bytes();
        let public_id = self.public_id.clone();
        let ready =
            ServerMessage::Ready { id: &public_id, latency: mode, sample_rate: SAMPLE_RATE, encoding, max_frame_bytes };
        self.send_message(&ready).await?;
        Ok(Some((format, mode)))
    }

    /// Profile `name` of the speaker folder.
    fn known(&self, name: &str) -> Result<Arc<Known>, Abort> {
        let Some(speakers) = &self.context.speakers else {
            let message = "this server has no speaker folder (start it with --speakers DIR to use known speakers)";
            return Err(Abort::new(ProtocolError::UnknownSpeakers, message));
        };
        speakers
            .get(name)
            .ok_or_else(|| Abort::new(ProtocolError::UnknownSpeakers, format!("no speaker profile `{name}`")))
    }

    /// A fork of the session primed with `known`'s clips for `mode` and `settings` (primed on first use, on a
    /// blocking thread: it runs the clips), handed to the scheduler.
    async fn open_with(
        &mut self,
        known: Arc<Known>,
        mode: StreamingMode,
        settings: nemotron_engine::SegmentSettings,
    ) -> Result<SessionId, StepError> {
        let engine = self.context.engine.clone();
        let session = tokio::task::spawn_blocking(move || known.session(&engine, mode, &settings))
            .await
            .map_err(|_| StepError::Panicked)??;
        self.context.scheduler.adopt(session).await
    }

    /// The last chunk, its events, `session.done` and the close.
    async fn finish(&mut self, id: SessionId, close: u16, seconds: f64) -> Result<(), Abort> {
        self.id = None;
        let finished = self.context.scheduler.finish(id).await?;
        self.send_events(&finished.events, &finished.names).await?;
        let segments = finished.segments.iter().map(|s| DoneSegment::new(s, &finished.names)).collect();
        let public_id = self.public_id.clone();
        self.send_message(&ServerMessage::Done { id: &public_id, segments, seconds }).await?;
        self.close(close, "session done").await?;
        Ok(())
    }

    async fn send_step(&mut self, step: Step) -> Result<(), Abort> {
        self.send_events(&step.events, &step.names).await?;
        self.send_message(&ServerMessage::Ack { processed_until: step.processed_until }).await
    }

    /// Sends `events` as `diarize --stream` prints them, with the enrolled speakers' `names`.
    async fn send_events(&mut self, events: &[SegmentEvent], names: &[Option<String>]) -> Result<(), Abort> {
        for event in events {
            self.send(event.json_line_named(names)).await?;
        }
        Ok(())
    }

    /// Sends a protocol message.
    async fn send_message(&mut self, message: &ServerMessage<'_>) -> Result<(), Abort> {
        let text = message.to_text().map_err(|e| Abort::new(ProtocolError::Internal, e.to_string()))?;
        self.send(text).await
    }

    /// Sends a text message. A send waits while the connection's send buffer is full; a client that reads none of
    /// its events for the idle timeout gets `backpressure`, so that it cannot hold its session and slot for ever.
    async fn send(&mut self, text: String) -> Result<(), Abort> {
        let limit = self.context.idle_timeout;
        match tokio::time::timeout(limit, self.socket.send(Message::Text(text.into()))).await {
            Ok(sent) => Ok(sent?),
            Err(_) => {
                let message = format!(
                    "the client read none of its events for {} s (the connection's send buffer stayed full): read \
                     them while sending",
                    limit.as_secs_f64()
                );
                Err(Abort::new(ProtocolError::Backpressure, message))
            }
        }
    }

    /// Sends the close frame, then reads (and drops) what the client still sends until its own close frame, for at
    /// most [`CLOSE_WAIT`]: closing the TCP connection with unread data in it would reset it, and the client could
    /// lose the error and the close frame before it reads them.
    async fn close(&mut self, code: u16, reason: &'static str) -> Result<(), axum::Error> {
        let frame = Message::Close(Some(CloseFrame { code, reason: reason.into() }));
        match tokio::time::timeout(self.context.idle_timeout, self.socket.send(frame)).await {
            Ok(sent) => sent?,
            // The client reads nothing: it will not read the close frame either.
            Err(_) => return Ok(()),
        }
        if self.deaf {
            // Nothing more can be read (the rest of a message past the limit is still unread): keep the connection
            // a moment so that the client reads the close frame before the reset that closing it then causes.
            tokio::time::sleep(CLOSE_LINGER).await;
            return Ok(());
        }
        let drain = async {
            while let Some(Ok(message)) = self.socket.recv().await {
                if matches!(message, Message::Close(_)) {
                    break;
                }
            }
        };
        // A client that never answers the close only costs this wait.
        let _ = tokio::time::timeout(CLOSE_WAIT, drain).await;
        Ok(())
    }
}

/// What a failed read means: a message past the transport's limit is the client's `frame_too_large` (it still hears
/// why); anything else is a connection gone, with nobody left to tell.
fn past_the_limit(error: axum::Error) -> Result<(), Abort> {
    // axum hands over the WebSocket library's error as it is (the one tungstenite in the dependency tree; a test sends
    // a frame past the limit, so a second version would be noticed).
    match error.into_inner().downcast_ref::<tungstenite::Error>() {
        Some(tungstenite::Error::Capacity(limit)) => {
            let message = format!("{limit}: at most 1 s of audio per frame, {MAX_MESSAGE_BYTES} bytes per message");
            Err(Abort::new(ProtocolError::FrameTooLarge, message))
        }
        _ => Ok(()),
    }
}

/// A known speakers' naming error (some are usage errors, but of the profile, not of the settings).
fn is_enrollment(error: &EngineError) -> bool {
    matches!(error, EngineError::Enrollment(_))
}
