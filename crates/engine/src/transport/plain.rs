//! A plain socket to a target: TCP (through the DNS cache and happy eyeballs) or a unix domain
//! socket; what TLS runs over.
use super::bridge::BridgeIo;
use super::forward::forward_io;
use crate::timings::ConnStamps;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
#[cfg(unix)]
use tokio::net::UnixStream;

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
    Bridged(BridgeIo),
}

impl Plain {
    /// Stamps `stamps.dns` (a resolved name) and `stamps.connect`.
    pub(super) async fn connect(target: &Target, stamps: &mut ConnStamps) -> io::Result<Plain> {
        match target {
            Target::Tcp { host, port } => {
                // IPv6 literals arrive bracketed from URL hosts.
                let h = host.trim_start_matches('[').trim_end_matches(']');
                // The shared DNS cache and happy eyeballs (dns/); IP literals connect directly.
                let s = crate::dns::connect(h, *port, &mut stamps.dns).await?;
                stamps.connect = crate::timings::now();
                // Requests are written whole; Nagle would only add latency (undici sets noDelay too).
                s.set_nodelay(true)?;
                Ok(Plain::Tcp(s))
            }
            #[cfg(unix)]
            Target::Unix { path } => {
                let s = UnixStream::connect(path).await?;
                stamps.connect = crate::timings::now();
                Ok(Plain::Unix(s))
            }
        }
    }
}

forward_io!(Plain { Tcp, Unix #[cfg(unix)], Bridged });
