//! HTTP/1.1 response decoding, sans-IO.
//!
//! The connection pushes one `Expect` per request it writes, appends socket bytes to a `BytesMut`
//! and calls `decode` until it returns `Ok(None)`. Heads are parsed by httparse; body framing
//! (RFC 9112 §6.3), chunked decoding and the smuggling defences are ours. Payload is split off the
//! input buffer, never copied.

use super::token::is_tchar;
use bytes::{Buf, Bytes, BytesMut};
use std::collections::VecDeque;
use std::fmt;
use std::ops::Range;

/// What the request was, as far as response framing cares.
#[derive(Debug, Clone, Copy, Default)]
pub struct Expect {
    /// `HEAD`: the response never has a body.
    pub head: bool,
    /// `CONNECT`: a 2xx response makes the connection a tunnel.
    pub connect: bool,
    /// The request asked for a protocol upgrade: a 101 is legitimate.
    pub upgrade: bool,
}

/// A header block kept as one refcounted byte slice plus ranges into it (no per-header allocation).
#[derive(Debug, Clone)]
pub struct HeaderBlock {
    pub block: Bytes,
    pub fields: Vec<(Range<u32>, Range<u32>)>,
}

impl HeaderBlock {
    pub fn len(&self) -> usize {
        self.fields.len()
    }

    pub fn is_empty(&self) -> bool {
        self.fields.is_empty()
    }

    /// The i-th name as received. Out-of-range `i` gives an empty slice rather than a panic.
    pub fn name(&self, i: usize) -> &[u8] {
        match self.fields.get(i) {
            Some((n, _)) => self.slice(n),
            None => &[],
        }
    }

    /// The i-th value, trimmed of surrounding spaces and tabs.
    pub fn value(&self, i: usize) -> &[u8] {
        match self.fields.get(i) {
            Some((_, v)) => self.slice(v),
            None => &[],
        }
    }

    pub fn iter(&self) -> impl Iterator<Item = (&[u8], &[u8])> {
        self.fields
            .iter()
            .map(move |(n, v)| (self.slice(n), self.slice(v)))
    }

    fn slice(&self, r: &Range<u32>) -> &[u8] {
        self.block
            .get(r.start as usize..r.end as usize)
            .unwrap_or(&[])
    }
}

#[derive(Debug, Clone)]
pub struct Head {
    pub status: u16,
    /// 1 for HTTP/1.1, 0 for HTTP/1.0.
    pub version_minor: u8,
    /// Status message as received, possibly empty.
    pub reason: Bytes,
    pub headers: HeaderBlock,
    /// False when the connection cannot be reused after this response.
    pub keep_alive: bool,
    /// `Keep-Alive: timeout=N`, in milliseconds.
    pub keep_alive_timeout_ms: Option<u64>,
}

#[derive(Debug)]
pub enum Decoded {
    /// Status line and headers. A 1xx (other than 101) is followed by more heads for the same
    /// request.
    Head(Head),
    /// Body payload, de-chunked, never empty.
    Data(Bytes),
    /// The response is complete.
    End { trailers: Option<HeaderBlock> },
    /// 101 to an upgrade request, or 2xx to CONNECT: what remains in the buffer is the new
    /// protocol's. The decoder is finished.
    Upgrade(Head),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DecodeError {
    Parse(&'static str),
    HeadersOverflow,
    ContentLengthMismatch { expected: u64, received: u64 },
    Closed,
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecodeError::Parse(what) => write!(f, "HTTP parse error: {what}"),
            DecodeError::HeadersOverflow => f.write_str("response headers too large"),
            DecodeError::ContentLengthMismatch { expected, received } => write!(
                f,
                "response body shorter than content-length: expected {expected} bytes, received {received}"
            ),
            DecodeError::Closed => f.write_str("other side closed"),
        }
    }
}

impl std::error::Error for DecodeError {}

/// Heads with more fields than this take the (allocating) slow path.
const STACK_HEADERS: usize = 128;
/// Upper bound on fields in one head or trailer block, whatever `max_header_size` is, so a huge
/// limit cannot turn into a huge allocation.
const MAX_HEADERS: usize = 1 << 16;
/// A chunk-size line (size plus extensions) longer than this is rejected rather than buffered
/// forever.
const MAX_CHUNK_LINE: usize = 16 * 1024;
/// 16 hex digits is all of u64.
const MAX_CHUNK_SIZE_DIGITS: usize = 16;

#[derive(Debug)]
enum State {
    /// Waiting for a status line (possibly after 1xx heads).
    Head,
    Length {
        remaining: u64,
        expected: u64,
    },
    ChunkSize,
    ChunkData {
        remaining: u64,
    },
    /// The CRLF that closes a chunk's data.
    ChunkDataEnd,
    Trailers,
    CloseDelimited,
    /// The body is complete; `End` is owed on the next call.
    EndNow,
    Upgraded,
    /// Errors are sticky: the byte stream has lost its framing.
    Failed(DecodeError),
}

pub struct ResponseDecoder {
    max_header_size: usize,
    expects: VecDeque<Expect>,
    state: State,
    /// Bytes of the next head have been seen but it is not complete yet.
    head_partial: bool,
    /// A 1xx head has been delivered for the response in progress.
    informational: bool,
    /// The current head or trailer block has more than `STACK_HEADERS` fields: skip the stack
    /// attempt on re-parses.
    many_headers: bool,
    /// An empty line's CR was consumed before a status line; its LF must come next.
    cr_pending: bool,
}

/// A successfully parsed head, as ranges into the bytes it came from.
struct RawHead {
    len: usize,
    version_minor: u8,
    status: u16,
    reason: Range<u32>,
    fields: FieldRanges,
}

enum Parsed<T> {
    Complete(T),
    Partial,
    TooManyHeaders,
}

/// Framing-relevant facts gathered from a header block in one pass.
#[derive(Default)]
struct Facts {
    content_length: Option<u64>,
    /// Set when the content-length fields are unusable; not reported for tunnels (101, 2xx to
    /// CONNECT), whose CL the client must ignore.
    cl_error: Option<&'static str>,
    transfer_encoding: bool,
    chunked_last: bool,
    conn_close: bool,
    conn_keep_alive: bool,
    keep_alive_timeout_ms: Option<u64>,
}

impl ResponseDecoder {
    /// `max_header_size` bounds the status line plus headers, and separately each trailer block.
    pub fn new(max_header_size: usize) -> Self {
        ResponseDecoder {
            max_header_size,
            expects: VecDeque::new(),
            state: State::Head,
            head_partial: false,
            informational: false,
            many_headers: false,
            cr_pending: false,
        }
    }

    /// Registers the next request written on the connection (pipeline order).
    pub fn push_expect(&mut self, e: Expect) {
        self.expects.push_back(e);
    }

    /// Decodes the next item from the front of `buf`. `Ok(None)` means more bytes are needed.
    pub fn decode(&mut self, buf: &mut BytesMut) -> Result<Option<Decoded>, DecodeError> {
        let res = self.step(buf);
        if let Err(e) = &res {
            self.state = State::Failed(e.clone());
        }
        res
    }

    /// The peer closed its side; `buf` is assumed drained by `decode` first.
    pub fn eof(&mut self) -> Result<Option<Decoded>, DecodeError> {
        let res = match &self.state {
            State::Failed(e) => Err(e.clone()),
            State::Head => {
                if self.head_partial || self.informational {
                    Err(DecodeError::Closed)
                } else {
                    Ok(None)
                }
            }
            State::Length {
                remaining,
                expected,
            } => Err(DecodeError::ContentLengthMismatch {
                expected: *expected,
                received: expected.saturating_sub(*remaining),
            }),
            State::ChunkSize | State::ChunkData { .. } | State::ChunkDataEnd | State::Trailers => {
                Err(DecodeError::Closed)
            }
            // The close is what delimits this body; an owed End is still owed.
            State::CloseDelimited | State::EndNow => {
                self.finish();
                Ok(Some(Decoded::End { trailers: None }))
            }
            State::Upgraded => Ok(None),
        };
        if let Err(e) = &res {
            self.state = State::Failed(e.clone());
        }
        res
    }

    /// True between messages: no head bytes seen, no 1xx delivered, no body in progress.
    pub fn is_idle(&self) -> bool {
        matches!(self.state, State::Head) && !self.head_partial && !self.informational
    }

    /// Responses still expected: pushed Expects whose End (or Upgrade) has not been returned.
    pub fn pending(&self) -> usize {
        self.expects.len()
    }

    /// The current response is done: forget its request and wait for the next head.
    fn finish(&mut self) {
        self.expects.pop_front();
        self.state = State::Head;
        self.informational = false;
        self.head_partial = false;
    }

    fn step(&mut self, buf: &mut BytesMut) -> Result<Option<Decoded>, DecodeError> {
        loop {
            match self.state {
                State::Failed(ref e) => return Err(e.clone()),
                State::Upgraded => return Err(DecodeError::Parse("decode after upgrade")),
                State::Head => {
                    self.skip_empty_lines(buf)?;
                    if buf.is_empty() {
                        return Ok(None);
                    }
                    let expect = match self.expects.front() {
                        Some(e) => *e,
                        // Unsolicited bytes: a desynchronised or smuggling peer.
                        None => return Err(DecodeError::Parse("response without a request")),
                    };
                    return self.decode_head(buf, expect);
                }
                State::EndNow => {
                    self.finish();
                    return Ok(Some(Decoded::End { trailers: None }));
                }
                State::Length {
                    remaining,
                    expected,
                } => {
                    if buf.is_empty() {
                        return Ok(None);
                    }
                    let (data, left) = take_body(buf, remaining);
                    self.state = if left == 0 {
                        State::EndNow
                    } else {
                        State::Length {
                            remaining: left,
                            expected,
                        }
                    };
                    return Ok(Some(Decoded::Data(data)));
                }
                State::CloseDelimited => {
                    if buf.is_empty() {
                        return Ok(None);
                    }
                    return Ok(Some(Decoded::Data(buf.split().freeze())));
                }
                State::ChunkSize => match parse_chunk_line(buf)? {
                    None => return Ok(None),
                    Some((consumed, size)) => {
                        buf.advance(consumed);
                        self.state = if size == 0 {
                            State::Trailers
                        } else {
                            State::ChunkData { remaining: size }
                        };
                    }
                },
                State::ChunkData { remaining } => {
                    if buf.is_empty() {
                        return Ok(None);
                    }
                    let (data, left) = take_body(buf, remaining);
                    self.state = if left == 0 {
                        State::ChunkDataEnd
                    } else {
                        State::ChunkData { remaining: left }
                    };
                    return Ok(Some(Decoded::Data(data)));
                }
                State::ChunkDataEnd => match (buf.first(), buf.get(1)) {
                    (None, _) | (Some(b'\r'), None) => return Ok(None),
                    (Some(b'\r'), Some(b'\n')) => {
                        buf.advance(2);
                        self.state = State::ChunkSize;
                    }
                    _ => return Err(DecodeError::Parse("invalid chunk")),
                },
                State::Trailers => return self.decode_trailers(buf),
            }
        }
    }

    /// RFC 9112 §2.2: empty lines (CRLF, or a bare LF) before a status line are ignored; servers
    /// do send a stray CRLF after a complete response. Only CR and LF are skipped, and a CR must be
    /// followed by LF: any other byte still reaches the head parser (and, on an idle connection,
    /// the "response without a request" check), so nothing can be smuggled in front of a response.
    fn skip_empty_lines(&mut self, buf: &mut BytesMut) -> Result<(), DecodeError> {
        let mut i = 0;
        if self.cr_pending {
            match buf.first() {
                None => return Ok(()),
                Some(b'\n') => {
                    self.cr_pending = false;
                    i = 1;
                }
                Some(_) => return Err(DecodeError::Parse("invalid empty line")),
            }
        }
        loop {
            match (buf.get(i), buf.get(i + 1)) {
                (Some(b'\n'), _) => i += 1,
                (Some(b'\r'), Some(b'\n')) => i += 2,
                // No status line starts with CR: the same error whether or not the CR ended a read.
                (Some(b'\r'), Some(_)) => return Err(DecodeError::Parse("invalid empty line")),
                (Some(b'\r'), None) => {
                    self.cr_pending = true;
                    i += 1;
                    break;
                }
                _ => break,
            }
        }
        buf.advance(i);
        Ok(())
    }

    /// Parses a head with httparse, retrying with a heap array when the stack one is too small.
    /// Only the first `max_header_size` bytes are offered, which bounds both work and field count.
    fn parse_raw_head(&mut self, buf: &[u8]) -> Result<Option<RawHead>, DecodeError> {
        let window = buf.get(..self.max_header_size).unwrap_or(buf);
        let parsed = if self.many_headers {
            Parsed::TooManyHeaders
        } else {
            let mut headers = [httparse::EMPTY_HEADER; STACK_HEADERS];
            parse_response(window, &mut headers)?
        };
        let parsed = match parsed {
            Parsed::TooManyHeaders => {
                self.many_headers = true;
                let mut headers = vec![httparse::EMPTY_HEADER; heap_header_count(window.len())];
                parse_response(window, &mut headers)?
            }
            p => p,
        };
        match parsed {
            Parsed::Complete(raw) => {
                self.many_headers = false;
                Ok(Some(raw))
            }
            Parsed::Partial => {
                if buf.len() >= self.max_header_size {
                    // The head does not end within the limit, whatever comes next.
                    Err(DecodeError::HeadersOverflow)
                } else {
                    Ok(None)
                }
            }
            // The heap array fits every field a window of this size can hold; more means the
            // window is enormous and capped by MAX_HEADERS.
            Parsed::TooManyHeaders => Err(DecodeError::HeadersOverflow),
        }
    }

    fn decode_head(
        &mut self,
        buf: &mut BytesMut,
        expect: Expect,
    ) -> Result<Option<Decoded>, DecodeError> {
        let raw = match self.parse_raw_head(buf)? {
            Some(raw) => raw,
            None => {
                self.head_partial = true;
                return Ok(None);
            }
        };
        self.head_partial = false;
        if raw.len > buf.len() {
            return Err(DecodeError::Parse("invalid response head"));
        }
        let block = buf.split_to(raw.len).freeze();
        let reason = block
            .get(raw.reason.start as usize..raw.reason.end as usize)
            .map_or_else(Bytes::new, |r| block.slice_ref(r));
        let headers = HeaderBlock {
            block,
            fields: raw.fields,
        };
        let facts = Facts::gather(&headers);
        let status = raw.status;

        let mut keep_alive = if raw.version_minor == 0 {
            facts.conn_keep_alive && !facts.conn_close
        } else {
            !facts.conn_close
        };
        // RFC 9112 §6.1: Transfer-Encoding in an HTTP/1.0 message means the framing cannot be
        // trusted beyond this message.
        if raw.version_minor == 0 && facts.transfer_encoding {
            keep_alive = false;
        }
        let mut head = Head {
            status,
            version_minor: raw.version_minor,
            reason,
            headers,
            keep_alive,
            keep_alive_timeout_ms: facts.keep_alive_timeout_ms,
        };

        if status == 101 {
            if !expect.upgrade {
                return Err(DecodeError::Parse("unexpected 101"));
            }
            return Ok(Some(self.upgrade(head)));
        }
        if (200..300).contains(&status) && expect.connect {
            // RFC 9112 §6.3 (2): CL and TE are to be ignored here, so they cannot fail it either.
            return Ok(Some(self.upgrade(head)));
        }

        // Framing errors are checked for every other head, including bodiless ones: a peer that
        // sends contradictory framing cannot be trusted with the rest of the stream.
        if facts.transfer_encoding && (facts.content_length.is_some() || facts.cl_error.is_some()) {
            return Err(DecodeError::Parse(
                "content-length and transfer-encoding both present",
            ));
        }
        if let Some(e) = facts.cl_error {
            return Err(DecodeError::Parse(e));
        }

        if status < 200 {
            // Informational: the final head for this request is still to come.
            self.informational = true;
            return Ok(Some(Decoded::Head(head)));
        }

        self.state = if expect.head || status == 204 || status == 304 {
            State::EndNow
        } else if facts.transfer_encoding {
            if facts.chunked_last {
                State::ChunkSize
            } else {
                State::CloseDelimited
            }
        } else if let Some(n) = facts.content_length {
            if n == 0 {
                State::EndNow
            } else {
                State::Length {
                    remaining: n,
                    expected: n,
                }
            }
        } else {
            State::CloseDelimited
        };
        if matches!(self.state, State::CloseDelimited) {
            head.keep_alive = false;
        }
        Ok(Some(Decoded::Head(head)))
    }

    fn upgrade(&mut self, mut head: Head) -> Decoded {
        self.expects.pop_front();
        self.informational = false;
        self.state = State::Upgraded;
        // The connection now speaks something else; it never returns to the HTTP/1.1 pool.
        head.keep_alive = false;
        Decoded::Upgrade(head)
    }

    fn decode_trailers(&mut self, buf: &mut BytesMut) -> Result<Option<Decoded>, DecodeError> {
        // Fast path: no trailer fields, just the final CRLF.
        match (buf.first(), buf.get(1)) {
            (None, _) | (Some(b'\r'), None) => return Ok(None),
            (Some(b'\r'), Some(b'\n')) => {
                buf.advance(2);
                self.finish();
                return Ok(Some(Decoded::End { trailers: None }));
            }
            _ => {}
        }
        let all: &[u8] = buf;
        let window = all.get(..self.max_header_size).unwrap_or(all);
        let parsed = if self.many_headers {
            Parsed::TooManyHeaders
        } else {
            let mut headers = [httparse::EMPTY_HEADER; STACK_HEADERS];
            parse_fields(window, &mut headers)?
        };
        let parsed = match parsed {
            Parsed::TooManyHeaders => {
                self.many_headers = true;
                let mut headers = vec![httparse::EMPTY_HEADER; heap_header_count(window.len())];
                parse_fields(window, &mut headers)?
            }
            p => p,
        };
        let (len, fields) = match parsed {
            Parsed::Complete(x) => x,
            Parsed::Partial if buf.len() < self.max_header_size => return Ok(None),
            Parsed::Partial | Parsed::TooManyHeaders => return Err(DecodeError::HeadersOverflow),
        };
        self.many_headers = false;
        if len > buf.len() {
            return Err(DecodeError::Parse("invalid trailer"));
        }
        let block = buf.split_to(len).freeze();
        self.finish();
        let trailers = if fields.is_empty() {
            None
        } else {
            Some(HeaderBlock { block, fields })
        };
        Ok(Some(Decoded::End { trailers }))
    }
}

impl fmt::Debug for ResponseDecoder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResponseDecoder")
            .field("state", &self.state)
            .field("pending", &self.expects.len())
            .field("head_partial", &self.head_partial)
            .field("informational", &self.informational)
            .finish()
    }
}

/// Splits up to `remaining` body bytes off a non-empty `buf`; returns them and what is left.
fn take_body(buf: &mut BytesMut, remaining: u64) -> (Bytes, u64) {
    let n = usize::try_from(remaining).map_or(buf.len(), |r| r.min(buf.len()));
    (buf.split_to(n).freeze(), remaining - n as u64)
}

/// Enough header slots for any block of `len` bytes (a field line is at least `a:` + LF), capped.
fn heap_header_count(len: usize) -> usize {
    (len / 3 + 1).min(MAX_HEADERS)
}

fn map_httparse_error(e: httparse::Error) -> DecodeError {
    DecodeError::Parse(match e {
        httparse::Error::Status | httparse::Error::Version | httparse::Error::Token => {
            "invalid status line"
        }
        httparse::Error::HeaderName | httparse::Error::HeaderValue | httparse::Error::NewLine => {
            "invalid header"
        }
        httparse::Error::TooManyHeaders => "too many headers",
    })
}

/// Offset range of `part` within `whole`, which it must lie inside (it always does for httparse
/// output; the checks only keep us panic-free).
fn sub_range(whole: &[u8], part: &[u8]) -> Result<Range<u32>, DecodeError> {
    let start = (part.as_ptr() as usize).wrapping_sub(whole.as_ptr() as usize);
    let end = start.checked_add(part.len()).filter(|&e| e <= whole.len());
    match (
        u32::try_from(start),
        end.and_then(|e| u32::try_from(e).ok()),
    ) {
        (Ok(s), Some(e)) if s <= e => Ok(s..e),
        _ => Err(DecodeError::Parse("invalid header")),
    }
}

/// (name, value) ranges into a block, as stored in `HeaderBlock::fields`.
type FieldRanges = Vec<(Range<u32>, Range<u32>)>;

fn field_ranges(
    whole: &[u8],
    headers: &[httparse::Header<'_>],
) -> Result<FieldRanges, DecodeError> {
    let mut fields = Vec::with_capacity(headers.len());
    for h in headers {
        // httparse trims the value's leading OWS (and, in recent versions, trailing OWS too);
        // trimming again keeps the contract independent of the httparse version.
        fields.push((
            sub_range(whole, h.name.as_bytes())?,
            sub_range(whole, trim_ows(h.value))?,
        ));
    }
    Ok(fields)
}

fn parse_response<'b>(
    bytes: &'b [u8],
    headers: &mut [httparse::Header<'b>],
) -> Result<Parsed<RawHead>, DecodeError> {
    let mut res = httparse::Response::new(headers);
    let len = match res.parse(bytes) {
        Ok(httparse::Status::Complete(len)) => len,
        Ok(httparse::Status::Partial) => return Ok(Parsed::Partial),
        Err(httparse::Error::TooManyHeaders) => return Ok(Parsed::TooManyHeaders),
        Err(e) => return Err(map_httparse_error(e)),
    };
    let (version_minor, status) = match (res.version, res.code) {
        (Some(v), Some(c)) if (100..=999).contains(&c) => (v, c),
        _ => return Err(DecodeError::Parse("invalid status line")),
    };
    let head = bytes.get(..len).unwrap_or(bytes);
    let fields = field_ranges(head, res.headers)?;
    Ok(Parsed::Complete(RawHead {
        len,
        version_minor,
        status,
        reason: reason_range(head),
        fields,
    }))
}

fn parse_fields<'b>(
    bytes: &'b [u8],
    headers: &mut [httparse::Header<'b>],
) -> Result<Parsed<(usize, FieldRanges)>, DecodeError> {
    match httparse::parse_headers(bytes, headers) {
        Ok(httparse::Status::Complete((len, parsed))) => {
            let block = bytes.get(..len).unwrap_or(bytes);
            Ok(Parsed::Complete((len, field_ranges(block, parsed)?)))
        }
        Ok(httparse::Status::Partial) => Ok(Parsed::Partial),
        Err(httparse::Error::TooManyHeaders) => Ok(Parsed::TooManyHeaders),
        Err(_) => Err(DecodeError::Parse("invalid trailer")),
    }
}

/// The raw reason phrase. httparse replaces a phrase containing obs-text by "", but the status
/// message is reported as sent, so it is located again in the validated status line:
/// `HTTP/1.x SP 3DIGIT [SP reason] (CR)LF`, possibly after empty lines httparse skipped.
fn reason_range(head: &[u8]) -> Range<u32> {
    let start = head
        .iter()
        .position(|&b| b != b'\r' && b != b'\n')
        .unwrap_or(head.len());
    let line = head.get(start..).unwrap_or(&[]);
    let mut end = line.iter().position(|&b| b == b'\n').unwrap_or(line.len());
    if end > 0 && line.get(end - 1) == Some(&b'\r') {
        end -= 1;
    }
    const REASON_AT: usize = 13; // after "HTTP/1.1 200 "
    if end <= REASON_AT {
        return 0..0;
    }
    match (u32::try_from(start + REASON_AT), u32::try_from(start + end)) {
        (Ok(s), Ok(e)) => s..e,
        _ => 0..0,
    }
}

fn trim_ows(mut s: &[u8]) -> &[u8] {
    while let [b' ' | b'\t', rest @ ..] = s {
        s = rest;
    }
    while let [rest @ .., b' ' | b'\t'] = s {
        s = rest;
    }
    s
}

/// Non-empty elements of a comma-separated list, trimmed.
fn list_elements(v: &[u8]) -> impl Iterator<Item = &[u8]> {
    v.split(|&b| b == b',')
        .map(trim_ows)
        .filter(|e| !e.is_empty())
}

/// `1*DIGIT` as u64; None on anything else, including overflow.
fn parse_decimal(s: &[u8]) -> Option<u64> {
    if s.is_empty() {
        return None;
    }
    let mut n: u64 = 0;
    for &b in s {
        if !b.is_ascii_digit() {
            return None;
        }
        n = n.checked_mul(10)?.checked_add(u64::from(b - b'0'))?;
    }
    Some(n)
}

impl Facts {
    fn gather(headers: &HeaderBlock) -> Facts {
        let mut f = Facts::default();
        for (name, value) in headers.iter() {
            if name.eq_ignore_ascii_case(b"content-length") {
                f.add_content_length(value);
            } else if name.eq_ignore_ascii_case(b"transfer-encoding") {
                f.transfer_encoding = true;
                // The final coding of the last field decides; an empty field leaves it as is.
                if let Some(last) = list_elements(value).last() {
                    f.chunked_last = last.eq_ignore_ascii_case(b"chunked");
                }
            } else if name.eq_ignore_ascii_case(b"connection") {
                for token in list_elements(value) {
                    if token.eq_ignore_ascii_case(b"close") {
                        f.conn_close = true;
                    } else if token.eq_ignore_ascii_case(b"keep-alive") {
                        f.conn_keep_alive = true;
                    }
                }
            } else if name.eq_ignore_ascii_case(b"keep-alive") && f.keep_alive_timeout_ms.is_none()
            {
                f.keep_alive_timeout_ms = parse_keep_alive_timeout(value);
            }
        }
        f
    }

    fn add_content_length(&mut self, value: &[u8]) {
        if self.cl_error.is_some() {
            return;
        }
        // Unlike other lists, an empty element makes the field invalid: "5," is not a length.
        let mut any = false;
        for element in value.split(|&b| b == b',').map(trim_ows) {
            any = true;
            let n = match parse_decimal(element) {
                Some(n) => n,
                None => {
                    self.cl_error = Some("invalid content-length");
                    return;
                }
            };
            match self.content_length {
                Some(prev) if prev != n => {
                    self.cl_error = Some("conflicting content-length");
                    return;
                }
                _ => self.content_length = Some(n),
            }
        }
        if !any {
            self.cl_error = Some("invalid content-length");
        }
    }
}

/// `timeout=N` (seconds) among the Keep-Alive parameters, in milliseconds. Anything unparsable
/// is ignored: this is only a hint for the pool.
fn parse_keep_alive_timeout(value: &[u8]) -> Option<u64> {
    for param in list_elements(value) {
        let eq = match param.iter().position(|&b| b == b'=') {
            Some(i) => i,
            None => continue,
        };
        let (name, rest) = param.split_at(eq);
        if !trim_ows(name).eq_ignore_ascii_case(b"timeout") {
            continue;
        }
        let mut v = trim_ows(rest.get(1..).unwrap_or(&[]));
        if let [b'"', inner @ .., b'"'] = v {
            v = inner;
        }
        // The leading digits count, as undici reads them: `timeout=5s` is 5 seconds.
        let digits = v.iter().take_while(|b| b.is_ascii_digit()).count();
        return parse_decimal(v.get(..digits).unwrap_or(&[])).and_then(|s| s.checked_mul(1000));
    }
    None
}

/// Parses `chunk-size *(BWS ";" BWS ext-name [BWS "=" BWS ext-val]) CRLF` at the front of `buf`.
/// Returns the line length (including CRLF) and the size, or None if the line is incomplete.
fn parse_chunk_line(buf: &[u8]) -> Result<Option<(usize, u64)>, DecodeError> {
    let lf = match buf.iter().take(MAX_CHUNK_LINE).position(|&b| b == b'\n') {
        Some(i) => i,
        None if buf.len() >= MAX_CHUNK_LINE => {
            return Err(DecodeError::Parse("chunk size line too long"))
        }
        None => {
            // Fail early on an obviously bad size instead of waiting for a line end.
            if let Some(&b) = buf.first() {
                if !b.is_ascii_hexdigit() {
                    return Err(DecodeError::Parse("invalid chunk size"));
                }
            }
            return Ok(None);
        }
    };
    // Strict CRLF: a bare LF is a framing ambiguity between implementations.
    let line = match lf.checked_sub(1).and_then(|cr| buf.get(..=cr)) {
        Some([line @ .., b'\r']) => line,
        _ => return Err(DecodeError::Parse("invalid chunk size")),
    };

    let digits = line.iter().take_while(|b| b.is_ascii_hexdigit()).count();
    if digits == 0 || digits > MAX_CHUNK_SIZE_DIGITS {
        return Err(DecodeError::Parse("invalid chunk size"));
    }
    let mut size: u64 = 0;
    for &b in line.iter().take(digits) {
        let d = match b {
            b'0'..=b'9' => b - b'0',
            b'a'..=b'f' => b - b'a' + 10,
            b'A'..=b'F' => b - b'A' + 10,
            _ => return Err(DecodeError::Parse("invalid chunk size")),
        };
        // 16 digits cannot overflow, but staying checked costs nothing.
        size = size
            .checked_mul(16)
            .and_then(|s| s.checked_add(u64::from(d)))
            .ok_or(DecodeError::Parse("invalid chunk size"))?;
    }
    if !valid_chunk_extensions(line.get(digits..).unwrap_or(&[])) {
        return Err(DecodeError::Parse("invalid chunk size"));
    }
    Ok(Some((lf + 1, size)))
}

fn skip_ws(s: &[u8]) -> &[u8] {
    let n = s.iter().take_while(|&&b| b == b' ' || b == b'\t').count();
    s.get(n..).unwrap_or(&[])
}

fn skip_token(s: &[u8]) -> Option<&[u8]> {
    let n = s.iter().take_while(|&&b| is_tchar(b)).count();
    if n == 0 {
        None
    } else {
        s.get(n..)
    }
}

/// Skips a quoted-string that starts at `s[0] == '"'`.
fn skip_quoted(s: &[u8]) -> Option<&[u8]> {
    let mut rest = s.strip_prefix(b"\"")?;
    loop {
        match rest {
            [b'"', tail @ ..] => return Some(tail),
            [b'\\', c, tail @ ..] if *c == b'\t' || (*c >= 0x20 && *c != 0x7f) => rest = tail,
            [c, tail @ ..] if *c == b'\t' || (*c >= 0x20 && *c != 0x7f && *c != b'\\') => {
                rest = tail
            }
            _ => return None,
        }
    }
}

/// Chunk extensions are accepted (and ignored) only when well formed, so odd bytes in the size
/// line cannot be read differently by two parsers.
fn valid_chunk_extensions(mut s: &[u8]) -> bool {
    while !s.is_empty() {
        s = skip_ws(s);
        s = match s.strip_prefix(b";") {
            Some(r) => skip_ws(r),
            // Trailing whitespace with no extension, or any other byte.
            None => return false,
        };
        s = match skip_token(s) {
            Some(r) => r,
            None => return false,
        };
        let after_name = skip_ws(s);
        if let Some(r) = after_name.strip_prefix(b"=") {
            let v = skip_ws(r);
            s = match if v.first() == Some(&b'"') {
                skip_quoted(v)
            } else {
                skip_token(v)
            } {
                Some(r) => r,
                None => return false,
            };
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAX: usize = 16 * 1024;

    /// A decoded item in comparable form; bodies are joined because split points move Data
    /// boundaries.
    #[derive(Debug, Clone, PartialEq, Eq)]
    enum Ev {
        Head(H),
        Upgrade(H),
        Body(Vec<u8>),
        End(Option<Vec<(Vec<u8>, Vec<u8>)>>),
        Err(DecodeError),
    }

    #[derive(Debug, Clone, PartialEq, Eq)]
    struct H {
        status: u16,
        minor: u8,
        reason: Vec<u8>,
        headers: Vec<(Vec<u8>, Vec<u8>)>,
        keep_alive: bool,
        timeout: Option<u64>,
    }

    fn fields(h: &HeaderBlock) -> Vec<(Vec<u8>, Vec<u8>)> {
        h.iter().map(|(n, v)| (n.to_vec(), v.to_vec())).collect()
    }

    fn h(head: &Head) -> H {
        H {
            status: head.status,
            minor: head.version_minor,
            reason: head.reason.to_vec(),
            headers: fields(&head.headers),
            keep_alive: head.keep_alive,
            timeout: head.keep_alive_timeout_ms,
        }
    }

    fn push(evs: &mut Vec<Ev>, item: Decoded) {
        match item {
            Decoded::Head(x) => evs.push(Ev::Head(h(&x))),
            Decoded::Upgrade(x) => evs.push(Ev::Upgrade(h(&x))),
            Decoded::Data(d) => {
                assert!(!d.is_empty(), "zero-length Data");
                if let Some(Ev::Body(b)) = evs.last_mut() {
                    b.extend_from_slice(&d);
                } else {
                    evs.push(Ev::Body(d.to_vec()));
                }
            }
            Decoded::End { trailers } => {
                if let Some(t) = &trailers {
                    assert!(!t.is_empty());
                }
                evs.push(Ev::End(trailers.as_ref().map(fields)))
            }
        }
    }

    /// Drains `dec` over `buf`; true once the decoder is finished (upgrade or error).
    fn drain(dec: &mut ResponseDecoder, buf: &mut BytesMut, evs: &mut Vec<Ev>) -> bool {
        for _ in 0..100_000 {
            match dec.decode(buf) {
                Ok(None) => return false,
                Ok(Some(item)) => {
                    let up = matches!(item, Decoded::Upgrade(_));
                    push(evs, item);
                    if up {
                        return true;
                    }
                }
                Err(e) => {
                    evs.push(Ev::Err(e));
                    return true;
                }
            }
        }
        panic!("decode did not converge");
    }

    /// Feeds `pieces` in order, then optionally eof; returns events and the leftover buffer.
    fn run(expects: &[Expect], pieces: &[&[u8]], eof: bool, max: usize) -> (Vec<Ev>, Vec<u8>) {
        let mut dec = ResponseDecoder::new(max);
        for e in expects {
            dec.push_expect(*e);
        }
        let mut buf = BytesMut::new();
        let mut evs = Vec::new();
        let mut done = false;
        for p in pieces {
            buf.extend_from_slice(p);
            // After an upgrade or error the rest is only collected, as a connection would.
            if !done && drain(&mut dec, &mut buf, &mut evs) {
                done = true;
            }
        }
        if eof && !done {
            match dec.eof() {
                Ok(Some(item)) => push(&mut evs, item),
                Ok(None) => {}
                Err(e) => evs.push(Ev::Err(e)),
            }
        }
        (evs, buf.to_vec())
    }

    fn get() -> Expect {
        Expect::default()
    }

    fn one(input: &[u8]) -> Vec<Ev> {
        run(&[get()], &[input], false, MAX).0
    }

    fn head_of(ev: &Ev) -> &H {
        match ev {
            Ev::Head(h) | Ev::Upgrade(h) => h,
            other => panic!("expected a head, got {other:?}"),
        }
    }

    fn hdrs(list: &[(&str, &str)]) -> Vec<(Vec<u8>, Vec<u8>)> {
        list.iter()
            .map(|(n, v)| (n.as_bytes().to_vec(), v.as_bytes().to_vec()))
            .collect()
    }

    #[test]
    fn simple_content_length() {
        let evs = one(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX-Thing:  spaced \t\r\n\r\nhello");
        assert_eq!(
            evs,
            vec![
                Ev::Head(H {
                    status: 200,
                    minor: 1,
                    reason: b"OK".to_vec(),
                    headers: hdrs(&[("Content-Length", "5"), ("X-Thing", "spaced")]),
                    keep_alive: true,
                    timeout: None,
                }),
                Ev::Body(b"hello".to_vec()),
                Ev::End(None),
            ]
        );
    }

    #[test]
    fn state_queries() {
        let mut dec = ResponseDecoder::new(MAX);
        assert!(dec.is_idle());
        assert_eq!(dec.pending(), 0);
        dec.push_expect(get());
        dec.push_expect(get());
        assert_eq!(dec.pending(), 2);
        let mut buf = BytesMut::from(&b"HTTP/1.1 200 OK\r\nContent-Le"[..]);
        assert!(dec.decode(&mut buf).unwrap().is_none());
        assert!(!dec.is_idle());
        assert_eq!(buf.len(), 27, "partial head bytes stay in the buffer");
        buf.extend_from_slice(b"ngth: 3\r\n\r\nab");
        assert!(matches!(
            dec.decode(&mut buf).unwrap(),
            Some(Decoded::Head(_))
        ));
        assert!(!dec.is_idle());
        assert!(matches!(dec.decode(&mut buf).unwrap(), Some(Decoded::Data(d)) if &d[..] == b"ab"));
        assert!(dec.decode(&mut buf).unwrap().is_none());
        buf.extend_from_slice(b"c");
        assert!(matches!(dec.decode(&mut buf).unwrap(), Some(Decoded::Data(d)) if &d[..] == b"c"));
        assert_eq!(dec.pending(), 2);
        assert!(matches!(
            dec.decode(&mut buf).unwrap(),
            Some(Decoded::End { trailers: None })
        ));
        assert!(dec.is_idle());
        assert_eq!(dec.pending(), 1);
        assert!(dec.decode(&mut buf).unwrap().is_none());
        assert_eq!(dec.eof().unwrap().map(|_| ()), None, "idle eof is clean");
    }

    #[test]
    fn pipelined_in_one_buffer() {
        let mut input = Vec::new();
        for i in 0..50 {
            let body = format!("body-{i}");
            input.extend_from_slice(
                format!(
                    "HTTP/1.1 200 OK\r\ncontent-length: {}\r\n\r\n{}",
                    body.len(),
                    body
                )
                .as_bytes(),
            );
        }
        let expects = vec![get(); 50];
        let (evs, rest) = run(&expects, &[&input], false, MAX);
        assert!(rest.is_empty());
        assert_eq!(evs.len(), 150);
        for i in 0..50 {
            assert_eq!(head_of(&evs[i * 3]).status, 200);
            assert_eq!(evs[i * 3 + 1], Ev::Body(format!("body-{i}").into_bytes()));
            assert_eq!(evs[i * 3 + 2], Ev::End(None));
        }
    }

    #[test]
    fn chunked_with_extensions_and_trailers() {
        let input = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n\
            5;name=value\r\nhello\r\n\
            1 ; a = \"q\\\"uoted; x\" ; b\r\n,\r\n\
            6\r\n world\r\n\
            0;last\r\nX-Checksum: abc\r\nX-Other:  v  \r\n\r\n";
        let evs = one(input);
        assert_eq!(head_of(&evs[0]).status, 200);
        assert_eq!(evs[1], Ev::Body(b"hello, world".to_vec()));
        assert_eq!(
            evs[2],
            Ev::End(Some(hdrs(&[("X-Checksum", "abc"), ("X-Other", "v")])))
        );
        assert_eq!(evs.len(), 3);
    }

    #[test]
    fn chunked_without_trailers() {
        let evs = one(b"HTTP/1.1 200 OK\r\ntransfer-encoding: gzip, chunked\r\n\r\nA\r\n0123456789\r\n0\r\n\r\n");
        assert_eq!(evs[1], Ev::Body(b"0123456789".to_vec()));
        assert_eq!(evs[2], Ev::End(None));
        assert!(head_of(&evs[0]).keep_alive);
    }

    #[test]
    fn chunked_uppercase_hex_and_big_chunk() {
        let body = vec![b'z'; 0xABC];
        let mut input = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: Chunked\r\n\r\nABC\r\n".to_vec();
        input.extend_from_slice(&body);
        input.extend_from_slice(b"\r\n0\r\n\r\n");
        let evs = one(&input);
        assert_eq!(evs[1], Ev::Body(body));
        assert_eq!(evs[2], Ev::End(None));
    }

    #[test]
    fn close_delimited_until_eof() {
        let (evs, _) = run(
            &[get()],
            &[b"HTTP/1.1 200 OK\r\n\r\nsome ", b"bytes"],
            true,
            MAX,
        );
        assert!(!head_of(&evs[0]).keep_alive);
        assert_eq!(evs[1], Ev::Body(b"some bytes".to_vec()));
        assert_eq!(evs[2], Ev::End(None));
        // Empty close-delimited body.
        let (evs, _) = run(&[get()], &[b"HTTP/1.1 200 OK\r\n\r\n"], true, MAX);
        assert_eq!(evs.len(), 2);
        assert_eq!(evs[1], Ev::End(None));
    }

    #[test]
    fn te_without_final_chunked_is_close_delimited() {
        let (evs, _) = run(
            &[get()],
            &[b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\n\r\n5\r\nxx"],
            true,
            MAX,
        );
        assert!(!head_of(&evs[0]).keep_alive);
        assert_eq!(evs[1], Ev::Body(b"5\r\nxx".to_vec()));
        assert_eq!(evs[2], Ev::End(None));
    }

    #[test]
    fn multiple_te_fields_last_coding_wins() {
        let evs = one(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nx\r\n0\r\n\r\n");
        assert_eq!(evs[1], Ev::Body(b"x".to_vec()));
        assert_eq!(evs[2], Ev::End(None));
    }

    #[test]
    fn head_request_ignores_content_length() {
        let head = Expect {
            head: true,
            ..Expect::default()
        };
        let (evs, rest) = run(
            &[head, get()],
            &[b"HTTP/1.1 200 OK\r\nContent-Length: 1234\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"],
            false,
            MAX,
        );
        assert_eq!(evs[1], Ev::End(None));
        assert_eq!(head_of(&evs[2]).status, 200);
        assert_eq!(evs[3], Ev::Body(b"ok".to_vec()));
        assert_eq!(evs[4], Ev::End(None));
        assert!(rest.is_empty());
        // HEAD with transfer-encoding: also no body.
        let (evs, rest) = run(
            &[head],
            &[b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"],
            false,
            MAX,
        );
        assert_eq!(evs.len(), 2);
        assert!(rest.is_empty());
    }

    #[test]
    fn no_body_statuses() {
        for status in ["204 No Content", "304 Not Modified"] {
            let input = format!("HTTP/1.1 {status}\r\nContent-Length: 10\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx");
            let (evs, _) = run(&[get(), get()], &[input.as_bytes()], false, MAX);
            assert_eq!(evs.len(), 5, "{evs:?}");
            assert_eq!(evs[1], Ev::End(None));
            assert_eq!(evs[3], Ev::Body(b"x".to_vec()));
            assert!(head_of(&evs[0]).keep_alive);
        }
        // 204 without any framing header is not close-delimited either.
        let evs = one(b"HTTP/1.1 204 No Content\r\n\r\n");
        assert_eq!(evs[1], Ev::End(None));
        assert!(head_of(&evs[0]).keep_alive);
    }

    #[test]
    fn continue_then_final() {
        let mut dec = ResponseDecoder::new(MAX);
        dec.push_expect(get());
        let mut buf = BytesMut::from(&b"HTTP/1.1 100 Continue\r\n\r\n"[..]);
        match dec.decode(&mut buf).unwrap() {
            Some(Decoded::Head(h)) => assert_eq!(h.status, 100),
            other => panic!("{other:?}"),
        }
        assert!(dec.decode(&mut buf).unwrap().is_none());
        assert_eq!(dec.pending(), 1);
        assert!(!dec.is_idle(), "a response is in progress after a 1xx");
        buf.extend_from_slice(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nhi");
        let mut evs = Vec::new();
        drain(&mut dec, &mut buf, &mut evs);
        assert_eq!(head_of(&evs[0]).status, 200);
        assert_eq!(evs[1], Ev::Body(b"hi".to_vec()));
        assert_eq!(evs[2], Ev::End(None));
        assert_eq!(dec.pending(), 0);
    }

    #[test]
    fn early_hints_then_final() {
        let evs = one(
            b"HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\n\
              HTTP/1.1 103 Early Hints\r\nLink: </app.js>; rel=preload\r\n\r\n\
              HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
        );
        assert_eq!(evs.len(), 4);
        assert_eq!(head_of(&evs[0]).status, 103);
        assert_eq!(
            head_of(&evs[0]).headers,
            hdrs(&[("Link", "</style.css>; rel=preload")])
        );
        assert_eq!(head_of(&evs[1]).status, 103);
        assert_eq!(head_of(&evs[2]).status, 200);
        assert_eq!(evs[3], Ev::End(None));
    }

    #[test]
    fn eof_after_informational_is_closed() {
        let (evs, _) = run(&[get()], &[b"HTTP/1.1 100 Continue\r\n\r\n"], true, MAX);
        assert_eq!(evs.last(), Some(&Ev::Err(DecodeError::Closed)));
    }

    #[test]
    fn upgrade_leaves_remaining_bytes() {
        let up = Expect {
            upgrade: true,
            ..Expect::default()
        };
        let mut dec = ResponseDecoder::new(MAX);
        dec.push_expect(up);
        let mut buf = BytesMut::from(&b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n\x81\x05hello"[..]);
        match dec.decode(&mut buf).unwrap() {
            Some(Decoded::Upgrade(h)) => {
                assert_eq!(h.status, 101);
                assert_eq!(&h.reason[..], b"Switching Protocols");
                assert!(!h.keep_alive);
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(&buf[..], b"\x81\x05hello");
        assert_eq!(dec.pending(), 0);
        assert!(dec.decode(&mut buf).is_err(), "decoder is finished");
        assert_eq!(
            &buf[..],
            b"\x81\x05hello",
            "and it does not touch the tunnel bytes"
        );
    }

    #[test]
    fn upgrade_after_informational() {
        let up = Expect {
            upgrade: true,
            ..Expect::default()
        };
        let (evs, rest) = run(
            &[up],
            &[b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 101 Switching Protocols\r\n\r\nraw"],
            false,
            MAX,
        );
        assert_eq!(head_of(&evs[0]).status, 100);
        assert!(matches!(&evs[1], Ev::Upgrade(h) if h.status == 101));
        assert_eq!(rest, b"raw");
    }

    #[test]
    fn upgrade_declined_is_a_normal_response() {
        let up = Expect {
            upgrade: true,
            ..Expect::default()
        };
        let (evs, _) = run(
            &[up],
            &[b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nno"],
            false,
            MAX,
        );
        assert!(matches!(&evs[0], Ev::Head(h) if h.status == 200));
        assert_eq!(evs[1], Ev::Body(b"no".to_vec()));
    }

    #[test]
    fn unexpected_101() {
        let evs = one(b"HTTP/1.1 101 Switching Protocols\r\n\r\n");
        assert_eq!(evs, vec![Ev::Err(DecodeError::Parse("unexpected 101"))]);
    }

    #[test]
    fn connect_2xx_is_upgrade() {
        let connect = Expect {
            connect: true,
            ..Expect::default()
        };
        // CL/TE on a 2xx CONNECT answer are ignored (RFC 9112 §6.3), even contradictory ones.
        let (evs, rest) = run(
            &[connect],
            &[b"HTTP/1.1 200 Connection Established\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n\x16\x03\x01"],
            false,
            MAX,
        );
        assert_eq!(evs.len(), 1);
        assert!(
            matches!(&evs[0], Ev::Upgrade(h) if h.status == 200 && h.reason == b"Connection Established")
        );
        assert_eq!(rest, b"\x16\x03\x01");
        // A refused CONNECT has an ordinary body.
        let (evs, rest) = run(
            &[connect],
            &[b"HTTP/1.1 407 Proxy Auth\r\nContent-Length: 3\r\n\r\nno!"],
            false,
            MAX,
        );
        assert!(matches!(&evs[0], Ev::Head(h) if h.status == 407));
        assert_eq!(evs[1], Ev::Body(b"no!".to_vec()));
        assert_eq!(evs[2], Ev::End(None));
        assert!(rest.is_empty());
    }

    #[test]
    fn cl_and_te_rejected() {
        for input in [
            &b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n"[..],
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n",
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: x\r\n\r\n",
        ] {
            assert_eq!(
                one(input),
                vec![Ev::Err(DecodeError::Parse(
                    "content-length and transfer-encoding both present"
                ))]
            );
        }
    }

    #[test]
    fn content_length_variants() {
        let conflict = vec![Ev::Err(DecodeError::Parse("conflicting content-length"))];
        assert_eq!(
            one(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello"),
            conflict
        );
        assert_eq!(
            one(b"HTTP/1.1 200 OK\r\nContent-Length: 5, 6\r\n\r\nhello"),
            conflict
        );
        let invalid = vec![Ev::Err(DecodeError::Parse("invalid content-length"))];
        for v in [
            "-1",
            "+5",
            "5a",
            "0x5",
            "",
            "5,",
            "5,,5",
            " ",
            "99999999999999999999",
            "5 5",
        ] {
            let input = format!("HTTP/1.1 200 OK\r\nContent-Length: {v}\r\n\r\n");
            assert_eq!(one(input.as_bytes()), invalid, "{v:?}");
        }
        // Identical duplicates, as separate fields or a list, are one length.
        for input in [
            &b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\nhello"[..],
            b"HTTP/1.1 200 OK\r\nContent-Length: 5, 5\r\n\r\nhello",
            b"HTTP/1.1 200 OK\r\ncontent-length: 005\r\n\r\nhello",
        ] {
            let evs = one(input);
            assert_eq!(evs[1], Ev::Body(b"hello".to_vec()));
            assert_eq!(evs[2], Ev::End(None));
        }
        // A huge but valid length is accepted and then reported precisely on eof.
        let (evs, _) = run(
            &[get()],
            &[b"HTTP/1.1 200 OK\r\nContent-Length: 18446744073709551615\r\n\r\nab"],
            true,
            MAX,
        );
        assert_eq!(
            evs.last(),
            Some(&Ev::Err(DecodeError::ContentLengthMismatch {
                expected: u64::MAX,
                received: 2
            }))
        );
    }

    #[test]
    fn bad_chunk_sizes() {
        for line in [
            "x\r\n",
            "\r\n",
            ";ext\r\n",
            "-1\r\n",
            "1 \r\n",
            "1\t\r\n",
            "1;\r\n",
            "1;=v\r\n",
            "1;a=\r\n",
            "1;a=\"open\r\n",
            "1;a b\r\n",
            "11111111111111111\r\n",
            "00000000000000001\r\n",
            "1\n",
            "0x1\r\n",
            "1\r\r\n",
        ] {
            let input = format!(
                "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n{line}x\r\n0\r\n\r\n"
            );
            let evs = one(input.as_bytes());
            assert_eq!(
                evs.last(),
                Some(&Ev::Err(DecodeError::Parse("invalid chunk size"))),
                "{line:?}: {evs:?}"
            );
        }
        // 16 hex digits is the maximum and fits u64.
        let (evs, _) = run(
            &[get()],
            &[b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffff\r\nab"],
            true,
            MAX,
        );
        assert_eq!(evs[1], Ev::Body(b"ab".to_vec()));
        assert_eq!(evs[2], Ev::Err(DecodeError::Closed));
    }

    #[test]
    fn chunk_line_too_long() {
        let mut input = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1;a=".to_vec();
        input.extend(std::iter::repeat_n(b'b', MAX_CHUNK_LINE));
        let evs = one(&input);
        assert_eq!(
            evs.last(),
            Some(&Ev::Err(DecodeError::Parse("chunk size line too long")))
        );
    }

    #[test]
    fn missing_crlf_after_chunk_data() {
        for tail in [
            "5\r\nhelloX\r\n0\r\n\r\n",
            "5\r\nhello\n0\r\n\r\n",
            "5\r\nhello\rX",
        ] {
            let input = format!("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n{tail}");
            let evs = one(input.as_bytes());
            assert_eq!(
                evs.last(),
                Some(&Ev::Err(DecodeError::Parse("invalid chunk"))),
                "{tail:?}"
            );
        }
    }

    #[test]
    fn bad_trailers() {
        let evs =
            one(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nbad trailer\r\n\r\n");
        assert_eq!(
            evs.last(),
            Some(&Ev::Err(DecodeError::Parse("invalid trailer")))
        );
        // Trailers count against max_header_size.
        let mut input =
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nx-big: ".to_vec();
        input.extend(std::iter::repeat_n(b'a', 300));
        let (evs, _) = run(&[get()], &[&input], false, 256);
        assert_eq!(evs.last(), Some(&Ev::Err(DecodeError::HeadersOverflow)));
        input.extend_from_slice(b"\r\n\r\n");
        let (evs, _) = run(&[get()], &[&input], false, 256);
        assert_eq!(evs.last(), Some(&Ev::Err(DecodeError::HeadersOverflow)));
    }

    #[test]
    fn header_overflow() {
        let mut big = b"HTTP/1.1 200 OK\r\nx-big: ".to_vec();
        big.extend(std::iter::repeat_n(b'a', 200));
        // Incomplete: reported as soon as the limit is crossed, not when the head ends.
        let (evs, _) = run(&[get()], &[&big], false, 128);
        assert_eq!(evs, vec![Ev::Err(DecodeError::HeadersOverflow)]);
        // Complete.
        big.extend_from_slice(b"\r\ncontent-length: 0\r\n\r\n");
        let (evs, _) = run(&[get()], &[&big], false, 128);
        assert_eq!(evs, vec![Ev::Err(DecodeError::HeadersOverflow)]);
        // Exactly at the limit is fine; one byte over is not.
        let exact = b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n";
        let (evs, _) = run(&[get()], &[exact], false, exact.len());
        assert_eq!(evs.len(), 2);
        let (evs, _) = run(&[get()], &[exact], false, exact.len() - 1);
        assert_eq!(evs, vec![Ev::Err(DecodeError::HeadersOverflow)]);
        // Body bytes after a small head do not count.
        let mut with_body = b"HTTP/1.1 200 OK\r\ncontent-length: 500\r\n\r\n".to_vec();
        with_body.extend(std::iter::repeat_n(b'b', 500));
        let (evs, _) = run(&[get()], &[&with_body], false, 64);
        assert_eq!(evs[2], Ev::End(None));
    }

    #[test]
    fn many_headers_use_the_slow_path() {
        let mut input = b"HTTP/1.1 200 OK\r\n".to_vec();
        for i in 0..1000 {
            input.extend_from_slice(format!("x-h{i}: {i}\r\n").as_bytes());
        }
        input.extend_from_slice(b"content-length: 1\r\n\r\nz");
        // Split too, so the "many headers" memo is exercised across partial parses.
        let (evs, _) = run(&[get()], &[&input[..5000], &input[5000..]], false, MAX);
        let head = head_of(&evs[0]);
        assert_eq!(head.headers.len(), 1001);
        assert_eq!(head.headers[999], (b"x-h999".to_vec(), b"999".to_vec()));
        assert_eq!(evs[1], Ev::Body(b"z".to_vec()));
        // A head with far too many fields for the limit overflows rather than erroring oddly.
        let (evs, _) = run(&[get()], &[&input], false, 4096);
        assert_eq!(evs, vec![Ev::Err(DecodeError::HeadersOverflow)]);
    }

    #[test]
    fn invalid_status_lines() {
        for input in [
            &b"HTTP/1.1 abc\r\n\r\n"[..],
            b"HTTP/1.1 abc",
            b"HTTP/1.1 20\r\n\r\n",
            b"HTTP/1.1 2000 OK\r\n\r\n",
            b"HTTP/1.1 099 Low\r\n\r\n",
            b"HTTP/1.1 000\r\n\r\n",
            b"HTTP/2.0 200 OK\r\n\r\n",
            b"HTTP/1.2 200 OK\r\n\r\n",
            b"http/1.1 200 OK\r\n\r\n",
            b"HTTP/1.1  200 OK\r\n\r\n",
            b"HTTP/1.1 200 O\x01K\r\n\r\n",
        ] {
            assert_eq!(
                one(input),
                vec![Ev::Err(DecodeError::Parse("invalid status line"))],
                "{:?}",
                String::from_utf8_lossy(input)
            );
        }
    }

    #[test]
    fn invalid_headers() {
        for input in [
            &b"HTTP/1.1 200 OK\r\nbad name: x\r\n\r\n"[..],
            b"HTTP/1.1 200 OK\r\nx: a\x00b\r\n\r\n",
            b"HTTP/1.1 200 OK\r\nx: a\r\n folded\r\n\r\n",
            b"HTTP/1.1 200 OK\r\n: novalue\r\n\r\n",
            b"HTTP/1.1 200 OK\r\nx: a\rb\r\n\r\n",
        ] {
            assert_eq!(
                one(input),
                vec![Ev::Err(DecodeError::Parse("invalid header"))],
                "{:?}",
                String::from_utf8_lossy(input)
            );
        }
    }

    #[test]
    fn garbage() {
        let evs = one(b"\x00\xff garbage \x13\x37");
        assert!(matches!(evs.as_slice(), [Ev::Err(DecodeError::Parse(_))]));
        let evs = one(b"<html>hello</html>");
        assert!(matches!(evs.as_slice(), [Ev::Err(DecodeError::Parse(_))]));
        // Errors are sticky.
        let mut dec = ResponseDecoder::new(MAX);
        dec.push_expect(get());
        let mut buf = BytesMut::from(&b"nope\r\n\r\n"[..]);
        let e = dec.decode(&mut buf).unwrap_err();
        assert_eq!(
            dec.decode(&mut BytesMut::from(&b"HTTP/1.1 200 OK\r\n\r\n"[..]))
                .unwrap_err(),
            e
        );
        assert_eq!(dec.eof().unwrap_err(), e);
    }

    #[test]
    fn obs_text_reason_kept_raw() {
        let evs = one(b"HTTP/1.1 200 Tr\xe8s bien\r\ncontent-length: 0\r\n\r\n");
        assert_eq!(head_of(&evs[0]).reason, b"Tr\xe8s bien");
        let evs = one(b"HTTP/1.1 404\r\ncontent-length: 0\r\n\r\n");
        assert_eq!(head_of(&evs[0]).reason, b"");
        assert_eq!(head_of(&evs[0]).status, 404);
        let evs = one(b"HTTP/1.1 500 \r\ncontent-length: 0\r\n\r\n");
        assert_eq!(head_of(&evs[0]).reason, b"");
        // Leading empty lines (tolerated by httparse) do not shift the reason.
        let evs = one(b"\r\n\r\nHTTP/1.1 418 I'm a teapot\r\ncontent-length: 0\r\n\r\n");
        assert_eq!(head_of(&evs[0]).reason, b"I'm a teapot");
    }

    #[test]
    fn eof_mid_content_length() {
        let (evs, _) = run(
            &[get()],
            &[b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc"],
            true,
            MAX,
        );
        assert_eq!(evs[1], Ev::Body(b"abc".to_vec()));
        assert_eq!(
            evs[2],
            Ev::Err(DecodeError::ContentLengthMismatch {
                expected: 10,
                received: 3
            })
        );
        let (evs, _) = run(
            &[get()],
            &[b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n"],
            true,
            MAX,
        );
        assert_eq!(
            evs[1],
            Ev::Err(DecodeError::ContentLengthMismatch {
                expected: 10,
                received: 0
            })
        );
    }

    #[test]
    fn eof_mid_head_and_mid_chunked() {
        let (evs, _) = run(&[get()], &[b"HTTP/1.1 200 OK\r\nContent-"], true, MAX);
        assert_eq!(evs, vec![Ev::Err(DecodeError::Closed)]);
        let (evs, _) = run(&[get()], &[b"HTTP/1"], true, MAX);
        assert_eq!(evs, vec![Ev::Err(DecodeError::Closed)]);
        let chunked =
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n";
        // Every cut inside the body, including right before the final CRLF, is a close mid-body.
        let body_start = chunked.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
        for cut in body_start..chunked.len() {
            let (evs, _) = run(&[get()], &[&chunked[..cut]], true, MAX);
            assert_eq!(evs.last(), Some(&Ev::Err(DecodeError::Closed)), "cut {cut}");
        }
        // Idle with nothing received: a clean close, even with a request outstanding; the
        // connection layer decides what that means from pending().
        let (evs, _) = run(&[get()], &[], true, MAX);
        assert!(evs.is_empty());
    }

    #[test]
    fn empty_lines_before_a_status_line_are_ignored() {
        // A stray CRLF after a complete response, on an idle connection: consumed, no error.
        let (evs, rest) = run(
            &[get()],
            &[b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok\r\n"],
            false,
            MAX,
        );
        assert_eq!(evs.last(), Some(&Ev::End(None)));
        assert_eq!(evs.len(), 3);
        assert!(rest.is_empty(), "the CRLF is consumed");
        // The same CRLF in a later read, and empty lines (CRLF or bare LF) before the next
        // pipelined response, split at every point.
        let whole: &[u8] = b"HTTP/1.1 204 No Content\r\n\r\n\r\n\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx\r\n";
        for cut in 0..whole.len() {
            let (evs, rest) = run(&[get(), get()], &[&whole[..cut], &whole[cut..]], true, MAX);
            let ends = evs.iter().filter(|e| **e == Ev::End(None)).count();
            assert_eq!(ends, 2, "cut {cut}: {evs:?}");
            assert!(!evs.iter().any(|e| matches!(e, Ev::Err(_))), "cut {cut}: {evs:?}");
            assert!(rest.is_empty(), "cut {cut}");
        }
        // Without any request outstanding, lone empty lines are still fine.
        let mut dec = ResponseDecoder::new(MAX);
        let mut buf = BytesMut::from(&b"\r\n\n\r"[..]);
        assert!(dec.decode(&mut buf).unwrap().is_none());
        assert!(buf.is_empty());
        buf.extend_from_slice(b"\n");
        assert!(dec.decode(&mut buf).unwrap().is_none());
        assert!(dec.is_idle());
    }

    #[test]
    fn a_cr_not_followed_by_lf_fails_the_same_whole_or_split() {
        // Found by the fuzzer: split after the CR, the error differed from the whole feed's.
        let mut whole = ResponseDecoder::new(MAX);
        let mut buf = BytesMut::from(&b"\rHTTP/1.1 200 OK\r\n\r\n"[..]);
        let e1 = whole.decode(&mut buf).unwrap_err().to_string();
        let mut split = ResponseDecoder::new(MAX);
        let mut buf = BytesMut::from(&b"\r"[..]);
        assert!(split.decode(&mut buf).unwrap().is_none());
        buf.extend_from_slice(b"HTTP/1.1 200 OK\r\n\r\n");
        let e2 = split.decode(&mut buf).unwrap_err().to_string();
        assert_eq!(e1, e2);
        assert_eq!(e1, "HTTP parse error: invalid empty line");
    }

    #[test]
    fn other_stray_bytes_still_poison_an_idle_connection() {
        // After the empty line, anything else with no request outstanding is an error...
        let (evs, rest) = run(
            &[get()],
            &[b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n\r\nHTTP/1.1 200 OK\r\n\r\n"],
            false,
            MAX,
        );
        assert_eq!(evs[1], Ev::End(None));
        assert_eq!(evs[2], Ev::Err(DecodeError::Parse("response without a request")));
        assert_eq!(rest, b"HTTP/1.1 200 OK\r\n\r\n");
        // ...and so are a space, a tab or a bare CR followed by something other than LF.
        for junk in [&b" \r\n"[..], b"\t", b"\rX", b"\r\r\n", b"x\r\n"] {
            let mut dec = ResponseDecoder::new(MAX);
            let mut buf = BytesMut::from(junk);
            assert!(dec.decode(&mut buf).is_err(), "{junk:?}");
        }
        // A bare CR split from what follows it is caught on the next read.
        let mut dec = ResponseDecoder::new(MAX);
        dec.push_expect(get());
        let mut buf = BytesMut::from(&b"\r"[..]);
        assert!(dec.decode(&mut buf).unwrap().is_none());
        buf.extend_from_slice(b"HTTP/1.1 200 OK\r\n\r\n");
        assert_eq!(dec.decode(&mut buf).unwrap_err(), DecodeError::Parse("invalid empty line"));
    }

    #[test]
    fn response_without_request() {
        let mut dec = ResponseDecoder::new(MAX);
        let mut buf = BytesMut::from(&b"HTTP/1.1 200 OK\r\n\r\n"[..]);
        assert_eq!(
            dec.decode(&mut buf).unwrap_err(),
            DecodeError::Parse("response without a request")
        );
        // Extra bytes after the last expected response.
        let (evs, rest) = run(
            &[get()],
            &[b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\nHTTP/1.1 200 OK\r\n\r\n"],
            false,
            MAX,
        );
        assert_eq!(evs[1], Ev::End(None));
        assert_eq!(
            evs[2],
            Ev::Err(DecodeError::Parse("response without a request"))
        );
        assert_eq!(rest, b"HTTP/1.1 200 OK\r\n\r\n");
        // Empty buffer with nothing pending is fine.
        let mut dec = ResponseDecoder::new(MAX);
        assert!(dec.decode(&mut BytesMut::new()).unwrap().is_none());
    }

    #[test]
    fn keep_alive_rules() {
        let ka = |input: &[u8]| head_of(&one(input)[0]).keep_alive;
        assert!(ka(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"));
        assert!(!ka(
            b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"
        ));
        assert!(!ka(
            b"HTTP/1.1 200 OK\r\nConnection: Close\r\nContent-Length: 0\r\n\r\n"
        ));
        assert!(!ka(
            b"HTTP/1.1 200 OK\r\nconnection: Upgrade, CLOSE\r\nContent-Length: 0\r\n\r\n"
        ));
        assert!(!ka(b"HTTP/1.1 200 OK\r\nConnection: keep-alive\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"));
        assert!(ka(
            b"HTTP/1.1 200 OK\r\nConnection: closed\r\nContent-Length: 0\r\n\r\n"
        ));
        assert!(!ka(b"HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n"));
        assert!(ka(
            b"HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 0\r\n\r\n"
        ));
        assert!(!ka(
            b"HTTP/1.0 200 OK\r\nConnection: keep-alive, close\r\nContent-Length: 0\r\n\r\n"
        ));
        // Close-delimited never keeps the connection.
        assert!(!ka(b"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\n\r\n"));
        // Transfer-Encoding in HTTP/1.0 is untrustworthy framing (RFC 9112 §6.1).
        assert!(!ka(
            b"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nTransfer-Encoding: chunked\r\n\r\n"
        ));
        let evs = one(b"HTTP/1.0 200 OK\r\n\r\n");
        assert_eq!(head_of(&evs[0]).minor, 0);
    }

    #[test]
    fn keep_alive_timeout_hint() {
        let t = |v: &str| {
            let input = format!("HTTP/1.1 200 OK\r\nKeep-Alive: {v}\r\nContent-Length: 0\r\n\r\n");
            head_of(&one(input.as_bytes())[0]).timeout
        };
        assert_eq!(t("timeout=5, max=100"), Some(5000));
        assert_eq!(t("max=100, Timeout = 7"), Some(7000));
        assert_eq!(t("timeout=\"3\""), Some(3000));
        assert_eq!(t("timeout=0"), Some(0));
        assert_eq!(t("timeout=5s"), Some(5000), "a unit suffix after the digits");
        assert_eq!(t("timeout=12sec, max=3"), Some(12000));
        assert_eq!(t("timeout=abc"), None);
        assert_eq!(t("timeout=-1"), None);
        assert_eq!(t("timeout="), None);
        assert_eq!(t("max=5"), None);
        assert_eq!(t("timeout=99999999999999999999"), None);
        assert_eq!(t("timeout=18446744073709552"), None, "overflows once in ms");
        assert_eq!(
            head_of(&one(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")[0]).timeout,
            None
        );
    }

    #[test]
    fn header_block_accessors() {
        let mut dec = ResponseDecoder::new(MAX);
        dec.push_expect(get());
        let mut buf = BytesMut::from(&b"HTTP/1.1 200 OK\r\nA: 1\r\nb-B:\r\nC:\t3 \r\n\r\n"[..]);
        let head = match dec.decode(&mut buf).unwrap() {
            Some(Decoded::Head(h)) => h,
            other => panic!("{other:?}"),
        };
        let hb = &head.headers;
        assert_eq!(hb.len(), 3);
        assert!(!hb.is_empty());
        assert_eq!(hb.name(0), b"A");
        assert_eq!(hb.value(0), b"1");
        assert_eq!(hb.name(1), b"b-B");
        assert_eq!(hb.value(1), b"");
        assert_eq!(hb.value(2), b"3");
        assert_eq!(hb.name(3), b"");
        assert_eq!(hb.value(usize::MAX), b"");
        assert_eq!(hb.iter().count(), 3);
    }

    #[test]
    fn errors_display() {
        assert_eq!(DecodeError::Closed.to_string(), "other side closed");
        assert_eq!(
            DecodeError::Parse("invalid chunk").to_string(),
            "HTTP parse error: invalid chunk"
        );
        assert!(DecodeError::ContentLengthMismatch {
            expected: 5,
            received: 2
        }
        .to_string()
        .contains("expected 5"));
        assert_eq!(
            DecodeError::HeadersOverflow.to_string(),
            "response headers too large"
        );
        let _: &dyn std::error::Error = &DecodeError::Closed;
    }

    /// Representative inputs for the split tests: expects, bytes, whether eof ends them.
    fn corpus() -> Vec<(Vec<Expect>, Vec<u8>, bool)> {
        let head = Expect {
            head: true,
            ..Expect::default()
        };
        let up = Expect {
            upgrade: true,
            ..Expect::default()
        };
        let connect = Expect {
            connect: true,
            ..Expect::default()
        };
        vec![
            (vec![get()], b"HTTP/1.1 200 OK\r\nContent-Length: 11\r\nServer: t\r\n\r\nhello world".to_vec(), false),
            (
                vec![get()],
                b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4;a=b;c=\"d;e\"\r\nWiki\r\n5\r\npedia\r\nE\r\n in\r\n\r\nchunks.\r\n0\r\nExpires: never\r\nX-Sum: 1\r\n\r\n".to_vec(),
                false,
            ),
            (
                vec![get(), get()],
                b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabcHTTP/1.1 404 Not Found\r\ntransfer-encoding: chunked\r\n\r\n2\r\nno\r\n0\r\n\r\n".to_vec(),
                false,
            ),
            (
                vec![get(), head, get()],
                b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nokHTTP/1.1 200 OK\r\nContent-Length: 99\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n".to_vec(),
                false,
            ),
            (vec![get()], b"HTTP/1.0 200 OK\r\nKeep-Alive: timeout=5\r\n\r\nuntil the end".to_vec(), true),
            (vec![up], b"HTTP/1.1 103 Early\r\nLink: x\r\n\r\nHTTP/1.1 101 Switching\r\nUpgrade: ws\r\n\r\nframes".to_vec(), false),
            (vec![connect], b"HTTP/1.1 200 OK\r\n\r\ntunnel".to_vec(), false),
            (vec![get()], b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort".to_vec(), true),
        ]
    }

    #[test]
    fn every_split_point_matches_whole_feed() {
        for (expects, input, eof) in corpus() {
            let whole = run(&expects, &[&input], eof, MAX);
            assert!(
                !whole
                    .0
                    .iter()
                    .any(|e| matches!(e, Ev::Err(DecodeError::Parse(_)))),
                "{whole:?}"
            );
            for cut in 0..=input.len() {
                let split = run(&expects, &[&input[..cut], &input[cut..]], eof, MAX);
                assert_eq!(
                    split,
                    whole,
                    "cut at {cut} of {:?}",
                    String::from_utf8_lossy(&input)
                );
            }
            let pieces: Vec<&[u8]> = input.chunks(1).collect();
            assert_eq!(run(&expects, &pieces, eof, MAX), whole, "byte by byte");
        }
    }

    #[test]
    fn every_split_point_of_errors_matches_too() {
        // Errors must not depend on how the bytes arrive either.
        for input in [
            &b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhelloX"[..],
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
            b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
        ] {
            let whole = run(&[get()], &[input], true, MAX);
            for cut in 0..=input.len() {
                assert_eq!(
                    run(&[get()], &[&input[..cut], &input[cut..]], true, MAX),
                    whole,
                    "cut {cut}"
                );
            }
        }
    }

    #[test]
    fn data_is_not_copied_or_capped() {
        let mut input = b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n".to_vec();
        input.extend(std::iter::repeat_n(b'q', 100_000));
        let mut dec = ResponseDecoder::new(MAX);
        dec.push_expect(get());
        let mut buf = BytesMut::from(&input[..]);
        assert!(matches!(
            dec.decode(&mut buf).unwrap(),
            Some(Decoded::Head(_))
        ));
        let ptr = buf.as_ptr();
        match dec.decode(&mut buf).unwrap() {
            Some(Decoded::Data(d)) => {
                assert_eq!(d.len(), 100_000);
                assert_eq!(d.as_ptr(), ptr, "split off the input, not copied");
            }
            other => panic!("{other:?}"),
        }
    }

    /// xorshift64*: deterministic, dependency-free.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }
        fn below(&mut self, n: usize) -> usize {
            (self.next() % n.max(1) as u64) as usize
        }
    }

    /// Runs arbitrary bytes through a decoder in random pieces, with random expects; the only
    /// assertion is that nothing panics or loops, plus the Data invariant checked in `push`.
    fn fuzz_one(rng: &mut Rng, input: &[u8]) {
        let mut expects = Vec::new();
        for _ in 0..1 + rng.below(4) {
            let k = rng.next();
            expects.push(Expect {
                head: k & 1 != 0,
                connect: k & 6 == 6,
                upgrade: k & 24 == 24,
            });
        }
        let mut pieces = Vec::new();
        let mut at = 0;
        while at < input.len() {
            let n = 1 + rng.below(input.len() - at);
            pieces.push(&input[at..at + n]);
            at += n;
        }
        let max = [64, 512, MAX][rng.below(3)];
        let _ = run(&expects, &pieces, rng.next() & 1 == 0, max);
    }

    #[test]
    fn fuzz_random_bytes() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        const ALPHABET: &[u8] = b"HTTP/1.0 2345\r\n:;=\"\\,chunkedContent-LengthTransfer-Encoding \t0123456789abcdefABCDEF\x00\xff";
        for _ in 0..4000 {
            let len = rng.below(300);
            let biased = rng.next() & 1 == 0;
            let input: Vec<u8> = (0..len)
                .map(|_| {
                    if biased {
                        ALPHABET[rng.below(ALPHABET.len())]
                    } else {
                        rng.next() as u8
                    }
                })
                .collect();
            fuzz_one(&mut rng, &input);
            // Random garbage after a valid head reaches the body/chunk states too.
            let mut framed = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
            framed.extend_from_slice(&input);
            fuzz_one(&mut rng, &framed);
        }
    }

    #[test]
    fn fuzz_mutated_valid_responses() {
        let mut rng = Rng(0x1234_5678_9abc_def1);
        let seeds: Vec<Vec<u8>> = corpus().into_iter().map(|(_, b, _)| b).collect();
        const INTERESTING: &[u8] = b"\r\n:;=\" 0fF,\t\x00\x7f\x80\xff";
        for i in 0..6000 {
            let mut input = seeds[i % seeds.len()].clone();
            for _ in 0..1 + rng.below(4) {
                let pos = rng.below(input.len() + 1);
                match rng.below(5) {
                    0 if pos < input.len() => input[pos] = rng.next() as u8,
                    1 if pos < input.len() => {
                        input[pos] = INTERESTING[rng.below(INTERESTING.len())]
                    }
                    2 if pos < input.len() => {
                        input.remove(pos);
                    }
                    3 => input.insert(pos, INTERESTING[rng.below(INTERESTING.len())]),
                    _ => {
                        // Duplicate a slice: repeats headers, chunks and whole responses.
                        let end = (pos + rng.below(40)).min(input.len());
                        let dup = input[pos..end].to_vec();
                        let at = rng.below(input.len() + 1);
                        input.splice(at..at, dup);
                    }
                }
            }
            fuzz_one(&mut rng, &input);
        }
    }
}
