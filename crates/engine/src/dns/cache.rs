//! The process-wide resolver: `getaddrinfo` on a blocking thread, results cached per host name.
//! The system resolver reports no TTLs, so entries live for the engine's TTL, or shorter when a
//! caller asks for fresher records (`max_age`).
use parking_lot::Mutex;
use std::collections::HashMap;
use std::io;
use std::net::{IpAddr, ToSocketAddrs};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// How long a lookup is reused when the caller does not say (the dns interceptor's default maxTTL).
pub const DEFAULT_TTL: Duration = Duration::from_secs(10);

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LookupError {
    /// As Node names it: `ENOTFOUND`, `EAI_AGAIN`, ...
    pub code: &'static str,
    pub message: String,
}

impl LookupError {
    fn from_io(host: &str, e: &io::Error) -> LookupError {
        let text = e.to_string();
        let code = if text.contains("emporary failure") || text.contains("try again") {
            "EAI_AGAIN"
        } else {
            "ENOTFOUND"
        };
        LookupError { code, message: format!("getaddrinfo {code} {host}") }
    }
}

impl std::fmt::Display for LookupError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for LookupError {}

struct Entry {
    addrs: Vec<IpAddr>,
    at: Instant,
}

pub struct Resolver {
    cache: Mutex<HashMap<String, Entry>>,
    /// Lookups that went to the system resolver (for tests and stats).
    misses: std::sync::atomic::AtomicU64,
}

/// The resolver shared by every engine of the process.
pub fn resolver() -> &'static Resolver {
    static R: OnceLock<Resolver> = OnceLock::new();
    R.get_or_init(Resolver::new)
}

impl Default for Resolver {
    fn default() -> Self {
        Self::new()
    }
}

impl Resolver {
    pub fn new() -> Resolver {
        Resolver { cache: Mutex::new(HashMap::new()), misses: Default::default() }
    }

    /// Cached addresses of `host` no older than `max_age`.
    pub fn cached(&self, host: &str, max_age: Duration) -> Option<Vec<IpAddr>> {
        let cache = self.cache.lock();
        let e = cache.get(host)?;
        (e.at.elapsed() < max_age).then(|| e.addrs.clone())
    }

    /// Lookups that reached the system resolver so far.
    pub fn misses(&self) -> u64 {
        self.misses.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Cached or fresh addresses of `host`, in the system's order with failed ones moved back.
    /// Blocks: call it off the JS thread and off the reactor (see `resolve`).
    pub fn resolve_blocking(
        &self,
        host: &str,
        max_age: Duration,
    ) -> Result<Vec<IpAddr>, LookupError> {
        if let Some(a) = self.cached(host, max_age) {
            return Ok(a);
        }
        self.misses.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let mut addrs: Vec<IpAddr> = Vec::new();
        let found = (host, 0u16).to_socket_addrs().map_err(|e| LookupError::from_io(host, &e))?;
        for a in found {
            if !addrs.contains(&a.ip()) {
                addrs.push(a.ip());
            }
        }
        if addrs.is_empty() {
            return Err(LookupError {
                code: "ENOTFOUND",
                message: format!("getaddrinfo ENOTFOUND {host}"),
            });
        }
        self.store(host, addrs.clone());
        Ok(addrs)
    }

    /// `resolve_blocking` on the runtime's blocking pool.
    pub async fn resolve(
        &'static self,
        host: &str,
        max_age: Duration,
    ) -> Result<Vec<IpAddr>, LookupError> {
        if let Some(a) = self.cached(host, max_age) {
            return Ok(a);
        }
        let h = host.to_owned();
        tokio::task::spawn_blocking(move || self.resolve_blocking(&h, max_age))
            .await
            .unwrap_or_else(|_| {
                Err(LookupError {
                    code: "ENOTFOUND",
                    message: format!("getaddrinfo ENOTFOUND {host}"),
                })
            })
    }

    /// Resolves on a thread of its own and hands the result to `done` there (for callers with no
    /// runtime, such as the JS binding). A cache hit answers at once on the calling thread.
    pub fn resolve_with(
        &'static self,
        host: String,
        max_age: Duration,
        done: impl FnOnce(Result<Vec<IpAddr>, LookupError>) + Send + 'static,
    ) {
        if let Some(a) = self.cached(&host, max_age) {
            return done(Ok(a));
        }
        // Shared so the caller still hears back if no thread can be started.
        let slot = std::sync::Arc::new(Mutex::new(Some(done)));
        let theirs = slot.clone();
        let h = host.clone();
        let spawned = std::thread::Builder::new().name("ferro-dns".into()).spawn(move || {
            let r = self.resolve_blocking(&h, max_age);
            if let Some(done) = theirs.lock().take() {
                done(r);
            }
        });
        if let Err(e) = spawned {
            if let Some(done) = slot.lock().take() {
                done(Err(LookupError {
                    code: "EAI_AGAIN",
                    message: format!("getaddrinfo EAI_AGAIN {host}: {e}"),
                }));
            }
        }
    }

    pub fn store(&self, host: &str, addrs: Vec<IpAddr>) {
        self.cache.lock().insert(host.to_owned(), Entry { addrs, at: Instant::now() });
    }

    pub fn forget(&self, host: &str) {
        self.cache.lock().remove(host);
    }

    /// A connect to `addr` failed: later connects try the host's other addresses first.
    pub fn report_failure(&self, host: &str, addr: IpAddr) {
        if let Some(e) = self.cache.lock().get_mut(host) {
            if let Some(i) = e.addrs.iter().position(|a| *a == addr) {
                let a = e.addrs.remove(i);
                e.addrs.push(a);
            }
        }
    }
}
