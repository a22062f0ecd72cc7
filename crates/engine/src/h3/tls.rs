//! TLS for QUIC: the pool's TLS options (trust, client certificate, `rejectUnauthorized`) with
//! ALPN `h3` and TLS 1.3, which QUIC requires. quinn reports a failed handshake only as text, so
//! the verifier's own error is kept here and turned into Node's code as over TCP
//! (`transport::tls::node_error`): an untrusted certificate has the same `code` on both.
use crate::transport::tls::{build_config_with, node_error, TlsConfigError};
use crate::transport::{TlsOptions, TlsVersion};
use parking_lot::Mutex;
use quinn::crypto::rustls::QuicClientConfig;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, SignatureScheme};
use std::fmt;
use std::sync::Arc;

/// A pool's QUIC TLS: the config, the name to verify and send, and the last verification failure.
pub struct QuicTls {
    pub config: Arc<QuicClientConfig>,
    pub server_name: String,
    failure: Arc<Mutex<Option<rustls::Error>>>,
}

impl fmt::Debug for QuicTls {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("QuicTls").field("server_name", &self.server_name).finish_non_exhaustive()
    }
}

impl QuicTls {
    /// From the pool's TLS options (the ALPN and version range are QUIC's own). The config, and so
    /// its session store, lives as long as the pool: its later connections resume (1-RTT), and
    /// with `early_data` a resumed connection may send 0-RTT data.
    pub fn new(
        opts: &TlsOptions,
        server_name: &str,
        early_data: bool,
    ) -> Result<QuicTls, TlsConfigError> {
        let opts = TlsOptions {
            alpn: vec![b"h3".to_vec()],
            min_version: TlsVersion::Tls13,
            max_version: TlsVersion::Tls13,
            ..opts.clone()
        };
        let failure = Arc::new(Mutex::new(None));
        let kept = failure.clone();
        let mut config =
            build_config_with(&opts, move |inner| Arc::new(Keeping { inner, failure: kept }))?;
        config.enable_early_data = early_data;
        let config = QuicClientConfig::try_from(config)
            .map_err(|e| TlsConfigError(format!("QUIC TLS: {e}")))?;
        let server_name = server_name.trim_start_matches('[').trim_end_matches(']').to_owned();
        Ok(QuicTls { config: Arc::new(config), server_name, failure })
    }

    /// Node's code and message for a handshake that failed in certificate verification, if it did.
    pub fn verify_failure(&self) -> Option<(&'static str, String)> {
        self.failure.lock().take().map(|e| node_error(&e))
    }
}

/// The pool's verifier, keeping its failure.
struct Keeping {
    inner: Arc<dyn ServerCertVerifier>,
    failure: Arc<Mutex<Option<rustls::Error>>>,
}

impl fmt::Debug for Keeping {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Keeping")
    }
}

impl ServerCertVerifier for Keeping {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let r = self.inner.verify_server_cert(end_entity, intermediates, server_name, ocsp, now);
        if let Err(e) = &r {
            *self.failure.lock() = Some(e.clone());
        }
        r
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
