//! A request's packed head (`METHOD\0PATH\0name\0value…`, the same string HTTP/1.1 encodes) as an
//! HTTP/2 request head: `host` becomes `:authority`, names are lower-cased, and the fields that
//! only mean something on an HTTP/1.1 connection are left out (RFC 9113 §8.2.2), never sent.
//! Values are latin1 as on HTTP/1.1 (`h1::encode::latin1`).
use crate::h1::encode::latin1;
use crate::h1::EncodeError;
use http::header::{HeaderName, HeaderValue, CONTENT_LENGTH, EXPECT};
use http::{Method, Request, Uri};

/// Connection-specific fields: an h2 peer must treat a request carrying them as malformed.
const CONNECTION_SPECIFIC: [&str; 5] =
    ["connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade"];

/// What the stream needs besides the head.
#[derive(Debug)]
pub struct Head {
    pub request: Request<()>,
    /// HEAD: the response has no body whatever its headers say.
    pub head_method: bool,
}

/// Builds the h2 request head. `scheme` is the origin's (`http` for h2c, which has no TLS, RFC
/// 9113 §8.3.1); `authority` is used when the fields carry no `host`;
/// `content_length` (the body's size when known) is sent as `content-length`; `expect_continue`
/// adds `expect: 100-continue`.
pub fn build(
    packed: &str,
    scheme: &str,
    authority: &str,
    content_length: Option<u64>,
    expect_continue: bool,
) -> Result<Head, EncodeError> {
    let mut fields = packed.split('\0');
    let method = Method::from_bytes(fields.next().unwrap_or("").as_bytes())
        .map_err(|_| EncodeError::InvalidMethod)?;
    if method == Method::CONNECT {
        // Extended CONNECT (RFC 8441) is not offered; plain CONNECT tunnels are HTTP/1.1's.
        return Err(EncodeError::InvalidMethod);
    }
    let path = fields.next().ok_or(EncodeError::Malformed)?;
    if path.is_empty() || path.bytes().any(|b| b <= 0x20 || b == 0x7f) {
        return Err(EncodeError::InvalidPath);
    }
    let mut host: Option<&str> = None;
    let mut builder = Request::builder().method(method.clone());
    let headers = builder.headers_mut().expect("a fresh builder has no error");
    while let Some(name) = fields.next() {
        let value = match fields.next() {
            Some(v) => v,
            None if name.is_empty() => break,
            None => return Err(EncodeError::Malformed),
        };
        let lower = name.to_ascii_lowercase();
        if lower == "host" {
            host = Some(value);
            continue;
        }
        if CONNECTION_SPECIFIC.contains(&lower.as_str()) || lower == "content-length" {
            continue;
        }
        // `te` may only say `trailers` over h2 (RFC 9113 §8.2.2).
        if lower == "te" && !value.eq_ignore_ascii_case("trailers") {
            continue;
        }
        let n = HeaderName::from_bytes(lower.as_bytes())
            .map_err(|_| EncodeError::InvalidHeaderName(name.to_owned()))?;
        let bad = || EncodeError::InvalidHeaderValue(name.to_owned());
        let v = HeaderValue::from_bytes(&latin1(value).ok_or_else(bad)?).map_err(|_| bad())?;
        headers.append(n, v);
    }
    if let Some(n) = content_length {
        headers.insert(CONTENT_LENGTH, HeaderValue::from(n));
    }
    if expect_continue {
        headers.insert(EXPECT, HeaderValue::from_static("100-continue"));
    }
    let authority = host.unwrap_or(authority);
    let uri = Uri::builder()
        .scheme(scheme)
        .authority(authority)
        .path_and_query(path)
        .build()
        .map_err(|_| EncodeError::InvalidPath)?;
    builder = builder.uri(uri);
    let request = builder.body(()).map_err(|_| EncodeError::Malformed)?;
    Ok(Head { request, head_method: method == Method::HEAD })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scheme_is_the_origins() {
        let h = build("GET\0/\0", "http", "o:80", None, false).unwrap();
        assert_eq!(h.request.uri().scheme_str(), Some("http"));
        let h = build("GET\0/\0", "https", "o:443", None, false).unwrap();
        assert_eq!(h.request.uri().scheme_str(), Some("https"));
    }

    #[test]
    fn host_becomes_authority_and_connection_fields_are_dropped() {
        let h = build(
            "POST\0/a?b=1\0Host\0example.com:8443\0connection\0keep-alive\0X-Thing\0v\0transfer-encoding\0chunked\0te\0gzip",
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
        let h = build("HEAD\0/\0te\0trailers\0", "https", "origin.test:443", None, false).unwrap();
        assert_eq!(h.request.uri().authority().unwrap().as_str(), "origin.test:443");
        assert_eq!(h.request.headers().get("te").unwrap(), "trailers");
        assert!(h.head_method);
    }

    #[test]
    fn duplicates_are_kept_in_order() {
        let h = build("GET\0/\0a\x001\0A\x002", "https", "o:1", None, false).unwrap();
        let all: Vec<_> =
            h.request.headers().get_all("a").iter().map(|v| v.to_str().unwrap()).collect();
        assert_eq!(all, ["1", "2"]);
    }

    #[test]
    fn bad_input_is_refused() {
        assert_eq!(
            build("G ET\0/", "https", "o:1", None, false).unwrap_err(),
            EncodeError::InvalidMethod
        );
        assert_eq!(
            build("CONNECT\0o:443", "https", "o:1", None, false).unwrap_err(),
            EncodeError::InvalidMethod
        );
        assert_eq!(
            build("GET\0/a b", "https", "o:1", None, false).unwrap_err(),
            EncodeError::InvalidPath
        );
        assert_eq!(build("GET", "https", "o:1", None, false).unwrap_err(), EncodeError::Malformed);
        assert!(matches!(
            build("GET\0/\0bad name\0v", "https", "o:1", None, false),
            Err(EncodeError::InvalidHeaderName(_))
        ));
        assert!(matches!(
            build("GET\0/\0x\0a\rb", "https", "o:1", None, false),
            Err(EncodeError::InvalidHeaderValue(_))
        ));
        assert!(matches!(
            build("GET\0/\0x\0\u{20ac}", "https", "o:1", None, false),
            Err(EncodeError::InvalidHeaderValue(_))
        ));
    }

    #[test]
    fn values_go_out_as_latin1_bytes() {
        let h = build("GET\0/\0x\0\u{e5}r\u{ff}\u{80}", "https", "o:1", None, false).unwrap();
        assert_eq!(h.request.headers().get("x").unwrap().as_bytes(), b"\xe5r\xff\x80");
    }
}
