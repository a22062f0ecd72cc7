//! N-API binding glue for the ferro engine: the event queue that wakes the JS thread, the handle
//! classes JS calls synchronously, and option parsing. No HTTP logic lives here.
#![deny(clippy::all)]
// Every unsafe block states the invariant it relies on (`// SAFETY: …`): all of them are N-API or
// libuv calls (queue.rs, inline.rs, timings.rs) whose contracts the compiler cannot check.
#![deny(clippy::undocumented_unsafe_blocks)]

mod binding;
mod coding;
mod conn_cap;
mod dns;
#[cfg(target_os = "linux")]
mod inline;
// Only JS calls into it, and test builds register nothing with napi.
#[cfg_attr(test, allow(dead_code))]
mod hot_calls;
mod queue;
mod request_head;
mod timings;
mod tls_config;
mod websocket;
