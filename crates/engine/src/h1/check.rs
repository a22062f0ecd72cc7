//! Invariant checks on the codec, shared by the coverage-guided fuzz targets (`fuzz/`, feature
//! `fuzzing`) and the property tests below: each check panics when an invariant is violated,
//! which AFL records as a crash and `cargo test` as a failure.
use super::{encode_request_head, BodyFraming, Decoded, Expect, ResponseDecoder};
use crate::request::Head;
use bytes::BytesMut;

/// A decoded item in comparable form; bodies are joined because piece boundaries move Data
/// boundaries.
#[derive(Debug, PartialEq, Eq)]
pub enum Ev {
    Head(u16, Vec<(Vec<u8>, Vec<u8>)>, bool),
    Upgrade(u16),
    Body(Vec<u8>),
    End(usize),
    Err(String),
}

fn push(evs: &mut Vec<Ev>, item: Decoded) {
    match item {
        Decoded::Head(h) => {
            let f = h.headers.iter().map(|(n, v)| (n.to_vec(), v.to_vec())).collect();
            evs.push(Ev::Head(h.status, f, h.keep_alive));
        }
        Decoded::Upgrade(h) => evs.push(Ev::Upgrade(h.status)),
        Decoded::Data(d) => {
            assert!(!d.is_empty(), "zero-length Data");
            match evs.last_mut() {
                Some(Ev::Body(b)) => b.extend_from_slice(&d),
                _ => evs.push(Ev::Body(d.to_vec())),
            }
        }
        Decoded::End { trailers } => evs.push(Ev::End(trailers.map_or(0, |t| t.len()))),
    }
}

/// Runs `pieces` through one decoder as a connection would (decode until it needs more bytes,
/// stop at an upgrade or error), then `eof`.
pub fn decode_pieces(
    expects: &[Expect],
    max_header: usize,
    pieces: &[&[u8]],
    eof: bool,
) -> Vec<Ev> {
    let mut dec = ResponseDecoder::new(max_header);
    for e in expects {
        dec.push_expect(*e);
    }
    let mut buf = BytesMut::new();
    let mut evs = Vec::new();
    let input_len: usize = pieces.iter().map(|p| p.len()).sum();
    'feed: for p in pieces {
        buf.extend_from_slice(p);
        // Each item consumes input or ends the response, so this many steps always suffice.
        for _ in 0..=2 * input_len + 2 * expects.len() + 2 {
            match dec.decode(&mut buf) {
                Ok(None) => continue 'feed,
                Ok(Some(item)) => {
                    let up = matches!(item, Decoded::Upgrade(_));
                    push(&mut evs, item);
                    if up {
                        return evs;
                    }
                }
                Err(e) => {
                    evs.push(Ev::Err(e.to_string()));
                    return evs;
                }
            }
        }
        panic!("decode did not converge");
    }
    if eof {
        match dec.eof() {
            Ok(Some(item)) => push(&mut evs, item),
            Ok(None) => {}
            Err(e) => evs.push(Ev::Err(e.to_string())),
        }
    }
    let body: usize = evs.iter().map(|e| if let Ev::Body(b) = e { b.len() } else { 0 }).sum();
    assert!(body <= input_len, "more body bytes out than bytes in");
    evs
}

/// Fuzz input for the response decoder: a config byte (expect count, header limit, eof), one
/// flags byte per expected response, a seed for the split points, then the response bytes.
/// Decoding whole and decoding in pieces must agree.
pub fn check_decoder(data: &[u8]) {
    let Some((&cfg, rest)) = data.split_first() else {
        return;
    };
    let n = 1 + (cfg & 3) as usize;
    let max_header = [64, 512, 4096, 16384][((cfg >> 2) & 3) as usize];
    let eof = cfg & 16 != 0;
    if rest.len() < n + 1 {
        return;
    }
    let expects: Vec<Expect> = rest[..n]
        .iter()
        .map(|&k| Expect { head: k & 1 != 0, connect: k & 2 != 0, upgrade: k & 4 != 0 })
        .collect();
    let mut seed = rest[n] as u64 | 0x9e37_79b9_0000_0000;
    let input = &rest[n + 1..];
    let whole = decode_pieces(&expects, max_header, &[input], eof);
    let mut pieces = Vec::new();
    let mut at = 0;
    while at < input.len() {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let len = 1 + (seed as usize) % (input.len() - at).min(64);
        pieces.push(&input[at..at + len]);
        at += len;
    }
    let split = decode_pieces(&expects, max_header, &pieces, eof);
    assert_eq!(whole, split, "split feed differs from whole feed");
}

/// Fuzz input for the request-head encoder: a config byte (framing, reset), then the packed head
/// (`METHOD\0PATH\0name\0value…`). Whatever it accepts must be exactly one well-formed head that
/// carries the given fields unchanged: no field can smuggle a line or a second request.
pub fn check_encoder(data: &[u8]) {
    let Some((&cfg, rest)) = data.split_first() else {
        return;
    };
    let framing = match cfg & 3 {
        0 => BodyFraming::None,
        1 => BodyFraming::Chunked,
        _ => BodyFraming::Length(u64::from(cfg) << 20),
    };
    let reset = cfg & 4 != 0;
    let Ok(head) = Head::parse(rest.to_vec()) else {
        return;
    };
    let mut out = b"prefix".to_vec();
    let kind = encode_request_head(&head, framing, reset, &mut out);
    // The head holds the packed pieces as they were: nothing dropped, changed or added.
    let mut pieces: Vec<&[u8]> = rest.split(|&b| b == 0).collect();
    if pieces.len() % 2 == 1 && pieces.last() == Some(&&b""[..]) {
        pieces.pop();
    }
    let held: Vec<&[u8]> = [head.method(), head.path()]
        .into_iter()
        .chain(head.fields().flat_map(|(n, v)| [n, v]))
        .collect();
    assert_eq!(pieces, held);
    let wire = &out[6..];
    assert!(wire.ends_with(b"\r\n\r\n"));
    let body = &wire[..wire.len() - 4];
    // Lines are separated by CRLF only: no bare CR or LF anywhere.
    let lines: Vec<&[u8]> = body.split(|&b| b == b'\n').collect();
    for (i, l) in lines.iter().enumerate() {
        let l = if i + 1 < lines.len() { l.strip_suffix(b"\r").expect("LF without CR") } else { l };
        assert!(!l.contains(&b'\r'), "bare CR");
        assert!(!l.is_empty(), "empty line inside the head");
    }
    let method = head.method();
    let mut first = method.to_vec();
    first.push(b' ');
    first.extend_from_slice(head.path());
    first.extend_from_slice(b" HTTP/1.1\r");
    assert_eq!(lines[0], first);
    assert_eq!(kind.head, method == b"HEAD");
    assert_eq!(kind.connect, method == b"CONNECT");
    let fields: Vec<Vec<u8>> = head.fields().map(|(n, v)| [n, b": ", v].concat()).collect();
    // The given fields in order, with at most one default `connection` line among them (it goes
    // after a leading host) and the framing line after them.
    fn strip(l: &[u8]) -> &[u8] {
        l.strip_suffix(b"\r").unwrap_or(l)
    }
    let mut at = 1;
    let mut defaults = 0;
    for (i, f) in fields.iter().enumerate() {
        let mut line = strip(lines[at]);
        if line != f.as_slice()
            && defaults == 0
            && (line == b"connection: keep-alive" || line == b"connection: close")
        {
            defaults = 1;
            at += 1;
            line = strip(lines[at]);
        }
        at += 1;
        assert_eq!(line, f.as_slice(), "field {i} changed on the wire");
        let colon = f.iter().position(|&b| b == b':').unwrap();
        assert!(f[..colon].iter().all(|&b| b.is_ascii_graphic()), "bad name went out");
    }
    // Only the connection and framing lines follow the given fields.
    let extra = lines.len() - at + defaults;
    assert!(extra <= 2, "{extra} lines beyond the given fields");
}

#[cfg(test)]
mod tests {
    //! Property tests: generated valid responses decode the same however their bytes are split,
    //! and generated request heads keep the encoder's invariants.
    use super::*;

    /// splitmix64: deterministic, dependency-free.
    struct Gen(u64);
    impl Gen {
        fn u64(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        }
        fn upto(&mut self, n: usize) -> usize {
            (self.u64() % (n as u64 + 1)) as usize
        }
        fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
            &xs[self.upto(xs.len() - 1)]
        }
        fn bytes(&mut self, n: usize) -> Vec<u8> {
            (0..n).map(|_| self.u64() as u8).collect()
        }
    }

    /// A valid response for `expect`: its bytes and the body a decoder must deliver. `last`
    /// allows a close-delimited body (then the stream must end with EOF).
    fn response(g: &mut Gen, expect: Expect, last: bool) -> (Vec<u8>, Vec<u8>, bool) {
        let mut out = Vec::new();
        if g.upto(3) == 0 {
            let informational: &[&[u8]] = &[
                b"HTTP/1.1 100 Continue\r\n\r\n",
                b"HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n",
            ];
            let head = g.pick::<&[u8]>(informational);
            out.extend_from_slice(head);
        }
        let status = *g.pick(&[200u16, 201, 404, 500, 204, 304]);
        out.extend_from_slice(format!("HTTP/1.1 {status} Reason\r\n").as_bytes());
        for i in 0..g.upto(4) {
            let name = *g.pick(&["x-h", "X-H", "x-Custom-Header"]);
            out.extend_from_slice(format!("{name}{i}: v{} ,\t{}\r\n", g.u64(), i).as_bytes());
        }
        let no_body = expect.head || status == 204 || status == 304;
        let len = *g.pick(&[0usize, 1, 7, 300, 2000]);
        let body = g.bytes(len);
        let framing = g.upto(if last { 2 } else { 1 });
        let mut delivered = body.clone();
        let mut close_delimited = false;
        match framing {
            0 => {
                out.extend_from_slice(format!("Content-Length: {}\r\n\r\n", body.len()).as_bytes());
                if !no_body {
                    out.extend_from_slice(&body);
                }
            }
            1 => {
                out.extend_from_slice(b"Transfer-Encoding: chunked\r\n\r\n");
                if !no_body {
                    let mut at = 0;
                    while at < body.len() {
                        let n = (1 + g.upto(700)).min(body.len() - at);
                        let ext = *g.pick(&["", ";a=b", ";q=\"x; y\"", " ; k"]);
                        out.extend_from_slice(format!("{n:x}{ext}\r\n").as_bytes());
                        out.extend_from_slice(&body[at..at + n]);
                        out.extend_from_slice(b"\r\n");
                        at += n;
                    }
                    out.extend_from_slice(if g.upto(1) == 0 {
                        b"0\r\n\r\n"
                    } else {
                        b"0\r\nX-Sum: 1\r\nExpires: never\r\n\r\n"
                    });
                }
            }
            _ => {
                // Neither length nor chunked: the body runs until the server closes.
                out.extend_from_slice(b"\r\n");
                if !no_body {
                    out.extend_from_slice(&body);
                    close_delimited = true;
                }
            }
        }
        if no_body {
            delivered.clear();
        }
        (out, delivered, close_delimited)
    }

    fn bodies(evs: &[Ev]) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        let mut cur = Vec::new();
        for e in evs {
            match e {
                Ev::Body(b) => cur.extend_from_slice(b),
                Ev::End(_) => out.push(std::mem::take(&mut cur)),
                Ev::Err(e) => panic!("valid input failed: {e}"),
                _ => {}
            }
        }
        out
    }

    #[test]
    fn any_split_of_valid_responses_decodes_the_same() {
        let mut g = Gen(7);
        for case in 0..1500 {
            let count = 1 + g.upto(3);
            let mut expects = Vec::new();
            let mut input = Vec::new();
            let mut want = Vec::new();
            let mut eof = false;
            for i in 0..count {
                let expect = Expect { head: g.upto(5) == 0, ..Expect::default() };
                let (bytes, body, close) = response(&mut g, expect, i + 1 == count);
                expects.push(expect);
                input.extend_from_slice(&bytes);
                want.push(body);
                eof = close;
            }
            let whole = decode_pieces(&expects, 16 * 1024, &[&input], eof);
            assert_eq!(bodies(&whole), want, "case {case}: {}", String::from_utf8_lossy(&input));
            for _ in 0..4 {
                let mut pieces = Vec::new();
                let mut at = 0;
                while at < input.len() {
                    let most = *g.pick(&[1usize, 3, 40, 5000]);
                    let n = 1 + g.upto((input.len() - at - 1).min(most));
                    pieces.push(&input[at..at + n]);
                    at += n;
                }
                assert_eq!(decode_pieces(&expects, 16 * 1024, &pieces, eof), whole, "case {case}");
            }
        }
    }

    #[test]
    fn arbitrary_decoder_inputs_keep_the_invariants() {
        // The same check the fuzz target runs, over generated and mutated inputs.
        let mut g = Gen(11);
        for _ in 0..3000 {
            let expect =
                Expect { head: g.upto(4) == 0, connect: g.upto(8) == 0, upgrade: g.upto(8) == 0 };
            let (mut bytes, _, _) =
                response(&mut g, Expect { head: expect.head, ..Expect::default() }, true);
            for _ in 0..g.upto(3) {
                let at = g.upto(bytes.len().saturating_sub(1));
                match g.upto(2) {
                    0 => bytes[at] = *g.pick(b"\r\n:;0fF\t \x00\xff"),
                    1 => drop(bytes.remove(at)),
                    _ => bytes.insert(at, g.u64() as u8),
                }
            }
            let cfg = g.u64() as u8;
            let flags =
                (expect.head as u8) | (expect.connect as u8) << 1 | (expect.upgrade as u8) << 2;
            let mut data = vec![cfg & !3, flags, g.u64() as u8];
            data.extend_from_slice(&bytes);
            check_decoder(&data);
        }
    }

    #[test]
    fn generated_request_heads_keep_the_encoder_invariants() {
        let mut g = Gen(13);
        let pieces: &[&str] = &[
            "GET",
            "POST",
            "HEAD",
            "CONNECT",
            "/",
            "/a?b=c",
            "host",
            "x-h",
            "v",
            "a b",
            "\r\n",
            "\n",
            "\r",
            ":",
            "é",
            " ",
            "\t",
            "",
            "connection",
            "close",
        ];
        for _ in 0..20_000 {
            let mut packed = String::new();
            for i in 0..g.upto(8) {
                if i > 0 {
                    packed.push('\0');
                }
                for _ in 0..1 + g.upto(2) {
                    packed.push_str(g.pick::<&str>(pieces));
                }
            }
            let mut data = vec![g.u64() as u8];
            data.extend_from_slice(packed.as_bytes());
            check_encoder(&data);
        }
    }
}
