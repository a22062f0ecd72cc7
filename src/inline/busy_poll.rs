//! The inline driver's wait for a reply awake (policy: `ferro_engine::driver::busy_poll`). A
//! `uv_prepare_t` runs just before libuv computes how long to sleep: while this engine has
//! requests in flight it polls the loop's own epoll descriptor (readable once anything the loop
//! watches has an event, the engine's reactor included) for up to the policy's wait, so a reply
//! that lands within it is read without the sleep and the wake-up from another CPU. The loop's
//! next timer bounds the wait, and anything else the loop watches ends it as well.
use super::{alloc_handle, free_handle, readable, state_of, UvHandle, UvLoop};
use ferro_engine::driver::BusyPoll;
use std::cell::Cell;
use std::time::{Duration, Instant};

extern "C" {
    fn uv_prepare_init(lp: *mut UvLoop, h: *mut UvHandle) -> i32;
    fn uv_prepare_start(h: *mut UvHandle, cb: unsafe extern "C" fn(*mut UvHandle)) -> i32;
    fn uv_backend_fd(lp: *const UvLoop) -> i32;
    fn uv_backend_timeout(lp: *const UvLoop) -> i32;
}
pub(super) const UV_PREPARE: i32 = 9;

/// A prepare handle initialised on `lp`, not yet started; None when `budget` is zero (nothing to
/// wait for) or libuv refused it (the loop then just sleeps, as it would without one).
///
/// # Safety
/// On the thread of `lp`, a live loop.
pub(super) unsafe fn init(lp: *mut UvLoop, budget: Duration) -> Option<*mut UvHandle> {
    if budget.is_zero() {
        return None;
    }
    let h = alloc_handle(UV_PREPARE)?;
    // SAFETY: per the contract; `h` is a zeroed allocation of the prepare handle's size.
    if unsafe { uv_prepare_init(lp, h) } != 0 {
        // SAFETY: a failed init leaves `h` unknown to libuv.
        unsafe { free_handle(h, UV_PREPARE) };
        return None;
    }
    Some(h)
}

/// Starts `h` (from `init`, its data set to the State).
///
/// # Safety
/// `h` is initialised on the JS thread's loop and holds a State count in its data slot.
pub(super) unsafe fn start(h: *mut UvHandle) {
    // SAFETY: per the contract; `on_prepare` has the signature libuv calls. It fails only for a
    // null callback.
    unsafe { uv_prepare_start(h, on_prepare) };
}

unsafe extern "C" fn on_prepare(h: *mut UvHandle) {
    // SAFETY: libuv calls this only for the prepare handle `start` set up, before its close
    // callback.
    let s = unsafe { state_of(h) };
    // Referenced: JS has requests in flight on this engine (`set_ref`); an idle engine never waits.
    if s.closing.get() || !s.referenced.get() {
        return;
    }
    wait(s.lp, &s.busy);
}

/// One wait, if the policy gives one: until the loop has an event or the wait runs out.
fn wait(lp: *mut UvLoop, policy: &Cell<BusyPoll>) {
    // SAFETY: `lp` is the live loop this prepare callback runs on; both calls only read it.
    let (timeout, fd) = unsafe { (uv_backend_timeout(lp), uv_backend_fd(lp)) };
    // -1: no timer; 0: the loop will not sleep (immediates, pending callbacks).
    let limit = u64::try_from(timeout).ok().map(Duration::from_millis);
    let mut p = policy.get();
    if let Some(budget) = p.start(limit) {
        let since = Instant::now();
        let woke = loop {
            if readable(fd) {
                break true;
            }
            if since.elapsed() >= budget {
                break false;
            }
            std::hint::spin_loop();
        };
        p.end(woke);
    }
    policy.set(p);
}
