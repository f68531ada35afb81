//! `nemotron-audio`: Nemotron 3.5 Transcribe's audio perception from the command line.
//! Exit status: 0 on success, 1 on a runtime error (bad file, bad model, GPU failure), 2 on a
//! usage error.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use gpu_core::Gpu;
use indicatif::{ProgressBar, ProgressStyle};
use nemotron_towers::ModelConfig;
use nemotron_towers::frontend::Features;
use nemotron_towers::pipeline::{AudioOutputs, Diarization, Model};
use nemotron_towers::tensor_file;
use nemotron_towers::{audio, bench, rttm, timeline};

/// The bundled tiny random-weight checkpoint: its outputs are meaningless, it only makes the
/// commands runnable without a download.
const BUNDLED_MODEL: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/reference/tiny-release-chunks");

#[derive(Parser)]
#[command(name = "nemotron-audio", version, about = "Nemotron 3.5 Transcribe audio perception on any GPU (wgpu)")]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// No progress bar; only errors on stderr.
    #[arg(long, short, global = true)]
    quiet: bool,
    /// `auto`: tensor cores where the adapter has f16 cooperative matrices (f32-accurate split
    /// products), `f32`: plain f32 kernels everywhere. Also `NEMOTRON_PRECISION`.
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
    /// of 600 rows, one Sortformer step of 828 rows, and the whole module on synthetic audio.
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

#[derive(Args)]
struct Input {
    /// Checkpoint directory (config.json + model.safetensors or a sharded index). Default: the
    /// bundled tiny random-weight model (meaningless outputs).
    #[arg(long)]
    model: Option<PathBuf>,
    /// A WAV file (any channel count, 1 to 768 kHz; resampled to 16 kHz mono).
    #[arg(long, required_unless_present = "features", conflicts_with = "features")]
    audio: Option<PathBuf>,
    /// A safetensors file with `input_features` [frames, mel] and `input_features_mask` [frames].
    #[arg(long)]
    features: Option<PathBuf>,
}

type Fallible<T> = Result<T, String>;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let level = if cli.quiet { "error" } else { "warn,nemotron_towers=info,gpu_core=info" };
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or(level)).format_target(false).init();
    if let Some(precision) = &cli.precision {
        // SAFETY: set before any thread exists; the GPU context reads it at creation.
        unsafe { std::env::set_var("NEMOTRON_PRECISION", precision) };
    }
    match run(&cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::from(1)
        }
    }
}

fn run(cli: &Cli) -> Fallible<()> {
    match &cli.command {
        Command::Info => {
            println!("{}", gpu()?.describe());
            Ok(())
        }
        Command::Encode { input, out } => encode(input, out, cli.quiet),
        Command::Bench { seconds, repeats, profile, config } => bench(seconds, *repeats, *profile, config.as_deref()),
        Command::Diarize { input, out, rttm, plot, threshold } => {
            diarize(input, out.as_deref(), rttm.as_deref(), plot.as_deref(), *threshold, cli.quiet)
        }
    }
}

fn bench(seconds: &[u32], repeats: u32, profile: bool, config: Option<&Path>) -> Fallible<()> {
    let config = config.map(ModelConfig::from_file).transpose().map_err(|e| e.to_string())?;
    let gpu = gpu()?;
    let info = gpu.adapter_info();
    println!("nemotron-audio bench on {} ({:?}, driver {} {})", info.name, info.backend, info.driver, info.driver_info);
    let options = bench::BenchOptions { seconds: seconds.to_vec(), repeats: repeats as usize, profile, config };
    bench::run(&gpu, &options, &mut |line| println!("{line}")).map_err(|e| e.to_string())?;
    Ok(())
}

/// `--threshold`: a probability in [0, 1) (a usage error otherwise, exit status 2).
fn threshold(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(t) if (0.0..1.0).contains(&t) => Ok(t),
        Ok(t) => Err(format!("{t} is not in [0, 1)")),
        Err(e) => Err(e.to_string()),
    }
}

fn gpu() -> Fallible<Gpu> {
    Gpu::new().map_err(|e| e.to_string())
}

fn load(input: &Input) -> Fallible<(Gpu, Model)> {
    let dir = match &input.model {
        Some(dir) => dir.clone(),
        None => {
            let bundled = PathBuf::from(BUNDLED_MODEL);
            if !bundled.is_dir() {
                return Err(format!("no --model given and the bundled test model is not at {}", bundled.display()));
            }
            log::info!("using the bundled tiny random-weight model (outputs are meaningless; pass --model DIR)");
            bundled
        }
    };
    let gpu = gpu()?;
    let model = Model::load(&gpu, &dir).map_err(|e| e.to_string())?;
    Ok((gpu, model))
}

/// The model's input: features from a WAV file or from a features file.
enum Source {
    Samples(Vec<f32>),
    Features(Features),
}

fn source(input: &Input, mel_bins: usize, subsampling: usize) -> Fallible<Source> {
    match (&input.audio, &input.features) {
        (Some(path), _) => Ok(Source::Samples(audio::read_wav(path).map_err(|e| e.to_string())?)),
        (None, Some(path)) => {
            Ok(Source::Features(tensor_file::read_features(path, mel_bins, subsampling).map_err(|e| e.to_string())?))
        }
        (None, None) => Err("give --audio FILE or --features FILE".into()),
    }
}

/// A progress bar on stderr for runs of more than one step.
struct Bar(Option<ProgressBar>);

impl Bar {
    fn new(quiet: bool) -> Self {
        Self((!quiet).then(ProgressBar::hidden))
    }

    fn update(&mut self, stage: &str, done: usize, total: usize) {
        let Some(bar) = &mut self.0 else { return };
        if total > 1 && bar.is_hidden() {
            *bar = ProgressBar::new(total as u64);
            if let Ok(style) = ProgressStyle::with_template("{msg:>12} [{bar:40}] {pos}/{len} {elapsed}") {
                bar.set_style(style.progress_chars("=> "));
            }
        }
        bar.set_message(stage.to_string());
        bar.set_length(total as u64);
        bar.set_position(done as u64);
    }

    fn finish(self) {
        if let Some(bar) = self.0 {
            bar.finish_and_clear();
        }
    }
}

fn encode(input: &Input, out: &Path, quiet: bool) -> Fallible<()> {
    let (_gpu, model) = load(input)?;
    let Model::Transcribe(model) = model else {
        return Err(
            "this checkpoint is a diarizer alone; `encode` needs a Transcribe checkpoint (try `diarize`)".into()
        );
    };
    let c = model.config();
    let mut bar = Bar::new(quiet);
    let mut progress = |stage: &str, done, total| bar.update(stage, done, total);
    let outputs = match source(input, c.asr.mel_bins, c.asr.subsampling)? {
        Source::Samples(samples) => model.encode_audio(&samples, &mut progress),
        Source::Features(features) => model.encode_features(features, &mut progress),
    }
    .map_err(|e| e.to_string())?;
    bar.finish();
    write_encoding(out, &outputs, c.asr.hidden, c.diarization.speakers, c.text_hidden)
}

fn write_encoding(out: &Path, o: &AudioOutputs, hidden: usize, speakers: usize, text: usize) -> Fallible<()> {
    let f = &o.features;
    let mel = f.data.len() / f.frames.max(1);
    let frames = o.asr_hidden.len() / hidden;
    let mask: Vec<f32> = (0..f.frames).map(|i| if i < f.valid { 1.0 } else { 0.0 }).collect();
    let tensors: [(&str, Vec<usize>, &[f32]); 7] = [
        ("input_features", vec![f.frames, mel], &f.data),
        ("input_features_mask", vec![f.frames], &mask),
        ("asr_last_hidden_state", vec![frames, hidden], &o.asr_hidden),
        ("speaker_logits", vec![f.frames, speakers], &o.speaker_logits),
        ("speaker_probabilities", vec![frames, speakers], &o.speaker_probabilities),
        ("last_hidden_state", vec![frames, hidden], &o.fused),
        ("audio_embeds", vec![o.audio_embeds.len() / text, text], &o.audio_embeds),
    ];
    tensor_file::write_f32(out, &tensors).map_err(|e| e.to_string())
}

fn diarize(
    input: &Input,
    out: Option<&Path>,
    rttm_path: Option<&Path>,
    plot: Option<&Path>,
    threshold: f64,
    quiet: bool,
) -> Fallible<()> {
    let (_gpu, model) = load(input)?;
    let diarizer = model.diarizer();
    let c = diarizer.config().clone();
    let mut bar = Bar::new(quiet);
    let mut progress = |stage: &str, done, total| bar.update(stage, done, total);
    let result: Diarization = match source(input, c.encoder.mel_bins, c.encoder.subsampling)? {
        Source::Samples(samples) => diarizer.diarize_audio(&samples, &mut progress),
        Source::Features(features) => diarizer.diarize_features(features, &mut progress),
    }
    .map_err(|e| e.to_string())?;
    bar.finish();
    let speakers = c.speakers;
    let segments = rttm::segments(&result.speaker_logits, speakers, result.features.valid, threshold);
    if let Some(path) = out {
        let frames = result.features.frames;
        let tensors: [(&str, Vec<usize>, &[f32]); 2] = [
            ("speaker_logits", vec![frames, speakers], &result.speaker_logits),
            ("speaker_probabilities", vec![frames / c.encoder.subsampling, speakers], &result.speaker_probabilities),
        ];
        tensor_file::write_f32(path, &tensors).map_err(|e| e.to_string())?;
    }
    if let Some(path) = rttm_path {
        let id = input
            .audio
            .as_ref()
            .or(input.features.as_ref())
            .and_then(|p| p.file_stem())
            .map_or_else(|| "audio".to_string(), |s| s.to_string_lossy().into_owned());
        std::fs::write(path, rttm::to_rttm(&id, &segments)).map_err(|e| format!("writing {}: {e}", path.display()))?;
    }
    if let Some(path) = plot {
        let frame_seconds = rttm::FRAME_SECONDS * c.encoder.subsampling as f64;
        let seconds = result.features.valid as f64 * rttm::FRAME_SECONDS;
        timeline::render(path, &segments, &result.speaker_probabilities, speakers, frame_seconds, seconds)?;
    }
    if out.is_none() && rttm_path.is_none() && plot.is_none() {
        print!("{}", rttm::to_rttm("audio", &segments));
    }
    Ok(())
}
