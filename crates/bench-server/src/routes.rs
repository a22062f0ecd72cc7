//! The bench routes, as bench/server.mjs serves them over plain HTTP/1.1, as whole prebuilt responses
//! (status line, headers and body in one buffer).

use std::sync::OnceLock;

/// The 12-byte body of `/small`, `/cacheable` and `/set-cookie`.
const SMALL: &[u8] = b"hello world\n";
const BIG_LEN: usize = 65536;

struct Responses {
    small: Vec<u8>,
    big: Vec<u8>,
    cacheable: Vec<u8>,
    set_cookie: Vec<u8>,
    not_found: Vec<u8>,
}

fn response(status: &str, headers: &[(&str, &str)], body: &[u8]) -> Vec<u8> {
    let mut out = format!("HTTP/1.1 {status}\r\n");
    for (name, value) in headers {
        out.push_str(&format!("{name}: {value}\r\n"));
    }
    out.push_str(&format!("content-length: {}\r\n\r\n", body.len()));
    let mut out = out.into_bytes();
    out.extend_from_slice(body);
    out
}

fn responses() -> &'static Responses {
    static CELL: OnceLock<Responses> = OnceLock::new();
    CELL.get_or_init(|| {
        // 'a'..'z' repeated, as bench/server.mjs's /64k.
        let big: Vec<u8> = (0..BIG_LEN).map(|i| b'a' + (i % 26) as u8).collect();
        let text = ("content-type", "text/plain");
        Responses {
            small: response("200 OK", &[text], SMALL),
            big: response("200 OK", &[("content-type", "application/octet-stream")], &big),
            cacheable: response("200 OK", &[text, ("cache-control", "max-age=3600")], SMALL),
            set_cookie: response(
                "200 OK",
                &[text, ("set-cookie", "sid=abc123; Path=/; HttpOnly")],
                SMALL,
            ),
            not_found: response("404 Not Found", &[], b""),
        }
    })
}

/// The whole response for a request target.
pub fn respond(path: &str) -> &'static [u8] {
    let r = responses();
    match path {
        "/small" => &r.small,
        "/64k" => &r.big,
        "/cacheable" => &r.cacheable,
        "/set-cookie" => &r.set_cookie,
        _ => &r.not_found,
    }
}

/// Sent before closing a connection whose request could not be parsed.
pub const BAD_REQUEST: &[u8] =
    b"HTTP/1.1 400 Bad Request\r\nconnection: close\r\ncontent-length: 0\r\n\r\n";
