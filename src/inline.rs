//! The inline driver's event-loop side (Linux; issue 20): the engine's current-thread runtime is
//! ticked on the JS thread from libuv. A `uv_poll_t` watches the runtime's epoll descriptor (an
//! epoll descriptor is itself pollable: readable while it has events), a `uv_timer_t` is armed
//! for the earliest deadline an engine task waits on, and each tick's events go to JS straight
//! from the uv callback (`napi_make_callback`, which then runs nextTicks and microtasks). A tick
//! made inside a call from JS (`flush`) never calls back into JS: its events hop to a later turn.
use crate::queue::Queue;
use ferro_engine::driver::Inline;
use ferro_engine::Engine;
use napi::sys;
use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::cell::Cell;
use std::collections::HashSet;
use std::ffi::c_void;
use std::ptr;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Instant;

type UvHandle = c_void;
type UvLoop = sys::uv_loop_s;
// libuv as exported by the node binary (resolved when the addon loads).
extern "C" {
    fn uv_handle_size(kind: i32) -> usize;
    fn uv_poll_init(lp: *mut UvLoop, h: *mut UvHandle, fd: i32) -> i32;
    fn uv_poll_start(h: *mut UvHandle, events: i32, cb: unsafe extern "C" fn(*mut UvHandle, i32, i32)) -> i32;
    fn uv_timer_init(lp: *mut UvLoop, h: *mut UvHandle) -> i32;
    fn uv_timer_start(h: *mut UvHandle, cb: unsafe extern "C" fn(*mut UvHandle), timeout: u64, repeat: u64) -> i32;
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
    poll: *mut UvHandle,
    timer: *mut UvHandle,
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
pub struct InlineLoop {
    state: Rc<State>,
}

fn epoll_fds() -> HashSet<i32> {
    let Ok(dir) = std::fs::read_dir("/proc/self/fd") else { return HashSet::new() };
    dir.filter_map(|e| {
        let e = e.ok()?;
        let target = std::fs::read_link(e.path()).ok()?;
        (target.as_os_str() == "anon_inode:[eventpoll]").then(|| e.file_name().to_str()?.parse().ok())?
    })
    .collect()
}

fn readable(fd: i32) -> bool {
    let mut p = PollFd { fd, events: POLLIN, revents: 0 };
    unsafe { poll(&mut p, 1, 0) == 1 && p.revents & POLLIN != 0 }
}

/// The runtime's epoll descriptor among `candidates`: quiet after a tick, readable once the
/// runtime is woken from outside, quiet again after the next tick.
fn verify(inline: &Inline, candidates: &HashSet<i32>) -> Option<i32> {
    candidates.iter().copied().find(|&fd| {
        inline.tick();
        if readable(fd) {
            return false;
        }
        inline.wake_from_outside();
        let woke = readable(fd);
        inline.tick();
        woke && !readable(fd)
    })
}

fn alloc_handle(kind: i32) -> *mut UvHandle {
    let size = unsafe { uv_handle_size(kind) };
    unsafe { alloc_zeroed(Layout::from_size_align(size, 16).expect("layout")) }.cast()
}

unsafe fn free_handle(h: *mut UvHandle, kind: i32) {
    let size = unsafe { uv_handle_size(kind) };
    unsafe { dealloc(h.cast(), Layout::from_size_align(size, 16).expect("layout")) };
}

/// `uv_handle_t.data` is the handle's first field.
unsafe fn set_data(h: *mut UvHandle, data: *const State) {
    unsafe { *(h as *mut *const State) = data };
}
unsafe fn state_of<'a>(h: *mut UvHandle) -> &'a State {
    unsafe { &**(h as *mut *const State) }
}

impl InlineLoop {
    /// An inline engine and its driver, or why not (the caller falls back to a threaded engine).
    pub fn start(env: sys::napi_env, queue: &Arc<Queue>, callback: sys::napi_value) -> Result<(Arc<Engine>, InlineLoop), String> {
        let before = epoll_fds();
        let engine = Engine::new_inline(queue.clone()).map_err(|e| format!("cannot build the runtime: {e}"))?;
        let inline = engine.inline().expect("inline engine");
        let fresh: HashSet<i32> = epoll_fds().difference(&before).copied().collect();
        let fd = verify(inline, &fresh).ok_or_else(|| format!("the runtime's epoll descriptor was not found ({} candidates)", fresh.len()))?;
        let engine = Arc::new(engine);

        let mut lp = ptr::null_mut();
        ok(unsafe { sys::napi_get_uv_event_loop(env, &mut lp) }, "napi_get_uv_event_loop")?;
        let mut callback_ref = ptr::null_mut();
        ok(unsafe { sys::napi_create_reference(env, callback, 1, &mut callback_ref) }, "napi_create_reference")?;
        let mut name = ptr::null_mut();
        let label = "ferro.events";
        ok(unsafe { sys::napi_create_string_utf8(env, label.as_ptr().cast(), label.len() as isize, &mut name) }, "napi_create_string_utf8")?;
        let mut async_ctx = ptr::null_mut();
        ok(unsafe { sys::napi_async_init(env, ptr::null_mut(), name, &mut async_ctx) }, "napi_async_init")?;

        let (poll_h, timer_h) = (alloc_handle(UV_POLL), alloc_handle(UV_TIMER));
        let state = Rc::new(State {
            env,
            engine: engine.clone(),
            queue: queue.clone(),
            callback: callback_ref,
            async_ctx,
            poll: poll_h,
            timer: timer_h,
            armed: Cell::new(None),
            referenced: Cell::new(false),
            closing: Cell::new(false),
            open: Cell::new(0),
            delivering: Cell::new(false),
            cleanup: Cell::new(ptr::null_mut()),
        });
        // Each handle holds one strong count, released by its close callback.
        let ok_poll = unsafe { uv_poll_init(lp, poll_h, fd) } == 0;
        if !ok_poll {
            unsafe { free_handle(poll_h, UV_POLL) };
            unsafe { free_handle(timer_h, UV_TIMER) };
            return Err("uv_poll_init failed on the runtime's epoll descriptor".into());
        }
        unsafe {
            set_data(poll_h, Rc::into_raw(state.clone()));
            uv_timer_init(lp, timer_h);
            set_data(timer_h, Rc::into_raw(state.clone()));
            state.open.set(2);
            uv_poll_start(poll_h, UV_READABLE, on_readable);
            // Idle until JS has requests in flight (`set_ref`).
            uv_unref(poll_h);
            uv_unref(timer_h);
        }
        let mut cleanup = ptr::null_mut();
        let arg = Rc::as_ptr(&state) as *mut c_void;
        if unsafe { sys::napi_add_async_cleanup_hook(env, Some(on_env_cleanup), arg, &mut cleanup) } == sys::Status::napi_ok {
            state.cleanup.set(cleanup);
        }
        queue.set_inline();
        Ok((engine, InlineLoop { state }))
    }

    /// Runs the engine now from a call JS made (so queued requests go out in this JS turn); its
    /// events are delivered after the call returns, never from inside it. A call made while JS
    /// handles a delivery leaves the tick to `run`, which ticks right after the delivery returns:
    /// one tick (one reactor poll) for both.
    pub fn tick_from_js(&self) {
        let s = &*self.state;
        if s.closing.get() || s.delivering.get() {
            return;
        }
        let more = inline(s).tick();
        s.queue.hop();
        arm(s, more);
    }

    /// Keeps the process alive (requests in flight) or not (idle).
    pub fn set_ref(&self, on: bool) {
        let s = &*self.state;
        if s.closing.get() || s.referenced.replace(on) == on {
            return;
        }
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

    /// Closes the loop handles; the engine is not driven any more.
    pub fn close(&self) {
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
    unsafe {
        uv_close(s.poll, on_poll_closed);
        uv_close(s.timer, on_timer_closed);
    }
}

unsafe extern "C" fn on_readable(h: *mut UvHandle, _status: i32, _events: i32) {
    run(unsafe { state_of(h) });
}

unsafe extern "C" fn on_timer(h: *mut UvHandle) {
    let s = unsafe { state_of(h) };
    s.armed.set(None);
    run(s);
}

/// One loop callback: tick, hand the events to JS, repeat while work is left.
fn run(s: &State) {
    let mut more = false;
    for _ in 0..MAX_ROUNDS {
        if s.closing.get() {
            return;
        }
        more = inline(s).tick();
        if !s.queue.is_empty() {
            deliver(s);
        } else if !more {
            break;
        }
    }
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
    unsafe {
        match due {
            // +1 ms: libuv counts whole milliseconds from a cached loop time and tokio rounds
            // deadlines up to its next millisecond; firing early only costs an empty tick.
            Some(at) => {
                let ms = if more { 0 } else { at.saturating_duration_since(now).as_micros().div_ceil(1000) as u64 + 1 };
                uv_timer_start(s.timer, on_timer, ms, 0);
            }
            None => {
                uv_timer_stop(s.timer);
            }
        }
    }
}

/// Calls JS's `onEvents` with everything queued, from a loop callback.
fn deliver(s: &State) {
    let env = s.env;
    s.delivering.set(true);
    unsafe {
        let mut scope = ptr::null_mut();
        sys::napi_open_handle_scope(env, &mut scope);
        let mut cb = ptr::null_mut();
        let mut global = ptr::null_mut();
        sys::napi_get_reference_value(env, s.callback, &mut cb);
        sys::napi_get_global(env, &mut global);
        let mut undefined = ptr::null_mut();
        sys::napi_get_undefined(env, &mut undefined);
        s.queue.deliver(env, |batch, blobs| {
            let mut result = ptr::null_mut();
            let args = [batch, blobs.unwrap_or(undefined)];
            let argc = if blobs.is_some() { 2 } else { 1 };
            let status = sys::napi_make_callback(env, s.async_ctx, global, cb, argc, args.as_ptr(), &mut result);
            if status == sys::Status::napi_pending_exception {
                // Nothing up the stack can catch it: report it as Node reports uncaught errors.
                let mut err = ptr::null_mut();
                sys::napi_get_and_clear_last_exception(env, &mut err);
                sys::napi_fatal_exception(env, err);
            }
        });
        sys::napi_close_handle_scope(env, scope);
    }
    s.delivering.set(false);
}

unsafe extern "C" fn on_env_cleanup(handle: sys::napi_async_cleanup_hook_handle, arg: *mut c_void) {
    let s = unsafe { &*(arg as *const State) };
    s.cleanup.set(handle);
    close(s);
}

unsafe extern "C" fn on_poll_closed(h: *mut UvHandle) {
    unsafe { closed(h, UV_POLL) };
}
unsafe extern "C" fn on_timer_closed(h: *mut UvHandle) {
    unsafe { closed(h, UV_TIMER) };
}

unsafe fn closed(h: *mut UvHandle, kind: i32) {
    let state = unsafe { Rc::from_raw(*(h as *mut *const State)) };
    unsafe { free_handle(h, kind) };
    state.open.set(state.open.get() - 1);
    if state.open.get() == 0 {
        let cleanup = state.cleanup.replace(ptr::null_mut());
        if !cleanup.is_null() {
            // Either the environment is going away and waits for this, or it is unregistered.
            unsafe { sys::napi_remove_async_cleanup_hook(cleanup) };
        }
    }
}
