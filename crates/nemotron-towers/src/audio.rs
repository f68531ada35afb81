//! Audio input: WAV files or in-memory interleaved samples → 16 kHz mono f32, the front end's input.
//!
//! Channels are averaged; other rates go through rubato's FFT resampler (a windowed-sinc anti-aliasing
//! filter applied in the frequency domain), whose start-up delay it trims, so the output stays aligned.

use std::fs::File;
use std::io::{BufReader, Read};
use std::path::Path;

use hound::{SampleFormat, WavReader};
use rubato::audioadapter_buffers::direct::InterleavedSlice;
use rubato::{Fft, FixedSync, Resampler, ResamplerConstructionError, WindowFunction};

/// The only rate the model takes.
pub const SAMPLE_RATE: u32 = 16_000;
/// Input rates accepted. The resampler's FFT sizes grow with the rate's ratio to 16 kHz (1 Hz audio
/// would need a 16-million-point FFT per sample), so absurd rates are refused, not resampled.
pub const MIN_SAMPLE_RATE: u32 = 1_000;
/// Highest input rate accepted, in Hz (see [`MIN_SAMPLE_RATE`]).
pub const MAX_SAMPLE_RATE: u32 = 768_000;
/// One hop of the front end: shorter audio has no valid mel frame.
pub const MIN_SAMPLES: usize = 160;
/// Input frames per resampler call, roughly (rounded up to whole FFT blocks).
const RESAMPLER_CHUNK: usize = 1024;
/// Names in-memory audio in error messages.
const IN_MEMORY: &str = "in-memory audio";

/// Errors of audio input; each names the file (or "in-memory audio") and the problem.
#[derive(Debug, thiserror::Error)]
pub enum AudioError {
    /// The file could not be opened or is not a well-formed WAV file.
    #[error("{input}: cannot read as a WAV file: {source}")]
    Wav {
        /// The file path, or "in-memory audio".
        input: String,
        /// hound's error (I/O or WAV parsing).
        source: hound::Error,
    },

    /// A WAV sample format this reader does not decode (float other than 32-bit).
    #[error("{input}: unsupported WAV sample format: {bits}-bit {format}")]
    UnsupportedFormat {
        /// The file path, or "in-memory audio".
        input: String,
        /// Bits per sample in the WAV header.
        bits: u16,
        /// Sample format in the header: "float" or "integer".
        format: &'static str,
    },

    /// The channel count is zero or does not divide the number of samples.
    #[error("{input}: {samples} samples do not form whole frames of {channels} channels")]
    Channels {
        /// The file path, or "in-memory audio".
        input: String,
        /// Interleaved samples given (all channels).
        samples: usize,
        /// The channel count given.
        channels: usize,
    },

    /// A sample rate outside [`MIN_SAMPLE_RATE`]..=[`MAX_SAMPLE_RATE`].
    #[error("{input}: unsupported sample rate {rate} Hz (supported: {MIN_SAMPLE_RATE} to {MAX_SAMPLE_RATE} Hz)")]
    SampleRate {
        /// The file path, or "in-memory audio".
        input: String,
        /// The offending rate, in Hz.
        rate: u32,
    },

    /// No samples at all.
    #[error("{input}: the audio is empty")]
    Empty {
        /// The file path, or "in-memory audio".
        input: String,
    },

    /// Fewer than [`MIN_SAMPLES`] samples once at 16 kHz.
    #[error("{input}: {samples} samples at 16 kHz, at least {MIN_SAMPLES} (10 ms) are needed")]
    TooShort {
        /// The file path, or "in-memory audio".
        input: String,
        /// Mono samples left after conversion to 16 kHz.
        samples: usize,
    },

    /// A NaN or infinite sample (index counts interleaved samples of the input).
    #[error("{input}: sample {index} is {value}, not a finite number")]
    NonFinite {
        /// The file path, or "in-memory audio".
        input: String,
        /// Position of the first non-finite sample among the interleaved input samples.
        index: usize,
        /// The sample itself (NaN or ±infinity).
        value: f32,
    },

    /// rubato refused the conversion.
    #[error("{input}: resampling from {rate} Hz to 16 kHz failed: {message}")]
    Resample {
        /// The file path, or "in-memory audio".
        input: String,
        /// The input rate being converted from, in Hz.
        rate: u32,
        /// rubato's error, as text.
        message: String,
    },
}

/// Reads an audio file as 16 kHz mono samples, what every model call takes. Today: WAV (see [`read_wav`]).
pub fn read_audio(path: &Path) -> Result<Vec<f32>, AudioError> {
    read_wav(path)
}

/// Reads a WAV file (8/16/24/32-bit integer or 32-bit float, any channel count, 1 to 768 kHz) as 16 kHz mono.
pub fn read_wav(path: &Path) -> Result<Vec<f32>, AudioError> {
    let input = path.display().to_string();
    let file =
        File::open(path).map_err(|e| AudioError::Wav { input: input.clone(), source: hound::Error::IoError(e) })?;
    read_wav_from(BufReader::new(file), &input)
}

/// Reads WAV data from `reader` as [`read_wav`] does; `input` names it in errors.
pub fn read_wav_from<R: Read>(reader: R, input: &str) -> Result<Vec<f32>, AudioError> {
    let reader = WavReader::new(reader).map_err(|source| AudioError::Wav { input: input.to_owned(), source })?;
    let spec = reader.spec();
    let interleaved = decode(reader, input)?;
    convert(&interleaved, usize::from(spec.channels), spec.sample_rate, input)
}

/// Converts interleaved samples with `channels` channels at `rate` Hz to 16 kHz mono.
pub fn to_16k_mono(samples: &[f32], channels: usize, rate: u32) -> Result<Vec<f32>, AudioError> {
    convert(samples, channels, rate, IN_MEMORY)
}

/// All samples of the file as f32 in [-1, 1), still interleaved.
fn decode<R: Read>(reader: WavReader<R>, input: &str) -> Result<Vec<f32>, AudioError> {
    let spec = reader.spec();
    let wav_error = |source| AudioError::Wav { input: input.to_owned(), source };
    match (spec.sample_format, spec.bits_per_sample) {
        (SampleFormat::Float, 32) => reader.into_samples::<f32>().collect::<Result<_, _>>().map_err(wav_error),
        (SampleFormat::Int, bits @ 1..=32) => {
            // Full scale of a signed `bits`-bit integer; hound already re-centres unsigned 8-bit data.
            let scale = 1.0 / (1u64 << (bits - 1)) as f64;
            reader
                .into_samples::<i32>()
                .map(|sample| sample.map(|v| (f64::from(v) * scale) as f32))
                .collect::<Result<_, _>>()
                .map_err(wav_error)
        }
        (format, bits) => Err(AudioError::UnsupportedFormat {
            input: input.to_owned(),
            bits,
            format: if format == SampleFormat::Float { "float" } else { "integer" },
        }),
    }
}

fn convert(samples: &[f32], channels: usize, rate: u32, input: &str) -> Result<Vec<f32>, AudioError> {
    if channels == 0 || !samples.len().is_multiple_of(channels) {
        return Err(AudioError::Channels { input: input.to_owned(), samples: samples.len(), channels });
    }
    if !(MIN_SAMPLE_RATE..=MAX_SAMPLE_RATE).contains(&rate) {
        return Err(AudioError::SampleRate { input: input.to_owned(), rate });
    }
    if samples.is_empty() {
        return Err(AudioError::Empty { input: input.to_owned() });
    }
    if let Some((index, &value)) = samples.iter().enumerate().find(|(_, v)| !v.is_finite()) {
        return Err(AudioError::NonFinite { input: input.to_owned(), index, value });
    }

    let mono = downmix(samples, channels);
    let pcm = if rate == SAMPLE_RATE { mono } else { resample(&mono, rate, input)? };
    if pcm.len() < MIN_SAMPLES {
        return Err(AudioError::TooShort { input: input.to_owned(), samples: pcm.len() });
    }
    Ok(pcm)
}

/// Mean over the channels of each frame.
fn downmix(samples: &[f32], channels: usize) -> Vec<f32> {
    if channels == 1 {
        return samples.to_vec();
    }
    samples
        .chunks_exact(channels)
        .map(|frame| (frame.iter().map(|&x| f64::from(x)).sum::<f64>() / channels as f64) as f32)
        .collect()
}

fn resample(mono: &[f32], rate: u32, input: &str) -> Result<Vec<f32>, AudioError> {
    log::info!("{input}: resampling {} samples from {rate} Hz to {SAMPLE_RATE} Hz", mono.len());
    let failed = |message: String| AudioError::Resample { input: input.to_owned(), rate, message };
    let wide: Vec<f64> = mono.iter().map(|&x| f64::from(x)).collect();
    let buffer = InterleavedSlice::new(wide.as_slice(), 1, wide.len()).map_err(|e| failed(e.to_string()))?;
    let mut resampler = fft_resampler(rate).map_err(|e| failed(e.to_string()))?;
    let resampled = resampler.process_all(&buffer, wide.len(), None).map_err(|e| failed(e.to_string()))?;
    Ok(resampled.take_data().into_iter().map(|x| x as f32).collect())
}

/// rubato's FFT resampler trims `fft_size_out / 2` output frames of delay, but its anti-aliasing filter is
/// centred on input frame `⌊fft_size_in / 2⌋`: unless both sizes are even the output leads the input by a
/// fraction of a sample (0.18 samples at 16 kHz from 44.1 kHz). The sizes are `blocks × rate / gcd`, so
/// an even number of blocks keeps the output aligned.
fn fft_resampler(rate: u32) -> Result<Fft<f64>, ResamplerConstructionError> {
    let block_in = (rate / gcd(rate, SAMPLE_RATE)) as usize;
    let blocks = 2 * RESAMPLER_CHUNK.div_ceil(2 * block_in);
    Fft::new_custom(
        rate as usize,
        SAMPLE_RATE as usize,
        blocks * block_in,
        1,
        1,
        WindowFunction::BlackmanHarris2,
        FixedSync::Input,
    )
}

fn gcd(a: u32, b: u32) -> u32 {
    if b == 0 { a } else { gcd(b, a % b) }
}
