//! `diarize --stream`: a live session over an audio file (as fast as possible, or at its own pace with
//! `--realtime`) or raw PCM on standard input, one JSON line per segment event on standard output as soon
//! as it is final; at the end, the same output files as offline `diarize` (`--out`, `--segments`/`--rttm`,
//! `--plot`).

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use clap::{Args, ValueEnum};
use nemotron_postprocess::diarization::Segment;
use nemotron_postprocess::diarization::segments::sort_segments;
use nemotron_towers::raw_pcm::{RawDecoder, RawFormat};
use nemotron_towers::streaming::{LiveSegments, SegmentEvent, SegmentRule};
use nemotron_towers::{AudioError, AudioOptions, Channel, StreamOutput, StreamingMode};

use crate::encode::{DiarizeOutputs, Recording, file_id, speakers_found, write_plot, write_speaker_tensors};
use crate::failure::Failure;
use crate::output::{self, Done};
use crate::segment_options::{Rule, SegmentOptions};
use crate::{Input, Settings, model};

/// The flags of `diarize --stream`.
#[derive(Args)]
pub struct StreamArgs {
    /// Diarize as a live stream: one JSON line per speaker segment start and end on standard output, as soon
    /// as the frames that decide it are final (`--audio -` with --raw-format reads raw PCM from standard input).
    #[arg(long, conflicts_with_all = ["out_dir", "features"])]
    pub stream: bool,
    /// Input latency of the stream: low (1.04 s), very-low (0.64 s), ultra-low (0.32 s). Default: low.
    #[arg(long, value_enum, requires = "stream")]
    pub latency: Option<Latency>,
    /// Feed the audio file at the pace it plays instead of as fast as possible.
    #[arg(long, requires = "stream")]
    pub realtime: bool,
    /// Sample rate of the raw PCM on standard input (`--audio -`); only 16000 is taken.
    #[arg(long, requires = "stream")]
    pub raw_rate: Option<u32>,
    /// Sample format of the raw PCM on standard input (`--audio -`), mono.
    #[arg(long, requires = "stream", value_parser = ["s16le", "f32le"])]
    pub raw_format: Option<String>,
}

/// `--latency`: upstream's named streaming modes.
#[derive(Clone, Copy, ValueEnum)]
pub enum Latency {
    /// `low_latency`: chunks of 0.72 s with 0.32 s of look-ahead.
    Low,
    /// `very_low_latency`: 0.48 s and 0.16 s.
    VeryLow,
    /// `ultra_low_latency`: 0.24 s and 0.08 s.
    UltraLow,
}

impl Latency {
    fn mode(self) -> StreamingMode {
        match self {
            Latency::Low => StreamingMode::LowLatency,
            Latency::VeryLow => StreamingMode::VeryLowLatency,
            Latency::UltraLow => StreamingMode::UltraLowLatency,
        }
    }
}

/// Samples per push when a file is fed as fast as possible (0.1 s: events come out as chunks complete).
const FILE_PIECE: usize = 1_600;
/// Samples per push at the pace of the audio (20 ms).
const REALTIME_PIECE: usize = 320;
/// Bytes read from standard input at a time.
const STDIN_BUFFER: usize = 8_192;

/// Where the samples come from.
enum Source {
    /// An audio file (`-`: one on standard input), decoded whole, then fed as fast as possible or paced.
    File { path: PathBuf, realtime: bool },
    /// Raw mono PCM on standard input, fed as it arrives.
    Raw(RawFormat),
}

/// The stream's input, refused before any work when the flags do not describe one.
fn source(input: &Input, args: &StreamArgs) -> Result<Source, Failure> {
    let usage = |message: &str| Err(Failure::Usage(message.into()));
    let [audio] = input.audio.as_slice() else {
        return usage("--stream takes one --audio FILE, or --audio - for standard input");
    };
    let stdin = audio.as_os_str() == "-";
    if args.raw_format.is_none() && args.raw_rate.is_none() {
        return Ok(Source::File { path: audio.clone(), realtime: args.realtime });
    }
    if !stdin {
        return usage("--raw-format and --raw-rate describe standard input: give --audio -");
    }
    if args.realtime {
        return usage("--realtime paces a file; raw input arrives at its own pace");
    }
    if !matches!(input.channel, Channel::Mix | Channel::Index(0)) {
        return usage("raw PCM on standard input is one channel");
    }
    match args.raw_rate {
        Some(16_000) => {}
        Some(rate) => return usage(&format!("--raw-rate {rate}: raw input must be 16000 Hz (resample it first)")),
        None => return usage("raw input needs --raw-rate 16000"),
    }
    let Some(format) = args.raw_format.as_deref().and_then(RawFormat::from_name) else {
        return usage("raw input needs --raw-format s16le|f32le");
    };
    Ok(Source::Raw(format))
}

/// The samples of an audio file, or of one on standard input (`-`), with `--channel`.
fn read_file(path: &Path, input: &Input) -> Result<Vec<f32>, Failure> {
    let options = AudioOptions { channel: input.channel, ..AudioOptions::default() };
    let samples = match path.as_os_str() == "-" {
        true => nemotron_towers::audio::read_audio_from(std::io::stdin().lock(), "standard input", &options),
        false => nemotron_towers::audio::read_audio_with(path, &options),
    };
    // A channel the recording lacks is a usage error, as offline.
    samples.map_err(|e| match e {
        AudioError::NoSuchChannel { .. } => Failure::Usage(e.to_string()),
        other => other.into(),
    })
}

pub fn diarize(
    settings: &Settings,
    input: &Input,
    outputs: &DiarizeOutputs<'_>,
    options: &SegmentOptions,
    args: &StreamArgs,
) -> Result<(), Failure> {
    let done = Done::start();
    let source = source(input, args)?;
    if options.to_standard_output() {
        return Err(Failure::Usage("--stream prints its events on standard output: give --segments a file".into()));
    }
    let rule = options.rule()?;
    let live_rule = live_rule(rule)?;
    model::require(input)?;
    let written: Vec<&Path> = [outputs.out, options.file(), outputs.plot].into_iter().flatten().collect();
    output::check_files(&written)?;
    let (_gpu, model) = model::load(settings, input)?;
    let diarizer = model.diarizer();
    let c = diarizer.config();
    let mode = args.latency.unwrap_or(Latency::Low).mode();
    let mut session = diarizer.session(mode)?;
    let mut live = Live {
        events: LiveSegments::new(live_rule, c).map_err(|e| Failure::Usage(e.to_string()))?,
        stdout: std::io::stdout().lock(),
        closed: false,
        logits: Vec::new(),
        probabilities: Vec::new(),
        segments: Vec::new(),
    };
    let started = Instant::now();
    match source {
        Source::File { path, realtime } => {
            let samples = read_file(&path, input)?;
            let piece = if realtime { REALTIME_PIECE } else { FILE_PIECE };
            for (i, samples) in samples.chunks(piece).enumerate() {
                if live.closed {
                    break;
                }
                if realtime {
                    // A live source hands over a piece once it has been spoken.
                    let due = Duration::from_secs_f64(((i + 1) * piece) as f64 / 16_000.0);
                    std::thread::sleep(due.saturating_sub(started.elapsed()));
                }
                live.show(session.push(samples)?)?;
            }
        }
        Source::Raw(format) => {
            let mut decoder = RawDecoder::new(format);
            let mut stdin = std::io::stdin().lock();
            let mut buffer = vec![0u8; STDIN_BUFFER];
            while !live.closed {
                let read = match stdin.read(&mut buffer) {
                    Ok(0) => break,
                    Ok(read) => read,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(e) => return Err(Failure::Message(format!("reading standard input: {e}"))),
                };
                live.show(session.push(&decoder.decode(&buffer[..read]))?)?;
            }
            if !live.closed {
                decoder.finish()?;
            }
        }
    }
    let seconds = session.samples_received() as f64 / 16_000.0;
    live.show(session.finish()?)?;
    let last = live.events.finish();
    live.print(&last)?;
    log::info!("{}: {seconds:.2} s of audio in {:.2} s", mode.name(), started.elapsed().as_secs_f64());
    let Live { mut segments, logits, probabilities, .. } = live;
    sort_segments(&mut segments);
    if let Some(path) = outputs.out {
        write_speaker_tensors(path, &logits, &probabilities, c.speakers)?;
    }
    options.write(&segments, &file_id(input), false)?;
    if let Some(path) = outputs.plot {
        let recording = Recording { probabilities: &probabilities, frames: logits.len() / c.speakers.max(1) };
        write_plot(path, input, &recording, &segments, &rule, c)?;
    }
    if !written.is_empty() {
        done.report(settings.quiet, &written, seconds, &[speakers_found(&segments)]);
    }
    Ok(())
}

/// The events' rule for the segment flags: the offline rule's, but not `--max-speakers` (which speakers are the most
/// active is known only at the end).
fn live_rule(rule: Rule) -> Result<SegmentRule, Failure> {
    match rule {
        Rule::Threshold { threshold, max_speakers: None } => Ok(SegmentRule::Threshold(threshold)),
        Rule::PostProcessing(settings) if settings.max_speakers.is_none() => Ok(SegmentRule::PostProcessing(settings)),
        _ => Err(Failure::Usage(
            "--max-speakers needs the whole recording (the most active speakers are known only at its end): not with \
             --stream"
                .into(),
        )),
    }
}

/// The stream's events on standard output, and what the output files need at the end.
struct Live<'o> {
    events: LiveSegments,
    stdout: std::io::StdoutLock<'o>,
    /// Standard output's reader has gone (e.g. `| head`): the stream stops early, as a pipeline expects.
    closed: bool,
    logits: Vec<f32>,
    probabilities: Vec<f32>,
    segments: Vec<Segment>,
}

impl Live<'_> {
    fn show(&mut self, output: StreamOutput) -> Result<(), Failure> {
        let events = self.events.push(&output);
        self.logits.extend(output.speaker_logits);
        self.probabilities.extend(output.speaker_probabilities);
        self.print(&events)
    }

    /// One JSON line per event, flushed; the segments of the end events kept for the segment file.
    fn print(&mut self, events: &[SegmentEvent]) -> Result<(), Failure> {
        self.segments.extend(events.iter().filter_map(SegmentEvent::segment));
        if self.closed {
            return Ok(());
        }
        let written = events.iter().try_for_each(|event| writeln!(self.stdout, "{}", json_line(event)));
        match written.and_then(|()| self.stdout.flush()) {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
                log::info!("standard output closed: the stream stops here");
                self.closed = true;
                Ok(())
            }
            written => written.map_err(|e| Failure::Message(format!("writing events: {e}"))),
        }
    }
}

/// `{"event":"start","speaker":2,"time":12.48}` or
/// `{"event":"end","speaker":2,"time":13.10,"start":12.48,"end":13.10}` (times in seconds, 10 ms steps).
fn json_line(event: &SegmentEvent) -> String {
    match (*event, event.segment()) {
        (SegmentEvent::End { speaker, .. }, Some(segment)) => format!(
            r#"{{"event":"end","speaker":{speaker},"time":{:.2},"start":{:.2},"end":{:.2}}}"#,
            segment.end, segment.start, segment.end
        ),
        _ => format!(r#"{{"event":"start","speaker":{},"time":{:.2}}}"#, event.speaker(), event.seconds()),
    }
}
