//! The bench routes, as bench/server.mjs serves them: for HTTP/1.1 as whole prebuilt responses
//! (status line, headers and body in one buffer), for h2c as status, headers and body.

use std::sync::OnceLock;

/// The 12-byte body of `/small`, `/cacheable` and `/set-cookie`.
const SMALL: &[u8] = b"hello world\n";
const BIG_LEN: usize = 65536;

pub struct Route {
    pub status: u16,
    pub headers: &'static [(&'static str, &'static str)],
    pub body: &'static [u8],
    /// The whole HTTP/1.1 response.
    pub h1: Vec<u8>,
}

const TEXT: (&str, &str) = ("content-type", "text/plain");

fn route(
    status: u16,
    headers: &'static [(&'static str, &'static str)],
    body: &'static [u8],
) -> Route {
    let reason = if status == 200 { "OK" } else { "Not Found" };
    let mut head = format!("HTTP/1.1 {status} {reason}\r\n");
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str(&format!("content-length: {}\r\n\r\n", body.len()));
    let mut h1 = head.into_bytes();
    h1.extend_from_slice(body);
    Route { status, headers, body, h1 }
}

struct Routes {
    small: Route,
    big: Route,
    cacheable: Route,
    set_cookie: Route,
    not_found: Route,
}

fn routes() -> &'static Routes {
    static CELL: OnceLock<Routes> = OnceLock::new();
    CELL.get_or_init(|| {
        // 'a'..'z' repeated, as bench/server.mjs's /64k.
        let big: Vec<u8> = (0..BIG_LEN).map(|i| b'a' + (i % 26) as u8).collect();
        Routes {
            small: route(200, &[TEXT], SMALL),
            big: route(200, &[("content-type", "application/octet-stream")], big.leak()),
            cacheable: route(200, &[TEXT, ("cache-control", "max-age=3600")], SMALL),
            set_cookie: route(200, &[TEXT, ("set-cookie", "sid=abc123; Path=/; HttpOnly")], SMALL),
            not_found: route(404, &[], b""),
        }
    })
}

/// The route for a request target.
pub fn find(path: &str) -> &'static Route {
    let r = routes();
    match path {
        "/small" => &r.small,
        "/64k" => &r.big,
        "/cacheable" => &r.cacheable,
        "/set-cookie" => &r.set_cookie,
        _ => &r.not_found,
    }
}

/// The whole HTTP/1.1 response for a request target.
pub(crate) fn respond(path: &str) -> &'static [u8] {
    &find(path).h1
}

/// Sent before closing a connection whose request could not be parsed.
pub(crate) const BAD_REQUEST: &[u8] =
    b"HTTP/1.1 400 Bad Request\r\nconnection: close\r\ncontent-length: 0\r\n\r\n";
