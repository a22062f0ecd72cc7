//! The codec between the socket and JS, sans-IO: bytes read from the server become engine events
//! for the request (whole messages, pings, pongs, the server's close, a failure), and the chunks
//! JS queues in the request's pipe become frames. The session (`session.rs`) does the I/O.
//!
//! A chunk from JS is the message's payload followed by one byte, the RFC 6455 opcode JS asks
//! for: TEXT / BINARY (a message), PING / PONG (at most 125 bytes), CLOSE (`code: u16` big-endian
//! and the reason, or nothing for a close without a status).
use super::codec::{Codec, Sink};
use super::frame;
use crate::events::{self, Writer};

/// What one `feed` did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fed {
    /// Bytes of the input the codec took: all of them unless its replies reached their budget
    /// (`codec::REPLY_BUDGET`); the rest is fed once the replies are on their way.
    pub took: usize,
    /// The codec appended frames of its own (pongs, a close reply) to the write queue.
    pub replied: bool,
}

/// The codec's events as engine events for request `id`; its replies into the write queue.
struct ToEngine<'a, 'w> {
    id: u32,
    w: &'a mut Writer<'w>,
    out: &'a mut Vec<u8>,
    replied: bool,
}

impl ToEngine<'_, '_> {
    /// WS_CLOSE / WS_FAIL: `code: u16` LE (0: none), then the reason.
    fn status(&mut self, kind: u8, code: u16, reason: &str) {
        let mut p = Vec::with_capacity(2 + reason.len());
        p.extend_from_slice(&code.to_le_bytes());
        p.extend_from_slice(reason.as_bytes());
        self.w.bytes(kind, self.id, &p);
    }
}

impl Sink for ToEngine<'_, '_> {
    fn message(&mut self, text: bool, data: &[u8]) {
        let kind = if text { events::WS_TEXT } else { events::WS_BINARY };
        self.w.bytes(kind, self.id, data);
    }
    fn ping(&mut self, data: &[u8]) {
        self.w.bytes(events::WS_PING, self.id, data);
    }
    fn pong(&mut self, data: &[u8]) {
        self.w.bytes(events::WS_PONG, self.id, data);
    }
    fn close(&mut self, code: Option<u16>, reason: &str) {
        self.status(events::WS_CLOSE, code.unwrap_or(0), reason);
    }
    fn fail(&mut self, code: u16, reason: &str) {
        self.status(events::WS_FAIL, code, reason);
    }
    fn write(&mut self, bytes: &[u8]) {
        self.out.extend_from_slice(bytes);
        self.replied = true;
    }
}

pub struct Channel {
    id: u32,
    codec: Codec,
}

impl Channel {
    pub fn new(id: u32, codec: Codec) -> Channel {
        Channel { id, codec }
    }

    /// Decodes bytes read from the server: events into `w`, replies appended to `out`.
    pub fn feed(&mut self, data: &[u8], w: &mut Writer<'_>, out: &mut Vec<u8>) -> Fed {
        let mut sink = ToEngine { id: self.id, w, out, replied: false };
        let took = self.codec.feed(data, &mut sink);
        Fed { took, replied: sink.replied }
    }

    /// Frames one chunk JS queued (see the module's doc) onto `out`. Nothing once our close went
    /// out; an unknown opcode or an oversized control payload is dropped (JS checks both first).
    pub fn send(&mut self, mut chunk: Vec<u8>, out: &mut Vec<u8>) {
        let Some(op) = chunk.pop() else { return };
        match op {
            frame::TEXT | frame::BINARY => {
                self.codec.encode_message(op == frame::TEXT, &chunk, out);
            }
            frame::PING | frame::PONG => {
                self.codec.encode_ping(op == frame::PONG, &chunk, out);
            }
            frame::CLOSE => {
                let code = chunk.get(..2).map(|c| u16::from_be_bytes([c[0], c[1]]));
                let reason = chunk.get(2..).unwrap_or(&[]);
                self.codec.encode_close(code, reason, out);
            }
            _ => {}
        }
    }

    /// Nothing more will be read: the server's close arrived, or the connection failed.
    pub fn finished_reading(&self) -> bool {
        self.codec.finished_reading()
    }
}
