use super::check::{check_decoder, decode_pieces};
use super::*;
use crate::pieces::Gen;
use std::io::Write;

fn sample() -> Vec<u8> {
    let mut v = Vec::new();
    for i in 0..300u32 {
        v.extend_from_slice(
            format!("line {i}: the quick brown fox {}\n", i * 7919 % 1000).as_bytes(),
        );
    }
    v
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}
fn zlib(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}
fn raw_deflate(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}
fn br(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    {
        let mut w = brotli::CompressorWriter::new(&mut out, 4096, 5, 22);
        w.write_all(data).unwrap();
    }
    out
}
fn zstd_enc(data: &[u8]) -> Vec<u8> {
    zstd::stream::encode_all(data, 3).unwrap()
}

type Encode = fn(&[u8]) -> Vec<u8>;

/// Every coding (by header name) with its encoder.
fn encoders() -> Vec<(&'static str, Encode)> {
    vec![
        ("gzip", gzip),
        ("x-gzip", gzip),
        ("deflate", zlib),
        ("deflate", raw_deflate),
        ("x-compress", zlib),
        ("br", br),
        ("zstd", zstd_enc),
    ]
}

fn decoder(header: &str) -> Decoder {
    let codings = parse_content_encoding(header).unwrap().unwrap();
    Decoder::new(&codings, None, false).unwrap()
}

/// Feeds `chunks` and drains after each, checking the per-step bound.
fn run(d: &mut Decoder, chunks: &[&[u8]]) -> Result<Vec<u8>, DecodeError> {
    let (out, end) = decode_pieces(d, chunks);
    end.map(|()| out)
}

#[test]
fn every_coding_split_at_every_byte() {
    let data = sample();
    for (name, enc) in encoders() {
        let z = enc(&data);
        for k in 0..=z.len() {
            let got = run(&mut decoder(name), &[&z[..k], &z[k..]])
                .unwrap_or_else(|e| panic!("{name} split at {k}: {e}"));
            assert_eq!(got, data, "{name} split at {k}");
        }
    }
}

#[test]
fn every_coding_one_byte_at_a_time() {
    let data = sample();
    for (name, enc) in encoders() {
        let z = enc(&data);
        let chunks: Vec<&[u8]> = z.chunks(1).collect();
        assert_eq!(run(&mut decoder(name), &chunks).unwrap(), data, "{name}");
    }
}

#[test]
fn chained_codings_split_at_every_byte() {
    let data = sample();
    // "gzip, br": gzip applied first, so br is undone first.
    let z = br(&gzip(&data));
    for k in 0..=z.len() {
        assert_eq!(
            run(&mut decoder("gzip, br"), &[&z[..k], &z[k..]]).unwrap(),
            data,
            "split at {k}"
        );
    }
    let z = zstd_enc(&zlib(&br(&data)));
    assert_eq!(run(&mut decoder("br, deflate, zstd"), &[&z]).unwrap(), data);
}

#[test]
fn every_truncation_is_an_error_and_lenient_mode_keeps_the_prefix() {
    let data = sample();
    for (name, enc) in encoders() {
        let z = enc(&data);
        for k in 1..z.len() {
            let err = run(&mut decoder(name), &[&z[..k]]).expect_err(&format!("{name} cut at {k}"));
            assert_eq!(err.kind, ErrorKind::Truncated, "{name} cut at {k}: {err}");
            let codings = parse_content_encoding(name).unwrap().unwrap();
            let got = run(&mut Decoder::new(&codings, None, true).unwrap(), &[&z[..k]]).unwrap();
            assert!(data.starts_with(&got), "{name} cut at {k}: lenient output is a prefix");
        }
    }
}

#[test]
fn corrupt_input_is_an_error_never_a_panic() {
    let data = sample();
    for (name, enc) in encoders() {
        let z = enc(&data);
        // Garbage from the start.
        let err = run(&mut decoder(name), &[b"this is not compressed at all, not even a little"])
            .unwrap_err();
        assert!(matches!(err.kind, ErrorKind::Corrupt | ErrorKind::Truncated), "{name}: {err:?}");
        // Every single flipped byte: an error or (rarely, where the format cannot tell) other bytes,
        // but never a panic, and never success with the original content undetected for checksummed
        // formats.
        for k in 0..z.len() {
            let mut bad = z.clone();
            bad[k] ^= 0x55;
            let r = run(&mut decoder(name), &[&bad]);
            if name.contains("gzip") {
                assert!(
                    r.is_err() || r.as_ref().unwrap() == &data,
                    "gzip flip at {k} went unnoticed"
                );
            }
        }
    }
    // The gzip trailer holds a CRC: a wrong one is corruption.
    let mut z = gzip(&data);
    let n = z.len();
    z[n - 8] ^= 1;
    assert_eq!(run(&mut decoder("gzip"), &[&z]).unwrap_err().kind, ErrorKind::Corrupt);
}

#[test]
fn an_error_sticks() {
    let mut d = decoder("gzip");
    assert!(d.write(b"garbage!").is_err());
    assert!(d.write(&gzip(b"x")).is_err());
    assert!(d.read().is_err());
}

#[test]
fn a_bomb_stops_at_the_limit_in_bounded_steps() {
    let zeros = vec![0u8; 64 * 1024 * 1024];
    let z = gzip(&zeros);
    assert!(z.len() < 100 * 1024);
    let codings = parse_content_encoding("gzip").unwrap().unwrap();
    let mut d = Decoder::new(&codings, Some(1024 * 1024), false).unwrap();
    let mut total = 0usize;
    let mut r = d.write(&z);
    let err = loop {
        match r {
            Ok(o) if o.is_empty() => panic!("ran dry before the limit"),
            Ok(o) => {
                assert!(o.len() <= STEP);
                total += o.len();
                r = d.read();
            }
            Err(e) => break e,
        }
    };
    assert_eq!(err.kind, ErrorKind::TooLarge);
    assert!(total <= 1024 * 1024);
    // Nested bombs are bounded per stage too.
    let z = gzip(&gzip(&zeros));
    let codings = parse_content_encoding("gzip, gzip").unwrap().unwrap();
    let mut d = Decoder::new(&codings, Some(1024 * 1024), false).unwrap();
    assert_eq!(run(&mut d, &[&z]).unwrap_err().kind, ErrorKind::TooLarge);
}

#[test]
fn zstd_refuses_windows_beyond_8_mib() {
    let data = sample();
    let mut e = zstd::stream::Encoder::new(Vec::new(), 3).unwrap();
    e.set_parameter(zstd::stream::raw::CParameter::WindowLog(27)).unwrap();
    e.write_all(&data).unwrap();
    let z = e.finish().unwrap();
    assert_eq!(run(&mut decoder("zstd"), &[&z]).unwrap_err().kind, ErrorKind::Corrupt);
}

#[test]
fn multi_member_gzip_and_multi_frame_zstd() {
    let mut z = gzip(b"hello ");
    z.extend(gzip(b"world"));
    assert_eq!(run(&mut decoder("gzip"), &[&z]).unwrap(), b"hello world");
    let mut z = zstd_enc(b"hello ");
    z.extend(zstd_enc(b"world"));
    assert_eq!(run(&mut decoder("zstd"), &[&z]).unwrap(), b"hello world");
}

#[test]
fn empty_bodies_decode_to_empty() {
    for name in ["gzip", "deflate", "br", "zstd", "gzip, br"] {
        assert_eq!(run(&mut decoder(name), &[]).unwrap(), b"", "{name}");
    }
}

#[test]
fn large_output_comes_in_bounded_steps() {
    let data: Vec<u8> = (0..3_000_000u32).map(|i| (i % 251) as u8).collect();
    for (name, enc) in encoders() {
        let z = enc(&data);
        assert_eq!(run(&mut decoder(name), &[&z]).unwrap(), data, "{name}");
    }
}

#[test]
fn parsing_content_encoding() {
    use Coding::*;
    assert_eq!(parse_content_encoding("GZip").unwrap(), Some(vec![Gzip]));
    assert_eq!(parse_content_encoding(" gzip , BR ").unwrap(), Some(vec![Brotli, Gzip]));
    assert_eq!(parse_content_encoding("identity").unwrap(), None);
    assert_eq!(parse_content_encoding("").unwrap(), None);
    assert_eq!(parse_content_encoding("gzip, identity").unwrap(), Some(vec![Gzip]));
    assert_eq!(parse_content_encoding("gzip, compress").unwrap(), None);
    assert_eq!(parse_content_encoding("x-compress").unwrap(), Some(vec![Deflate]));
    assert_eq!(parse_content_encoding("zstd,deflate").unwrap(), Some(vec![Deflate, Zstd]));
    assert_eq!(parse_content_encoding("gzip,gzip,gzip,gzip,gzip").unwrap().unwrap().len(), 5);
    assert_eq!(
        parse_content_encoding("gzip,gzip,gzip,gzip,gzip,gzip").unwrap_err().kind,
        ErrorKind::TooManyCodings
    );
}

#[test]
fn read_into_fills_the_callers_buffer_only() {
    let data: Vec<u8> = (0..300_000u32).map(|i| (i % 251) as u8).collect();
    for (name, enc) in encoders() {
        let mut d = decoder(name);
        d.feed(&enc(&data)).unwrap();
        d.end_input();
        let mut out = Vec::new();
        // A buffer larger than STEP gets at most STEP; a small one is filled and never overrun.
        let mut big = vec![0xaa; STEP + 100];
        let n = d.read_into(&mut big).unwrap();
        assert_eq!(n, STEP, "{name}");
        assert_eq!(big[STEP], 0xaa, "{name}");
        out.extend_from_slice(&big[..n]);
        let mut small = [0u8; 1000];
        loop {
            let n = d.read_into(&mut small).unwrap();
            if n == 0 {
                break;
            }
            out.extend_from_slice(&small[..n]);
        }
        assert_eq!(out, data, "{name}");
    }
}

#[test]
fn generated_and_mutated_bodies_keep_the_decoder_invariants() {
    // The same check the fuzz target runs: whole vs seeded pieces, the step and size limits,
    // over valid chained bodies and bodies with a few bytes changed, cut or inserted.
    let mut g = Gen(23);
    let encode: [Encode; 4] = [gzip, zlib, br, zstd_enc];
    for case in 0..400 {
        let n = 1 + g.upto(2);
        let mut names = 0u8;
        let len = *g.pick(&[0usize, 1, 100, 5000, 70_000]);
        let mut body: Vec<u8> = if g.upto(1) == 0 {
            g.bytes(len)
        } else {
            sample().into_iter().cycle().take(len).collect()
        };
        // Encoded in listing order, so the innermost coding is the last to be undone.
        for i in (0..n).rev() {
            let k = g.upto(3);
            names |= (k as u8) << (2 * i);
            body = encode[k](&body);
        }
        if case % 2 == 1 && !body.is_empty() {
            for _ in 0..1 + g.upto(2) {
                let at = g.upto(body.len() - 1);
                match g.upto(3) {
                    0 => body[at] ^= 1 << g.upto(7),
                    1 => drop(body.remove(at)),
                    2 => body.truncate(at),
                    _ => body.insert(at, g.u64() as u8),
                }
                if body.is_empty() {
                    break;
                }
            }
        }
        let cfg = (n - 1) as u8 | ((g.upto(3) as u8) << 2) | ((g.upto(1) as u8) << 4);
        let mut data = vec![cfg, names, g.u64() as u8];
        data.extend_from_slice(&body);
        check_decoder(&data, |f| {
            f();
            0
        });
    }
}

#[test]
fn state_is_freed_at_the_end_and_on_errors_without_waiting_for_drop() {
    let data = sample();
    for (name, enc) in encoders() {
        let mut d = decoder(name);
        run(&mut d, &[&enc(&data)]).unwrap();
        assert!(d.stages.is_empty(), "{name}: complete");
        assert_eq!(d.read().unwrap(), b"", "{name}: nothing after the end");
    }
    let mut d = decoder("br");
    assert!(d.write(b"\xff\xff\xff\xff garbage").is_err());
    assert!(d.stages.is_empty());
    let mut d = decoder("gzip");
    d.write(&gzip(&data)[..100]).unwrap();
    d.release();
    assert!(d.stages.is_empty());
    assert_eq!(d.read().unwrap(), b"", "a released decoder is empty");
}

#[test]
fn trailing_bytes_after_a_gzip_member_are_ignored_however_they_arrive() {
    // What follows the last member is ignored, unless it starts another member right away; where
    // the reads split it must not matter (a later read starting with 0x1f is not a new member).
    let mut body = gzip(b"hello");
    body.extend_from_slice(b"xy");
    body.extend(gzip(b" world"));
    let whole = run(&mut decoder("gzip"), &[&body]).unwrap();
    assert_eq!(whole, b"hello");
    let at = body.len() - gzip(b" world").len();
    assert_eq!(run(&mut decoder("gzip"), &[&body[..at], &body[at..]]).unwrap(), whole);
}
