//! The codec between the socket and JS, sans-IO: bytes read from the server become engine events
//! for the request (whole messages, pings, pongs, the server's close, a failure), and the chunks
//! JS queues in the request's pipe become frames. The session (`session.rs`) does the I/O.
//!
//! A chunk from JS is the message's payload followed by one byte, the RFC 6455 opcode JS asks
//! for: TEXT / BINARY (a message), PING / PONG (at most 125 bytes), CLOSE (`code: u16` big-endian
//! and the reason, or nothing for a close without a status). A chunk ending in [`RECORDS`] holds
//! the sends of one JS tick instead, one record each: `op: u8`, `len: u32` LE, `len` payload bytes
//! (one N-API call and one chunk for a batch of small messages, not one per message).
use super::codec::{Codec, Sink};
use super::frame;
use crate::events::{self, Writer};

/// The last byte of a chunk of records (no RFC 6455 opcode: those stop at 0xF).
pub const RECORDS: u8 = 0xFF;

/// A record's head: opcode and payload length.
const RECORD_HEAD: usize = 5;

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
    /// out; an unknown opcode, an oversized control payload or a cut record is dropped (JS checks
    /// and writes them).
    pub fn send(&mut self, mut chunk: Vec<u8>, out: &mut Vec<u8>) {
        let Some(op) = chunk.pop() else { return };
        if op != RECORDS {
            return self.send_one(op, &chunk, out);
        }
        let mut rest = &chunk[..];
        while rest.len() >= RECORD_HEAD {
            let len = u32::from_le_bytes([rest[1], rest[2], rest[3], rest[4]]) as usize;
            let Some(payload) = rest.get(RECORD_HEAD..RECORD_HEAD + len) else { return };
            self.send_one(rest[0], payload, out);
            rest = &rest[RECORD_HEAD + len..];
        }
    }

    fn send_one(&mut self, op: u8, payload: &[u8], out: &mut Vec<u8>) {
        match op {
            frame::TEXT | frame::BINARY => {
                self.codec.encode_message(op == frame::TEXT, payload, out);
            }
            frame::PING | frame::PONG => {
                self.codec.encode_ping(op == frame::PONG, payload, out);
            }
            frame::CLOSE => {
                let code = payload.get(..2).map(|c| u16::from_be_bytes([c[0], c[1]]));
                let reason = payload.get(2..).unwrap_or(&[]);
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
