//! `nemotron-audio`: Nemotron 3.5 Transcribe's audio perception from the command line, over the `nemotron-towers`
//! library. Exit status: 0 on success, 1 on a runtime error (bad file, bad model, GPU failure), 2 on a usage error.
//!
//! Environment variables are read here, through `EngineOptions::from_env`, and nowhere below the engine:
//! `WGPU_ADAPTER_NAME`, `WGPU_BACKEND`, `NEMOTRON_PIPELINE_CACHE`, `NEMOTRON_PRECISION`, `NEMOTRON_COOP_KERNEL`
//! (`--precision` wins), the Hugging Face Hub's `HF_HOME`, `HF_HUB_CACHE`, `HF_HUB_OFFLINE`, `HF_ENDPOINT`,
//! `HF_TOKEN`, `HF_TOKEN_PATH` (through `EngineOptions::from_env`) and `RUST_LOG`.

mod align;
mod batch;
mod bench_report;
mod bench_serve;
mod encode;
mod enroll;
mod failure;
mod model;
mod output;
mod progress;
mod score;
mod segment_options;
mod serve;
mod stream;
mod timeline;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, CommandFactory, Parser, Subcommand, ValueEnum};
use nemotron_engine::{Channel, EngineOptions, Gpu, ModelParts, Precision};

use crate::failure::Failure;

#[derive(Parser)]
#[command(name = "nemotron-audio", version, about = "Nemotron 3.5 Transcribe audio perception on any GPU (wgpu)")]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// No progress bar; only errors on stderr.
    #[arg(long, short, global = true)]
    quiet: bool,
    /// `auto`: tensor cores where the adapter has f16 cooperative matrices (f32-accurate split
    /// products), `f32`: plain f32 kernels everywhere, `fast`: tensor cores with activations rounded
    /// to f16, each product once (f16's precision, for throughput). Default: `NEMOTRON_PRECISION`,
    /// else `auto`.
    #[arg(long, global = true, value_enum)]
    precision: Option<PrecisionFlag>,
}

/// `--precision`.
#[derive(Clone, Copy, ValueEnum)]
enum PrecisionFlag {
    Auto,
    F32,
    Fast,
}

impl From<PrecisionFlag> for Precision {
    fn from(flag: PrecisionFlag) -> Self {
        match flag {
            PrecisionFlag::Auto => Precision::Auto,
            PrecisionFlag::F32 => Precision::F32,
            PrecisionFlag::Fast => Precision::Fast,
        }
    }
}

// Parsed once per run: the largest subcommand's size costs nothing worth a box.
#[allow(clippy::large_enum_variant)]
#[derive(Subcommand)]
enum Command {
    /// Run the whole audio module and write every output tensor (safetensors, f32).
    Encode {
        #[command(flatten)]
        input: Input,
        /// Output file (`.safetensors`).
        #[arg(long, required_unless_present = "out_dir", conflicts_with = "out_dir")]
        out: Option<PathBuf>,
        /// Also run the word-timestamp head and write `word_timestamp_logits` [2·T, vocab] (about 140 MB per minute
        /// of audio at the release vocabulary).
        #[arg(long, conflicts_with = "out_dir")]
        word_timestamps: bool,
        #[command(flatten)]
        batch: batch::BatchArgs,
    },
    /// Word timestamps of a transcript: each word's start, end and speaker (forced alignment on the word-timestamp
    /// head, speakers from the diarizer), as JSON and subtitles.
    Align {
        #[command(flatten)]
        input: Input,
        /// The transcript; `<spk:N>` tags open speaker turns.
        #[arg(long, required_unless_present = "transcript_file", conflicts_with = "transcript_file")]
        transcript: Option<String>,
        /// Read the transcript from this file (UTF-8).
        #[arg(long)]
        transcript_file: Option<PathBuf>,
        /// Language code: `zh` and `ja` align character by character; detected from the script when absent.
        #[arg(long)]
        language: Option<String>,
        /// Write the words, the diarization and the tag-to-speaker map here (JSON).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Write SubRip subtitles here.
        #[arg(long)]
        srt: Option<PathBuf>,
        /// Write WebVTT subtitles here.
        #[arg(long)]
        vtt: Option<PathBuf>,
        /// Name the enrolled speakers (a profile `enroll` wrote): the speakers come from a diarization after their
        /// clips; the JSON gains `speaker_names` (tag → name) and the subtitles label those tags by name.
        #[arg(long, value_name = "FILE")]
        speakers: Option<PathBuf>,
    },
    /// Who spoke when: speaker logits/probabilities, segments (RTTM, JSON, CSV), a timeline picture.
    Diarize {
        #[command(flatten)]
        input: Input,
        /// Write `speaker_logits` and `speaker_probabilities` here (`.safetensors`).
        #[arg(long, conflicts_with = "out_dir")]
        out: Option<PathBuf>,
        /// Draw the timeline to this PNG.
        #[arg(long, conflicts_with = "out_dir")]
        plot: Option<PathBuf>,
        #[command(flatten)]
        segments: segment_options::SegmentOptions,
        /// Name the enrolled speakers (a profile `enroll` wrote): each recording is diarized after their clips
        /// (offline, with --stream, and each entry of --out-dir), and the segments and events carry their names.
        #[arg(long, value_name = "FILE")]
        speakers: Option<PathBuf>,
        #[command(flatten)]
        batch: batch::BatchArgs,
        #[command(flatten)]
        stream: stream::StreamArgs,
    },
    /// Enroll named voices into a speaker profile: one clip per speaker, written as a file that `diarize --speakers`
    /// takes; prints each name with the slot it takes.
    Enroll(enroll::EnrollArgs),
    /// Fetch a model's audio part from the Hugging Face Hub into its cache ahead of time, and print the folder.
    Download {
        /// `owner/name` or `owner/name@revision`.
        id: String,
    },
    /// Diarization error rate (missed speech, false alarm, confusion), the optimal speaker mapping and the Jaccard
    /// error rate of a hypothesis RTTM against a reference RTTM, per file and overall, as pyannote.metrics computes
    /// them.
    Score(score::ScoreArgs),
    /// Serve diarization, alignment and features over HTTP and live diarization over WebSocket (docs/server.md).
    Serve(serve::ServeArgs),
    /// The GPU adapter, backend, driver, enabled features and limits.
    Info,
    /// Time release-sized towers with random bf16 weights (no checkpoint needed): one ASR chunk
    /// of 600 rows, one Sortformer step of 828 rows, and the whole module on synthetic audio; or, with
    /// --stream, streaming diarization sessions.
    Bench {
        /// Lengths of synthetic audio, in seconds, for the whole-module runs (default 60,600); with --stream,
        /// the audio whose chunks are timed in each mode (default 60).
        #[arg(long, value_delimiter = ',')]
        seconds: Option<Vec<u32>>,
        /// Timed repeats per case (the median is reported, after warm-up runs).
        #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..))]
        repeats: u32,
        /// Print per-kernel GPU times of the tower cases.
        #[arg(long)]
        profile: bool,
        /// Bench the shapes of this config.json instead of the release model's.
        #[arg(long)]
        config: Option<PathBuf>,
        #[command(flatten)]
        corpus: bench_report::CorpusBenchArgs,
        #[command(flatten)]
        stream: bench_report::StreamBenchArgs,
        #[command(flatten)]
        serve: bench_serve::ServeBenchArgs,
    },
}

/// Where the model and the input come from.
#[derive(Args)]
struct Input {
    /// A checkpoint folder (config.json + model.safetensors or a sharded index), or a Hugging Face Hub id
    /// `owner/name[@revision]` (only the audio tensors are downloaded; a folder that exists wins).
    #[arg(long, conflicts_with = "demo")]
    model: Option<PathBuf>,
    /// Use the built-in demo model: a tiny checkpoint with random weights, whose outputs are meaningless (it only
    /// shows that everything runs).
    #[arg(long)]
    demo: bool,
    /// Audio file(s): WAV, FLAC, MP3, Ogg Vorbis, AAC or M4A, any channel count, 1 to 768 kHz (resampled to 16 kHz
    /// mono); `-` reads standard input (raw PCM with `diarize --stream --raw-format`). Several files, or folders of
    /// them, with --out-dir. (Not required by clap: `encode` and `diarize` also take --manifest, `align` does not;
    /// the commands check.)
    #[arg(long, num_args = 1.., conflicts_with = "features")]
    audio: Vec<PathBuf>,
    /// The channel heard: `mix` (the mean of all) or a channel number from 0.
    #[arg(long, default_value = "mix")]
    channel: Channel,
    /// A safetensors file with `input_features` `[frames, mel]` and `input_features_mask` `[frames]`.
    #[arg(long)]
    features: Option<PathBuf>,
}

fn main() -> ExitCode {
    quiet_device_select();
    let cli = Cli::parse();
    let level = match cli.quiet {
        true => "error",
        false => {
            "warn,nemotron_towers=info,nemotron_engine=info,gpu_core=info,nemotron_audio=info,nemotron_server=info"
        }
    };
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or(level)).format_target(false).init();
    match run(&cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::Usage(message)) => {
            Cli::command().error(clap::error::ErrorKind::MissingRequiredArgument, message).exit()
        }
        Err(failure) => {
            eprintln!("error: {failure}");
            ExitCode::from(1)
        }
    }
}

/// Mesa's device-select layer (a Vulkan implicit layer) asks the Wayland compositor for the default GPU whenever the
/// instance enables `VK_KHR_wayland_surface`, which wgpu always enables where the driver offers it (wgpu-hal's
/// instance callback may add extensions, not remove them); without a display session libwayland then prints
/// `error: XDG_RUNTIME_DIR is invalid or not set in the environment.` twice. The layer only reorders the devices,
/// and this program chooses its adapter itself, so it runs with the layer off (`NODEVICE_SELECT=1`, the switch the
/// layer's manifest declares) unless the user steers the layer (`MESA_VK_DEVICE_SELECT`) or set the switch already.
/// The loader reads the switch from the environment, and a running program cannot change its own environment
/// soundly, so the program replaces itself (`exec`: same process, arguments, streams and signals) with a run of its
/// own binary that has the switch set. Where that fails it goes on as it is (the two lines are only noise).
#[cfg(target_os = "linux")]
fn quiet_device_select() {
    use std::os::unix::process::CommandExt;
    if std::env::var_os("NODEVICE_SELECT").is_some() || std::env::var_os("MESA_VK_DEVICE_SELECT").is_some() {
        return;
    }
    if let Ok(exe) = std::env::current_exe() {
        // Returns only when the exec failed.
        let _ = std::process::Command::new(exe).args(std::env::args_os().skip(1)).env("NODEVICE_SELECT", "1").exec();
    }
}

/// Mesa's device-select layer is a Linux matter.
#[cfg(not(target_os = "linux"))]
fn quiet_device_select() {}

fn run(cli: &Cli) -> Result<(), Failure> {
    let settings = Settings::from_env(cli)?;
    match &cli.command {
        Command::Info => {
            println!("{}", settings.gpu()?.describe());
            Ok(())
        }
        Command::Encode { input, batch, .. } if batch.out_dir.is_some() => {
            batch::run(&settings, input, batch, batch::Job::Encode)
        }
        Command::Encode { input, out, word_timestamps, .. } => {
            let out = out.as_deref().ok_or(Failure::Usage("give --out or --out-dir".into()))?;
            encode::encode(&settings, input, out, *word_timestamps)
        }
        Command::Align { input, transcript, transcript_file, language, out, srt, vtt, speakers } => {
            let request = align::AlignRequest {
                transcript: transcript.as_deref(),
                transcript_file: transcript_file.as_deref(),
                language: language.as_deref(),
                out: out.as_deref(),
                srt: srt.as_deref(),
                vtt: vtt.as_deref(),
                speakers: speakers.as_deref(),
            };
            align::align(&settings, input, &request)
        }
        Command::Diarize { input, segments, speakers, batch, .. } if batch.out_dir.is_some() => {
            let job = batch::Job::Diarize {
                segmenter: segments.settings().segmenter()?,
                format: segments.batch_format(),
                speakers: speakers.as_deref(),
            };
            batch::run(&settings.diarizer_only(), input, batch, job)
        }
        Command::Diarize { input, out, plot, segments, speakers, stream, .. } => {
            let outputs = encode::DiarizeOutputs { out: out.as_deref(), plot: plot.as_deref() };
            match stream.stream {
                true => {
                    stream::diarize(&settings.diarizer_only(), input, &outputs, segments, stream, speakers.as_deref())
                }
                false => encode::diarize(&settings.diarizer_only(), input, &outputs, segments, speakers.as_deref()),
            }
        }
        Command::Enroll(args) => enroll::enroll(&settings.diarizer_only(), args),
        Command::Score(args) => score::run(args),
        Command::Serve(args) => serve::serve(&settings, args),
        Command::Download { id } => model::download(&settings, id),
        Command::Bench { seconds, config, serve, .. } if serve.serve => {
            bench_serve::bench_serve(&settings, seconds.as_deref(), serve, config.as_deref())
        }
        Command::Bench { seconds, config, stream, .. } if stream.stream => {
            bench_report::bench_stream(&settings, seconds.as_deref(), stream, config.as_deref())
        }
        Command::Bench { seconds, repeats, profile, config, corpus, .. } => {
            let seconds = seconds.as_deref().unwrap_or(&[60, 600]);
            bench_report::bench(&settings, seconds, *repeats as usize, *profile, corpus, config.as_deref())
        }
    }
}

/// What the environment and the global flags decide, read once.
#[derive(Clone)]
struct Settings {
    engine: EngineOptions,
    quiet: bool,
}

impl Settings {
    fn from_env(cli: &Cli) -> Result<Self, Failure> {
        let mut engine = EngineOptions::from_env()?;
        if let Some(precision) = cli.precision {
            engine.model.matmul.precision = precision.into();
        }
        Ok(Self { engine, quiet: cli.quiet })
    }

    fn gpu(&self) -> Result<Gpu, Failure> {
        Ok(nemotron_engine::open_gpu(&self.engine.gpu)?)
    }

    /// These settings for a command that runs the diarizer alone (`diarize`, `enroll`): a Transcribe checkpoint then
    /// loads only its diarizer's tensors (no ASR tower, head or projector on the GPU), and a Hub id fetches only the
    /// shards that hold them.
    fn diarizer_only(&self) -> Self {
        let mut engine = self.engine.clone();
        engine.model.parts = ModelParts::Diarizer;
        Self { engine, quiet: self.quiet }
    }
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    /// clap checks a command's definition only when that command is parsed; this checks every one at once.
    #[test]
    fn every_command_is_well_formed() {
        super::Cli::command().debug_assert();
    }
}
