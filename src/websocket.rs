//! The engine's WebSocket session as JS drives it (ts/websocket/connection.ts): once JS has checked
//! a handshake's 101, `wsStart` hands the upgraded connection to the engine's session
//! (crates/engine/src/ws/session.rs), whose events (WS_TEXT, WS_CLOSE, …) arrive with the engine's
//! others; each message JS sends is one `wsText` / `wsSend` call, which the engine frames, masks,
//! compresses and writes.
use crate::binding::NativeEngine;
use ferro_engine::ws::{self, channel, frame, start::Start};
use napi::bindgen_prelude::*;
use napi_derive::napi;

/// The engine's receive limits when none are given (undici's defaults).
#[napi(object)]
pub(crate) struct WebSocketLimits {
    pub max_payload_size: f64,
    pub max_fragments: f64,
}

// Called only through its napi registration, which a non-addon build (clippy, tests) does not see.
#[allow(dead_code)]
#[napi(catch_unwind)]
pub(crate) fn websocket_default_limits() -> WebSocketLimits {
    WebSocketLimits {
        max_payload_size: ws::DEFAULT_MAX_MESSAGE as f64,
        max_fragments: ws::DEFAULT_MAX_FRAGMENTS as f64,
    }
}

/// The `Sec-WebSocket-Extensions` value a client offers.
// Called only through its napi registration, which a non-addon build (clippy, tests) does not see.
#[allow(dead_code)]
#[napi(catch_unwind)]
pub(crate) fn websocket_extension_offer() -> &'static str {
    ws::DEFLATE_OFFER
}

/// A count from JS (0: no limit), saturated to the platform's size.
fn count(n: f64) -> usize {
    if n > 0.0 {
        n.min(usize::MAX as f64) as usize
    } else {
        0
    }
}

/// `payload` followed by the opcode, as the session takes a chunk (`ws::channel`).
fn chunk(payload: &[u8], op: u8) -> Vec<u8> {
    let mut v = Vec::with_capacity(payload.len() + 1);
    v.extend_from_slice(payload);
    v.push(op);
    v
}

#[napi]
impl NativeEngine {
    /// Runs upgraded request `id` (dispatched with the WEBSOCKET flag) as the engine's WebSocket
    /// session. `extensions`: the server's `Sec-WebSocket-Extensions` answer, which throws when it
    /// accepted something not offered. Limits: bytes per message (compressed and decompressed),
    /// frames per message, ms the server may leave our replies unread; 0 for any: none. False: the
    /// connection is already gone.
    #[napi(catch_unwind)]
    pub fn ws_start(
        &self,
        id: u32,
        extensions: String,
        max_payload_size: f64,
        max_fragments: f64,
        stalled_write_timeout: f64,
    ) -> Result<bool> {
        let start = Start::new(
            &extensions,
            count(max_payload_size),
            count(max_fragments),
            count(stalled_write_timeout) as u64,
        )
        .map_err(Error::from_reason)?;
        Ok(self.engine.start_websocket(id, start))
    }

    /// Queues a text message (`wsFlush` sends what was queued). False: wait for the request's
    /// drain event before sending more.
    #[napi(catch_unwind)]
    pub fn ws_text(&self, id: u32, data: String) -> bool {
        let mut bytes = data.into_bytes();
        bytes.push(frame::TEXT);
        self.engine.ws_queue(id, bytes)
    }

    /// Queues a frame (`wsFlush` sends it): `op` is the RFC 6455 opcode (BINARY, PING, PONG, or CLOSE with `data` the
    /// status code, big-endian, and reason), or `RECORDS` for a tick's sends (`ws::channel`),
    /// which also wakes the session: JS hands them over at its flush, so a second call would
    /// follow at once. False: wait for the drain event before sending more.
    #[napi(catch_unwind)]
    pub fn ws_send(&self, id: u32, op: u32, data: BufferSlice<'_>) -> bool {
        let below = self.engine.ws_queue(id, chunk(&data, op as u8));
        if op == channel::RECORDS as u32 {
            self.engine.ws_flush(id);
        }
        below
    }

    /// Wakes the session for what was queued: once per JS tick, however many messages it sent.
    #[napi(catch_unwind)]
    pub fn ws_flush(&self, id: u32) {
        self.engine.ws_flush(id);
    }
}
