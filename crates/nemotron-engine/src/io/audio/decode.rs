//! Container and codec decoding with symphonia: probe, pick the audio track, decode packet by packet, keep the
//! heard channel of the asked-for stretch. A broken packet is an error naming the codec and the time, never
//! skipped: a recording with a hole would give features that silently disagree with the audio.

use symphonia::core::codecs::CodecParameters;
use symphonia::core::codecs::audio::well_known::*;
use symphonia::core::codecs::audio::{AudioCodecId, AudioDecoderOptions};
use symphonia::core::errors::Error as SymphoniaError;
use symphonia::core::formats::probe::Hint;
use symphonia::core::formats::{FormatOptions, TrackType};
use symphonia::core::io::{MediaSource, MediaSourceStream};
use symphonia::core::meta::MetadataOptions;

use super::{AudioError, AudioOptions, Channel, Decoded, MAX_SAMPLE_RATE, MIN_SAMPLE_RATE, SampleError, riff, select};

/// Decodes `source` (`extension` hints the container) as `options` say; `input` names it in errors.
pub(super) fn decode(
    source: Box<dyn MediaSource>,
    extension: Option<&str>,
    input: &str,
    options: &AudioOptions,
) -> Result<Decoded, AudioError> {
    let owned = || input.to_owned();
    for (what, value, usable) in [
        ("offset", options.offset, options.offset.is_finite() && options.offset >= 0.0),
        ("duration", options.duration.unwrap_or(1.0), options.duration.is_none_or(|d| d.is_finite() && d > 0.0)),
    ] {
        if !usable {
            return Err(AudioError::Cut { input: owned(), what, value });
        }
    }
    let source = riff::readable(source).map_err(|e| match e.kind() {
        std::io::ErrorKind::InvalidData => AudioError::Format { input: owned(), message: e.to_string() },
        _ => AudioError::Read { input: owned(), source: e },
    })?;
    let stream = MediaSourceStream::new(source, Default::default());
    let mut hint = Hint::new();
    if let Some(extension) = extension {
        hint.with_extension(extension);
    }
    let mut format = symphonia::default::get_probe()
        .probe(&hint, stream, FormatOptions::default(), MetadataOptions::default())
        .map_err(|e| AudioError::Format { input: owned(), message: e.to_string() })?;
    let track = format.default_track(TrackType::Audio).ok_or_else(|| AudioError::NoAudioTrack { input: owned() })?;
    let Some(CodecParameters::Audio(params)) = &track.codec_params else {
        return Err(AudioError::NoAudioTrack { input: owned() });
    };
    let codec = codec_name(params.codec);
    if let Some(rate) = params.sample_rate.filter(|r| !(MIN_SAMPLE_RATE..=MAX_SAMPLE_RATE).contains(r)) {
        return Err(AudioError::SampleRate { input: owned(), rate });
    }
    let track_id = track.id;
    let mut decoder = symphonia::default::get_codecs()
        .make_audio_decoder(params, &AudioDecoderOptions::default())
        .map_err(|_| AudioError::UnsupportedCodec { input: owned(), codec: codec.clone() })?;

    let mut cut = Cut::new(options);
    let mut interleaved: Vec<f32> = Vec::new();
    let mut rate = params.sample_rate.unwrap_or(0);
    // Frames decoded so far (all of them, kept or not) and interleaved samples, for error positions.
    let (mut frames, mut samples) = (0u64, 0usize);
    let failed = |frames: u64, rate: u32, e: SymphoniaError| AudioError::Decode {
        input: input.to_owned(),
        codec: codec.clone(),
        seconds: if rate > 0 { frames as f64 / f64::from(rate) } else { 0.0 },
        message: e.to_string(),
    };
    loop {
        let packet = match format.next_packet() {
            Ok(Some(packet)) => packet,
            Ok(None) => break,
            Err(e) => return Err(failed(frames, rate, e)),
        };
        if packet.track_id != track_id {
            continue;
        }
        let buffer = decoder.decode(&packet).map_err(|e| failed(frames, rate, e))?;
        let spec = buffer.spec();
        rate = spec.rate();
        if !(MIN_SAMPLE_RATE..=MAX_SAMPLE_RATE).contains(&rate) {
            return Err(AudioError::SampleRate { input: owned(), rate });
        }
        let channels = spec.channels().count();
        if let Channel::Index(channel) = options.channel
            && channel >= channels
        {
            return Err(AudioError::NoSuchChannel { input: owned(), channel, channels });
        }
        buffer.copy_to_vec_interleaved(&mut interleaved);
        if let Some(index) = interleaved.iter().position(|v| !v.is_finite()) {
            let value = interleaved[index];
            return Err(SampleError::NonFinite { input: owned(), index: samples + index, value }.into());
        }
        samples += interleaved.len();
        let done = cut.keep(&interleaved, channels.max(1), frames, rate, options.channel);
        frames += (interleaved.len() / channels.max(1)) as u64;
        if done {
            break;
        }
    }
    if options.offset > 0.0 && cut.kept.is_empty() {
        let seconds = if rate > 0 { frames as f64 / f64::from(rate) } else { 0.0 };
        return Err(AudioError::OffsetPastEnd { input: owned(), offset: options.offset, seconds });
    }
    Ok(Decoded { mono: cut.kept, rate })
}

/// The stretch kept: frames from `offset` for `duration` seconds, at the decoded rate.
struct Cut {
    offset: f64,
    duration: Option<f64>,
    kept: Vec<f32>,
}

impl Cut {
    fn new(options: &AudioOptions) -> Self {
        Self { offset: options.offset, duration: options.duration, kept: Vec::new() }
    }

    /// Keeps the heard samples of the frames of `interleaved` (which start at frame `first`) inside the stretch;
    /// true once the stretch is complete.
    fn keep(&mut self, interleaved: &[f32], channels: usize, first: u64, rate: u32, channel: Channel) -> bool {
        let rate = f64::from(rate);
        let start = (self.offset * rate).round() as u64;
        let end = self.duration.map_or(u64::MAX, |d| start.saturating_add((d * rate).round() as u64));
        for (i, frame) in interleaved.chunks_exact(channels).enumerate() {
            let at = first + i as u64;
            if at >= end {
                return true;
            }
            if at >= start {
                self.kept.push(select(frame, channel));
            }
        }
        first + (interleaved.len() / channels) as u64 >= end
    }
}

/// A codec's usual name, for messages.
fn codec_name(id: AudioCodecId) -> String {
    let name = match id {
        CODEC_ID_MP3 => "MP3",
        CODEC_ID_MP2 => "MP2",
        CODEC_ID_MP1 => "MP1",
        CODEC_ID_AAC => "AAC",
        CODEC_ID_FLAC => "FLAC",
        CODEC_ID_VORBIS => "Vorbis",
        CODEC_ID_OPUS => "Opus",
        CODEC_ID_SPEEX => "Speex",
        CODEC_ID_ALAC => "ALAC",
        CODEC_ID_AC3 => "AC-3",
        CODEC_ID_EAC3 => "E-AC-3",
        CODEC_ID_DCA => "DTS",
        CODEC_ID_WMA => "WMA",
        CODEC_ID_WAVPACK => "WavPack",
        CODEC_ID_MONKEYS_AUDIO => "Monkey's Audio",
        CODEC_ID_TTA => "TTA",
        CODEC_ID_TRUEHD => "TrueHD",
        CODEC_ID_PCM_MULAW => "μ-law",
        CODEC_ID_PCM_ALAW => "A-law",
        CODEC_ID_ADPCM_G722 | CODEC_ID_ADPCM_G726 | CODEC_ID_ADPCM_G726LE => "G.72x ADPCM",
        CODEC_ID_ADPCM_MS => "MS ADPCM",
        CODEC_ID_ADPCM_IMA_WAV | CODEC_ID_ADPCM_IMA_QT => "IMA ADPCM",
        pcm if (CODEC_ID_PCM_S32LE..=CODEC_ID_PCM_F64BE_PLANAR).contains(&pcm) => "PCM",
        other => return format!("with id {other}"),
    };
    name.to_owned()
}
