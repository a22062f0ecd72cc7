//! The inline driver's side in the engine: a current-thread runtime that whoever owns the JS
//! event loop ticks (runs every ready task, then polls the reactor and the timer wheel once,
//! without blocking), and what that owner needs to know after each tick.
use super::local::LocalExec;
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
        let ctx = Arc::new(DriverCtx::new(LocalExec::new(rt.handle().clone())));
        Ok(Inline { rt: Some(rt), ctx, ticking: AtomicBool::new(false) })
    }

    pub(crate) fn handle(&self) -> Handle {
        self.rt.as_ref().expect("runtime").handle().clone()
    }

    pub(crate) fn ctx(&self) -> &Arc<DriverCtx> {
        &self.ctx
    }

    /// Runs what is ready without blocking. `reactor`: also poll the reactor and the timers, once,
    /// after the tasks JS's calls woke have run (so a response that is already back when the tick
    /// wrote its request is read in the same tick), and run what that poll woke; without it, only
    /// the tasks JS's calls woke run (the owner watches the reactor's descriptor for the rest).
    /// Returns true when work is left over (tasks woken and not yet polled): the caller ticks again
    /// soon instead of waiting for the reactor, whose readiness for them was already consumed. A
    /// nested call (never expected) does nothing.
    pub fn tick(&self, reactor: bool) -> bool {
        let mut more = false;
        self.drive(reactor, 1, |m| {
            more = m;
            false
        });
        more
    }

    /// Ticks as `tick(true)` up to `rounds` times in one `block_on` (entering and leaving it
    /// costs about a microsecond), calling `between` after each tick with what that tick returned;
    /// the owner hands the tick's events to JS there, and returns false to stop. Returns true when
    /// work is left over, as `tick` does, counting what `between` woke: a wake from inside the
    /// runtime makes no reactor wake-up, so the owner must tick again for it.
    pub fn ticks(&self, rounds: usize, mut between: impl FnMut(bool) -> bool) -> bool {
        let mut left = false;
        self.drive(true, rounds, |more| {
            let ctx = &self.ctx;
            let pending = ctx.pending.load(Ordering::Acquire);
            let go = between(more);
            left = more
                || ctx.local.as_ref().is_some_and(|l| l.woken())
                || ctx.pending.load(Ordering::Acquire) > pending;
            go
        });
        left
    }

    fn drive(&self, reactor: bool, rounds: usize, mut between: impl FnMut(bool) -> bool) {
        if self.ticking.swap(true, Ordering::AcqRel) {
            return;
        }
        // Cleared however the tick ends (a panic caught further up must not stop all ticks).
        struct Done<'a>(&'a AtomicBool);
        impl Drop for Done<'_> {
            fn drop(&mut self) {
                self.0.store(false, Ordering::Release);
            }
        }
        let _done = Done(&self.ticking);
        let Some(rt) = &self.rt else { return };
        let ctx = &self.ctx;
        let local = ctx.local.as_ref().expect("made by Inline::new");
        let (_current, _ticking) = (enter(ctx), local.ticking());
        if !reactor && !ctx.has_pending() {
            // A tick from JS, with nothing woken on the runtime's scheduler: the set's tasks run
            // inside the runtime's context (their sockets and timers need it) but outside
            // `block_on`, whose scheduler and park such a tick does not use (entering and leaving
            // them was most of its cost).
            let _rt = rt.enter();
            ctx.wake_deferred();
            for _ in 0..MAX_ROUNDS {
                local.run();
                if !local.woken() {
                    break;
                }
            }
            if !ctx.has_pending() {
                between(local.woken());
                return;
            }
            // A task of the set woke or spawned one of the runtime's (HTTP/2 streams, quinn,
            // connection attempts: `tracked`), which only `block_on` runs.
        }
        rt.block_on(async {
            for _ in 0..rounds {
                if !between(self.round(reactor).await) {
                    break;
                }
            }
        });
    }

    /// One tick inside `block_on`; what `tick` returns.
    async fn round(&self, reactor: bool) -> bool {
        let ctx = &self.ctx;
        let local = ctx.local.as_ref().expect("made by Inline::new");
        let mut stale = false;
        // Woken here, inside the runtime, the tasks are queued without a reactor wake-up.
        ctx.wake_deferred();
        let mut reactor = reactor;
        for _ in 0..MAX_ROUNDS {
            // The set's tasks woken by JS, by each other or by the last reactor poll.
            local.run();
            if !reactor && !ctx.has_pending() {
                if local.woken() {
                    continue;
                }
                break;
            }
            // Tasks on the runtime's scheduler (spawned from other threads, or by a task of the
            // set: `tracked`) and the reactor are only reached through a yield: the runtime runs
            // its queue dry, then polls the reactor and the timers with a zero timeout before it
            // resumes this future.
            let (woken, before) = (ctx.has_pending(), ctx.polls());
            yield_to_runtime().await;
            reactor = false;
            // Woken tasks are polled in the round that follows their wake; none was: the count
            // is stale and must not turn into a busy loop.
            if woken && ctx.polls() == before {
                stale = true;
                local.run();
                break;
            }
        }
        (ctx.has_pending() && !stale) || local.woken()
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

/// What `tokio::task::yield_now` does inside `block_on`, without tokio's deferred list (a vector
/// `block_on` makes afresh, so one allocation per tick that yields): the future wakes itself at
/// once. Inside the scheduler that wake only sets the runtime's woken flag; with its queue run dry,
/// the runtime then polls the reactor and the timers with a zero timeout before it polls the
/// future again, as after `yield_now`.
fn yield_to_runtime() -> impl std::future::Future<Output = ()> {
    let mut yielded = false;
    std::future::poll_fn(move |cx| {
        if yielded {
            return std::task::Poll::Ready(());
        }
        yielded = true;
        cx.waker().wake_by_ref();
        std::task::Poll::Pending
    })
}

impl Drop for Inline {
    fn drop(&mut self) {
        // Connection tasks still alive are dropped here, closing their sockets.
        if let Some(rt) = self.rt.take() {
            if let Some(local) = &self.ctx.local {
                // Inside the runtime: the tasks' sockets deregister from its reactor.
                let _rt = rt.enter();
                local.shutdown();
            }
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
        assert!(!inline.tick(true), "the task parks on its socket");
        std::io::Write::write_all(&mut b, b"ping").unwrap();
        // The reactor reports the read in the tick's own poll; the task must run in that tick
        // (its readiness would not be reported again).
        inline.tick(true);
        assert_eq!(done.load(Ordering::SeqCst), 1);
    }

    /// As `Shared::spawn` does: on the local set.
    fn spawn_local(
        inline: &Inline,
        fut: impl std::future::Future<Output = ()> + Send + 'static,
    ) -> tokio::task::JoinHandle<()> {
        crate::driver::task::spawn(inline.ctx(), &inline.handle(), fut)
    }

    /// A task of the local set reading a socket; `done` turns 1 once it has read 4 bytes.
    fn local_reader(inline: &Inline) -> (std::os::unix::net::UnixStream, Arc<AtomicUsize>) {
        let (a, b) = std::os::unix::net::UnixStream::pair().unwrap();
        a.set_nonblocking(true).unwrap();
        let done = Arc::new(AtomicUsize::new(0));
        let d = done.clone();
        spawn_local(inline, async move {
            use tokio::io::AsyncReadExt;
            let mut a = tokio::net::UnixStream::from_std(a).unwrap();
            let mut buf = [0u8; 4];
            a.read_exact(&mut buf).await.unwrap();
            d.store(1, Ordering::SeqCst);
        });
        (b, done)
    }

    #[test]
    fn a_task_spawned_from_outside_a_tick_runs_in_a_tick_that_does_not_poll_the_reactor() {
        let inline = Inline::new().unwrap();
        let ran = Arc::new(AtomicUsize::new(0));
        let r = ran.clone();
        spawn_local(&inline, async move {
            r.fetch_add(1, Ordering::SeqCst);
        });
        assert_eq!(ran.load(Ordering::SeqCst), 0, "nothing runs before the tick");
        assert!(!inline.tick(false));
        assert_eq!(ran.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn a_local_task_woken_by_io_runs_in_the_tick_that_polls_the_reactor() {
        let inline = Inline::new().unwrap();
        let (mut b, done) = local_reader(&inline);
        assert!(!inline.tick(false), "the task parks on its socket");
        std::io::Write::write_all(&mut b, b"ping").unwrap();
        // A tick for JS's work leaves the reactor alone: the readiness waits for the loop.
        inline.tick(false);
        assert_eq!(done.load(Ordering::SeqCst), 0);
        // The reactor reports the read in the tick's own poll; the task runs in that tick.
        assert!(!inline.tick(true));
        assert_eq!(done.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn a_local_task_that_spends_its_cooperative_budget_is_not_stranded() {
        // 1,000 ready messages: more than tokio's per-poll budget (128), after which a task's wake
        // goes to `block_on`'s deferred list, which a tick that does not park again would drop.
        let inline = Inline::new().unwrap();
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<u32>();
        for i in 0..1000 {
            tx.send(i).unwrap();
        }
        drop(tx);
        let got = Arc::new(AtomicUsize::new(0));
        let g = got.clone();
        spawn_local(&inline, async move {
            while rx.recv().await.is_some() {
                g.fetch_add(1, Ordering::SeqCst);
            }
        });
        for _ in 0..4 {
            inline.tick(false);
        }
        assert_eq!(got.load(Ordering::SeqCst), 1000);
    }

    #[test]
    fn a_local_task_spawned_by_a_local_task_runs_in_the_same_tick() {
        let inline = Arc::new(Inline::new().unwrap());
        let ran = Arc::new(AtomicUsize::new(0));
        let (r, ctx, handle) = (ran.clone(), inline.ctx().clone(), inline.handle());
        spawn_local(&inline, async move {
            let r2 = r.clone();
            crate::driver::task::spawn(&ctx, &handle, async move {
                r2.fetch_add(1, Ordering::SeqCst);
            });
            r.fetch_add(1, Ordering::SeqCst);
        });
        assert!(!inline.tick(false));
        assert_eq!(ran.load(Ordering::SeqCst), 2);
    }

    #[test]
    fn a_runtime_task_spawned_by_a_local_task_runs_before_the_tick_ends() {
        // JoinSet members (`tracked`) go to the runtime's scheduler, where only a reactor poll
        // leads back to the tick's future: the tick must still run them.
        let inline = Inline::new().unwrap();
        let ran = Arc::new(AtomicUsize::new(0));
        let r = ran.clone();
        spawn_local(&inline, async move {
            let mut set = tokio::task::JoinSet::new();
            set.spawn(crate::driver::task::tracked(async move {
                r.fetch_add(1, Ordering::SeqCst);
            }));
            set.join_next().await;
        });
        assert!(!inline.tick(false));
        assert_eq!(ran.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn a_local_task_woken_from_another_thread_runs_in_the_next_reactor_tick() {
        let inline = Inline::new().unwrap();
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let done = Arc::new(AtomicUsize::new(0));
        let d = done.clone();
        spawn_local(&inline, async move {
            rx.await.unwrap();
            d.store(1, Ordering::SeqCst);
        });
        assert!(!inline.tick(false));
        let queued = inline.handle().metrics().global_queue_depth();
        std::thread::spawn(move || tx.send(()).unwrap()).join().unwrap();
        // The owner only ticks when told: the wake went through the runtime's queue from outside,
        // which wakes its reactor (the descriptor the owner watches turns readable).
        assert_eq!(inline.handle().metrics().global_queue_depth(), queued + 1);
        assert!(!inline.tick(true));
        assert_eq!(done.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn aborting_a_local_task_from_outside_a_tick_drops_it_in_the_next_reactor_tick() {
        let inline = Inline::new().unwrap();
        let (b, done) = local_reader(&inline);
        let h = spawn_local(&inline, std::future::pending());
        inline.tick(false);
        let queued = inline.handle().metrics().global_queue_depth();
        // As JS closing a pool does, outside a tick: the runtime is woken as from outside.
        h.abort();
        assert_eq!(inline.handle().metrics().global_queue_depth(), queued + 1);
        inline.tick(true);
        assert!(h.is_finished());
        drop((b, done));
    }

    #[test]
    fn dropping_the_driver_drops_its_local_tasks() {
        let inline = Inline::new().unwrap();
        let (mut b, done) = local_reader(&inline);
        inline.tick(false);
        drop(inline);
        // The task's end of the pair is closed: the peer reads EOF.
        let mut buf = [0u8; 1];
        assert_eq!(std::io::Read::read(&mut b, &mut buf).unwrap(), 0);
        assert_eq!(done.load(Ordering::SeqCst), 0);
    }

    #[test]
    fn a_deferred_wake_is_run_by_the_next_tick() {
        // Also by a tick from JS, which runs the set without `block_on` unless, as here, the wake
        // is of a task on the runtime's scheduler: outside `block_on` it goes through the
        // runtime's queue, and only `block_on` runs that.
        for reactor in [true, false] {
            let inline = Inline::new().unwrap();
            let (fut, waker, polls) = parked();
            spawn(&inline, fut);
            inline.tick(true);
            assert_eq!(polls.load(Ordering::SeqCst), 1);
            // As Pool::flush does from JS, outside a tick: the wake waits, and the owner knows
            // to tick.
            inline.ctx().defer_wakes(vec![waker.lock().take().unwrap()]);
            assert!(inline.has_deferred());
            assert_eq!(polls.load(Ordering::SeqCst), 1, "nothing runs before the tick");
            assert!(!inline.tick(reactor));
            assert_eq!(polls.load(Ordering::SeqCst), 2);
            assert!(!inline.has_deferred());
        }
    }

    /// A task that records its waker and counts its polls, never finishing.
    fn parked() -> (
        impl std::future::Future<Output = ()>,
        Arc<Mutex<Option<std::task::Waker>>>,
        Arc<AtomicUsize>,
    ) {
        let waker: Arc<Mutex<Option<std::task::Waker>>> = Arc::default();
        let polls = Arc::new(AtomicUsize::new(0));
        let (w, p) = (waker.clone(), polls.clone());
        let fut = std::future::poll_fn(move |cx| {
            p.fetch_add(1, Ordering::SeqCst);
            *w.lock() = Some(cx.waker().clone());
            std::task::Poll::<()>::Pending
        });
        (fut, waker, polls)
    }

    #[test]
    fn ticks_run_what_the_owner_woke_between_them_and_report_a_wake_after_the_last() {
        // The owner hands each tick's events to JS between the ticks, inside the runtime, where a
        // wake makes no reactor wake-up: the next tick must run it, and after the last one the
        // owner must hear that work is left.
        for on_runtime in [false, true] {
            let inline = Inline::new().unwrap();
            let (fut, waker, polls) = parked();
            if on_runtime {
                spawn(&inline, fut);
            } else {
                drop(spawn_local(&inline, fut));
            }
            inline.tick(true);
            assert_eq!(polls.load(Ordering::SeqCst), 1);
            let wake = || waker.lock().take().unwrap().wake();
            let mut round = 0;
            let left = inline.ticks(2, |_| {
                round += 1;
                if round == 1 {
                    wake();
                }
                true
            });
            assert_eq!(polls.load(Ordering::SeqCst), 2, "run by the second tick");
            assert!(!left);
            assert!(inline.ticks(1, |_| {
                wake();
                true
            }));
            assert_eq!(polls.load(Ordering::SeqCst), 2);
            inline.tick(true);
            assert_eq!(polls.load(Ordering::SeqCst), 3);
        }
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
        inline.tick(true);
        let due = inline.next_deadline().expect("recorded");
        assert!(due > Instant::now());
        std::thread::sleep(Duration::from_millis(40));
        inline.tick(true);
        assert_eq!(fired.load(Ordering::SeqCst), 1);
        assert_eq!(inline.next_deadline(), None);
    }
}
