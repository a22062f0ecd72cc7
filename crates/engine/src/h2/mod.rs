//! HTTP/2 over a connection whose ALPN chose `h2`: the `h2` crate does framing, HPACK and flow
//! control; this module maps the pool's requests onto streams and the streams' results onto the
//! same events HTTP/1.1 produces, so everything above the engine is protocol-agnostic.
#[cfg(any(test, feature = "fuzzing"))]
pub mod check;
mod counted;
pub mod options;
pub(crate) mod request;
pub(crate) mod response;
pub mod session;
#[cfg(test)]
mod session_tests;
mod stream;

pub use options::H2Options;
