//! permessage-deflate (RFC 7692 §7.2): raw DEFLATE per message, each message's compressed bytes
//! ending in a sync flush whose trailing 00 00 FF FF is left off on the wire.
use super::extension::DeflateParams;
use flate2::{Compress, Compression, Decompress, FlushCompress, FlushDecompress, Status};

const TAIL: [u8; 4] = [0x00, 0x00, 0xFF, 0xFF];

pub struct Inflater {
    z: Decompress,
    reset_each_message: bool,
}

/// The decompressed message would exceed the maximum message size.
#[derive(Debug, PartialEq, Eq)]
pub enum InflateError {
    TooBig,
    Corrupt(String),
}

impl Inflater {
    pub fn new(p: &DeflateParams) -> Self {
        // A 15-bit window reads any smaller window the server chose.
        Inflater {
            z: Decompress::new_with_window_bits(false, 15),
            reset_each_message: p.server_no_context_takeover,
        }
    }

    /// Decompresses one whole message into `out` (empty), never holding more than `max` + 1 bytes.
    pub fn inflate(
        &mut self,
        input: &[u8],
        out: &mut Vec<u8>,
        max: usize,
    ) -> Result<(), InflateError> {
        for part in [input, &TAIL[..]] {
            let mut pos = 0;
            loop {
                if out.len() == out.capacity() {
                    // One byte past `max` is enough to know the message is too big (`max` may
                    // be usize::MAX: no limit).
                    let room = max.saturating_add(1).saturating_sub(out.len());
                    if room == 0 {
                        return Err(InflateError::TooBig);
                    }
                    out.reserve_exact(room.min(out.len().max(16 * 1024)));
                }
                let (in0, out0) = (self.z.total_in(), self.z.total_out());
                let status = self
                    .z
                    .decompress_vec(&part[pos..], out, FlushDecompress::Sync)
                    .map_err(|e| InflateError::Corrupt(e.to_string()))?;
                let consumed = (self.z.total_in() - in0) as usize;
                let produced = self.z.total_out() - out0;
                pos += consumed;
                if out.len() > max {
                    return Err(InflateError::TooBig);
                }
                if status == Status::StreamEnd {
                    // A final block: whatever follows starts a new stream.
                    self.z.reset(false);
                    break;
                }
                let input_done = pos >= part.len();
                if input_done && out.len() < out.capacity() {
                    break;
                }
                if consumed == 0 && produced == 0 && out.len() < out.capacity() {
                    if input_done {
                        break;
                    }
                    return Err(InflateError::Corrupt("compressed data makes no progress".into()));
                }
            }
        }
        if self.reset_each_message {
            self.z.reset(false);
        }
        Ok(())
    }
}

pub struct Deflater {
    z: Compress,
    reset_each_message: bool,
}

impl Deflater {
    /// None: the server capped our window below what raw deflate can produce (8 bits); such a
    /// client sends every message uncompressed, which RFC 7692 allows.
    pub fn new(p: &DeflateParams) -> Option<Self> {
        if p.client_max_window_bits < 9 {
            return None;
        }
        let z =
            Compress::new_with_window_bits(Compression::new(1), false, p.client_max_window_bits);
        Some(Deflater { z, reset_each_message: p.client_no_context_takeover })
    }

    /// Appends the compressed form of `input` (without the 00 00 FF FF tail) to `out`.
    pub fn deflate(&mut self, input: &[u8], out: &mut Vec<u8>) {
        let start = out.len();
        out.reserve(input.len() / 2 + 64);
        let mut pos = 0;
        loop {
            if out.capacity() - out.len() < 64 {
                out.reserve(out.capacity().max(1024));
            }
            let in0 = self.z.total_in();
            // compress_vec writes into spare capacity only; errors cannot happen with Sync.
            let _ = self.z.compress_vec(&input[pos..], out, FlushCompress::Sync);
            pos += (self.z.total_in() - in0) as usize;
            // The flush is complete once all input is in and the output did not fill up.
            if pos >= input.len() && out.len() < out.capacity() {
                break;
            }
        }
        if out.len() - start >= 4 && out[out.len() - 4..] == TAIL {
            out.truncate(out.len() - 4);
        }
        if self.reset_each_message {
            self.z.reset();
        }
    }
}
