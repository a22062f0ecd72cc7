//! Body framing pieces (RFC 9112 §6, §7.1): splitting a Content-Length body off the buffer and
//! parsing chunk-size lines with their extensions. The decoder (`decode.rs`) sequences them.
use super::error::DecodeError;
use crate::request::rules::is_tchar;
use bytes::{Bytes, BytesMut};

/// A chunk-size line (size plus extensions) longer than this is rejected rather than buffered
/// forever.
pub(super) const MAX_CHUNK_LINE: usize = 16 * 1024;
/// 16 hex digits is all of u64.
pub(super) const MAX_CHUNK_SIZE_DIGITS: usize = 16;

/// Splits up to `remaining` body bytes off a non-empty `buf`; returns them and what is left.
pub(super) fn take_body(buf: &mut BytesMut, remaining: u64) -> (Bytes, u64) {
    let n = usize::try_from(remaining).map_or(buf.len(), |r| r.min(buf.len()));
    (buf.split_to(n).freeze(), remaining - n as u64)
}

/// Parses `chunk-size *(BWS ";" BWS ext-name [BWS "=" BWS ext-val]) CRLF` at the front of `buf`.
/// Returns the line length (including CRLF) and the size, or None if the line is incomplete.
pub(super) fn parse_chunk_line(buf: &[u8]) -> Result<Option<(usize, u64)>, DecodeError> {
    let lf = match buf.iter().take(MAX_CHUNK_LINE).position(|&b| b == b'\n') {
        Some(i) => i,
        None if buf.len() >= MAX_CHUNK_LINE => {
            return Err(DecodeError::Parse("chunk size line too long"))
        }
        None => {
            // Fail early on an obviously bad size instead of waiting for a line end.
            if let Some(&b) = buf.first() {
                if !b.is_ascii_hexdigit() {
                    return Err(DecodeError::Parse("invalid chunk size"));
                }
            }
            return Ok(None);
        }
    };
    // Strict CRLF: a bare LF is a framing ambiguity between implementations.
    let line = match lf.checked_sub(1).and_then(|cr| buf.get(..=cr)) {
        Some([line @ .., b'\r']) => line,
        _ => return Err(DecodeError::Parse("invalid chunk size")),
    };

    let digits = line.iter().take_while(|b| b.is_ascii_hexdigit()).count();
    if digits == 0 || digits > MAX_CHUNK_SIZE_DIGITS {
        return Err(DecodeError::Parse("invalid chunk size"));
    }
    let mut size: u64 = 0;
    for &b in line.iter().take(digits) {
        let d = match b {
            b'0'..=b'9' => b - b'0',
            b'a'..=b'f' => b - b'a' + 10,
            b'A'..=b'F' => b - b'A' + 10,
            _ => return Err(DecodeError::Parse("invalid chunk size")),
        };
        // 16 digits cannot overflow, but staying checked costs nothing.
        size = size
            .checked_mul(16)
            .and_then(|s| s.checked_add(u64::from(d)))
            .ok_or(DecodeError::Parse("invalid chunk size"))?;
    }
    if !valid_chunk_extensions(line.get(digits..).unwrap_or(&[])) {
        return Err(DecodeError::Parse("invalid chunk size"));
    }
    Ok(Some((lf + 1, size)))
}

pub(super) fn skip_ws(s: &[u8]) -> &[u8] {
    let n = s.iter().take_while(|&&b| b == b' ' || b == b'\t').count();
    s.get(n..).unwrap_or(&[])
}

pub(super) fn skip_token(s: &[u8]) -> Option<&[u8]> {
    let n = s.iter().take_while(|&&b| is_tchar(b)).count();
    if n == 0 {
        None
    } else {
        s.get(n..)
    }
}

/// Skips a quoted-string that starts at `s[0] == '"'`.
pub(super) fn skip_quoted(s: &[u8]) -> Option<&[u8]> {
    let mut rest = s.strip_prefix(b"\"")?;
    loop {
        match rest {
            [b'"', tail @ ..] => return Some(tail),
            [b'\\', c, tail @ ..] if *c == b'\t' || (*c >= 0x20 && *c != 0x7f) => rest = tail,
            [c, tail @ ..] if *c == b'\t' || (*c >= 0x20 && *c != 0x7f && *c != b'\\') => {
                rest = tail
            }
            _ => return None,
        }
    }
}

/// Chunk extensions are accepted (and ignored) only when well formed, so odd bytes in the size
/// line cannot be read differently by two parsers.
pub(super) fn valid_chunk_extensions(mut s: &[u8]) -> bool {
    while !s.is_empty() {
        s = skip_ws(s);
        s = match s.strip_prefix(b";") {
            Some(r) => skip_ws(r),
            // Trailing whitespace with no extension, or any other byte.
            None => return false,
        };
        s = match skip_token(s) {
            Some(r) => r,
            None => return false,
        };
        let after_name = skip_ws(s);
        if let Some(r) = after_name.strip_prefix(b"=") {
            let v = skip_ws(r);
            s = match if v.first() == Some(&b'"') { skip_quoted(v) } else { skip_token(v) } {
                Some(r) => r,
                None => return false,
            };
        }
    }
    true
}
