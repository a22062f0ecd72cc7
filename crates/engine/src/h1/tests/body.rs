//! Body framing: Content-Length, chunked (extensions, trailers), close-delimited, and their errors.
use super::*;

#[test]
fn simple_content_length() {
    let evs = one(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX-Thing:  spaced \t\r\n\r\nhello");
    assert_eq!(
        evs,
        vec![
            Ev::Head(H {
                status: 200,
                minor: 1,
                reason: b"OK".to_vec(),
                headers: hdrs(&[("Content-Length", "5"), ("X-Thing", "spaced")]),
                keep_alive: true,
                timeout: None,
            }),
            Ev::Body(b"hello".to_vec()),
            Ev::End(None),
        ]
    );
}

#[test]
fn chunked_with_extensions_and_trailers() {
    let input = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n\
        5;name=value\r\nhello\r\n\
        1 ; a = \"q\\\"uoted; x\" ; b\r\n,\r\n\
        6\r\n world\r\n\
        0;last\r\nX-Checksum: abc\r\nX-Other:  v  \r\n\r\n";
    let evs = one(input);
    assert_eq!(head_of(&evs[0]).status, 200);
    assert_eq!(evs[1], Ev::Body(b"hello, world".to_vec()));
    assert_eq!(evs[2], Ev::End(Some(hdrs(&[("X-Checksum", "abc"), ("X-Other", "v")]))));
    assert_eq!(evs.len(), 3);
}

#[test]
fn chunked_without_trailers() {
    let evs = one(
        b"HTTP/1.1 200 OK\r\ntransfer-encoding: gzip, chunked\r\n\r\nA\r\n0123456789\r\n0\r\n\r\n",
    );
    assert_eq!(evs[1], Ev::Body(b"0123456789".to_vec()));
    assert_eq!(evs[2], Ev::End(None));
    assert!(head_of(&evs[0]).keep_alive);
}

#[test]
fn chunked_uppercase_hex_and_big_chunk() {
    let body = vec![b'z'; 0xABC];
    let mut input = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: Chunked\r\n\r\nABC\r\n".to_vec();
    input.extend_from_slice(&body);
    input.extend_from_slice(b"\r\n0\r\n\r\n");
    let evs = one(&input);
    assert_eq!(evs[1], Ev::Body(body));
    assert_eq!(evs[2], Ev::End(None));
}

#[test]
fn close_delimited_until_eof() {
    let (evs, _) = run(&[get()], &[b"HTTP/1.1 200 OK\r\n\r\nsome ", b"bytes"], true, MAX);
    assert!(!head_of(&evs[0]).keep_alive);
    assert_eq!(evs[1], Ev::Body(b"some bytes".to_vec()));
    assert_eq!(evs[2], Ev::End(None));
    // Empty close-delimited body.
    let (evs, _) = run(&[get()], &[b"HTTP/1.1 200 OK\r\n\r\n"], true, MAX);
    assert_eq!(evs.len(), 2);
    assert_eq!(evs[1], Ev::End(None));
}

#[test]
fn te_without_final_chunked_is_close_delimited() {
    let (evs, _) = run(
        &[get()],
        &[b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\n\r\n5\r\nxx"],
        true,
        MAX,
    );
    assert!(!head_of(&evs[0]).keep_alive);
    assert_eq!(evs[1], Ev::Body(b"5\r\nxx".to_vec()));
    assert_eq!(evs[2], Ev::End(None));
}

#[test]
fn multiple_te_fields_last_coding_wins() {
    let evs = one(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nx\r\n0\r\n\r\n");
    assert_eq!(evs[1], Ev::Body(b"x".to_vec()));
    assert_eq!(evs[2], Ev::End(None));
}

#[test]
fn head_request_ignores_content_length() {
    let head = Expect { head: true, ..Expect::default() };
    let (evs, rest) = run(
        &[head, get()],
        &[b"HTTP/1.1 200 OK\r\nContent-Length: 1234\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"],
        false,
        MAX,
    );
    assert_eq!(evs[1], Ev::End(None));
    assert_eq!(head_of(&evs[2]).status, 200);
    assert_eq!(evs[3], Ev::Body(b"ok".to_vec()));
    assert_eq!(evs[4], Ev::End(None));
    assert!(rest.is_empty());
    // HEAD with transfer-encoding: also no body.
    let (evs, rest) =
        run(&[head], &[b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"], false, MAX);
    assert_eq!(evs.len(), 2);
    assert!(rest.is_empty());
}

#[test]
fn no_body_statuses() {
    for status in ["204 No Content", "304 Not Modified"] {
        let input = format!("HTTP/1.1 {status}\r\nContent-Length: 10\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx");
        let (evs, _) = run(&[get(), get()], &[input.as_bytes()], false, MAX);
        assert_eq!(evs.len(), 5, "{evs:?}");
        assert_eq!(evs[1], Ev::End(None));
        assert_eq!(evs[3], Ev::Body(b"x".to_vec()));
        assert!(head_of(&evs[0]).keep_alive);
    }
    // 204 without any framing header is not close-delimited either.
    let evs = one(b"HTTP/1.1 204 No Content\r\n\r\n");
    assert_eq!(evs[1], Ev::End(None));
    assert!(head_of(&evs[0]).keep_alive);
}

#[test]
fn cl_and_te_rejected() {
    for input in [
        &b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n"[..],
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: x\r\n\r\n",
    ] {
        assert_eq!(
            one(input),
            vec![Ev::Err(DecodeError::Parse("content-length and transfer-encoding both present"))]
        );
    }
}

#[test]
fn content_length_variants() {
    let conflict = vec![Ev::Err(DecodeError::Parse("conflicting content-length"))];
    assert_eq!(
        one(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello"),
        conflict
    );
    assert_eq!(one(b"HTTP/1.1 200 OK\r\nContent-Length: 5, 6\r\n\r\nhello"), conflict);
    let invalid = vec![Ev::Err(DecodeError::Parse("invalid content-length"))];
    for v in ["-1", "+5", "5a", "0x5", "", "5,", "5,,5", " ", "99999999999999999999", "5 5"] {
        let input = format!("HTTP/1.1 200 OK\r\nContent-Length: {v}\r\n\r\n");
        assert_eq!(one(input.as_bytes()), invalid, "{v:?}");
    }
    // Identical duplicates, as separate fields or a list, are one length.
    for input in [
        &b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\nhello"[..],
        b"HTTP/1.1 200 OK\r\nContent-Length: 5, 5\r\n\r\nhello",
        b"HTTP/1.1 200 OK\r\ncontent-length: 005\r\n\r\nhello",
    ] {
        let evs = one(input);
        assert_eq!(evs[1], Ev::Body(b"hello".to_vec()));
        assert_eq!(evs[2], Ev::End(None));
    }
    // A huge but valid length is accepted and then reported precisely on eof.
    let (evs, _) = run(
        &[get()],
        &[b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 18446744073709551615\r\n\r\nab"],
        true,
        MAX,
    );
    assert_eq!(
        evs.last(),
        Some(&Ev::Err(DecodeError::ContentLengthMismatch { expected: u64::MAX, received: 2 }))
    );
}

#[test]
fn bad_chunk_sizes() {
    for line in [
        "x\r\n",
        "\r\n",
        ";ext\r\n",
        "-1\r\n",
        "1 \r\n",
        "1\t\r\n",
        "1;\r\n",
        "1;=v\r\n",
        "1;a=\r\n",
        "1;a=\"open\r\n",
        "1;a b\r\n",
        "11111111111111111\r\n",
        "00000000000000001\r\n",
        "1\n",
        "0x1\r\n",
        "1\r\r\n",
    ] {
        let input =
            format!("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n{line}x\r\n0\r\n\r\n");
        let evs = one(input.as_bytes());
        assert_eq!(
            evs.last(),
            Some(&Ev::Err(DecodeError::Parse("invalid chunk size"))),
            "{line:?}: {evs:?}"
        );
    }
    // 16 hex digits is the maximum and fits u64.
    let (evs, _) = run(
        &[get()],
        &[b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffff\r\nab"],
        true,
        MAX,
    );
    assert_eq!(evs[1], Ev::Body(b"ab".to_vec()));
    assert_eq!(evs[2], Ev::Err(DecodeError::Closed));
}

#[test]
fn chunk_line_too_long() {
    let mut input = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1;a=".to_vec();
    input.extend(std::iter::repeat_n(b'b', MAX_CHUNK_LINE));
    let evs = one(&input);
    assert_eq!(evs.last(), Some(&Ev::Err(DecodeError::Parse("chunk size line too long"))));
}

#[test]
fn missing_crlf_after_chunk_data() {
    for tail in ["5\r\nhelloX\r\n0\r\n\r\n", "5\r\nhello\n0\r\n\r\n", "5\r\nhello\rX"] {
        let input = format!("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n{tail}");
        let evs = one(input.as_bytes());
        assert_eq!(evs.last(), Some(&Ev::Err(DecodeError::Parse("invalid chunk"))), "{tail:?}");
    }
}

#[test]
fn bad_trailers() {
    let evs = one(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nbad trailer\r\n\r\n");
    assert_eq!(evs.last(), Some(&Ev::Err(DecodeError::Parse("invalid trailer"))));
    // Trailers count against max_header_size.
    let mut input = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nx-big: ".to_vec();
    input.extend(std::iter::repeat_n(b'a', 300));
    let (evs, _) = run(&[get()], &[&input], false, 256);
    assert_eq!(evs.last(), Some(&Ev::Err(DecodeError::HeadersOverflow)));
    input.extend_from_slice(b"\r\n\r\n");
    let (evs, _) = run(&[get()], &[&input], false, 256);
    assert_eq!(evs.last(), Some(&Ev::Err(DecodeError::HeadersOverflow)));
}

#[test]
fn eof_mid_content_length() {
    // A response that keeps the connection open: the close is the peer going away, as undici
    // reports it ("other side closed"), whatever the body's framing.
    for head in [
        &b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc"[..],
        b"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 10\r\n\r\n",
    ] {
        let (evs, _) = run(&[get()], &[head], true, MAX);
        assert_eq!(evs.last(), Some(&Ev::Err(DecodeError::Closed)));
    }
    // One that said it closes: the close ends the message short of its length.
    let (evs, _) = run(
        &[get()],
        &[b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 10\r\n\r\nabc"],
        true,
        MAX,
    );
    assert_eq!(evs[1], Ev::Body(b"abc".to_vec()));
    assert_eq!(evs[2], Ev::Err(DecodeError::ContentLengthMismatch { expected: 10, received: 3 }));
    let (evs, _) = run(&[get()], &[b"HTTP/1.0 200 OK\r\nContent-Length: 10\r\n\r\n"], true, MAX);
    assert_eq!(evs[1], Ev::Err(DecodeError::ContentLengthMismatch { expected: 10, received: 0 }));
}

#[test]
fn eof_mid_head_and_mid_chunked() {
    let (evs, _) = run(&[get()], &[b"HTTP/1.1 200 OK\r\nContent-"], true, MAX);
    assert_eq!(evs, vec![Ev::Err(DecodeError::Closed)]);
    let (evs, _) = run(&[get()], &[b"HTTP/1"], true, MAX);
    assert_eq!(evs, vec![Ev::Err(DecodeError::Closed)]);
    let chunked = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n";
    // Every cut inside the body, including right before the final CRLF, is a close mid-body.
    let body_start = chunked.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
    for cut in body_start..chunked.len() {
        let (evs, _) = run(&[get()], &[&chunked[..cut]], true, MAX);
        assert_eq!(evs.last(), Some(&Ev::Err(DecodeError::Closed)), "cut {cut}");
    }
    // Idle with nothing received: a clean close, even with a request outstanding; the
    // connection layer decides what that means from pending().
    let (evs, _) = run(&[get()], &[], true, MAX);
    assert!(evs.is_empty());
}

#[test]
fn data_is_not_copied_or_capped() {
    let mut input = b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n".to_vec();
    input.extend(std::iter::repeat_n(b'q', 100_000));
    let mut dec = ResponseDecoder::new(MAX);
    dec.push_expect(get());
    let mut buf = BytesMut::from(&input[..]);
    assert!(matches!(dec.decode(&mut buf).unwrap(), Some(Decoded::Head(_))));
    let ptr = buf.as_ptr();
    match dec.decode(&mut buf).unwrap() {
        Some(Decoded::Data(d)) => {
            assert_eq!(d.len(), 100_000);
            assert_eq!(d.as_ptr(), ptr, "split off the input, not copied");
        }
        other => panic!("{other:?}"),
    }
}
