//! A request's head (request/head.rs) as an HTTP/2 request: its multiplexed form (`host` as
//! `:authority`, lowercase names, no HTTP/1.1-only fields) put into `http::Request` for the h2
//! crate. The head was checked at dispatch; what can still be refused here is what HTTP/2 itself
//! cannot carry.
use crate::request::Head;
use http::header::{HeaderName, HeaderValue, CONTENT_LENGTH, EXPECT};
use http::uri::PathAndQuery;
use http::{Method, Request, Uri};
use std::fmt;

/// What the stream needs besides the head.
#[derive(Debug)]
pub(crate) struct H2Head {
    pub request: Request<()>,
    /// HEAD: the response has no body whatever its headers say.
    pub head_method: bool,
}

/// A checked head HTTP/2 cannot carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum H2HeadError {
    /// CONNECT: extended CONNECT (RFC 8441) is not offered; plain CONNECT tunnels are HTTP/1.1's.
    Connect,
    /// `:path` must be origin-form (or `*`): an absolute-form target is HTTP/1.1's.
    Path,
    /// The `host` field is no authority.
    Authority,
    /// Beyond what the `http` crate takes (a header name longer than 64 KiB).
    TooLarge,
}

impl fmt::Display for H2HeadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            H2HeadError::Connect => "CONNECT is not supported over HTTP/2",
            H2HeadError::Path => "invalid request path",
            H2HeadError::Authority => "invalid host header",
            H2HeadError::TooLarge => "request head too large for HTTP/2",
        })
    }
}

impl std::error::Error for H2HeadError {}

/// Builds the h2 request head. `scheme` is the origin's (`http` for h2c, which has no TLS, RFC
/// 9113 §8.3.1); `authority` is used when the fields carry no `host`;
/// `content_length` (the body's size when known) is sent as `content-length`; `expect_continue`
/// adds `expect: 100-continue`.
pub(crate) fn build(
    head: &Head,
    scheme: &str,
    authority: &str,
    content_length: Option<u64>,
    expect_continue: bool,
) -> Result<H2Head, H2HeadError> {
    let m = head.multiplexed();
    // A checked method is a token, which `http` takes.
    let method = Method::from_bytes(m.method()).map_err(|_| H2HeadError::TooLarge)?;
    if method == Method::CONNECT {
        return Err(H2HeadError::Connect);
    }
    let mut builder = Request::builder().method(method);
    let headers = builder.headers_mut().expect("a fresh builder has no error");
    for (name, value) in m.fields() {
        // Checked tokens and field values, which `http` takes as they are (up to its size limit).
        let n = HeaderName::from_bytes(&name).map_err(|_| H2HeadError::TooLarge)?;
        let v = HeaderValue::from_bytes(value).map_err(|_| H2HeadError::TooLarge)?;
        headers.append(n, v);
    }
    if let Some(n) = content_length {
        headers.insert(CONTENT_LENGTH, HeaderValue::from(n));
    }
    if expect_continue {
        headers.insert(EXPECT, HeaderValue::from_static("100-continue"));
    }
    let authority = match m.host {
        Some(h) => std::str::from_utf8(h).map_err(|_| H2HeadError::Authority)?,
        None => authority,
    };
    let uri = Uri::builder()
        .scheme(scheme)
        .authority(authority)
        .path_and_query(path_and_query(m.path())?)
        .build()
        .map_err(|_| H2HeadError::Authority)?;
    let request = builder.uri(uri).body(()).map_err(|_| H2HeadError::TooLarge)?;
    Ok(H2Head { request, head_method: head.is_head() })
}

/// The path as `http` takes it. `http` refuses some bytes a checked path may hold (`#`, which it
/// would cut the path at, `<`, `>`, `"`, `` ` ``, DEL) and wants UTF-8 where the head has latin1:
/// those are percent-encoded, and obs-text is sent as its code point's UTF-8, so the request goes
/// out instead of failing after dispatch.
fn path_and_query(path: &[u8]) -> Result<PathAndQuery, H2HeadError> {
    const REFUSED: &[u8] = b"#<>\"`\x7f";
    if path != b"*" && path.first() != Some(&b'/') {
        return Err(H2HeadError::Path);
    }
    if !path.iter().any(|b| REFUSED.contains(b) || !b.is_ascii()) {
        return PathAndQuery::try_from(path).map_err(|_| H2HeadError::Path);
    }
    let mut s = String::with_capacity(path.len() + 16);
    for &b in path {
        if REFUSED.contains(&b) {
            s.push_str(&format!("%{b:02X}"));
        } else {
            s.push(char::from(b));
        }
    }
    PathAndQuery::try_from(s).map_err(|_| H2HeadError::Path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b(packed: &'static str, scheme: &str, authority: &str) -> Result<H2Head, H2HeadError> {
        build(&packed.into(), scheme, authority, None, false)
    }

    #[test]
    fn scheme_is_the_origins() {
        let h = b("GET\0/\0", "http", "o:80").unwrap();
        assert_eq!(h.request.uri().scheme_str(), Some("http"));
        let h = b("GET\0/\0", "https", "o:443").unwrap();
        assert_eq!(h.request.uri().scheme_str(), Some("https"));
    }

    #[test]
    fn host_becomes_authority_and_connection_fields_are_dropped() {
        let h = build(
            &"POST\0/a?b=1\0Host\0example.com:8443\0connection\0keep-alive\0X-Thing\0v\0transfer-encoding\0chunked\0te\0gzip".into(),
            "https",
            "fallback:1",
            Some(5),
            true,
        )
        .unwrap();
        let r = &h.request;
        assert_eq!(r.method(), Method::POST);
        assert_eq!(r.uri().to_string(), "https://example.com:8443/a?b=1");
        assert_eq!(r.headers().get("x-thing").unwrap(), "v");
        assert_eq!(r.headers().get("content-length").unwrap(), "5");
        assert_eq!(r.headers().get("expect").unwrap(), "100-continue");
        for gone in ["host", "connection", "transfer-encoding", "te"] {
            assert!(r.headers().get(gone).is_none(), "{gone} must not be sent");
        }
        assert!(!h.head_method);
    }

    #[test]
    fn authority_falls_back_and_te_trailers_stays() {
        let h = b("HEAD\0/\0te\0trailers\0", "https", "origin.test:443").unwrap();
        assert_eq!(h.request.uri().authority().unwrap().as_str(), "origin.test:443");
        assert_eq!(h.request.headers().get("te").unwrap(), "trailers");
        assert!(h.head_method);
    }

    #[test]
    fn duplicates_are_kept_in_order() {
        let h = b("GET\0/\0a\x001\0A\x002", "https", "o:1").unwrap();
        let all: Vec<_> =
            h.request.headers().get_all("a").iter().map(|v| v.to_str().unwrap()).collect();
        assert_eq!(all, ["1", "2"]);
    }

    #[test]
    fn what_http2_cannot_carry_is_refused() {
        assert_eq!(b("CONNECT\0o:443", "https", "o:1").unwrap_err(), H2HeadError::Connect);
        assert_eq!(b("GET\0http://o/x", "https", "o:1").unwrap_err(), H2HeadError::Path);
        assert_eq!(b("GET\0/\0host\0a b", "https", "o:1").unwrap_err(), H2HeadError::Authority);
    }

    #[test]
    fn values_go_out_as_latin1_bytes() {
        let head = Head::parse(b"GET\0/\0x\0\xe5r\xff\x80".to_vec()).unwrap();
        let h = build(&head, "https", "o:1", None, false).unwrap();
        assert_eq!(h.request.headers().get("x").unwrap().as_bytes(), b"\xe5r\xff\x80");
    }

    #[test]
    fn a_path_http_would_refuse_goes_out_percent_encoded() {
        // undici sends these as given; over h2 they go out as the URL standard escapes them.
        let h = b("GET\0/a\x7fb<c>`\"#f?q=<\x7f>", "https", "o:1").unwrap();
        assert_eq!(
            h.request.uri().path_and_query().unwrap(),
            "/a%7Fb%3Cc%3E%60%22%23f?q=%3C%7F%3E"
        );
        // obs-text as its code point's UTF-8 (`http` wants UTF-8), as before the head was bytes.
        let head = Head::parse(b"GET\0/\xe5".to_vec()).unwrap();
        let h = build(&head, "https", "o:1", None, false).unwrap();
        assert_eq!(h.request.uri().path(), "/\u{e5}");
        assert_eq!(b("OPTIONS\0*", "https", "o:1").unwrap().request.uri().path(), "*");
    }
}
