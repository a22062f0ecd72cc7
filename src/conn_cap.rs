//! `NativeConnCap`: an Agent's `maxGlobalConnections`, shared by the pools it creates. JS passes
//! the cap's id in each pool's config (`PoolConfig::cap`); pools hold the cap itself, so it lives
//! as long as any of them.
use ferro_engine::cap::ConnCap;
use napi_derive::napi;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::{Arc, Weak};

static CAPS: Mutex<Option<HashMap<u32, Weak<ConnCap>>>> = Mutex::new(None);
static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(1);

/// The cap JS named by `id`, while its `NativeConnCap` or a pool holds it.
pub(crate) fn lookup(id: u32) -> Option<Arc<ConnCap>> {
    CAPS.lock().as_ref()?.get(&id)?.upgrade()
}

#[napi]
pub struct NativeConnCap {
    cap: Arc<ConnCap>,
    id: u32,
}

#[napi]
impl NativeConnCap {
    #[napi(constructor, catch_unwind)]
    pub fn new(limit: u32) -> Self {
        let cap = ConnCap::new(limit as usize);
        let id = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let mut caps = CAPS.lock();
        let caps = caps.get_or_insert_with(HashMap::new);
        caps.retain(|_, c| c.strong_count() > 0);
        caps.insert(id, Arc::downgrade(&cap));
        NativeConnCap { cap, id }
    }

    #[napi(getter)]
    pub fn id(&self) -> u32 {
        self.id
    }

    /// Connections open or connecting under the cap.
    #[napi(getter)]
    pub fn open(&self) -> u32 {
        self.cap.open() as u32
    }

    /// Pools waiting for a slot.
    #[napi(getter)]
    pub fn waiting(&self) -> u32 {
        self.cap.waiting() as u32
    }
}
