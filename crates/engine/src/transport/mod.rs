//! Byte transports a connection runs over: TCP, unix domain sockets, TLS over either, and sockets
//! bridged from JS (custom connectors). One enum rather than a trait object keeps reads and writes
//! statically dispatched on the hot path.
use crate::timings::ConnStamps;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
#[cfg(unix)]
use tokio::net::UnixStream;

pub mod bridge;
mod error;
mod forward;
mod plain;
pub mod tls;
mod unread;

pub use error::ConnectError;
use forward::forward_io;
pub use plain::{Plain, Target};
pub use tls::{TlsConnector, TlsOptions, TlsVersion};

pub enum Transport {
    Tcp(TcpStream),
    #[cfg(unix)]
    Unix(UnixStream),
    /// Boxed: the TLS state is large and would bloat every other variant.
    Tls(Box<tokio_rustls::client::TlsStream<Plain>>),
    /// A socket that lives in JS (a custom `connect` function made it), used as it is: TLS, if
    /// any, is Node's. (With the engine's TLS on top it is `Tls` over `Plain::Bridged`.)
    Bridged(bridge::BridgeIo),
}

impl Transport {
    /// Connects to `target`, with a TLS handshake on top when `tls` is set. The timeout covers
    /// the handshake too, as Node's connect timeout does. Stamps the phases in `stamps`.
    pub async fn connect(
        target: &Target,
        tls: Option<&TlsConnector>,
        timeout: Option<Duration>,
        stamps: &mut ConnStamps,
    ) -> Result<Transport, ConnectError> {
        let fut = async {
            let plain = Plain::connect(target, stamps).await?;
            match tls {
                None => Ok(match plain {
                    Plain::Tcp(s) => Transport::Tcp(s),
                    #[cfg(unix)]
                    Plain::Unix(s) => Transport::Unix(s),
                    Plain::Bridged(s) => Transport::Bridged(s),
                }),
                Some(tls) => {
                    let s = tls.handshake(plain).await?;
                    stamps.tls = crate::timings::now();
                    Ok(Transport::Tls(Box::new(s)))
                }
            }
        };
        with_timeout(timeout, fut).await
    }

    /// Runs the engine's TLS handshake over a socket bridged from JS, within `timeout`; stamps
    /// `tls` when it is done.
    pub async fn tls_over_bridge(
        io: bridge::BridgeIo,
        tls: &TlsConnector,
        timeout: Option<Duration>,
        stamps: &mut ConnStamps,
    ) -> Result<Transport, ConnectError> {
        with_timeout(timeout, async {
            let s = tls.handshake(Plain::Bridged(io)).await?;
            stamps.tls = crate::timings::now();
            Ok(Transport::Tls(Box::new(s)))
        })
        .await
    }

    /// The protocol agreed through ALPN, if TLS negotiated one.
    pub fn alpn(&self) -> Option<&[u8]> {
        match self {
            Transport::Tls(s) => s.get_ref().1.alpn_protocol(),
            _ => None,
        }
    }

    pub fn is_tls(&self) -> bool {
        matches!(self, Transport::Tls(_))
    }

    /// The TCP socket underneath (also beneath TLS), for addresses and socket options.
    pub fn tcp(&self) -> Option<&TcpStream> {
        match self {
            Transport::Tcp(s) => Some(s),
            Transport::Tls(s) => match s.get_ref().0 {
                Plain::Tcp(t) => Some(t),
                #[cfg(unix)]
                Plain::Unix(_) => None,
                Plain::Bridged(_) => None,
            },
            #[cfg(unix)]
            Transport::Unix(_) => None,
            Transport::Bridged(_) => None,
        }
    }
}

async fn with_timeout<T>(
    timeout: Option<Duration>,
    fut: impl std::future::Future<Output = Result<T, ConnectError>>,
) -> Result<T, ConnectError> {
    match timeout {
        Some(t) => match crate::driver::timer::timeout(t, fut).await {
            Ok(r) => r,
            Err(_) => Err(ConnectError::Timeout),
        },
        None => fut.await,
    }
}

forward_io!(Transport { Tcp, Unix #[cfg(unix)], Tls, Bridged });
