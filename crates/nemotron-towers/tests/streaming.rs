//! Streaming sessions against upstream's (`diar-tiny/streaming.safetensors`: Transformers 5.23 driven by its
//! processor in streaming mode, f64), chunk by chunk; what a session promises whatever the pieces it is fed, the
//! threads it runs on and the length of the stream; and the live segment events of its outputs. (The events on
//! any probabilities: `crates/nemotron-postprocess/tests/live_segments.rs`.)

mod common;
// The check of live events the CPU crate's tests use, shared rather than copied.
#[path = "../../nemotron-postprocess/tests/events/mod.rs"]
mod events;

use nemotron_towers::blocking::Block;
use std::sync::OnceLock;

use common::{case_dir, test_options};
use events::closed_segments;
use nemotron_postprocess::diarization::threshold_segments;
use nemotron_postprocess::diarization::{FrameGrid, LiveSegments, PostProcessing, SegmentEvent, SegmentRule};
use nemotron_testkit::{Rng, f32_to_f64, read_wav, rel_frobenius};
use nemotron_towers::streaming::{ChunkReport, StreamOutput};
use nemotron_towers::{Checkpoint, Diarizer, DiarizerSession, Error, Model, SampleError, StreamingMode};

const TOLERANCE: f64 = 1e-5;

fn model() -> &'static Model {
    static MODEL: OnceLock<Model> = OnceLock::new();
    MODEL.get_or_init(|| {
        let gpu = nemotron_testkit::test_gpu();
        Model::load(gpu, &case_dir("diar-tiny"), &test_options()).block().expect("diar-tiny loads")
    })
}

fn diarizer() -> &'static Diarizer {
    model().diarizer()
}

fn audio() -> &'static [f32] {
    static AUDIO: OnceLock<Vec<f32>> = OnceLock::new();
    AUDIO.get_or_init(|| read_wav(&case_dir("diar-tiny").join("audio.wav")))
}

/// One mode's upstream session.
struct Upstream {
    /// `(start, end)` samples of each chunk.
    samples: Vec<(usize, usize)>,
    mel_frames: Vec<usize>,
    lookahead: Vec<usize>,
    frames: Vec<usize>,
    /// `[Σ mel_frames, 128]`
    features: Vec<f32>,
    /// `[Σ frames, 8]`
    logits: Vec<f64>,
    probabilities: Vec<f64>,
}

fn upstream(mode: StreamingMode) -> Upstream {
    let file = Checkpoint::open(&case_dir("diar-tiny").join("streaming.safetensors")).expect("streaming.safetensors");
    let key = |name: &str| format!("{}.{name}", mode.name());
    let ints = |name: &str| -> Vec<usize> {
        let t = file.tensor(&key(name)).expect(name);
        let width = t.bytes.len() / t.shape.iter().product::<usize>();
        t.bytes
            .chunks_exact(width)
            .map(|b| {
                let mut word = [0u8; 8];
                word[..width].copy_from_slice(b);
                u64::from_le_bytes(word) as usize
            })
            .collect()
    };
    let samples = ints("chunk_samples").chunks_exact(2).map(|p| (p[0], p[1])).collect();
    Upstream {
        samples,
        mel_frames: ints("chunk_mel_frames"),
        lookahead: ints("chunk_lookahead_frames"),
        frames: ints("chunk_frames"),
        features: file.f32(&key("input_features")).expect("features"),
        logits: file.f64(&key("speaker_logits")).expect("logits"),
        probabilities: file.f64(&key("speaker_probabilities")).expect("probabilities"),
    }
}

/// Everything a whole session gave.
#[derive(Default, PartialEq, Debug)]
struct Session {
    logits: Vec<f32>,
    probabilities: Vec<f32>,
    chunks: Vec<ChunkReport>,
}

impl Session {
    fn add(&mut self, output: StreamOutput) {
        assert_eq!(output.first_frame * 8, self.logits.len(), "outputs follow each other");
        self.logits.extend(output.speaker_logits);
        self.probabilities.extend(output.speaker_probabilities);
        self.chunks.extend(output.chunks);
    }

    /// Bit patterns, so that two sessions compare exactly (NaN included).
    fn bits(&self) -> (Vec<u32>, Vec<u32>) {
        let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect();
        (bits(&self.logits), bits(&self.probabilities))
    }
}

/// A session of `mode` over `samples`, fed in pieces of the sizes `pieces` gives (then the rest at once).
fn run(mode: StreamingMode, samples: &[f32], mut pieces: impl FnMut() -> usize) -> Session {
    let mut session = diarizer().session(mode).expect("session");
    let mut out = Session::default();
    let mut fed = 0;
    while fed < samples.len() {
        let end = (fed + pieces().max(1)).min(samples.len());
        out.add(session.push(&samples[fed..end]).block().expect("push"));
        fed = end;
    }
    out.add(session.finish().block().expect("finish"));
    out
}

/// Random piece sizes: single samples, hops, and up to 3 s.
fn random_pieces(seed: u64) -> impl FnMut() -> usize {
    let mut rng = Rng::new(seed);
    move || match rng.below(3) {
        0 => 1 + rng.below(8),
        1 => 1 + rng.below(2_000),
        _ => 1 + rng.below(48_000),
    }
}

/// The session fed the reference's cut: each push ends where a chunk of the reference ends.
fn reference_cut(mode: StreamingMode, reference: &Upstream) -> Session {
    let ends: Vec<usize> = reference.samples.iter().map(|&(_, end)| end).collect();
    let mut next = ends.into_iter();
    let mut fed = 0;
    run(mode, audio(), move || {
        let end = next.next().unwrap_or(usize::MAX);
        let piece = end.saturating_sub(fed);
        fed = end;
        piece
    })
}

#[test]
fn every_mode_matches_upstream_chunk_by_chunk() {
    for mode in StreamingMode::NAMED {
        let name = mode.name();
        let reference = upstream(mode);
        let session = reference_cut(mode, &reference);
        assert_eq!(session.chunks.len(), reference.samples.len(), "{name}: chunks");
        let (mut features_at, mut logits_at, mut worst) = (0, 0, [0.0f64; 2]);
        for (k, chunk) in session.chunks.iter().enumerate() {
            assert_eq!(chunk.index, k);
            let cut = (chunk.samples.start, chunk.samples.end);
            assert_eq!(cut, reference.samples[k], "{name} chunk {k}: samples");
            assert_eq!(chunk.mel_frames.len(), reference.mel_frames[k], "{name} chunk {k}: mel frames");
            assert_eq!(chunk.lookahead, reference.lookahead[k], "{name} chunk {k}: look-ahead");
            assert_eq!(chunk.frames, reference.frames[k], "{name} chunk {k}: frames emitted");
            let features = &reference.features[features_at * 128..(features_at + chunk.mel_frames.len()) * 128];
            let logits = &reference.logits[logits_at * 8..(logits_at + chunk.frames) * 8];
            let errors = [
                rel_frobenius(&chunk.features, &f32_to_f64(features)),
                rel_frobenius(&session.logits[logits_at * 8..(logits_at + chunk.frames) * 8], logits),
            ];
            for (what, error) in ["features", "speaker_logits"].iter().zip(errors) {
                assert!(error <= TOLERANCE, "{name} chunk {k}: {what} relative error {error:.3e}");
            }
            worst = [worst[0].max(errors[0]), worst[1].max(errors[1])];
            features_at += chunk.mel_frames.len();
            logits_at += chunk.frames;
        }
        let logits = rel_frobenius(&session.logits, &reference.logits);
        let probabilities = rel_frobenius(&session.probabilities, &reference.probabilities);
        eprintln!(
            "{name}: {} chunks; relative Frobenius error per chunk at most: features {:.3e}, speaker_logits {:.3e}; \
             whole session: speaker_logits {logits:.3e}, speaker_probabilities {probabilities:.3e}",
            session.chunks.len(),
            worst[0],
            worst[1]
        );
        assert!(logits <= TOLERANCE && probabilities <= TOLERANCE, "{name}: {logits:.3e}, {probabilities:.3e}");
    }
}

#[test]
fn pieces_of_any_size_give_the_same_bits() {
    for (i, mode) in StreamingMode::NAMED.into_iter().enumerate() {
        let reference = reference_cut(mode, &upstream(mode));
        let random = run(mode, audio(), random_pieces(0x5eed + i as u64));
        assert_eq!(random.bits(), reference.bits(), "{}: logits or probabilities differ", mode.name());
        assert_eq!(random.chunks, reference.chunks, "{}: chunk reports differ", mode.name());
    }
}

#[test]
fn sample_by_sample_equals_all_at_once() {
    let mode = StreamingMode::VeryLowLatency;
    let at_once = run(mode, audio(), || usize::MAX);
    let mut session = diarizer().session(mode).unwrap();
    let mut one_by_one = Session::default();
    let mut chunks_on_single_samples = 0;
    let mut fed = 0;
    // One sample per push until three chunks ran, each on the push of the last sample of its cut.
    while chunks_on_single_samples < 3 {
        let due = session.samples_until_next_chunk() == 1;
        let output = session.push(&audio()[fed..fed + 1]).block().unwrap();
        fed += 1;
        assert_eq!(
            output.chunks.len(),
            usize::from(due),
            "sample {fed}: a chunk runs exactly when its cut is complete"
        );
        chunks_on_single_samples += output.chunks.len();
        one_by_one.add(output);
    }
    for piece in audio()[fed..].chunks(999) {
        one_by_one.add(session.push(piece).block().unwrap());
    }
    one_by_one.add(session.finish().block().unwrap());
    assert_eq!(one_by_one.bits(), at_once.bits());
    assert_eq!(one_by_one.chunks, at_once.chunks);
    assert!(at_once.chunks.len() > 3);
}

#[test]
fn sessions_on_four_threads_get_the_sequential_bits() {
    // 4 threads × 4 sessions each (all modes, different lengths), interleaved within a thread.
    let modes = [
        StreamingMode::Custom { chunk: 2, lookahead: 1 },
        StreamingMode::LowLatency,
        StreamingMode::VeryLowLatency,
        StreamingMode::UltraLowLatency,
    ];
    let jobs: Vec<Vec<(StreamingMode, usize)>> =
        (0..4).map(|t| (0..4).map(|s| (modes[(t + s) % 4], 16_000 + 9_973 * (t * 4 + s) % 32_000)).collect()).collect();
    let alone: Vec<Vec<Session>> = jobs
        .iter()
        .map(|thread| thread.iter().map(|&(mode, len)| run(mode, &audio()[..len], || 4_000)).collect())
        .collect();
    let together: Vec<Vec<Session>> = std::thread::scope(|scope| {
        let handles: Vec<_> = jobs
            .iter()
            .enumerate()
            .map(|(t, thread)| scope.spawn(move || interleaved(thread, 0xabc + t as u64)))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for (t, (a, b)) in alone.iter().zip(&together).enumerate() {
        for (s, (a, b)) in a.iter().zip(b).enumerate() {
            assert!(a.bits() == b.bits(), "thread {t}, session {s}: concurrent bits differ from a session alone");
            assert_eq!(a.chunks, b.chunks, "thread {t}, session {s}");
        }
    }
}

/// Runs the sessions of `jobs` side by side, each push to the next session in turn, random piece sizes.
fn interleaved(jobs: &[(StreamingMode, usize)], seed: u64) -> Vec<Session> {
    let mut sessions: Vec<(DiarizerSession, usize, Session)> =
        jobs.iter().map(|&(mode, _)| (diarizer().session(mode).unwrap(), 0, Session::default())).collect();
    let mut pieces = random_pieces(seed);
    while sessions.iter().zip(jobs).any(|((_, fed, _), &(_, len))| *fed < len) {
        for ((session, fed, out), &(_, len)) in sessions.iter_mut().zip(jobs) {
            let end = (*fed + pieces()).min(len);
            out.add(session.push(&audio()[*fed..end]).block().unwrap());
            *fed = end;
        }
    }
    sessions
        .into_iter()
        .map(|(session, _, mut out)| {
            out.add(session.finish().block().unwrap());
            out
        })
        .collect()
}

#[test]
fn batched_pushes_equal_each_session_alone() {
    // Sessions of every mode, two of a mode started apart (their steps differ in length until the cache and FIFO
    // fill: the batch pads them), each fed its own random pieces: some have no chunk due in a push, some several.
    let modes = [
        StreamingMode::LowLatency,
        StreamingMode::LowLatency,
        StreamingMode::VeryLowLatency,
        StreamingMode::UltraLowLatency,
        StreamingMode::UltraLowLatency,
        StreamingMode::Custom { chunk: 2, lookahead: 1 },
    ];
    let starts = [0, 40_000, 8_000, 0, 21_111, 3_000];
    let samples: Vec<&[f32]> = starts.iter().map(|&s| &audio()[s..]).collect();
    let alone: Vec<Session> = modes.iter().zip(&samples).map(|(&mode, s)| run(mode, s, || 4_000)).collect();
    let mut sessions: Vec<DiarizerSession> = modes.iter().map(|&m| diarizer().session(m).unwrap()).collect();
    let mut batched: Vec<Session> = modes.iter().map(|_| Session::default()).collect();
    let mut fed = vec![0; modes.len()];
    let mut pieces: Vec<_> = (0..modes.len()).map(|i| random_pieces(0x5ca1e + i as u64)).collect();
    let mut batch_sizes = Vec::new();
    while fed.iter().zip(&samples).any(|(&f, s)| f < s.len()) {
        let ends: Vec<usize> = (0..modes.len()).map(|i| (fed[i] + pieces[i]()).min(samples[i].len())).collect();
        let mut pushes: Vec<(&mut DiarizerSession, &[f32])> =
            sessions.iter_mut().enumerate().map(|(i, s)| (s, &samples[i][fed[i]..ends[i]])).collect();
        let outputs = nemotron_towers::streaming::push_many(&mut pushes).block();
        batch_sizes.push(outputs.iter().filter(|o| o.as_ref().is_ok_and(|o| !o.chunks.is_empty())).count());
        for (out, output) in batched.iter_mut().zip(outputs) {
            out.add(output.expect("batched push"));
        }
        fed = ends;
    }
    for (out, session) in batched.iter_mut().zip(sessions) {
        out.add(session.finish().block().unwrap());
    }
    assert!(batch_sizes.iter().any(|&n| n >= 3), "some pushes ran several sessions' chunks: {batch_sizes:?}");
    for (i, (a, b)) in alone.iter().zip(&batched).enumerate() {
        assert_eq!(a.chunks, b.chunks, "session {i}: the same chunks, features and rows");
        for (what, x, y) in [("logits", &a.logits, &b.logits), ("probabilities", &a.probabilities, &b.probabilities)] {
            let error = rel_frobenius(y, &f32_to_f64(x));
            eprintln!("session {i} ({}): batched {what} vs alone, relative error {error:.3e}", modes[i].name());
            assert!(error <= 1e-6, "session {i}: batched {what} differ from the session alone by {error:.3e}");
        }
    }
}

#[test]
fn a_refused_push_in_a_batch_leaves_the_others_running() {
    let mut good = diarizer().session(StreamingMode::UltraLowLatency).unwrap();
    let mut bad = diarizer().session(StreamingMode::UltraLowLatency).unwrap();
    let mut broken = audio()[..20_000].to_vec();
    broken[12_345] = f32::NAN;
    let mut pushes: Vec<(&mut DiarizerSession, &[f32])> = vec![(&mut good, &audio()[..20_000]), (&mut bad, &broken)];
    let outputs = nemotron_towers::streaming::push_many(&mut pushes).block();
    assert!(!outputs[0].as_ref().unwrap().chunks.is_empty(), "the good session ran its chunks");
    let Err(Error::Samples(SampleError::NonFinite { index, .. })) = &outputs[1] else {
        panic!("the non-finite sample is refused: {:?}", outputs[1].as_ref().err())
    };
    assert_eq!(*index, 12_345);
    assert_eq!(bad.samples_received(), 0, "a refused push appends nothing");
}

#[test]
fn every_length_and_mode_emits_one_frame_per_hop() {
    let modes = [
        StreamingMode::Custom { chunk: 5, lookahead: 0 },
        StreamingMode::Custom { chunk: 2, lookahead: 3 },
        StreamingMode::Custom { chunk: 1, lookahead: 1 },
        StreamingMode::Custom { chunk: 11, lookahead: 6 },
        StreamingMode::UltraLowLatency,
    ];
    // Single-chunk streams, a first chunk of exactly its cut, tails of every kind, nothing at all.
    for len in [23_045, 17_045, 5_160, 5_159, 3_000, 777, 160, 159, 1, 0] {
        for mode in modes {
            let (chunk, _) = mode.frames();
            let session = run(mode, &audio()[..len], || 1_234);
            let what = format!("{} over {len} samples", mode.name());
            assert_eq!(session.logits.len(), len / 160 * 8, "{what}: one frame per 160 samples");
            assert_eq!(session.probabilities.len(), (len / 160).div_ceil(8) * 8, "{what}: 80 ms frames");
            // Every chunk is a full one but the final one, which may be the last, shorter and without look-ahead.
            let full = |c: &ChunkReport| c.frames == 8 * chunk && c.lookahead == mode.frames().1;
            let last = |c: &ChunkReport| c.lookahead == 0 && c.frames > 0 && c.samples.end == len;
            let count = session.chunks.len();
            assert!(session.chunks.iter().take(count.saturating_sub(1)).all(full), "{what}");
            assert!(session.chunks.last().is_none_or(|c| full(c) || last(c)), "{what}");
            assert!(session.logits.iter().all(|x| x.is_finite()), "{what}");
        }
    }
    // A custom mode with the sizes of a named one is that mode.
    let custom = run(StreamingMode::Custom { chunk: 9, lookahead: 4 }, &audio()[..40_000], || 5_000);
    assert_eq!(custom.bits(), run(StreamingMode::LowLatency, &audio()[..40_000], || 7_000).bits());
}

/// NeMo post-processing settings that exercise every step: hysteresis, both pads, both filters.
fn tuned() -> PostProcessing {
    PostProcessing {
        onset: 0.55,
        offset: 0.35,
        pad_onset: 0.05,
        pad_offset: 0.1,
        min_duration_on: 0.1,
        min_duration_off: 0.15,
        ..PostProcessing::default()
    }
}

#[test]
fn live_events_close_the_segments_of_the_offline_rules() {
    let rules = [
        (StreamingMode::UltraLowLatency, SegmentRule::Threshold { threshold: 0.5, max_speakers: None }),
        (StreamingMode::LowLatency, SegmentRule::Threshold { threshold: 0.3, max_speakers: None }),
        (StreamingMode::VeryLowLatency, SegmentRule::PostProcessing(tuned())),
        (StreamingMode::UltraLowLatency, SegmentRule::PostProcessing(PostProcessing::default())),
    ];
    for (mode, rule) in rules {
        let mut session = diarizer().session(mode).unwrap();
        let config = diarizer().config();
        let mut live = LiveSegments::new(rule, config.speakers, config.encoder.subsampling).unwrap();
        let (mut stream, mut events) = (Session::default(), Vec::new());
        for piece in audio().chunks(2_500) {
            let output = session.push(piece).block().unwrap();
            let final_frames = output.first_frame + output.frames();
            for event in live.push(&output.speaker_logits, &output.speaker_probabilities) {
                // Never about a frame not final yet; with the threshold rule, on the frame that decides it (a
                // segment's first frame, or the first after it).
                let (first, decided) = match event {
                    SegmentEvent::Start { frame, .. } => (frame, frame),
                    SegmentEvent::End { start, end, .. } => (start, end),
                };
                let made_final = output.first_frame..final_frames;
                assert!(first < final_frames, "{event:?} with frames {made_final:?} final");
                if let SegmentRule::Threshold { .. } = rule {
                    assert!(made_final.contains(&decided), "{event:?} with frames {made_final:?} final");
                }
                events.push(event);
            }
            stream.add(output);
        }
        let output = session.finish().block().unwrap();
        events.extend(live.push(&output.speaker_logits, &output.speaker_probabilities));
        stream.add(output);
        events.extend(live.finish());
        let frames = stream.logits.len() / 8;
        let offline = match rule {
            SegmentRule::Threshold { threshold, .. } => threshold_segments(&stream.logits, 8, frames, threshold),
            SegmentRule::PostProcessing(p) => {
                p.segments(&stream.probabilities, 8, frames.div_ceil(8), FrameGrid::sortformer(8))
            }
        };
        let what = format!("{} {rule:?}", mode.name());
        eprintln!("{what}: {} segments", offline.len());
        assert!(offline.len() > 3, "{what}: a test with segments ({})", offline.len());
        assert_eq!(closed_segments(&events, 8), offline, "{what}");
    }
}

#[test]
fn bad_samples_and_modes_are_refused_by_name() {
    let mut session = diarizer().session(StreamingMode::LowLatency).unwrap();
    session.push(&audio()[..1_000]).block().unwrap();
    match session.push(&[0.0, 0.5, f32::NAN]).block() {
        Err(Error::Samples(SampleError::NonFinite { index: 1_002, .. })) => {}
        other => panic!("expected a non-finite sample at 1002, got {other:?}"),
    }
    // The refused piece left no trace: the stream goes on.
    assert_eq!(session.samples_received(), 1_000);
    match diarizer().session(StreamingMode::Custom { chunk: 0, lookahead: 3 }) {
        Err(Error::StreamingMode { mode, chunk: 0, lookahead: 3, .. }) => assert_eq!(mode, "custom_0_3"),
        other => panic!("expected a shape error, got {:?}", other.map(|_| ())),
    }
}

/// A fork continues with the bits of the session it copies, however the two go on afterwards: its speaker cache and
/// FIFO rows on the GPU are its own (the original dropped, its rows taken by a new session that overwrites them).
#[test]
fn a_forked_session_continues_with_the_bits_of_the_original() {
    let mode = StreamingMode::UltraLowLatency;
    let (samples, half) = (audio(), audio().len() / 2);
    let whole = run(mode, samples, || 7_000);
    let mut session = diarizer().session(mode).unwrap();
    let mut before = Session::default();
    for piece in samples[..half].chunks(7_000) {
        before.add(session.push(piece).block().unwrap());
    }
    // 3 rows a chunk against diar-tiny's 10 FIFO and 24 cache rows: the cache is compressed by the 15th chunk.
    assert!(before.chunks.len() > 15, "the cache was compressed before the fork: {} chunks", before.chunks.len());
    let mut fork = session.fork().unwrap();
    // Forks of forks, on one page with their originals.
    let mut forks = [session.fork().unwrap(), fork.fork().unwrap()];
    let [a, b] = &mut forks;
    assert_eq!(a.push(&samples[half..]).block().unwrap(), b.push(&samples[half..]).block().unwrap());
    drop(forks);
    drop(session);
    // Takes the rows the original gave back, and writes them.
    let mut other = diarizer().session(mode).unwrap();
    other.push(&samples[half..]).block().unwrap();
    let mut after = before;
    let rest = &samples[half..];
    let mut fed = 0;
    while fed < rest.len() {
        let end = (fed + 7_000 - (half + fed) % 7_000).min(rest.len());
        after.add(fork.push(&rest[fed..end]).block().unwrap());
        fed = end;
    }
    after.add(fork.finish().block().unwrap());
    assert_eq!(after.chunks, whole.chunks, "the same chunks, features and rows");
    assert_eq!(after.bits(), whole.bits(), "the fork's outputs are the bits of the session it copied");
}
