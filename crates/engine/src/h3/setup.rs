//! HTTP/3 set up over an established (or 0-RTT) QUIC connection: its control and QPACK streams.
//! Its own module because both the session and the 0-RTT path (which rebuilds HTTP/3 on the same
//! QUIC connection when the server rejects early data) start one.
use bytes::Bytes;
use h3::client::SendRequest;
use h3_quinn::OpenStreams;
use quinn::Connection;

/// What drives an HTTP/3 connection's control streams.
pub(super) type Driver = h3::client::Connection<h3_quinn::Connection, Bytes>;
/// An HTTP/3 connection set up over a QUIC connection: its driver and request sender.
pub(super) type Built =
    Result<(Driver, SendRequest<OpenStreams, Bytes>), h3::error::ConnectionError>;

/// Sets up HTTP/3 over `conn` (its control and QPACK streams).
pub(super) async fn h3_over(conn: Connection, max_field: u64) -> Built {
    h3::client::builder()
        .max_field_section_size(max_field)
        .send_grease(false)
        .build::<_, _, Bytes>(h3_quinn::Connection::new(conn))
        .await
}
