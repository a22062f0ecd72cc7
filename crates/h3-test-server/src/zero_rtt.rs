//! 0-RTT for the tests: the server takes early data (quinn's `into_0rtt`, rustls with
//! `max_early_data_size`), tells which requests came in it, and with `--reject-0rtt` resumes no
//! session, so a client's early data is always rejected (as after a server restart).
use rustls::server::StoresServerSessions;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// TLS sessions resumed, and with `reject` those a client offered (`/resumed`).
pub static RESUMED: AtomicUsize = AtomicUsize::new(0);
pub static REFUSED: AtomicUsize = AtomicUsize::new(0);
/// 425s sent (`/too-early`).
pub static TOO_EARLY: AtomicUsize = AtomicUsize::new(0);

/// rustls' session store, counting resumptions, or resuming none (`reject`).
#[derive(Debug)]
pub struct Sessions {
    inner: Arc<dyn StoresServerSessions>,
    reject: bool,
}

impl Sessions {
    pub fn new(reject: bool) -> Arc<Sessions> {
        Arc::new(Sessions { inner: rustls::server::ServerSessionMemoryCache::new(256), reject })
    }

    fn found(&self, v: Option<Vec<u8>>) -> Option<Vec<u8>> {
        if v.is_some() {
            let count = if self.reject { &REFUSED } else { &RESUMED };
            count.fetch_add(1, Ordering::Relaxed);
        }
        v.filter(|_| !self.reject)
    }
}

impl StoresServerSessions for Sessions {
    fn put(&self, key: Vec<u8>, value: Vec<u8>) -> bool {
        self.inner.put(key, value)
    }
    fn get(&self, key: &[u8]) -> Option<Vec<u8>> {
        self.found(self.inner.get(key))
    }
    fn take(&self, key: &[u8]) -> Option<Vec<u8>> {
        self.found(self.inner.take(key))
    }
    fn can_cache(&self) -> bool {
        self.inner.can_cache()
    }
}

static ACCEPT_DELAY_MS: AtomicU64 = AtomicU64::new(0);

/// `--accept-delay MS`.
pub fn delay_accepts(ms: u64) {
    ACCEPT_DELAY_MS.store(ms, Ordering::Relaxed);
}

/// Waits before a new connection's handshake starts: meanwhile quinn keeps the client's packets,
/// so its early data is taken with its ClientHello, before the server answers. On loopback the
/// handshake could otherwise complete before a client has written its early requests (a network's
/// round trip gives it that time).
pub async fn accept_delay() {
    let ms = ACCEPT_DELAY_MS.load(Ordering::Relaxed);
    if ms > 0 {
        tokio::time::sleep(Duration::from_millis(ms)).await;
    }
}

/// Whether the handshake is still going on: a request stream the client opened by now came in
/// early data. rustls exports keying material only once the client's Finished has arrived.
pub fn handshaking(conn: &quinn::Connection) -> bool {
    conn.export_keying_material(&mut [0u8; 1], b"ferro early data probe", b"").is_err()
}
