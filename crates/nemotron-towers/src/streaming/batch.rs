//! Many live streams, one GPU: the chunks that several sessions have due run as one submission (rows of all of
//! them in each GEMM; attention, speaker cache and FIFO per session), not one submission per session.

#[cfg(feature = "parallel")]
use rayon::prelude::*;

use crate::error::Result;
use crate::sortformer::{StepOutput, each_step};
use crate::streaming::session::{DiarizerSession, DueChunk, StreamOutput};

/// Pushes `samples` into each session, as [`DiarizerSession::push`] does one by one, but runs the chunks that are
/// due at the same time as batched steps: one submission (and one readback) per diarizer, whatever the sessions'
/// modes, for as many sessions as one step's buffers hold. Each session's output is its own: every step of a batch is its own
/// sequence (padded to the longest, the padding masked), equal to the solo step within float rounding (≤ 1e-6
/// relative, not the same bits: split products and the attention's key split follow the batch's size).
///
/// Returns one result per entry, in order. A session whose samples are refused (not finite) is left untouched; a
/// failure of a shared step is every session's in it ([`crate::Error::BatchedStep`], the step's error its source;
/// alone in its step, the error itself), and their chunks run on their next push, as after a failed
/// [`DiarizerSession::push`].
pub async fn push_many(pushes: &mut [(&mut DiarizerSession, &[f32])]) -> Vec<Result<StreamOutput>> {
    let mut outputs: Vec<Result<StreamOutput>> = pushes
        .iter_mut()
        .map(|(session, samples)| session.check_samples(samples).map(|()| session.accept(samples)))
        .collect();
    loop {
        let due: Vec<usize> = (0..pushes.len()).filter(|&i| outputs[i].is_ok() && pushes[i].0.chunk_due()).collect();
        if due.is_empty() {
            break;
        }
        for batch in batches(pushes, due) {
            run_batch(pushes, &batch, &mut outputs).await;
        }
    }
    for (session, _) in pushes.iter_mut() {
        session.drop_used_samples();
    }
    outputs
}

/// The sessions of `due` in groups that can share a step (same diarizer; any modes, whose steps differ by a few rows
/// of chunk and look-ahead, the shorter ones padded), each group cut into submissions of as many steps as the tower's
/// buffers hold.
fn batches(pushes: &[(&mut DiarizerSession, &[f32])], due: Vec<usize>) -> Vec<Vec<usize>> {
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for i in due {
        let session = &pushes[i].0;
        let same = |g: &Vec<usize>| pushes[g[0]].0.diarizer().is(session.diarizer());
        match groups.iter_mut().find(|g| same(g)) {
            Some(group) => group.push(i),
            None => groups.push(vec![i]),
        }
    }
    groups
        .into_iter()
        .flat_map(|group| {
            let sortformer = pushes[group[0]].0.diarizer().sortformer();
            let step_rows = group.iter().map(|&i| pushes[i].0.max_step_rows()).max().unwrap_or(1);
            let per_submission = sortformer.steps_per_submission(step_rows, usize::MAX, None);
            group.chunks(per_submission).map(<[usize]>::to_vec).collect::<Vec<_>>()
        })
        .collect()
}

/// Prepares the next chunk of each session of `batch` (indices in increasing order), runs their steps as one
/// submission, and completes them. The host's part (front end before, speaker cache after) runs on all cores
/// (rayon's pool; without the `parallel` feature, the calling thread).
async fn run_batch(
    pushes: &mut [(&mut DiarizerSession, &[f32])],
    batch: &[usize],
    outputs: &mut [Result<StreamOutput>],
) {
    let mut members: Vec<(usize, &mut DiarizerSession)> = pushes
        .iter_mut()
        .enumerate()
        .filter(|(i, _)| batch.binary_search(i).is_ok())
        .map(|(i, (session, _))| (i, &mut **session))
        .collect();
    let prepare = |(_, session): &(usize, &mut DiarizerSession)| session.prepare_chunk(session.chunk_frames(), false);
    #[cfg(feature = "parallel")]
    let prepared: Vec<Result<DueChunk>> = members.par_iter().map(prepare).collect();
    #[cfg(not(feature = "parallel"))]
    let prepared: Vec<Result<DueChunk>> = members.iter().map(prepare).collect();
    let mut ready: Vec<(usize, &mut DiarizerSession, DueChunk)> = Vec::with_capacity(members.len());
    for ((i, session), due) in members.drain(..).zip(prepared) {
        match due {
            Ok(due) => ready.push((i, session, due)),
            Err(error) => outputs[i] = Err(error),
        }
    }
    let Some((_, first, _)) = ready.first() else { return };
    let (sortformer, timing) = (first.diarizer().sortformer(), first.timing());
    let inputs: Vec<_> = ready.iter().map(|(_, session, due)| session.step(due)).collect();
    let steps = each_step(sortformer.steps(&inputs, timing).await, inputs.len());
    drop(inputs);
    let mut work = Vec::with_capacity(ready.len());
    for ((i, session, due), step) in ready.into_iter().zip(steps) {
        match step {
            Ok(step) => work.push((i, session, due, step)),
            Err(error) => outputs[i] = Err(error),
        }
    }
    let complete = |(i, session, due, step): (usize, &mut DiarizerSession, DueChunk, StepOutput)| {
        (i, session.complete_chunk(due, step))
    };
    #[cfg(feature = "parallel")]
    let completed: Vec<(usize, StreamOutput)> = work.into_par_iter().map(complete).collect();
    #[cfg(not(feature = "parallel"))]
    let completed: Vec<(usize, StreamOutput)> = work.into_iter().map(complete).collect();
    for (i, output) in completed {
        if let Ok(out) = &mut outputs[i] {
            out.append(output);
        }
    }
}
