//! Tests of the HTTP/1.1 response decoder, by concept: heads (`head.rs`), body framing
//! (`body.rs`) and the state machine across responses (`decoder.rs`). This file is their harness:
//! it feeds a decoder and records what comes out in comparable form.
use super::body::MAX_CHUNK_LINE;
use super::decode::{DecodeError, Decoded, Expect, Head, HeaderBlock, ResponseDecoder};
use bytes::BytesMut;

mod body;
mod decoder;
mod head;

const MAX: usize = 16 * 1024;

/// A decoded item in comparable form; bodies are joined because split points move Data
/// boundaries.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Ev {
    Head(H),
    Upgrade(H),
    Body(Vec<u8>),
    End(Option<Vec<(Vec<u8>, Vec<u8>)>>),
    Err(DecodeError),
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct H {
    status: u16,
    minor: u8,
    reason: Vec<u8>,
    headers: Vec<(Vec<u8>, Vec<u8>)>,
    keep_alive: bool,
    timeout: Option<u64>,
}

fn fields(h: &HeaderBlock) -> Vec<(Vec<u8>, Vec<u8>)> {
    h.iter().map(|(n, v)| (n.to_vec(), v.to_vec())).collect()
}

fn h(head: &Head) -> H {
    H {
        status: head.status,
        minor: head.version_minor,
        reason: head.reason.to_vec(),
        headers: fields(&head.headers),
        keep_alive: head.keep_alive,
        timeout: head.keep_alive_timeout_ms,
    }
}

fn push(evs: &mut Vec<Ev>, item: Decoded) {
    match item {
        Decoded::Head(x) => evs.push(Ev::Head(h(&x))),
        Decoded::Upgrade(x) => evs.push(Ev::Upgrade(h(&x))),
        Decoded::Data(d) => {
            assert!(!d.is_empty(), "zero-length Data");
            if let Some(Ev::Body(b)) = evs.last_mut() {
                b.extend_from_slice(&d);
            } else {
                evs.push(Ev::Body(d.to_vec()));
            }
        }
        Decoded::End { trailers } => {
            if let Some(t) = &trailers {
                assert!(!t.is_empty());
            }
            evs.push(Ev::End(trailers.as_ref().map(fields)))
        }
    }
}

/// Drains `dec` over `buf`; true once the decoder is finished (upgrade or error).
fn drain(dec: &mut ResponseDecoder, buf: &mut BytesMut, evs: &mut Vec<Ev>) -> bool {
    for _ in 0..100_000 {
        match dec.decode(buf) {
            Ok(None) => return false,
            Ok(Some(item)) => {
                let up = matches!(item, Decoded::Upgrade(_));
                push(evs, item);
                if up {
                    return true;
                }
            }
            Err(e) => {
                evs.push(Ev::Err(e));
                return true;
            }
        }
    }
    panic!("decode did not converge");
}

/// Feeds `pieces` in order, then optionally eof; returns events and the leftover buffer.
fn run(expects: &[Expect], pieces: &[&[u8]], eof: bool, max: usize) -> (Vec<Ev>, Vec<u8>) {
    let mut dec = ResponseDecoder::new(max);
    for e in expects {
        dec.push_expect(*e);
    }
    let mut buf = BytesMut::new();
    let mut evs = Vec::new();
    let mut done = false;
    for p in pieces {
        buf.extend_from_slice(p);
        // After an upgrade or error the rest is only collected, as a connection would.
        if !done && drain(&mut dec, &mut buf, &mut evs) {
            done = true;
        }
    }
    if eof && !done {
        match dec.eof() {
            Ok(Some(item)) => push(&mut evs, item),
            Ok(None) => {}
            Err(e) => evs.push(Ev::Err(e)),
        }
    }
    (evs, buf.to_vec())
}

fn get() -> Expect {
    Expect::default()
}

fn one(input: &[u8]) -> Vec<Ev> {
    run(&[get()], &[input], false, MAX).0
}

fn head_of(ev: &Ev) -> &H {
    match ev {
        Ev::Head(h) | Ev::Upgrade(h) => h,
        other => panic!("expected a head, got {other:?}"),
    }
}

fn hdrs(list: &[(&str, &str)]) -> Vec<(Vec<u8>, Vec<u8>)> {
    list.iter().map(|(n, v)| (n.as_bytes().to_vec(), v.as_bytes().to_vec())).collect()
}
