//! The client side of one WebSocket connection: reassembles fragmented messages, answers pings,
//! runs the close handshake, and fails the connection on any protocol violation with the close
//! code RFC 6455 §7.4.1 names (1002 protocol, 1007 bad data, 1008 policy: too many fragments,
//! 1009 too big).
use super::close::close_code::{INVALID_DATA, POLICY_VIOLATION, PROTOCOL_ERROR, TOO_BIG};
use super::close::is_valid_close_code;
use super::deflate::{Deflater, InflateError, Inflater};
use super::extension::DeflateParams;
use super::frame::{self, Header};
use super::masks::Masks;

/// Default largest message accepted (compressed and after decompression): 128 MiB, undici's
/// `maxPayloadSize` default.
pub const DEFAULT_MAX_MESSAGE: usize = 128 << 20;

/// Default most frames one message may come in: undici's `maxFragments` default. Empty fragments
/// cost nothing to hold, but a message that never ends is a peer keeping us busy for nothing.
pub const DEFAULT_MAX_FRAGMENTS: usize = 131_072;

/// Messages shorter than this go out uncompressed even under permessage-deflate (RFC 7692
/// allows it per message): compressing them costs more than it saves.
const COMPRESS_THRESHOLD: usize = 1024;

/// Retained assembly buffers larger than this are released after their message.
const KEEP_CAPACITY: usize = 1 << 20;

/// Bytes of replies (pongs) one `feed` call makes at most before it stops and returns: the caller
/// sends them and looks at its write queue before it decodes the rest, so a chunk full of pings
/// cannot queue more than this at once, however large the chunk (GHSA-9fm3-97px-rjf6).
pub const REPLY_BUDGET: usize = 16 * 1024;

/// Where decoded events go, in order.
pub trait Sink {
    fn message(&mut self, text: bool, data: &[u8]);
    fn ping(&mut self, data: &[u8]);
    fn pong(&mut self, data: &[u8]);
    /// The server's close frame; `code` is None when it carried no status.
    fn close(&mut self, code: Option<u16>, reason: &str);
    /// The client failed the connection; a close frame with `code` and `reason` went out through
    /// `write`.
    fn fail(&mut self, code: u16, reason: &str);
    /// Bytes the codec wants sent (pong replies, close frames).
    fn write(&mut self, bytes: &[u8]);
}

pub struct Codec {
    /// A frame header split across reads.
    hdr: Vec<u8>,
    cur: Option<Header>,
    /// Payload bytes of `cur` still to come.
    left: u64,
    ctrl: Vec<u8>,
    /// The data message being assembled (compressed bytes when `msg_compressed`).
    msg: Vec<u8>,
    msg_opcode: Option<u8>,
    msg_compressed: bool,
    /// Bytes of an uncompressed text message already known to be valid UTF-8 (fragments are
    /// checked as they arrive, so a bad one fails at once).
    msg_valid: usize,
    inflated: Vec<u8>,
    max: usize,
    /// Frames of the message being assembled, and the most one may have.
    msg_frames: usize,
    max_fragments: usize,
    deflate: Option<DeflateParams>,
    inflater: Option<Inflater>,
    deflater: Option<Deflater>,
    masks: Masks,
    close_sent: bool,
    close_received: bool,
    failed: bool,
    /// Reply bytes the current `feed` call made.
    replied: usize,
}

impl Codec {
    /// `deflate`: the parameters the server accepted, if it accepted permessage-deflate.
    pub fn new(max_message: usize, deflate: Option<DeflateParams>) -> Self {
        Codec {
            hdr: Vec::with_capacity(14),
            cur: None,
            left: 0,
            ctrl: Vec::new(),
            msg: Vec::new(),
            msg_opcode: None,
            msg_compressed: false,
            msg_valid: 0,
            inflated: Vec::new(),
            max: max_message,
            msg_frames: 0,
            max_fragments: DEFAULT_MAX_FRAGMENTS,
            inflater: deflate.as_ref().map(Inflater::new),
            deflater: deflate.as_ref().and_then(Deflater::new),
            deflate,
            masks: Masks::new(),
            close_sent: false,
            close_received: false,
            failed: false,
            replied: 0,
        }
    }

    /// The most frames one message may arrive in (at least 1); more fail the connection with 1008.
    pub fn with_max_fragments(mut self, max_fragments: usize) -> Self {
        self.max_fragments = max_fragments.max(1);
        self
    }

    /// Nothing more will be read: the server's close arrived or the connection failed.
    pub fn finished_reading(&self) -> bool {
        self.close_received || self.failed
    }

    pub fn close_sent(&self) -> bool {
        self.close_sent
    }

    pub fn close_received(&self) -> bool {
        self.close_received
    }

    /// Decodes bytes read from the server. Returns how many it took: all of them, unless the
    /// replies it made reached [`REPLY_BUDGET`]; the caller then feeds the rest once it has sent
    /// them (or later, when its write queue has room).
    pub fn feed(&mut self, data: &[u8], sink: &mut dyn Sink) -> usize {
        self.replied = 0;
        let total = data.len();
        let mut data = data;
        while !data.is_empty() && !self.finished_reading() && self.replied < REPLY_BUDGET {
            let Some(h) = self.cur else {
                data = self.read_header(data, sink);
                continue;
            };
            let n = (self.left.min(data.len() as u64)) as usize;
            let (chunk, rest) = data.split_at(n);
            data = rest;
            self.left -= n as u64;
            if h.is_control() {
                self.ctrl.extend_from_slice(chunk);
            } else if self.left == 0 && h.fin && self.msg.is_empty() && n as u64 == h.len {
                // The whole single-frame message is in this read: no copy into `msg`.
                self.cur = None;
                self.complete_message(Some(chunk), sink);
                continue;
            } else {
                self.msg.extend_from_slice(chunk);
            }
            if self.left == 0 {
                self.end_frame(h, sink);
            }
        }
        if self.finished_reading() {
            total
        } else {
            total - data.len()
        }
    }

    fn read_header<'a>(&mut self, data: &'a [u8], sink: &mut dyn Sink) -> &'a [u8] {
        let allow_rsv1 = self.deflate.is_some();
        let (parsed, used) = if self.hdr.is_empty() {
            (frame::parse(data, allow_rsv1), None)
        } else {
            let had = self.hdr.len();
            let take = (14 - had).min(data.len());
            self.hdr.extend_from_slice(&data[..take]);
            (frame::parse(&self.hdr, allow_rsv1), Some(had))
        };
        let h = match parsed {
            Err(e) => {
                self.fail(PROTOCOL_ERROR, e.message(), sink);
                return &[];
            }
            Ok(None) => {
                if used.is_none() {
                    self.hdr.extend_from_slice(data);
                }
                return &[];
            }
            Ok(Some(h)) => h,
        };
        let rest = match used {
            None => &data[h.size..],
            Some(had) => {
                self.hdr.clear();
                &data[h.size - had..]
            }
        };
        self.start_frame(h, sink);
        rest
    }

    fn start_frame(&mut self, h: Header, sink: &mut dyn Sink) {
        if h.is_control() {
            if h.rsv1 {
                return self.fail(PROTOCOL_ERROR, "Control frame cannot be compressed", sink);
            }
        } else {
            match (h.opcode, self.msg_opcode) {
                (frame::CONTINUATION, None) => {
                    return self.fail(PROTOCOL_ERROR, "Unexpected continuation frame", sink)
                }
                (frame::CONTINUATION, Some(_)) if h.rsv1 => {
                    return self.fail(
                        PROTOCOL_ERROR,
                        "Expected RSV1 to be clear on a continuation frame",
                        sink,
                    )
                }
                (frame::CONTINUATION, Some(_)) => {
                    self.msg_frames += 1;
                    // 1008, not 1009 (as undici): the message need not be big, its shape breaks
                    // our policy (RFC 6455 §7.4.1 keeps 1009 for size).
                    if self.msg_frames > self.max_fragments {
                        return self.fail(POLICY_VIOLATION, "Too many message fragments", sink);
                    }
                }
                (_, Some(_)) => {
                    return self.fail(PROTOCOL_ERROR, "Expected continuation frame", sink)
                }
                (op, None) => {
                    self.msg_opcode = Some(op);
                    self.msg_compressed = h.rsv1;
                    self.msg_frames = 1;
                }
            }
            if (self.msg.len() as u64).saturating_add(h.len) > self.max as u64 {
                return self.fail(TOO_BIG, "Payload size exceeds maximum allowed size", sink);
            }
        }
        self.cur = Some(h);
        self.left = h.len;
        if h.len == 0 {
            self.end_frame(h, sink);
        }
    }

    fn end_frame(&mut self, h: Header, sink: &mut dyn Sink) {
        self.cur = None;
        if h.is_control() {
            let payload = std::mem::take(&mut self.ctrl);
            self.control(h.opcode, &payload, sink);
            self.ctrl = payload;
            self.ctrl.clear();
        } else if h.fin {
            self.complete_message(None, sink);
        } else if self.msg_opcode == Some(frame::TEXT) && !self.msg_compressed {
            match std::str::from_utf8(&self.msg[self.msg_valid..]) {
                Ok(_) => self.msg_valid = self.msg.len(),
                // A character split across fragments: checked once the rest arrives.
                Err(e) if e.error_len().is_none() => self.msg_valid += e.valid_up_to(),
                Err(_) => self.fail(INVALID_DATA, "Received invalid UTF-8 in text frame.", sink),
            }
        }
    }

    /// `whole`: the message's payload when it never went through `msg`.
    fn complete_message(&mut self, whole: Option<&[u8]>, sink: &mut dyn Sink) {
        let text = self.msg_opcode.take() == Some(frame::TEXT);
        let checked = std::mem::take(&mut self.msg_valid);
        let mut assembled = std::mem::take(&mut self.msg);
        let mut inflated = std::mem::take(&mut self.inflated);
        let mut payload: &[u8] = whole.unwrap_or(&assembled);
        let mut unchecked = &payload[checked.min(payload.len())..];
        if std::mem::take(&mut self.msg_compressed) {
            let inflater =
                self.inflater.as_mut().expect("RSV1 is only accepted with permessage-deflate");
            inflated.clear();
            match inflater.inflate(payload, &mut inflated, self.max) {
                Ok(()) => {
                    payload = &inflated;
                    unchecked = payload;
                }
                Err(InflateError::TooBig) => {
                    return self.fail(TOO_BIG, "Max decompressed message size exceeded", sink)
                }
                Err(InflateError::Corrupt(_)) => {
                    return self.fail(INVALID_DATA, "Invalid compressed data", sink)
                }
            }
        }
        if text && std::str::from_utf8(unchecked).is_err() {
            return self.fail(INVALID_DATA, "Received invalid UTF-8 in text frame.", sink);
        }
        sink.message(text, payload);
        assembled.clear();
        if assembled.capacity() <= KEEP_CAPACITY {
            self.msg = assembled;
        }
        if inflated.capacity() <= KEEP_CAPACITY {
            self.inflated = inflated;
        }
    }

    fn control(&mut self, opcode: u8, payload: &[u8], sink: &mut dyn Sink) {
        match opcode {
            frame::PING => {
                sink.ping(payload);
                if !self.close_sent {
                    let mut out = Vec::with_capacity(payload.len() + 6);
                    frame::encode(&mut out, true, false, frame::PONG, payload, self.masks.next());
                    self.replied += out.len();
                    sink.write(&out);
                }
            }
            frame::PONG => sink.pong(payload),
            _ => self.close_frame(payload, sink),
        }
    }

    fn close_frame(&mut self, payload: &[u8], sink: &mut dyn Sink) {
        let code = match payload.len() {
            0 => None,
            1 => {
                return self.fail(PROTOCOL_ERROR, "Received close frame with a 1-byte body.", sink)
            }
            _ => Some(u16::from_be_bytes([payload[0], payload[1]])),
        };
        if code.is_some_and(|c| !is_valid_close_code(c)) {
            return self.fail(PROTOCOL_ERROR, "Invalid status code", sink);
        }
        // The reason is decoded "without BOM" (WHATWG WebSockets, as undici).
        let raw = payload.get(2..).unwrap_or(&[]);
        let raw = raw.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(raw);
        let Ok(reason) = std::str::from_utf8(raw) else {
            return self.fail(INVALID_DATA, "Invalid UTF-8", sink);
        };
        self.close_received = true;
        if !self.close_sent {
            // Echo the status code (RFC 6455 §5.5.1).
            let mut out = Vec::new();
            self.encode_close(code, b"", &mut out);
            sink.write(&out);
        }
        sink.close(code, reason);
    }

    /// `reason` goes in the close frame too (undici's wording, so servers log the same cause).
    fn fail(&mut self, code: u16, reason: &str, sink: &mut dyn Sink) {
        self.failed = true;
        self.cur = None;
        if !self.close_sent {
            let mut out = Vec::new();
            self.encode_close(Some(code), reason.as_bytes(), &mut out);
            sink.write(&out);
        }
        sink.fail(code, reason);
    }

    /// Appends one message as frame bytes to `out`. False (nothing appended): a close went out.
    pub fn encode_message(&mut self, text: bool, payload: &[u8], out: &mut Vec<u8>) -> bool {
        if self.close_sent {
            return false;
        }
        let opcode = if text { frame::TEXT } else { frame::BINARY };
        let mask = self.masks.next();
        match self.deflater.as_mut() {
            Some(d) if payload.len() >= COMPRESS_THRESHOLD => {
                let mut z = Vec::new();
                d.deflate(payload, &mut z);
                frame::encode(out, true, true, opcode, &z, mask);
            }
            _ => frame::encode(out, true, false, opcode, payload, mask),
        }
        true
    }

    /// A ping (`pong` false) or unsolicited pong; payload at most 125 bytes (checked by callers).
    pub fn encode_ping(&mut self, pong: bool, payload: &[u8], out: &mut Vec<u8>) -> bool {
        if self.close_sent || payload.len() > frame::MAX_CONTROL_PAYLOAD {
            return false;
        }
        let opcode = if pong { frame::PONG } else { frame::PING };
        frame::encode(out, true, false, opcode, payload, self.masks.next());
        true
    }

    /// Starts (or answers) the closing handshake. `reason` needs a `code` and at most 123 bytes.
    pub fn encode_close(&mut self, code: Option<u16>, reason: &[u8], out: &mut Vec<u8>) -> bool {
        if self.close_sent {
            return false;
        }
        self.close_sent = true;
        let mut payload = Vec::with_capacity(2 + reason.len());
        if let Some(code) = code {
            payload.extend_from_slice(&code.to_be_bytes());
            payload.extend_from_slice(&reason[..reason.len().min(123)]);
        }
        frame::encode(out, true, false, frame::CLOSE, &payload, self.masks.next());
        true
    }
}
