//! Batch runs: many recordings (several `--audio` paths, folders of them, or a NeMo `--manifest`) → `--out-dir`,
//! one output set per entry, named by the entry's id:
//! - `encode`: `<id>.safetensors` (the tensors of a single `encode`);
//! - `diarize`: the segments, `<id>.rttm` (`<id>.json` or `<id>.csv` with --format; made by the same rule as a single
//!   run's, post-processing flags included), and `<id>.safetensors` (`speaker_logits`, `speaker_probabilities`).
//!
//! `DIR/manifest.jsonl` gets one line per entry as it finishes (appended and flushed): the entry's fields
//! (`audio_filepath` resolved) plus `outputs`, `audio_seconds`, `status` (`ok`, `skipped`, `error`) and `error`.
//! The model is loaded once; a failing entry is reported and the run goes on; the exit status is 1 if any entry
//! failed. `--skip-existing` skips entries whose outputs all exist (resuming a run: outputs are written atomically,
//! so an existing one is whole). `--shard I/N` takes the entries at positions I, I+N, I+2N, … (0-based) of the
//! whole list, so N processes with I = 0 … N−1 split a job exactly.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use clap::Args;
use nemotron_engine::{
    AudioOptions, BatchLimits, Engine, ManifestEntry, SegmentFormat, SegmentRule, output, read_manifest, write_segments,
};
use serde_json::{Value, json};

use crate::failure::Failure;
use crate::output::Done;
use crate::progress::Bar;
use crate::{Input, Settings, model};

/// Batch options of `encode` and `diarize`.
#[derive(Args, Clone, Debug, Default)]
pub struct BatchArgs {
    /// A NeMo manifest (JSON lines: `audio_filepath`, optional `offset`, `duration`, `uniq_id`) of the
    /// recordings to process, instead of --audio.
    #[arg(long, requires = "out_dir", conflicts_with_all = ["audio", "features"])]
    pub manifest: Option<PathBuf>,
    /// Folders given to --audio are searched in their subfolders too.
    #[arg(long, requires = "out_dir")]
    pub recursive: bool,
    /// Write one output set per recording into this folder (created if missing), and DIR/manifest.jsonl.
    #[arg(long)]
    pub out_dir: Option<PathBuf>,
    /// Skip recordings whose outputs all exist already (resumes an interrupted run).
    #[arg(long, requires = "out_dir")]
    pub skip_existing: bool,
    /// Process only every N-th entry, starting at entry I (0-based): `--shard I/N`.
    #[arg(long, requires = "out_dir", value_name = "I/N")]
    pub shard: Option<Shard>,
    /// Recordings `diarize` runs side by side, their steps sharing each GPU submission (default 8; more take more
    /// GPU memory and may run faster on a large GPU). Each one's outputs are those of its run alone.
    #[arg(long, requires = "out_dir", value_name = "N", value_parser = batch_limits)]
    pub batch_size: Option<BatchLimits>,
}

impl BatchArgs {
    /// How many recordings `diarize` runs side by side.
    fn limits(&self) -> BatchLimits {
        self.batch_size.unwrap_or_default()
    }
}

/// `--batch-size N`, `serve --offline-batch N`: recordings diarized side by side, checked by the library.
pub fn batch_limits(text: &str) -> Result<BatchLimits, String> {
    let recordings = text.parse::<i64>().map_err(|e| e.to_string())?;
    nemotron_engine::batch_limits(recordings).map_err(|e| e.to_string())
}

/// `I/N`: entries I, I+N, I+2N, … (0-based).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    pub index: usize,
    pub count: usize,
}

impl Shard {
    /// True for the entry at `position` (0-based) of the whole list.
    pub fn takes(&self, position: usize) -> bool {
        position % self.count == self.index
    }
}

impl FromStr for Shard {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let (index, count) = text.split_once('/').ok_or_else(|| format!("`{text}` is not I/N"))?;
        let (index, count): (usize, usize) = match (index.trim().parse(), count.trim().parse()) {
            (Ok(i), Ok(n)) => (i, n),
            _ => return Err(format!("`{text}` is not I/N with whole numbers")),
        };
        if count == 0 || index >= count {
            return Err(format!("shard {index} of {count} does not exist (0 ≤ I < N)"));
        }
        Ok(Self { index, count })
    }
}

/// What each entry goes through.
#[derive(Clone, Copy)]
pub enum Job {
    Encode,
    Diarize { segmenter: SegmentRule, format: SegmentFormat },
}

impl Job {
    /// Entries read ahead and run together: `diarize` runs the recordings of `limits` side by side; `encode` runs
    /// one at a time.
    fn entries_per_run(self, limits: &BatchLimits) -> usize {
        match self {
            Job::Encode => 1,
            Job::Diarize { .. } => limits.max_recordings,
        }
    }

    /// The outputs of entry `id` in `dir`.
    fn outputs(self, dir: &Path, id: &str) -> Vec<PathBuf> {
        match self {
            Job::Encode => vec![dir.join(format!("{id}.safetensors"))],
            Job::Diarize { format, .. } => {
                vec![dir.join(format!("{id}.{}", format.extension())), dir.join(format!("{id}.safetensors"))]
            }
        }
    }
}

/// Extensions of the files taken from folders given to --audio.
const AUDIO_EXTENSIONS: &[&str] = &["wav", "wave", "rf64", "flac", "mp3", "ogg", "oga", "m4a", "mp4", "aac"];

pub fn run(settings: &Settings, input: &Input, batch: &BatchArgs, job: Job) -> Result<(), Failure> {
    let done = Done::start();
    let Some(dir) = &batch.out_dir else { return Err(Failure::Usage("a batch run needs --out-dir".into())) };
    model::require(input)?;
    let entries = entries(input, batch)?;
    let total = entries.len();
    let mine: Vec<ManifestEntry> = match batch.shard {
        Some(shard) => entries.into_iter().enumerate().filter(|(i, _)| shard.takes(*i)).map(|(_, e)| e).collect(),
        None => entries,
    };
    output::check_dir(dir)?;
    let manifest_path = dir.join("manifest.jsonl");
    output::check_files(&[&manifest_path])?;
    let mut manifest = OpenOptions::new()
        .create(true)
        .append(true)
        .open(&manifest_path)
        .map_err(|e| Failure::Message(format!("cannot write {}: {e}", manifest_path.display())))?;
    log::info!("{} of {total} entries in this run", mine.len());
    let engine = model::load(settings, input)?;
    if let Job::Encode = job {
        engine.transcribe("encode")?;
    }
    let mut bar = Bar::new(settings.quiet, 0.0);
    let (mut failed, mut skipped, mut seconds, mut n) = (0usize, 0usize, 0.0f64, 0usize);
    let limits = batch.limits();
    for group in mine.chunks(job.entries_per_run(&limits)) {
        bar.update_batch(n, mine.len(), seconds, done.elapsed());
        let skips: Vec<bool> = group
            .iter()
            .map(|entry| batch.skip_existing && job.outputs(dir, &entry.id).iter().all(|p| p.is_file()))
            .collect();
        let runs: Vec<&ManifestEntry> = group.iter().zip(&skips).filter(|(_, skip)| !**skip).map(|(e, _)| e).collect();
        let group_done = Done::start();
        let mut results = process(&engine, job, &runs, (input, &limits), dir).into_iter();
        for (entry, skip) in group.iter().zip(skips) {
            n += 1;
            let outputs = job.outputs(dir, &entry.id);
            let result = match skip {
                true => {
                    skipped += 1;
                    Ok(None)
                }
                false => results
                    .next()
                    .unwrap_or_else(|| Err(Failure::Message("an entry's result is missing".into())))
                    .map(Some),
            };
            let line = match &result {
                Ok(Some(audio_seconds)) => {
                    seconds += audio_seconds;
                    if !settings.quiet {
                        let written: Vec<&Path> = outputs.iter().map(PathBuf::as_path).collect();
                        bar.println(&group_done.line(&written, *audio_seconds, &[]));
                    }
                    record(entry, &outputs, Some(*audio_seconds), "ok", None)
                }
                Ok(None) => record(entry, &outputs, None, "skipped", None),
                Err(failure) => {
                    failed += 1;
                    bar.println(&format!("error: {} ({}): {failure}", entry.id, entry.audio.display()));
                    record(entry, &[], None, "error", Some(failure.to_string()))
                }
            };
            append(&mut manifest, &manifest_path, &line)?;
        }
    }
    bar.finish();
    let ok = mine.len() - failed - skipped;
    let counts = format!("{} entries: {ok} ok, {skipped} skipped, {failed} failed", mine.len());
    done.report(settings.quiet, &[dir.as_path()], seconds, &[counts]);
    match failed {
        0 => Ok(()),
        _ => Err(Failure::Message(format!(
            "{failed} of {} entries failed; their errors are in {}",
            mine.len(),
            manifest_path.display()
        ))),
    }
}

/// Every entry of the job, in order: the manifest's, or the --audio paths' (folders listed, sorted).
fn entries(input: &Input, batch: &BatchArgs) -> Result<Vec<ManifestEntry>, Failure> {
    if let Some(path) = &batch.manifest {
        return read_manifest(path).map_err(|e| Failure::Runtime(Box::new(e)));
    }
    if input.features.is_some() {
        return Err(Failure::Usage("--out-dir takes audio (--audio or --manifest), not --features".into()));
    }
    if input.audio.is_empty() {
        return Err(Failure::Usage("--out-dir needs recordings: --audio FILE|FOLDER… or --manifest FILE".into()));
    }
    let mut files = Vec::new();
    for path in &input.audio {
        if path.as_os_str() == "-" {
            return Err(Failure::Usage("standard input (`-`) is a single input; it cannot join --out-dir".into()));
        }
        if path.is_dir() {
            let mut found = Vec::new();
            list(path, batch.recursive, &mut found)?;
            found.sort();
            files.extend(found);
        } else {
            files.push(path.clone());
        }
    }
    let mut entries: Vec<ManifestEntry> = Vec::with_capacity(files.len());
    for (i, file) in files.iter().enumerate() {
        let entry = ManifestEntry::for_file(file, i + 1).map_err(Failure::Usage)?;
        if let Some(other) = entries.iter().find(|e| e.id == entry.id) {
            return Err(Failure::Usage(format!(
                "{} and {} would both write outputs named `{}`; use a --manifest with a uniq_id for each",
                other.audio.display(),
                file.display(),
                entry.id
            )));
        }
        entries.push(entry);
    }
    Ok(entries)
}

/// The audio files in `dir` (and its subfolders when `recursive`).
fn list(dir: &Path, recursive: bool, found: &mut Vec<PathBuf>) -> Result<(), Failure> {
    let fail = |e: std::io::Error| Failure::Message(format!("cannot list {}: {e}", dir.display()));
    for item in std::fs::read_dir(dir).map_err(fail)? {
        let path = item.map_err(fail)?.path();
        if path.is_dir() {
            if recursive {
                list(&path, recursive, found)?;
            }
        } else if path
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| AUDIO_EXTENSIONS.contains(&e.to_ascii_lowercase().as_str()))
        {
            found.push(path);
        }
    }
    Ok(())
}

/// Reads, runs and writes `entries`: the seconds of audio each covered, in order. `encode` runs them one by one;
/// `diarize` decodes them all first, then runs them side by side on the GPU ([`Engine::diarize_many`]).
fn process(
    engine: &Engine,
    job: Job,
    entries: &[&ManifestEntry],
    (input, limits): (&Input, &BatchLimits),
    dir: &Path,
) -> Vec<Result<f64, Failure>> {
    let read = |entry: &ManifestEntry| -> Result<nemotron_engine::Input, Failure> {
        let options = AudioOptions { channel: input.channel, offset: entry.offset, duration: entry.duration };
        Ok(nemotron_engine::Input::read_path(&entry.audio, &options)?)
    };
    let mut quiet = |_: &str, _: usize, _: usize| {};
    match job {
        Job::Encode => entries
            .iter()
            .map(|entry| {
                let source = read(entry)?;
                let seconds = source.seconds();
                engine.encode(source, false, &mut quiet)?.write(&job.outputs(dir, &entry.id)[0])?;
                Ok(seconds)
            })
            .collect(),
        Job::Diarize { segmenter, format } => {
            let sources: Vec<Result<nemotron_engine::Input, Failure>> = entries.iter().map(|e| read(e)).collect();
            let seconds: Vec<f64> = sources.iter().map(|s| s.as_ref().map_or(0.0, |s| s.seconds())).collect();
            let (mut inputs, mut read_failures) = (Vec::new(), Vec::new());
            for source in sources {
                match source {
                    Ok(source) => {
                        inputs.push(source);
                        read_failures.push(None);
                    }
                    Err(failure) => read_failures.push(Some(failure)),
                }
            }
            let mut results = engine.diarize_many(inputs, limits, &mut |_, _, _| {}).into_iter();
            entries
                .iter()
                .zip(read_failures)
                .zip(seconds)
                .map(|((entry, read_failure), seconds)| {
                    if let Some(failure) = read_failure {
                        return Err(failure);
                    }
                    let result =
                        results.next().ok_or_else(|| Failure::Message("an entry's result is missing".into()))??;
                    let outputs = job.outputs(dir, &entry.id);
                    let segments = result.segments_by(&segmenter);
                    output::write_bytes(&outputs[0], write_segments(&segments, format, &entry.id).as_bytes())?;
                    result.write_speaker_tensors(&outputs[1])?;
                    Ok(seconds)
                })
                .collect()
        }
    }
}

/// The output manifest's line for `entry`.
fn record(
    entry: &ManifestEntry,
    outputs: &[PathBuf],
    seconds: Option<f64>,
    status: &str,
    error: Option<String>,
) -> Value {
    let mut fields = entry.fields.clone();
    let audio = std::path::absolute(&entry.audio).unwrap_or_else(|_| entry.audio.clone());
    fields.insert("audio_filepath".into(), json!(audio.display().to_string()));
    fields.insert("uniq_id".into(), json!(entry.id));
    let outputs: Vec<String> = outputs.iter().map(|p| p.display().to_string()).collect();
    fields.insert("outputs".into(), json!(outputs));
    fields.insert("audio_seconds".into(), json!(seconds));
    fields.insert("status".into(), json!(status));
    fields.insert("error".into(), json!(error));
    Value::Object(fields)
}

/// Appends one line in one write, then syncs it: a finished entry is on disk before the next starts.
fn append(file: &mut File, path: &Path, line: &Value) -> Result<(), Failure> {
    let text = format!("{line}\n");
    file.write_all(text.as_bytes())
        .and_then(|()| file.sync_data())
        .map_err(|e| Failure::Message(format!("cannot write {}: {e}", path.display())))
}

#[cfg(test)]
mod tests {
    use super::Shard;

    /// Every entry lands in exactly one shard, for any number of shards and entries.
    #[test]
    fn shards_partition_the_entries() {
        for count in 1..=7 {
            let shards: Vec<Shard> = (0..count).map(|i| format!("{i}/{count}").parse().unwrap()).collect();
            for entries in [0, 1, count - 1, count, 3 * count + 2, 100] {
                for position in 0..entries {
                    let owners = shards.iter().filter(|s| s.takes(position)).count();
                    assert_eq!(owners, 1, "entry {position} of {entries} in {owners} of {count} shards");
                }
            }
        }
        for bad in ["3/3", "0/0", "-1/2", "1", "a/b"] {
            assert!(bad.parse::<Shard>().is_err(), "{bad}");
        }
    }
}
