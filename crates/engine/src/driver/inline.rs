//! The inline driver's side in the engine: a current-thread runtime that whoever owns the JS
//! event loop ticks (runs every ready task, then polls the reactor and the timer wheel once,
//! without blocking), and what that owner needs to know after each tick.
use super::task::{enter, DriverCtx};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use tokio::runtime::{Builder, Handle, Runtime};
use tokio::time::Instant;

/// Most `yield`s one tick makes while tasks keep waking each other; past it the owner ticks again
/// from its event loop, so a busy engine cannot starve JS.
const MAX_ROUNDS: usize = 16;

pub struct Inline {
    rt: Option<Runtime>,
    ctx: Arc<DriverCtx>,
    ticking: AtomicBool,
}

impl Inline {
    pub(crate) fn new() -> std::io::Result<Inline> {
        let rt = Builder::new_current_thread().enable_all().build()?;
        Ok(Inline { rt: Some(rt), ctx: Arc::default(), ticking: AtomicBool::new(false) })
    }

    pub(crate) fn handle(&self) -> Handle {
        self.rt.as_ref().expect("runtime").handle().clone()
    }

    pub(crate) fn ctx(&self) -> &Arc<DriverCtx> {
        &self.ctx
    }

    /// Runs what is ready without blocking. Returns true when work is left over (tasks woken and
    /// not yet polled): the caller ticks again soon instead of waiting for the reactor, whose
    /// readiness for them was already consumed. A nested call (never expected) does nothing.
    pub fn tick(&self) -> bool {
        if self.ticking.swap(true, Ordering::AcqRel) {
            return false;
        }
        // Cleared however the tick ends (a panic caught further up must not stop all ticks).
        struct Done<'a>(&'a AtomicBool);
        impl Drop for Done<'_> {
            fn drop(&mut self) {
                self.0.store(false, Ordering::Release);
            }
        }
        let _done = Done(&self.ticking);
        let Some(rt) = &self.rt else { return false };
        let ctx = &self.ctx;
        let mut stale = false;
        {
            let _current = enter(ctx);
            // Each `yield_now` lets the runtime run its queue dry, then poll the reactor and the
            // timers with a zero timeout before it resumes this future.
            rt.block_on(async {
                // Woken here, inside the runtime, the tasks are queued without a reactor wake-up.
                for w in ctx.take_deferred() {
                    w.wake();
                }
                for _ in 0..MAX_ROUNDS {
                    let (woken, before) = (ctx.has_pending(), ctx.polls());
                    tokio::task::yield_now().await;
                    if !ctx.has_pending() {
                        break;
                    }
                    // Woken tasks are polled in the round that follows their wake; none was:
                    // the count is stale and must not turn into a busy loop.
                    if woken && ctx.polls() == before {
                        stale = true;
                        break;
                    }
                }
            });
        }
        ctx.has_pending() && !stale
    }

    /// Wakes wait for the next tick (see `Shared::wake_for_flush`): the owner must tick soon.
    pub fn has_deferred(&self) -> bool {
        self.ctx.has_deferred()
    }

    /// The earliest deadline a task waits on (the owner arms its loop timer for it).
    pub fn next_deadline(&self) -> Option<Instant> {
        self.ctx.next_deadline()
    }

    /// Wakes the runtime from outside, as another thread would: the reactor's descriptor turns
    /// readable until the next tick (used to verify which descriptor is the reactor's).
    pub fn wake_from_outside(&self) {
        if let Some(rt) = &self.rt {
            rt.spawn(async {});
        }
    }
}

impl Drop for Inline {
    fn drop(&mut self) {
        // Connection tasks still alive are dropped here, closing their sockets.
        if let Some(rt) = self.rt.take() {
            rt.shutdown_background();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::task::Tracked;
    use crate::driver::timer::Timer;
    use parking_lot::Mutex;
    use std::sync::atomic::AtomicUsize;
    use std::time::Duration;

    fn spawn(inline: &Inline, fut: impl std::future::Future<Output = ()> + Send + 'static) {
        inline.handle().spawn(Tracked::new(Some(inline.ctx()), fut));
    }

    #[test]
    fn one_tick_runs_a_task_woken_by_io_that_the_tick_itself_collected() {
        let inline = Inline::new().unwrap();
        let (a, mut b) = std::os::unix::net::UnixStream::pair().unwrap();
        a.set_nonblocking(true).unwrap();
        let done = Arc::new(AtomicUsize::new(0));
        let d = done.clone();
        spawn(&inline, async move {
            use tokio::io::AsyncReadExt;
            let mut a = tokio::net::UnixStream::from_std(a).unwrap();
            let mut buf = [0u8; 4];
            a.read_exact(&mut buf).await.unwrap();
            d.store(1, Ordering::SeqCst);
        });
        assert!(!inline.tick(), "the task parks on its socket");
        std::io::Write::write_all(&mut b, b"ping").unwrap();
        // The reactor reports the read in the tick's own poll; the task must run in that tick
        // (its readiness would not be reported again).
        inline.tick();
        assert_eq!(done.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn a_deferred_wake_is_run_by_the_next_tick() {
        let inline = Inline::new().unwrap();
        let waker: Arc<Mutex<Option<std::task::Waker>>> = Arc::default();
        let polls = Arc::new(AtomicUsize::new(0));
        let (w, p) = (waker.clone(), polls.clone());
        spawn(
            &inline,
            std::future::poll_fn(move |cx| {
                p.fetch_add(1, Ordering::SeqCst);
                *w.lock() = Some(cx.waker().clone());
                std::task::Poll::<()>::Pending
            }),
        );
        inline.tick();
        assert_eq!(polls.load(Ordering::SeqCst), 1);
        // As Pool::flush does from JS, outside a tick: the wake waits, and the owner knows to tick.
        inline.ctx().defer_wakes(vec![waker.lock().take().unwrap()]);
        assert!(inline.has_deferred());
        assert_eq!(polls.load(Ordering::SeqCst), 1, "nothing runs before the tick");
        assert!(!inline.tick());
        assert_eq!(polls.load(Ordering::SeqCst), 2);
        assert!(!inline.has_deferred());
    }

    #[test]
    fn a_waiting_timer_is_recorded_until_it_fires_and_a_dropped_one_is_forgotten() {
        let inline = Inline::new().unwrap();
        let fired = Arc::new(AtomicUsize::new(0));
        let f = fired.clone();
        spawn(&inline, async move {
            Timer::after(Duration::from_millis(30)).await;
            f.store(1, Ordering::SeqCst);
            // Created, never awaited: not recorded.
            let _unused = Timer::after(Duration::from_secs(60));
        });
        inline.tick();
        let due = inline.next_deadline().expect("recorded");
        assert!(due > Instant::now());
        std::thread::sleep(Duration::from_millis(40));
        inline.tick();
        assert_eq!(fired.load(Ordering::SeqCst), 1);
        assert_eq!(inline.next_deadline(), None);
    }
}
