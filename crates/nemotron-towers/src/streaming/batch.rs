//! Many live streams, one GPU: the chunks that several sessions have due run as one submission (rows of all of
//! them in each GEMM; attention, speaker cache and FIFO per session), not one submission per session.

use crate::error::{Error, Result};
use crate::streaming::session::{DiarizerSession, DueChunk, StreamOutput};

/// Pushes `samples` into each session, as [`DiarizerSession::push`] does one by one, but runs the chunks that are
/// due at the same time as batched steps: one submission (and one readback) per mode and diarizer, for as many
/// sessions as one step's buffers hold. Each session's output is its own: every step of a batch is its own
/// sequence (padded to the longest, the padding masked), equal to the solo step within float rounding (≤ 1e-6
/// relative, not the same bits: split products and the attention's key split follow the batch's size).
///
/// Returns one result per entry, in order. A session whose samples are refused (not finite) is left untouched; a
/// failure of a shared step is every session's in it ([`Error::BatchedStep`]), and their chunks run on their
/// next push, as after a failed [`DiarizerSession::push`].
pub fn push_many(pushes: &mut [(&mut DiarizerSession<'_>, &[f32])]) -> Vec<Result<StreamOutput>> {
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
            run_batch(pushes, &batch, &mut outputs);
        }
    }
    for (session, _) in pushes.iter_mut() {
        session.drop_used_samples();
    }
    outputs
}

/// The sessions of `due` in groups that can share a step (same diarizer and mode), each group cut into
/// submissions of as many steps as the tower's buffers hold.
fn batches(pushes: &[(&mut DiarizerSession<'_>, &[f32])], due: Vec<usize>) -> Vec<Vec<usize>> {
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for i in due {
        let session = &pushes[i].0;
        let same = |g: &Vec<usize>| {
            let other = &pushes[g[0]].0;
            std::ptr::eq(other.diarizer(), session.diarizer()) && other.mode() == session.mode()
        };
        match groups.iter_mut().find(|g| same(g)) {
            Some(group) => group.push(i),
            None => groups.push(vec![i]),
        }
    }
    groups
        .into_iter()
        .flat_map(|group| {
            let session = &pushes[group[0]].0;
            let per_step = session.max_step_rows().max(1);
            let per_submission = (session.diarizer().sortformer().tower().max_rows() / per_step).max(1);
            group.chunks(per_submission).map(<[usize]>::to_vec).collect::<Vec<_>>()
        })
        .collect()
}

/// Prepares the next chunk of each session of `batch`, runs their steps as one submission, and completes them.
fn run_batch(pushes: &mut [(&mut DiarizerSession<'_>, &[f32])], batch: &[usize], outputs: &mut [Result<StreamOutput>]) {
    let mut prepared: Vec<(usize, DueChunk)> = Vec::with_capacity(batch.len());
    for &i in batch {
        let session = &pushes[i].0;
        match session.prepare_chunk(session.chunk_frames(), false) {
            Ok(due) => prepared.push((i, due)),
            Err(error) => outputs[i] = Err(error),
        }
    }
    let Some(&(first, _)) = prepared.first() else { return };
    let session = &pushes[first].0;
    let (sortformer, timing) = (session.diarizer().sortformer(), session.timing());
    let inputs: Vec<_> = prepared.iter().map(|(_, due)| due.step()).collect();
    match sortformer.stream_steps(&inputs, timing) {
        Ok(steps) if steps.len() == prepared.len() => {
            for ((i, due), step) in prepared.into_iter().zip(steps) {
                let output = pushes[i].0.complete_chunk(due, step);
                if let Ok(out) = &mut outputs[i] {
                    out.append(output);
                }
            }
        }
        Ok(steps) => {
            let message = format!("{} outputs for {} steps", steps.len(), prepared.len());
            fail(&prepared, outputs, &Error::Internal(message));
        }
        Err(error) => fail(&prepared, outputs, &error),
    }
}

/// Gives every session of a failed step the failure.
fn fail(prepared: &[(usize, DueChunk)], outputs: &mut [Result<StreamOutput>], error: &Error) {
    for (i, _) in prepared {
        outputs[*i] = Err(Error::BatchedStep(error.to_string()));
    }
}
