//! Shared by the fuzz targets (`src/bin/*`) and their regression runner: each check panics on a
//! violated invariant, which AFL records as a crash.
use bytes::BytesMut;
use ferro_engine::h1::{encode_request_head, BodyFraming, Decoded, Expect, ResponseDecoder};

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
pub fn decode_pieces(expects: &[Expect], max_header: usize, pieces: &[&[u8]], eof: bool) -> Vec<Ev> {
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
    let Some((&cfg, rest)) = data.split_first() else { return };
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
    let Some((&cfg, rest)) = data.split_first() else { return };
    let Ok(packed) = std::str::from_utf8(rest) else { return };
    let framing = match cfg & 3 {
        0 => BodyFraming::None,
        1 => BodyFraming::Chunked,
        _ => BodyFraming::Length(u64::from(cfg) << 20),
    };
    let reset = cfg & 4 != 0;
    let mut out = b"prefix".to_vec();
    let Ok(kind) = encode_request_head(packed, framing, reset, &mut out) else {
        assert_eq!(out, b"prefix", "a refused head left bytes behind");
        return;
    };
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
    let mut parts = packed.split('\0');
    let method = parts.next().unwrap();
    let path = parts.next().unwrap();
    let request_line = format!("{method} {path} HTTP/1.1\r");
    assert_eq!(lines[0], request_line.as_bytes());
    assert_eq!(kind.head, method == "HEAD");
    assert_eq!(kind.connect, method == "CONNECT");
    let mut fields = Vec::new();
    while let (Some(n), Some(v)) = (parts.next(), parts.next()) {
        fields.push(format!("{n}: {v}"));
    }
    for (i, f) in fields.iter().enumerate() {
        let line = lines[1 + i];
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        assert_eq!(line, f.as_bytes(), "field {i} changed on the wire");
        let colon = f.find(':').unwrap();
        assert!(f[..colon].bytes().all(|b| b.is_ascii_graphic() && b != b':'), "bad name went out");
    }
    // Only the connection and framing lines follow the given fields.
    let extra = lines.len() - 1 - fields.len();
    assert!(extra <= 2, "{extra} lines beyond the given fields");
}
