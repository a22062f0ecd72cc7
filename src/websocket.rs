//! `NativeWebSocket`: the engine's RFC 6455 codec for one upgraded connection, driven by
//! synchronous calls from ts/websocket/ (bytes read in → packed events out; messages in → frame
//! bytes out, batched per JS tick). Events are packed as `kind u8 | length u32 LE | payload`, kinds below.
use ferro_engine::ws::{self, Codec, Sink};
use napi::bindgen_prelude::*;
use napi_derive::napi;

const TEXT: u8 = 1;
const BINARY: u8 = 2;
const PING: u8 = 3;
const PONG: u8 = 4;
/// payload: code u16 LE (0: none) | reason
const CLOSE: u8 = 5;
/// no payload: the codec queued frames of its own (`takeFrames`)
const WRITE: u8 = 6;
/// payload: close code sent u16 LE | reason
const FAIL: u8 = 7;
/// payload: bytes of the chunk taken u32 LE; the codec's replies reached its budget: send them,
/// then feed the rest (always the last event of a batch)
const STOP: u8 = 8;

/// `feed`'s sink: decoded events packed into `events`; frames the codec answers with (pongs, the
/// close reply) appended to the connection's outgoing bytes, announced by an empty WRITE event.
struct Packer<'a> {
    events: &'a mut Vec<u8>,
    out: &'a mut Vec<u8>,
}

impl Packer<'_> {
    fn push(&mut self, kind: u8, parts: &[&[u8]]) {
        let len: usize = parts.iter().map(|p| p.len()).sum();
        self.events.reserve(5 + len);
        self.events.push(kind);
        self.events.extend_from_slice(&(len as u32).to_le_bytes());
        for p in parts {
            self.events.extend_from_slice(p);
        }
    }
}

impl Sink for Packer<'_> {
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
        self.out.extend_from_slice(bytes);
        self.push(WRITE, &[]);
    }
}

/// Up to this size, bytes for JS are copied into a V8 buffer and the Vec is kept for the next
/// call: cheaper than an external buffer (an allocation, a finalizer) per small message. Larger
/// ones move out whole, without a copy.
const COPY_MAX: usize = 16 * 1024;

fn hand_over<'env>(
    env: &'env Env,
    v: &mut Vec<u8>,
) -> Result<Option<Either<BufferSlice<'env>, Buffer>>> {
    if v.is_empty() {
        return Ok(None);
    }
    if v.len() > COPY_MAX {
        return Ok(Some(Either::B(Buffer::from(std::mem::take(v)))));
    }
    let b = BufferSlice::copy_from(env, &v[..])?;
    v.clear();
    Ok(Some(Either::A(b)))
}

/// The engine's receive limits when none are given (undici's defaults).
#[napi(object)]
pub struct WebSocketLimits {
    pub max_payload_size: f64,
    pub max_fragments: f64,
}

// Called only through its napi registration, which a non-addon build (clippy, tests) does not see.
#[allow(dead_code)]
#[napi(catch_unwind)]
pub fn websocket_default_limits() -> WebSocketLimits {
    WebSocketLimits {
        max_payload_size: ws::DEFAULT_MAX_MESSAGE as f64,
        max_fragments: ws::DEFAULT_MAX_FRAGMENTS as f64,
    }
}

/// A limit from JS: 0 turns it off (as undici's options do).
fn limit(n: f64) -> usize {
    if n > 0.0 {
        n.min(usize::MAX as f64) as usize
    } else {
        usize::MAX
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
    /// Frame bytes made since the last `takeFrames`: JS sends what one tick produced in one write.
    out: Vec<u8>,
    /// `feed`'s packed events (kept between calls).
    events: Vec<u8>,
}

#[napi]
impl NativeWebSocket {
    /// `extensions`: the server's `Sec-WebSocket-Extensions` answer; throws when it accepted
    /// something not offered. `max_payload_size`: bytes a message may have (compressed and
    /// decompressed); `max_fragments`: frames it may come in; 0 for either: no limit.
    #[napi(constructor, catch_unwind)]
    pub fn new(extensions: String, max_payload_size: f64, max_fragments: f64) -> Result<Self> {
        let deflate = ws::parse_extensions(&extensions).map_err(Error::from_reason)?;
        let codec =
            Codec::new(limit(max_payload_size), deflate).with_max_fragments(limit(max_fragments));
        Ok(NativeWebSocket { codec, out: Vec::new(), events: Vec::new() })
    }

    /// Decodes bytes read from the server into packed events (null: none). A WRITE event means
    /// the codec queued frames of its own (see `takeFrames`); a STOP event, that it took only part
    /// of `chunk`.
    #[napi(catch_unwind)]
    pub fn feed<'env>(
        &mut self,
        env: &'env Env,
        chunk: BufferSlice<'_>,
    ) -> Result<Option<Either<BufferSlice<'env>, Buffer>>> {
        let mut sink = Packer { events: &mut self.events, out: &mut self.out };
        let took = self.codec.feed(&chunk, &mut sink);
        if took < chunk.len() {
            sink.push(STOP, &[&(took as u32).to_le_bytes()]);
        }
        hand_over(env, &mut self.events)
    }

    /// Queues a text message's frame; false once a close went out.
    #[napi(catch_unwind)]
    pub fn text(&mut self, data: String) -> bool {
        self.codec.encode_message(true, data.as_bytes(), &mut self.out)
    }

    /// Queues a binary message's frame; false once a close went out.
    #[napi(catch_unwind)]
    pub fn binary(&mut self, data: BufferSlice<'_>) -> bool {
        self.codec.encode_message(false, &data, &mut self.out)
    }

    /// Queues a ping (or unsolicited pong) frame; false once a close went out or over 125 bytes.
    #[napi(catch_unwind)]
    pub fn ping(&mut self, pong: bool, data: BufferSlice<'_>) -> bool {
        self.codec.encode_ping(pong, &data, &mut self.out)
    }

    /// Queues the close frame (`code` negative: none); false when one already went out.
    #[napi(catch_unwind)]
    pub fn close(&mut self, code: i32, reason: String) -> bool {
        let code = u16::try_from(code).ok();
        self.codec.encode_close(code, reason.as_bytes(), &mut self.out)
    }

    /// Every frame queued since the last call, in order, as one buffer; null when none.
    #[napi(catch_unwind)]
    pub fn take_frames<'env>(
        &mut self,
        env: &'env Env,
    ) -> Result<Option<Either<BufferSlice<'env>, Buffer>>> {
        hand_over(env, &mut self.out)
    }

    /// Both close frames were exchanged: a TCP close now is a clean close.
    #[napi(getter, catch_unwind)]
    pub fn closed_cleanly(&self) -> bool {
        self.codec.close_sent() && self.codec.close_received()
    }
}
