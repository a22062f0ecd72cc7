//! `NativeResolver`: the engine's process-wide DNS cache and resolver (crates/engine/src/dns) for
//! the dns interceptor. `lookup` returns at once; results come back in batches through one
//! long-lived threadsafe function (DESIGN §2), never a Promise per lookup.
use crate::queue::Queue;
use ferro_engine::dns::{resolver, LookupError};
use ferro_engine::events::Writer;
use ferro_engine::{Batch, EventSink};
use napi::bindgen_prelude::*;
use napi::JsValue;
use napi_derive::napi;
use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

#[napi]
pub struct NativeResolver {
    queue: Arc<Queue>,
}

/// Appends one result as a frame (format: `ferro_engine::events`, DNS_ADDRESSES / DNS_ERROR),
/// keeping only the addresses of `family` (0: both).
fn pack(
    out: &mut Batch,
    id: u32,
    result: &std::result::Result<Vec<IpAddr>, LookupError>,
    family: u32,
) {
    let mut w = Writer::new(out);
    match result {
        Ok(addrs) => w.dns_addresses(
            id,
            addrs.iter().filter(|a| {
                family == 0 || (family == 4 && a.is_ipv4()) || (family == 6 && a.is_ipv6())
            }),
        ),
        Err(e) => w.dns_error(id, e.code, &e.message),
    }
}

#[napi]
impl NativeResolver {
    /// `onResults(batch: Buffer)` runs on the JS thread with every result queued since the last call.
    #[napi(constructor, catch_unwind)]
    pub fn new(env: Env, on_results: Function<'_>) -> Result<Self> {
        Ok(NativeResolver { queue: Queue::new(env.raw(), on_results.raw())? })
    }

    /// Looks `hostname` up (cache first, records at most `max_age_ms` old); `family` 0, 4 or 6
    /// filters the addresses reported. The result arrives under `id`.
    #[napi(catch_unwind)]
    pub fn lookup(&self, id: u32, hostname: String, family: u32, max_age_ms: f64) {
        let queue = self.queue.clone();
        let max_age = Duration::from_millis(max_age_ms.max(0.0) as u64);
        resolver().resolve_with(hostname, max_age, move |r| {
            if queue.write(&mut |out| pack(out, id, &r, family)) {
                queue.signal();
            }
        });
    }

    /// Lookups that reached the system resolver in this process (cache misses).
    #[napi(catch_unwind)]
    pub fn misses(&self) -> f64 {
        resolver().misses() as f64
    }

    /// Keeps the process alive while lookups are pending.
    #[napi(js_name = "ref", catch_unwind)]
    pub fn ref_(&self, env: Env) -> Result<()> {
        self.queue.set_ref(env.raw(), true)
    }

    #[napi(catch_unwind)]
    pub fn unref(&self, env: Env) -> Result<()> {
        self.queue.set_ref(env.raw(), false)
    }
}
