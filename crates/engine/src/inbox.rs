//! Bytes JS hands the engine faster than it sends them on (a streamed request body, an upgraded
//! socket's writes, a bridged socket's reads) wait in an `Inbox`, bounded by a high-water mark:
//! past it, JS is told to wait for a drain event. Also the waker slot the engine's tasks park in.
use std::collections::VecDeque;
use std::task::Waker;

#[derive(Default)]
pub(crate) struct Inbox {
    pub chunks: VecDeque<Vec<u8>>,
    /// Bytes queued (for a reader that takes part of a chunk: bytes not yet read).
    pub bytes: usize,
    /// JS was told to wait (`push` returned false); it expects a drain event.
    pub drain_wanted: bool,
}

impl Inbox {
    /// Queues `chunk`. False once the queue reached `high_water`: JS should wait for a drain event.
    pub(crate) fn push(&mut self, chunk: Vec<u8>, high_water: usize) -> bool {
        self.bytes += chunk.len();
        if !chunk.is_empty() {
            self.chunks.push_back(chunk);
        }
        let below = self.bytes < high_water;
        if !below {
            self.drain_wanted = true;
        }
        below
    }
}

/// Keeps `w` in `slot` unless the waker there already wakes the same task.
pub(crate) fn store_waker(slot: &mut Option<Waker>, w: &Waker) {
    match slot {
        Some(old) if old.will_wake(w) => {}
        _ => *slot = Some(w.clone()),
    }
}
