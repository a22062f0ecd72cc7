//! The engine's one sleep: tokio's `Sleep`, plus, on an inline runtime, a record of its deadline
//! while a task waits on it, so the JS event loop can arm its own timer for the earliest one
//! (tokio does not expose its next deadline). Only timers a task is parked on are recorded, and
//! a record goes when the timer fires, is reset or is dropped, so the set stays as small as the
//! number of waiting tasks. On a threaded runtime the record step is one thread-local read.
use super::task::{current, DriverCtx};
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::time::{Instant, Sleep};

pub struct Timer {
    sleep: Pin<Box<Sleep>>,
    /// Where this timer's deadline is recorded (inline runtimes, while a task waits on it).
    slot: Option<(Arc<DriverCtx>, (Instant, u64))>,
}

impl Timer {
    pub fn at(deadline: Instant) -> Timer {
        Timer { sleep: Box::pin(tokio::time::sleep_until(deadline)), slot: None }
    }
    pub fn after(d: Duration) -> Timer {
        Timer::at(Instant::now() + d)
    }
    /// Lets call sites written for `Pin<Box<Sleep>>` (`timer.as_mut().reset(..)`) stay as they are.
    pub fn as_mut(&mut self) -> Pin<&mut Timer> {
        Pin::new(self)
    }
    pub fn reset(self: Pin<&mut Self>, deadline: Instant) {
        let this = self.get_mut();
        this.forget();
        this.sleep.as_mut().reset(deadline);
    }
    pub fn is_elapsed(&self) -> bool {
        self.sleep.is_elapsed()
    }

    fn forget(&mut self) {
        if let Some((ctx, key)) = self.slot.take() {
            ctx.timers.lock().remove(&key);
        }
    }

    fn record(&mut self) {
        let deadline = self.sleep.deadline();
        if matches!(&self.slot, Some((_, (at, _))) if *at == deadline) {
            return;
        }
        self.forget();
        if let Some(ctx) = current() {
            let key = (deadline, ctx.next_timer.fetch_add(1, Ordering::Relaxed));
            ctx.timers.lock().insert(key);
            self.slot = Some((ctx, key));
        }
    }
}

impl Future for Timer {
    type Output = ();
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = self.get_mut();
        match this.sleep.as_mut().poll(cx) {
            Poll::Ready(()) => {
                this.forget();
                Poll::Ready(())
            }
            Poll::Pending => {
                this.record();
                Poll::Pending
            }
        }
    }
}

impl Drop for Timer {
    fn drop(&mut self) {
        self.forget();
    }
}

/// `fut`, or `Err(Elapsed)` once `d` has passed (tokio's `timeout`, on a recorded timer).
pub async fn timeout<T>(d: Duration, fut: impl Future<Output = T>) -> Result<T, Elapsed> {
    let mut timer = Timer::after(d);
    let mut fut = std::pin::pin!(fut);
    std::future::poll_fn(|cx| {
        if let Poll::Ready(v) = fut.as_mut().poll(cx) {
            return Poll::Ready(Ok(v));
        }
        Pin::new(&mut timer).poll(cx).map(|()| Err(Elapsed))
    })
    .await
}

/// The deadline passed before the future finished.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Elapsed;
