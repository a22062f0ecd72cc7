//! The state machine: pipelined responses, 1xx, upgrades, stray bytes, every split point, fuzzing.
use super::*;

#[test]
fn state_queries() {
    let mut dec = ResponseDecoder::new(MAX);
    assert!(dec.is_idle());
    assert_eq!(dec.pending(), 0);
    dec.push_expect(get());
    dec.push_expect(get());
    assert_eq!(dec.pending(), 2);
    let mut buf = BytesMut::from(&b"HTTP/1.1 200 OK\r\nContent-Le"[..]);
    assert!(dec.decode(&mut buf).unwrap().is_none());
    assert!(!dec.is_idle());
    assert_eq!(buf.len(), 27, "partial head bytes stay in the buffer");
    buf.extend_from_slice(b"ngth: 3\r\n\r\nab");
    assert!(matches!(dec.decode(&mut buf).unwrap(), Some(Decoded::Head(_))));
    assert!(!dec.is_idle());
    assert!(matches!(dec.decode(&mut buf).unwrap(), Some(Decoded::Data(d)) if &d[..] == b"ab"));
    assert!(dec.decode(&mut buf).unwrap().is_none());
    buf.extend_from_slice(b"c");
    assert!(matches!(dec.decode(&mut buf).unwrap(), Some(Decoded::Data(d)) if &d[..] == b"c"));
    assert_eq!(dec.pending(), 2);
    assert!(matches!(dec.decode(&mut buf).unwrap(), Some(Decoded::End { trailers: None })));
    assert!(dec.is_idle());
    assert_eq!(dec.pending(), 1);
    assert!(dec.decode(&mut buf).unwrap().is_none());
    assert_eq!(dec.eof().unwrap().map(|_| ()), None, "idle eof is clean");
}

#[test]
fn pipelined_in_one_buffer() {
    let mut input = Vec::new();
    for i in 0..50 {
        let body = format!("body-{i}");
        input.extend_from_slice(
            format!("HTTP/1.1 200 OK\r\ncontent-length: {}\r\n\r\n{}", body.len(), body).as_bytes(),
        );
    }
    let expects = vec![get(); 50];
    let (evs, rest) = run(&expects, &[&input], false, MAX);
    assert!(rest.is_empty());
    assert_eq!(evs.len(), 150);
    for i in 0..50 {
        assert_eq!(head_of(&evs[i * 3]).status, 200);
        assert_eq!(evs[i * 3 + 1], Ev::Body(format!("body-{i}").into_bytes()));
        assert_eq!(evs[i * 3 + 2], Ev::End(None));
    }
}

#[test]
fn continue_then_final() {
    let mut dec = ResponseDecoder::new(MAX);
    dec.push_expect(get());
    let mut buf = BytesMut::from(&b"HTTP/1.1 100 Continue\r\n\r\n"[..]);
    match dec.decode(&mut buf).unwrap() {
        Some(Decoded::Head(h)) => assert_eq!(h.status, 100),
        other => panic!("{other:?}"),
    }
    assert!(dec.decode(&mut buf).unwrap().is_none());
    assert_eq!(dec.pending(), 1);
    assert!(!dec.is_idle(), "a response is in progress after a 1xx");
    buf.extend_from_slice(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nhi");
    let mut evs = Vec::new();
    drain(&mut dec, &mut buf, &mut evs);
    assert_eq!(head_of(&evs[0]).status, 200);
    assert_eq!(evs[1], Ev::Body(b"hi".to_vec()));
    assert_eq!(evs[2], Ev::End(None));
    assert_eq!(dec.pending(), 0);
}

#[test]
fn early_hints_then_final() {
    let evs = one(b"HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\n\
          HTTP/1.1 103 Early Hints\r\nLink: </app.js>; rel=preload\r\n\r\n\
          HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
    assert_eq!(evs.len(), 4);
    assert_eq!(head_of(&evs[0]).status, 103);
    assert_eq!(head_of(&evs[0]).headers, hdrs(&[("Link", "</style.css>; rel=preload")]));
    assert_eq!(head_of(&evs[1]).status, 103);
    assert_eq!(head_of(&evs[2]).status, 200);
    assert_eq!(evs[3], Ev::End(None));
}

#[test]
fn eof_after_informational_is_closed() {
    let (evs, _) = run(&[get()], &[b"HTTP/1.1 100 Continue\r\n\r\n"], true, MAX);
    assert_eq!(evs.last(), Some(&Ev::Err(DecodeError::Closed)));
}

#[test]
fn upgrade_leaves_remaining_bytes() {
    let up = Expect { upgrade: true, ..Expect::default() };
    let mut dec = ResponseDecoder::new(MAX);
    dec.push_expect(up);
    let mut buf = BytesMut::from(&b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n\x81\x05hello"[..]);
    match dec.decode(&mut buf).unwrap() {
        Some(Decoded::Upgrade(h)) => {
            assert_eq!(h.status, 101);
            assert_eq!(&h.reason[..], b"Switching Protocols");
            assert!(!h.keep_alive);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(&buf[..], b"\x81\x05hello");
    assert_eq!(dec.pending(), 0);
    assert!(dec.decode(&mut buf).is_err(), "decoder is finished");
    assert_eq!(&buf[..], b"\x81\x05hello", "and it does not touch the tunnel bytes");
}

#[test]
fn upgrade_after_informational() {
    let up = Expect { upgrade: true, ..Expect::default() };
    let (evs, rest) = run(
        &[up],
        &[b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 101 Switching Protocols\r\n\r\nraw"],
        false,
        MAX,
    );
    assert_eq!(head_of(&evs[0]).status, 100);
    assert!(matches!(&evs[1], Ev::Upgrade(h) if h.status == 101));
    assert_eq!(rest, b"raw");
}

#[test]
fn upgrade_declined_is_a_normal_response() {
    let up = Expect { upgrade: true, ..Expect::default() };
    let (evs, _) = run(&[up], &[b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nno"], false, MAX);
    assert!(matches!(&evs[0], Ev::Head(h) if h.status == 200));
    assert_eq!(evs[1], Ev::Body(b"no".to_vec()));
}

#[test]
fn unexpected_101() {
    let evs = one(b"HTTP/1.1 101 Switching Protocols\r\n\r\n");
    assert_eq!(evs, vec![Ev::Err(DecodeError::Parse("unexpected 101"))]);
}

#[test]
fn connect_2xx_is_upgrade() {
    let connect = Expect { connect: true, ..Expect::default() };
    // CL/TE on a 2xx CONNECT answer are ignored (RFC 9112 §6.3), even contradictory ones.
    let (evs, rest) = run(
        &[connect],
        &[b"HTTP/1.1 200 Connection Established\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n\x16\x03\x01"],
        false,
        MAX,
    );
    assert_eq!(evs.len(), 1);
    assert!(
        matches!(&evs[0], Ev::Upgrade(h) if h.status == 200 && h.reason == b"Connection Established")
    );
    assert_eq!(rest, b"\x16\x03\x01");
    // A refused CONNECT has an ordinary body.
    let (evs, rest) =
        run(&[connect], &[b"HTTP/1.1 407 Proxy Auth\r\nContent-Length: 3\r\n\r\nno!"], false, MAX);
    assert!(matches!(&evs[0], Ev::Head(h) if h.status == 407));
    assert_eq!(evs[1], Ev::Body(b"no!".to_vec()));
    assert_eq!(evs[2], Ev::End(None));
    assert!(rest.is_empty());
}

#[test]
fn empty_lines_before_a_status_line_are_ignored() {
    // A stray CRLF after a complete response, on an idle connection: consumed, no error.
    let (evs, rest) =
        run(&[get()], &[b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok\r\n"], false, MAX);
    assert_eq!(evs.last(), Some(&Ev::End(None)));
    assert_eq!(evs.len(), 3);
    assert!(rest.is_empty(), "the CRLF is consumed");
    // The same CRLF in a later read, and empty lines (CRLF or bare LF) before the next
    // pipelined response, split at every point.
    let whole: &[u8] = b"HTTP/1.1 204 No Content\r\n\r\n\r\n\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx\r\n";
    for cut in 0..whole.len() {
        let (evs, rest) = run(&[get(), get()], &[&whole[..cut], &whole[cut..]], true, MAX);
        let ends = evs.iter().filter(|e| **e == Ev::End(None)).count();
        assert_eq!(ends, 2, "cut {cut}: {evs:?}");
        assert!(!evs.iter().any(|e| matches!(e, Ev::Err(_))), "cut {cut}: {evs:?}");
        assert!(rest.is_empty(), "cut {cut}");
    }
    // Without any request outstanding, lone empty lines are still fine.
    let mut dec = ResponseDecoder::new(MAX);
    let mut buf = BytesMut::from(&b"\r\n\n\r"[..]);
    assert!(dec.decode(&mut buf).unwrap().is_none());
    assert!(buf.is_empty());
    buf.extend_from_slice(b"\n");
    assert!(dec.decode(&mut buf).unwrap().is_none());
    assert!(dec.is_idle());
}

#[test]
fn a_cr_not_followed_by_lf_fails_the_same_whole_or_split() {
    // Found by the fuzzer: split after the CR, the error differed from the whole feed's.
    let mut whole = ResponseDecoder::new(MAX);
    let mut buf = BytesMut::from(&b"\rHTTP/1.1 200 OK\r\n\r\n"[..]);
    let e1 = whole.decode(&mut buf).unwrap_err().to_string();
    let mut split = ResponseDecoder::new(MAX);
    let mut buf = BytesMut::from(&b"\r"[..]);
    assert!(split.decode(&mut buf).unwrap().is_none());
    buf.extend_from_slice(b"HTTP/1.1 200 OK\r\n\r\n");
    let e2 = split.decode(&mut buf).unwrap_err().to_string();
    assert_eq!(e1, e2);
    assert_eq!(e1, "HTTP parse error: invalid empty line");
}

#[test]
fn other_stray_bytes_still_poison_an_idle_connection() {
    // After the empty line, anything else with no request outstanding is an error...
    let (evs, rest) = run(
        &[get()],
        &[b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n\r\nHTTP/1.1 200 OK\r\n\r\n"],
        false,
        MAX,
    );
    assert_eq!(evs[1], Ev::End(None));
    assert_eq!(evs[2], Ev::Err(DecodeError::Parse("response without a request")));
    assert_eq!(rest, b"HTTP/1.1 200 OK\r\n\r\n");
    // ...and so are a space, a tab or a bare CR followed by something other than LF.
    for junk in [&b" \r\n"[..], b"\t", b"\rX", b"\r\r\n", b"x\r\n"] {
        let mut dec = ResponseDecoder::new(MAX);
        let mut buf = BytesMut::from(junk);
        assert!(dec.decode(&mut buf).is_err(), "{junk:?}");
    }
    // A bare CR split from what follows it is caught on the next read.
    let mut dec = ResponseDecoder::new(MAX);
    dec.push_expect(get());
    let mut buf = BytesMut::from(&b"\r"[..]);
    assert!(dec.decode(&mut buf).unwrap().is_none());
    buf.extend_from_slice(b"HTTP/1.1 200 OK\r\n\r\n");
    assert_eq!(dec.decode(&mut buf).unwrap_err(), DecodeError::Parse("invalid empty line"));
}

#[test]
fn response_without_request() {
    let mut dec = ResponseDecoder::new(MAX);
    let mut buf = BytesMut::from(&b"HTTP/1.1 200 OK\r\n\r\n"[..]);
    assert_eq!(dec.decode(&mut buf).unwrap_err(), DecodeError::Parse("response without a request"));
    // Extra bytes after the last expected response.
    let (evs, rest) = run(
        &[get()],
        &[b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\nHTTP/1.1 200 OK\r\n\r\n"],
        false,
        MAX,
    );
    assert_eq!(evs[1], Ev::End(None));
    assert_eq!(evs[2], Ev::Err(DecodeError::Parse("response without a request")));
    assert_eq!(rest, b"HTTP/1.1 200 OK\r\n\r\n");
    // Empty buffer with nothing pending is fine.
    let mut dec = ResponseDecoder::new(MAX);
    assert!(dec.decode(&mut BytesMut::new()).unwrap().is_none());
}

#[test]
fn errors_display() {
    assert_eq!(DecodeError::Closed.to_string(), "other side closed");
    assert_eq!(DecodeError::Parse("invalid chunk").to_string(), "HTTP parse error: invalid chunk");
    assert!(DecodeError::ContentLengthMismatch { expected: 5, received: 2 }
        .to_string()
        .contains("expected 5"));
    assert_eq!(DecodeError::HeadersOverflow.to_string(), "response headers too large");
    let _: &dyn std::error::Error = &DecodeError::Closed;
}

/// Representative inputs for the split tests: expects, bytes, whether eof ends them.
fn corpus() -> Vec<(Vec<Expect>, Vec<u8>, bool)> {
    let head = Expect { head: true, ..Expect::default() };
    let up = Expect { upgrade: true, ..Expect::default() };
    let connect = Expect { connect: true, ..Expect::default() };
    vec![
        (vec![get()], b"HTTP/1.1 200 OK\r\nContent-Length: 11\r\nServer: t\r\n\r\nhello world".to_vec(), false),
        (
            vec![get()],
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4;a=b;c=\"d;e\"\r\nWiki\r\n5\r\npedia\r\nE\r\n in\r\n\r\nchunks.\r\n0\r\nExpires: never\r\nX-Sum: 1\r\n\r\n".to_vec(),
            false,
        ),
        (
            vec![get(), get()],
            b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabcHTTP/1.1 404 Not Found\r\ntransfer-encoding: chunked\r\n\r\n2\r\nno\r\n0\r\n\r\n".to_vec(),
            false,
        ),
        (
            vec![get(), head, get()],
            b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nokHTTP/1.1 200 OK\r\nContent-Length: 99\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n".to_vec(),
            false,
        ),
        (vec![get()], b"HTTP/1.0 200 OK\r\nKeep-Alive: timeout=5\r\n\r\nuntil the end".to_vec(), true),
        (vec![up], b"HTTP/1.1 103 Early\r\nLink: x\r\n\r\nHTTP/1.1 101 Switching\r\nUpgrade: ws\r\n\r\nframes".to_vec(), false),
        (vec![connect], b"HTTP/1.1 200 OK\r\n\r\ntunnel".to_vec(), false),
        (vec![get()], b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort".to_vec(), true),
    ]
}

#[test]
fn every_split_point_matches_whole_feed() {
    for (expects, input, eof) in corpus() {
        let whole = run(&expects, &[&input], eof, MAX);
        assert!(!whole.0.iter().any(|e| matches!(e, Ev::Err(DecodeError::Parse(_)))), "{whole:?}");
        for cut in 0..=input.len() {
            let split = run(&expects, &[&input[..cut], &input[cut..]], eof, MAX);
            assert_eq!(split, whole, "cut at {cut} of {:?}", String::from_utf8_lossy(&input));
        }
        let pieces: Vec<&[u8]> = input.chunks(1).collect();
        assert_eq!(run(&expects, &pieces, eof, MAX), whole, "byte by byte");
    }
}

#[test]
fn every_split_point_of_errors_matches_too() {
    // Errors must not depend on how the bytes arrive either.
    for input in [
        &b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhelloX"[..],
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
    ] {
        let whole = run(&[get()], &[input], true, MAX);
        for cut in 0..=input.len() {
            assert_eq!(
                run(&[get()], &[&input[..cut], &input[cut..]], true, MAX),
                whole,
                "cut {cut}"
            );
        }
    }
}

/// xorshift64*: deterministic, dependency-free.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Runs arbitrary bytes through a decoder in random pieces, with random expects; the only
/// assertion is that nothing panics or loops, plus the Data invariant checked in `push`.
fn fuzz_one(rng: &mut Rng, input: &[u8]) {
    let mut expects = Vec::new();
    for _ in 0..1 + rng.below(4) {
        let k = rng.next();
        expects.push(Expect { head: k & 1 != 0, connect: k & 6 == 6, upgrade: k & 24 == 24 });
    }
    let mut pieces = Vec::new();
    let mut at = 0;
    while at < input.len() {
        let n = 1 + rng.below(input.len() - at);
        pieces.push(&input[at..at + n]);
        at += n;
    }
    let max = [64, 512, MAX][rng.below(3)];
    let _ = run(&expects, &pieces, rng.next() & 1 == 0, max);
}

#[test]
fn fuzz_random_bytes() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    const ALPHABET: &[u8] = b"HTTP/1.0 2345\r\n:;=\"\\,chunkedContent-LengthTransfer-Encoding \t0123456789abcdefABCDEF\x00\xff";
    for _ in 0..4000 {
        let len = rng.below(300);
        let biased = rng.next() & 1 == 0;
        let input: Vec<u8> = (0..len)
            .map(|_| if biased { ALPHABET[rng.below(ALPHABET.len())] } else { rng.next() as u8 })
            .collect();
        fuzz_one(&mut rng, &input);
        // Random garbage after a valid head reaches the body/chunk states too.
        let mut framed = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
        framed.extend_from_slice(&input);
        fuzz_one(&mut rng, &framed);
    }
}

#[test]
fn fuzz_mutated_valid_responses() {
    let mut rng = Rng(0x1234_5678_9abc_def1);
    let seeds: Vec<Vec<u8>> = corpus().into_iter().map(|(_, b, _)| b).collect();
    const INTERESTING: &[u8] = b"\r\n:;=\" 0fF,\t\x00\x7f\x80\xff";
    for i in 0..6000 {
        let mut input = seeds[i % seeds.len()].clone();
        for _ in 0..1 + rng.below(4) {
            let pos = rng.below(input.len() + 1);
            match rng.below(5) {
                0 if pos < input.len() => input[pos] = rng.next() as u8,
                1 if pos < input.len() => input[pos] = INTERESTING[rng.below(INTERESTING.len())],
                2 if pos < input.len() => {
                    input.remove(pos);
                }
                3 => input.insert(pos, INTERESTING[rng.below(INTERESTING.len())]),
                _ => {
                    // Duplicate a slice: repeats headers, chunks and whole responses.
                    let end = (pos + rng.below(40)).min(input.len());
                    let dup = input[pos..end].to_vec();
                    let at = rng.below(input.len() + 1);
                    input.splice(at..at, dup);
                }
            }
        }
        fuzz_one(&mut rng, &input);
    }
}
