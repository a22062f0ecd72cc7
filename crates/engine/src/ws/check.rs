//! Invariant checks on the WebSocket codec, shared by the fuzz target `ws_frames` (`fuzz/`,
//! feature `fuzzing`) and the codec's tests: each check panics when an invariant is violated,
//! which AFL records as a crash and `cargo test` as a failure.
use super::close_code::{INVALID_DATA, POLICY_VIOLATION, PROTOCOL_ERROR, TOO_BIG};
use super::frame::{self, apply_mask};
use super::{is_valid_close_code, Codec, DeflateParams, Sink, DEFAULT_MAX_FRAGMENTS};
use crate::pieces;

/// What the codec reported, in order, in comparable form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ev {
    Text(String),
    Binary(Vec<u8>),
    Ping(Vec<u8>),
    Pong(Vec<u8>),
    Close(Option<u16>, String),
    Fail(u16),
    /// A frame the client wrote, unmasked: (opcode, payload).
    Wrote(u8, Vec<u8>),
}

/// Records events; a text message that is not UTF-8 or a write that is not exactly one masked
/// client frame fails the check at once.
#[derive(Default)]
pub struct Collect(pub Vec<Ev>);

impl Sink for Collect {
    fn message(&mut self, text: bool, data: &[u8]) {
        self.0.push(if text {
            Ev::Text(String::from_utf8(data.to_vec()).expect("a text message that is not UTF-8"))
        } else {
            Ev::Binary(data.to_vec())
        });
    }
    fn ping(&mut self, data: &[u8]) {
        self.0.push(Ev::Ping(data.to_vec()));
    }
    fn pong(&mut self, data: &[u8]) {
        self.0.push(Ev::Pong(data.to_vec()));
    }
    fn close(&mut self, code: Option<u16>, reason: &str) {
        self.0.push(Ev::Close(code, reason.to_string()));
    }
    fn fail(&mut self, code: u16, _reason: &str) {
        self.0.push(Ev::Fail(code));
    }
    fn write(&mut self, bytes: &[u8]) {
        let (op, payload, _) = client_frame(bytes);
        self.0.push(Ev::Wrote(op, payload));
    }
}

/// A sink that keeps nothing, for measuring the codec's own memory.
pub struct Discard;

impl Sink for Discard {
    fn message(&mut self, _: bool, _: &[u8]) {}
    fn ping(&mut self, _: &[u8]) {}
    fn pong(&mut self, _: &[u8]) {}
    fn close(&mut self, _: Option<u16>, _: &str) {}
    fn fail(&mut self, _: u16, _: &str) {}
    fn write(&mut self, _: &[u8]) {}
}

/// A server frame (never masked).
pub fn sf(fin: bool, rsv1: bool, opcode: u8, payload: &[u8]) -> Vec<u8> {
    let mut out = vec![((fin as u8) << 7) | ((rsv1 as u8) << 6) | opcode];
    let len = payload.len();
    if len < 126 {
        out.push(len as u8);
    } else if len <= 0xFFFF {
        out.push(126);
        out.extend_from_slice(&(len as u16).to_be_bytes());
    } else {
        out.push(127);
        out.extend_from_slice(&(len as u64).to_be_bytes());
    }
    out.extend_from_slice(payload);
    out
}

/// Decodes one client frame: (opcode, unmasked payload, rsv1). It must be masked, final, and the
/// whole of `bytes`.
pub fn client_frame(bytes: &[u8]) -> (u8, Vec<u8>, bool) {
    assert_eq!(bytes[1] & 0x80, 0x80, "client frames are masked");
    assert_eq!(bytes[0] & 0x80, 0x80, "client frames here are final");
    let (len, mut pos) = match bytes[1] & 0x7F {
        126 => (u16::from_be_bytes([bytes[2], bytes[3]]) as usize, 4),
        127 => (u64::from_be_bytes(bytes[2..10].try_into().unwrap()) as usize, 10),
        n => (n as usize, 2),
    };
    let mask: [u8; 4] = bytes[pos..pos + 4].try_into().unwrap();
    pos += 4;
    assert_eq!(bytes.len(), pos + len, "one frame per write");
    let mut payload = bytes[pos..].to_vec();
    apply_mask(&mut payload, mask);
    (bytes[0] & 0x0F, payload, bytes[0] & 0x40 != 0)
}

/// Feeds `chunks` to `codec` in order and returns what it reported.
pub fn feed(codec: &mut Codec, chunks: &[&[u8]]) -> Vec<Ev> {
    let mut sink = Collect::default();
    for c in chunks {
        feed_all(codec, c, &mut sink);
    }
    sink.0
}

/// Feeds all of `chunk`, again after each stop for sent replies, as a caller with room to write does.
pub fn feed_all(codec: &mut Codec, mut chunk: &[u8], sink: &mut dyn Sink) {
    while !chunk.is_empty() {
        let took = codec.feed(chunk, sink);
        assert!(took > 0, "feed took nothing");
        chunk = &chunk[took..];
    }
}

/// Peak heap bytes allocated while a closure runs (the fuzz target's counting allocator), or 0
/// where nothing measures (the tests).
pub type Probe = fn(&mut dyn FnMut()) -> usize;

/// Checks the protocol rules on one stream's events. `plain_bytes`: for a codec without
/// permessage-deflate, the stream length (payload bytes out can never exceed bytes in).
fn check_events(evs: &[Ev], max: usize, plain_bytes: Option<usize>) {
    let mut out_bytes = 0;
    let mut i = 0;
    while i < evs.len() {
        let next = evs.get(i + 1);
        match &evs[i] {
            Ev::Text(t) => {
                assert!(t.len() <= max, "message over the limit");
                out_bytes += t.len();
            }
            Ev::Binary(b) => {
                assert!(b.len() <= max, "message over the limit");
                out_bytes += b.len();
            }
            Ev::Ping(p) => {
                assert!(p.len() <= frame::MAX_CONTROL_PAYLOAD);
                // Answered at once with the same payload (RFC 6455 §5.5.2).
                assert_eq!(next, Some(&Ev::Wrote(frame::PONG, p.clone())), "ping not answered");
                out_bytes += p.len();
                i += 1;
            }
            Ev::Pong(p) => {
                assert!(p.len() <= frame::MAX_CONTROL_PAYLOAD);
                out_bytes += p.len();
            }
            Ev::Wrote(frame::CLOSE, payload) => {
                // The close frame goes out just before the close or failure is reported, and
                // nothing follows that.
                assert_eq!(i + 2, evs.len(), "events after the end: {evs:?}");
                match next {
                    Some(Ev::Fail(code)) => {
                        assert!(
                            [PROTOCOL_ERROR, INVALID_DATA, POLICY_VIOLATION, TOO_BIG]
                                .contains(code),
                            "fail code {code}"
                        );
                        assert_eq!(
                            payload[..2],
                            code.to_be_bytes(),
                            "close frame does not carry the failure's code"
                        );
                        // …and a reason, as undici sends one (at most 123 bytes of UTF-8, §5.5).
                        let reason = std::str::from_utf8(&payload[2..])
                            .expect("the failure's reason is UTF-8");
                        assert!(
                            !reason.is_empty() && reason.len() <= 123,
                            "failure reason {reason:?}"
                        );
                    }
                    Some(Ev::Close(code, _)) => {
                        assert!(
                            code.is_none_or(is_valid_close_code),
                            "accepted close code {code:?}"
                        );
                        // The echo carries the server's code and no reason (§5.5.1).
                        let echo = code.map(u16::to_be_bytes);
                        assert_eq!(
                            payload[..],
                            *echo.as_ref().map_or(&[][..], |c| &c[..]),
                            "close echo"
                        );
                    }
                    other => panic!("close frame written, then {other:?}"),
                }
                i += 1;
            }
            other => panic!("{other:?} without the close frame or ping before it"),
        }
        i += 1;
    }
    if let Some(n) = plain_bytes {
        assert!(out_bytes <= n, "{out_bytes} payload bytes out of {n} bytes in");
    }
}

/// What a client without permessage-deflate must report for `stream` (fed whole), written
/// straight from RFC 6455 §5 and §7 rather than from the codec: frames are taken one by one from
/// the buffer; the first violation fails the connection, a close frame ends it, and an unfinished
/// frame at the end reports nothing more. `max`: bytes a message may have; `max_frames`: frames.
pub fn reference(stream: &[u8], max: usize, max_frames: usize) -> Vec<Ev> {
    let mut evs = Vec::new();
    let fail = |evs: &mut Vec<Ev>, code: u16| {
        evs.push(Ev::Wrote(frame::CLOSE, code.to_be_bytes().to_vec()));
        evs.push(Ev::Fail(code));
    };
    // The data message being assembled: (text, bytes so far), and the frames it came in.
    let mut msg: Option<(bool, Vec<u8>)> = None;
    let mut frames = 0;
    let mut at = 0;
    while stream.len() >= at + 2 {
        let (b0, b1) = (stream[at], stream[at + 1]);
        let (fin, op, short) = (b0 & 0x80 != 0, b0 & 0x0F, usize::from(b1 & 0x7F));
        let control = op >= 8;
        let bad_header = b0 & 0x70 != 0
            || ![0, 1, 2, 8, 9, 10].contains(&op)
            || b1 & 0x80 != 0
            || (control && (short > 125 || !fin));
        if bad_header {
            fail(&mut evs, PROTOCOL_ERROR);
            return evs;
        }
        let (len, head) = match short {
            126 if stream.len() >= at + 4 => {
                (u64::from(u16::from_be_bytes([stream[at + 2], stream[at + 3]])), 4)
            }
            127 if stream.len() >= at + 10 => {
                (u64::from_be_bytes(stream[at + 2..at + 10].try_into().unwrap()), 10)
            }
            126 | 127 => return evs,
            n => (n as u64, 2),
        };
        if len >> 63 != 0 {
            fail(&mut evs, PROTOCOL_ERROR);
            return evs;
        }
        // Data frames are judged by their header, before their payload arrives.
        if !control {
            // A continuation needs a message to continue; a new message needs none in progress.
            if (op == 0) != msg.is_some() {
                fail(&mut evs, PROTOCOL_ERROR);
                return evs;
            }
            if op != 0 {
                msg = Some((op == 1, Vec::new()));
                frames = 0;
            }
            frames += 1;
            if frames > max_frames {
                fail(&mut evs, POLICY_VIOLATION);
                return evs;
            }
            if msg.as_ref().unwrap().1.len() as u64 + len > max as u64 {
                fail(&mut evs, TOO_BIG);
                return evs;
            }
        }
        at += head;
        let Some(payload) = stream
            .get(at..)
            .filter(|rest| rest.len() as u64 >= len)
            .map(|rest| &rest[..len as usize])
        else {
            return evs;
        };
        at += payload.len();
        if !control {
            let (text, bytes) = msg.as_mut().unwrap();
            bytes.extend_from_slice(payload);
            // A text message fails on its first invalid byte; a character may span fragments.
            let utf8 = if *text { std::str::from_utf8(bytes).err() } else { None };
            if utf8.is_some_and(|e| fin || e.error_len().is_some()) {
                fail(&mut evs, INVALID_DATA);
                return evs;
            }
            if fin {
                let (text, bytes) = msg.take().unwrap();
                evs.push(if text {
                    Ev::Text(String::from_utf8(bytes).unwrap())
                } else {
                    Ev::Binary(bytes)
                });
            }
            continue;
        }
        match op {
            9 => {
                evs.push(Ev::Ping(payload.to_vec()));
                evs.push(Ev::Wrote(frame::PONG, payload.to_vec()));
            }
            10 => evs.push(Ev::Pong(payload.to_vec())),
            _ => {
                let code =
                    (payload.len() >= 2).then(|| u16::from_be_bytes([payload[0], payload[1]]));
                if payload.len() == 1 || code.is_some_and(|c| !is_valid_close_code(c)) {
                    fail(&mut evs, PROTOCOL_ERROR);
                } else if let Ok(reason) = std::str::from_utf8(payload.get(2..).unwrap_or(&[])) {
                    evs.push(Ev::Wrote(frame::CLOSE, payload[..payload.len().min(2)].to_vec()));
                    evs.push(Ev::Close(code, reason.to_string()));
                } else {
                    fail(&mut evs, INVALID_DATA);
                }
                return evs;
            }
        }
    }
    evs
}

/// `evs` with the reasons of the close frames written left off (their codes kept): the
/// [`reference`] names codes only; [`check_events`] checks the reasons.
pub fn without_reasons(evs: &[Ev]) -> Vec<Ev> {
    let code_only = |e: &Ev| match e {
        Ev::Wrote(frame::CLOSE, p) => Ev::Wrote(frame::CLOSE, p[..p.len().min(2)].to_vec()),
        e => e.clone(),
    };
    evs.iter().map(code_only).collect()
}

/// Fuzz input: a config byte (permessage-deflate, server_no_context_takeover, message limit,
/// fragment limit), a
/// split seed, then the server's bytes. Decoding them whole and in seeded pieces must give the
/// same events; the events must keep RFC 6455's rules, and without permessage-deflate be exactly
/// the [`reference`]'s; the codec's memory must stay within a bound set by the message limit,
/// whatever lengths the frames declare.
pub fn check_codec(data: &[u8], probe: Probe) {
    let [cfg, seed, stream @ ..] = data else {
        return;
    };
    let max = [125, 1024, 64 << 10, 1 << 20][usize::from((cfg >> 2) & 3)];
    let max_frames = [DEFAULT_MAX_FRAGMENTS, 1, 2, 5][usize::from((cfg >> 4) & 3)];
    let deflate = (cfg & 1 != 0).then(|| DeflateParams {
        server_no_context_takeover: cfg & 2 != 0,
        ..DeflateParams::default()
    });
    let codec = || Codec::new(max, deflate).with_max_fragments(max_frames);
    let whole = feed(&mut codec(), &[stream]);
    check_events(&whole, max, deflate.is_none().then_some(stream.len()));
    if deflate.is_none() {
        assert_eq!(
            without_reasons(&whole),
            reference(stream, max, max_frames),
            "the codec differs from the reference"
        );
    }
    let pieces = pieces::split(stream, *seed);
    assert_eq!(feed(&mut codec(), &pieces), whole, "split feed differs from whole feed");
    let peak = probe(&mut || {
        let mut c = codec();
        for p in &pieces {
            feed_all(&mut c, p, &mut Discard);
        }
    });
    // The message being assembled (a Vec may double past the limit), its inflated form, and the
    // zlib states with their windows; never anything in proportion to a declared length.
    let bound = 3 * max + (1 << 20);
    assert!(peak <= bound, "{peak} bytes allocated, bound {bound}");
}
