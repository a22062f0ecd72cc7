//! The one framing of every batch that crosses into JavaScript: engine events (many in one buffer
//! per wake of the JS thread, DESIGN §2, WebSocket sessions' among them) and DNS results
//! (`src/dns.rs`, on the resolver's own queue). Every frame is `kind: u8, id: u32 LE, len: u32 LE,
//! payload[len]`: written here (`Writer`), walked by `frames` here and by the one TS iterator,
//! `ts/native/frames.ts`, so a reader skips kinds it does not know and ignores payload bytes past
//! the fields it reads — a field is added at a payload's end without breaking older readers.
//! Integers are little-endian. Kinds share one number space (`TABLE`, checked against the TS
//! constants by `boundary-codes.test.ts`).
//!
//! Engine event payloads:
//! - HEAD (request id): status u16, reason_len u16, reason, then a header list, then the
//!   request's timings, 6 × f64: queued, dns, connect, tls, sent, first byte (ms since the
//!   engine's epoch, 0 for a phase that did not happen; `timings.rs`).
//! - DATA (request id): the body bytes.
//! - END (request id): a header list (trailers; count 0 when none), then `end: f64` (as HEAD's
//!   timings).
//! - ERROR (request id): an error record.
//! - CONNECTING (pool id): empty — a connection attempt starts (JS prints / publishes it).
//! - CONNECTED (pool id): "<version>|<addrs>": the HTTP version spoken ("h1" or "h2"), then the
//!   addresses as UPGRADE carries them.
//! - DISCONNECTED / CONNECT_FAILED (pool id): an error record.
//! - UPGRADE (request id): like HEAD (status, reason, header list), then `addr_len: u16` and
//!   "localIp|localPort|remoteIp|remotePort" (fields empty for unix sockets), followed by
//!   "|tls|<alpn>" on TLS connections. From here on the
//!   connection is a tunnel: DATA carries what the server sends, END its end (half-close).
//! - BODY_DRAIN (request id): empty — the request's pipe went below its high-water mark; JS may
//!   write again. From a WebSocket session: `taken: u64`, the bytes it took from the pipe so far.
//! - SENT (request id): the connection's addresses (as UPGRADE carries them) — the request's head
//!   was written out on that connection. Only for requests dispatched with the OBSERVE flag.
//! - RETRY (request id): empty — the request went back to the queue after its connection failed
//!   before any response byte arrived (JS calls `onRequestStart` again when it is re-sent).
//!
//! - DATA_OWN (request id): empty — DATA of `OWN_MIN` bytes or more, whose bytes travel beside the
//!   packed events (`Batch::own`, in order) rather than copied into them; JS gets each as a Buffer
//!   of its own (`src/queue.rs`), memory a body read whole can hand out as it is.
//!
//! - BRIDGE_OPEN (pool id): `bridge_id: u32` — a bridged pool needs a connection: JS calls the
//!   user's `connect` function and answers with `bridgeAttach` or `bridgeFail` for that bridge id.
//! - BRIDGE_WRITE (bridge id): bytes for JS to write to the bridged socket.
//! - BRIDGE_END (bridge id): empty — end the socket's writable side.
//! - BRIDGE_CLOSE (bridge id): empty — the engine is done with the socket; JS destroys it.
//! - BRIDGE_DRAIN (bridge id): empty — the engine took what JS fed it; a paused socket may resume.
//!
//! DNS results (lookup id), on the resolver's own queue:
//! - DNS_ADDRESSES: per address `family: u8 (4|6), len: u8, text`, to the payload's end.
//! - DNS_ERROR: `code_len: u8, code` (e.g. "ENOTFOUND"), then the message (UTF-8).
//!
//! WebSocket session events (request id of the upgrade; `ws/channel.rs` writes them):
//! - WS_TEXT / WS_BINARY: a whole message (text as UTF-8). WS_PING / WS_PONG: the payload.
//! - WS_CLOSE: the server's close frame, `code: u16` (0: none), then the reason.
//! - WS_FAIL: the connection failed; `code: u16` of the close frame sent, then the reason.
//!
//! A header list is `count: u16`, then per field `name_len: u16, name, value_len: u32, value`. A
//! `name_len` with the top bit set is no length but the index of a known name (`header_names.rs`)
//! in its low 15 bits, and no name bytes follow.
//! An error record is `code: u16, errno_len: u16, errno (e.g. "ECONNREFUSED", may be empty),
//! socket_len: u16, socket, message`. `socket` describes the connection the error happened on (JS
//! fills `SocketError.socket` from it), "bytesWritten|bytesRead|<addresses as UPGRADE carries
//! them>", or is empty where no connection is concerned (a bad request, most connect failures).
//! A connect refused / unreachable at an address names it as the remote side ("0|0|||ip|port").
use crate::codes::code_consts;
use crate::error::ErrorCode;
use crate::h1::{Head, HeaderBlock};
use crate::header_names;
use crate::timings::{self, Stamps};
use bytes::Bytes;
use std::io::Write as _;
use std::net::IpAddr;

/// The top bit of a header list's `name_len`: the rest is an index into `header_names::KNOWN`.
const KNOWN_NAME: u16 = 0x8000;

code_consts!(u8 {
    HEAD = 1,
    DATA = 2,
    END = 3,
    ERROR = 4,
    CONNECTED = 5,
    DISCONNECTED = 6,
    CONNECT_FAILED = 7,
    RETRY = 8,
    UPGRADE = 9,
    BODY_DRAIN = 10,
    BRIDGE_OPEN = 11,
    BRIDGE_WRITE = 12,
    BRIDGE_END = 13,
    BRIDGE_CLOSE = 14,
    BRIDGE_DRAIN = 15,
    CONNECTING = 16,
    SENT = 17,
    DATA_OWN = 18,
    DNS_ADDRESSES = 19,
    DNS_ERROR = 20,
    WS_TEXT = 21,
    WS_BINARY = 22,
    WS_PING = 23,
    WS_PONG = 24,
    WS_CLOSE = 25,
    WS_FAIL = 26,
});

/// Bytes of a frame's header: kind u8, id u32, len u32.
pub const HEADER: usize = 9;
/// The framing's numbers by name (see `crate::boundary_codes`).
pub const FRAME_TABLE: &[(&str, u32)] = &[("HEADER", HEADER as u32)];

/// One frame of a batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Frame<'a> {
    pub kind: u8,
    pub id: u32,
    pub payload: &'a [u8],
}

impl Frame<'_> {
    /// Bytes the frame takes in its batch, header included.
    pub fn size(&self) -> usize {
        HEADER + self.payload.len()
    }
}

/// The frames of a batch, in order. Stops at a torn tail (a header or payload cut short), which
/// the writer never leaves.
pub fn frames(bytes: &[u8]) -> Frames<'_> {
    Frames { rest: bytes }
}

pub struct Frames<'a> {
    rest: &'a [u8],
}

impl<'a> Iterator for Frames<'a> {
    type Item = Frame<'a>;

    fn next(&mut self) -> Option<Frame<'a>> {
        let (head, after) = self.rest.split_first_chunk::<HEADER>()?;
        let [kind, i0, i1, i2, i3, l0, l1, l2, l3] = *head;
        let len = u32::from_le_bytes([l0, l1, l2, l3]) as usize;
        let payload = after.get(..len)?;
        self.rest = &after[len..];
        Some(Frame { kind, id: u32::from_le_bytes([i0, i1, i2, i3]), payload })
    }
}

/// DATA payloads this large or larger travel beside the packed events (DATA_OWN). Above HTTP/2's
/// default frame size (16 KiB), so a session's frames stay packed: a Buffer of their own for each
/// made h2 `request()` slower, not faster.
pub const OWN_MIN: usize = 32 * 1024;

/// Events waiting for JS: the packed events, and the payloads of their DATA_OWN events in order.
/// Large payloads are kept as the decoder cut them from the read buffer, so they are copied once,
/// into JS memory, instead of into the queue first.
#[derive(Default)]
pub struct Batch {
    pub bytes: Vec<u8>,
    own: Vec<Bytes>,
    own_len: usize,
}

impl Batch {
    pub fn with_capacity(n: usize) -> Batch {
        Batch { bytes: Vec::with_capacity(n), own: Vec::new(), own_len: 0 }
    }

    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// Bytes held, packed and beside.
    pub fn len(&self) -> usize {
        self.bytes.len() + self.own_len
    }

    /// The DATA_OWN payloads, in event order.
    pub fn own(&self) -> &[Bytes] {
        &self.own
    }

    /// Empties the batch, keeping the packed vector's memory.
    pub fn clear(&mut self) {
        self.bytes.clear();
        self.own.clear();
        self.own_len = 0;
    }
}

/// An error record's `socket` field: a connection's byte counts and addresses. Built only when an
/// error is reported, never per request.
pub fn socket_info(bytes_written: u64, bytes_read: u64, addrs: &str) -> String {
    format!("{bytes_written}|{bytes_read}|{addrs}")
}

/// Appends events to a batch. Writes the header with a placeholder length and patches it,
/// so payloads are written straight into the queue without an intermediate buffer.
pub struct Writer<'a> {
    out: &'a mut Vec<u8>,
    own: &'a mut Vec<Bytes>,
    own_len: &'a mut usize,
    /// The timing stamp of the events this writer writes (0 until the first needs it): heads and
    /// ends decoded from one read arrived together, and a clock read is not free.
    now: u64,
}

impl<'a> Writer<'a> {
    pub fn new(batch: &'a mut Batch) -> Self {
        Writer::at(batch, 0)
    }

    /// A writer whose events are stamped `now` (`timings::stamp`; 0: read the clock when one
    /// needs it), for a caller that has read the clock already.
    pub fn at(batch: &'a mut Batch, now: u64) -> Self {
        Writer { out: &mut batch.bytes, own: &mut batch.own, own_len: &mut batch.own_len, now }
    }

    fn now(&mut self) -> u64 {
        if self.now == 0 {
            self.now = timings::now();
        }
        self.now
    }

    fn begin(&mut self, kind: u8, id: u32, reserve: usize) -> usize {
        self.out.reserve(HEADER + reserve);
        self.out.push(kind);
        self.out.extend_from_slice(&id.to_le_bytes());
        let at = self.out.len();
        self.out.extend_from_slice(&[0; 4]);
        at
    }

    fn finish(&mut self, at: usize) {
        let len = (self.out.len() - at - 4) as u32;
        self.out[at..at + 4].copy_from_slice(&len.to_le_bytes());
    }

    fn header_list<'h>(
        &mut self,
        fields: impl Iterator<Item = (&'h [u8], &'h [u8])>,
        count: usize,
    ) {
        // Counts beyond u16 cannot occur: the decoder caps the number of fields far below that.
        self.out.extend_from_slice(&(count.min(u16::MAX as usize) as u16).to_le_bytes());
        for (name, value) in fields.take(u16::MAX as usize) {
            if let Some(i) = header_names::index_of(name) {
                self.out.extend_from_slice(&(KNOWN_NAME | i).to_le_bytes());
            } else {
                // Far beyond any header size limit; the top bit must stay clear.
                let name = &name[..name.len().min(KNOWN_NAME as usize - 1)];
                self.out.extend_from_slice(&(name.len() as u16).to_le_bytes());
                self.out.extend_from_slice(name);
            }
            self.out.extend_from_slice(&(value.len() as u32).to_le_bytes());
            self.out.extend_from_slice(value);
        }
    }

    /// Status, reason and header list: HEAD's payload, and UPGRADE's before the addresses.
    fn head_fields(&mut self, head: &Head) {
        self.out.extend_from_slice(&head.status.to_le_bytes());
        let reason = &head.reason[..head.reason.len().min(u16::MAX as usize)];
        self.out.extend_from_slice(&(reason.len() as u16).to_le_bytes());
        self.out.extend_from_slice(reason);
        self.header_list(head.headers.iter(), head.headers.len());
    }

    /// `stamps`: the request's timings; the head arrived now.
    pub fn head(&mut self, id: u32, head: &Head, stamps: &Stamps) {
        let at = self.begin(HEAD, id, head.headers.block.len() + 8 * head.headers.len() + 64);
        self.head_fields(head);
        let now = self.now();
        for t in stamps.at_head(now) {
            self.out.extend_from_slice(&t.to_le_bytes());
        }
        self.finish(at);
    }

    pub fn upgrade(&mut self, id: u32, head: &Head, addrs: &str) {
        let at = self.begin(UPGRADE, id, head.headers.block.len() + 8 * head.headers.len() + 32);
        self.head_fields(head);
        self.out.extend_from_slice(&(addrs.len() as u16).to_le_bytes());
        self.out.extend_from_slice(addrs.as_bytes());
        self.finish(at);
    }

    /// Body (or tunnel) bytes: packed in when small, beside the events (DATA_OWN) when large.
    pub fn data(&mut self, id: u32, chunk: Bytes) {
        if chunk.len() >= OWN_MIN {
            let at = self.begin(DATA_OWN, id, 0);
            self.finish(at);
            *self.own_len += chunk.len();
            self.own.push(chunk);
            return;
        }
        let at = self.begin(DATA, id, chunk.len());
        self.out.extend_from_slice(&chunk);
        self.finish(at);
    }

    /// The response (or tunnel) ended now.
    pub fn end(&mut self, id: u32, trailers: Option<&HeaderBlock>) {
        let at = self.begin(END, id, trailers.map_or(10, |t| t.block.len() + 8 * t.len() + 10));
        match trailers {
            Some(t) => self.header_list(t.iter(), t.len()),
            None => self.out.extend_from_slice(&0u16.to_le_bytes()),
        }
        let now = self.now();
        self.out.extend_from_slice(&timings::ms(now).to_le_bytes());
        self.finish(at);
    }

    pub fn error(&mut self, kind: u8, id: u32, code: ErrorCode, errno: &str, message: &str) {
        self.socket_error(kind, id, code, errno, "", message);
    }

    /// An error record naming the connection it happened on (`socket`: see `socket_info`).
    pub fn socket_error(
        &mut self,
        kind: u8,
        id: u32,
        code: ErrorCode,
        errno: &str,
        socket: &str,
        message: &str,
    ) {
        let at = self.begin(kind, id, 6 + errno.len() + socket.len() + message.len());
        self.out.extend_from_slice(&(code as u16).to_le_bytes());
        for field in [errno, socket] {
            let field = &field.as_bytes()[..field.len().min(u16::MAX as usize)];
            self.out.extend_from_slice(&(field.len() as u16).to_le_bytes());
            self.out.extend_from_slice(field);
        }
        self.out.extend_from_slice(message.as_bytes());
        self.finish(at);
    }

    /// An event whose payload is `bytes` as they are (BRIDGE_WRITE).
    pub fn bytes(&mut self, kind: u8, id: u32, bytes: &[u8]) {
        let at = self.begin(kind, id, bytes.len());
        self.out.extend_from_slice(bytes);
        self.finish(at);
    }

    pub fn bridge_open(&mut self, pool: u32, bridge: u32) {
        let at = self.begin(BRIDGE_OPEN, pool, 4);
        self.out.extend_from_slice(&bridge.to_le_bytes());
        self.finish(at);
    }

    pub fn empty(&mut self, kind: u8, id: u32) {
        let at = self.begin(kind, id, 0);
        self.finish(at);
    }

    /// DNS_ADDRESSES: the addresses a lookup found, as text.
    pub fn dns_addresses<'i>(&mut self, id: u32, addrs: impl Iterator<Item = &'i IpAddr>) {
        let at = self.begin(DNS_ADDRESSES, id, 32);
        for a in addrs {
            self.out.push(if a.is_ipv4() { 4 } else { 6 });
            let len_at = self.out.len();
            self.out.push(0);
            // An address's text is at most 45 bytes, so its length fits the u8; writing into a
            // Vec cannot fail.
            let _ = write!(self.out, "{a}");
            self.out[len_at] = (self.out.len() - len_at - 1) as u8;
        }
        self.finish(at);
    }

    /// DNS_ERROR: a failed lookup's errno-style code and message.
    pub fn dns_error(&mut self, id: u32, code: &str, message: &str) {
        let at = self.begin(DNS_ERROR, id, 1 + code.len() + message.len());
        let code = &code.as_bytes()[..code.len().min(u8::MAX as usize)];
        self.out.push(code.len() as u8);
        self.out.extend_from_slice(code);
        self.out.extend_from_slice(message.as_bytes());
        self.finish(at);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(packed: &[u8]) -> Vec<(u8, usize)> {
        frames(packed).map(|f| (f.kind, f.payload.len())).collect()
    }

    #[test]
    fn large_data_travels_beside_the_events_in_order() {
        let mut batch = Batch::default();
        let (small, big1, big2) = (
            Bytes::from(vec![1u8; 100]),
            Bytes::from(vec![2u8; OWN_MIN]),
            Bytes::from(vec![3u8; 70_000]),
        );
        {
            let mut w = Writer::new(&mut batch);
            w.data(7, big1.clone());
            w.data(7, small.clone());
            w.empty(BODY_DRAIN, 7);
            w.data(8, big2.clone());
        }
        assert_eq!(
            kinds(&batch.bytes),
            vec![(DATA_OWN, 0), (DATA, 100), (BODY_DRAIN, 0), (DATA_OWN, 0)]
        );
        assert_eq!(batch.own(), &[big1.clone(), big2.clone()]);
        assert_eq!(batch.len(), batch.bytes.len() + OWN_MIN + 70_000);

        batch.clear();
        assert!(batch.is_empty() && batch.own().is_empty());
        assert_eq!(batch.len(), 0);
    }

    #[test]
    fn every_writer_frames_its_payload_and_frames_walks_them_back() {
        let mut batch = Batch::default();
        let addrs: [IpAddr; 2] = ["127.0.0.1".parse().unwrap(), "::1".parse().unwrap()];
        {
            let mut w = Writer::new(&mut batch);
            w.empty(RETRY, 1);
            w.bytes(CONNECTED, 2, b"h1|a");
            w.error(ERROR, 3, ErrorCode::Socket, "EPIPE", "gone");
            w.bridge_open(4, 99);
            w.dns_addresses(5, addrs.iter());
            w.dns_error(6, "ENOTFOUND", "getaddrinfo ENOTFOUND x");
            w.bytes(WS_TEXT, 0xffff_fffe, b"hi");
        }
        let got: Vec<(u8, u32, Vec<u8>)> =
            frames(&batch.bytes).map(|f| (f.kind, f.id, f.payload.to_vec())).collect();
        let error =
            [&(ErrorCode::Socket as u16).to_le_bytes()[..], b"\x05\0EPIPE\0\0gone"].concat();
        assert_eq!(
            got,
            vec![
                (RETRY, 1, vec![]),
                (CONNECTED, 2, b"h1|a".to_vec()),
                (ERROR, 3, error),
                (BRIDGE_OPEN, 4, 99u32.to_le_bytes().to_vec()),
                (DNS_ADDRESSES, 5, b"\x04\x09127.0.0.1\x06\x03::1".to_vec()),
                (DNS_ERROR, 6, b"\x09ENOTFOUNDgetaddrinfo ENOTFOUND x".to_vec()),
                (WS_TEXT, 0xffff_fffe, b"hi".to_vec()),
            ]
        );
        assert_eq!(frames(&batch.bytes).map(|f| f.size()).sum::<usize>(), batch.bytes.len());
    }

    #[test]
    fn frames_stops_at_a_torn_tail() {
        let mut batch = Batch::default();
        Writer::new(&mut batch).bytes(DATA, 1, b"abc");
        let whole = batch.bytes.clone();
        for cut in 0..whole.len() {
            assert_eq!(frames(&whole[..cut]).count(), 0, "cut at {cut}");
        }
        let mut two = whole.clone();
        two.extend_from_slice(&whole[..HEADER + 1]);
        assert_eq!(kinds(&two), vec![(DATA, 3)]);
    }

    #[test]
    fn kind_numbers_are_unique() {
        let mut seen: Vec<u32> = TABLE.iter().map(|(_, v)| *v).collect();
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(seen.len(), TABLE.len());
    }
}
