//! The content codings the decoders know, and how decoding fails.
use std::fmt;

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
    /// More than [`MAX_CODINGS`](super::MAX_CODINGS) codings in one header.
    TooManyCodings,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeError {
    pub kind: ErrorKind,
    pub coding: Option<Coding>,
    pub message: String,
}

impl DecodeError {
    pub(super) fn new(kind: ErrorKind, coding: Coding, message: String) -> Self {
        DecodeError { kind, coding: Some(coding), message }
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.coding {
            // The size limit is the caller's, not the coding's: undici's message as it is.
            Some(_) if self.kind == ErrorKind::TooLarge => f.write_str(&self.message),
            Some(c) => write!(f, "{} decoding failed: {}", c.name(), self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for DecodeError {}
