//! ferro's HTTP engine: pure Rust, no N-API. The binding crate (`src/` at the repository root)
//! owns a [`Engine`] and moves its packed events to JavaScript.
// No unsafe code, except where a module says why: `conn` (buffers.rs reads into a buffer's spare
// capacity) and `driver` (task.rs projects a pin). Narrowing the allow to those files is an edit
// inside the modules.
#![deny(unsafe_code)]
// Items a private module marks `pub` must be reachable from outside the crate, or say pub(crate).
#![warn(unreachable_pub)]
pub mod cap;
#[cfg(test)]
mod cap_tests;
mod codes;
pub mod coding;
#[allow(unsafe_code)]
pub mod conn;
pub mod dns;
#[allow(unsafe_code)]
pub mod driver;
pub mod engine;
pub mod error;
pub mod events;
#[cfg(test)]
mod fuzz_seeds;
pub mod h1;
pub mod h2;
pub mod h3;
pub mod header_names;
mod inbox;
pub mod options;
mod owner;
#[cfg(any(test, feature = "fuzzing"))]
pub mod pieces;
pub mod pool;
pub mod registry;
pub mod request;
#[cfg(test)]
mod test_events;
pub mod timings;
pub mod transport;
pub mod ws;

pub use engine::{Engine, EngineCounts};
pub use error::ErrorCode;
pub use events::Batch;
pub use pool::{DispatchError, Pool, PoolOptions, PoolStats};
pub use registry::EventSink;
pub use request::{flags, StreamLength};
pub use transport::Target;

/// The numbers JS and the engine exchange, by group and name: event kinds (`events`), the frame
/// header's size (`frame`), error codes (`ErrorCode`) and request flags (`flags`). The binding
/// exposes it so a test can hold the TypeScript constants to it.
pub fn boundary_codes() -> [(&'static str, &'static [(&'static str, u32)]); 4] {
    [
        ("events", events::TABLE),
        ("frame", events::FRAME_TABLE),
        ("errors", ErrorCode::TABLE),
        ("flags", flags::TABLE),
    ]
}
