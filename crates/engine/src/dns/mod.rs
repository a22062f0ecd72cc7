//! Name resolution for the engine: one TTL cache for the whole process (every engine and pool
//! shares it), lookups on blocking threads (never on the JS thread), and happy-eyeballs connects
//! (RFC 8305) whose failed addresses rotate to the back of the cached list.
mod cache;
mod happy;
#[cfg(test)]
mod tests;

pub use cache::{resolver, LookupError, Resolver, DEFAULT_TTL};
pub use happy::{connect, interleave, DialError};
