//! Whether the kernel already holds something to read on a transport's socket (bytes, an end or
//! an error), asked of the socket itself with a one-byte peek. The reactor's readiness can lag
//! behind what has arrived: a socket it last saw drained reads as not ready until its next turn.
use super::{Plain, Transport};
use socket2::SockRef;
use std::io;
use std::mem::MaybeUninit;

impl Transport {
    /// True when a read would not block. Sockets bridged from JS say false: what Node has not
    /// handed over yet cannot be seen from here.
    pub fn has_unread(&self) -> bool {
        match self {
            Transport::Tcp(s) => peek(SockRef::from(s)),
            #[cfg(unix)]
            Transport::Unix(s) => peek(SockRef::from(s)),
            Transport::Tls(s) => match &s.get_ref().0 {
                Plain::Tcp(t) => peek(SockRef::from(t)),
                #[cfg(unix)]
                Plain::Unix(u) => peek(SockRef::from(u)),
                Plain::Bridged(_) => false,
            },
            Transport::Bridged(_) => false,
        }
    }
}

fn peek(sock: SockRef<'_>) -> bool {
    let mut byte = [MaybeUninit::<u8>::uninit(); 1];
    loop {
        // The socket is non-blocking (the reactor owns it): nothing there is WouldBlock. Ok(0) is
        // the peer's end, any other error one the next read reports: something to read either way.
        match sock.peek(&mut byte) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return e.kind() != io::ErrorKind::WouldBlock,
            Ok(_) => return true,
        }
    }
}
