//! One keep-alive connection: read, answer every complete request in the buffer (pipelined requests
//! included) with one write, repeat.

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use crate::routes;

const READ_CHUNK: usize = 16 * 1024;
const MAX_HEADERS: usize = 64;
/// A head larger than this without its end is refused (the bench sends a few hundred bytes).
const MAX_HEAD: usize = 64 * 1024;

/// What the parser made of the buffered bytes.
#[derive(Default)]
struct Parsed {
    /// Bytes of the input buffer taken (heads and the bodies present).
    consumed: usize,
    /// Body bytes of the last request still to arrive (to skip before the next head).
    skip: usize,
    /// The client asked to close, or sent something unparseable: close after writing.
    close: bool,
}

/// Appends the responses to every complete request in `input` to `out`.
fn answer(input: &[u8], out: &mut Vec<u8>) -> Parsed {
    let mut p = Parsed::default();
    while p.consumed < input.len() {
        let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
        let mut req = httparse::Request::new(&mut headers);
        let head_len = match req.parse(&input[p.consumed..]) {
            Ok(httparse::Status::Complete(n)) => n,
            Ok(httparse::Status::Partial) if input.len() - p.consumed <= MAX_HEAD => break,
            _ => {
                out.extend_from_slice(routes::BAD_REQUEST);
                p.close = true;
                break;
            }
        };
        let mut body = 0usize;
        for h in req.headers.iter() {
            if h.name.eq_ignore_ascii_case("content-length") {
                match std::str::from_utf8(h.value).ok().and_then(|v| v.trim().parse().ok()) {
                    Some(n) => body = n,
                    None => p.close = true,
                }
            } else if h.name.eq_ignore_ascii_case("transfer-encoding") {
                // The bench sends no request bodies; a chunked one is not worth decoding here.
                p.close = true;
            } else if h.name.eq_ignore_ascii_case("connection")
                && h.value.eq_ignore_ascii_case(b"close")
            {
                p.close = true;
            }
        }
        out.extend_from_slice(routes::respond(req.path.unwrap_or("")));
        p.consumed += head_len;
        let present = body.min(input.len() - p.consumed);
        p.consumed += present;
        p.skip = body - present;
        if p.close || p.skip > 0 {
            break;
        }
    }
    p
}

/// Serves one connection (plain TCP, or TLS that negotiated `http/1.1`) until the client closes.
pub async fn serve<S: AsyncRead + AsyncWrite + Unpin>(mut socket: S) -> std::io::Result<()> {
    let mut input: Vec<u8> = Vec::with_capacity(READ_CHUNK);
    let mut out: Vec<u8> = Vec::with_capacity(READ_CHUNK);
    let mut skip = 0usize;
    loop {
        if input.capacity() - input.len() < READ_CHUNK / 4 {
            input.reserve(READ_CHUNK);
        }
        if socket.read_buf(&mut input).await? == 0 {
            return Ok(());
        }
        // Discard the rest of a request body that arrived in earlier reads.
        let skipped = skip.min(input.len());
        skip -= skipped;
        let parsed = answer(&input[skipped..], &mut out);
        input.drain(..skipped + parsed.consumed);
        skip += parsed.skip;
        if !out.is_empty() {
            socket.write_all(&out).await?;
            out.clear();
        }
        if parsed.close {
            socket.shutdown().await?;
            return Ok(());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pipelined_requests_get_one_response_each_in_order() {
        let input =
            b"GET /small HTTP/1.1\r\nhost: x\r\n\r\nGET /64k HTTP/1.1\r\nhost: x\r\n\r\nGET /sm";
        let mut out = Vec::new();
        let p = answer(input, &mut out);
        let small = routes::respond("/small");
        let big = routes::respond("/64k");
        assert_eq!(out.len(), small.len() + big.len());
        assert_eq!(&out[..small.len()], small);
        assert_eq!(p.consumed, input.len() - b"GET /sm".len());
        assert!(!p.close);
    }

    #[test]
    fn a_request_body_is_skipped_across_reads() {
        let input = b"POST /small HTTP/1.1\r\ncontent-length: 10\r\n\r\n12345";
        let mut out = Vec::new();
        let p = answer(input, &mut out);
        assert_eq!(p.consumed, input.len());
        assert_eq!(p.skip, 5);
    }

    #[test]
    fn garbage_gets_400_and_close() {
        let mut out = Vec::new();
        let p = answer(b"\x00\x01 nonsense\r\n\r\n", &mut out);
        assert!(p.close);
        assert_eq!(out, routes::BAD_REQUEST);
    }

    #[test]
    fn connection_close_is_honoured_after_the_response() {
        let mut out = Vec::new();
        let p = answer(
            b"GET /small HTTP/1.1\r\nconnection: close\r\n\r\nGET /small HTTP/1.1\r\n\r\n",
            &mut out,
        );
        assert!(p.close);
        assert_eq!(out, routes::respond("/small"));
    }
}
