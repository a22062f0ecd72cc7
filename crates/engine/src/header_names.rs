//! Header names the event format sends as an index instead of their bytes (`events.rs`): the
//! spellings servers send most, each exactly as sent, since `rawHeaders` keeps the case. JS gets
//! the table once (the binding's `knownHeaderNames()`) and reuses two strings per entry, the name as
//! sent and its lowercase key, where it would otherwise slice and lowercase every name of every
//! response (~1.5 µs of a small response's ~3 µs header decode, measured on this machine).

/// At most 0x7fff entries: the index travels in a name length with the top bit set.
pub const KNOWN: &[&str] = &[
    // node:http's own, and what HTTP/2 and most servers send in lowercase
    "content-type",
    "content-length",
    "date",
    "connection",
    "keep-alive",
    "transfer-encoding",
    "server",
    "cache-control",
    "etag",
    "last-modified",
    "expires",
    "vary",
    "location",
    "set-cookie",
    "content-encoding",
    "accept-ranges",
    "age",
    "access-control-allow-origin",
    "access-control-allow-credentials",
    "access-control-allow-headers",
    "access-control-allow-methods",
    "access-control-expose-headers",
    "x-powered-by",
    "content-disposition",
    "content-language",
    "content-range",
    "strict-transport-security",
    "x-content-type-options",
    "x-frame-options",
    "x-xss-protection",
    "referrer-policy",
    "content-security-policy",
    "pragma",
    "via",
    "retry-after",
    "www-authenticate",
    "upgrade",
    "alt-svc",
    "link",
    "trailer",
    "x-request-id",
    "sec-websocket-accept",
    "sec-websocket-extensions",
    "sec-websocket-protocol",
    // The same, capitalized as Node (Date, Connection, Keep-Alive, Transfer-Encoding), nginx,
    // Apache and most frameworks write them
    "Content-Type",
    "Content-Length",
    "Date",
    "Connection",
    "Keep-Alive",
    "Transfer-Encoding",
    "Server",
    "Cache-Control",
    "ETag",
    "Last-Modified",
    "Expires",
    "Vary",
    "Location",
    "Set-Cookie",
    "Content-Encoding",
    "Accept-Ranges",
    "Age",
    "Access-Control-Allow-Origin",
    "X-Powered-By",
    "Content-Disposition",
    "Strict-Transport-Security",
    "X-Content-Type-Options",
    "X-Frame-Options",
    "Pragma",
    "Via",
    "Upgrade",
    "Sec-WebSocket-Accept",
    "Sec-WebSocket-Extensions",
];

/// The table index of `name` when it is one of the known spellings, byte for byte.
pub fn index_of(name: &[u8]) -> Option<u16> {
    KNOWN.iter().position(|k| k.len() == name.len() && k.as_bytes() == name).map(|i| i as u16)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_spellings_are_found_exactly_and_others_are_not() {
        assert_eq!(index_of(b"content-length"), Some(1));
        assert_eq!(index_of(b"Content-Length").map(|i| KNOWN[i as usize]), Some("Content-Length"));
        assert_eq!(
            index_of(b"CONTENT-LENGTH"),
            None,
            "case is kept: an unknown spelling travels as bytes"
        );
        assert_eq!(index_of(b"content-lengt"), None);
        assert_eq!(index_of(b""), None);
    }

    #[test]
    fn the_table_has_no_duplicates_and_fits_the_index() {
        assert!(KNOWN.len() < 0x8000);
        for (i, k) in KNOWN.iter().enumerate() {
            assert_eq!(index_of(k.as_bytes()), Some(i as u16), "{k} appears once");
            assert!(k.bytes().all(|b| b.is_ascii_graphic() && b != b':'), "{k} is a token");
        }
    }
}
