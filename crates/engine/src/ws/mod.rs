//! WebSocket client protocol (RFC 6455) with permessage-deflate (RFC 7692), sans-IO: bytes from
//! the server in → messages and control events out; messages in → masked frame bytes out. The
//! binding drives it over an upgraded connection.
#[cfg(any(test, feature = "fuzzing"))]
pub mod check;
pub mod close;
pub mod codec;
pub mod deflate;
pub mod extension;
pub mod frame;
mod masks;

#[cfg(test)]
mod tests;

pub use close::{close_code, is_valid_close_code};
pub use codec::{Codec, Sink, DEFAULT_MAX_FRAGMENTS, DEFAULT_MAX_MESSAGE, REPLY_BUDGET};
pub use extension::{parse_response as parse_extensions, DeflateParams, OFFER as DEFLATE_OFFER};
