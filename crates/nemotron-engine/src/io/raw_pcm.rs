//! Raw PCM byte streams (no header) → f32 samples, a piece at a time: what a live source (a pipe, a socket)
//! delivers. Samples split across pieces are joined.

/// How samples are encoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RawFormat {
    /// Signed 16-bit little-endian integers, scaled to [-1, 1) as a 16-bit WAV file is.
    S16le,
    /// 32-bit little-endian IEEE floats, as they are.
    F32le,
}

impl RawFormat {
    /// Bytes per sample.
    pub fn bytes(self) -> usize {
        match self {
            RawFormat::S16le => 2,
            RawFormat::F32le => 4,
        }
    }

    /// The name on the command line (`s16le`, `f32le`, as ffmpeg and sox call them).
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "s16le" => Some(RawFormat::S16le),
            "f32le" => Some(RawFormat::F32le),
            _ => None,
        }
    }

    fn decode(self, sample: &[u8]) -> f32 {
        match self {
            RawFormat::S16le => (f64::from(i16::from_le_bytes([sample[0], sample[1]])) / 32768.0) as f32,
            RawFormat::F32le => f32::from_le_bytes([sample[0], sample[1], sample[2], sample[3]]),
        }
    }
}

/// A stream ended inside a sample.
#[derive(Debug, thiserror::Error)]
#[error("the raw {format:?} stream ended inside a sample: {bytes} stray bytes after {samples} samples")]
pub struct PartialSample {
    /// The stream's format.
    pub format: RawFormat,
    /// Whole samples decoded.
    pub samples: usize,
    /// Bytes of the incomplete sample.
    pub bytes: usize,
}

/// Decodes a raw PCM stream piece by piece, keeping the bytes of a sample split between pieces.
#[derive(Clone, Debug)]
pub struct RawDecoder {
    format: RawFormat,
    /// Bytes of an incomplete sample.
    pending: Vec<u8>,
    samples: usize,
}

impl RawDecoder {
    /// A decoder of `format`.
    pub fn new(format: RawFormat) -> Self {
        Self { format, pending: Vec::new(), samples: 0 }
    }

    /// The samples completed by the next `bytes` of the stream.
    pub fn decode(&mut self, mut bytes: &[u8]) -> Vec<f32> {
        let width = self.format.bytes();
        let mut out = Vec::with_capacity((self.pending.len() + bytes.len()) / width);
        if !self.pending.is_empty() {
            let take = (width - self.pending.len()).min(bytes.len());
            self.pending.extend_from_slice(&bytes[..take]);
            bytes = &bytes[take..];
            if self.pending.len() == width {
                out.push(self.format.decode(&self.pending));
                self.pending.clear();
            }
        }
        let whole = bytes.chunks_exact(width);
        self.pending.extend_from_slice(whole.remainder());
        out.extend(whole.map(|sample| self.format.decode(sample)));
        self.samples += out.len();
        out
    }

    /// The stream ended: refused when it ended inside a sample.
    pub fn finish(self) -> Result<(), PartialSample> {
        match self.pending.len() {
            0 => Ok(()),
            bytes => Err(PartialSample { format: self.format, samples: self.samples, bytes }),
        }
    }
}
