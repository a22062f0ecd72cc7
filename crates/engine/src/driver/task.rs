//! Task bookkeeping for the inline driver: counts tasks woken but not yet polled, so a tick that
//! ends with work queued (tokio polls the reactor once more just before `block_on` returns, and
//! the readiness it consumed will not be reported by epoll again) is followed by another tick.
use super::local::LocalExec;
use parking_lot::Mutex;
use std::cell::RefCell;
use std::collections::BTreeSet;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicIsize, AtomicU64, AtomicU8, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use tokio::runtime::Handle;
use tokio::task::JoinHandle;
use tokio::time::Instant;

/// State one inline runtime shares with its tasks and timers.
#[derive(Default)]
pub struct DriverCtx {
    /// Tasks woken and not polled since (signed: a wake counts itself before it marks its task).
    pub(crate) pending: AtomicIsize,
    /// Deadlines tasks are waiting on right now, with a unique id each.
    pub(crate) timers: Mutex<BTreeSet<(Instant, u64)>>,
    pub(crate) next_timer: AtomicU64,
    /// Task polls so far: a round that polled nothing has nothing left over, whatever `pending`
    /// says (a stale count must never turn into a busy loop).
    pub(crate) polls: AtomicU64,
    /// Wakes for work JS queued, held for the tick it runs next (`Shared::wake_for_flush`).
    deferred: Mutex<Deferred>,
    /// Where engine tasks run (`spawn`); always set by `Inline::new`.
    pub(crate) local: Option<LocalExec>,
}

impl DriverCtx {
    pub(crate) fn new(local: LocalExec) -> DriverCtx {
        DriverCtx { local: Some(local), ..Default::default() }
    }
    /// The earliest deadline a task waits on.
    pub fn next_deadline(&self) -> Option<Instant> {
        self.timers.lock().first().map(|(at, _)| *at)
    }
    /// True while some task is woken and not yet polled.
    pub fn has_pending(&self) -> bool {
        self.pending.load(Ordering::Acquire) > 0
    }
    pub(crate) fn polls(&self) -> u64 {
        self.polls.load(Ordering::Relaxed)
    }
    /// An empty vector for a flush's wakes: the one the last tick emptied, so that a flush
    /// allocates none (one `malloc` per serial exchange otherwise).
    pub(crate) fn wake_list(&self) -> Vec<Waker> {
        std::mem::take(&mut self.deferred.lock().spare)
    }
    /// A flush's wakes (`Shared::wake_for_flush`): held for the next tick outside one, run at once
    /// inside one (JS handling the events of a loop callback's tick). The vector is kept either way.
    pub(crate) fn wake_for_flush(&self, wakers: Vec<Waker>) {
        if current().is_none() {
            self.defer_wakes(wakers);
            return;
        }
        self.wake_and_keep(wakers);
    }
    pub(crate) fn defer_wakes(&self, mut wakers: Vec<Waker>) {
        let mut d = self.deferred.lock();
        // Usually empty (the tick took the last ones): keep the caller's vector rather than copy
        // it into another.
        if d.wakes.is_empty() {
            std::mem::swap(&mut d.wakes, &mut wakers);
        } else {
            d.wakes.append(&mut wakers);
        }
        d.keep(wakers);
    }
    /// True while wakes wait for the next tick.
    pub fn has_deferred(&self) -> bool {
        !self.deferred.lock().wakes.is_empty()
    }
    /// Runs the wakes JS's flushes left for this tick (outside the lock: a wake runs engine code).
    pub(crate) fn wake_deferred(&self) {
        let wakes = std::mem::take(&mut self.deferred.lock().wakes);
        if wakes.capacity() > 0 {
            self.wake_and_keep(wakes);
        }
    }
    /// Runs `wakes` (outside the lock) and keeps the emptied vector for the next flush.
    fn wake_and_keep(&self, mut wakes: Vec<Waker>) {
        for w in wakes.drain(..) {
            w.wake();
        }
        self.deferred.lock().keep(wakes);
    }
}

/// See `DriverCtx::deferred`.
#[derive(Default)]
struct Deferred {
    wakes: Vec<Waker>,
    /// Emptied, kept for the next flush (`wake_list`).
    spare: Vec<Waker>,
}

impl Deferred {
    fn keep(&mut self, empty: Vec<Waker>) {
        if empty.capacity() > self.spare.capacity() {
            self.spare = empty;
        }
    }
}

thread_local! {
    /// The inline runtime being ticked on this thread (set for the length of a tick).
    static CURRENT: RefCell<Option<Arc<DriverCtx>>> = const { RefCell::new(None) };
}

/// Makes `ctx` current on this thread until the guard drops.
pub(crate) fn enter(ctx: &Arc<DriverCtx>) -> impl Drop {
    struct Exit(Option<Arc<DriverCtx>>);
    impl Drop for Exit {
        fn drop(&mut self) {
            let prev = self.0.take();
            CURRENT.with(|c| *c.borrow_mut() = prev);
        }
    }
    Exit(CURRENT.with(|c| c.borrow_mut().replace(ctx.clone())))
}

/// The inline runtime being ticked on this thread, if any.
pub(crate) fn current() -> Option<Arc<DriverCtx>> {
    CURRENT.with(|c| c.borrow().clone())
}

/// Spawns an engine task of an inline runtime: on its local set (run inside the tick, see
/// `driver::local`), or, called from another thread, on the runtime's scheduler, tracked.
pub(crate) fn spawn<F>(ctx: &Arc<DriverCtx>, handle: &Handle, fut: F) -> JoinHandle<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    let fut = match &ctx.local {
        Some(local) => match local.spawn(fut) {
            Ok(h) => return h,
            Err(fut) => fut,
        },
        None => fut,
    };
    handle.spawn(Tracked::new(Some(ctx), fut))
}

/// Wraps a future spawned from inside a task (JoinSet members): tracked when the task spawning it
/// runs on an inline runtime, as is otherwise.
pub fn tracked<F: Future>(fut: F) -> Tracked<F> {
    Tracked::new(current().as_ref(), fut)
}

/// A future whose wakes are counted in its driver's `pending` (inline runtimes only).
pub struct Tracked<F> {
    fut: F,
    wake: Option<(Arc<TaskWake>, Waker)>,
}

const IDLE: u8 = 0;
const WOKEN: u8 = 1;
/// The task's future is gone: later wakes (a timer or socket outliving it) count nothing.
const DONE: u8 = 2;

pub(crate) struct TaskWake {
    state: AtomicU8,
    ctx: Arc<DriverCtx>,
    /// The runtime's own waker for the task, refreshed on each poll.
    inner: Mutex<Option<Waker>>,
}

impl Wake for TaskWake {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }
    fn wake_by_ref(self: &Arc<Self>) {
        self.ctx.pending.fetch_add(1, Ordering::AcqRel);
        if self.state.compare_exchange(IDLE, WOKEN, Ordering::AcqRel, Ordering::Acquire).is_err() {
            self.ctx.pending.fetch_sub(1, Ordering::AcqRel);
        }
        if let Some(w) = self.inner.lock().as_ref() {
            w.wake_by_ref();
        }
    }
}

impl<F> Tracked<F> {
    pub(crate) fn new(ctx: Option<&Arc<DriverCtx>>, fut: F) -> Self {
        let wake = ctx.map(|ctx| {
            // Spawned is scheduled: counted until its first poll, so a tick that spawned it from
            // inside its own future (where no reactor wake-up follows) runs it before it ends.
            ctx.pending.fetch_add(1, Ordering::AcqRel);
            let w = Arc::new(TaskWake {
                state: AtomicU8::new(WOKEN),
                ctx: ctx.clone(),
                inner: Mutex::new(None),
            });
            (w.clone(), Waker::from(w))
        });
        Tracked { fut, wake }
    }
}

impl<F: Future> Future for Tracked<F> {
    type Output = F::Output;
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        // SAFETY: `fut` is structurally pinned (never moved out of `self`); `wake` is not.
        let this = unsafe { self.get_unchecked_mut() };
        let fut = unsafe { Pin::new_unchecked(&mut this.fut) };
        let Some((state, waker)) = &this.wake else {
            return fut.poll(cx);
        };
        state.ctx.polls.fetch_add(1, Ordering::Relaxed);
        if state.state.compare_exchange(WOKEN, IDLE, Ordering::AcqRel, Ordering::Acquire).is_ok() {
            state.ctx.pending.fetch_sub(1, Ordering::AcqRel);
        }
        {
            let mut inner = state.inner.lock();
            if !inner.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
                *inner = Some(cx.waker().clone());
            }
        }
        fut.poll(&mut Context::from_waker(waker))
    }
}

impl<F> Drop for Tracked<F> {
    fn drop(&mut self) {
        if let Some((state, _)) = &self.wake {
            if state.state.swap(DONE, Ordering::AcqRel) == WOKEN {
                state.ctx.pending.fetch_sub(1, Ordering::AcqRel);
            }
            // The runtime's waker would keep the finished task alive until a late wake.
            state.inner.lock().take();
        }
    }
}
