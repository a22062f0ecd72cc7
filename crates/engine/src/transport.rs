//! Byte transports a connection runs over: TCP and unix domain sockets (TLS and bridged JS sockets
//! come with the TLS/connector work). One enum rather than a trait object keeps reads and writes
//! statically dispatched on the hot path.
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
#[cfg(unix)]
use tokio::net::UnixStream;

#[derive(Debug, Clone)]
pub enum Target {
    Tcp { host: String, port: u16 },
    #[cfg(unix)]
    Unix { path: String },
}

pub enum Transport {
    Tcp(TcpStream),
    #[cfg(unix)]
    Unix(UnixStream),
}

#[derive(Debug)]
pub enum ConnectError {
    Timeout,
    Io(io::Error),
}

impl Transport {
    pub async fn connect(target: &Target, timeout: Option<Duration>) -> Result<Transport, ConnectError> {
        let fut = async {
            match target {
                Target::Tcp { host, port } => {
                    // IPv6 literals arrive bracketed from URL hosts.
                    let h = host.trim_start_matches('[').trim_end_matches(']');
                    let s = TcpStream::connect((h, *port)).await?;
                    // Requests are written whole; Nagle would only add latency (undici sets noDelay too).
                    s.set_nodelay(true)?;
                    Ok(Transport::Tcp(s))
                }
                #[cfg(unix)]
                Target::Unix { path } => Ok(Transport::Unix(UnixStream::connect(path).await?)),
            }
        };
        match timeout {
            Some(t) => match tokio::time::timeout(t, fut).await {
                Ok(r) => r.map_err(ConnectError::Io),
                Err(_) => Err(ConnectError::Timeout),
            },
            None => fut.await.map_err(ConnectError::Io),
        }
    }
}

impl AsyncRead for Transport {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Transport::Tcp(s) => Pin::new(s).poll_read(cx, buf),
            #[cfg(unix)]
            Transport::Unix(s) => Pin::new(s).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Transport {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, data: &[u8]) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Transport::Tcp(s) => Pin::new(s).poll_write(cx, data),
            #[cfg(unix)]
            Transport::Unix(s) => Pin::new(s).poll_write(cx, data),
        }
    }
    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Transport::Tcp(s) => Pin::new(s).poll_flush(cx),
            #[cfg(unix)]
            Transport::Unix(s) => Pin::new(s).poll_flush(cx),
        }
    }
    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Transport::Tcp(s) => Pin::new(s).poll_shutdown(cx),
            #[cfg(unix)]
            Transport::Unix(s) => Pin::new(s).poll_shutdown(cx),
        }
    }
}
