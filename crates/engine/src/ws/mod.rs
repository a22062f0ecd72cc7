//! WebSocket client protocol (RFC 6455) with permessage-deflate (RFC 7692), sans-IO: bytes from
//! the server in → messages and control events out; messages in → masked frame bytes out. The
//! binding drives it over an upgraded connection.
#[cfg(any(test, feature = "fuzzing"))]
pub mod check;
pub mod codec;
pub mod deflate;
pub mod extension;
pub mod frame;
mod masks;

#[cfg(test)]
mod tests;

pub use codec::{Codec, Sink, DEFAULT_MAX_MESSAGE};
pub use extension::{parse_response as parse_extensions, DeflateParams, OFFER as DEFLATE_OFFER};

/// Close codes the client sends when it fails the connection (RFC 6455 §7.4.1).
pub mod close_code {
    pub const NORMAL: u16 = 1000;
    pub const PROTOCOL_ERROR: u16 = 1002;
    pub const INVALID_DATA: u16 = 1007;
    pub const TOO_BIG: u16 = 1009;
}

/// Whether a server may put `code` in a close frame (RFC 6455 §7.4, IANA registry).
pub fn is_valid_close_code(code: u16) -> bool {
    matches!(code, 1000..=1003 | 1007..=1014 | 3000..=4999)
}
