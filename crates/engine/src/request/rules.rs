//! Which bytes a request head may carry where: the one table behind every check of a method, a
//! path, a header name or a header value, on the JS side's terms (undici 8's `isValidHTTPToken`,
//! `invalidPathRegex` and `isValidHeaderValue`, which ts/core/headers.ts and ts/core/request.ts
//! follow; `__test__/request-head-rules.test.ts` checks both sides byte for byte).

/// RFC 9110 §5.6.2 tchar: methods and header names are tokens.
pub const TOKEN: u8 = 1;
/// RFC 9110 §5.5 field-vchar, SP and HTAB, with obs-text (0x80–0xFF): no CR, LF or NUL (a new line
/// or the end of the head: request smuggling), no other control, no DEL.
pub const VALUE: u8 = 2;
/// A request target byte as undici takes it (`[\x21-\xff]`): anything but controls and SP, which
/// would end the request line. DEL and obs-text go out as given.
pub const PATH: u8 = 4;

/// `TOKEN | VALUE | PATH` bits for each byte value.
pub const BYTES: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        let b = i as u8;
        let tchar = b.is_ascii_alphanumeric()
            || matches!(
                b,
                b'!' | b'#'
                    | b'$'
                    | b'%'
                    | b'&'
                    | b'\''
                    | b'*'
                    | b'+'
                    | b'-'
                    | b'.'
                    | b'^'
                    | b'_'
                    | b'`'
                    | b'|'
                    | b'~'
            );
        let value = b == b'\t' || (b >= 0x20 && b != 0x7f);
        let path = b > 0x20;
        t[i] = ((tchar as u8) * TOKEN) | ((value as u8) * VALUE) | ((path as u8) * PATH);
        i += 1;
    }
    t
};

/// Every byte of `s` has `class`.
#[inline]
fn all(s: &[u8], class: u8) -> bool {
    s.iter().all(|&b| BYTES[b as usize] & class != 0)
}

#[inline]
pub fn is_tchar(b: u8) -> bool {
    BYTES[b as usize] & TOKEN != 0
}

/// A method or a header name: one or more tchar.
#[inline]
pub fn is_token(s: &[u8]) -> bool {
    !s.is_empty() && all(s, TOKEN)
}

/// A header value (empty is allowed).
#[inline]
pub fn is_value(s: &[u8]) -> bool {
    all(s, VALUE)
}

/// A request target: not empty, no control or SP.
#[inline]
pub fn is_path(s: &[u8]) -> bool {
    !s.is_empty() && all(s, PATH)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_classes_are_undicis() {
        let tokens: Vec<u8> = (0..=255u8).filter(|&b| is_tchar(b)).collect();
        let mut expected: Vec<u8> = b"!#$%&'*+-.^_`|~".to_vec();
        expected.extend(b'0'..=b'9');
        expected.extend(b'A'..=b'Z');
        expected.extend(b'a'..=b'z');
        expected.sort_unstable();
        assert_eq!(tokens, expected);
        for b in 0..=255u8 {
            let value = b == b'\t' || (0x20..=0x7e).contains(&b) || b >= 0x80;
            assert_eq!(is_value(&[b]), value, "value byte {b:#x}");
            assert_eq!(is_path(&[b]), b >= 0x21, "path byte {b:#x}");
        }
        assert!(is_value(b"") && !is_path(b"") && !is_token(b""));
    }
}
