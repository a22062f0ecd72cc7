//! TLS with rustls (ring provider): option parsing, one shared `ClientConfig` per distinct option
//! set (so sessions resume across connections and pools), certificate verification that reports
//! failures with the codes Node's TLS uses, and the client handshake.
use super::error::ConnectError;
use super::plain::Plain;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::{Resumption, WebPkiServerVerifier};
use rustls::crypto::{CryptoProvider, WebPkiSupportedAlgorithms};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{
    AlertDescription, CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore,
    SignatureScheme,
};
use std::collections::HashMap;
use std::fmt;
use std::io;
use std::sync::Arc;
use tokio_rustls::client::TlsStream;

/// Default for `maxCachedSessions`, as in undici.
pub const DEFAULT_MAX_CACHED_SESSIONS: usize = 100;
/// Distinct option sets kept; beyond this, sets no pool uses any more are dropped first.
const MAX_CACHED_CONFIGS: usize = 64;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TlsVersion {
    Tls12,
    Tls13,
}

impl TlsVersion {
    /// Maps Node's `minVersion` / `maxVersion` names. rustls speaks only TLS 1.2 and 1.3: a minimum
    /// of TLSv1 / TLSv1.1 still admits both (TLS 1.2 is simply the floor), but a maximum below
    /// TLS 1.2 cannot be honoured and is an error.
    fn parse(name: &str, is_max: bool) -> Result<TlsVersion, TlsConfigError> {
        match name {
            "TLSv1.3" => Ok(TlsVersion::Tls13),
            "TLSv1.2" => Ok(TlsVersion::Tls12),
            "TLSv1.1" | "TLSv1" if !is_max => Ok(TlsVersion::Tls12),
            "TLSv1.1" | "TLSv1" => Err(TlsConfigError(format!(
                "maxVersion {name} is not supported: ferro's TLS speaks only TLSv1.2 and TLSv1.3"
            ))),
            _ => Err(TlsConfigError(format!(
                "{} must be one of 'TLSv1.3', 'TLSv1.2', 'TLSv1.1' or 'TLSv1', got {name:?}",
                if is_max { "maxVersion" } else { "minVersion" }
            ))),
        }
    }

    /// The allowed range from optional `minVersion` / `maxVersion` (Node's defaults: 1.2 to 1.3).
    pub fn range(
        min: Option<&str>,
        max: Option<&str>,
    ) -> Result<(TlsVersion, TlsVersion), TlsConfigError> {
        let lo = min.map(|v| TlsVersion::parse(v, false)).transpose()?.unwrap_or(TlsVersion::Tls12);
        let hi = max.map(|v| TlsVersion::parse(v, true)).transpose()?.unwrap_or(TlsVersion::Tls13);
        if lo > hi {
            return Err(TlsConfigError("minVersion must not be greater than maxVersion".into()));
        }
        Ok((lo, hi))
    }
}

/// Everything that shapes a `ClientConfig`. Equal options share one config (and so one session
/// cache). The server name is per pool, not part of it: rustls keys sessions by server name.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TlsOptions {
    /// Trusted CAs (PEM). When empty, `roots` are trusted instead (as Node's `ca` replaces the
    /// default store rather than adding to it).
    pub ca: Vec<String>,
    /// The default store (PEM): Node's root certificates plus NODE_EXTRA_CA_CERTS, from JS.
    pub roots: Vec<String>,
    /// Client certificate chain and its key (PEM), for servers that ask for one.
    pub cert: Option<String>,
    pub key: Option<String>,
    pub reject_unauthorized: bool,
    /// ALPN protocols in preference order.
    pub alpn: Vec<Vec<u8>>,
    pub min_version: TlsVersion,
    pub max_version: TlsVersion,
    /// 0 disables session resumption.
    pub max_cached_sessions: usize,
}

impl Default for TlsOptions {
    fn default() -> Self {
        TlsOptions {
            ca: Vec::new(),
            roots: Vec::new(),
            cert: None,
            key: None,
            reject_unauthorized: true,
            alpn: vec![b"http/1.1".to_vec()],
            min_version: TlsVersion::Tls12,
            max_version: TlsVersion::Tls13,
            max_cached_sessions: DEFAULT_MAX_CACHED_SESSIONS,
        }
    }
}

/// Invalid TLS options (bad PEM, unusable key, impossible versions...), reported when a pool is
/// created.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsConfigError(pub String);

impl fmt::Display for TlsConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for TlsConfigError {}

fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

fn parse_certs(pem: &str, what: &str) -> Result<Vec<CertificateDer<'static>>, TlsConfigError> {
    CertificateDer::pem_slice_iter(pem.as_bytes())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| TlsConfigError(format!("{what}: invalid PEM: {e}")))
}

fn parse_key(pem: &str) -> Result<PrivateKeyDer<'static>, TlsConfigError> {
    if pem.contains("ENCRYPTED PRIVATE KEY") || pem.contains("Proc-Type: 4,ENCRYPTED") {
        return Err(TlsConfigError("key is encrypted: pass its `passphrase`".into()));
    }
    PrivateKeyDer::from_pem_slice(pem.as_bytes()).map_err(|e| match e {
        rustls::pki_types::pem::Error::NoItemsFound => {
            TlsConfigError("key: no private key found in PEM".into())
        }
        e => TlsConfigError(format!("key: invalid PEM: {e}")),
    })
}

fn root_store(opts: &TlsOptions) -> Result<RootCertStore, TlsConfigError> {
    let mut store = RootCertStore::empty();
    if opts.ca.is_empty() {
        // Node's store may hold certificates webpki cannot use as anchors; skip those, as a
        // browser would, rather than refusing the whole store.
        for pem in &opts.roots {
            store.add_parsable_certificates(parse_certs(pem, "root certificates")?);
        }
    } else {
        for pem in &opts.ca {
            for cert in parse_certs(pem, "ca")? {
                store
                    .add(cert)
                    .map_err(|e| TlsConfigError(format!("ca: unusable certificate: {e}")))?;
            }
        }
        if store.is_empty() {
            return Err(TlsConfigError("ca: no certificate found in PEM".into()));
        }
    }
    Ok(store)
}

/// Builds the rustls config for one option set.
pub fn build_config(opts: &TlsOptions) -> Result<ClientConfig, TlsConfigError> {
    build_config_with(opts, |v| v)
}

/// `build_config` with the certificate verifier passed through `wrap` (HTTP/3 keeps its failure:
/// quinn reports a failed handshake only as text).
pub fn build_config_with(
    opts: &TlsOptions,
    wrap: impl FnOnce(Arc<dyn ServerCertVerifier>) -> Arc<dyn ServerCertVerifier>,
) -> Result<ClientConfig, TlsConfigError> {
    let provider = provider();
    let versions: Vec<&'static rustls::SupportedProtocolVersion> = [
        (TlsVersion::Tls13, &rustls::version::TLS13),
        (TlsVersion::Tls12, &rustls::version::TLS12),
    ]
    .into_iter()
    .filter(|(v, _)| *v >= opts.min_version && *v <= opts.max_version)
    .map(|(_, p)| p)
    .collect();
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(&versions)
        .map_err(|e| TlsConfigError(format!("TLS versions: {e}")))?;

    let verifier: Arc<dyn ServerCertVerifier> = if opts.reject_unauthorized {
        let roots = root_store(opts)?;
        if roots.is_empty() {
            return Err(TlsConfigError("no trusted root certificates (pass `ca`)".into()));
        }
        let inner = WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone())
            .build()
            .map_err(|e| TlsConfigError(format!("certificate verifier: {e}")))?;
        Arc::new(NodeVerifier { inner })
    } else {
        Arc::new(AcceptAnyChain { algs: provider.signature_verification_algorithms })
    };
    let builder = builder.dangerous().with_custom_certificate_verifier(wrap(verifier));

    let mut config = match (&opts.cert, &opts.key) {
        (Some(cert), Some(key)) => {
            let key = parse_key(key)?;
            let chain = parse_certs(cert, "cert")?;
            if chain.is_empty() {
                return Err(TlsConfigError("cert: no certificate found in PEM".into()));
            }
            builder
                .with_client_auth_cert(chain, key)
                .map_err(|e| TlsConfigError(format!("cert/key: {e}")))?
        }
        (None, None) => builder.with_no_client_auth(),
        (Some(_), None) => return Err(TlsConfigError("cert was given without its key".into())),
        (None, Some(_)) => return Err(TlsConfigError("key was given without its cert".into())),
    };

    for p in &opts.alpn {
        if p.is_empty() || p.len() > 255 {
            return Err(TlsConfigError("ALPN protocol names must be 1 to 255 bytes long".into()));
        }
    }
    config.alpn_protocols = opts.alpn.clone();
    config.resumption = if opts.max_cached_sessions == 0 {
        Resumption::disabled()
    } else {
        Resumption::in_memory_sessions(opts.max_cached_sessions)
    };
    Ok(config)
}

/// One `ClientConfig` per distinct option set, owned by the engine.
#[derive(Default)]
pub struct ConfigCache {
    configs: HashMap<TlsOptions, Arc<ClientConfig>>,
}

impl ConfigCache {
    pub fn get(&mut self, opts: &TlsOptions) -> Result<Arc<ClientConfig>, TlsConfigError> {
        if let Some(c) = self.configs.get(opts) {
            return Ok(c.clone());
        }
        let config = Arc::new(build_config(opts)?);
        if self.configs.len() >= MAX_CACHED_CONFIGS {
            // Held only here: no pool uses it any more.
            self.configs.retain(|_, c| Arc::strong_count(c) > 1);
            if self.configs.len() >= MAX_CACHED_CONFIGS {
                if let Some(k) = self.configs.keys().next().cloned() {
                    self.configs.remove(&k);
                }
            }
        }
        self.configs.insert(opts.clone(), config.clone());
        Ok(config)
    }

    pub fn len(&self) -> usize {
        self.configs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.configs.is_empty()
    }
}

/// What a pool needs to open TLS connections: the shared config and the name to verify (and to
/// send as SNI unless it is an IP address).
#[derive(Clone)]
pub struct TlsConnector {
    config: Arc<ClientConfig>,
    name: ServerName<'static>,
}

impl fmt::Debug for TlsConnector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TlsConnector").field("name", &self.name).finish_non_exhaustive()
    }
}

impl TlsConnector {
    /// `server_name` is the `servername` option or else the origin's host; IPv6 literals may
    /// come bracketed.
    pub fn new(
        config: Arc<ClientConfig>,
        server_name: &str,
    ) -> Result<TlsConnector, TlsConfigError> {
        let n = server_name.trim_start_matches('[').trim_end_matches(']');
        let name = ServerName::try_from(n.to_owned())
            .map_err(|_| TlsConfigError(format!("invalid TLS server name {server_name:?}")))?;
        Ok(TlsConnector { config, name })
    }

    pub fn config(&self) -> &Arc<ClientConfig> {
        &self.config
    }

    pub(super) async fn handshake(&self, io: Plain) -> Result<TlsStream<Plain>, ConnectError> {
        let connector = tokio_rustls::TlsConnector::from(self.config.clone());
        // Whatever ALPN chose (h2 or http/1.1), the connection task serves it.
        connector.connect(self.name.clone(), io).await.map_err(handshake_error)
    }
}

/// A failed handshake: rustls errors get Node's codes; a socket closed mid-handshake reads as
/// Node's ECONNRESET; other I/O errors stay I/O errors.
fn handshake_error(e: io::Error) -> ConnectError {
    if let Some(tls) = e.get_ref().and_then(|inner| inner.downcast_ref::<rustls::Error>()) {
        let (errno, message) = node_error(tls);
        return ConnectError::Tls { errno, message };
    }
    if e.kind() == io::ErrorKind::UnexpectedEof {
        return ConnectError::Tls {
            errno: "ECONNRESET",
            message:
                "Client network socket disconnected before secure TLS connection was established"
                    .into(),
        };
    }
    ConnectError::Io(e)
}

/// A chain failure that rustls folds into `UnknownIssuer` but Node tells apart.
#[derive(Debug)]
struct ChainError(&'static str);

impl fmt::Display for ChainError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

impl std::error::Error for ChainError {}

/// The `err.code` and message Node (OpenSSL) gives the same failure.
pub fn node_error(e: &rustls::Error) -> (&'static str, String) {
    use rustls::Error as E;
    let fixed = |code: &'static str, msg: &str| (code, msg.to_owned());
    match e {
        E::InvalidCertificate(c) => match c {
            CertificateError::Other(o) => {
                match (&*o.0 as &(dyn std::error::Error + 'static)).downcast_ref::<ChainError>() {
                    Some(ChainError(code)) => (code, chain_message(code).to_owned()),
                    None => ("ERR_SSL_BAD_CERTIFICATE", format!("invalid peer certificate: {o}")),
                }
            }
            CertificateError::UnknownIssuer => {
                fixed("UNABLE_TO_VERIFY_LEAF_SIGNATURE", chain_message("UNABLE_TO_VERIFY_LEAF_SIGNATURE"))
            }
            CertificateError::Expired | CertificateError::ExpiredContext { .. } => {
                fixed("CERT_HAS_EXPIRED", "certificate has expired")
            }
            CertificateError::NotValidYet | CertificateError::NotValidYetContext { .. } => {
                fixed("CERT_NOT_YET_VALID", "certificate is not yet valid")
            }
            CertificateError::NotValidForName => {
                fixed("ERR_TLS_CERT_ALTNAME_INVALID", "Hostname/IP does not match certificate's altnames")
            }
            CertificateError::NotValidForNameContext { expected, presented } => {
                ("ERR_TLS_CERT_ALTNAME_INVALID", altname_message(expected, presented))
            }
            CertificateError::Revoked => fixed("CERT_REVOKED", "certificate revoked"),
            CertificateError::BadSignature => fixed("CERT_SIGNATURE_FAILURE", "certificate signature failure"),
            CertificateError::InvalidPurpose | CertificateError::InvalidPurposeContext { .. } => {
                fixed("INVALID_PURPOSE", "unsupported certificate purpose")
            }
            CertificateError::UnhandledCriticalExtension => {
                fixed("UNHANDLED_CRITICAL_EXTENSION", "unhandled critical extension")
            }
            CertificateError::UnknownRevocationStatus => fixed("UNABLE_TO_GET_CRL", "unable to get certificate CRL"),
            CertificateError::ExpiredRevocationList | CertificateError::ExpiredRevocationListContext { .. } => {
                fixed("CRL_HAS_EXPIRED", "CRL has expired")
            }
            other => ("ERR_SSL_BAD_CERTIFICATE", format!("invalid peer certificate: {other:?}")),
        },
        E::AlertReceived(a) => (alert_code(*a), format!("received fatal TLS alert from the server: {a:?}")),
        E::PeerIncompatible(p) => {
            let msg = format!("TLS handshake failed: the server is incompatible: {p:?}");
            let s = format!("{p:?}");
            if s.contains("Tls12") || s.contains("Version") {
                ("ERR_SSL_UNSUPPORTED_PROTOCOL", msg + " (ferro speaks only TLSv1.2 and TLSv1.3)")
            } else {
                ("ERR_SSL_HANDSHAKE_FAILURE", msg)
            }
        }
        // Typically TLS spoken to a plain-text server.
        E::InvalidMessage(m) => (
            "ERR_SSL_WRONG_VERSION_NUMBER",
            format!("TLS handshake failed: invalid message from the server ({m:?}); is it speaking TLS?"),
        ),
        other => ("ERR_SSL_HANDSHAKE_FAILURE", format!("TLS handshake failed: {other}")),
    }
}

fn chain_message(code: &str) -> &'static str {
    match code {
        "DEPTH_ZERO_SELF_SIGNED_CERT" => "self-signed certificate",
        "SELF_SIGNED_CERT_IN_CHAIN" => "self-signed certificate in certificate chain",
        "UNABLE_TO_GET_ISSUER_CERT_LOCALLY" => "unable to get local issuer certificate",
        _ => "unable to verify the first certificate",
    }
}

/// Node's wording: `Host: name. is not in the cert's altnames: DNS:a, IP Address:b` (or the
/// `IP: ...` form for an address).
fn altname_message(expected: &ServerName<'_>, presented: &[String]) -> String {
    // webpki renders names as `DnsName("a")` / `IpAddress(1.2.3.4)`.
    let names: Vec<(bool, String)> = presented
        .iter()
        .filter_map(|p| {
            if let Some(d) = p.strip_prefix("DnsName(\"").and_then(|r| r.strip_suffix("\")")) {
                Some((false, d.to_owned()))
            } else {
                p.strip_prefix("IpAddress(")
                    .and_then(|r| r.strip_suffix(')'))
                    .map(|ip| (true, ip.to_owned()))
            }
        })
        .collect();
    let reason = match expected {
        ServerName::IpAddress(_) => {
            let ips: Vec<&str> =
                names.iter().filter(|(ip, _)| *ip).map(|(_, n)| n.as_str()).collect();
            format!("IP: {} is not in the cert's list: {}", expected.to_str(), ips.join(", "))
        }
        _ => {
            let all: Vec<String> = names
                .iter()
                .map(|(ip, n)| if *ip { format!("IP Address:{n}") } else { format!("DNS:{n}") })
                .collect();
            format!(
                "Host: {}. is not in the cert's altnames: {}",
                expected.to_str(),
                all.join(", ")
            )
        }
    };
    format!("Hostname/IP does not match certificate's altnames: {reason}")
}

fn alert_code(a: AlertDescription) -> &'static str {
    use AlertDescription as A;
    match a {
        A::HandshakeFailure => "ERR_SSL_SSLV3_ALERT_HANDSHAKE_FAILURE",
        A::BadCertificate => "ERR_SSL_SSLV3_ALERT_BAD_CERTIFICATE",
        A::CertificateRequired => "ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED",
        A::UnknownCA => "ERR_SSL_TLSV1_ALERT_UNKNOWN_CA",
        A::AccessDenied => "ERR_SSL_TLSV1_ALERT_ACCESS_DENIED",
        A::DecryptError => "ERR_SSL_TLSV1_ALERT_DECRYPT_ERROR",
        A::ProtocolVersion => "ERR_SSL_TLSV1_ALERT_PROTOCOL_VERSION",
        A::InternalError => "ERR_SSL_TLSV1_ALERT_INTERNAL_ERROR",
        A::NoApplicationProtocol => "ERR_SSL_TLSV1_ALERT_NO_APPLICATION_PROTOCOL",
        A::UnrecognisedName => "ERR_SSL_TLSV1_UNRECOGNIZED_NAME",
        A::CertificateExpired => "ERR_SSL_SSLV3_ALERT_CERTIFICATE_EXPIRED",
        A::UnsupportedCertificate => "ERR_SSL_SSLV3_ALERT_UNSUPPORTED_CERTIFICATE",
        A::IllegalParameter => "ERR_SSL_SSLV3_ALERT_ILLEGAL_PARAMETER",
        _ => "ERR_SSL_TLS_ALERT",
    }
}

/// webpki's verification, with `UnknownIssuer` split the way OpenSSL reports it.
#[derive(Debug)]
struct NodeVerifier {
    inner: Arc<WebPkiServerVerifier>,
}

impl ServerCertVerifier for NodeVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let verified = self.inner.verify_server_cert(
            end_entity,
            intermediates,
            server_name,
            ocsp_response,
            now,
        );
        // The chain is good and only the name failed: Node would still take a matching CN.
        if let (
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )),
            ServerName::DnsName(name),
        ) = (&verified, server_name)
        {
            if common_name::vouches_for(end_entity, name.as_ref()) {
                return Ok(ServerCertVerified::assertion());
            }
        }
        verified.map_err(|e| match e {
            rustls::Error::InvalidCertificate(CertificateError::UnknownIssuer) => {
                let code = unknown_issuer_code(end_entity, intermediates);
                rustls::Error::InvalidCertificate(CertificateError::Other(rustls::OtherError(
                    Arc::new(ChainError(code)),
                )))
            }
            e => e,
        })
    }
    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls12_signature(message, cert, dss)
    }
    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls13_signature(message, cert, dss)
    }
    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.inner.supported_verify_schemes()
    }
}

/// OpenSSL's name for a chain that leads to no trusted root.
fn unknown_issuer_code(leaf: &[u8], intermediates: &[CertificateDer<'_>]) -> &'static str {
    match intermediates.last() {
        None if is_self_issued(leaf) => "DEPTH_ZERO_SELF_SIGNED_CERT",
        None => "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
        Some(top) if is_self_issued(top) => "SELF_SIGNED_CERT_IN_CHAIN",
        Some(_) => "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
    }
}

/// `rejectUnauthorized: false`: any chain for any name is accepted, but the handshake signatures
/// are still checked, so the peer must hold the key of the certificate it showed.
#[derive(Debug)]
struct AcceptAnyChain {
    algs: WebPkiSupportedAlgorithms,
}

impl ServerCertVerifier for AcceptAnyChain {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }
    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.algs)
    }
    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.algs)
    }
    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algs.supported_schemes()
    }
}

/// Self-issued: issuer name equals subject name (how OpenSSL spots a self-signed certificate).
fn is_self_issued(cert: &[u8]) -> bool {
    matches!(der::names(cert), Some(n) if n.issuer == n.subject.whole)
}

mod common_name;
mod der;

#[cfg(test)]
mod tests;
