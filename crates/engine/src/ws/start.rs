//! What JS hands the engine once it has checked a WebSocket handshake's answer: how the upgraded
//! connection runs as a WebSocket session (`session.rs`). It waits in the request's control block
//! (`ReqCtl::start_websocket`) until the connection's task takes it.
use super::codec::Codec;
use super::extension::{parse_response, DeflateParams};
use std::time::Duration;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Start {
    /// What the server accepted of our permessage-deflate offer, if anything.
    pub deflate: Option<DeflateParams>,
    /// Largest message, compressed and decompressed (`usize::MAX`: no limit).
    pub max_message: usize,
    /// Most frames per message (`usize::MAX`: no limit).
    pub max_fragments: usize,
    /// How long the server may leave our replies unread, with reading paused for them, before
    /// the connection fails with 1008 (None: for ever).
    pub stalled_write: Option<Duration>,
}

impl Start {
    /// From the server's `Sec-WebSocket-Extensions` answer and the limits (0: none); Err when the
    /// server accepted something we did not offer (the handshake then fails).
    pub fn new(
        extensions: &str,
        max_message: usize,
        max_fragments: usize,
        stalled_write_ms: u64,
    ) -> Result<Start, String> {
        let off = |n: usize| if n == 0 { usize::MAX } else { n };
        Ok(Start {
            deflate: parse_response(extensions)?,
            max_message: off(max_message),
            max_fragments: off(max_fragments),
            stalled_write: (stalled_write_ms > 0).then(|| Duration::from_millis(stalled_write_ms)),
        })
    }

    pub(crate) fn codec(&self) -> Codec {
        Codec::new(self.max_message, self.deflate).with_max_fragments(self.max_fragments)
    }
}
