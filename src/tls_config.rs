//! The `tls` part of a pool's config: Node-style TLS options from JS, turned into the engine's
//! `TlsOptions` and resolved to a shared TLS config. Invalid options fail `createPool` with an
//! `InvalidArg` error, which JS rethrows as `InvalidArgumentError`.
use ferro_engine::transport::{tls, TlsConnector, TlsOptions, TlsVersion};
use ferro_engine::Engine;
use napi::bindgen_prelude::*;
use napi_derive::napi;

#[napi(object)]
#[derive(Clone)]
pub struct TlsConfig {
    /// Trusted CAs (PEM); replaces `roots` when given.
    pub ca: Option<Vec<String>>,
    /// The default trust store (PEM): Node's root certificates plus NODE_EXTRA_CA_CERTS.
    pub roots: Option<Vec<String>>,
    /// Client certificate chain and unencrypted key (PEM).
    pub cert: Option<String>,
    pub key: Option<String>,
    /// Default true.
    pub reject_unauthorized: Option<bool>,
    /// Name to verify and send as SNI; defaults to the origin's host.
    pub servername: Option<String>,
    /// In preference order; default `['http/1.1']`.
    pub alpn_protocols: Option<Vec<String>>,
    pub min_version: Option<String>,
    pub max_version: Option<String>,
    /// Default 100; 0 disables session resumption.
    pub max_cached_sessions: Option<u32>,
}

fn invalid(msg: impl std::fmt::Display) -> Error {
    Error::new(Status::InvalidArg, msg.to_string())
}

pub(crate) fn connector(engine: &Engine, cfg: TlsConfig, host: &str) -> Result<TlsConnector> {
    let (opts, name) = options(cfg, host)?;
    engine.tls_connector(&opts, &name).map_err(invalid)
}

/// QUIC's TLS for an `allowH3` pool: the same options, with HTTP/3's ALPN and TLS 1.3, and early
/// data when `zero_rtt`.
pub(crate) fn quic(
    cfg: TlsConfig,
    host: &str,
    zero_rtt: bool,
) -> Result<ferro_engine::h3::tls::QuicTls> {
    let (opts, name) = options(cfg, host)?;
    ferro_engine::h3::tls::QuicTls::new(&opts, &name, zero_rtt).map_err(invalid)
}

/// The engine's TLS options and the name to verify.
fn options(cfg: TlsConfig, host: &str) -> Result<(TlsOptions, String)> {
    let (min_version, max_version) =
        TlsVersion::range(cfg.min_version.as_deref(), cfg.max_version.as_deref())
            .map_err(invalid)?;
    let mut opts = TlsOptions {
        ca: cfg.ca.unwrap_or_default(),
        roots: cfg.roots.unwrap_or_default(),
        cert: cfg.cert,
        key: cfg.key,
        reject_unauthorized: cfg.reject_unauthorized.unwrap_or(true),
        min_version,
        max_version,
        ..TlsOptions::default()
    };
    if let Some(alpn) = cfg.alpn_protocols {
        opts.alpn = alpn.into_iter().map(String::into_bytes).collect();
    }
    if let Some(n) = cfg.max_cached_sessions {
        opts.max_cached_sessions = n as usize;
    }
    let name = cfg.servername.as_deref().filter(|s| !s.is_empty()).unwrap_or(host);
    Ok((opts, name.to_owned()))
}

/// Throws (`InvalidArg`, with the reason) when the engine's TLS cannot present this client
/// certificate chain and key: rustls refuses some that OpenSSL takes (an X.509 v1 certificate, an
/// RSA key under 2048 bits, P-521, Ed448 and DSA keys). JS then asks Node's TLS (tls-options.ts).
#[cfg_attr(test, allow(dead_code))] // only JS calls it: no napi registration in test builds
#[napi]
pub(crate) fn check_client_cert(cert: String, key: String) -> Result<()> {
    let opts = TlsOptions {
        cert: Some(cert),
        key: Some(key),
        reject_unauthorized: false,
        ..TlsOptions::default()
    };
    tls::build_config(&opts).map(drop).map_err(invalid)
}
