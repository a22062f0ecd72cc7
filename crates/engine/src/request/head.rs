//! A request's head as the engine holds it: method, path and fields as the bytes that go on the
//! wire, checked once against `rules` when JS dispatches the request. Every protocol takes it as
//! it is: HTTP/1.1 writes it (`h1::encode`), HTTP/2 and HTTP/3 read it through `multiplexed`.
//!
//! JS hands it over as one string, `METHOD\0PATH\0name\0value\0…` (one string is the cheapest
//! thing to pass per request); its code points are the bytes (latin1, as undici writes heads).
use super::rules::{is_path, is_token, is_value};
use std::borrow::Cow;
use std::fmt;

/// Where one piece lies in `Head::bytes`.
#[derive(Debug, Clone, Copy)]
struct Span {
    start: u32,
    end: u32,
}

#[derive(Debug)]
pub struct Head {
    /// The packed bytes as received; the spans point into them (no copy per piece).
    bytes: Vec<u8>,
    method: Span,
    path: Span,
    /// Where the first field's name starts (past the end when there is none). The fields are
    /// split again where they are read (once per protocol that writes them) rather than kept as
    /// a list: that list was an allocation per request.
    fields_at: u32,
}

/// Why a head was refused, with undici's message for it (ts/core/headers.ts, request.ts).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HeadError {
    InvalidMethod,
    InvalidPath,
    InvalidHeaderName,
    /// Carries the header's name, never its value: values may be secrets and may be large.
    InvalidHeaderValue(String),
    /// Not `METHOD\0PATH(\0name\0value)*\0?`.
    Malformed,
}

impl fmt::Display for HeadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HeadError::InvalidMethod => f.write_str("invalid request method"),
            HeadError::InvalidPath => f.write_str("invalid request path"),
            HeadError::InvalidHeaderName => f.write_str("invalid header key"),
            HeadError::InvalidHeaderValue(n) => write!(f, "invalid {n} header"),
            HeadError::Malformed => f.write_str("malformed request head"),
        }
    }
}

impl std::error::Error for HeadError {}

/// Fields that only mean something on an HTTP/1.1 connection: an HTTP/2 or HTTP/3 peer must treat
/// a request carrying them as malformed (RFC 9113 §8.2.2, RFC 9114 §4.2).
const CONNECTION_SPECIFIC: [&[u8]; 5] =
    [b"connection", b"keep-alive", b"proxy-connection", b"transfer-encoding", b"upgrade"];

impl Head {
    /// The head of a JS string's UTF-16 code units, one byte each. A unit above U+00FF has no byte:
    /// it becomes LF, refused in every piece, so the error names the piece that held it.
    pub fn from_utf16(units: &[u16]) -> Result<Head, HeadError> {
        Head::parse(units.iter().map(|&u| u8::try_from(u).unwrap_or(b'\n')).collect())
    }

    /// Splits and checks `METHOD\0PATH(\0name\0value)*`, a trailing `\0` allowed.
    pub fn parse(bytes: Vec<u8>) -> Result<Head, HeadError> {
        if u32::try_from(bytes.len()).is_err() {
            return Err(HeadError::Malformed);
        }
        let mut pieces = Pieces { bytes: &bytes, at: 0 };
        let method = pieces.next().unwrap_or(Span { start: 0, end: 0 });
        if !is_token(at(&bytes, method)) {
            return Err(HeadError::InvalidMethod);
        }
        let path = pieces.next().ok_or(HeadError::Malformed)?;
        if !is_path(at(&bytes, path)) {
            return Err(HeadError::InvalidPath);
        }
        // Past the end means no field; at the end, the one piece left is empty: the same.
        let fields_at = pieces.at.min(bytes.len()) as u32;
        while let Some(name) = pieces.next() {
            let value = match pieces.next() {
                Some(v) => v,
                // A lone empty piece at the end is the optional trailing separator.
                None if name.start == name.end => break,
                None => return Err(HeadError::Malformed),
            };
            let n = at(&bytes, name);
            if !is_token(n) {
                return Err(HeadError::InvalidHeaderName);
            }
            if !is_value(at(&bytes, value)) {
                // A token is ASCII: the name converts whole.
                return Err(HeadError::InvalidHeaderValue(String::from_utf8_lossy(n).into_owned()));
            }
        }
        Ok(Head { bytes, method, path, fields_at })
    }

    pub fn method(&self) -> &[u8] {
        at(&self.bytes, self.method)
    }

    pub fn path(&self) -> &[u8] {
        at(&self.bytes, self.path)
    }

    /// The fields in the order given, names as spelled.
    pub fn fields(&self) -> impl Iterator<Item = (&[u8], &[u8])> + '_ {
        let mut pieces = Pieces { bytes: &self.bytes, at: self.fields_at as usize };
        // `parse` saw every name followed by its value; a name without one is the optional
        // trailing separator.
        std::iter::from_fn(move || {
            let (name, value) = (pieces.next()?, pieces.next()?);
            Some((at(&self.bytes, name), at(&self.bytes, value)))
        })
    }

    /// The bytes of every piece together (a size hint for an encoder's buffer).
    pub fn packed_len(&self) -> usize {
        self.bytes.len()
    }

    /// The method is `HEAD`: the response has no body whatever its headers say.
    pub fn is_head(&self) -> bool {
        self.method() == b"HEAD"
    }

    /// The head as HTTP/2 and HTTP/3 carry it (RFC 9113 §8.2, RFC 9114 §4.2), the one place that
    /// turns a head into a multiplexed protocol's: `host` becomes the authority, names are
    /// lowercase, and what only an HTTP/1.1 connection means is left out, never sent: the
    /// connection-specific fields, `te` other than `trailers`, and `content-length` (the stream
    /// states its own from the body it sends).
    pub fn multiplexed(&self) -> Multiplexed<'_> {
        let host = self.fields().find(|(n, _)| n.eq_ignore_ascii_case(b"host")).map(|(_, v)| v);
        Multiplexed { head: self, host }
    }
}

/// A head written in code (tests, fixed requests), as `http::HeaderValue::from_static`: panics if
/// it is not a valid head.
impl From<&'static str> for Head {
    fn from(s: &'static str) -> Head {
        Head::parse(s.as_bytes().to_vec()).expect("a valid request head")
    }
}

/// See `Head::multiplexed`.
pub struct Multiplexed<'a> {
    head: &'a Head,
    /// The `host` field's value: the request's authority.
    pub host: Option<&'a [u8]>,
}

impl<'a> Multiplexed<'a> {
    pub fn method(&self) -> &'a [u8] {
        self.head.method()
    }

    pub fn path(&self) -> &'a [u8] {
        self.head.path()
    }

    /// The fields a multiplexed protocol sends, lowercase names first in each pair.
    pub fn fields(&self) -> impl Iterator<Item = (Cow<'a, [u8]>, &'a [u8])> + 'a {
        self.head.fields().filter_map(|(name, value)| {
            let name: Cow<'a, [u8]> = if name.iter().any(u8::is_ascii_uppercase) {
                Cow::Owned(name.to_ascii_lowercase())
            } else {
                Cow::Borrowed(name)
            };
            let n: &[u8] = &name;
            let dropped = n == b"host"
                || n == b"content-length"
                || CONNECTION_SPECIFIC.contains(&n)
                || (n == b"te" && !value.eq_ignore_ascii_case(b"trailers"));
            (!dropped).then_some((name, value))
        })
    }
}

fn at(bytes: &[u8], s: Span) -> &[u8] {
    &bytes[s.start as usize..s.end as usize]
}

/// The `\0`-separated pieces of a packed head, as spans.
struct Pieces<'a> {
    bytes: &'a [u8],
    /// Start of the next piece; past the end once the last was taken.
    at: usize,
}

impl Iterator for Pieces<'_> {
    type Item = Span;
    fn next(&mut self) -> Option<Span> {
        if self.at > self.bytes.len() {
            return None;
        }
        let start = self.at;
        let end = self.bytes[start..]
            .iter()
            .position(|&b| b == 0)
            .map_or(self.bytes.len(), |i| start + i);
        self.at = end + 1;
        // `parse` refused a head longer than u32::MAX.
        Some(Span { start: start as u32, end: end as u32 })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Result<Head, HeadError> {
        Head::parse(s.as_bytes().to_vec())
    }

    fn fields(h: &Head) -> Vec<(&[u8], &[u8])> {
        h.fields().collect()
    }

    #[test]
    fn pieces_and_the_trailing_separator() {
        let h = parse("GET\0/a?b\0host\0h\0x-empty\0").unwrap();
        assert_eq!(h.method(), b"GET");
        assert_eq!(h.path(), b"/a?b");
        assert_eq!(fields(&h), [(&b"host"[..], &b"h"[..]), (b"x-empty", b"")]);
        // The empty value, then the optional trailing separator.
        assert_eq!(fields(&parse("GET\0/a?b\0host\0h\0x-empty\0\0").unwrap()), fields(&h));
        assert!(fields(&parse("GET\0/").unwrap()).is_empty());
        assert!(fields(&parse("GET\0/\0").unwrap()).is_empty());
        assert!(parse("HEAD\0/").unwrap().is_head());
        // Methods are case-sensitive: lowercase `head` is an extension method.
        assert!(!parse("head\0/").unwrap().is_head());
    }

    #[test]
    fn refused_heads() {
        use HeadError::*;
        let e = |p: &str| parse(p).unwrap_err();
        assert_eq!(e(""), InvalidMethod);
        assert_eq!(e("\0/"), InvalidMethod);
        assert_eq!(e("G T\0/"), InvalidMethod);
        assert_eq!(e("GET(\0/"), InvalidMethod);
        assert_eq!(e("GET"), Malformed);
        assert_eq!(e("GET\0"), InvalidPath);
        assert_eq!(e("GET\0/a b"), InvalidPath);
        assert_eq!(e("GET\0/a\tb"), InvalidPath);
        assert_eq!(e("GET\0/a\rb"), InvalidPath);
        assert_eq!(e("GET\0/\0host"), Malformed);
        assert_eq!(e("GET\0/\0host\0h\0x"), Malformed);
        assert_eq!(e("GET\0/\0\0v"), InvalidHeaderName);
        assert_eq!(e("GET\0/\0\0"), InvalidHeaderName);
        assert_eq!(e("GET\0/\0x y\0v"), InvalidHeaderName);
        assert_eq!(e("GET\0/\0x:y\0v"), InvalidHeaderName);
        assert_eq!(e("GET\0/\0x\0a\r\nevil: 1"), InvalidHeaderValue("x".into()));
        assert_eq!(e("GET\0/\0x\0a\nb"), InvalidHeaderValue("x".into()));
        assert_eq!(e("GET\0/\0x\0a\x7fb"), InvalidHeaderValue("x".into()));
        assert_eq!(e("GET\0/\0x\0a\x01b"), InvalidHeaderValue("x".into()));
    }

    #[test]
    fn del_and_obs_text_in_a_path_are_undicis() {
        // undici takes any byte above SP in a path (`[\x21-\xff]`), DEL included.
        assert_eq!(parse("GET\0/a\x7fb").unwrap().path(), b"/a\x7fb");
        assert_eq!(Head::parse(b"GET\0/\xe5".to_vec()).unwrap().path(), b"/\xe5");
    }

    #[test]
    fn code_units_are_bytes_and_those_above_u00ff_are_refused_where_they_are() {
        let units = |s: &str| s.encode_utf16().collect::<Vec<u16>>();
        let h = Head::from_utf16(&units("GET\0/\u{e5}\0x\0caf\u{e9}\tb\u{ff}\u{80}")).unwrap();
        assert_eq!(h.path(), b"/\xe5");
        assert_eq!(fields(&h), [(&b"x"[..], &b"caf\xe9\tb\xff\x80"[..])]);
        let e = |s: &str| Head::from_utf16(&units(s)).unwrap_err();
        assert_eq!(e("G\u{100}T\0/"), HeadError::InvalidMethod);
        // U+010A's low byte is LF: it must not become one.
        assert_eq!(e("GET\0/\u{10a}"), HeadError::InvalidPath);
        assert_eq!(e("GET\0/\u{1f600}"), HeadError::InvalidPath);
        assert_eq!(e("GET\0/\0n\u{100}\0v"), HeadError::InvalidHeaderName);
        assert_eq!(e("GET\0/\0x\0ok \u{20ac}"), HeadError::InvalidHeaderValue("x".into()));
        assert_eq!(
            e("GET\0/\0x\0\u{10d}\u{10a}evil: 1"),
            HeadError::InvalidHeaderValue("x".into())
        );
    }

    #[test]
    fn messages_are_undicis() {
        assert_eq!(HeadError::InvalidMethod.to_string(), "invalid request method");
        assert_eq!(HeadError::InvalidPath.to_string(), "invalid request path");
        assert_eq!(HeadError::InvalidHeaderName.to_string(), "invalid header key");
        assert_eq!(HeadError::InvalidHeaderValue("x-a".into()).to_string(), "invalid x-a header");
        assert_eq!(HeadError::Malformed.to_string(), "malformed request head");
    }

    #[test]
    fn the_multiplexed_form() {
        let h = parse(
            "POST\0/a\0Host\0example.com:8443\0connection\0keep-alive\0X-Thing\0v\0transfer-encoding\0chunked\0te\0gzip\0content-length\x005\0keep-alive\x001\0proxy-connection\0x\0upgrade\0y",
        )
        .unwrap();
        let m = h.multiplexed();
        assert_eq!(m.host, Some(&b"example.com:8443"[..]));
        assert_eq!((m.method(), m.path()), (&b"POST"[..], &b"/a"[..]));
        let f: Vec<(Vec<u8>, &[u8])> = m.fields().map(|(n, v)| (n.into_owned(), v)).collect();
        assert_eq!(f, [(b"x-thing".to_vec(), &b"v"[..])]);
        let h = parse("HEAD\0/\0TE\0Trailers\0a\x001\0a\x002").unwrap();
        let m = h.multiplexed();
        assert_eq!(m.host, None);
        let f: Vec<(Vec<u8>, &[u8])> = m.fields().map(|(n, v)| (n.into_owned(), v)).collect();
        assert_eq!(
            f,
            [(b"te".to_vec(), &b"Trailers"[..]), (b"a".to_vec(), b"1"), (b"a".to_vec(), b"2")]
        );
    }
}
