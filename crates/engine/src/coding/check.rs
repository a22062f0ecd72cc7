//! Invariant checks on the content decoders, shared by the fuzz target `decode_body` (`fuzz/`,
//! feature `fuzzing`) and the decoder's tests: each check panics when an invariant is violated,
//! which AFL records as a crash and `cargo test` as a failure.
use super::{Coding, DecodeError, Decoder, ErrorKind, STEP};
use crate::pieces;

/// Writes `chunks` in order, draining after each, then finishes and drains: the decoded bytes
/// and how it ended. No single call may return more than [`STEP`] bytes.
pub fn decode_pieces(d: &mut Decoder, chunks: &[&[u8]]) -> (Vec<u8>, Result<(), DecodeError>) {
    let mut out = Vec::new();
    let mut step = |first: Result<Vec<u8>, DecodeError>, d: &mut Decoder| {
        let mut o = first?;
        while !o.is_empty() {
            assert!(o.len() <= STEP, "{} bytes in one call", o.len());
            out.extend_from_slice(&o);
            o = d.read()?;
        }
        Ok(())
    };
    for c in chunks {
        let r = d.write(c);
        if let Err(e) = step(r, d) {
            return (out, Err(e));
        }
    }
    let r = d.finish();
    let end = step(r, d);
    (out, end)
}

/// Peak heap bytes allocated while a closure runs (the fuzz target's counting allocator), or 0
/// where nothing measures (the tests).
pub type Probe = fn(&mut dyn FnMut()) -> usize;

const CODINGS: [Coding; 4] = [Coding::Gzip, Coding::Deflate, Coding::Brotli, Coding::Zstd];

/// Fuzz input: a config byte (1–4 codings, decoded-size limit, lenient), a byte naming the
/// codings (two bits each, decoding order), a split seed, then the body. Decoding it whole and
/// in seeded pieces must give the same bytes and the same outcome; no call returns more than
/// [`STEP`]; no stage produces more than the limit; memory stays within the decoders' states and
/// a few steps, however much the body expands.
pub fn check_decoder(data: &[u8], probe: Probe) {
    let [cfg, names, seed, body @ ..] = data else {
        return;
    };
    let n = 1 + usize::from(cfg & 3);
    let codings: Vec<Coding> = (0..n).map(|i| CODINGS[usize::from(names >> (2 * i)) & 3]).collect();
    let max = [256u64, 4096, 64 << 10, 1 << 20][usize::from((cfg >> 2) & 3)];
    let lenient = cfg & 16 != 0;
    let make = || Decoder::new(&codings, Some(max), lenient).expect("decoders start");
    let (whole, whole_end) = decode_pieces(&mut make(), &[body]);
    assert!(whole.len() as u64 <= max, "{} bytes out past the limit {max}", whole.len());
    let pieces = pieces::split(body, *seed);
    let (split, split_end) = decode_pieces(&mut make(), &pieces);
    match (&whole_end, &split_end) {
        (Ok(()), Ok(())) => assert!(whole == split, "split feed decodes differently"),
        (Err(a), Err(b)) => {
            // A failing call drops what it decoded, so where the bytes stop depends on the
            // pieces; they must agree as far as both go. Which limit is hit first (corrupt data or
            // the size limit) can depend on the pieces too.
            let common = whole.len().min(split.len());
            assert!(
                whole[..common] == split[..common],
                "split feed decodes differently before the error"
            );
            if a.kind != ErrorKind::TooLarge && b.kind != ErrorKind::TooLarge {
                assert_eq!(a.kind, b.kind, "whole: {a}; split: {b}");
            }
        }
        (a, b) => panic!("whole feed ended {a:?}, split feed {b:?}"),
    }
    if lenient {
        assert!(
            !matches!(whole_end, Err(DecodeError { kind: ErrorKind::Truncated, .. })),
            "lenient decoder refused a cut stream"
        );
    }
    let peak = probe(&mut || {
        let mut d = make();
        let mut r = d.write(body);
        while matches!(&r, Ok(o) if !o.is_empty()) {
            r = d.read();
        }
        if r.is_ok() {
            r = d.finish();
            while matches!(&r, Ok(o) if !o.is_empty()) {
                r = d.read();
            }
        }
    });
    // The body itself (held by the first stage), a few steps per stage, each stage's state: a
    // brotli window is at most 16 MiB, a deflate one 32 KiB (zstd's, at most 8 MiB, is allocated by
    // C and not counted here). Nothing in proportion to the decoded size.
    let per_stage = |c: &Coding| match c {
        Coding::Brotli => (16 << 20) + (1 << 20),
        _ => 1 << 20,
    };
    let bound = 2 * body.len() + codings.iter().map(per_stage).sum::<usize>() + 4 * STEP * n;
    assert!(peak <= bound, "{peak} bytes allocated, bound {bound}");
}
