//! HTTP/1.1 response decoding, sans-IO: the state machine.
//!
//! The connection pushes one `Expect` per request it writes, appends socket bytes to a `BytesMut`
//! and calls `decode` until it returns `Ok(None)`. Heads are parsed by httparse (`head.rs`); body
//! framing (RFC 9112 §6.3, `body.rs`), chunked decoding and the smuggling defences are ours.
//! Payload is split off the input buffer, never copied.
use super::body::{parse_chunk_line, take_body};
pub use super::error::DecodeError;
use super::head::{
    heap_header_count, parse_fields, parse_response, Facts, FieldRanges, Parsed, RawHead,
    STACK_HEADERS,
};
pub use super::head::{Head, HeaderBlock};
use bytes::{Buf, Bytes, BytesMut};
use std::collections::VecDeque;
use std::fmt;

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

#[derive(Debug)]
enum State {
    /// Waiting for a status line (possibly after 1xx heads).
    Head,
    Length {
        remaining: u64,
        expected: u64,
        /// The response keeps the connection open: a close before the body's end is then the
        /// peer going away (`Closed`, undici's "other side closed"), not a framing mismatch.
        keep_alive: bool,
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
    /// The field list of a head the connection is done with (`recycle`), for the next head.
    spare: FieldRanges,
}

/// Field lists up to this many fields are kept for reuse; a larger one is let go.
const SPARE_FIELDS: usize = 64;

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
            spare: Vec::new(),
        }
    }

    /// Takes back a head's header block once its fields were read: the next head fills the
    /// same field list instead of allocating one.
    pub fn recycle(&mut self, headers: HeaderBlock) {
        if self.spare.capacity() == 0 && headers.fields.capacity() <= SPARE_FIELDS {
            self.spare = headers.fields;
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
            State::Length { keep_alive: true, .. } => Err(DecodeError::Closed),
            State::Length { remaining, expected, keep_alive: false } => {
                Err(DecodeError::ContentLengthMismatch {
                    expected: *expected,
                    received: expected.saturating_sub(*remaining),
                })
            }
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
    #[cfg(test)]
    pub fn is_idle(&self) -> bool {
        matches!(self.state, State::Head) && !self.head_partial && !self.informational
    }

    /// Responses still expected: pushed Expects whose End (or Upgrade) has not been returned.
    #[cfg(test)]
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
                State::Length { remaining, expected, keep_alive } => {
                    if buf.is_empty() {
                        return Ok(None);
                    }
                    let (data, left) = take_body(buf, remaining);
                    self.state = if left == 0 {
                        State::EndNow
                    } else {
                        State::Length { remaining: left, expected, keep_alive }
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
            parse_response(window, &mut headers, &mut self.spare)?
        };
        let parsed = match parsed {
            Parsed::TooManyHeaders => {
                self.many_headers = true;
                let mut headers = vec![httparse::EMPTY_HEADER; heap_header_count(window.len())];
                parse_response(window, &mut headers, &mut self.spare)?
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
        let headers = HeaderBlock { block, fields: raw.fields };
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
            return Err(DecodeError::Parse("content-length and transfer-encoding both present"));
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
                State::Length { remaining: n, expected: n, keep_alive: head.keep_alive }
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
        let trailers = if fields.is_empty() { None } else { Some(HeaderBlock { block, fields }) };
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
