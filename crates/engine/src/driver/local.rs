//! The inline driver's own executor for connection tasks (issue 33): a tokio `LocalSet` that the
//! tick polls itself. tokio's current-thread `block_on` only gets back to its future through a
//! reactor poll once it has run a task, so a tick whose tasks ran on the runtime's scheduler always
//! ended with a zero-timeout `epoll_wait`, even when it only wrote a request. Tasks of this set run
//! inside the tick's future instead: a tick from JS runs them without touching the reactor, and a
//! tick from the event loop runs them, polls the reactor once, and runs what that poll woke.
//!
//! The set is only touched on the thread that made it (the JS thread): a call from any other thread
//! gets `None` and the caller falls back to the runtime's scheduler.
use std::cell::{Cell, RefCell};
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Wake, Waker};
use std::thread::ThreadId;
use tokio::runtime::Handle;
use tokio::task::{unconstrained, JoinHandle, LocalSet};

pub(crate) struct LocalExec {
    owner: ThreadId,
    set: RefCell<Option<LocalSet>>,
    wake: Arc<SetWake>,
    waker: Waker,
}

// SAFETY: the `LocalSet` (neither Send nor Sync) is only reached through `with`, which returns
// without touching it on any thread but `owner`; the rest is Send + Sync.
unsafe impl Send for LocalExec {}
// SAFETY: as above.
unsafe impl Sync for LocalExec {}

/// The set's waker: a flag the tick reads. A wake from outside a tick of this runtime (another
/// thread, or JS aborting a connection) must also make the reactor's descriptor readable, so the
/// event loop ticks: it wakes the runtime, as tokio does for a task woken from outside.
struct SetWake {
    woken: AtomicBool,
    handle: Handle,
}

thread_local! {
    /// The set whose driver is ticking on this thread (its `SetWake`'s address; 0: none).
    static TICKING: Cell<usize> = const { Cell::new(0) };
}

impl Wake for SetWake {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }
    fn wake_by_ref(self: &Arc<Self>) {
        self.woken.store(true, Ordering::Release);
        if TICKING.with(Cell::get) != Arc::as_ptr(self) as usize {
            // An empty task: the runtime's own wake from outside (its eventfd), whatever the
            // runtime's woken flag says.
            drop(self.handle.spawn(async {}));
        }
    }
}

impl LocalExec {
    pub(crate) fn new(handle: Handle) -> LocalExec {
        let wake = Arc::new(SetWake { woken: AtomicBool::new(false), handle });
        let exec = LocalExec {
            owner: std::thread::current().id(),
            set: RefCell::new(Some(LocalSet::new())),
            waker: Waker::from(wake.clone()),
            wake,
        };
        // The set only calls a waker it was polled with (and forgets it once it has woken it):
        // this first poll gives it ours; each `run` gives it again.
        exec.poll();
        exec
    }

    fn with<R>(&self, f: impl FnOnce(&LocalSet) -> R) -> Option<R> {
        if std::thread::current().id() != self.owner {
            return None;
        }
        self.set.borrow().as_ref().map(f)
    }

    /// Spawns `fut` on the set, or gives it back (another thread, or the set is gone).
    pub(crate) fn spawn<F>(&self, fut: F) -> Result<JoinHandle<F::Output>, F>
    where
        F: Future + 'static,
        F::Output: 'static,
    {
        let mut fut = Some(fut);
        // Unconstrained: a task that spends tokio's cooperative budget parks its wake in the
        // `block_on`'s deferred list, woken only by the runtime's next park, and a tick whose
        // future returns after running the set (no park follows) drops that list, stranding the
        // task. The set's tasks still yield whenever their socket or JS's queue is not ready.
        match self.with(|set| set.spawn_local(unconstrained(fut.take().expect("once")))) {
            Some(h) => Ok(h),
            None => Err(fut.take().expect("not spawned")),
        }
    }

    /// Marks this set's driver as ticking on this thread until the guard drops: wakes meanwhile
    /// only set the flag the tick reads.
    pub(crate) fn ticking(&self) -> impl Drop {
        struct Exit(usize);
        impl Drop for Exit {
            fn drop(&mut self) {
                TICKING.with(|t| t.set(self.0));
            }
        }
        Exit(TICKING.with(|t| t.replace(Arc::as_ptr(&self.wake) as usize)))
    }

    /// True when some task of the set was woken since the last `run`.
    pub(crate) fn woken(&self) -> bool {
        self.wake.woken.load(Ordering::Acquire)
    }

    /// Polls the set's woken tasks (at most tokio's batch; `woken` says when some are left).
    pub(crate) fn run(&self) {
        if self.wake.woken.swap(false, Ordering::AcqRel) {
            self.poll();
        }
    }

    fn poll(&self) {
        self.with(|set| {
            // `run_until` over a future that never ends: one poll ticks the set once.
            let tick = set.run_until(std::future::pending::<()>());
            let mut tick = std::pin::pin!(tick);
            let _ = tick.as_mut().poll(&mut Context::from_waker(&self.waker));
        });
    }

    /// Drops the tasks still in the set (their sockets close). On the owner thread only.
    pub(crate) fn shutdown(&self) {
        if std::thread::current().id() != self.owner {
            // Never reached in practice (the engine is dropped on the JS thread); leaking the set
            // is the sound choice over touching it here.
            std::mem::forget(self.set.borrow_mut().take());
            return;
        }
        let set = self.set.borrow_mut().take();
        drop(set);
    }
}

impl Drop for LocalExec {
    fn drop(&mut self) {
        self.shutdown();
    }
}
