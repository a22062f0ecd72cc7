//! Status lines, header fields and what they say about the connection (keep-alive).
use super::*;

#[test]
fn header_overflow() {
    let mut big = b"HTTP/1.1 200 OK\r\nx-big: ".to_vec();
    big.extend(std::iter::repeat_n(b'a', 200));
    // Incomplete: reported as soon as the limit is crossed, not when the head ends.
    let (evs, _) = run(&[get()], &[&big], false, 128);
    assert_eq!(evs, vec![Ev::Err(DecodeError::HeadersOverflow)]);
    // Complete.
    big.extend_from_slice(b"\r\ncontent-length: 0\r\n\r\n");
    let (evs, _) = run(&[get()], &[&big], false, 128);
    assert_eq!(evs, vec![Ev::Err(DecodeError::HeadersOverflow)]);
    // Exactly at the limit is fine; one byte over is not.
    let exact = b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n";
    let (evs, _) = run(&[get()], &[exact], false, exact.len());
    assert_eq!(evs.len(), 2);
    let (evs, _) = run(&[get()], &[exact], false, exact.len() - 1);
    assert_eq!(evs, vec![Ev::Err(DecodeError::HeadersOverflow)]);
    // Body bytes after a small head do not count.
    let mut with_body = b"HTTP/1.1 200 OK\r\ncontent-length: 500\r\n\r\n".to_vec();
    with_body.extend(std::iter::repeat_n(b'b', 500));
    let (evs, _) = run(&[get()], &[&with_body], false, 64);
    assert_eq!(evs[2], Ev::End(None));
}

#[test]
fn many_headers_use_the_slow_path() {
    let mut input = b"HTTP/1.1 200 OK\r\n".to_vec();
    for i in 0..1000 {
        input.extend_from_slice(format!("x-h{i}: {i}\r\n").as_bytes());
    }
    input.extend_from_slice(b"content-length: 1\r\n\r\nz");
    // Split too, so the "many headers" memo is exercised across partial parses.
    let (evs, _) = run(&[get()], &[&input[..5000], &input[5000..]], false, MAX);
    let head = head_of(&evs[0]);
    assert_eq!(head.headers.len(), 1001);
    assert_eq!(head.headers[999], (b"x-h999".to_vec(), b"999".to_vec()));
    assert_eq!(evs[1], Ev::Body(b"z".to_vec()));
    // A head with far too many fields for the limit overflows rather than erroring oddly.
    let (evs, _) = run(&[get()], &[&input], false, 4096);
    assert_eq!(evs, vec![Ev::Err(DecodeError::HeadersOverflow)]);
}

#[test]
fn invalid_status_lines() {
    for input in [
        &b"HTTP/1.1 abc\r\n\r\n"[..],
        b"HTTP/1.1 abc",
        b"HTTP/1.1 20\r\n\r\n",
        b"HTTP/1.1 2000 OK\r\n\r\n",
        b"HTTP/1.1 099 Low\r\n\r\n",
        b"HTTP/1.1 000\r\n\r\n",
        b"HTTP/2.0 200 OK\r\n\r\n",
        b"HTTP/1.2 200 OK\r\n\r\n",
        b"http/1.1 200 OK\r\n\r\n",
        b"HTTP/1.1  200 OK\r\n\r\n",
        b"HTTP/1.1 200 O\x01K\r\n\r\n",
    ] {
        assert_eq!(
            one(input),
            vec![Ev::Err(DecodeError::Parse("invalid status line"))],
            "{:?}",
            String::from_utf8_lossy(input)
        );
    }
}

#[test]
fn invalid_headers() {
    for input in [
        &b"HTTP/1.1 200 OK\r\nbad name: x\r\n\r\n"[..],
        b"HTTP/1.1 200 OK\r\nx: a\x00b\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nx: a\r\n folded\r\n\r\n",
        b"HTTP/1.1 200 OK\r\n: novalue\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nx: a\rb\r\n\r\n",
    ] {
        assert_eq!(
            one(input),
            vec![Ev::Err(DecodeError::Parse("invalid header"))],
            "{:?}",
            String::from_utf8_lossy(input)
        );
    }
}

#[test]
fn garbage() {
    let evs = one(b"\x00\xff garbage \x13\x37");
    assert!(matches!(evs.as_slice(), [Ev::Err(DecodeError::Parse(_))]));
    let evs = one(b"<html>hello</html>");
    assert!(matches!(evs.as_slice(), [Ev::Err(DecodeError::Parse(_))]));
    // Errors are sticky.
    let mut dec = ResponseDecoder::new(MAX);
    dec.push_expect(get());
    let mut buf = BytesMut::from(&b"nope\r\n\r\n"[..]);
    let e = dec.decode(&mut buf).unwrap_err();
    assert_eq!(dec.decode(&mut BytesMut::from(&b"HTTP/1.1 200 OK\r\n\r\n"[..])).unwrap_err(), e);
    assert_eq!(dec.eof().unwrap_err(), e);
}

#[test]
fn obs_text_reason_kept_raw() {
    let evs = one(b"HTTP/1.1 200 Tr\xe8s bien\r\ncontent-length: 0\r\n\r\n");
    assert_eq!(head_of(&evs[0]).reason, b"Tr\xe8s bien");
    let evs = one(b"HTTP/1.1 404\r\ncontent-length: 0\r\n\r\n");
    assert_eq!(head_of(&evs[0]).reason, b"");
    assert_eq!(head_of(&evs[0]).status, 404);
    let evs = one(b"HTTP/1.1 500 \r\ncontent-length: 0\r\n\r\n");
    assert_eq!(head_of(&evs[0]).reason, b"");
    // Leading empty lines (tolerated by httparse) do not shift the reason.
    let evs = one(b"\r\n\r\nHTTP/1.1 418 I'm a teapot\r\ncontent-length: 0\r\n\r\n");
    assert_eq!(head_of(&evs[0]).reason, b"I'm a teapot");
}

#[test]
fn keep_alive_rules() {
    let ka = |input: &[u8]| head_of(&one(input)[0]).keep_alive;
    assert!(ka(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"));
    assert!(!ka(b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"));
    assert!(!ka(b"HTTP/1.1 200 OK\r\nConnection: Close\r\nContent-Length: 0\r\n\r\n"));
    assert!(!ka(b"HTTP/1.1 200 OK\r\nconnection: Upgrade, CLOSE\r\nContent-Length: 0\r\n\r\n"));
    assert!(!ka(b"HTTP/1.1 200 OK\r\nConnection: keep-alive\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"));
    assert!(ka(b"HTTP/1.1 200 OK\r\nConnection: closed\r\nContent-Length: 0\r\n\r\n"));
    assert!(!ka(b"HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n"));
    assert!(ka(b"HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 0\r\n\r\n"));
    assert!(!ka(b"HTTP/1.0 200 OK\r\nConnection: keep-alive, close\r\nContent-Length: 0\r\n\r\n"));
    // Close-delimited never keeps the connection.
    assert!(!ka(b"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\n\r\n"));
    // Transfer-Encoding in HTTP/1.0 is untrustworthy framing (RFC 9112 §6.1).
    assert!(!ka(
        b"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nTransfer-Encoding: chunked\r\n\r\n"
    ));
    let evs = one(b"HTTP/1.0 200 OK\r\n\r\n");
    assert_eq!(head_of(&evs[0]).minor, 0);
}

#[test]
fn keep_alive_timeout_hint() {
    let t = |v: &str| {
        let input = format!("HTTP/1.1 200 OK\r\nKeep-Alive: {v}\r\nContent-Length: 0\r\n\r\n");
        head_of(&one(input.as_bytes())[0]).timeout
    };
    assert_eq!(t("timeout=5, max=100"), Some(5000));
    assert_eq!(t("max=100, Timeout = 7"), Some(7000));
    assert_eq!(t("timeout=\"3\""), Some(3000));
    assert_eq!(t("timeout=0"), Some(0));
    assert_eq!(t("timeout=5s"), Some(5000), "a unit suffix after the digits");
    assert_eq!(t("timeout=12sec, max=3"), Some(12000));
    assert_eq!(t("timeout=abc"), None);
    assert_eq!(t("timeout=-1"), None);
    assert_eq!(t("timeout="), None);
    assert_eq!(t("max=5"), None);
    assert_eq!(t("timeout=99999999999999999999"), None);
    assert_eq!(t("timeout=18446744073709552"), None, "overflows once in ms");
    assert_eq!(head_of(&one(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")[0]).timeout, None);
}

#[test]
fn header_block_accessors() {
    let mut dec = ResponseDecoder::new(MAX);
    dec.push_expect(get());
    let mut buf = BytesMut::from(&b"HTTP/1.1 200 OK\r\nA: 1\r\nb-B:\r\nC:\t3 \r\n\r\n"[..]);
    let head = match dec.decode(&mut buf).unwrap() {
        Some(Decoded::Head(h)) => h,
        other => panic!("{other:?}"),
    };
    let hb = &head.headers;
    assert_eq!(hb.len(), 3);
    assert!(!hb.is_empty());
    assert_eq!(hb.name(0), b"A");
    assert_eq!(hb.value(0), b"1");
    assert_eq!(hb.name(1), b"b-B");
    assert_eq!(hb.value(1), b"");
    assert_eq!(hb.value(2), b"3");
    assert_eq!(hb.name(3), b"");
    assert_eq!(hb.value(usize::MAX), b"");
    assert_eq!(hb.iter().count(), 3);
}
