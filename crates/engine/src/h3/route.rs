//! Where a pool's next connection goes: over QUIC (prior knowledge, or an Alt-Svc endpoint JS
//! learned from an HTTPS response of the origin) or over TCP. An advertised endpoint that failed
//! is broken for a back-off (doubling on each failure, as browsers do), so later connections go
//! straight to TCP and pay nothing; a connection that works resets it.
use parking_lot::Mutex;
use std::time::{Duration, Instant};

/// The first back-off of a broken endpoint; each failure in a row doubles it, up to `MAX_BACKOFF`.
pub const FIRST_BACKOFF: Duration = Duration::from_secs(300);
const MAX_BACKOFF: Duration = Duration::from_secs(48 * 3600);

/// Where a connection goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Plan {
    Tcp,
    /// QUIC to `host:port`; `fallback`: on failure (or no answer in the race window) TCP instead.
    Quic {
        host: String,
        port: u16,
        fallback: bool,
    },
}

#[derive(Debug, Default)]
struct State {
    /// The advertised endpoint (empty host: the origin's) and when its entry expires.
    alt: Option<(String, u16, Instant)>,
    broken_until: Option<Instant>,
    failures: u32,
}

#[derive(Debug, Default)]
pub struct Route {
    state: Mutex<State>,
}

impl Route {
    /// An Alt-Svc `h3` entry: `host` empty for the origin's own; lasts `max_age`.
    pub fn advertise(&self, host: &str, port: u16, max_age: Duration, now: Instant) {
        let mut st = self.state.lock();
        let same = st.alt.as_ref().is_some_and(|(h, p, _)| h == host && *p == port);
        if !same {
            // A new endpoint has no failures of its own.
            st.broken_until = None;
            st.failures = 0;
        }
        st.alt = Some((host.to_owned(), port, now + max_age));
    }

    /// `Alt-Svc: clear`, or an entry JS dropped.
    pub fn clear(&self) {
        self.state.lock().alt = None;
    }

    /// The plan for a connection to `origin_host:origin_port` now.
    pub fn plan(
        &self,
        prior_knowledge: bool,
        origin_host: &str,
        origin_port: u16,
        now: Instant,
    ) -> Plan {
        if prior_knowledge {
            return Plan::Quic { host: origin_host.to_owned(), port: origin_port, fallback: false };
        }
        let mut st = self.state.lock();
        if st.alt.as_ref().is_some_and(|(_, _, expires)| *expires <= now) {
            st.alt = None;
        }
        if st.broken_until.is_some_and(|until| until > now) {
            return Plan::Tcp;
        }
        match &st.alt {
            Some((host, port, _)) => {
                let host = if host.is_empty() { origin_host } else { host };
                Plan::Quic { host: host.to_owned(), port: *port, fallback: true }
            }
            None => Plan::Tcp,
        }
    }

    /// A fresh endpoint is advertised and not broken: new connections go over QUIC.
    pub fn advertised(&self, now: Instant) -> bool {
        matches!(self.plan(false, "", 0, now), Plan::Quic { .. })
    }

    /// The advertised endpoint did not answer: TCP for a back-off.
    pub fn broken(&self, now: Instant) {
        let mut st = self.state.lock();
        let backoff = FIRST_BACKOFF.saturating_mul(1 << st.failures.min(12)).min(MAX_BACKOFF);
        st.failures = st.failures.saturating_add(1);
        st.broken_until = Some(now + backoff);
    }

    /// A QUIC connection to the endpoint worked.
    pub fn works(&self) {
        let mut st = self.state.lock();
        st.failures = 0;
        st.broken_until = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn quic(host: &str, port: u16, fallback: bool) -> Plan {
        Plan::Quic { host: host.into(), port, fallback }
    }

    #[test]
    fn tcp_until_an_endpoint_is_advertised_and_until_it_expires() {
        let r = Route::default();
        let t = Instant::now();
        assert_eq!(r.plan(false, "o", 443, t), Plan::Tcp);
        r.advertise("", 8443, Duration::from_secs(10), t);
        assert_eq!(r.plan(false, "o", 443, t), quic("o", 8443, true), "empty host: the origin's");
        assert_eq!(r.plan(false, "o", 443, t + Duration::from_secs(10)), Plan::Tcp, "expired");
        r.advertise("alt.example", 9000, Duration::from_secs(10), t);
        assert_eq!(r.plan(false, "o", 443, t), quic("alt.example", 9000, true));
        r.clear();
        assert_eq!(r.plan(false, "o", 443, t), Plan::Tcp);
    }

    #[test]
    fn prior_knowledge_goes_to_the_origin_without_fallback() {
        let r = Route::default();
        r.broken(Instant::now());
        assert_eq!(r.plan(true, "o", 443, Instant::now()), quic("o", 443, false));
    }

    #[test]
    fn a_broken_endpoint_backs_off_doubling_and_recovers_when_it_works() {
        let r = Route::default();
        let t = Instant::now();
        r.advertise("", 1, Duration::from_secs(86400), t);
        r.broken(t);
        assert_eq!(r.plan(false, "o", 1, t + FIRST_BACKOFF - Duration::from_secs(1)), Plan::Tcp);
        assert_eq!(r.plan(false, "o", 1, t + FIRST_BACKOFF), quic("o", 1, true));
        r.broken(t);
        assert_eq!(
            r.plan(false, "o", 1, t + FIRST_BACKOFF),
            Plan::Tcp,
            "second failure: twice as long"
        );
        r.works();
        assert_eq!(r.plan(false, "o", 1, t), quic("o", 1, true));
        r.broken(t);
        r.advertise("", 2, Duration::from_secs(60), t);
        assert_eq!(r.plan(false, "o", 1, t), quic("o", 2, true), "a new endpoint starts clean");
    }
}
