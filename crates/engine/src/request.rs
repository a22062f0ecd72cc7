//! A request as the engine holds it, and the control block shared with the JS thread.
use parking_lot::Mutex;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;
use std::task::Waker;
use std::time::Duration;

/// Request flags, set by the JS side at dispatch.
pub mod flags {
    pub const IDEMPOTENT: u32 = 1;
    /// No further pipelining on the connection until this request's headers arrived.
    pub const BLOCKING: u32 = 2;
    /// Send `connection: close` and close the connection after the response.
    pub const RESET: u32 = 4;
    pub const UPGRADE: u32 = 8;
}

pub struct Request {
    pub id: u32,
    /// "METHOD\0PATH\0name\0value\0…" — encoded into HTTP/1.1 bytes on the engine thread.
    pub head: String,
    pub body: Option<Vec<u8>>,
    pub flags: u32,
    pub headers_timeout: Option<Duration>,
    pub body_timeout: Option<Duration>,
    pub ctl: Arc<ReqCtl>,
    /// How many times the request went back to the queue after its connection failed.
    pub retries: u8,
}

impl Request {
    pub fn has(&self, flag: u32) -> bool {
        self.flags & flag != 0
    }
}

const PAUSED: u8 = 1;
const ABORTED: u8 = 2;

/// Pause / resume / abort requests from JS reach the connection task through this block: a flag
/// plus the waker of the task that owns the request.
#[derive(Default)]
pub struct ReqCtl {
    state: AtomicU8,
    waker: Mutex<Option<Waker>>,
}

impl ReqCtl {
    pub fn paused(&self) -> bool {
        self.state.load(Ordering::Acquire) & PAUSED != 0
    }
    pub fn aborted(&self) -> bool {
        self.state.load(Ordering::Acquire) & ABORTED != 0
    }
    pub fn pause(&self) {
        self.state.fetch_or(PAUSED, Ordering::AcqRel);
    }
    pub fn resume(&self) {
        self.state.fetch_and(!PAUSED, Ordering::AcqRel);
        self.wake();
    }
    pub fn abort(&self) {
        self.state.fetch_or(ABORTED, Ordering::AcqRel);
        self.wake();
    }
    /// Called by the owning task; a task's waker is stable, so once per request is enough.
    pub fn set_waker(&self, w: &Waker) {
        let mut g = self.waker.lock();
        match &*g {
            Some(old) if old.will_wake(w) => {}
            _ => *g = Some(w.clone()),
        }
    }
    fn wake(&self) {
        if let Some(w) = self.waker.lock().as_ref() {
            w.wake_by_ref();
        }
    }
}
