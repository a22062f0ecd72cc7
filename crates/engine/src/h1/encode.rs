//! HTTP/1.1 request-head encoding.
//!
//! The JS side hands over one packed string per request (`METHOD\0PATH\0name\0value...`) so the
//! boundary carries a single string instead of an array of objects. This module validates it and
//! writes the wire form in one pass, straight into the connection's output buffer.
//!
//! The string's code points are the bytes to send (latin1, as undici writes heads): JS has refused
//! anything above U+00FF, and a code point U+0080–U+00FF goes out as the one byte of that value,
//! never as its two UTF-8 bytes (DESIGN §5).

use super::token::is_token;
use std::borrow::Cow;
use std::fmt;

/// How the request body is delimited on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodyFraming {
    /// No body: neither `content-length` nor `transfer-encoding` is written.
    None,
    /// A body of exactly this many bytes.
    Length(u64),
    /// A body of unknown length, sent with `encode_chunk` and ended with `LAST_CHUNK`.
    Chunked,
}

/// What the decoder must know about the request to frame its response.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RequestKind {
    /// The method is `HEAD`: the response has no body whatever its headers say.
    pub head: bool,
    /// The method is `CONNECT`: a 2xx response turns the connection into a tunnel.
    pub connect: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EncodeError {
    InvalidMethod,
    InvalidPath,
    /// Carries the offending name.
    InvalidHeaderName(String),
    /// Carries the header's *name*, not its value: values may be secrets and may be large.
    InvalidHeaderValue(String),
    /// The packed string is not `METHOD\0PATH(\0name\0value)*\0?`.
    Malformed,
}

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EncodeError::InvalidMethod => f.write_str("invalid method"),
            EncodeError::InvalidPath => f.write_str("invalid request path"),
            EncodeError::InvalidHeaderName(n) => write!(f, "invalid header name: {n}"),
            EncodeError::InvalidHeaderValue(n) => write!(f, "invalid header value for: {n}"),
            EncodeError::Malformed => f.write_str("malformed request head"),
        }
    }
}

impl std::error::Error for EncodeError {}

/// The terminating chunk of a chunked body (no trailers).
pub const LAST_CHUNK: &[u8] = b"0\r\n\r\n";

#[inline]
fn is_valid_path(s: &[u8]) -> bool {
    // Anything at or below SP (controls, SP itself) or DEL would let the path escape the
    // request line; everything else (including raw non-ASCII) is the JS side's business.
    !s.is_empty() && s.iter().all(|&b| b > 0x20 && b != 0x7f)
}

#[inline]
fn is_valid_value(s: &[u8]) -> bool {
    // CR/LF would inject header lines; NUL cannot occur (it is the separator) but is checked
    // anyway so the function stands on its own.
    !s.iter().any(|&b| b == b'\r' || b == b'\n' || b == 0)
}

/// `s` as the bytes its code points name, or None when one is above U+00FF. Borrowed when ASCII,
/// which nearly every head is.
pub fn latin1(s: &str) -> Option<Cow<'_, [u8]>> {
    if s.is_ascii() {
        return Some(Cow::Borrowed(s.as_bytes()));
    }
    s.chars().map(|c| u8::try_from(c).ok()).collect::<Option<Vec<u8>>>().map(Cow::Owned)
}

/// Appends `s` as latin1 bytes (see `latin1`); false, appending nothing, for a code point above U+00FF.
fn push_latin1(out: &mut Vec<u8>, s: &str) -> bool {
    if s.is_ascii() {
        out.extend_from_slice(s.as_bytes());
        return true;
    }
    let start = out.len();
    for c in s.chars() {
        let Ok(b) = u8::try_from(c) else {
            out.truncate(start);
            return false;
        };
        out.push(b);
    }
    true
}

/// Appends the decimal form of `n` without allocating.
fn push_decimal(out: &mut Vec<u8>, mut n: u64) {
    let mut tmp = [0u8; 20];
    let mut i = tmp.len();
    loop {
        i -= 1;
        tmp[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&tmp[i..]);
}

/// Appends the lowercase hexadecimal form of `n` without allocating.
fn push_hex(out: &mut Vec<u8>, mut n: u64) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut tmp = [0u8; 16];
    let mut i = tmp.len();
    loop {
        i -= 1;
        tmp[i] = DIGITS[(n & 0xf) as usize];
        n >>= 4;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&tmp[i..]);
}

/// Encodes a request head from the packed `METHOD\0PATH\0name\0value...` form.
///
/// Header pairs are written in the given order, undici's: a leading `host` pair, then
/// `connection` (`close` when `reset`), then the rest, then the framing header. A `connection`
/// pair right after `host` replaces the default line, as an upgrade's `connection: upgrade` does.
/// On error `out` is restored to its previous length.
pub fn encode_request_head(
    packed: &str,
    framing: BodyFraming,
    reset: bool,
    out: &mut Vec<u8>,
) -> Result<RequestKind, EncodeError> {
    let start = out.len();
    let res = write_head(packed, framing, reset, out);
    if res.is_err() {
        out.truncate(start);
    }
    res
}

fn write_head(
    packed: &str,
    framing: BodyFraming,
    reset: bool,
    out: &mut Vec<u8>,
) -> Result<RequestKind, EncodeError> {
    // Every `\0` becomes at most two bytes; the fixed parts fit in the slack. One reserve keeps
    // the common case to a single growth.
    out.reserve(packed.len() + 128);

    let mut fields = packed.split('\0');

    let method = fields.next().unwrap_or("").as_bytes();
    if !is_token(method) {
        return Err(EncodeError::InvalidMethod);
    }
    let path = match fields.next() {
        Some(p) => p,
        None => return Err(EncodeError::Malformed),
    };
    if !is_valid_path(path.as_bytes()) {
        return Err(EncodeError::InvalidPath);
    }
    out.extend_from_slice(method);
    out.push(b' ');
    if !push_latin1(out, path) {
        return Err(EncodeError::InvalidPath);
    }
    out.extend_from_slice(b" HTTP/1.1\r\n");

    // The default `connection` line is still to be written (it goes after a leading `host`).
    let mut connection_due = true;
    let mut first = true;
    while let Some(name) = fields.next() {
        let value = match fields.next() {
            Some(v) => v,
            // A lone empty field at the end is the optional trailing separator.
            None if name.is_empty() => break,
            None => return Err(EncodeError::Malformed),
        };
        if !is_token(name.as_bytes()) {
            return Err(EncodeError::InvalidHeaderName(name.to_owned()));
        }
        if !is_valid_value(value.as_bytes()) {
            return Err(EncodeError::InvalidHeaderValue(name.to_owned()));
        }
        if connection_due && !(first && name == "host") {
            if name != "connection" {
                push_connection(out, reset);
            }
            connection_due = false;
        }
        first = false;
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(b": ");
        if !push_latin1(out, value) {
            return Err(EncodeError::InvalidHeaderValue(name.to_owned()));
        }
        out.extend_from_slice(b"\r\n");
    }

    if connection_due {
        push_connection(out, reset);
    }
    match framing {
        BodyFraming::None => {}
        BodyFraming::Length(n) => {
            out.extend_from_slice(b"content-length: ");
            push_decimal(out, n);
            out.extend_from_slice(b"\r\n");
        }
        BodyFraming::Chunked => out.extend_from_slice(b"transfer-encoding: chunked\r\n"),
    }
    out.extend_from_slice(b"\r\n");

    Ok(RequestKind { head: method == b"HEAD", connect: method == b"CONNECT" })
}

fn push_connection(out: &mut Vec<u8>, reset: bool) {
    out.extend_from_slice(if reset {
        b"connection: close\r\n".as_slice()
    } else {
        b"connection: keep-alive\r\n".as_slice()
    });
}

/// Appends one chunk of a chunked body. Empty data writes nothing: a zero-size chunk would end
/// the body, which only `LAST_CHUNK` may do.
pub fn encode_chunk(data: &[u8], out: &mut Vec<u8>) {
    if data.is_empty() {
        return;
    }
    out.reserve(data.len() + 20);
    push_hex(out, data.len() as u64);
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(data);
    out.extend_from_slice(b"\r\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enc(
        packed: &str,
        framing: BodyFraming,
        reset: bool,
    ) -> Result<(String, RequestKind), EncodeError> {
        let mut out = Vec::new();
        let k = encode_request_head(packed, framing, reset, &mut out)?;
        Ok((String::from_utf8(out).unwrap(), k))
    }

    #[test]
    fn get_exact_bytes() {
        let (s, k) =
            enc("GET\0/index.html?a=1\0host\0example.com\0accept\0*/*", BodyFraming::None, false)
                .unwrap();
        assert_eq!(
            s,
            "GET /index.html?a=1 HTTP/1.1\r\nhost: example.com\r\nconnection: keep-alive\r\naccept: */*\r\n\r\n"
        );
        assert_eq!(k, RequestKind::default());
    }

    #[test]
    fn trailing_separator_allowed() {
        let a = enc("GET\0/\0host\0h\0", BodyFraming::None, false).unwrap();
        let b = enc("GET\0/\0host\0h", BodyFraming::None, false).unwrap();
        assert_eq!(a, b);
        // No header pairs at all, with and without the trailing separator.
        let (s, _) = enc("GET\0/", BodyFraming::None, false).unwrap();
        assert_eq!(s, "GET / HTTP/1.1\r\nconnection: keep-alive\r\n\r\n");
        let (s2, _) = enc("GET\0/\0", BodyFraming::None, false).unwrap();
        assert_eq!(s, s2);
    }

    #[test]
    fn empty_value_allowed() {
        let (s, _) = enc("GET\0/\0host\0h\0x-empty\0", BodyFraming::None, false).unwrap();
        assert_eq!(s, "GET / HTTP/1.1\r\nhost: h\r\nconnection: keep-alive\r\nx-empty: \r\n\r\n");
        let (s2, _) = enc("GET\0/\0host\0h\0x-empty\0\0", BodyFraming::None, false).unwrap();
        assert_eq!(s, s2);
    }

    #[test]
    fn post_with_length() {
        let (s, k) = enc(
            "POST\0/submit\0host\0a.b\0content-type\0text/plain",
            BodyFraming::Length(12),
            false,
        )
        .unwrap();
        assert_eq!(
            s,
            "POST /submit HTTP/1.1\r\nhost: a.b\r\nconnection: keep-alive\r\ncontent-type: text/plain\r\ncontent-length: 12\r\n\r\n"
        );
        assert_eq!(k, RequestKind::default());
        let (s, _) = enc("PUT\0/\0host\0a", BodyFraming::Length(0), false).unwrap();
        assert!(s.ends_with("content-length: 0\r\n\r\n"));
        let (s, _) = enc("PUT\0/\0host\0a", BodyFraming::Length(u64::MAX), false).unwrap();
        assert!(s.ends_with("content-length: 18446744073709551615\r\n\r\n"));
    }

    #[test]
    fn chunked_and_reset() {
        let (s, _) = enc("POST\0/up\0host\0h", BodyFraming::Chunked, true).unwrap();
        assert_eq!(
            s,
            "POST /up HTTP/1.1\r\nhost: h\r\nconnection: close\r\ntransfer-encoding: chunked\r\n\r\n"
        );
    }

    #[test]
    fn explicit_connection_header_replaces_the_default() {
        let mut out = Vec::new();
        encode_request_head(
            "GET\0/ws\0host\0h\0connection\0upgrade\0upgrade\0websocket\0x-a\01\0",
            BodyFraming::None,
            false,
            &mut out,
        )
        .unwrap();
        assert_eq!(out, b"GET /ws HTTP/1.1\r\nhost: h\r\nconnection: upgrade\r\nupgrade: websocket\r\nx-a: 1\r\n\r\n");
    }

    #[test]
    fn connection_goes_after_host_whatever_follows() {
        // undici's order: host, connection, the caller's headers, the framing header.
        let (s, _) = enc("PUT\0/\0host\0h\0x-a\01\0x-b\02", BodyFraming::Length(3), true).unwrap();
        assert_eq!(
            s,
            "PUT / HTTP/1.1\r\nhost: h\r\nconnection: close\r\nx-a: 1\r\nx-b: 2\r\ncontent-length: 3\r\n\r\n"
        );
        // Without a host pair it leads the headers.
        let (s, _) = enc("GET\0/\0x-a\01", BodyFraming::None, false).unwrap();
        assert_eq!(s, "GET / HTTP/1.1\r\nconnection: keep-alive\r\nx-a: 1\r\n\r\n");
        // A host pair later on is just a header: the default still leads.
        let (s, _) = enc("GET\0/\0x-a\01\0host\0h", BodyFraming::None, false).unwrap();
        assert_eq!(s, "GET / HTTP/1.1\r\nconnection: keep-alive\r\nx-a: 1\r\nhost: h\r\n\r\n");
    }

    #[test]
    fn reset_without_body() {
        let (s, _) = enc("DELETE\0/x\0host\0h", BodyFraming::None, true).unwrap();
        assert_eq!(s, "DELETE /x HTTP/1.1\r\nhost: h\r\nconnection: close\r\n\r\n");
    }

    #[test]
    fn request_kind() {
        assert_eq!(
            enc("HEAD\0/\0host\0h", BodyFraming::None, false).unwrap().1,
            RequestKind { head: true, connect: false }
        );
        let (s, k) =
            enc("CONNECT\0example.com:443\0host\0example.com:443", BodyFraming::None, false)
                .unwrap();
        assert_eq!(k, RequestKind { head: false, connect: true });
        assert!(s.starts_with("CONNECT example.com:443 HTTP/1.1\r\n"));
        // Methods are case-sensitive: lowercase `head` is an extension method, not HEAD.
        assert_eq!(enc("head\0/", BodyFraming::None, false).unwrap().1, RequestKind::default());
    }

    #[test]
    fn obs_text_and_tab_in_values() {
        let mut out = Vec::new();
        encode_request_head(
            "GET\0/\u{e5}\0x-a\0caf\u{e9}\tb\u{ff}\u{80}",
            BodyFraming::None,
            false,
            &mut out,
        )
        .unwrap();
        // One byte per code point (latin1), not UTF-8's two.
        assert!(out.starts_with(b"GET /\xe5 HTTP/1.1\r\n"));
        let line = b"x-a: caf\xe9\tb\xff\x80\r\n";
        assert!(out.windows(line.len()).any(|w| w == line));
    }

    #[test]
    fn code_points_above_u00ff_are_refused() {
        use EncodeError::*;
        let e = |p: &str| enc(p, BodyFraming::None, false).unwrap_err();
        assert_eq!(e("GET\0/\0x\0\u{100}"), InvalidHeaderValue("x".into()));
        assert_eq!(e("GET\0/\0x\0ok \u{20ac}"), InvalidHeaderValue("x".into()));
        assert_eq!(e("GET\0/\u{1f600}"), InvalidPath);
        assert_eq!(latin1("a\u{e5}").as_deref(), Some(&b"a\xe5"[..]));
        assert_eq!(latin1("\u{101}"), None);
    }

    #[test]
    fn validation_errors() {
        use EncodeError::*;
        let e = |p: &str| enc(p, BodyFraming::None, false).unwrap_err();
        assert_eq!(e(""), InvalidMethod);
        assert_eq!(e("\0/"), InvalidMethod);
        assert_eq!(e("G T\0/"), InvalidMethod);
        assert_eq!(e("GET(\0/"), InvalidMethod);
        assert_eq!(e("GET"), Malformed);
        assert_eq!(e("GET\0"), InvalidPath);
        assert_eq!(e("GET\0/a b"), InvalidPath);
        assert_eq!(e("GET\0/a\tb"), InvalidPath);
        assert_eq!(e("GET\0/a\rb"), InvalidPath);
        assert_eq!(e("GET\0/a\x7f"), InvalidPath);
        assert_eq!(e("GET\0/\0host"), Malformed);
        assert_eq!(e("GET\0/\0host\0h\0x"), Malformed);
        assert_eq!(e("GET\0/\0\0v"), InvalidHeaderName(String::new()));
        assert_eq!(e("GET\0/\0\0"), InvalidHeaderName(String::new()));
        assert_eq!(e("GET\0/\0x y\0v"), InvalidHeaderName("x y".into()));
        assert_eq!(e("GET\0/\0x:y\0v"), InvalidHeaderName("x:y".into()));
        assert_eq!(e("GET\0/\0caf\u{e9}\0v"), InvalidHeaderName("caf\u{e9}".into()));
        assert_eq!(e("GET\0/\0x\0a\r\nevil: 1"), InvalidHeaderValue("x".into()));
        assert_eq!(e("GET\0/\0x\0a\nb"), InvalidHeaderValue("x".into()));
        assert_eq!(e("GET\0/\0x\0a\rb"), InvalidHeaderValue("x".into()));
    }

    #[test]
    fn error_messages() {
        assert_eq!(
            EncodeError::InvalidHeaderName("x y".into()).to_string(),
            "invalid header name: x y"
        );
        assert_eq!(
            EncodeError::InvalidHeaderValue("x".into()).to_string(),
            "invalid header value for: x"
        );
        assert_eq!(EncodeError::InvalidMethod.to_string(), "invalid method");
        assert_eq!(EncodeError::InvalidPath.to_string(), "invalid request path");
        assert_eq!(EncodeError::Malformed.to_string(), "malformed request head");
        let _: &dyn std::error::Error = &EncodeError::Malformed;
    }

    #[test]
    fn out_untouched_on_error() {
        let mut out = b"previous bytes".to_vec();
        for bad in [
            "GET\0/\0host\0h\0bad name\0v",
            "GET\0/\0host\0h\0x\0a\rb",
            "GET\0/\0host\0h\0dangling",
            "GET\0/ x",
        ] {
            let err = encode_request_head(bad, BodyFraming::Chunked, false, &mut out);
            assert!(err.is_err(), "{bad:?}");
            assert_eq!(out, b"previous bytes");
        }
        // And it appends (does not overwrite) on success.
        encode_request_head("GET\0/", BodyFraming::None, false, &mut out).unwrap();
        assert!(out.starts_with(b"previous bytesGET / HTTP/1.1\r\n"));
    }

    #[test]
    fn chunks() {
        let mut out = Vec::new();
        encode_chunk(b"", &mut out);
        assert!(out.is_empty());
        encode_chunk(b"hello", &mut out);
        assert_eq!(out, b"5\r\nhello\r\n");
        out.clear();
        let big = vec![b'x'; 0x1a2b];
        encode_chunk(&big, &mut out);
        assert!(out.starts_with(b"1a2b\r\nxxx"));
        assert!(out.ends_with(b"x\r\n"));
        assert_eq!(out.len(), 4 + 2 + 0x1a2b + 2);
        assert_eq!(LAST_CHUNK, b"0\r\n\r\n");
    }

    #[test]
    fn decimal_and_hex() {
        for n in [0u64, 1, 9, 10, 99, 100, 12345, u64::MAX] {
            let mut v = Vec::new();
            push_decimal(&mut v, n);
            assert_eq!(v, n.to_string().as_bytes());
            let mut h = Vec::new();
            push_hex(&mut h, n);
            assert_eq!(h, format!("{n:x}").as_bytes());
        }
    }
}
