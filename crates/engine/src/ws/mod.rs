//! WebSocket client protocol (RFC 6455) with permessage-deflate (RFC 7692). The codec is sans-IO:
//! bytes from the server in → messages and control events out; messages in → masked frame bytes
//! out (`codec.rs`, `frame.rs`, `deflate.rs`). `channel.rs` puts it between the socket and the
//! engine's events, and `session.rs` runs it on a connection a WebSocket handshake upgraded, once
//! JS has checked the answer (`start.rs`: what JS hands over).
pub mod channel;
#[cfg(any(test, feature = "fuzzing"))]
pub mod check;
pub mod close;
pub mod codec;
pub mod deflate;
pub mod extension;
pub mod frame;
mod masks;
pub mod session;
pub mod start;

#[cfg(test)]
mod session_tests;
#[cfg(test)]
mod tests;

pub use close::{close_code, is_valid_close_code};
pub use codec::{Codec, Sink, DEFAULT_MAX_FRAGMENTS, DEFAULT_MAX_MESSAGE, REPLY_BUDGET};
pub use extension::{parse_response as parse_extensions, DeflateParams, OFFER as DEFLATE_OFFER};
