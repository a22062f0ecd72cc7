//! Streaming content decoders (RFC 9110 §8.4): gzip, deflate (zlib-wrapped or raw), brotli and
//! zstd, alone or chained for a list of codings. Sans-IO: compressed bytes go in with `write`,
//! decoded bytes come out at most [`STEP`] at a time, so one small input can never make one call
//! allocate without bound (a decompression bomb stays a loop of bounded steps the caller controls,
//! and `max_size` ends it).
#[cfg(any(test, feature = "fuzzing"))]
pub mod check;
mod codec;
mod kind;
#[cfg(test)]
mod tests;

use codec::Codec;
pub use kind::{Coding, DecodeError, ErrorKind};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Decoders in the process still holding their state (not yet complete, failed or released).
static LIVE: AtomicUsize = AtomicUsize::new(0);

/// How many decoders hold state now: a leak check for their owners (tests).
pub fn live_decoders() -> usize {
    LIVE.load(Ordering::Relaxed)
}

/// Most bytes one `write` / `read` / `finish` call returns, and most bytes held between stages.
pub const STEP: usize = 64 * 1024;
/// More codings than this in one response is an attack, not a real server (the same bound curl
/// and urllib3 adopted for CVE-2022-32206).
pub const MAX_CODINGS: usize = 5;

/// The codings of a `content-encoding` value in the order they must be undone (the reverse of
/// the order listed). `Ok(None)` when there is nothing to decode or any coding is unknown: the
/// body is then passed on as received. Names are case-insensitive; `identity` is skipped.
pub fn parse_content_encoding(value: &str) -> Result<Option<Vec<Coding>>, DecodeError> {
    let mut codings = Vec::new();
    for name in value.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        if codings.len() == MAX_CODINGS {
            return Err(DecodeError {
                kind: ErrorKind::TooManyCodings,
                coding: None,
                message: format!(
                    "too many content-encodings in response (more than {MAX_CODINGS})"
                ),
            });
        }
        let lower = name.to_ascii_lowercase();
        if lower == "identity" {
            continue;
        }
        match Coding::from_name(&lower) {
            Some(c) => codings.push(c),
            None => return Ok(None),
        }
    }
    codings.reverse();
    Ok((!codings.is_empty()).then_some(codings))
}

struct Stage {
    coding: Coding,
    codec: Codec,
    /// Input not yet consumed: `buf[pos..]`.
    buf: Vec<u8>,
    pos: usize,
    seen_input: bool,
    produced: u64,
}

/// A chain of decoders for one body. Feed it with [`write`](Decoder::write), drain it with
/// [`read`](Decoder::read) until that returns nothing, and end it with
/// [`finish`](Decoder::finish) (then `read` until nothing) to learn whether the body was whole.
pub struct Decoder {
    stages: Vec<Stage>,
    input_ended: bool,
    max_size: Option<u64>,
    /// Accept a stream cut short (fetch does, as browsers do); otherwise it is an error.
    lenient: bool,
    failed: Option<DecodeError>,
}

impl Decoder {
    /// `codings` in decoding order (see [`parse_content_encoding`]). `max_size`: most bytes any
    /// stage may produce.
    pub fn new(
        codings: &[Coding],
        max_size: Option<u64>,
        lenient: bool,
    ) -> Result<Decoder, DecodeError> {
        let stages = codings
            .iter()
            .map(|&coding| {
                Ok(Stage {
                    coding,
                    codec: Codec::new(coding)?,
                    buf: Vec::new(),
                    pos: 0,
                    seen_input: false,
                    produced: 0,
                })
            })
            .collect::<Result<Vec<_>, DecodeError>>()?;
        LIVE.fetch_add(1, Ordering::Relaxed);
        Ok(Decoder { stages, input_ended: false, max_size, lenient, failed: None })
    }

    /// Adds compressed bytes and returns the first decoded ones (at most [`STEP`]); call
    /// [`read`](Decoder::read) until it returns nothing before writing more.
    pub fn write(&mut self, chunk: &[u8]) -> Result<Vec<u8>, DecodeError> {
        self.feed(chunk)?;
        self.read()
    }

    /// Adds compressed bytes without decoding any: [`read_into`](Decoder::read_into) drains them.
    pub fn feed(&mut self, chunk: &[u8]) -> Result<(), DecodeError> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        let Some(first) = self.stages.first_mut() else {
            return Ok(()); // released: the body already ended
        };
        if first.pos == first.buf.len() {
            first.buf.clear();
            first.pos = 0;
        }
        first.buf.extend_from_slice(chunk);
        Ok(())
    }

    /// Marks the end of the compressed input; then [`read`](Decoder::read) drains what is left.
    pub fn finish(&mut self) -> Result<Vec<u8>, DecodeError> {
        self.end_input();
        self.read()
    }

    /// Marks the end of the compressed input (see [`finish`](Decoder::finish)) without decoding.
    pub fn end_input(&mut self) {
        self.input_ended = true;
    }

    /// The next decoded bytes (at most [`STEP`]). Empty: everything written so far is decoded; after
    /// [`finish`](Decoder::finish), empty means the body is complete.
    pub fn read(&mut self) -> Result<Vec<u8>, DecodeError> {
        let mut out = vec![0; STEP];
        let n = self.read_into(&mut out)?;
        out.truncate(n);
        if out.len() < out.capacity() / 4 {
            out.shrink_to_fit();
        }
        Ok(out)
    }

    /// Decodes into the caller's buffer (at most [`STEP`] bytes, never more than `out` holds) and
    /// returns how many bytes it wrote, with [`read`](Decoder::read)'s meaning of 0. The caller
    /// owns the memory: JS hands in a buffer its GC accounts for, and nothing is allocated here.
    pub fn read_into(&mut self, out: &mut [u8]) -> Result<usize, DecodeError> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        let Some(last) = self.stages.len().checked_sub(1) else {
            return Ok(0); // released
        };
        let limit = out.len().min(STEP);
        let result = self.produce(last, &mut out[..limit]).and_then(|n| {
            if n == 0 && self.input_ended {
                self.check_complete().map(|()| 0)
            } else {
                Ok(n)
            }
        });
        match &result {
            Err(e) => {
                self.failed = Some(e.clone());
                self.release();
            }
            // The body is complete: nothing more will come out.
            Ok(0) if self.input_ended => self.release(),
            Ok(_) => {}
        }
        result
    }

    /// Frees the decoders' state (a brotli window is up to 16 MiB) now rather than when the owner
    /// is dropped: a JS owner is dropped by a GC that does not see this memory. Called on its own
    /// once the body is complete or has failed; afterwards `read_into` returns 0.
    pub fn release(&mut self) {
        if !self.stages.is_empty() {
            LIVE.fetch_sub(1, Ordering::Relaxed);
        }
        self.stages.clear();
        self.stages.shrink_to_fit();
    }

    fn check_complete(&self) -> Result<(), DecodeError> {
        for st in &self.stages {
            // An empty body decodes to an empty body (servers send those with a content-encoding).
            if st.seen_input && !st.codec.ended() && !self.lenient {
                return Err(DecodeError::new(
                    ErrorKind::Truncated,
                    st.coding,
                    "unexpected end of data".into(),
                ));
            }
        }
        Ok(())
    }

    /// Fills `out` (as far as it can) with decoded bytes of stage `i` and returns how many, pulling
    /// input from stage `i - 1` (at most [`STEP`] held at a time) or the written bytes for stage 0.
    fn produce(&mut self, i: usize, out: &mut [u8]) -> Result<usize, DecodeError> {
        let mut n = 0;
        loop {
            if n == out.len() {
                return Ok(n);
            }
            if i > 0 && self.stages[i].pos == self.stages[i].buf.len() {
                let mut buf = std::mem::take(&mut self.stages[i].buf);
                buf.resize(STEP, 0);
                let r = self.produce(i - 1, &mut buf);
                buf.truncate(*r.as_ref().unwrap_or(&0));
                let st = &mut self.stages[i];
                st.buf = buf;
                st.pos = 0;
                r?;
            }
            let st = &mut self.stages[i];
            let input = &st.buf[st.pos..];
            st.seen_input |= !input.is_empty();
            let step = st.codec.step(st.coding, input, &mut out[n..])?;
            n += step.produced;
            st.pos += step.consumed;
            st.produced += step.produced as u64;
            if let Some(max) = self.max_size {
                if st.produced > max {
                    return Err(DecodeError::new(
                        ErrorKind::TooLarge,
                        st.coding,
                        // undici's wording, so code matching its message works on both.
                        format!(
                            "Decompressed response size ({}) exceeded maxSize ({max})",
                            st.produced
                        ),
                    ));
                }
            }
            if step.consumed == 0 && step.produced == 0 {
                // No progress with what this stage holds: it needs more input than is there.
                if i == 0 || !self.pull_more(i)? {
                    return Ok(n);
                }
            }
        }
    }

    /// Appends more of stage `i - 1`'s output to stage `i`'s unconsumed input. False: none came.
    fn pull_more(&mut self, i: usize) -> Result<bool, DecodeError> {
        let mut buf = std::mem::take(&mut self.stages[i].buf);
        let pos = self.stages[i].pos;
        buf.drain(..pos);
        let before = buf.len();
        buf.resize(before + STEP, 0);
        let r = self.produce(i - 1, &mut buf[before..]);
        let got = *r.as_ref().unwrap_or(&0);
        buf.truncate(before + got);
        let st = &mut self.stages[i];
        st.buf = buf;
        st.pos = 0;
        r.map(|_| got > 0)
    }
}

impl Drop for Decoder {
    fn drop(&mut self) {
        self.release();
    }
}
