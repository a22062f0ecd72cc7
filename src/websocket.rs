//! `NativeWebSocket`: the engine's RFC 6455 codec for one upgraded connection, driven by
//! synchronous calls from ts/websocket/ (bytes read in → packed events out; messages in → frame
//! bytes out). Events are packed as `kind u8 | length u32 LE | payload`, kinds below.
use ferro_engine::ws::{self, Codec, Sink};
use napi::bindgen_prelude::*;
use napi_derive::napi;

const TEXT: u8 = 1;
const BINARY: u8 = 2;
const PING: u8 = 3;
const PONG: u8 = 4;
/// payload: code u16 LE (0: none) | reason
const CLOSE: u8 = 5;
/// payload: bytes to write to the socket
const WRITE: u8 = 6;
/// payload: close code sent u16 LE | reason
const FAIL: u8 = 7;

struct Packer(Vec<u8>);

impl Packer {
    fn push(&mut self, kind: u8, parts: &[&[u8]]) {
        let len: usize = parts.iter().map(|p| p.len()).sum();
        self.0.reserve(5 + len);
        self.0.push(kind);
        self.0.extend_from_slice(&(len as u32).to_le_bytes());
        for p in parts {
            self.0.extend_from_slice(p);
        }
    }
}

impl Sink for Packer {
    fn message(&mut self, text: bool, data: &[u8]) {
        self.push(if text { TEXT } else { BINARY }, &[data]);
    }
    fn ping(&mut self, data: &[u8]) {
        self.push(PING, &[data]);
    }
    fn pong(&mut self, data: &[u8]) {
        self.push(PONG, &[data]);
    }
    fn close(&mut self, code: Option<u16>, reason: &str) {
        self.push(CLOSE, &[&code.unwrap_or(0).to_le_bytes(), reason.as_bytes()]);
    }
    fn fail(&mut self, code: u16, reason: &str) {
        self.push(FAIL, &[&code.to_le_bytes(), reason.as_bytes()]);
    }
    fn write(&mut self, bytes: &[u8]) {
        self.push(WRITE, &[bytes]);
    }
}

/// The `Sec-WebSocket-Extensions` value a client offers.
// Called only through its napi registration, which a non-addon build (clippy, tests) does not see.
#[allow(dead_code)]
#[napi(catch_unwind)]
pub fn websocket_extension_offer() -> &'static str {
    ws::DEFLATE_OFFER
}

#[napi]
pub struct NativeWebSocket {
    codec: Codec,
}

#[napi]
impl NativeWebSocket {
    /// `extensions`: the server's `Sec-WebSocket-Extensions` answer; throws when it accepted
    /// something not offered. `max_message`: bytes; 0 or less: the default.
    #[napi(constructor, catch_unwind)]
    pub fn new(extensions: String, max_message: f64) -> Result<Self> {
        let deflate = ws::parse_extensions(&extensions).map_err(Error::from_reason)?;
        let max = if max_message > 0.0 { max_message.min(usize::MAX as f64) as usize } else { ws::DEFAULT_MAX_MESSAGE };
        Ok(NativeWebSocket { codec: Codec::new(max, deflate) })
    }

    /// Decodes bytes read from the server into packed events.
    #[napi(catch_unwind)]
    pub fn feed(&mut self, chunk: BufferSlice<'_>) -> Buffer {
        let mut out = Packer(Vec::new());
        self.codec.feed(&chunk, &mut out);
        out.0.into()
    }

    /// A text message as frame bytes; null once a close went out.
    #[napi(catch_unwind)]
    pub fn text(&mut self, data: String) -> Option<Buffer> {
        let mut out = Vec::new();
        self.codec.encode_message(true, data.as_bytes(), &mut out).then(|| out.into())
    }

    /// A binary message as frame bytes; null once a close went out.
    #[napi(catch_unwind)]
    pub fn binary(&mut self, data: BufferSlice<'_>) -> Option<Buffer> {
        let mut out = Vec::new();
        self.codec.encode_message(false, &data, &mut out).then(|| out.into())
    }

    /// A ping (or unsolicited pong) frame; null once a close went out or over 125 bytes.
    #[napi(catch_unwind)]
    pub fn ping(&mut self, pong: bool, data: BufferSlice<'_>) -> Option<Buffer> {
        let mut out = Vec::new();
        self.codec.encode_ping(pong, &data, &mut out).then(|| out.into())
    }

    /// The close frame (`code` negative: none); null when one already went out.
    #[napi(catch_unwind)]
    pub fn close(&mut self, code: i32, reason: String) -> Option<Buffer> {
        let mut out = Vec::new();
        let code = u16::try_from(code).ok();
        self.codec.encode_close(code, reason.as_bytes(), &mut out).then(|| out.into())
    }

    /// Both close frames were exchanged: a TCP close now is a clean close.
    #[napi(getter, catch_unwind)]
    pub fn closed_cleanly(&self) -> bool {
        self.codec.close_sent() && self.codec.close_received()
    }
}
