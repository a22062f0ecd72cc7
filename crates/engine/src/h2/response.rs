//! HTTP/2 response heads and trailers in the engine's own head form, so they cross to JS through
//! the same HEAD / END events as HTTP/1.1's (one decoder in TypeScript for both protocols).
use crate::error::ErrorCode;
use crate::h1::{Head, HeaderBlock};
use ::h2::Reason;
use bytes::{Bytes, BytesMut};
use http::HeaderMap;

/// The fields of `map` as a header block (names are already lower-case on h2).
pub(crate) fn header_block(map: &HeaderMap) -> HeaderBlock {
    let mut block = BytesMut::with_capacity(map.len() * 32);
    let mut fields = Vec::with_capacity(map.len());
    for (name, value) in map {
        let n0 = block.len() as u32;
        block.extend_from_slice(name.as_str().as_bytes());
        let n1 = block.len() as u32;
        block.extend_from_slice(value.as_bytes());
        let v1 = block.len() as u32;
        fields.push((n0..n1, n1..v1));
    }
    HeaderBlock { block: block.freeze(), fields }
}

/// A response head: h2 has no reason phrase and no connection-level keep-alive fields.
pub(crate) fn head(status: u16, headers: &HeaderMap) -> Head {
    Head {
        status,
        version_minor: 1,
        reason: Bytes::new(),
        headers: header_block(headers),
        keep_alive: true,
        keep_alive_timeout_ms: None,
    }
}

/// How an h2 failure reaches JS: error code and message (the h2 error code is named).
pub(crate) fn describe(e: &::h2::Error) -> (ErrorCode, String) {
    if let Some(io) = e.get_io() {
        return (ErrorCode::Socket, format!("HTTP/2: {io}"));
    }
    let reason = e.reason().unwrap_or(Reason::INTERNAL_ERROR);
    if e.is_go_away() {
        (
            ErrorCode::Socket,
            format!(
                "HTTP/2: \"GOAWAY\" frame received with code {} ({reason:?})",
                u32::from(reason)
            ),
        )
    } else if e.is_reset() {
        (
            ErrorCode::Socket,
            format!(
                "HTTP/2: \"RST_STREAM\" frame received with code {} ({reason:?})",
                u32::from(reason)
            ),
        )
    } else {
        (ErrorCode::Socket, format!("HTTP/2: {e}"))
    }
}

/// True when the server refused the stream before processing it (RFC 9113 §8.7): a GOAWAY whose
/// last-stream-id is below it, or RST_STREAM(REFUSED_STREAM). Such a request may go elsewhere.
pub(crate) fn unprocessed(e: &::h2::Error) -> bool {
    e.is_remote() && (e.is_go_away() || e.reason() == Some(Reason::REFUSED_STREAM))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_block_keeps_every_field_in_order() {
        let mut m = HeaderMap::new();
        m.append("a", "1".parse().unwrap());
        m.append("b", "2".parse().unwrap());
        m.append("a", "3".parse().unwrap());
        let b = header_block(&m);
        let got: Vec<(String, String)> = b
            .iter()
            .map(|(n, v)| {
                (String::from_utf8(n.to_vec()).unwrap(), String::from_utf8(v.to_vec()).unwrap())
            })
            .collect();
        assert_eq!(got.len(), 3);
        assert!(got.contains(&("a".into(), "1".into())) && got.contains(&("a".into(), "3".into())));
        assert!(got.contains(&("b".into(), "2".into())));
    }

    #[test]
    fn head_has_no_reason() {
        let h = head(204, &HeaderMap::new());
        assert_eq!(h.status, 204);
        assert!(h.reason.is_empty());
        assert!(h.headers.is_empty());
    }
}
