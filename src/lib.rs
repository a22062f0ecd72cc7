//! N-API binding glue for the ferro engine: the event queue that wakes the JS thread, the handle
//! classes JS calls synchronously, and option parsing. No HTTP logic lives here.
#![deny(clippy::all)]

mod binding;
mod decoder;
mod dns;
#[cfg(target_os = "linux")]
mod inline;
mod queue;
mod tls_config;
mod websocket;
