//! The bench server's connections and routes, as a library: `main.rs` serves them on plain TCP,
//! and crates/h3-test-server's `--bench` mode on TLS (`tls.rs`) beside its HTTP/3 side, so that a
//! bench compares HTTP/1.1, HTTP/2 and HTTP/3 against the same routes and the same cheap answers.
pub mod conn;
pub mod h2c;
pub mod routes;
pub mod tls;
