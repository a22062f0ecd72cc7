// DER reading for the few X.509 fields the TLS checks look at (issuer, subject, names); shared by
// the self-issued check and the common-name fallback, which is why it sits apart from both.

/// One DER element: its tag, the whole encoding, its contents, and the bytes after it.
pub(super) struct Der<'a> {
    pub(super) tag: u8,
    pub(super) whole: &'a [u8],
    pub(super) rest: &'a [u8],
}

/// Splits one DER element off `input`. Only what X.509 needs: single-byte tags, definite lengths
/// up to 4 length bytes.
pub(super) fn der_next(input: &[u8]) -> Option<(Der<'_>, &[u8])> {
    let (&tag, rest) = input.split_first()?;
    let (&first, rest) = rest.split_first()?;
    let (len, rest) = if first < 0x80 {
        (first as usize, rest)
    } else {
        let n = (first & 0x7f) as usize;
        if n == 0 || n > 4 || rest.len() < n {
            return None;
        }
        let len = rest[..n].iter().fold(0usize, |acc, &b| (acc << 8) | b as usize);
        (len, &rest[n..])
    };
    if rest.len() < len {
        return None;
    }
    let header = input.len() - rest.len();
    Some((Der { tag, whole: &input[..header + len], rest: &rest[len..] }, &rest[..len]))
}
