//! `diarize --stream`: a live session over an audio file (as fast as possible, or at its own pace with
//! `--realtime`) or raw PCM on standard input, one JSON line per segment event on standard output as soon
//! as it is final; at the end, the same output files as offline `diarize` (`--out`, `--segments`/`--rttm`,
//! `--plot`).

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use clap::{Args, ValueEnum};
use nemotron_engine::{
    AudioOptions, Channel, EngineError, LiveRecording, LiveSession, RawDecoder, RawFormat, SegmentEvent,
    SpeakerProfile, StreamingMode, io::audio, output,
};

use crate::encode::{DiarizeOutputs, file_id, speakers_found, write_plot};
use crate::failure::Failure;
use crate::output::Done;
use crate::segment_options::SegmentOptions;
use crate::{Input, Settings, model};

/// The flags of `diarize --stream`.
#[derive(Args)]
pub struct StreamArgs {
    /// Diarize as a live stream: one JSON line per speaker segment start and end on standard output, as soon
    /// as the frames that decide it are final (`--audio -` with --raw-format reads raw PCM from standard input).
    #[arg(long, conflicts_with_all = ["out_dir", "features"])]
    pub stream: bool,
    /// Input latency of the stream: low (1.04 s), very-low (0.64 s), ultra-low (0.32 s). Default: low.
    #[arg(long, requires = "stream", value_parser = latency_parser())]
    pub latency: Option<StreamingMode>,
    /// Feed the audio file at the pace it plays instead of as fast as possible.
    #[arg(long, requires = "stream")]
    pub realtime: bool,
    /// Sample rate of the raw PCM on standard input (`--audio -`); only 16000 is taken.
    #[arg(long, requires = "stream")]
    pub raw_rate: Option<u32>,
    /// Sample format of the raw PCM on standard input (`--audio -`), mono.
    #[arg(long, requires = "stream", value_enum)]
    pub raw_format: Option<RawFormatFlag>,
}

/// `--raw-format`.
#[derive(Clone, Copy, ValueEnum)]
pub enum RawFormatFlag {
    S16le,
    F32le,
}

impl From<RawFormatFlag> for RawFormat {
    fn from(flag: RawFormatFlag) -> Self {
        match flag {
            RawFormatFlag::S16le => RawFormat::S16le,
            RawFormatFlag::F32le => RawFormat::F32le,
        }
    }
}

/// `--latency` (and `bench --serve --latencies`): the named streaming modes, by the names [`StreamingMode`] parses
/// (the help says what each one's chunks and look-ahead are).
pub fn latency_parser() -> impl TypedValueParser<Value = StreamingMode> {
    let names = StreamingMode::NAMED.into_iter().filter_map(|mode| {
        let (chunk, lookahead) = mode.frames();
        let help = format!(
            "`{}`: chunks of {:.2} s with {:.2} s of look-ahead",
            mode.name(),
            chunk as f64 * 0.08,
            lookahead as f64 * 0.08
        );
        Some(PossibleValue::new(mode.latency_name()?).help(help))
    });
    PossibleValuesParser::new(names).try_map(|name| name.parse::<StreamingMode>())
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
    let Some(format) = args.raw_format.map(RawFormat::from) else {
        return usage("raw input needs --raw-format s16le|f32le");
    };
    Ok(Source::Raw(format))
}

/// The samples of an audio file, or of one on standard input (`-`), with `--channel`.
fn read_file(path: &Path, input: &Input) -> Result<Vec<f32>, Failure> {
    let options = AudioOptions { channel: input.channel, ..AudioOptions::default() };
    let samples = match path.as_os_str() == "-" {
        true => audio::read_audio_from(std::io::stdin().lock(), "standard input", &options),
        false => audio::read_audio_with(path, &options),
    };
    Ok(samples?)
}

/// `diarize --stream`.
pub fn diarize(
    settings: &Settings,
    input: &Input,
    outputs: &DiarizeOutputs<'_>,
    options: &SegmentOptions,
    args: &StreamArgs,
    speakers: Option<&Path>,
) -> Result<(), Failure> {
    let done = Done::start();
    let source = source(input, args)?;
    let profile = speakers.map(SpeakerProfile::read).transpose().map_err(EngineError::from)?;
    if options.to_standard_output() {
        return Err(Failure::Usage("--stream prints its events on standard output: give --segments a file".into()));
    }
    let segmenter = options.settings().live_rule()?;
    model::require(input)?;
    let written: Vec<&Path> = [outputs.out, options.file(), outputs.plot].into_iter().flatten().collect();
    output::check_files(&written)?;
    let engine = model::load(settings, input)?;
    let mode = args.latency.unwrap_or(StreamingMode::LowLatency);
    let session = match &profile {
        Some(profile) => engine.stream_with_speakers(mode, options.settings(), profile)?,
        None => engine.stream(mode, options.settings())?,
    };
    let mut live = Live { session, stdout: std::io::stdout().lock(), closed: false };
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
                live.push(samples)?;
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
                live.push(&decoder.decode(&buffer[..read]))?;
            }
            if !live.closed {
                decoder.finish().map_err(|e| Failure::Runtime(Box::new(e)))?;
            }
        }
    }
    let seconds = live.session.processed_seconds();
    let Live { session, mut stdout, mut closed } = live;
    let LiveRecording { events, segments, diarized } = session.finish_recording()?;
    print(&mut stdout, &mut closed, &events, diarized.names())?;
    log::info!("{}: {seconds:.2} s of audio in {:.2} s", mode.name(), started.elapsed().as_secs_f64());
    if let Some(path) = outputs.out {
        diarized.write_speaker_tensors(path)?;
    }
    options.write(&segments, diarized.names(), &file_id(input), false)?;
    if let Some(path) = outputs.plot {
        write_plot(path, input, &diarized, &segments, &segmenter)?;
    }
    if !written.is_empty() {
        done.report(settings.quiet, &written, seconds, &[speakers_found(&segments)]);
    }
    Ok(())
}

/// A live session whose events go to standard output.
struct Live<'o> {
    session: LiveSession,
    stdout: std::io::StdoutLock<'o>,
    /// Standard output's reader has gone (e.g. `| head`): the stream stops early, as a pipeline expects.
    closed: bool,
}

impl Live<'_> {
    fn push(&mut self, samples: &[f32]) -> Result<(), Failure> {
        let events = self.session.push(samples)?;
        print(&mut self.stdout, &mut self.closed, &events, self.session.names())
    }
}

/// One JSON line per event (with the enrolled speakers' `names`), flushed, unless standard output has closed (which
/// closes it here for good).
fn print(
    stdout: &mut impl Write,
    closed: &mut bool,
    events: &[SegmentEvent],
    names: &[Option<String>],
) -> Result<(), Failure> {
    if *closed {
        return Ok(());
    }
    let written = events.iter().try_for_each(|event| writeln!(stdout, "{}", event.json_line_named(names)));
    match written.and_then(|()| stdout.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
            log::info!("standard output closed: the stream stops here");
            *closed = true;
            Ok(())
        }
        written => written.map_err(|e| Failure::Message(format!("writing events: {e}"))),
    }
}
