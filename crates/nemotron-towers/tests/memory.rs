//! GPU memory after a peak (`Gpu::memory_in_use`, the bytes of the live buffers): the pages of live sessions' slots
//! and the workspaces of batched steps are given back when the sessions or recordings that needed them are gone,
//! wave after wave, and the workspaces shrink while a few sessions go on with small steps. Each test has a GPU
//! context of its own, so that the counter sees its buffers alone.

mod common;

use common::{case_dir, test_options};
use gpu_core::Gpu;
use nemotron_testkit::read_wav;
use nemotron_towers::blocking::Block;
use nemotron_towers::streaming::push_many;
use nemotron_towers::{BatchLimits, Diarizer, DiarizerBatch, DiarizerSession, Model, StreamingMode};

/// One encoder frame of chunk and one of look-ahead: many small steps from a short file.
const MODE: StreamingMode = StreamingMode::Custom { chunk: 1, lookahead: 1 };

/// Sessions of a wave: pages of 1, 2, 4, … 64 slots.
const SESSIONS: usize = 100;

fn model(gpu: &Gpu) -> Model {
    Model::load(gpu, &case_dir("diar-tiny"), &test_options()).block().expect("diar-tiny loads")
}

fn own_gpu() -> Gpu {
    Gpu::with_options(&nemotron_testkit::test_gpu_options()).block().expect("a GPU adapter")
}

fn audio() -> Vec<f32> {
    read_wav(&case_dir("diar-tiny").join("audio.wav"))
}

/// Bytes of a page of one slot: the silence row and two halves of a step's rows.
fn one_slot_page(diarizer: &Diarizer) -> u64 {
    let c = diarizer.config();
    let (chunk, lookahead) = MODE.frames();
    let step_rows = c.streaming_cache.cache_length + c.streaming_cache.fifo_length + chunk + lookahead;
    ((1 + 2 * step_rows) * c.encoder.hidden * 4) as u64
}

/// Pushes `samples` into every session as one batched call; every push must succeed.
fn push_all(sessions: &mut [DiarizerSession], samples: &[f32]) {
    let mut pushes: Vec<(&mut DiarizerSession, &[f32])> = sessions.iter_mut().map(|s| (s, samples)).collect();
    for output in push_many(&mut pushes).block() {
        assert!(!output.expect("a batched push").chunks.is_empty(), "each session ran a step");
    }
}

/// `SESSIONS` sessions, each through one batched step of the first `samples`.
fn wave(diarizer: &Diarizer, samples: &[f32]) -> Vec<DiarizerSession> {
    let mut sessions: Vec<DiarizerSession> = (0..SESSIONS).map(|_| diarizer.session(MODE).unwrap()).collect();
    push_all(&mut sessions, samples);
    sessions
}

#[test]
fn live_sessions_give_their_pages_and_workspaces_back_when_they_end() {
    let gpu = own_gpu();
    let model = model(&gpu);
    let diarizer = model.diarizer();
    let audio = audio();
    let first_step = &audio[..16_000];
    // One session first: what stays once every session has gone (a reserve page, the rotary table).
    push_all(&mut [diarizer.session(MODE).unwrap()], first_step);
    let start = gpu.memory_in_use();
    let page = one_slot_page(diarizer);
    let mut after_waves = Vec::new();
    for _ in 0..3 {
        gpu.reset_peak_memory();
        drop(wave(diarizer, first_step));
        let peak = gpu.peak_memory() - start;
        assert!(peak >= SESSIONS as u64 * page, "the wave's pages held its sessions: {peak} bytes at the peak");
        let after = gpu.memory_in_use();
        eprintln!("start {start} bytes, wave peak +{peak}, after the wave {after}");
        assert!(after <= start + page, "after the wave {after} bytes are held, {start} before it (pages of {page})");
        after_waves.push(after);
    }
    assert!(after_waves.iter().all(|&a| a == after_waves[0]), "waves leave the same: {after_waves:?}");
}

#[test]
fn workspaces_shrink_while_one_session_goes_on_with_small_steps() {
    let gpu = own_gpu();
    let model = model(&gpu);
    let diarizer = model.diarizer();
    let audio = audio();
    let (first_step, rest) = (&audio[..16_000], &audio[16_000..64_000]);
    let mut sessions = wave(diarizer, first_step);
    let mut kept = sessions.remove(0);
    drop(sessions);
    let with_peak_workspaces = gpu.memory_in_use();
    // Dozens of steps of one session (one chunk of 80 ms each), many more than a workspace waits before it shrinks.
    let steps = kept.push(rest).block().expect("the kept session's steps").chunks.len();
    assert!(steps >= 2 * gpu_core::SHRINK_AFTER_CALLS, "{steps} steps");
    let kept_alone = gpu.memory_in_use();
    drop(kept);
    // The same stream in a session that only ever stepped alone: its workspaces fit its largest step.
    let mut alone = diarizer.session(MODE).unwrap();
    push_all(std::slice::from_mut(&mut alone), first_step);
    alone.push(rest).block().expect("the lone session's steps");
    let fresh = gpu.memory_in_use();
    eprintln!(
        "after the wave {with_peak_workspaces} bytes, after its last session's steps {kept_alone}; alone {fresh}"
    );
    // Beside the kept session's page, the wave left its reserve (the smallest page it emptied, of two slots), and the
    // scratch buffers' headroom follows the order of their requests: allow 2 % of what the wave grew for it.
    let reserve = 2 * one_slot_page(diarizer);
    let headroom = (with_peak_workspaces - fresh) / 50;
    assert!(
        kept_alone <= fresh + reserve + headroom,
        "the kept session holds {kept_alone} bytes, one that stepped alone {fresh}, {with_peak_workspaces} after the wave"
    );
}

#[test]
fn offline_batches_give_their_workspaces_back_when_their_recordings_are_done() {
    let gpu = own_gpu();
    let model = model(&gpu);
    let diarizer = model.diarizer();
    let audio = audio();
    let recordings =
        |n: usize| (0..n).map(|i| diarizer.features(&audio[i * 1_000..][..80_000]).unwrap()).collect::<Vec<_>>();
    let limits = |n: usize| BatchLimits { max_recordings: n, max_rows: None };
    // `n` recordings through `batch`, until it has reported them all.
    let diarize = |batch: &mut DiarizerBatch, n: usize| {
        for features in recordings(n) {
            batch.add(features);
        }
        while !batch.is_empty() {
            for (_, result) in batch.step(&mut |_, _, _| {}).block() {
                result.expect("a recording of the batch");
            }
        }
    };
    diarize(&mut diarizer.batch(&limits(1)), 1);
    let start = gpu.memory_in_use();
    for _ in 0..2 {
        gpu.reset_peak_memory();
        diarize(&mut diarizer.batch(&limits(16)), 16);
        let (peak, after) = (gpu.peak_memory(), gpu.memory_in_use());
        eprintln!("start {start} bytes, batch peak {peak}, after it {after}");
        assert!(peak > start, "the batch of 16 grew the workspaces: peak {peak} bytes");
        assert_eq!(after, start, "after the batch");
    }
    // A batch that lives on (a server's) gives them back once its recordings are done, too.
    let mut batch = diarizer.batch(&limits(16));
    diarize(&mut batch, 16);
    assert_eq!(gpu.memory_in_use(), start, "after the lasting batch's recordings");
}
