//! HTTP/1.1 client codec, sans-IO: request heads are encoded into a byte buffer, response bytes are
//! decoded into heads, body chunks and ends. No sockets, no timers: `conn/` drives it.
mod body;
#[cfg(any(test, feature = "fuzzing"))]
pub mod check;
pub mod decode;
pub mod encode;
mod error;
mod head;
#[cfg(test)]
mod tests;

pub use decode::{DecodeError, Decoded, Expect, Head, HeaderBlock, ResponseDecoder};
pub use encode::{encode_request_head, BodyFraming, RequestKind};
