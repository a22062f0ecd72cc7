//! ferro's HTTP engine: pure Rust, no N-API. The binding crate (`src/` at the repository root)
//! owns a [`Engine`] and moves its packed events to JavaScript.
pub mod conn;
pub mod decode;
pub mod dns;
pub mod engine;
pub mod error;
pub mod events;
pub mod h1;
pub mod h2;
#[cfg(any(test, feature = "fuzzing"))]
pub mod pieces;
pub mod pool;
pub mod request;
pub mod transport;
pub mod ws;

pub use engine::{Engine, EngineCounts, EventSink};
pub use error::ErrorCode;
pub use pool::{DispatchError, Pool, PoolOptions, PoolStats};
pub use request::{flags, StreamLength};
pub use transport::Target;
