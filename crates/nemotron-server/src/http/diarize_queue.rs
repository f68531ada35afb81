//! Concurrent diarization requests diarized side by side: one thread owns a `DiarizeBatch` and adds each request's
//! features as they arrive, between its steps (continuous batching, as the stream scheduler's rounds), so that the
//! steps of up to `--offline-batch` recordings share each GPU submission; a request's answer leaves as soon as its own
//! recording is done, whatever the others' lengths.

use std::collections::HashMap;
use std::sync::mpsc::{self, Receiver, Sender, SyncSender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use axum::http::StatusCode;
use nemotron_engine::{BatchLimits, DiarizeBatch, Diarized, Engine, EngineError, Input};

use crate::error::ApiError;
use crate::metrics::Metrics;

/// A recording's features and where its result goes.
struct Job {
    input: Input,
    reply: SyncSender<Result<Diarized, EngineError>>,
}

/// The diarization thread and the way to it.
pub struct DiarizeQueue {
    jobs: Mutex<Option<Sender<Job>>>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl DiarizeQueue {
    /// Starts the thread: up to `batch` recordings' steps per submission; the queue's sizes go to `metrics`.
    pub fn start(engine: Arc<Engine>, batch: usize, metrics: Arc<Metrics>) -> std::io::Result<Self> {
        let (jobs, queue) = mpsc::channel();
        let limits = BatchLimits { max_recordings: batch, ..BatchLimits::default() };
        let run = move || serve(&engine, &limits, &queue, &metrics);
        let thread = std::thread::Builder::new().name("diarize-queue".into()).spawn(run)?;
        Ok(Self { jobs: Mutex::new(Some(jobs)), thread: Mutex::new(Some(thread)) })
    }

    /// Diarizes `input` (features: the front end has run on the caller's thread) beside the other requests'
    /// recordings; blocks until its result is ready (call it from a blocking thread).
    pub fn diarize(&self, input: Input) -> Result<Diarized, ApiError> {
        let (reply, result) = mpsc::sync_channel(1);
        let sent = match &*self.jobs.lock().unwrap_or_else(|p| p.into_inner()) {
            Some(jobs) => jobs.send(Job { input, reply }).is_ok(),
            None => false,
        };
        if !sent {
            return Err(ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "shutting_down", "the server is shutting down"));
        }
        let stopped = "the diarization thread stopped before this request's result";
        result
            .recv()
            .map_err(|_| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", stopped))?
            .map_err(ApiError::from)
    }

    /// Ends the thread once the recordings it holds are done, and waits for it (blocking).
    pub fn stop(&self) {
        drop(self.jobs.lock().unwrap_or_else(|p| p.into_inner()).take());
        let thread = self.thread.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(thread) = thread {
            // A panic there was already reported by the panic hook; its requests got a closed channel.
            let _ = thread.join();
        }
    }
}

/// The thread: waits for a recording while none runs, takes every one that arrived before each step, answers each as
/// its recording is done; ends when the queue is closed and its recordings are done.
fn serve(engine: &Engine, limits: &BatchLimits, queue: &Receiver<Job>, metrics: &Metrics) {
    let mut batch = engine.diarize_batch(limits);
    let mut replies = Replies::new();
    loop {
        if batch.is_empty() {
            match queue.recv() {
                Ok(job) => add(job, &mut batch, &mut replies),
                Err(_) => return,
            }
        }
        while let Ok(job) = queue.try_recv() {
            add(job, &mut batch, &mut replies);
        }
        metrics.diarize_queue.observe(replies.len() as f64);
        for (number, result) in batch.step(&mut |_, _, _| {}) {
            if let Some(reply) = replies.remove(&number) {
                // The request may have timed out and left: its result is dropped.
                let _ = reply.send(result);
            }
        }
    }
}

type Replies = HashMap<usize, SyncSender<Result<Diarized, EngineError>>>;

fn add(job: Job, batch: &mut DiarizeBatch<'_>, replies: &mut Replies) {
    replies.insert(batch.add(job.input), job.reply);
}
