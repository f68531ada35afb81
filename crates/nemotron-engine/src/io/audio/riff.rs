//! WAV headers made safe and readable for symphonia's RIFF reader, before it sees them:
//!
//! - RF64 (EBU Tech 3306, the WAV of more than 4 GiB): symphonia reads RIFF WAVE only. An RF64 file is the same
//!   layout with `RF64` for `RIFF`, 32-bit sizes set to 0xFFFFFFFF and the true 64-bit sizes in a `ds64` chunk. The
//!   header is patched as it is read: `RIFF`, and the sizes from `ds64` where they fit in 32 bits (else 0xFFFFFFFF,
//!   which symphonia reads as "to the end of the file", where the data is). `ds64` is then an unknown chunk, which
//!   RIFF readers skip. Byte positions do not change.
//! - `WAVE_FORMAT_EXTENSIBLE` with a channel mask that symphonia 0.6.1 cannot repair without an overflowing shift
//!   (a panic in builds with overflow checks): more than 31 channels missing from the mask, or a mask with its top
//!   bit set and channels missing. Such headers are refused with the reason.

use std::io::{self, Read, Seek, SeekFrom};

use symphonia::core::io::MediaSource;

/// Bytes searched for the `ds64` and `data` chunk headers.
const HEAD: usize = 64 * 1024;

/// `source` unchanged, or, when it is an RF64 file, seen as a RIFF one; an error for a header symphonia cannot
/// take. `source` must be seekable.
pub(super) fn readable(mut source: Box<dyn MediaSource>) -> io::Result<Box<dyn MediaSource>> {
    let mut head = Vec::with_capacity(HEAD);
    (&mut source).take(HEAD as u64).read_to_end(&mut head)?;
    source.seek(SeekFrom::Start(0))?;
    let riff = head.starts_with(b"RIFF") || head.starts_with(b"RF64");
    if !(riff && head.get(8..12) == Some(b"WAVE")) {
        return Ok(source);
    }
    if let Some(problem) = chunks(&head).find_map(|(id, body)| (id == b"fmt ").then(|| unusable_mask(body)).flatten()) {
        return Err(io::Error::new(io::ErrorKind::InvalidData, problem));
    }
    if !head.starts_with(b"RF64") {
        return Ok(source);
    }
    patch(&mut head);
    Ok(Box::new(Patched { inner: source, head, pos: 0 }))
}

/// The chunks of a WAV header that lie within `head`: (id, body start).
fn chunks(head: &[u8]) -> impl Iterator<Item = (&[u8], &[u8])> {
    let mut at = 12usize;
    std::iter::from_fn(move || {
        let id = head.get(at..at + 4)?;
        let len = u32::from_le_bytes(head.get(at + 4..at + 8)?.try_into().ok()?) as usize;
        let body = head.get(at + 8..).unwrap_or_default();
        let body = &body[..len.min(body.len())];
        // Chunks are padded to even lengths.
        at = at.checked_add(8 + len + (len & 1))?;
        Some((id, body))
    })
}

/// Why an extensible format chunk's channel mask would overflow symphonia's repair of it.
fn unusable_mask(fmt: &[u8]) -> Option<String> {
    let tag = u16::from_le_bytes(fmt.get(0..2)?.try_into().ok()?);
    let channels = u16::from_le_bytes(fmt.get(2..4)?.try_into().ok()?);
    let mask = u32::from_le_bytes(fmt.get(20..24)?.try_into().ok()?);
    let missing = i64::from(channels) - i64::from(mask.count_ones());
    let overflows = missing >= 32 || (missing > 0 && mask & 0x8000_0000 != 0);
    (tag == 0xFFFE && overflows).then(|| format!("the channel mask {mask:#010x} does not describe {channels} channels"))
}

/// Rewrites the RF64 header in `head` as a RIFF one of the same length.
fn patch(head: &mut [u8]) {
    let u32_at = |head: &[u8], at: usize| head.get(at..at + 4).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
    let u64_at =
        |head: &[u8], at: usize| head.get(at..at + 8).map(|b| u64::from_le_bytes(b.try_into().unwrap_or([0; 8])));
    let narrow = |size: u64| u32::try_from(size).unwrap_or(u32::MAX);
    head[..4].copy_from_slice(b"RIFF");
    let mut data_size = None;
    let mut at = 12usize;
    while let (Some(id), Some(len)) = (head.get(at..at + 4), u32_at(head, at + 4)) {
        match id {
            b"ds64" => {
                if let (Some(riff), Some(data)) = (u64_at(head, at + 8), u64_at(head, at + 16)) {
                    head[4..8].copy_from_slice(&narrow(riff).to_le_bytes());
                    data_size = Some(data);
                }
            }
            b"data" => {
                if let Some(data) = data_size {
                    head[at + 4..at + 8].copy_from_slice(&narrow(data).to_le_bytes());
                }
                return;
            }
            _ => {}
        }
        // Chunks are padded to even lengths.
        let Some(next) = at.checked_add(8 + len as usize + (len as usize & 1)) else { return };
        at = next;
    }
}

/// `inner` with its first `head.len()` bytes replaced by `head`.
struct Patched {
    inner: Box<dyn MediaSource>,
    head: Vec<u8>,
    pos: u64,
}

impl Read for Patched {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = match usize::try_from(self.pos).ok().and_then(|pos| self.head.get(pos..)) {
            Some(rest) if !rest.is_empty() => {
                let n = rest.len().min(buf.len());
                buf[..n].copy_from_slice(&rest[..n]);
                n
            }
            _ => {
                self.inner.seek(SeekFrom::Start(self.pos))?;
                self.inner.read(buf)?
            }
        };
        self.pos += n as u64;
        Ok(n)
    }
}

impl Seek for Patched {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        self.pos = match to {
            SeekFrom::Start(pos) => pos,
            SeekFrom::End(_) => self.inner.seek(to)?,
            SeekFrom::Current(delta) => self
                .pos
                .checked_add_signed(delta)
                .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "seek before the start"))?,
        };
        Ok(self.pos)
    }
}

impl MediaSource for Patched {
    fn is_seekable(&self) -> bool {
        self.inner.is_seekable()
    }

    fn byte_len(&self) -> Option<u64> {
        self.inner.byte_len()
    }
}
