//! How decoding a response fails.
use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DecodeError {
    Parse(&'static str),
    HeadersOverflow,
    ContentLengthMismatch { expected: u64, received: u64 },
    Closed,
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecodeError::Parse(what) => write!(f, "HTTP parse error: {what}"),
            DecodeError::HeadersOverflow => f.write_str("response headers too large"),
            DecodeError::ContentLengthMismatch { expected, received } => write!(
                f,
                "response body shorter than content-length: expected {expected} bytes, received {received}"
            ),
            DecodeError::Closed => f.write_str("other side closed"),
        }
    }
}

impl std::error::Error for DecodeError {}
