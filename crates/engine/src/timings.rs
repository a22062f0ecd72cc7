//! When each phase of a request ended, stamped where it happens: `queued` at dispatch, the
//! connection's `dns` / `connect` / `tls` as it is made (given to the first request it takes),
//! `sent` once the whole request went out, `first_byte` when the response head arrived and `end`
//! with the response's END. Stamps are nanoseconds since one process-wide instant (`epoch`) on
//! `Instant`'s clock, the monotonic clock libuv's `uv_hrtime` (and so `performance.now()`) reads;
//! the binding tells JS where that instant falls on `performance.now()`'s clock. 0 means the phase
//! did not happen (a reused connection, TLS over http), so a real stamp is never 0.
//!
//! The stamps travel at the end of HEAD and END events (`events.rs`), as ms since the epoch: no
//! event and no call of their own, and a clock read per stamp.
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::OnceLock;
use std::time::Instant;

fn epoch() -> Instant {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

/// Now, in ns since the epoch (at least 1).
pub fn now() -> u64 {
    stamp(Instant::now())
}

/// `at` (read from the clock by the caller, who needs it for more than a stamp), in ns since the
/// epoch (at least 1).
pub fn stamp(at: Instant) -> u64 {
    (at.saturating_duration_since(epoch()).as_nanos() as u64).max(1)
}

/// A stamp as the events carry it: ms since the epoch (0 stays 0).
pub fn ms(stamp: u64) -> f64 {
    stamp as f64 / 1e6
}

/// What a connection stamps while it is made, for the first request it takes.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct ConnStamps {
    /// The host name was resolved (0 for an IP literal, a unix socket, a bridged socket).
    pub dns: u64,
    /// The socket was connected (for a bridged socket: JS handed it over).
    pub connect: u64,
    /// The TLS handshake finished (0 without TLS).
    pub tls: u64,
}

/// A request's stamps, in its `ReqCtl`: written by the JS thread (queued) and the connection task.
#[derive(Default)]
pub struct Stamps {
    queued: AtomicU64,
    dns: AtomicU64,
    connect: AtomicU64,
    tls: AtomicU64,
    sent: AtomicU64,
    first_byte: AtomicU64,
}

impl Stamps {
    pub fn queued(&self) {
        self.queued.store(now(), Relaxed);
    }

    /// The request starts on a connection: its stamps if it is the connection's first request,
    /// zeros otherwise. Also clears what an earlier attempt (a connection that failed) stamped.
    pub fn started(&self, conn: ConnStamps) {
        self.dns.store(conn.dns, Relaxed);
        self.connect.store(conn.connect, Relaxed);
        self.tls.store(conn.tls, Relaxed);
        self.sent.store(0, Relaxed);
        self.first_byte.store(0, Relaxed);
    }

    pub fn is_sent(&self) -> bool {
        self.sent.load(Relaxed) != 0
    }

    /// The whole request (head and body) went out at `at`.
    pub fn sent(&self, at: u64) {
        self.sent.store(at, Relaxed);
    }

    /// What HEAD carries, in order: queued, dns, connect, tls, sent, first byte (ms since the
    /// epoch). A 1xx head comes first: the final head keeps its first-byte stamp.
    pub fn at_head(&self, at: u64) -> [f64; 6] {
        let first = match self.first_byte.load(Relaxed) {
            0 => {
                self.first_byte.store(at, Relaxed);
                at
            }
            t => t,
        };
        [
            ms(self.queued.load(Relaxed)),
            ms(self.dns.load(Relaxed)),
            ms(self.connect.load(Relaxed)),
            ms(self.tls.load(Relaxed)),
            ms(self.sent.load(Relaxed)),
            ms(first),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamps_are_never_zero_and_increase() {
        let (a, b) = (now(), now());
        assert!(a >= 1 && b >= a);
    }

    #[test]
    fn a_reused_connection_reports_no_connection_phases() {
        let s = Stamps::default();
        s.queued();
        s.started(ConnStamps { dns: 5, connect: 6, tls: 7 });
        s.sent(8);
        assert_eq!(s.at_head(9)[1..], [5e-6, 6e-6, 7e-6, 8e-6, 9e-6]);
        // Re-sent on a reused connection: the earlier attempt's stamps are gone.
        s.started(ConnStamps::default());
        let h = s.at_head(20);
        assert_eq!(h[1..], [0.0, 0.0, 0.0, 0.0, 20e-6]);
        assert!(h[0] > 0.0);
    }

    #[test]
    fn the_first_head_keeps_its_first_byte() {
        let s = Stamps::default();
        assert_eq!(s.at_head(3)[5], 3e-6); // a 100 Continue
        assert_eq!(s.at_head(10)[5], 3e-6); // the final head
    }
}
