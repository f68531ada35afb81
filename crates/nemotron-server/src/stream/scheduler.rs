//! The one place every streaming session's GPU work goes through: a queue served by one thread that owns all live
//! sessions. Each round it takes the first waiting command, gathers more for up to `max_wait` or until it holds
//! `max_batch`, then runs them.
//!
//! The round's audio goes to all its sessions in one call (`LiveSession::push_many`): the chunks due in several
//! sessions, of any modes, run as one GPU submission (rows of all of them in each GEMM; attention, speaker cache and
//! FIFO per session), so many sessions share each step's fixed costs instead of taking turns on the GPU. Each
//! session's events are those of its solo run (its frames equal within float rounding, ≤ 1e-6 relative).
//!
//! Each session has at most one command in flight (its WebSocket task waits for the reply before it sends the
//! next; only a `Close` may follow a step still running when the client left), so the queue holds at most two
//! commands per session and needs no bound of its own.

use std::collections::HashMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use nemotron_engine::{Engine, EngineError, LiveSession, Segment, SegmentEvent, SegmentSettings, StreamingMode};
use tokio::sync::oneshot;

use super::protocol::SAMPLE_RATE;
use crate::metrics::Metrics;

/// A session's number, given by the scheduler.
pub type SessionId = u64;

/// What a step made final.
#[derive(Debug)]
pub struct Step {
    /// Segment events, in the order `diarize --stream` prints them.
    pub events: Vec<SegmentEvent>,
    /// Seconds of audio from the stream's start whose frames are final.
    pub processed_until: f64,
    /// Each slot's enrolled name (empty without known speakers; known before the first event).
    pub names: Vec<Option<String>>,
}

/// What the end of a stream made final, and the whole stream's segments.
#[derive(Debug)]
pub struct Finished {
    /// The last events.
    pub events: Vec<SegmentEvent>,
    /// Every segment of the stream, ordered as `diarize --stream` writes its segment file.
    pub segments: Vec<Segment>,
    /// Each slot's enrolled name (empty without known speakers).
    pub names: Vec<Option<String>>,
}

/// Why a command failed.
#[derive(Debug, thiserror::Error)]
pub enum StepError {
    /// The engine refused or failed.
    #[error(transparent)]
    Engine(#[from] EngineError),
    /// The session's step panicked (a bug); the session is gone, the others go on.
    #[error("the session's step failed unexpectedly (a bug); the session was dropped")]
    Panicked,
    /// The scheduler has stopped (the server is going down).
    #[error("the scheduler has stopped")]
    Stopped,
}

enum Command {
    Open {
        mode: StreamingMode,
        settings: SegmentSettings,
        reply: oneshot::Sender<Result<SessionId, StepError>>,
    },
    /// A session made elsewhere (a fork of one primed with known speakers).
    Adopt {
        session: Box<LiveSession>,
        reply: oneshot::Sender<Result<SessionId, StepError>>,
    },
    Push {
        id: SessionId,
        samples: Vec<f32>,
        reply: oneshot::Sender<Result<Step, StepError>>,
    },
    Finish {
        id: SessionId,
        reply: oneshot::Sender<Result<Finished, StepError>>,
    },
    /// The client went away: drop the session.
    Close {
        id: SessionId,
    },
    /// The server is going down: end the thread after this round (what is still queued is answered `Stopped`).
    Stop,
}

/// Whether the thread goes on after a round.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Next {
    Serve,
    Stop,
}

/// A session's audio waiting for its step.
struct Due {
    id: SessionId,
    samples: Vec<f32>,
    reply: oneshot::Sender<Result<Step, StepError>>,
}

/// The sending side, cloned into every session's task.
#[derive(Clone)]
pub struct SchedulerHandle {
    commands: Sender<Command>,
    metrics: Arc<Metrics>,
    /// The thread, joined by [`SchedulerHandle::stop`].
    thread: Arc<Mutex<Option<JoinHandle<()>>>>,
}

/// The gather window.
#[derive(Clone, Copy, Debug)]
pub struct Window {
    /// Most commands per round (at least 1).
    pub max_batch: usize,
    /// Longest wait for more commands after a round's first.
    pub max_wait: Duration,
}

impl SchedulerHandle {
    /// Starts the scheduler's thread on `engine`; it stops once every handle is dropped.
    pub fn start(engine: Arc<Engine>, window: Window, metrics: Arc<Metrics>) -> std::io::Result<Self> {
        let (commands, queue) = mpsc::channel();
        let scheduler_metrics = metrics.clone();
        let thread = std::thread::Builder::new().name("stream-scheduler".into()).spawn(move || {
            let mut scheduler = Scheduler { engine, sessions: HashMap::new(), next_id: 0, window };
            scheduler.serve(&queue, &scheduler_metrics);
        })?;
        Ok(Self { commands, metrics, thread: Arc::new(Mutex::new(Some(thread))) })
    }

    /// Ends the thread after its current round and waits for it (blocking): its sessions and its share of the
    /// engine are dropped before this returns, so a process that exits next does not race the thread's GPU work.
    pub fn stop(&self) {
        self.send(Command::Stop);
        let thread = self.thread.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(thread) = thread {
            // A panic there was already reported by the panic hook; the thread is gone either way.
            let _ = thread.join();
        }
    }

    /// A new session of `mode` whose events follow `settings`.
    pub async fn open(&self, mode: StreamingMode, settings: SegmentSettings) -> Result<SessionId, StepError> {
        self.call(|reply| Command::Open { mode, settings, reply }).await
    }

    /// Takes `session` (made off the scheduler's thread: priming one runs the profile's clips) as a new session.
    pub async fn adopt(&self, session: LiveSession) -> Result<SessionId, StepError> {
        let session = Box::new(session);
        self.call(|reply| Command::Adopt { session, reply }).await
    }

    /// Feeds `samples` (16 kHz mono) to session `id`.
    pub async fn push(&self, id: SessionId, samples: Vec<f32>) -> Result<Step, StepError> {
        self.call(|reply| Command::Push { id, samples, reply }).await
    }

    /// Ends session `id`: its last chunk runs.
    pub async fn finish(&self, id: SessionId) -> Result<Finished, StepError> {
        self.call(|reply| Command::Finish { id, reply }).await
    }

    /// Drops session `id` without finishing it.
    pub fn close(&self, id: SessionId) {
        self.send(Command::Close { id });
    }

    async fn call<T>(
        &self,
        command: impl FnOnce(oneshot::Sender<Result<T, StepError>>) -> Command,
    ) -> Result<T, StepError> {
        let (reply, answer) = oneshot::channel();
        self.send(command(reply));
        answer.await.unwrap_or(Err(StepError::Stopped))
    }

    fn send(&self, command: Command) {
        self.metrics.queue_depth.inc();
        if self.commands.send(command).is_err() {
            // The thread has ended: the dropped reply sender answers `Stopped`.
            self.metrics.queue_depth.dec();
        }
    }
}

/// The scheduler's thread: the engine and every live session, so that a round's pushes go to the engine in one call.
struct Scheduler {
    engine: Arc<Engine>,
    sessions: HashMap<SessionId, LiveSession>,
    next_id: SessionId,
    window: Window,
}

impl Scheduler {
    fn serve(&mut self, queue: &Receiver<Command>, metrics: &Metrics) {
        while let Ok(first) = queue.recv() {
            let round = self.gather(first, queue);
            metrics.queue_depth.dec_by(round.len() as i64);
            metrics.round_size.observe(round.len() as f64);
            if self.run_round(round, metrics) == Next::Stop {
                break;
            }
        }
    }

    /// The round that starts with `first`: what else arrives within the window, up to `max_batch` commands.
    fn gather(&self, first: Command, queue: &Receiver<Command>) -> Vec<Command> {
        let mut round = vec![first];
        let deadline = Instant::now() + self.window.max_wait;
        while round.len() < self.window.max_batch.max(1) {
            match queue.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
                Ok(command) => round.push(command),
                Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => break,
            }
        }
        round
    }

    /// Runs a round: the sessions it opens, then the steps of every session with audio due (in one call, see
    /// [`Scheduler::run_steps`]), then the sessions it finishes or drops. Each session has at most one command in
    /// flight (a `Close` comes last anyway), so this order never reorders one session's commands.
    fn run_round(&mut self, round: Vec<Command>, metrics: &Metrics) -> Next {
        let (mut due, mut finishes, mut closes) = (Vec::new(), Vec::new(), Vec::new());
        let mut next = Next::Serve;
        for command in round {
            match command {
                Command::Open { mode, settings, reply } => {
                    let _ = reply.send(self.engine.stream(mode, &settings).map(|s| self.add(s)).map_err(Into::into));
                }
                Command::Adopt { session, reply } => {
                    let _ = reply.send(Ok(self.add(*session)));
                }
                Command::Push { id, samples, reply } => due.push(Due { id, samples, reply }),
                Command::Finish { id, reply } => finishes.push((id, reply)),
                Command::Close { id } => closes.push(id),
                Command::Stop => next = Next::Stop,
            }
        }
        self.run_steps(due, metrics);
        for (id, reply) in finishes {
            let finished = match self.sessions.remove(&id) {
                Some(session) => catch_unwind(AssertUnwindSafe(|| session.finish_recording()))
                    .map_err(|_| StepError::Panicked)
                    .and_then(|done| done.map_err(StepError::from))
                    .map(|done| Finished {
                        events: done.events,
                        segments: done.segments,
                        names: done.diarized.names().to_vec(),
                    }),
                None => Err(StepError::Stopped),
            };
            let _ = reply.send(finished);
        }
        for id in closes {
            self.sessions.remove(&id);
        }
        next
    }

    /// The steps of every session due this round, as one batched push. Each session has at most one push in
    /// flight, so a round names each session once; should one come twice, its second push runs in a batch of its
    /// own after the first.
    fn run_steps(&mut self, mut due: Vec<Due>, metrics: &Metrics) {
        while !due.is_empty() {
            let mut batch: Vec<(Due, LiveSession)> = Vec::with_capacity(due.len());
            let mut later = Vec::new();
            for step in due {
                if batch.iter().any(|(taken, _)| taken.id == step.id) {
                    later.push(step);
                } else if let Some(session) = self.sessions.remove(&step.id) {
                    batch.push((step, session));
                } else {
                    let _ = step.reply.send(Err(StepError::Stopped));
                }
            }
            self.run_batch(batch, metrics);
            due = later;
        }
    }

    /// Pushes each session's audio in one call; a panic drops the batch's sessions (the others go on).
    fn run_batch(&mut self, mut batch: Vec<(Due, LiveSession)>, metrics: &Metrics) {
        let started = Instant::now();
        let results = catch_unwind(AssertUnwindSafe(|| {
            let mut pushes: Vec<(&mut LiveSession, &[f32])> =
                batch.iter_mut().map(|(step, session)| (session, step.samples.as_slice())).collect();
            LiveSession::push_many(&mut pushes)
        }));
        let Ok(results) = results else {
            for (step, _) in batch {
                let _ = step.reply.send(Err(StepError::Panicked));
            }
            return;
        };
        for ((step, session), result) in batch.into_iter().zip(results) {
            let seconds = step.samples.len() as f64 / f64::from(SAMPLE_RATE);
            metrics.engine_call("stream", started, seconds);
            let reply = result
                .map(|events| Step {
                    events,
                    processed_until: session.processed_seconds(),
                    names: session.names().to_vec(),
                })
                .map_err(StepError::from);
            self.sessions.insert(step.id, session);
            let _ = step.reply.send(reply);
        }
    }

    fn add(&mut self, session: LiveSession) -> SessionId {
        self.next_id += 1;
        self.sessions.insert(self.next_id, session);
        self.next_id
    }
}
