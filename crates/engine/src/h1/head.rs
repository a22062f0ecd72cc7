//! Response heads: the status line and header fields as httparse finds them, kept as ranges into
//! one refcounted block, and the framing facts (content-length, transfer-encoding, connection,
//! keep-alive) gathered from them in one pass.
use super::error::DecodeError;
use bytes::Bytes;
use std::ops::Range;

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
        self.fields.iter().map(move |(n, v)| (self.slice(n), self.slice(v)))
    }

    fn slice(&self, r: &Range<u32>) -> &[u8] {
        self.block.get(r.start as usize..r.end as usize).unwrap_or(&[])
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

/// Heads with more fields than this take the (allocating) slow path.
pub(super) const STACK_HEADERS: usize = 128;
/// Upper bound on fields in one head or trailer block, whatever `max_header_size` is, so a huge
/// limit cannot turn into a huge allocation.
pub(super) const MAX_HEADERS: usize = 1 << 16;

/// A successfully parsed head, as ranges into the bytes it came from.
pub(super) struct RawHead {
    pub(super) len: usize,
    pub(super) version_minor: u8,
    pub(super) status: u16,
    pub(super) reason: Range<u32>,
    pub(super) fields: FieldRanges,
}

pub(super) enum Parsed<T> {
    Complete(T),
    Partial,
    TooManyHeaders,
}

/// Framing-relevant facts gathered from a header block in one pass.
#[derive(Default)]
pub(super) struct Facts {
    pub(super) content_length: Option<u64>,
    /// Set when the content-length fields are unusable; not reported for tunnels (101, 2xx to
    /// CONNECT), whose CL the client must ignore.
    pub(super) cl_error: Option<&'static str>,
    pub(super) transfer_encoding: bool,
    pub(super) chunked_last: bool,
    pub(super) conn_close: bool,
    pub(super) conn_keep_alive: bool,
    pub(super) keep_alive_timeout_ms: Option<u64>,
}

/// Enough header slots for any block of `len` bytes (a field line is at least `a:` + LF), capped.
pub(super) fn heap_header_count(len: usize) -> usize {
    (len / 3 + 1).min(MAX_HEADERS)
}

pub(super) fn map_httparse_error(e: httparse::Error) -> DecodeError {
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
pub(super) fn sub_range(whole: &[u8], part: &[u8]) -> Result<Range<u32>, DecodeError> {
    let start = (part.as_ptr() as usize).wrapping_sub(whole.as_ptr() as usize);
    let end = start.checked_add(part.len()).filter(|&e| e <= whole.len());
    match (u32::try_from(start), end.and_then(|e| u32::try_from(e).ok())) {
        (Ok(s), Some(e)) if s <= e => Ok(s..e),
        _ => Err(DecodeError::Parse("invalid header")),
    }
}

/// (name, value) ranges into a block, as stored in `HeaderBlock::fields`.
pub(super) type FieldRanges = Vec<(Range<u32>, Range<u32>)>;

/// Fills `fields` (cleared first: the decoder hands in the vector of an earlier head, so a
/// response costs no allocation for its field list) and returns it.
pub(super) fn field_ranges(
    whole: &[u8],
    headers: &[httparse::Header<'_>],
    mut fields: FieldRanges,
) -> Result<FieldRanges, DecodeError> {
    fields.clear();
    fields.reserve(headers.len());
    for h in headers {
        // httparse trims the value's leading OWS (and, in recent versions, trailing OWS too);
        // trimming again keeps the contract independent of the httparse version.
        fields.push((sub_range(whole, h.name.as_bytes())?, sub_range(whole, trim_ows(h.value))?));
    }
    Ok(fields)
}

/// `spare`: a field list to fill (see `field_ranges`); taken only when the head is complete.
pub(super) fn parse_response<'b>(
    bytes: &'b [u8],
    headers: &mut [httparse::Header<'b>],
    spare: &mut FieldRanges,
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
    let fields = field_ranges(head, res.headers, std::mem::take(spare))?;
    Ok(Parsed::Complete(RawHead { len, version_minor, status, reason: reason_range(head), fields }))
}

pub(super) fn parse_fields<'b>(
    bytes: &'b [u8],
    headers: &mut [httparse::Header<'b>],
) -> Result<Parsed<(usize, FieldRanges)>, DecodeError> {
    match httparse::parse_headers(bytes, headers) {
        Ok(httparse::Status::Complete((len, parsed))) => {
            let block = bytes.get(..len).unwrap_or(bytes);
            Ok(Parsed::Complete((len, field_ranges(block, parsed, Vec::new())?)))
        }
        Ok(httparse::Status::Partial) => Ok(Parsed::Partial),
        Err(httparse::Error::TooManyHeaders) => Ok(Parsed::TooManyHeaders),
        Err(_) => Err(DecodeError::Parse("invalid trailer")),
    }
}

/// The raw reason phrase. httparse replaces a phrase containing obs-text by "", but the status
/// message is reported as sent, so it is located again in the validated status line:
/// `HTTP/1.x SP 3DIGIT [SP reason] (CR)LF`, possibly after empty lines httparse skipped.
pub(super) fn reason_range(head: &[u8]) -> Range<u32> {
    let start = head.iter().position(|&b| b != b'\r' && b != b'\n').unwrap_or(head.len());
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

pub(super) fn trim_ows(mut s: &[u8]) -> &[u8] {
    while let [b' ' | b'\t', rest @ ..] = s {
        s = rest;
    }
    while let [rest @ .., b' ' | b'\t'] = s {
        s = rest;
    }
    s
}

/// Non-empty elements of a comma-separated list, trimmed.
pub(super) fn list_elements(v: &[u8]) -> impl Iterator<Item = &[u8]> {
    v.split(|&b| b == b',').map(trim_ows).filter(|e| !e.is_empty())
}

/// `1*DIGIT` as u64; None on anything else, including overflow.
pub(super) fn parse_decimal(s: &[u8]) -> Option<u64> {
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
    pub(super) fn gather(headers: &HeaderBlock) -> Facts {
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

    pub(super) fn add_content_length(&mut self, value: &[u8]) {
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
pub(super) fn parse_keep_alive_timeout(value: &[u8]) -> Option<u64> {
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
