//! TLS options, configs and Node-style error codes.
use super::*;

#[test]
fn version_mapping() {
    assert_eq!(TlsVersion::range(None, None), Ok((TlsVersion::Tls12, TlsVersion::Tls13)));
    assert_eq!(
        TlsVersion::range(Some("TLSv1.3"), None),
        Ok((TlsVersion::Tls13, TlsVersion::Tls13))
    );
    assert_eq!(
        TlsVersion::range(None, Some("TLSv1.2")),
        Ok((TlsVersion::Tls12, TlsVersion::Tls12))
    );
    // A lower minimum still allows what rustls speaks.
    assert_eq!(TlsVersion::range(Some("TLSv1"), None), Ok((TlsVersion::Tls12, TlsVersion::Tls13)));
    assert_eq!(
        TlsVersion::range(Some("TLSv1.1"), Some("TLSv1.2")),
        Ok((TlsVersion::Tls12, TlsVersion::Tls12))
    );
    let e = TlsVersion::range(None, Some("TLSv1.1")).unwrap_err();
    assert!(e.0.contains("not supported"), "{e}");
    assert!(TlsVersion::range(None, Some("TLSv1")).is_err());
    assert!(TlsVersion::range(Some("SSLv3"), None).is_err());
    assert!(TlsVersion::range(Some("tlsv1.2"), None).is_err());
    let e = TlsVersion::range(Some("TLSv1.3"), Some("TLSv1.2")).unwrap_err();
    assert!(e.0.contains("greater"), "{e}");
}

fn hash_of(o: &TlsOptions) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    o.hash(&mut h);
    h.finish()
}

#[test]
fn option_identity() {
    let a = TlsOptions::default();
    let b = TlsOptions::default();
    assert_eq!(a, b);
    assert_eq!(hash_of(&a), hash_of(&b));
    let variants = [
        TlsOptions { reject_unauthorized: false, ..a.clone() },
        TlsOptions { alpn: vec![b"http/1.1".to_vec(), b"h2".to_vec()], ..a.clone() },
        TlsOptions { alpn: vec![b"h2".to_vec(), b"http/1.1".to_vec()], ..a.clone() },
        TlsOptions { max_cached_sessions: 0, ..a.clone() },
        TlsOptions { min_version: TlsVersion::Tls13, ..a.clone() },
        TlsOptions { ca: vec!["x".into()], ..a.clone() },
        TlsOptions { roots: vec!["x".into()], ..a.clone() },
    ];
    for (i, v) in variants.iter().enumerate() {
        assert_ne!(&a, v, "variant {i}");
        assert_ne!(hash_of(&a), hash_of(v), "variant {i}");
        for (j, w) in variants.iter().enumerate() {
            assert_eq!(i == j, v == w);
        }
    }
}

fn permissive() -> TlsOptions {
    TlsOptions { reject_unauthorized: false, ..TlsOptions::default() }
}

#[test]
fn cache_shares_configs() {
    let mut cache = ConfigCache::default();
    let a = cache.get(&permissive()).unwrap();
    let b = cache.get(&permissive()).unwrap();
    assert!(Arc::ptr_eq(&a, &b));
    let c = cache.get(&TlsOptions { max_cached_sessions: 0, ..permissive() }).unwrap();
    assert!(!Arc::ptr_eq(&a, &c));
    assert_eq!(cache.len(), 2);
    assert_eq!(a.alpn_protocols, vec![b"http/1.1".to_vec()]);
}

#[test]
fn cache_is_bounded() {
    let mut cache = ConfigCache::default();
    let kept = cache.get(&permissive()).unwrap();
    for n in 1..(MAX_CACHED_CONFIGS * 2) {
        cache.get(&TlsOptions { max_cached_sessions: n, ..permissive() }).unwrap();
    }
    assert!(cache.len() <= MAX_CACHED_CONFIGS);
    // A config some pool still holds survives eviction of unused ones.
    assert!(Arc::ptr_eq(&kept, &cache.get(&permissive()).unwrap()));
}

#[test]
fn config_errors() {
    let bad_ca = TlsOptions { ca: vec!["not a certificate".into()], ..TlsOptions::default() };
    assert!(build_config(&bad_ca).unwrap_err().0.contains("ca"));
    let broken = "-----BEGIN CERTIFICATE-----\n!!!!\n-----END CERTIFICATE-----\n";
    assert!(build_config(&TlsOptions { ca: vec![broken.into()], ..TlsOptions::default() }).is_err());
    // No roots at all: nothing could ever verify.
    assert!(build_config(&TlsOptions::default()).is_err());
    let no_key = TlsOptions { cert: Some(String::new()), ..permissive() };
    assert!(build_config(&no_key).unwrap_err().0.contains("without its key"));
    let enc = TlsOptions {
        cert: Some(String::new()),
        key: Some(
            "-----BEGIN ENCRYPTED PRIVATE KEY-----\nAAAA\n-----END ENCRYPTED PRIVATE KEY-----\n"
                .into(),
        ),
        ..permissive()
    };
    assert!(build_config(&enc).unwrap_err().0.contains("passphrase"));
    let alpn = TlsOptions { alpn: vec![Vec::new()], ..permissive() };
    assert!(build_config(&alpn).is_err());
}

#[test]
fn server_names() {
    let config = Arc::new(build_config(&permissive()).unwrap());
    assert!(matches!(
        TlsConnector::new(config.clone(), "example.com").unwrap().name,
        ServerName::DnsName(_)
    ));
    assert!(matches!(
        TlsConnector::new(config.clone(), "127.0.0.1").unwrap().name,
        ServerName::IpAddress(_)
    ));
    assert!(matches!(
        TlsConnector::new(config.clone(), "[::1]").unwrap().name,
        ServerName::IpAddress(_)
    ));
    assert!(TlsConnector::new(config, "").is_err());
}

#[test]
fn der_names() {
    // Garbage and truncations never panic.
    assert!(super::der::names(&[]).is_none());
    assert!(super::der::names(&[0x30, 0x84, 0xff, 0xff, 0xff, 0xff]).is_none());
    assert!(!is_self_issued(&[0x30, 0x03, 0x30, 0x01]));
    for n in 0..64 {
        let junk: Vec<u8> = (0..n).map(|i| (i * 37 + 11) as u8).collect();
        let _ = super::der::names(&junk);
    }
    // Minimal TBS shape: version, serial, alg, issuer, validity, subject.
    let name = |cn: u8| vec![0x30, 0x03, 0x02, 0x01, cn];
    let build = |issuer: Vec<u8>, subject: Vec<u8>| {
        let mut tbs = vec![0xa0, 0x03, 0x02, 0x01, 0x02, 0x02, 0x01, 0x01, 0x30, 0x00];
        tbs.extend(issuer);
        tbs.extend([0x30, 0x00]);
        tbs.extend(subject);
        let mut t = vec![0x30, tbs.len() as u8];
        t.extend(tbs);
        let mut c = vec![0x30, t.len() as u8];
        c.extend(t);
        c
    };
    assert!(is_self_issued(&build(name(1), name(1))));
    assert!(!is_self_issued(&build(name(1), name(2))));
}

#[test]
fn self_issued_fixtures() {
    let der = |pem: &str| parse_certs(pem, "fixture").unwrap().remove(0);
    let fixture =
        |name| std::fs::read_to_string(format!("../../__test__/fixtures/tls/{name}.pem")).unwrap();
    assert!(is_self_issued(&der(&fixture("self-signed"))));
    assert!(is_self_issued(&der(&fixture("ca"))));
    assert!(!is_self_issued(&der(&fixture("localhost"))));
    let leaf = der(&fixture("unknown-ca"));
    assert_eq!(unknown_issuer_code(&leaf, &[]), "UNABLE_TO_VERIFY_LEAF_SIGNATURE");
    assert_eq!(
        unknown_issuer_code(&der(&fixture("self-signed")), &[]),
        "DEPTH_ZERO_SELF_SIGNED_CERT"
    );
    assert_eq!(
        unknown_issuer_code(&leaf, &[der(&fixture("other-ca"))]),
        "SELF_SIGNED_CERT_IN_CHAIN"
    );
    assert_eq!(
        unknown_issuer_code(&leaf, &[der(&fixture("other"))]),
        "UNABLE_TO_GET_ISSUER_CERT_LOCALLY"
    );
}

#[test]
fn error_codes() {
    let chain = |code| {
        rustls::Error::InvalidCertificate(CertificateError::Other(rustls::OtherError(Arc::new(
            ChainError(code),
        ))))
    };
    assert_eq!(node_error(&chain("DEPTH_ZERO_SELF_SIGNED_CERT")).0, "DEPTH_ZERO_SELF_SIGNED_CERT");
    assert_eq!(node_error(&chain("DEPTH_ZERO_SELF_SIGNED_CERT")).1, "self-signed certificate");
    let unknown = rustls::Error::InvalidCertificate(CertificateError::UnknownIssuer);
    assert_eq!(node_error(&unknown).0, "UNABLE_TO_VERIFY_LEAF_SIGNATURE");
    let expired = rustls::Error::InvalidCertificate(CertificateError::Expired);
    assert_eq!(node_error(&expired), ("CERT_HAS_EXPIRED", "certificate has expired".to_owned()));
    let name = rustls::Error::InvalidCertificate(CertificateError::NotValidForNameContext {
        expected: ServerName::try_from("a.test").unwrap(),
        presented: vec!["DnsName(\"b.test\")".into(), "IpAddress(127.0.0.1)".into()],
    });
    assert_eq!(
        node_error(&name),
        (
            "ERR_TLS_CERT_ALTNAME_INVALID",
            "Hostname/IP does not match certificate's altnames: Host: a.test. is not in the cert's altnames: DNS:b.test, IP Address:127.0.0.1".to_owned()
        )
    );
    let alert = rustls::Error::AlertReceived(AlertDescription::CertificateRequired);
    assert_eq!(node_error(&alert).0, "ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED");
    let eof = io::Error::from(io::ErrorKind::UnexpectedEof);
    assert!(matches!(handshake_error(eof), ConnectError::Tls { errno: "ECONNRESET", .. }));
    let wrapped = io::Error::new(io::ErrorKind::InvalidData, expired);
    assert!(matches!(
        handshake_error(wrapped),
        ConnectError::Tls { errno: "CERT_HAS_EXPIRED", .. }
    ));
}
