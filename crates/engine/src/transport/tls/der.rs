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

/// A certificate's issuer and subject names, and where its to-be-signed body goes on after the
/// subject (subjectPublicKeyInfo, optional unique ids, extensions).
pub(super) struct Names<'a> {
    pub(super) issuer: &'a [u8],
    pub(super) subject: Der<'a>,
    pub(super) subject_body: &'a [u8],
}

/// Reads a certificate as far as its subject; None when it cannot be read that far.
pub(super) fn names(cert: &[u8]) -> Option<Names<'_>> {
    const SEQUENCE: u8 = 0x30;
    let seq = |input| der_next(input).filter(|(d, _)| d.tag == SEQUENCE);
    let (_, cert_body) = seq(cert)?;
    let (_, tbs) = seq(cert_body)?;
    let mut rest = tbs;
    // Optional explicit [0] version.
    if rest.first() == Some(&0xa0) {
        rest = der_next(rest)?.0.rest;
    }
    let serial = der_next(rest)?.0;
    let algorithm = der_next(serial.rest)?.0;
    let (issuer, _) = seq(algorithm.rest)?;
    let validity = der_next(issuer.rest)?.0;
    let (subject, subject_body) = seq(validity.rest)?;
    Some(Names { issuer: issuer.whole, subject, subject_body })
}
