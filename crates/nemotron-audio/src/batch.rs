//! Batch runs: many recordings (several `--audio` paths, folders of them, or a NeMo `--manifest`) → `--out-dir`,
//! one output set per entry, named by the entry's id:
//! - `encode`: `<id>.safetensors` (the tensors of a single `encode`);
//! - `diarize`: the segments, `<id>.rttm` (`<id>.json` or `<id>.csv` with --format; made by the same rule as a single
//!   run's, post-processing flags included), and `<id>.safetensors` (`speaker_logits`, `speaker_probabilities`).
//!
//! `diarize` runs its entries through the engine's continuous batch ([`Engine::diarize_many`]): up to `--batch-size`
//! recordings side by side, the next entry read while the GPU runs and taking a place as soon as one is free; each
//! entry's outputs are written as it finishes. `DIR/manifest.jsonl` gets one line per entry in the entries' order
//! (appended and synced once the entry and those before it are done): the entry's fields (`audio_filepath` resolved)
//! plus `outputs`, `audio_seconds`, `status` (`ok`, `skipped`, `error`) and `error`. The model is loaded once; a
//! failing entry is reported and the run goes on; the exit status is 1 if any entry failed. `--skip-existing` skips entries whose outputs all exist (resuming a run: outputs are written atomically,
//! so an existing one is whole). `--shard I/N` takes the entries at positions I, I+N, I+2N, … (0-based) of the
//! whole list, so N processes with I = 0 … N−1 split a job exactly.

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use clap::Args;
use nemotron_engine::{
    AudioOptions, BatchLimits, Channel, Engine, EngineError, ManifestEntry, SegmentFormat, SegmentRule, SpeakerProfile,
    output, read_manifest, write_named_segments,
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
pub enum Job<'a> {
    Encode,
    /// With `speakers`, a profile whose clips go in front of each entry.
    Diarize {
        segmenter: SegmentRule,
        format: SegmentFormat,
        speakers: Option<&'a Path>,
    },
}

impl Job<'_> {
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

pub fn run(settings: &Settings, input: &Input, batch: &BatchArgs, job: Job<'_>) -> Result<(), Failure> {
    let done = Done::start();
    let Some(dir) = &batch.out_dir else { return Err(Failure::Usage("a batch run needs --out-dir".into())) };
    model::require(input)?;
    let profile = match job {
        Job::Diarize { speakers: Some(path), .. } => Some(SpeakerProfile::read(path).map_err(EngineError::from)?),
        _ => None,
    };
    let entries = entries(input, batch)?;
    let total = entries.len();
    let mine: Vec<ManifestEntry> = match batch.shard {
        Some(shard) => entries.into_iter().enumerate().filter(|(i, _)| shard.takes(*i)).map(|(_, e)| e).collect(),
        None => entries,
    };
    output::check_dir(dir)?;
    let manifest_path = dir.join("manifest.jsonl");
    output::check_files(&[&manifest_path])?;
    let manifest = OpenOptions::new()
        .create(true)
        .append(true)
        .open(&manifest_path)
        .map_err(|e| Failure::Message(format!("cannot write {}: {e}", manifest_path.display())))?;
    log::info!("{} of {total} entries in this run", mine.len());
    let engine = model::load(settings, input)?;
    if let Job::Encode = job {
        engine.transcribe("encode")?;
    }
    let mut report = Report::new(&mine, settings.quiet, job, dir, (manifest, &manifest_path));
    let runs = report.skip_existing(batch.skip_existing)?;
    let channel = input.channel;
    match job {
        Job::Encode => {
            for position in runs {
                let entry = &mine[position];
                let written = encode(&engine, entry, &audio_options(entry, channel), &job.outputs(dir, &entry.id)[0]);
                report.entry(position, written.map(Some))?;
            }
        }
        Job::Diarize { segmenter, format, .. } => {
            let limits = (channel, &batch.limits(), profile.as_ref());
            diarize(&engine, &mut report, &runs, limits, (&segmenter, format))?;
        }
    }
    report.finish(&done, dir)
}

/// How an entry's audio is read: its stretch, the channel of `--channel`.
fn audio_options(entry: &ManifestEntry, channel: Channel) -> AudioOptions {
    AudioOptions { channel, offset: entry.offset, duration: entry.duration }
}

/// Diarizes the entries at `runs` (positions in the report's entries) through the engine's continuous batch, writing
/// each one's outputs as it finishes; stops only when the output manifest cannot be written.
fn diarize(
    engine: &Engine,
    report: &mut Report<'_>,
    runs: &[usize],
    (channel, limits, speakers): (Channel, &BatchLimits, Option<&SpeakerProfile>),
    (segmenter, format): (&SegmentRule, SegmentFormat),
) -> Result<(), Failure> {
    let (entries, dir, job) = (report.entries, report.dir, report.job);
    let read = |entry: &ManifestEntry| -> Result<_, EngineError> {
        let started = Done::start();
        let source = nemotron_engine::Input::read_path(&entry.audio, &audio_options(entry, channel))?;
        let seconds = source.seconds();
        Ok((source, (seconds, started)))
    };
    let mut stopped = None;
    engine.diarize_many(runs.iter().map(|&p| &entries[p]), read, limits, speakers, &mut |run, result| {
        let position = runs[run];
        let id = &entries[position].id;
        let written = result.map_err(Failure::from).and_then(|(diarized, finished)| {
            let outputs = job.outputs(dir, id);
            let segments = diarized.segments_by(segmenter);
            let text = write_named_segments(&segments, format, id, diarized.names());
            output::write_bytes(&outputs[0], text.as_bytes())?;
            diarized.write_speaker_tensors(&outputs[1])?;
            Ok(Some(finished))
        });
        match report.entry(position, written) {
            Ok(()) => ControlFlow::Continue(()),
            Err(failure) => {
                stopped = Some(failure);
                ControlFlow::Break(())
            }
        }
    })?;
    stopped.map_or(Ok(()), Err)
}

/// Reads, encodes and writes one entry: the seconds of audio it covered, and when its reading started.
fn encode(engine: &Engine, entry: &ManifestEntry, options: &AudioOptions, out: &Path) -> Result<(f64, Done), Failure> {
    let started = Done::start();
    let source = nemotron_engine::Input::read_path(&entry.audio, options)?;
    let seconds = source.seconds();
    engine.encode(source, false, &mut |_, _, _| ControlFlow::Continue(()))?.write(out)?;
    Ok((seconds, started))
}

/// What a batch run says of its entries: a line on standard error as each finishes (above the progress bar), and its
/// line of the output manifest, appended in the entries' order (a finished entry's line waits for those of the entries
/// before it, while they run).
struct Report<'a> {
    entries: &'a [ManifestEntry],
    quiet: bool,
    job: Job<'a>,
    dir: &'a Path,
    manifest: File,
    manifest_path: &'a Path,
    bar: Bar,
    /// Lines of finished entries whose turn has not come, by position.
    waiting: BTreeMap<usize, Value>,
    next_line: usize,
    finished: usize,
    failed: usize,
    skipped: usize,
    seconds: f64,
    started: Done,
}

impl<'a> Report<'a> {
    fn new(entries: &'a [ManifestEntry], quiet: bool, job: Job<'a>, dir: &'a Path, manifest: (File, &'a Path)) -> Self {
        let mut bar = Bar::new(quiet, 0.0);
        bar.update_batch(0, entries.len(), 0.0, 0.0);
        let (manifest, manifest_path) = manifest;
        Self {
            entries,
            quiet,
            job,
            dir,
            manifest,
            manifest_path,
            bar,
            waiting: BTreeMap::new(),
            next_line: 0,
            finished: 0,
            failed: 0,
            skipped: 0,
            seconds: 0.0,
            started: Done::start(),
        }
    }

    /// With `skip`, reports the entries whose outputs all exist as skipped; the positions of the others, to run.
    fn skip_existing(&mut self, skip: bool) -> Result<Vec<usize>, Failure> {
        let mut runs = Vec::with_capacity(self.entries.len());
        for (position, entry) in self.entries.iter().enumerate() {
            match skip && self.job.outputs(self.dir, &entry.id).iter().all(|p| p.is_file()) {
                true => self.entry(position, Ok(None))?,
                false => runs.push(position),
            }
        }
        Ok(runs)
    }

    /// The entry at `position` is done: written (the seconds of audio it covered, and when its reading started),
    /// skipped (`None`), or failed. Fails only when the output manifest cannot be written.
    fn entry(&mut self, position: usize, result: Result<Option<(f64, Done)>, Failure>) -> Result<(), Failure> {
        let entry = &self.entries[position];
        let outputs = self.job.outputs(self.dir, &entry.id);
        let line = match result {
            Ok(Some((audio_seconds, started))) => {
                self.seconds += audio_seconds;
                if !self.quiet {
                    let written: Vec<&Path> = outputs.iter().map(PathBuf::as_path).collect();
                    self.bar.println(&started.line(&written, audio_seconds, &[]));
                }
                record(entry, &outputs, Some(audio_seconds), "ok", None)
            }
            Ok(None) => {
                self.skipped += 1;
                record(entry, &outputs, None, "skipped", None)
            }
            Err(failure) => {
                self.failed += 1;
                self.bar.println(&format!("error: {} ({}): {failure}", entry.id, entry.audio.display()));
                record(entry, &[], None, "error", Some(failure.to_string()))
            }
        };
        self.finished += 1;
        self.bar.update_batch(self.finished, self.entries.len(), self.seconds, self.started.elapsed());
        self.waiting.insert(position, line);
        while let Some(line) = self.waiting.remove(&self.next_line) {
            append(&mut self.manifest, self.manifest_path, &line)?;
            self.next_line += 1;
        }
        Ok(())
    }

    /// The closing line, and the run's failure when an entry failed.
    fn finish(self, done: &Done, dir: &Path) -> Result<(), Failure> {
        self.bar.finish();
        let all = self.entries.len();
        let (failed, skipped) = (self.failed, self.skipped);
        let counts = format!("{all} entries: {} ok, {skipped} skipped, {failed} failed", all - failed - skipped);
        done.report(self.quiet, &[dir], self.seconds, &[counts]);
        match failed {
            0 => Ok(()),
            _ => Err(Failure::Message(format!(
                "{failed} of {all} entries failed; their errors are in {}",
                self.manifest_path.display()
            ))),
        }
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
