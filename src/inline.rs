//! The inline driver's event-loop side (Linux; issue 20): the engine's current-thread runtime is
//! ticked on the JS thread from libuv. A `uv_poll_t` watches the runtime's epoll descriptor (an
//! epoll descriptor is itself pollable: readable while it has events), a `uv_timer_t` is armed
//! for the earliest deadline an engine task waits on, and each tick's events go to JS straight
//! from the uv callback (`napi_make_callback`, which then runs nextTicks and microtasks). A tick
//! made inside a call from JS (`flush`) never calls back into JS: its events hop to a later turn.
mod busy_poll;
mod deliver;

use crate::queue::Queue;
use deliver::{deliver, Js};
use ferro_engine::driver::{BusyPoll, Inline};
use ferro_engine::{Engine, EventSink};
use napi::sys;
use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::cell::Cell;
use std::collections::HashSet;
use std::ffi::c_void;
use std::ptr;
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, Instant};

type UvHandle = c_void;
type UvLoop = sys::uv_loop_s;
// libuv as exported by the node binary (resolved when the addon loads).
extern "C" {
    fn uv_handle_size(kind: i32) -> usize;
    fn uv_poll_init(lp: *mut UvLoop, h: *mut UvHandle, fd: i32) -> i32;
    fn uv_poll_start(
        h: *mut UvHandle,
        events: i32,
        cb: unsafe extern "C" fn(*mut UvHandle, i32, i32),
    ) -> i32;
    fn uv_timer_init(lp: *mut UvLoop, h: *mut UvHandle) -> i32;
    fn uv_timer_start(
        h: *mut UvHandle,
        cb: unsafe extern "C" fn(*mut UvHandle),
        timeout: u64,
        repeat: u64,
    ) -> i32;
    fn uv_timer_stop(h: *mut UvHandle) -> i32;
    fn uv_ref(h: *mut UvHandle);
    fn uv_unref(h: *mut UvHandle);
    fn uv_close(h: *mut UvHandle, cb: unsafe extern "C" fn(*mut UvHandle));
    fn poll(fds: *mut PollFd, nfds: u64, timeout: i32) -> i32;
}
const UV_POLL: i32 = 8;
const UV_TIMER: i32 = 13;
const UV_READABLE: i32 = 1;

#[repr(C)]
struct PollFd {
    fd: i32,
    events: i16,
    revents: i16,
}
const POLLIN: i16 = 1;

/// Most tick-and-deliver rounds one loop callback makes before leaving the rest to the next
/// loop turn (a zero timer), so I/O and timers of Node itself are not starved.
const MAX_ROUNDS: usize = 8;

struct State {
    env: sys::napi_env,
    engine: Arc<Engine>,
    queue: Arc<Queue>,
    callback: sys::napi_ref,
    async_ctx: sys::napi_async_context,
    lp: *mut UvLoop,
    poll: *mut UvHandle,
    timer: *mut UvHandle,
    /// The busy-poll handle (`inline/busy_poll.rs`), null without one.
    prepare: Cell<*mut UvHandle>,
    busy: Cell<BusyPoll>,
    /// The timer's deadline (None: stopped).
    armed: Cell<Option<Instant>>,
    referenced: Cell<bool>,
    closing: Cell<bool>,
    /// Handles not yet closed.
    open: Cell<u8>,
    /// Inside a loop callback's delivery: ticks from JS leave their events to it.
    delivering: Cell<bool>,
    cleanup: Cell<sys::napi_async_cleanup_hook_handle>,
}

/// The inline driver of one JS environment's engine. All on the JS thread.
pub(crate) struct InlineLoop {
    state: Rc<State>,
}

// How the runtime's epoll descriptor is found: tokio exposes no descriptor for its I/O driver
// (tokio-rs/tokio#7348 asks for one), so `start` diffs the epoll descriptors in /proc/self/fd
// before and after building the runtime and keeps the one whose readiness follows the runtime's
// wakes (`verify`). The tests below pin that on the tokio version in Cargo.lock: a tokio that
// stops using one epoll descriptor per current-thread runtime fails them by name, instead of
// every inline engine silently falling back to the threaded driver.
fn epoll_fds() -> HashSet<i32> {
    let Ok(dir) = std::fs::read_dir("/proc/self/fd") else { return HashSet::new() };
    dir.filter_map(|e| {
        let e = e.ok()?;
        let target = std::fs::read_link(e.path()).ok()?;
        (target.as_os_str() == "anon_inode:[eventpoll]")
            .then(|| e.file_name().to_str()?.parse().ok())?
    })
    .collect()
}

fn readable(fd: i32) -> bool {
    let mut p = PollFd { fd, events: POLLIN, revents: 0 };
    // SAFETY: `p` is one live, writable `pollfd` (repr(C), the libc layout) and nfds is 1; a zero
    // timeout never blocks. A closed `fd` only yields POLLNVAL, which is not POLLIN.
    unsafe { poll(&mut p, 1, 0) == 1 && p.revents & POLLIN != 0 }
}

/// The runtime's epoll descriptor among `candidates`: quiet after a tick, readable once the
/// runtime is woken from outside, quiet again after the next tick.
fn verify(inline: &Inline, candidates: &HashSet<i32>) -> Option<i32> {
    candidates.iter().copied().find(|&fd| {
        inline.tick(true);
        if readable(fd) {
            return false;
        }
        inline.wake_from_outside();
        let woke = readable(fd);
        inline.tick(true);
        woke && !readable(fd)
    })
}

/// The layout of a libuv handle of `kind`: its size as this libuv reports it, aligned for any
/// field libuv puts in it.
fn handle_layout(kind: i32) -> Layout {
    // SAFETY: uv_handle_size only reads a table; UV_POLL and UV_TIMER are valid handle kinds.
    let size = unsafe { uv_handle_size(kind) };
    Layout::from_size_align(size, 16).expect("layout")
}

/// An inline engine and its runtime's epoll descriptor.
fn build_engine(sink: Arc<dyn EventSink>) -> Result<(Engine, i32), String> {
    let before = epoll_fds();
    let engine = Engine::new_inline(sink).map_err(|e| format!("cannot build the runtime: {e}"))?;
    let inline = engine.inline().expect("inline engine");
    let fresh: HashSet<i32> = epoll_fds().difference(&before).copied().collect();
    let fd = verify(inline, &fresh).ok_or_else(|| {
        format!("the runtime's epoll descriptor was not found ({} candidates)", fresh.len())
    })?;
    Ok((engine, fd))
}

/// Zeroed memory for a libuv handle of `kind`, or None when the allocator has none.
fn alloc_handle(kind: i32) -> Option<*mut UvHandle> {
    let layout = handle_layout(kind);
    // SAFETY: `layout` has a non-zero size (every libuv handle has fields).
    let h = unsafe { alloc_zeroed(layout) };
    (!h.is_null()).then_some(h.cast())
}

/// # Safety
/// `h` came from `alloc_handle(kind)` and libuv no longer knows it (never initialised, or its
/// close callback is running).
unsafe fn free_handle(h: *mut UvHandle, kind: i32) {
    // SAFETY: per the contract, `h` was allocated with this very layout and is not used again.
    unsafe { dealloc(h.cast(), handle_layout(kind)) };
}

/// `uv_handle_t.data` is the handle's first field.
///
/// # Safety
/// `h` is a live handle from `alloc_handle`.
unsafe fn set_data(h: *mut UvHandle, data: *const State) {
    // SAFETY: `h` points to at least a `uv_handle_t`, whose first field is the `void* data` slot,
    // and the allocation is 16-aligned, so the pointer-sized write is in bounds and aligned.
    unsafe { *(h as *mut *const State) = data };
}

/// # Safety
/// `h` is a handle whose data `start` set to an `Rc<State>` it still owns (released only by the
/// handle's close callback, which runs after every other callback of the handle).
unsafe fn state_of<'a>(h: *mut UvHandle) -> &'a State {
    // SAFETY: per the contract the data slot holds a live `Rc<State>` pointer, so the State
    // outlives this callback; it is only read through shared references (Cells inside).
    unsafe { &**(h as *mut *const State) }
}

impl InlineLoop {
    /// An inline engine and its driver, or why not (the caller falls back to a threaded engine).
    pub(crate) fn start(
        env: sys::napi_env,
        queue: &Arc<Queue>,
        callback: sys::napi_value,
        busy_poll: Duration,
    ) -> Result<(Arc<Engine>, InlineLoop), String> {
        let (engine, fd) = build_engine(queue.clone())?;
        let engine = Arc::new(engine);

        let (mut lp, mut callback_ref, mut name, mut async_ctx) =
            (ptr::null_mut(), ptr::null_mut(), ptr::null_mut(), ptr::null_mut());
        let label = "ferro.events";
        // SAFETY: `start` runs on the JS thread inside a call from JS, so `env` is live and
        // `callback` is a value of its current handle scope; each out-pointer is a local, and
        // `label` outlives the call that copies it.
        unsafe {
            ok(sys::napi_get_uv_event_loop(env, &mut lp), "napi_get_uv_event_loop")?;
            ok(
                sys::napi_create_reference(env, callback, 1, &mut callback_ref),
                "napi_create_reference",
            )?;
            ok(
                sys::napi_create_string_utf8(
                    env,
                    label.as_ptr().cast(),
                    label.len() as isize,
                    &mut name,
                ),
                "napi_create_string_utf8",
            )?;
            ok(
                sys::napi_async_init(env, ptr::null_mut(), name, &mut async_ctx),
                "napi_async_init",
            )?;
        }
        if lp.is_null() {
            return Err("napi_get_uv_event_loop gave no loop".into());
        }

        let (poll_h, timer_h) = match (alloc_handle(UV_POLL), alloc_handle(UV_TIMER)) {
            (Some(p), Some(t)) => (p, t),
            (p, t) => {
                if let Some(h) = p {
                    // SAFETY: fresh from alloc_handle(UV_POLL), never given to libuv.
                    unsafe { free_handle(h, UV_POLL) };
                }
                if let Some(h) = t {
                    // SAFETY: fresh from alloc_handle(UV_TIMER), never given to libuv.
                    unsafe { free_handle(h, UV_TIMER) };
                }
                return Err("out of memory for the loop handles".into());
            }
        };
        let state = Rc::new(State {
            env,
            engine: engine.clone(),
            queue: queue.clone(),
            callback: callback_ref,
            async_ctx,
            lp,
            poll: poll_h,
            timer: timer_h,
            prepare: Cell::new(ptr::null_mut()),
            busy: Cell::new(BusyPoll::new(busy_poll)),
            armed: Cell::new(None),
            referenced: Cell::new(false),
            closing: Cell::new(false),
            open: Cell::new(0),
            delivering: Cell::new(false),
            cleanup: Cell::new(ptr::null_mut()),
        });
        // Each handle holds one strong count, released by its close callback.
        // SAFETY: `lp` is this environment's live loop and we are on its thread; both handles are
        // zeroed allocations of their kind's size, not yet known to libuv.
        let (poll_init, timer_init) =
            unsafe { (uv_poll_init(lp, poll_h, fd), uv_timer_init(lp, timer_h)) };
        if poll_init != 0 || timer_init != 0 {
            // SAFETY: an init that failed left its handle unknown to libuv; one that succeeded
            // holds no state pointer yet, so it is closed with a callback that only frees it.
            unsafe {
                if poll_init == 0 {
                    uv_close(poll_h, on_unused_poll_closed);
                } else {
                    free_handle(poll_h, UV_POLL);
                }
                if timer_init == 0 {
                    uv_close(timer_h, on_unused_timer_closed);
                } else {
                    free_handle(timer_h, UV_TIMER);
                }
            }
            return Err(format!("libuv refused the loop handles (uv_poll_init {poll_init}, uv_timer_init {timer_init})"));
        }
        // SAFETY: on the loop's thread, `lp` live (see above).
        let prepare_h = unsafe { busy_poll::init(lp, busy_poll) };
        // SAFETY: the handles are initialised on this loop; each data slot takes one strong count
        // that its close callback (`closed`) gives back, and `open` counts those callbacks. The
        // callbacks are `extern "C"` functions of the signatures libuv calls.
        let started = unsafe {
            set_data(poll_h, Rc::into_raw(state.clone()));
            set_data(timer_h, Rc::into_raw(state.clone()));
            state.open.set(2);
            // Idle until JS has requests in flight (`set_ref`).
            uv_unref(poll_h);
            uv_unref(timer_h);
            if let Some(h) = prepare_h {
                set_data(h, Rc::into_raw(state.clone()));
                state.open.set(3);
                state.prepare.set(h);
                // Never what keeps the process alive: it only runs while the loop does.
                uv_unref(h);
                busy_poll::start(h);
            }
            uv_poll_start(poll_h, UV_READABLE, on_readable)
        };
        if started != 0 {
            close(&state);
            return Err(format!(
                "uv_poll_start failed on the runtime's epoll descriptor ({started})"
            ));
        }
        let mut cleanup = ptr::null_mut();
        let arg = Rc::as_ptr(&state) as *mut c_void;
        // SAFETY: `env` is live (see above); `arg` points to the State, which lives until both
        // handles are closed, and the hook is removed in `closed` once they are, or runs first.
        // Without the hook (a failed status) the engine is only closed by JS, as before.
        if unsafe { sys::napi_add_async_cleanup_hook(env, Some(on_env_cleanup), arg, &mut cleanup) }
            == sys::Status::napi_ok
        {
            state.cleanup.set(cleanup);
        }
        queue.set_inline();
        Ok((engine, InlineLoop { state }))
    }

    /// Runs the engine now from a call JS made (so queued requests go out in this JS turn); its
    /// events are delivered after the call returns, never from inside it. A call made while JS
    /// handles a delivery leaves the tick to `run`, which ticks right after the delivery returns:
    /// one tick (one reactor poll) for both.
    pub(crate) fn tick_from_js(&self) {
        let s = &*self.state;
        if s.closing.get() || s.delivering.get() {
            return;
        }
        // Only the tasks JS just woke: what a reactor poll found now could only be delivered on a
        // later turn, which the loop's own poll of the descriptor gives anyway.
        let more = inline(s).tick(false);
        s.queue.hop();
        arm(s, more);
    }

    /// Keeps the process alive (requests in flight) or not (idle).
    pub(crate) fn set_ref(&self, on: bool) {
        let s = &*self.state;
        if s.closing.get() || s.referenced.replace(on) == on {
            return;
        }
        // SAFETY: on the JS thread, and not closing, so both handles are initialised and open.
        unsafe {
            if on {
                uv_ref(s.poll);
                uv_ref(s.timer);
            } else {
                uv_unref(s.poll);
                uv_unref(s.timer);
            }
        }
    }

    /// The busy-poll waits made so far and how many the loop woke from in time (None: off).
    pub(crate) fn busy_poll_counts(&self) -> Option<(u64, u64)> {
        let s = &*self.state;
        (!s.prepare.get().is_null()).then(|| s.busy.get().counts())
    }

    /// Closes the loop handles; the engine is not driven any more.
    pub(crate) fn close(&self) {
        close(&self.state);
    }
}

fn inline(s: &State) -> &Inline {
    s.engine.inline().expect("inline engine")
}

fn ok(status: sys::napi_status, what: &str) -> Result<(), String> {
    if status == sys::Status::napi_ok {
        Ok(())
    } else {
        Err(format!("{what} failed with status {status}"))
    }
}

fn close(s: &State) {
    if s.closing.replace(true) {
        return;
    }
    // SAFETY: `closing` was false, so the handles are open and closed exactly once, here; their
    // close callbacks release the State counts and free the memory.
    unsafe {
        uv_close(s.poll, on_poll_closed);
        uv_close(s.timer, on_timer_closed);
        let prepare = s.prepare.get();
        if !prepare.is_null() {
            uv_close(prepare, on_prepare_closed);
        }
    }
}

unsafe extern "C" fn on_readable(h: *mut UvHandle, _status: i32, _events: i32) {
    // SAFETY: libuv calls this only for the poll handle `start` set up, before its close callback.
    run(unsafe { state_of(h) });
}

unsafe extern "C" fn on_timer(h: *mut UvHandle) {
    // SAFETY: libuv calls this only for the timer handle `start` set up, before its close callback.
    let s = unsafe { state_of(h) };
    s.armed.set(None);
    run(s);
}

/// One loop callback: tick, hand the events to JS, repeat while work is left, all in one
/// `block_on` (`Inline::ticks`). Each tick runs what JS's handling of the last events queued, then
/// polls the reactor: a response already back is handled in this callback, without another turn
/// of the loop.
fn run(s: &State) {
    if s.closing.get() {
        return;
    }
    // The deliveries' handle scope: opened for the first, closed when this callback returns, or
    // after a delivery that handed JS buffers of their own (a large batch, a body's blobs): the
    // scope keeps what it handed alive, and a large body's chunks must not outlive their use.
    let mut js = None;
    let more = inline(s).ticks(MAX_ROUNDS, |more| {
        if !s.queue.is_empty() {
            if js.is_none() {
                // SAFETY: a libuv callback on the JS thread, with no handle scope open yet.
                js = unsafe { Js::open(s) };
            }
            // None: the environment is tearing down; the queue keeps the events.
            if let Some(open) = &js {
                if deliver(s, open) {
                    js = None;
                }
            }
        } else if !more {
            return false;
        }
        !s.closing.get()
    });
    if !s.closing.get() {
        // Events left by the last round, or a flush from JS during its delivery, need another turn.
        arm(s, more || !s.queue.is_empty() || inline(s).has_deferred());
    }
}

/// Arms the loop timer: at once when work is left over, else for the earliest engine deadline.
fn arm(s: &State, more: bool) {
    let now = Instant::now();
    let due = if more { Some(now) } else { inline(s).next_deadline().map(|d| d.into_std()) };
    if due == s.armed.get() {
        return;
    }
    s.armed.set(due);
    // SAFETY: every caller checked `closing` first on the JS thread, so the timer is open;
    // `on_timer` has the signature libuv calls. Both calls return 0 on an initialised timer.
    unsafe {
        match due {
            // +1 ms: libuv counts whole milliseconds from a cached loop time and tokio rounds
            // deadlines up to its next millisecond; firing early only costs an empty tick.
            Some(at) => {
                let ms = if more {
                    0
                } else {
                    at.saturating_duration_since(now).as_micros().div_ceil(1000) as u64 + 1
                };
                uv_timer_start(s.timer, on_timer, ms, 0);
            }
            None => {
                uv_timer_stop(s.timer);
            }
        }
    }
}

unsafe extern "C" fn on_env_cleanup(handle: sys::napi_async_cleanup_hook_handle, arg: *mut c_void) {
    // SAFETY: `arg` is the State registered in `start`; the hook is removed before the last
    // handle closes (`closed`), so while it can run the handles' counts keep the State alive.
    let s = unsafe { &*(arg as *const State) };
    s.cleanup.set(handle);
    close(s);
}

unsafe extern "C" fn on_poll_closed(h: *mut UvHandle) {
    // SAFETY: libuv's close callback of the poll handle `start` gave a State count.
    unsafe { closed(h, UV_POLL) };
}
unsafe extern "C" fn on_timer_closed(h: *mut UvHandle) {
    // SAFETY: libuv's close callback of the timer handle `start` gave a State count.
    unsafe { closed(h, UV_TIMER) };
}
unsafe extern "C" fn on_prepare_closed(h: *mut UvHandle) {
    // SAFETY: libuv's close callback of the prepare handle `start` gave a State count.
    unsafe { closed(h, busy_poll::UV_PREPARE) };
}
unsafe extern "C" fn on_unused_poll_closed(h: *mut UvHandle) {
    // SAFETY: libuv is done with the handle (its close callback) and it holds no State count.
    unsafe { free_handle(h, UV_POLL) };
}
unsafe extern "C" fn on_unused_timer_closed(h: *mut UvHandle) {
    // SAFETY: libuv is done with the handle (its close callback) and it holds no State count.
    unsafe { free_handle(h, UV_TIMER) };
}

/// # Safety
/// `h`'s close callback: libuv is done with it, and its data slot holds the State count `start`
/// gave it.
unsafe fn closed(h: *mut UvHandle, kind: i32) {
    // SAFETY: per the contract the slot holds a pointer from `Rc::into_raw`, taken back once here.
    let state = unsafe { Rc::from_raw(*(h as *mut *const State)) };
    // SAFETY: allocated by alloc_handle(kind), and libuv no longer uses it.
    unsafe { free_handle(h, kind) };
    state.open.set(state.open.get() - 1);
    if state.open.get() == 0 {
        let cleanup = state.cleanup.replace(ptr::null_mut());
        if !cleanup.is_null() {
            // Either the environment is going away and waits for this, or it is unregistered.
            // SAFETY: `cleanup` is the live hook handle from `start` (or the one the hook got),
            // removed once: it was swapped out of the State above. Its status only says the
            // handle was invalid, which the swap rules out.
            unsafe { sys::napi_remove_async_cleanup_hook(cleanup) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferro_engine::Batch;

    struct NoSink;
    impl EventSink for NoSink {
        fn write(&self, _write: &mut dyn FnMut(&mut Batch)) -> bool {
            false
        }
        fn signal(&self) {}
        fn congested(&self, _waker: &std::task::Waker) -> bool {
            false
        }
    }

    /// Pins the descriptor discovery (see `epoll_fds`) on the tokio in Cargo.lock. If a tokio
    /// upgrade fails this, the inline driver cannot run on it: every engine would fall back to
    /// the threaded driver. Look for an API tokio now offers (tokio-rs/tokio#7348) before
    /// upgrading.
    #[test]
    fn the_current_thread_runtime_has_one_epoll_descriptor_that_its_wakes_make_readable() {
        let (engine, fd) = build_engine(Arc::new(NoSink)).unwrap_or_else(|e| {
            panic!("the inline driver cannot find tokio's reactor descriptor on this tokio version: {e}")
        });
        let target =
            std::fs::read_link(format!("/proc/self/fd/{fd}")).expect("the descriptor is open");
        assert_eq!(target.as_os_str(), "anon_inode:[eventpoll]");
        let inline = engine.inline().expect("inline engine");
        inline.tick(true);
        assert!(!readable(fd), "quiet after a tick");
        inline.wake_from_outside();
        assert!(readable(fd), "readable once the runtime is woken from outside");
        inline.tick(true);
        assert!(!readable(fd), "quiet again after the next tick");
        drop(engine);
        assert!(
            !epoll_fds().contains(&fd),
            "the descriptor is the runtime's: it closes with the engine"
        );
    }
}
