//! Streaming content decoders (RFC 9110 §8.4): gzip, deflate (zlib-wrapped or raw), brotli and
//! zstd, alone or chained for a list of codings. Sans-IO: compressed bytes go in with `write`,
//! decoded bytes come out at most [`STEP`] at a time, so one small input can never make one call
//! allocate without bound (a decompression bomb stays a loop of bounded steps the caller controls,
//! and `max_size` ends it).
#[cfg(any(test, feature = "fuzzing"))]
pub mod check;
mod codec;
#[cfg(test)]
mod tests;

use codec::Codec;
pub use codec::ZSTD_WINDOW_LOG_MAX;
use std::fmt;

/// Most bytes one `write` / `read` / `finish` call returns, and most bytes held between stages.
pub const STEP: usize = 64 * 1024;
/// More codings than this in one response is an attack, not a real server (the same bound curl
/// and urllib3 adopted for CVE-2022-32206).
pub const MAX_CODINGS: usize = 5;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Coding {
    Gzip,
    Deflate,
    Brotli,
    Zstd,
}

impl Coding {
    /// The coding a (lower-case) content-coding name stands for; `None` for unknown ones.
    pub fn from_name(name: &str) -> Option<Coding> {
        match name {
            "gzip" | "x-gzip" => Some(Coding::Gzip),
            // The interface lists x-compress with deflate.
            "deflate" | "x-compress" => Some(Coding::Deflate),
            "br" => Some(Coding::Brotli),
            "zstd" => Some(Coding::Zstd),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Coding::Gzip => "gzip",
            Coding::Deflate => "deflate",
            Coding::Brotli => "br",
            Coding::Zstd => "zstd",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// The bytes are not a valid stream of the coding.
    Corrupt,
    /// The input ended before the coding's end marker.
    Truncated,
    /// The decoded size passed the caller's limit.
    TooLarge,
    /// More than [`MAX_CODINGS`] codings in one header.
    TooManyCodings,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeError {
    pub kind: ErrorKind,
    pub coding: Option<Coding>,
    pub message: String,
}

impl DecodeError {
    fn new(kind: ErrorKind, coding: Coding, message: String) -> Self {
        DecodeError { kind, coding: Some(coding), message }
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.coding {
            Some(c) => write!(f, "{} decoding failed: {}", c.name(), self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for DecodeError {}

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
                message: format!("too many content-encodings in response (more than {MAX_CODINGS})"),
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
    pub fn new(codings: &[Coding], max_size: Option<u64>, lenient: bool) -> Result<Decoder, DecodeError> {
        let stages = codings
            .iter()
            .map(|&coding| {
                Ok(Stage { coding, codec: Codec::new(coding)?, buf: Vec::new(), pos: 0, seen_input: false, produced: 0 })
            })
            .collect::<Result<Vec<_>, DecodeError>>()?;
        Ok(Decoder { stages, input_ended: false, max_size, lenient, failed: None })
    }

    /// Adds compressed bytes and returns the first decoded ones (at most [`STEP`]); call
    /// [`read`](Decoder::read) until it returns nothing before writing more.
    pub fn write(&mut self, chunk: &[u8]) -> Result<Vec<u8>, DecodeError> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        let first = &mut self.stages[0];
        if first.pos == first.buf.len() {
            first.buf.clear();
            first.pos = 0;
        }
        first.buf.extend_from_slice(chunk);
        self.read()
    }

    /// Marks the end of the compressed input; then [`read`](Decoder::read) drains what is left.
    pub fn finish(&mut self) -> Result<Vec<u8>, DecodeError> {
        self.input_ended = true;
        self.read()
    }

    /// The next decoded bytes (at most [`STEP`]). Empty: everything written so far is decoded; after
    /// [`finish`](Decoder::finish), empty means the body is complete.
    pub fn read(&mut self) -> Result<Vec<u8>, DecodeError> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        let mut out = Vec::new();
        let last = self.stages.len() - 1;
        let result = self.produce(last, &mut out, STEP).and_then(|()| {
            if out.is_empty() && self.input_ended {
                self.check_complete()
            } else {
                Ok(())
            }
        });
        if let Err(e) = result {
            self.failed = Some(e.clone());
            self.stages.clear();
            self.stages.shrink_to_fit();
            return Err(e);
        }
        if out.len() < out.capacity() / 4 {
            out.shrink_to_fit();
        }
        Ok(out)
    }

    fn check_complete(&self) -> Result<(), DecodeError> {
        for st in &self.stages {
            // An empty body decodes to an empty body (servers send those with a content-encoding).
            if st.seen_input && !st.codec.ended() && !self.lenient {
                return Err(DecodeError::new(ErrorKind::Truncated, st.coding, "unexpected end of data".into()));
            }
        }
        Ok(())
    }

    /// Appends up to `limit - out.len()` decoded bytes of stage `i` to `out`, pulling input from
    /// stage `i - 1` (at most [`STEP`] held at a time) or the written bytes for stage 0.
    fn produce(&mut self, i: usize, out: &mut Vec<u8>, limit: usize) -> Result<(), DecodeError> {
        loop {
            let room = limit - out.len();
            if room == 0 {
                return Ok(());
            }
            if i > 0 && self.stages[i].pos == self.stages[i].buf.len() {
                let mut buf = std::mem::take(&mut self.stages[i].buf);
                buf.clear();
                self.produce(i - 1, &mut buf, STEP)?;
                let st = &mut self.stages[i];
                st.buf = buf;
                st.pos = 0;
            }
            let st = &mut self.stages[i];
            let input = &st.buf[st.pos..];
            st.seen_input |= !input.is_empty();
            let start = out.len();
            out.resize(start + room, 0);
            let step = match st.codec.step(st.coding, input, &mut out[start..]) {
                Ok(s) => s,
                Err(e) => {
                    out.truncate(start);
                    return Err(e);
                }
            };
            out.truncate(start + step.produced);
            st.pos += step.consumed;
            st.produced += step.produced as u64;
            if let Some(max) = self.max_size {
                if st.produced > max {
                    return Err(DecodeError::new(
                        ErrorKind::TooLarge,
                        st.coding,
                        format!("decoded size exceeds the limit of {max} bytes"),
                    ));
                }
            }
            if step.consumed == 0 && step.produced == 0 {
                // No progress with what this stage holds: it needs more input than is there.
                if i == 0 || !self.pull_more(i)? {
                    return Ok(());
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
        let r = self.produce(i - 1, &mut buf, before + STEP);
        let st = &mut self.stages[i];
        let grew = buf.len() > before;
        st.buf = buf;
        st.pos = 0;
        r.map(|()| grew)
    }
}
