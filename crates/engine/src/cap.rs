//! A cap on connections across pools (an Agent's `maxGlobalConnections`). A pool takes a slot
//! before it opens a connection and gives it back when that connection ends, so the sockets of
//! all the pools sharing a cap never exceed its limit, whatever the timing. Pools refused a slot
//! wait in line; a freed slot goes to the waiting pool holding the fewest, the longest waiting
//! first among equals (round robin by origin); while one
//! waits, idle connections of the others are asked to close, and busy ones to leave after the
//! response they carry (`Pool::take`), so one origin cannot keep the slots to itself.
use parking_lot::Mutex;
use std::collections::VecDeque;
use std::sync::{Arc, Weak};

/// What the cap asks of a pool sharing it. `pool.rs` implements it: the cap names no pool type, so
/// pools (whose options hold the cap) and the cap do not depend on each other.
pub(crate) trait CapMember: Send + Sync {
    /// A slot came free for this waiting pool: it opens a connection if it still needs one.
    fn slot_freed(&self);
    /// Ends one idle connection so that its slot goes to a waiting pool: true if there was one.
    fn close_idle(&self) -> bool;
}

/// The same pool, whatever the pointer's type (a pool passes itself as `Weak<Pool>`).
fn same<A: ?Sized, B: ?Sized>(a: &Weak<A>, b: &Weak<B>) -> bool {
    std::ptr::addr_eq(a.as_ptr(), b.as_ptr())
}

pub struct ConnCap {
    limit: usize,
    state: Mutex<CapState>,
}

struct CapState {
    /// Slots taken: connections connecting or connected.
    open: usize,
    /// Pools refused a slot, oldest first.
    waiting: VecDeque<Weak<dyn CapMember>>,
    /// Every pool sharing the cap with the slots it holds (for the turns, and for closing idle
    /// connections to make room).
    pools: Vec<(Weak<dyn CapMember>, usize)>,
}

impl CapState {
    fn held<P: ?Sized>(&mut self, pool: &Weak<P>) -> Option<&mut usize> {
        self.pools.iter_mut().find(|(p, _)| same(p, pool)).map(|(_, n)| n)
    }
}

impl std::fmt::Debug for ConnCap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConnCap").field("limit", &self.limit).field("open", &self.open()).finish()
    }
}

impl ConnCap {
    pub fn new(limit: usize) -> Arc<ConnCap> {
        Arc::new(ConnCap {
            limit,
            state: Mutex::new(CapState { open: 0, waiting: VecDeque::new(), pools: Vec::new() }),
        })
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

    pub(crate) fn join(&self, pool: Weak<dyn CapMember>) {
        let mut st = self.state.lock();
        st.pools.retain(|(p, _)| p.strong_count() > 0);
        st.pools.push((pool, 0));
    }

    /// Takes a slot for `pool`, or puts it in line (once) and returns false.
    pub(crate) fn acquire<P: CapMember + 'static>(&self, pool: &Weak<P>) -> bool {
        let mut st = self.state.lock();
        if st.open < self.limit {
            st.open += 1;
            if let Some(n) = st.held(pool) {
                *n += 1;
            }
            return true;
        }
        if !st.waiting.iter().any(|p| same(p, pool)) {
            st.waiting.push_back(pool.clone() as Weak<dyn CapMember>);
        }
        false
    }

    /// `pool` waits for a slot.
    pub(crate) fn waits<P: CapMember + 'static>(&self, pool: &Weak<P>) -> bool {
        self.state.lock().waiting.iter().any(|p| same(p, pool))
    }

    /// Another pool than `pool` waits for a slot.
    pub(crate) fn others_wait<P: CapMember + 'static>(&self, pool: &Weak<P>) -> bool {
        self.state.lock().waiting.iter().any(|p| !same(p, pool))
    }

    /// `pool` gives `n` slots back and waiting pools take them, in turn. Called with no pool locked.
    pub(crate) fn release<P: CapMember + 'static>(&self, pool: &Weak<P>, n: usize) {
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
            if let Some(i) = st.waiting.iter().position(|p| same(p, pool)) {
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
                p.slot_freed();
            }
        }
    }

    /// `pool` waits and every slot is taken: asks one other pool to close an idle connection.
    /// Called with no pool locked.
    pub(crate) fn make_room<P: CapMember + 'static>(&self, pool: &Weak<P>) {
        let others: Vec<Arc<dyn CapMember>> = {
            let st = self.state.lock();
            if st.open < self.limit || !st.waiting.iter().any(|p| same(p, pool)) {
                return;
            }
            st.pools
                .iter()
                .filter(|(p, _)| !same(p, pool))
                .filter_map(|(p, _)| p.upgrade())
                .collect()
        };
        for p in others {
            if p.close_idle() {
                return;
            }
        }
    }
}
