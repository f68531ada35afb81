//! `nemotron-audio`: Nemotron 3.5 Transcribe's audio perception from the command line, over the `nemotron-towers`
//! library. Exit status: 0 on success, 1 on a runtime error (bad file, bad model, GPU failure), 2 on a usage error.
//!
//! Environment variables are read here and nowhere below: `WGPU_ADAPTER_NAME`, `WGPU_BACKEND`,
//! `NEMOTRON_PIPELINE_CACHE` (through `GpuOptions::from_env`), `NEMOTRON_PRECISION`, `NEMOTRON_COOP_KERNEL`
//! (through `MatmulOptions::from_env`; `--precision` wins) and `RUST_LOG`.

mod align;
mod bench_report;
mod demo;
mod encode;
mod failure;
mod progress;
mod timeline;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, CommandFactory, Parser, Subcommand};
use nemotron_towers::{Gpu, GpuOptions, MatmulOptions, ModelOptions, Precision};

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
    /// products), `f32`: plain f32 kernels everywhere. Default: `NEMOTRON_PRECISION`, else `auto`.
    #[arg(long, global = true, value_parser = ["auto", "f32"])]
    precision: Option<String>,
}

#[derive(Subcommand)]
enum Command {
    /// Run the whole audio module and write every output tensor (safetensors, f32).
    Encode {
        #[command(flatten)]
        input: Input,
        /// Output file (`.safetensors`).
        #[arg(long)]
        out: PathBuf,
        /// Also run the word-timestamp head and write `word_timestamp_logits` [2·T, vocab] (about 140 MB per minute
        /// of audio at the release vocabulary).
        #[arg(long)]
        word_timestamps: bool,
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
    },
    /// Who spoke when: speaker logits/probabilities, RTTM segments, a timeline picture.
    Diarize {
        #[command(flatten)]
        input: Input,
        /// Write `speaker_logits` and `speaker_probabilities` here (`.safetensors`).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Write RTTM segments here.
        #[arg(long)]
        rttm: Option<PathBuf>,
        /// Draw the timeline to this PNG.
        #[arg(long)]
        plot: Option<PathBuf>,
        /// Activity threshold on the 10 ms speaker probability, in [0, 1).
        #[arg(long, default_value_t = 0.5, value_parser = threshold)]
        threshold: f64,
    },
    /// The GPU adapter, backend, driver, enabled features and limits.
    Info,
    /// Time release-sized towers with random bf16 weights (no checkpoint needed): one ASR chunk
    /// of 600 rows, one Sortformer step of 828 rows, the word-timestamp head on 60 s of ASR states, and the whole
    /// module on synthetic audio.
    Bench {
        /// Lengths of synthetic audio, in seconds, for the whole-module runs.
        #[arg(long, value_delimiter = ',', default_value = "60,600")]
        seconds: Vec<u32>,
        /// Timed repeats per tower case (median reported, after two warm-up runs).
        #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..))]
        repeats: u32,
        /// Print per-kernel GPU times of the tower cases.
        #[arg(long)]
        profile: bool,
        /// Bench the shapes of this config.json instead of the release model's.
        #[arg(long)]
        config: Option<PathBuf>,
    },
}

/// Where the model and the input come from.
#[derive(Args)]
struct Input {
    /// Checkpoint directory (config.json + model.safetensors or a sharded index).
    #[arg(long, conflicts_with = "demo")]
    model: Option<PathBuf>,
    /// Use the built-in demo model: a tiny checkpoint with random weights, whose outputs are meaningless (it only
    /// shows that everything runs).
    #[arg(long)]
    demo: bool,
    /// A WAV file (any channel count, 1 to 768 kHz; resampled to 16 kHz mono).
    #[arg(long, required_unless_present = "features", conflicts_with = "features")]
    audio: Option<PathBuf>,
    /// A safetensors file with `input_features` `[frames, mel]` and `input_features_mask` `[frames]`.
    #[arg(long)]
    features: Option<PathBuf>,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let level = if cli.quiet { "error" } else { "warn,nemotron_towers=info,gpu_core=info,nemotron_audio=info" };
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

fn run(cli: &Cli) -> Result<(), Failure> {
    let settings = Settings::from_env(cli)?;
    match &cli.command {
        Command::Info => {
            println!("{}", settings.gpu()?.describe());
            Ok(())
        }
        Command::Encode { input, out, word_timestamps } => encode::encode(&settings, input, out, *word_timestamps),
        Command::Align { input, transcript, transcript_file, language, out, srt, vtt } => {
            let request = align::AlignRequest {
                transcript: transcript.as_deref(),
                transcript_file: transcript_file.as_deref(),
                language: language.as_deref(),
                out: out.as_deref(),
                srt: srt.as_deref(),
                vtt: vtt.as_deref(),
            };
            align::align(&settings, input, &request)
        }
        Command::Diarize { input, out, rttm, plot, threshold } => {
            let outputs = encode::DiarizeOutputs { out: out.as_deref(), rttm: rttm.as_deref(), plot: plot.as_deref() };
            encode::diarize(&settings, input, &outputs, *threshold)
        }
        Command::Bench { seconds, repeats, profile, config } => {
            bench_report::bench(&settings, seconds, *repeats as usize, *profile, config.as_deref())
        }
    }
}

/// What the environment and the global flags decide, read once.
struct Settings {
    gpu: GpuOptions,
    model: ModelOptions,
    quiet: bool,
}

impl Settings {
    fn from_env(cli: &Cli) -> Result<Self, Failure> {
        let mut matmul = MatmulOptions::from_env().map_err(|e| Failure::Usage(e.to_string()))?;
        match cli.precision.as_deref() {
            Some("f32") => matmul.precision = Precision::F32,
            Some(_) => matmul.precision = Precision::Auto,
            None => {}
        }
        Ok(Self { gpu: GpuOptions::from_env(), model: ModelOptions { matmul }, quiet: cli.quiet })
    }

    fn gpu(&self) -> Result<Gpu, Failure> {
        Ok(Gpu::with_options(&self.gpu)?)
    }
}

/// `--threshold`: a probability in [0, 1) (a usage error otherwise, exit status 2).
fn threshold(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(t) if (0.0..1.0).contains(&t) => Ok(t),
        Ok(t) => Err(format!("{t} is not in [0, 1)")),
        Err(e) => Err(e.to_string()),
    }
}
