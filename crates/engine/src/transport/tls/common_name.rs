//! Node's fallback to the subject's common name: a certificate that lists no DNS names in its
//! subjectAltName (or has none) is accepted for a host name that matches its CN, as
//! `tls.checkServerIdentity` does (undici over Node's TLS therefore accepts it too). webpki reads
//! only subjectAltName, so without this a CN-only certificate, still common on internal proxies
//! and test CAs, fails where Node succeeds. Only consulted after the chain has been verified and
//! the name check alone failed; an IP address never falls back (Node checks IP SANs only).
use super::der::der_next;

const SEQUENCE: u8 = 0x30;
const SET: u8 = 0x31;
const OID: u8 = 0x06;
const OCTET_STRING: u8 = 0x04;
/// `[3] EXPLICIT Extensions` in a TBSCertificate.
const EXTENSIONS: u8 = 0xa3;
/// `dNSName [2] IA5String` in GeneralNames.
const DNS_NAME: u8 = 0x82;
/// id-at-commonName, 2.5.4.3.
const CN_OID: &[u8] = &[0x55, 0x04, 0x03];
/// id-ce-subjectAltName, 2.5.29.17.
const SAN_OID: &[u8] = &[0x55, 0x1d, 0x11];

/// The subject's CN values and whether the certificate lists any DNS name, or None when the
/// certificate cannot be read that far.
fn names(cert: &[u8]) -> Option<(Vec<&[u8]>, bool)> {
    let tbs = super::der::names(cert)?;
    let common_names = attribute_values(tbs.subject_body, CN_OID);
    // subjectPublicKeyInfo, then optional unique ids, then the extensions.
    let mut rest = der_next(tbs.subject.rest)?.0.rest;
    let mut dns = false;
    while let Some((el, body)) = der_next(rest) {
        if el.tag == EXTENSIONS {
            dns = lists_dns_name(body)?;
        }
        rest = el.rest;
    }
    Some((common_names, dns))
}

/// The values of attribute `oid` in a Name (a SEQUENCE of RDN SETs).
fn attribute_values<'a>(mut name: &'a [u8], oid: &[u8]) -> Vec<&'a [u8]> {
    let mut out = Vec::new();
    while let Some((rdn, mut set)) = der_next(name).filter(|(d, _)| d.tag == SET) {
        while let Some((atv, pair)) = der_next(set).filter(|(d, _)| d.tag == SEQUENCE) {
            if let Some((id, id_body)) = der_next(pair).filter(|(d, _)| d.tag == OID) {
                if id_body == oid {
                    if let Some((_, value)) = der_next(id.rest) {
                        out.push(value);
                    }
                }
            }
            set = atv.rest;
        }
        name = rdn.rest;
    }
    out
}

/// Whether the Extensions (inside `[3]`) hold a subjectAltName with a dNSName entry.
fn lists_dns_name(explicit: &[u8]) -> Option<bool> {
    let (_, mut list) = der_next(explicit).filter(|(d, _)| d.tag == SEQUENCE)?;
    while let Some((ext, body)) = der_next(list) {
        list = ext.rest;
        let Some((id, id_body)) = der_next(body).filter(|(d, _)| d.tag == OID) else { continue };
        if id_body != SAN_OID {
            continue;
        }
        // An optional `critical` BOOLEAN comes before the value.
        let mut after = id.rest;
        let value = loop {
            let (el, el_body) = der_next(after)?;
            if el.tag == OCTET_STRING {
                break el_body;
            }
            after = el.rest;
        };
        let (_, mut general_names) = der_next(value).filter(|(d, _)| d.tag == SEQUENCE)?;
        while let Some((gn, _)) = der_next(general_names) {
            if gn.tag == DNS_NAME {
                return Some(true);
            }
            general_names = gn.rest;
        }
    }
    Some(false)
}

/// Lower case, without one trailing dot.
fn unqualified(name: &str) -> String {
    name.strip_suffix('.').unwrap_or(name).to_ascii_lowercase()
}

/// Node's host-name match: equal label counts, the labels after the first equal, and the first
/// one equal or matched by a single `*` (not in an A-label, not for `*.tld`).
fn matches(host: &str, pattern: &str) -> bool {
    let host = unqualified(host);
    let pattern = unqualified(pattern);
    let h: Vec<&str> = host.split('.').collect();
    let p: Vec<&str> = pattern.split('.').collect();
    if h.len() != p.len()
        || p.iter().any(|l| l.is_empty() || l.bytes().any(|b| !(0x21..0x80).contains(&b)))
    {
        return false;
    }
    if h[1..] != p[1..] {
        return false;
    }
    let (first, pattern_first) = (h[0], p[0]);
    let parts: Vec<&str> = pattern_first.split('*').collect();
    if parts.len() == 1 || pattern_first.contains("xn--") {
        return first == pattern_first;
    }
    if parts.len() > 2 || p.len() <= 2 {
        return false;
    }
    let (prefix, suffix) = (parts[0], parts[1]);
    prefix.len() + suffix.len() <= first.len()
        && first.starts_with(prefix)
        && first.ends_with(suffix)
}

/// True when `cert` lists no DNS name and one of its subject CNs matches `host`.
pub(super) fn vouches_for(cert: &[u8], host: &str) -> bool {
    match names(cert) {
        Some((common_names, false)) => common_names
            .iter()
            .filter_map(|cn| std::str::from_utf8(cn).ok())
            .any(|cn| matches(host, cn)),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::matches;

    #[test]
    fn host_names_match_as_node_matches_them() {
        assert!(matches("agent1", "agent1"));
        assert!(matches("Proxy.Example.", "proxy.example"));
        assert!(matches("a.example.com", "*.example.com"));
        assert!(matches("api-1.example.com", "api-*.example.com"));
        assert!(!matches("example.com", "*.example.com"));
        assert!(!matches("a.b.example.com", "*.example.com"));
        assert!(!matches("a.com", "*.com"));
        assert!(!matches("xn--a.example.com", "xn--*.example.com"));
        assert!(!matches("a.example.com", "*.*.com"));
        assert!(!matches("agent2", "agent1"));
        assert!(!matches("bad..example", "bad..example"));
    }
}
