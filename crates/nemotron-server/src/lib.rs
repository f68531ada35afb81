//! The HTTP and WebSocket server of `nemotron-engine`: offline diarization, alignment and features over HTTP, live
//! diarization over WebSocket, health checks, Prometheus metrics, an OpenAPI document and a page to try it.
//!
//! Every route calls the engine the CLI calls, so a response holds the bytes the CLI writes for the same input and
//! settings. The model is loaded once and shared; offline requests run on blocking threads, streaming steps go
//! through one scheduler (see [`stream::scheduler`]). `docs/server.md` describes the routes, the WebSocket protocol,
//! the limits, the metrics and deployment.
//!
//! ```no_run
//! # fn main() -> Result<(), nemotron_server::ServerError> {
//! use std::sync::Arc;
//! use nemotron_engine::{Engine, EngineOptions, ModelSource};
//!
//! let options = nemotron_server::ServerOptions::default();
//! nemotron_server::serve_until_signal(options, || {
//!     let source = ModelSource::parse("/models/nemotron")?;
//!     Ok(Arc::new(Engine::load(&source, &EngineOptions::default(), &mut |_, _, _| {})?))
//! })
//! # }
//! ```

#![warn(missing_docs)]
#![forbid(unsafe_code)]

mod auth;
mod error;
mod http;
mod metrics;
pub mod names;
mod options;
mod routes;
mod service;
mod settings;
mod speakers;
mod state;
pub mod stream;

use std::future::{Future, IntoFuture};
use std::net::SocketAddr;
use std::ops::ControlFlow;
use std::path::PathBuf;
use std::sync::Arc;

use axum::serve::ListenerExt;
use nemotron_engine::{Engine, EngineError, Input, SegmentSettings, StreamingMode};
use tokio::net::TcpListener;

pub use auth::ApiKeys;
pub use error::ApiError;
use http::diarize_queue::DiarizeQueue;
pub use options::ServerOptions;
pub use service::OPENAPI;
use speakers::Speakers;
pub use speakers::SpeakersError;
use state::AppState;
use stream::scheduler::{SchedulerHandle, Window};

/// Why the server could not start or stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// The address is taken or not ours.
    #[error("cannot listen on {address}: {source}")]
    Bind {
        /// The address of `--listen`.
        address: SocketAddr,
        /// Why.
        source: std::io::Error,
    },
    /// The API key file cannot be read.
    #[error("cannot read the API key file {}: {source}", path.display())]
    KeyFile {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The API key file holds no key.
    #[error("the API key file {} holds no key (one key per line; `#` starts a comment)", .0.display())]
    NoKeys(PathBuf),
    /// The model could not be loaded or warmed up.
    #[error("loading the model: {0}")]
    Load(#[source] EngineError),
    /// The speaker folder or one of its profiles cannot be read.
    #[error("loading the known speakers: {0}")]
    Speakers(#[source] SpeakersError),
    /// The model's load or warm-up ended unexpectedly (a bug).
    #[error("loading the model failed unexpectedly: {0}")]
    LoadPanicked(String),
    /// A thread or the runtime could not start, or the listener failed.
    #[error("{what}: {source}")]
    Io {
        /// What failed.
        what: &'static str,
        /// Why.
        source: std::io::Error,
    },
}

/// A server bound to its address, not yet serving.
pub struct Server {
    listener: TcpListener,
    state: AppState,
}

impl Server {
    /// Reads the profiles of `options.speakers` and binds `options.listen` (port 0: any free port; see
    /// [`Server::local_addr`]).
    pub async fn bind(options: ServerOptions) -> Result<Self, ServerError> {
        let speakers = options.speakers.as_deref().map(Speakers::load).transpose().map_err(ServerError::Speakers)?;
        let address = options.listen;
        let listener = TcpListener::bind(address).await.map_err(|source| ServerError::Bind { address, source })?;
        Ok(Self { listener, state: AppState::new(options, speakers) })
    }

    /// The address it listens on.
    pub fn local_addr(&self) -> Result<SocketAddr, ServerError> {
        self.listener.local_addr().map_err(|source| ServerError::Io { what: "the listening address", source })
    }

    /// Serves until `shutdown` completes. The routes answer at once; `/health/ready` and the model's routes say 503
    /// until `load` (run on a blocking thread) has returned the engine and a warm-up ran. On `shutdown` the server
    /// stops accepting, readiness turns 503, streams end with their final events (`session.done`, close 1001), and
    /// requests in flight get up to `shutdown_grace` to finish.
    pub async fn run(
        self,
        load: impl FnOnce() -> Result<Arc<Engine>, EngineError> + Send + 'static,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> Result<(), ServerError> {
        let Server { listener, state } = self;
        let token = state.shutdown.clone();
        let app = routes::router(state.clone());
        let send_buffer = state.options.socket_send_buffer;
        let listener = listener.tap_io(move |connection| {
            if let Some(bytes) = send_buffer
                && let Err(error) = socket2::SockRef::from(&*connection).set_send_buffer_size(bytes)
            {
                // The connection still works, with the system's buffer.
                log::warn!("cannot set a connection's send buffer to {bytes} bytes: {error}");
            }
        });
        let serving = tokio::spawn(
            axum::serve(listener, app).with_graceful_shutdown(token.clone().cancelled_owned()).into_future(),
        );
        let loading = tokio::task::spawn_blocking(move || {
            let engine = load()?;
            warm_up(&engine)?;
            Ok::<_, EngineError>(engine)
        });
        tokio::pin!(shutdown);
        let loaded = tokio::select! {
            loaded = loading => Some(loaded),
            () = &mut shutdown => None,
        };
        let outcome = match loaded {
            None => Ok(()),
            Some(Ok(Ok(engine))) => match start_scheduler(&state, engine) {
                Ok(()) => {
                    log::info!("the model is ready");
                    shutdown.await;
                    Ok(())
                }
                Err(error) => Err(error),
            },
            Some(Ok(Err(error))) => Err(ServerError::Load(error)),
            Some(Err(panic)) => Err(ServerError::LoadPanicked(panic.to_string())),
        };
        log::info!("shutting down: no new connections; up to {:?} for those in flight", state.options.shutdown_grace);
        token.cancel();
        state.tracker.close();
        let drained = tokio::time::timeout(state.options.shutdown_grace, async {
            let served = serving.await;
            state.tracker.wait().await;
            served
        })
        .await;
        if drained.is_err() {
            log::warn!("the shutdown deadline passed: dropping what is still in flight");
        }
        // The scheduler's thread ends with its sessions before this returns: a process that exits next must not
        // race its GPU work.
        let stopping = state.clone();
        let _ = tokio::task::spawn_blocking(move || stopping.stop_scheduler()).await;
        if let Ok(Ok(Err(source))) = drained {
            return Err(ServerError::Io { what: "serving", source });
        }
        outcome
    }
}

fn start_scheduler(state: &AppState, engine: Arc<Engine>) -> Result<(), ServerError> {
    let window = Window { max_batch: state.options.max_batch, max_wait: state.options.max_wait };
    let scheduler = SchedulerHandle::start(engine.clone(), window, state.metrics.clone())
        .map_err(|source| ServerError::Io { what: "starting the stream scheduler", source })?;
    let diarize_queue = DiarizeQueue::start(engine.clone(), state.options.offline_batch, state.metrics.clone())
        .map_err(|source| ServerError::Io { what: "starting the diarization queue", source })?;
    state.metrics.watch_gpu(engine.gpu());
    state.set_loaded(engine, scheduler, diarize_queue);
    Ok(())
}

/// Runs each task once on two seconds of silence, so the GPU pipelines are compiled before the first request (the
/// ASR tower's and the word-timestamp head's too, where the checkpoint has them).
fn warm_up(engine: &Engine) -> Result<(), EngineError> {
    let silence = vec![0.0f32; 32_000];
    engine.diarize(Input::Samples(silence.clone()), &mut |_, _, _| ControlFlow::Continue(()))?;
    if engine.check_word_timestamps("encode").is_ok() {
        engine.encode(Input::Samples(silence.clone()), true, &mut |_, _, _| ControlFlow::Continue(()))?;
    } else if engine.transcribe("encode").is_ok() {
        engine.encode(Input::Samples(silence.clone()), false, &mut |_, _, _| ControlFlow::Continue(()))?;
    }
    let mut session = engine.stream(StreamingMode::LowLatency, &SegmentSettings::default())?;
    session.push(&silence)?;
    session.finish()?;
    Ok(())
}

/// Completes on SIGTERM or Ctrl-C (SIGINT).
pub async fn shutdown_signal() {
    let interrupt = async {
        // Without a signal handler there is no way to be told: wait for the other signal then.
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = interrupt => log::info!("interrupted"),
        () = terminate => log::info!("terminated"),
    }
}

/// The whole life of a server process: a runtime, the listener (its address logged), [`Server::run`] until SIGTERM
/// or Ctrl-C. What `nemotron-audio serve` calls.
pub fn serve_until_signal(
    options: ServerOptions,
    load: impl FnOnce() -> Result<Arc<Engine>, EngineError> + Send + 'static,
) -> Result<(), ServerError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("nemotron-server")
        .build()
        .map_err(|source| ServerError::Io { what: "starting the async runtime", source })?;
    runtime.block_on(async {
        let server = Server::bind(options).await?;
        log::info!("listening on http://{}", server.local_addr()?);
        server.run(load, shutdown_signal()).await
    })
}
