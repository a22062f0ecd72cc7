//! quinn's runtime on the engine's driver: its timers are the engine's `Timer` and its tasks are
//! spawned tracked, so an inline runtime (ticked from Node's event loop) sees QUIC's deadlines
//! (retransmission, idle timeout) and wakes; sockets are tokio's, as quinn's own tokio runtime has
//! them.
use crate::driver::task::tracked;
use crate::driver::Timer;
use quinn::{AsyncTimer, AsyncUdpSocket, Runtime, TokioRuntime};
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Instant;

#[derive(Debug)]
pub(super) struct EngineRuntime;

struct QuicTimer(Timer);

impl fmt::Debug for QuicTimer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("QuicTimer")
    }
}

impl AsyncTimer for QuicTimer {
    fn reset(self: Pin<&mut Self>, i: Instant) {
        self.get_mut().0.as_mut().reset(tokio::time::Instant::from_std(i));
    }
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        self.get_mut().0.as_mut().poll(cx)
    }
}

impl Runtime for EngineRuntime {
    fn new_timer(&self, i: Instant) -> Pin<Box<dyn AsyncTimer>> {
        Box::pin(QuicTimer(Timer::at(tokio::time::Instant::from_std(i))))
    }
    fn spawn(&self, future: Pin<Box<dyn Future<Output = ()> + Send>>) {
        tokio::spawn(tracked(future));
    }
    fn wrap_udp_socket(&self, t: std::net::UdpSocket) -> std::io::Result<Arc<dyn AsyncUdpSocket>> {
        TokioRuntime.wrap_udp_socket(t)
    }
}
