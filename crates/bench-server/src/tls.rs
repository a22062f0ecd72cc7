//! HTTP/1.1 and HTTP/2 over TLS on one port, chosen by ALPN (`h2`, else `http/1.1`), with the
//! routes and connection code of plain TCP.

use std::sync::Arc;
use tokio::net::TcpListener;
use tokio_rustls::rustls;

/// A TLS 1.3 / 1.2 server config offering `h2` and `http/1.1`, from PEM files.
pub fn config(cert: &str, key: &str) -> Result<Arc<rustls::ServerConfig>, String> {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    let certs = CertificateDer::pem_file_iter(cert)
        .and_then(|it| it.collect::<Result<Vec<_>, _>>())
        .map_err(|e| format!("{cert}: {e}"))?;
    let key = PrivateKeyDer::from_pem_file(key).map_err(|e| format!("{key}: {e}"))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut tls = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .and_then(|b| b.with_no_client_auth().with_single_cert(certs, key))
        .map_err(|e| e.to_string())?;
    tls.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(Arc::new(tls))
}

/// Accepts connections until the listener fails; each is served by protocol.
pub async fn serve(
    listener: TcpListener,
    config: Arc<rustls::ServerConfig>,
) -> std::io::Result<()> {
    let acceptor = tokio_rustls::TlsAcceptor::from(config);
    loop {
        let (socket, _) = listener.accept().await?;
        let acceptor = acceptor.clone();
        // A connection's failure (a handshake error, a reset) ends that connection only.
        tokio::spawn(async move {
            if socket.set_nodelay(true).is_err() {
                return;
            }
            let Ok(tls) = acceptor.accept(socket).await else { return };
            if tls.get_ref().1.alpn_protocol() == Some(b"h2") {
                let _ = crate::h2c::serve(tls).await;
            } else {
                let _ = crate::conn::serve(tls).await;
            }
        });
    }
}
