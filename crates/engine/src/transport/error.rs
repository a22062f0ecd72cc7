//! Why a connection could not be made.
use std::io;

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
