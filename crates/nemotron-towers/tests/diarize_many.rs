//! Offline diarization of many recordings side by side (`Diarizer::batch`): each recording's logits and
//! probabilities are the bits it gets alone, whatever the batch it runs in and whenever it joins, and a refused
//! recording leaves the others as they are.

mod common;

use std::ops::ControlFlow;
use std::sync::OnceLock;

use common::{case_dir, test_options};
use nemotron_testkit::read_wav;
use nemotron_towers::blocking::Block;
use nemotron_towers::{BatchLimits, Diarization, Error, Features, Model};

fn model() -> &'static Model {
    static MODEL: OnceLock<Model> = OnceLock::new();
    MODEL.get_or_init(|| {
        let gpu = nemotron_testkit::test_gpu();
        Model::load(gpu, &case_dir("diar-tiny"), &test_options()).block().expect("diar-tiny loads")
    })
}

/// Recordings of different lengths cut from the case's audio: shorter than one chunk (24 encoder frames, 1.92 s),
/// about one chunk, a few chunks and the whole file (with a start off the first sample, so that no two are
/// prefixes of each other).
fn recordings() -> Vec<Vec<f32>> {
    let audio = read_wav(&case_dir("diar-tiny").join("audio.wav"));
    let cuts = [(0, 8_000), (1_234, 1_234 + 31_000), (5_000, 5_000 + 97_000), (0, audio.len())];
    cuts.iter().map(|&(from, to)| audio[from..to.min(audio.len())].to_vec()).collect()
}

fn features(samples: &[f32]) -> Features {
    model().diarizer().features(samples).expect("front end")
}

fn alone(samples: &[f32]) -> Diarization {
    model().diarizer().diarize_audio(samples, &mut |_, _, _| ControlFlow::Continue(())).block().expect("diarize alone")
}

fn bits(values: &[f32]) -> Vec<u32> {
    values.iter().map(|v| v.to_bits()).collect()
}

fn assert_same_bits(got: &Diarization, want: &Diarization, what: &str) {
    assert_eq!(bits(&got.speaker_logits), bits(&want.speaker_logits), "{what}: logits");
    assert_eq!(bits(&got.speaker_probabilities), bits(&want.speaker_probabilities), "{what}: probabilities");
    assert!(!want.speaker_logits.is_empty(), "{what}: no logits");
}

/// Recordings all added before the first step (a front end's list of files), each one's result by its number.
fn diarize_all(
    features: Vec<Features>,
    limits: &BatchLimits,
    progress: &mut dyn FnMut(usize, usize, usize),
) -> Vec<Result<Diarization, Error>> {
    let mut batch = model().diarizer().batch(limits);
    let numbers: Vec<usize> = features.into_iter().map(|f| batch.add(f)).collect();
    assert_eq!(numbers, (0..numbers.len()).collect::<Vec<_>>(), "numbers in the order added");
    let mut results: Vec<Option<Result<Diarization, Error>>> = numbers.iter().map(|_| None).collect();
    while !batch.is_empty() {
        for (number, result) in batch.step(progress).block() {
            assert!(results[number].is_none(), "recording {number} reported twice");
            results[number] = Some(result);
        }
    }
    results.into_iter().enumerate().map(|(i, r)| r.unwrap_or_else(|| panic!("recording {i} not reported"))).collect()
}

#[test]
fn recordings_diarized_together_are_bit_for_bit_those_diarized_alone() {
    let recordings = recordings();
    let c = model().diarizer().config();
    let chunk_samples = c.chunks.length * c.encoder.subsampling * 160;
    assert!(recordings[0].len() < chunk_samples && recordings[2].len() > 2 * chunk_samples, "the cuts cover the cases");
    let solo: Vec<Diarization> = recordings.iter().map(|r| alone(r)).collect();
    // All at once, two at a time (a finished recording's place taken by the next), and one at a time.
    let limits = [
        BatchLimits::default(),
        BatchLimits { max_recordings: 2, max_rows: None },
        BatchLimits { max_recordings: 8, max_rows: Some(1) },
    ];
    for limits in limits {
        let mut steps = vec![0; recordings.len()];
        let inputs = recordings.iter().map(|r| features(r)).collect();
        let batched = diarize_all(inputs, &limits, &mut |i, done, all| {
            assert_eq!(done, steps[i] + 1, "recording {i}: progress in order");
            assert!(done <= all);
            steps[i] = done;
        });
        assert_eq!(batched.len(), recordings.len());
        for (i, (got, want)) in batched.iter().zip(&solo).enumerate() {
            let got = got.as_ref().unwrap_or_else(|e| panic!("recording {i} under {limits:?}: {e}"));
            assert_same_bits(got, want, &format!("recording {i} under {limits:?}"));
        }
        assert!(steps.iter().all(|&s| s > 0), "every recording reported its steps");
    }
}

#[test]
fn a_refused_recording_is_reported_and_the_others_run_as_alone() {
    let recordings = recordings();
    let mut inputs: Vec<Features> = recordings.iter().map(|r| features(r)).collect();
    // Features with no valid frame: refused before any step.
    let mut bad = inputs[1].clone();
    bad.valid = 0;
    inputs.insert(1, bad);
    let batched = diarize_all(inputs, &BatchLimits::default(), &mut |_, _, _| {});
    assert_eq!(batched.len(), recordings.len() + 1);
    assert!(
        matches!(&batched[1], Err(Error::Features { .. })),
        "the bad entry is refused: {:?}",
        batched[1].as_ref().err()
    );
    let good = batched.iter().enumerate().filter(|(i, _)| *i != 1).map(|(_, r)| r);
    for (i, (got, samples)) in good.zip(&recordings).enumerate() {
        let got = got.as_ref().unwrap_or_else(|e| panic!("recording {i}: {e}"));
        assert_same_bits(got, &alone(samples), &format!("recording {i} beside a refused one"));
    }
}

/// A batch that takes recordings while it runs (a server's concurrent requests): each is reported once, by the number
/// `add` gave it, with the bits it gets alone; refused features are reported by the next step.
#[test]
fn recordings_added_while_the_batch_runs_get_the_bits_they_get_alone() {
    let recordings = recordings();
    let solo: Vec<Diarization> = recordings.iter().map(|r| alone(r)).collect();
    let mut batch = model().diarizer().batch(&BatchLimits { max_recordings: 2, max_rows: None });
    let mut numbers = vec![batch.add(features(&recordings[3])), batch.add(features(&recordings[0]))];
    let mut broken = features(&recordings[1]);
    broken.data.pop();
    let refused = batch.add(broken);
    let mut reported: Vec<Option<Result<Diarization, Error>>> = (0..=recordings.len()).map(|_| None).collect();
    let mut steps = 0;
    while !batch.is_empty() {
        // The others join after the first steps, while the long recording runs.
        if steps == 2 {
            numbers.extend([batch.add(features(&recordings[2])), batch.add(features(&recordings[1]))]);
        }
        for (number, result) in batch.step(&mut |_, _, _| {}).block() {
            assert!(reported[number].is_none(), "recording {number} reported twice");
            reported[number] = Some(result);
        }
        steps += 1;
    }
    assert_eq!((numbers, refused), (vec![0, 1, 3, 4], 2), "numbers in the order added");
    let Some(Err(Error::Features { problem, .. })) = &reported[2] else { panic!("the broken features are refused") };
    assert!(problem.contains("values"), "{problem}");
    for (number, want) in [(0, &solo[3]), (1, &solo[0]), (3, &solo[2]), (4, &solo[1])] {
        let got = reported[number].as_ref().expect("reported").as_ref().expect("diarized");
        assert_same_bits(got, want, &format!("recording {number}"));
    }
}
