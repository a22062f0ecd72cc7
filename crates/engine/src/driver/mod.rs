//! What differs between the two ways the engine's tokio runtime is driven (issue 20):
//! - threaded: the runtime runs on its own thread and wakes JS through the event sink;
//! - inline: the JS thread ticks the runtime from its own event loop (the binding watches the
//!   reactor's descriptor and arms a loop timer for the earliest engine deadline).
//!
//! The connection code is the same for both. It only spawns through `Shared::spawn` / [`task::tracked`] and
//! sleeps through [`timer::Timer`], which record, for an inline runtime, which tasks were woken but
//! not yet polled and which deadlines are live: the two things tokio does not expose and an
//! outside event loop needs. On a threaded runtime both cost one branch / one thread-local read.
pub mod busy_poll;
pub mod inline;
mod local;
pub mod task;
pub mod timer;

pub use busy_poll::BusyPoll;
pub use inline::Inline;
pub use task::DriverCtx;
pub use timer::Timer;
