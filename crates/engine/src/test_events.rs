//! Tests only: an `EventSink` that records every event a session writes, for the session tests
//! that drive a connection over a socket (`h2/session_tests.rs`, `conn/http1_tests.rs`).
use crate::events::Batch;
use crate::registry::EventSink;
use parking_lot::Mutex;
use std::task::Waker;
use std::time::Duration;

/// Records every event as (kind, id, payload), and says when one arrives.
#[derive(Default)]
pub(crate) struct Events(Mutex<Vec<(u8, u32, Vec<u8>)>>, tokio::sync::Notify);
impl EventSink for Events {
    fn write(&self, write: &mut dyn FnMut(&mut Batch)) -> bool {
        let mut batch = Batch::default();
        write(&mut batch);
        for f in crate::events::frames(&batch.bytes) {
            self.0.lock().push((f.kind, f.id, f.payload.to_vec()));
        }
        self.1.notify_waiters();
        false
    }
    fn signal(&self) {}
    fn congested(&self, _: &Waker) -> bool {
        false
    }
}

impl Events {
    /// The payload of the first `kind` event for `id`, or None if none came within 2 s.
    pub(crate) async fn until(&self, kind: u8, id: u32) -> Option<Vec<u8>> {
        let found = async {
            loop {
                // Registered before looking, so an event written in between still wakes it.
                let arrived = self.1.notified();
                if let Some(p) = self.find(kind, id) {
                    return p;
                }
                arrived.await;
            }
        };
        tokio::time::timeout(Duration::from_secs(2), found).await.ok()
    }

    /// The payload of the first `kind` event for `id` so far.
    pub(crate) fn find(&self, kind: u8, id: u32) -> Option<Vec<u8>> {
        self.0.lock().iter().find(|(k, i, _)| *k == kind && *i == id).map(|(_, _, p)| p.clone())
    }

    /// The payloads of every `kind` event for `id` so far, in order.
    pub(crate) fn all(&self, kind: u8, id: u32) -> Vec<Vec<u8>> {
        let events = self.0.lock();
        events
            .iter()
            .filter(|(k, i, _)| *k == kind && *i == id)
            .map(|(_, _, p)| p.clone())
            .collect()
    }

    /// The kinds of the events for `id` so far, in order.
    pub(crate) fn kinds(&self, id: u32) -> Vec<u8> {
        self.0.lock().iter().filter(|(_, i, _)| *i == id).map(|(k, _, _)| *k).collect()
    }
}

/// An error record's fields (`events.rs`): code, errno, socket, message.
pub(crate) fn error_record(p: &[u8]) -> (u16, String, String, String) {
    let u16_at = |at: usize| u16::from_le_bytes([p[at], p[at + 1]]);
    let text = |r: std::ops::Range<usize>| String::from_utf8_lossy(&p[r]).into_owned();
    let el = usize::from(u16_at(2));
    let sl = usize::from(u16_at(4 + el));
    let socket_at = 6 + el;
    (u16_at(0), text(4..4 + el), text(socket_at..socket_at + sl), text(socket_at + sl..p.len()))
}
