//! HTTP/2 by the h2 crate, with the same routes as HTTP/1.1: without TLS by prior knowledge (RFC
//! 9113 §3.3), a connection whose first bytes are the client preface; over TLS (`tls.rs`), one
//! that negotiated `h2`.

use bytes::Bytes;
use tokio::io::{AsyncRead, AsyncWrite};

use crate::routes;

/// The first bytes of the HTTP/2 client preface (`PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n`).
pub const PREFACE_START: &[u8] = b"PRI ";

pub async fn serve<S: AsyncRead + AsyncWrite + Unpin>(socket: S) -> Result<(), h2::Error> {
    let mut conn = h2::server::handshake(socket).await?;
    while let Some(accepted) = conn.accept().await {
        let (req, mut respond) = accepted?;
        let route = routes::find(req.uri().path());
        let mut head = http::Response::builder().status(route.status);
        for (name, value) in route.headers {
            head = head.header(*name, *value);
        }
        let head = head.header("content-length", route.body.len()).body(()).expect("static head");
        let mut body = respond.send_response(head, route.body.is_empty())?;
        if !route.body.is_empty() {
            // Queued whole: h2 sends it as the stream's and connection's windows allow.
            body.send_data(Bytes::from_static(route.body), true)?;
        }
    }
    Ok(())
}
