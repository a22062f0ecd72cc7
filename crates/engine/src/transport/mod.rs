//! Byte transports a connection runs over: TCP, unix domain sockets, TLS over either, and sockets
//! bridged from JS (custom connectors). One enum rather than a trait object keeps reads and writes
//! statically dispatched on the hot path.
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
#[cfg(unix)]
use tokio::net::UnixStream;

pub mod bridge;
pub mod tls;

pub use tls::{TlsConfigError, TlsConnector, TlsOptions, TlsVersion};

#[derive(Debug, Clone)]
pub enum Target {
    Tcp {
        host: String,
        port: u16,
    },
    #[cfg(unix)]
    Unix {
        path: String,
    },
}

/// A plain socket: what TLS runs over. A bridged socket is one too: the engine's TLS can run over a
/// JS stream (a proxy's CONNECT tunnel, a SOCKS5 connection).
pub enum Plain {
    Tcp(TcpStream),
    #[cfg(unix)]
    Unix(UnixStream),
    Bridged(bridge::BridgeIo),
}

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

#[derive(Debug)]
pub enum ConnectError {
    Timeout,
    Io(io::Error),
    /// The TLS handshake failed; `errno` is the code Node gives the same failure
    /// (e.g. `CERT_HAS_EXPIRED`), `message` its description.
    Tls {
        errno: &'static str,
        message: String,
    },
    /// The JS side could not provide a bridged socket (the user's `connect` failed).
    Bridge {
        code: crate::error::ErrorCode,
        errno: String,
        message: String,
    },
}

impl From<io::Error> for ConnectError {
    fn from(e: io::Error) -> Self {
        ConnectError::Io(e)
    }
}

impl Plain {
    async fn connect(target: &Target) -> io::Result<Plain> {
        match target {
            Target::Tcp { host, port } => {
                // IPv6 literals arrive bracketed from URL hosts.
                let h = host.trim_start_matches('[').trim_end_matches(']');
                // The shared DNS cache and happy eyeballs (dns/); IP literals connect directly.
                let s = crate::dns::connect(h, *port).await?;
                // Requests are written whole; Nagle would only add latency (undici sets noDelay too).
                s.set_nodelay(true)?;
                Ok(Plain::Tcp(s))
            }
            #[cfg(unix)]
            Target::Unix { path } => Ok(Plain::Unix(UnixStream::connect(path).await?)),
        }
    }
}

impl Transport {
    /// Connects to `target`, with a TLS handshake on top when `tls` is set. The timeout covers
    /// the handshake too, as Node's connect timeout does.
    pub async fn connect(
        target: &Target,
        tls: Option<&TlsConnector>,
        timeout: Option<Duration>,
    ) -> Result<Transport, ConnectError> {
        let fut = async {
            let plain = Plain::connect(target).await?;
            match tls {
                None => Ok(match plain {
                    Plain::Tcp(s) => Transport::Tcp(s),
                    #[cfg(unix)]
                    Plain::Unix(s) => Transport::Unix(s),
                    Plain::Bridged(s) => Transport::Bridged(s),
                }),
                Some(tls) => tls.handshake(plain).await.map(|s| Transport::Tls(Box::new(s))),
            }
        };
        with_timeout(timeout, fut).await
    }

    /// Runs the engine's TLS handshake over a socket bridged from JS, within `timeout`.
    pub async fn tls_over_bridge(
        io: bridge::BridgeIo,
        tls: &TlsConnector,
        timeout: Option<Duration>,
    ) -> Result<Transport, ConnectError> {
        with_timeout(timeout, async { tls.handshake(Plain::Bridged(io)).await.map(|s| Transport::Tls(Box::new(s))) })
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

// Forwards the tokio I/O traits to whichever stream a variant holds.
macro_rules! forward_io {
    ($ty:ident { $($variant:ident $(#[$attr:meta])?),* }) => {
        impl AsyncRead for $ty {
            fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
                match self.get_mut() {
                    $($(#[$attr])? $ty::$variant(s) => Pin::new(s).poll_read(cx, buf),)*
                }
            }
        }
        impl AsyncWrite for $ty {
            fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, data: &[u8]) -> Poll<io::Result<usize>> {
                match self.get_mut() {
                    $($(#[$attr])? $ty::$variant(s) => Pin::new(s).poll_write(cx, data),)*
                }
            }
            fn poll_write_vectored(self: Pin<&mut Self>, cx: &mut Context<'_>, bufs: &[io::IoSlice<'_>]) -> Poll<io::Result<usize>> {
                match self.get_mut() {
                    $($(#[$attr])? $ty::$variant(s) => Pin::new(s).poll_write_vectored(cx, bufs),)*
                }
            }
            fn is_write_vectored(&self) -> bool {
                match self {
                    $($(#[$attr])? $ty::$variant(s) => s.is_write_vectored(),)*
                }
            }
            fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
                match self.get_mut() {
                    $($(#[$attr])? $ty::$variant(s) => Pin::new(s).poll_flush(cx),)*
                }
            }
            fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
                match self.get_mut() {
                    $($(#[$attr])? $ty::$variant(s) => Pin::new(s).poll_shutdown(cx),)*
                }
            }
        }
    };
}

forward_io!(Plain { Tcp, Unix #[cfg(unix)], Bridged });
forward_io!(Transport { Tcp, Unix #[cfg(unix)], Tls, Bridged });
