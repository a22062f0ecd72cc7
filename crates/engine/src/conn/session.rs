//! What a connection runs once connected: the protocol ALPN (or prior knowledge) chose, and how
//! a session ends.
use crate::error::ErrorCode;

/// Rounds of read/write work per poll before a session yields to other connections.
pub(super) const BUDGET: usize = 16;

/// The protocol a connection speaks; each has its session (`http1.rs`, `crate::h2::session`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Protocol {
    H1,
    H2,
}

impl Protocol {
    /// From a connection's address string (see `connect.rs`): ALPN's choice over TLS (the
    /// engine's, or Node's for a bridged socket), else h2c by prior knowledge, else HTTP/1.1.
    pub fn negotiated(addrs: &str, prior_knowledge: bool) -> Protocol {
        let h2 = if addrs.contains("|tls|") { addrs.ends_with("|tls|h2") } else { prior_knowledge };
        if h2 {
            Protocol::H2
        } else {
            Protocol::H1
        }
    }
}

/// Why an HTTP/1.1 session ended.
pub(crate) enum End {
    /// Closed on purpose (idle timeout, no reuse, pool closing): nothing failed.
    Clean(&'static str),
    /// Failed: the request at the head of the pipeline gets this error, the rest are re-queued.
    Failed { code: ErrorCode, errno: &'static str, message: String },
    /// An in-flight request was aborted from JS; the socket cannot be reused mid-response.
    Aborted,
}

impl End {
    pub fn io(e: std::io::Error) -> End {
        End::Failed {
            code: ErrorCode::Socket,
            errno: crate::error::errno_name(&e),
            message: e.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alpn_or_prior_knowledge_picks_the_protocol() {
        assert_eq!(Protocol::negotiated("1|2|3|4|tls|h2", false), Protocol::H2);
        assert_eq!(
            Protocol::negotiated("1|2|3|4|tls|http/1.1", true),
            Protocol::H1,
            "TLS: ALPN decides"
        );
        assert_eq!(Protocol::negotiated("1|2|3|4|tls|", true), Protocol::H1);
        assert_eq!(Protocol::negotiated("1|2|3|4", true), Protocol::H2, "h2c by prior knowledge");
        assert_eq!(Protocol::negotiated("|||", false), Protocol::H1);
    }
}
