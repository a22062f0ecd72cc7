//! RFC 9110 §5.6.2 tokens (method names, header names, connection options, chunk extensions).

/// RFC 9110 §5.6.2 tchar, as a lookup table so validation is one load per byte.
const TCHAR: [bool; 256] = {
    let mut t = [false; 256];
    let mut i = 0;
    while i < 256 {
        let b = i as u8;
        t[i] = b.is_ascii_alphanumeric()
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
        i += 1;
    }
    t
};

#[inline]
pub(crate) fn is_token(s: &[u8]) -> bool {
    !s.is_empty() && s.iter().all(|&b| TCHAR[b as usize])
}

#[inline]
pub(crate) fn is_tchar(b: u8) -> bool {
    TCHAR[b as usize]
}
