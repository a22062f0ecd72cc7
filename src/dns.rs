//! `NativeResolver`: the engine's process-wide DNS cache and resolver (crates/engine/src/dns) for
//! the dns interceptor. `lookup` returns at once; results come back in batches through one
//! long-lived threadsafe function (DESIGN §2), never a Promise per lookup.
use crate::queue::Queue;
use ferro_engine::dns::{resolver, LookupError};
use ferro_engine::EventSink;
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

/// Appends one result: `id: u32 LE, ok: u8`, then for ok `count: u16 LE` and per address
/// `family: u8 (4|6), len: u8, text`; otherwise `code_len: u8, code, message_len: u16 LE, message`.
fn pack(
    out: &mut Vec<u8>,
    id: u32,
    result: &std::result::Result<Vec<IpAddr>, LookupError>,
    family: u32,
) {
    out.extend_from_slice(&id.to_le_bytes());
    match result {
        Ok(addrs) => {
            out.push(1);
            let keep: Vec<&IpAddr> = addrs
                .iter()
                .filter(|a| {
                    family == 0 || (family == 4 && a.is_ipv4()) || (family == 6 && a.is_ipv6())
                })
                .take(u16::MAX as usize)
                .collect();
            out.extend_from_slice(&(keep.len() as u16).to_le_bytes());
            for a in keep {
                let text = a.to_string();
                out.push(if a.is_ipv4() { 4 } else { 6 });
                out.push(text.len() as u8);
                out.extend_from_slice(text.as_bytes());
            }
        }
        Err(e) => {
            out.push(0);
            out.push(e.code.len() as u8);
            out.extend_from_slice(e.code.as_bytes());
            let msg = &e.message.as_bytes()[..e.message.len().min(u16::MAX as usize)];
            out.extend_from_slice(&(msg.len() as u16).to_le_bytes());
            out.extend_from_slice(msg);
        }
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
            if queue.write(&mut |out| pack(&mut out.bytes, id, &r, family)) {
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
