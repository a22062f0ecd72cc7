//! A cap on connections across pools (an Agent's `maxGlobalConnections`). A pool takes a slot
//! before it opens a connection and gives it back when that connection ends, so the sockets of
//! all the pools sharing a cap never exceed its limit, whatever the timing. Pools refused a slot
//! wait in line; a freed slot goes to the waiting pool holding the fewest, the longest waiting
//! first among equals (round robin by origin); while one
//! waits, idle connections of the others are asked to close, and busy ones to leave after the
//! response they carry (`Pool::take`), so one origin cannot keep the slots to itself.
use crate::pool::Pool;
use parking_lot::Mutex;
use std::collections::VecDeque;
use std::sync::{Arc, Weak};

pub struct ConnCap {
    limit: usize,
    state: Mutex<CapState>,
}

struct CapState {
    /// Slots taken: connections connecting or connected.
    open: usize,
    /// Pools refused a slot, oldest first.
    waiting: VecDeque<Weak<Pool>>,
    /// Every pool sharing the cap with the slots it holds (for the turns, and for closing idle
    /// connections to make room).
    pools: Vec<(Weak<Pool>, usize)>,
}

impl CapState {
    fn held(&mut self, pool: &Weak<Pool>) -> Option<&mut usize> {
        self.pools.iter_mut().find(|(p, _)| p.ptr_eq(pool)).map(|(_, n)| n)
    }
}

impl std::fmt::Debug for ConnCap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConnCap").field("limit", &self.limit).field("open", &self.open()).finish()
    }
}

impl ConnCap {
    pub fn new(limit: usize) -> Arc<ConnCap> {
        Arc::new(ConnCap { limit, state: Mutex::new(CapState { open: 0, waiting: VecDeque::new(), pools: Vec::new() }) })
    }

    pub fn limit(&self) -> usize {
        self.limit
    }

    /// Slots taken now.
    pub fn open(&self) -> usize {
        self.state.lock().open
    }

    /// Pools waiting for a slot.
    pub fn waiting(&self) -> usize {
        self.state.lock().waiting.len()
    }

    pub(crate) fn join(&self, pool: Weak<Pool>) {
        let mut st = self.state.lock();
        st.pools.retain(|(p, _)| p.strong_count() > 0);
        st.pools.push((pool, 0));
    }

    /// Takes a slot for `pool`, or puts it in line (once) and returns false.
    pub(crate) fn acquire(&self, pool: &Weak<Pool>) -> bool {
        let mut st = self.state.lock();
        if st.open < self.limit {
            st.open += 1;
            if let Some(n) = st.held(pool) {
                *n += 1;
            }
            return true;
        }
        if !st.waiting.iter().any(|p| p.ptr_eq(pool)) {
            st.waiting.push_back(pool.clone());
        }
        false
    }

    /// `pool` waits for a slot.
    pub(crate) fn waits(&self, pool: &Weak<Pool>) -> bool {
        self.state.lock().waiting.iter().any(|p| p.ptr_eq(pool))
    }

    /// Another pool than `pool` waits for a slot.
    pub(crate) fn others_wait(&self, pool: &Weak<Pool>) -> bool {
        self.state.lock().waiting.iter().any(|p| !p.ptr_eq(pool))
    }

    /// `pool` gives `n` slots back and waiting pools take them, in turn. Called with no pool locked.
    pub(crate) fn release(&self, pool: &Weak<Pool>, n: usize) {
        if n == 0 {
            return;
        }
        {
            let mut st = self.state.lock();
            st.open -= n;
            if let Some(held) = st.held(pool) {
                *held = held.saturating_sub(n);
            }
            // It had its turn: if it waits for more, it goes behind the others.
            if let Some(i) = st.waiting.iter().position(|p| p.ptr_eq(pool)) {
                let me = st.waiting.remove(i).expect("in range");
                st.waiting.push_back(me);
            }
        }
        loop {
            let next = {
                let mut st = self.state.lock();
                if st.open >= self.limit || st.waiting.is_empty() {
                    return;
                }
                let mut best = 0;
                let mut fewest = usize::MAX;
                for i in 0..st.waiting.len() {
                    let w = st.waiting[i].clone();
                    let n = st.held(&w).map_or(0, |n| *n);
                    if n < fewest {
                        (best, fewest) = (i, n);
                    }
                }
                st.waiting.remove(best).expect("in range")
            };
            // A pool that no longer needs a connection takes nothing; the next in line is asked.
            if let Some(p) = next.upgrade() {
                p.kick_for_slot();
            }
        }
    }

    /// `pool` waits and every slot is taken: asks one other pool to close an idle connection.
    /// Called with no pool locked.
    pub(crate) fn make_room(&self, pool: &Weak<Pool>) {
        let others: Vec<Arc<Pool>> = {
            let st = self.state.lock();
            if st.open < self.limit || !st.waiting.iter().any(|p| p.ptr_eq(pool)) {
                return;
            }
            st.pools.iter().filter(|(p, _)| !p.ptr_eq(pool)).filter_map(|(p, _)| p.upgrade()).collect()
        };
        for p in others {
            if p.close_idle() {
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::owner::{ConnOwner, Taker};
    use crate::registry::Shared;
    use crate::test_events::Events;
    use crate::request::{flags, Request, StreamLength};
    use std::task::Waker;

    /// Takes up to `room` requests.
    struct Conn(usize, Vec<u32>);
    impl Taker for Conn {
        fn wants_more(&self) -> bool {
            self.1.len() < self.0
        }
        fn admits(&self, _: &Request) -> bool {
            true
        }
        fn submit(&mut self, req: Request) {
            self.1.push(req.id);
        }
    }

    /// An unlimited pool under `cap` with requests `ids` queued and flushed. Nothing is awaited,
    /// so the connection tasks it spawns never run: the tests play them.
    fn pool(cap: &Arc<ConnCap>, ids: std::ops::RangeInclusive<u32>) -> Arc<Pool> {
        let shared = Shared::new(tokio::runtime::Handle::current(), Arc::new(Events::default()), None);
        let mut opts = crate::options::PoolOptions::basic(crate::transport::Target::Tcp { host: "127.0.0.1".into(), port: 9 });
        opts.connections = 0;
        opts.cap = Some(cap.clone());
        let p = Pool::new(1, opts, shared);
        for id in ids {
            p.dispatch(id, "GET\0/\0".into(), None, flags::IDEMPOTENT, StreamLength::Chunked, None, None, false).unwrap();
        }
        p.flush();
        p
    }

    fn take(p: &Pool, conn: u64, room: usize) -> Vec<u32> {
        let mut c = Conn(room, Vec::new());
        p.take(conn, Waker::noop(), &mut c);
        c.1
    }

    #[tokio::test]
    async fn slots_never_exceed_the_limit_and_go_to_waiting_pools_in_turn() {
        let cap = ConnCap::new(2);
        let a = pool(&cap, 1..=3);
        assert_eq!((cap.open(), cap.waiting()), (2, 1), "two of a's three requests get a connection");
        let b = pool(&cap, 1..=2);
        assert_eq!((cap.open(), cap.waiting()), (2, 2), "b waits too");
        // A connection of a ends: a waited first, but holds a slot and b none: the slot is b's.
        a.connected(0, "h1", "");
        a.disconnected(0, crate::error::ErrorCode::Info, "closed", "");
        assert_eq!((cap.open(), cap.waiting()), (2, 1), "a waits again");
        // b's connection fails: the slot goes back to a.
        b.connect_failed(0, crate::error::ErrorCode::Socket, "", "", "refused");
        assert_eq!((cap.open(), cap.waiting()), (2, 0), "a holds both");
        b.destroy();
        a.destroy();
        assert_eq!((cap.open(), cap.waiting()), (0, 0), "every slot is back");
    }

    #[tokio::test]
    async fn a_waiting_pool_has_an_idle_connection_of_another_closed() {
        let cap = ConnCap::new(1);
        let a = pool(&cap, 1..=1);
        a.connected(0, "h1", "");
        assert_eq!(take(&a, 0, 1), vec![1]);
        // Served: it waits idle for more.
        assert_eq!(take(&a, 0, 1), Vec::<u32>::new());
        assert!(!a.finished());
        let b = pool(&cap, 1..=1);
        assert_eq!(cap.waiting(), 1);
        assert!(a.finished(), "a's idle connection is told to end");
        assert!(!a.finished(), "only one");
        a.disconnected(0, crate::error::ErrorCode::Info, "closed", "");
        assert_eq!((cap.open(), cap.waiting()), (1, 0), "b has the slot");
        drop(b);
    }

    #[tokio::test]
    async fn a_busy_connection_yields_its_slot_after_a_response_when_another_origin_waits() {
        let cap = ConnCap::new(1);
        let a = pool(&cap, 1..=3);
        a.connected(0, "h1", "");
        assert_eq!(take(&a, 0, 1), vec![1]);
        let b = pool(&cap, 1..=1);
        assert!(!a.finished(), "a's connection is busy");
        assert_eq!(take(&a, 0, 1), Vec::<u32>::new(), "b waits: a takes no more");
        assert!(a.finished(), "and ends");
        a.disconnected(0, crate::error::ErrorCode::Info, "closed", "");
        assert_eq!((cap.open(), cap.waiting()), (1, 1), "b has the slot, a waits");
        drop(b);
    }

    #[tokio::test]
    async fn without_waiters_a_connection_keeps_serving_its_pool() {
        let cap = ConnCap::new(1);
        let a = pool(&cap, 1..=2);
        assert_eq!(take(&a, 0, 1), vec![1]);
        assert_eq!(take(&a, 0, 1), vec![2]);
        assert!(!a.finished());
    }
}
