//! HTTP/1.1 request-head encoding: a checked `Head` (request/head.rs) written out in one pass,
//! straight into the connection's output buffer. Nothing here can fail: the head's bytes were
//! checked when JS dispatched the request, and they are the wire's (latin1, as undici writes heads).

use crate::request::Head;

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

/// The terminating chunk of a chunked body (no trailers).
pub const LAST_CHUNK: &[u8] = b"0\r\n\r\n";

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

/// Appends a request head.
///
/// Header pairs are written in the given order, undici's: a leading `host` pair, then
/// `connection` (`close` when `reset`), then the rest, then the framing header. A `connection`
/// pair right after `host` replaces the default line, as an upgrade's `connection: upgrade` does.
pub fn encode_request_head(
    head: &Head,
    framing: BodyFraming,
    reset: bool,
    out: &mut Vec<u8>,
) -> RequestKind {
    // Each separator becomes at most two bytes; the fixed parts fit in the slack. One reserve
    // keeps the common case to a single growth.
    out.reserve(head.packed_len() + 128);

    let method = head.method();
    out.extend_from_slice(method);
    out.push(b' ');
    out.extend_from_slice(head.path());
    out.extend_from_slice(b" HTTP/1.1\r\n");

    // The default `connection` line is still to be written (it goes after a leading `host`).
    let mut connection_due = true;
    let mut first = true;
    for (name, value) in head.fields() {
        if connection_due && !(first && name == b"host") {
            if name != b"connection" {
                push_connection(out, reset);
            }
            connection_due = false;
        }
        first = false;
        out.extend_from_slice(name);
        out.extend_from_slice(b": ");
        out.extend_from_slice(value);
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

    RequestKind { head: method == b"HEAD", connect: method == b"CONNECT" }
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

    fn enc(packed: &str, framing: BodyFraming, reset: bool) -> (String, RequestKind) {
        let head = Head::parse(packed.as_bytes().to_vec()).unwrap();
        let mut out = Vec::new();
        let k = encode_request_head(&head, framing, reset, &mut out);
        (String::from_utf8(out).unwrap(), k)
    }

    #[test]
    fn get_exact_bytes() {
        let (s, k) =
            enc("GET\0/index.html?a=1\0host\0example.com\0accept\0*/*", BodyFraming::None, false);
        assert_eq!(
            s,
            "GET /index.html?a=1 HTTP/1.1\r\nhost: example.com\r\nconnection: keep-alive\r\naccept: */*\r\n\r\n"
        );
        assert_eq!(k, RequestKind::default());
    }

    #[test]
    fn trailing_separator_allowed() {
        let a = enc("GET\0/\0host\0h\0", BodyFraming::None, false);
        let b = enc("GET\0/\0host\0h", BodyFraming::None, false);
        assert_eq!(a, b);
        // No header pairs at all, with and without the trailing separator.
        let (s, _) = enc("GET\0/", BodyFraming::None, false);
        assert_eq!(s, "GET / HTTP/1.1\r\nconnection: keep-alive\r\n\r\n");
        let (s2, _) = enc("GET\0/\0", BodyFraming::None, false);
        assert_eq!(s, s2);
    }

    #[test]
    fn empty_value_allowed() {
        let (s, _) = enc("GET\0/\0host\0h\0x-empty\0", BodyFraming::None, false);
        assert_eq!(s, "GET / HTTP/1.1\r\nhost: h\r\nconnection: keep-alive\r\nx-empty: \r\n\r\n");
        let (s2, _) = enc("GET\0/\0host\0h\0x-empty\0\0", BodyFraming::None, false);
        assert_eq!(s, s2);
    }

    #[test]
    fn post_with_length() {
        let (s, k) = enc(
            "POST\0/submit\0host\0a.b\0content-type\0text/plain",
            BodyFraming::Length(12),
            false,
        );
        assert_eq!(
            s,
            "POST /submit HTTP/1.1\r\nhost: a.b\r\nconnection: keep-alive\r\ncontent-type: text/plain\r\ncontent-length: 12\r\n\r\n"
        );
        assert_eq!(k, RequestKind::default());
        let (s, _) = enc("PUT\0/\0host\0a", BodyFraming::Length(0), false);
        assert!(s.ends_with("content-length: 0\r\n\r\n"));
        let (s, _) = enc("PUT\0/\0host\0a", BodyFraming::Length(u64::MAX), false);
        assert!(s.ends_with("content-length: 18446744073709551615\r\n\r\n"));
    }

    #[test]
    fn chunked_and_reset() {
        let (s, _) = enc("POST\0/up\0host\0h", BodyFraming::Chunked, true);
        assert_eq!(
            s,
            "POST /up HTTP/1.1\r\nhost: h\r\nconnection: close\r\ntransfer-encoding: chunked\r\n\r\n"
        );
    }

    #[test]
    fn explicit_connection_header_replaces_the_default() {
        let mut out = Vec::new();
        encode_request_head(
            &"GET\0/ws\0host\0h\0connection\0upgrade\0upgrade\0websocket\0x-a\x001\0".into(),
            BodyFraming::None,
            false,
            &mut out,
        );
        assert_eq!(out, b"GET /ws HTTP/1.1\r\nhost: h\r\nconnection: upgrade\r\nupgrade: websocket\r\nx-a: 1\r\n\r\n");
    }

    #[test]
    fn connection_goes_after_host_whatever_follows() {
        // undici's order: host, connection, the caller's headers, the framing header.
        let (s, _) = enc("PUT\0/\0host\0h\0x-a\x001\0x-b\x002", BodyFraming::Length(3), true);
        assert_eq!(
            s,
            "PUT / HTTP/1.1\r\nhost: h\r\nconnection: close\r\nx-a: 1\r\nx-b: 2\r\ncontent-length: 3\r\n\r\n"
        );
        // Without a host pair it leads the headers.
        let (s, _) = enc("GET\0/\0x-a\x001", BodyFraming::None, false);
        assert_eq!(s, "GET / HTTP/1.1\r\nconnection: keep-alive\r\nx-a: 1\r\n\r\n");
        // A host pair later on is just a header: the default still leads.
        let (s, _) = enc("GET\0/\0x-a\x001\0host\0h", BodyFraming::None, false);
        assert_eq!(s, "GET / HTTP/1.1\r\nconnection: keep-alive\r\nx-a: 1\r\nhost: h\r\n\r\n");
    }

    #[test]
    fn reset_without_body() {
        let (s, _) = enc("DELETE\0/x\0host\0h", BodyFraming::None, true);
        assert_eq!(s, "DELETE /x HTTP/1.1\r\nhost: h\r\nconnection: close\r\n\r\n");
    }

    #[test]
    fn request_kind() {
        assert_eq!(
            enc("HEAD\0/\0host\0h", BodyFraming::None, false).1,
            RequestKind { head: true, connect: false }
        );
        let (s, k) =
            enc("CONNECT\0example.com:443\0host\0example.com:443", BodyFraming::None, false);
        assert_eq!(k, RequestKind { head: false, connect: true });
        assert!(s.starts_with("CONNECT example.com:443 HTTP/1.1\r\n"));
        // Methods are case-sensitive: lowercase `head` is an extension method, not HEAD.
        assert_eq!(enc("head\0/", BodyFraming::None, false).1, RequestKind::default());
    }

    #[test]
    fn obs_text_and_tab_in_values() {
        let mut out = Vec::new();
        let head = Head::parse(b"GET\0/\xe5\0x-a\0caf\xe9\tb\xff\x80".to_vec()).unwrap();
        encode_request_head(&head, BodyFraming::None, false, &mut out);
        // The head's bytes as they are: latin1, one byte per code point, never UTF-8's two.
        assert!(out.starts_with(b"GET /\xe5 HTTP/1.1\r\n"));
        let line = b"x-a: caf\xe9\tb\xff\x80\r\n";
        assert!(out.windows(line.len()).any(|w| w == line));
    }

    #[test]
    fn appends_to_what_is_there() {
        let mut out = b"previous bytes".to_vec();
        encode_request_head(&"GET\0/".into(), BodyFraming::None, false, &mut out);
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
