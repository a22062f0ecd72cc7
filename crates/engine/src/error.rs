//! Error kinds the engine reports; each maps to one typed error class in `ts/core/errors.ts`.
use crate::codes::code_enum;
use crate::h1::DecodeError;
use crate::request::Breach;

code_enum! {
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum ErrorCode: u16 {
        /// The connection failed or the peer closed it mid-response (SocketError).
        Socket = 1,
        /// A malformed or ambiguous response (HTTPParserError).
        Parser = 2,
        /// The peer closed before a Content-Length body was complete (ResponseContentLengthMismatchError).
        ContentLengthMismatch = 3,
        /// The response head exceeded maxHeaderSize (HeadersOverflowError).
        HeadersOverflow = 4,
        HeadersTimeout = 5,
        BodyTimeout = 6,
        ConnectTimeout = 7,
        /// Connecting failed (an OS error such as ECONNREFUSED; errno carries its name).
        Connect = 8,
        /// The body exceeded maxResponseSize (ResponseExceededMaxSizeError).
        ResponseTooLarge = 9,
        /// The request could not be encoded (InvalidArgumentError).
        InvalidArgument = 10,
        /// A bug in the engine (a caught panic): reported, never fatal to the process.
        Internal = 11,
        /// Informational: the connection ended normally (disconnect without fault, e.g. keep-alive expiry).
        Info = 12,
        /// A streamed body's size differs from its Content-Length (RequestContentLengthMismatchError).
        RequestContentLengthMismatch = 13,
        /// A custom `connect` function failed; the JS side holds the error object and the message is
        /// its key there, so the user gets back the very error they passed.
        User = 14,
    }
}

impl ErrorCode {
    /// The code with this number (as JS passes it back), if there is one.
    pub fn from_u16(n: u16) -> Option<ErrorCode> {
        ErrorCode::ALL.iter().copied().find(|c| *c as u16 == n)
    }

    pub fn from_decode(e: &DecodeError) -> ErrorCode {
        match e {
            DecodeError::Parse(_) => ErrorCode::Parser,
            DecodeError::HeadersOverflow => ErrorCode::HeadersOverflow,
            DecodeError::ContentLengthMismatch { .. } => ErrorCode::ContentLengthMismatch,
            DecodeError::Closed => ErrorCode::Socket,
        }
    }
}

impl From<Breach> for ErrorCode {
    fn from(b: Breach) -> ErrorCode {
        match b {
            Breach::HeadersTimeout => ErrorCode::HeadersTimeout,
            Breach::BodyTimeout => ErrorCode::BodyTimeout,
            Breach::ResponseTooLarge => ErrorCode::ResponseTooLarge,
            Breach::LengthMismatch => ErrorCode::RequestContentLengthMismatch,
        }
    }
}

/// The symbolic name of an OS error, as Node reports it in `err.code`.
pub fn errno_name(e: &std::io::Error) -> &'static str {
    use std::io::ErrorKind::*;
    if let Some(dial) = e.get_ref().and_then(|inner| inner.downcast_ref::<crate::dns::DialError>())
    {
        return errno_name(&dial.source);
    }
    if let Some(lookup) =
        e.get_ref().and_then(|inner| inner.downcast_ref::<crate::dns::LookupError>())
    {
        return lookup.code;
    }
    match e.kind() {
        ConnectionRefused => "ECONNREFUSED",
        ConnectionReset => "ECONNRESET",
        ConnectionAborted => "ECONNABORTED",
        NotFound => "ENOENT",
        PermissionDenied => "EACCES",
        AddrInUse => "EADDRINUSE",
        AddrNotAvailable => "EADDRNOTAVAIL",
        BrokenPipe => "EPIPE",
        TimedOut => "ETIMEDOUT",
        HostUnreachable => "EHOSTUNREACH",
        NetworkUnreachable => "ENETUNREACH",
        _ => match e.raw_os_error() {
            Some(111) => "ECONNREFUSED",
            Some(104) => "ECONNRESET",
            Some(2) => "ENOENT",
            _ => "",
        },
    }
}
