//! Whether the inline driver's owner waits for a reply awake, and for how long, before its event
//! loop sleeps (issue 33, latency).
//!
//! With client and server on different CPUs, a thread that sleeps in `epoll_wait` until the reply
//! comes is woken from the other CPU: on this project's VMs that wake-up is about half of a
//! serial loopback exchange, for any client. Polling for the reply for a few tens of µs instead
//! takes it out: the reply is read as soon as it lands, and the CPU the wait burns is about what
//! the sleep and the wake-up cost (docs/performance/latency.md, "Waiting awake"). That only pays
//! when replies come within the budget (a server on the same host); for any other server every
//! wait would burn its whole budget. So each wait that ran out backs the next ones off: after a
//! miss the next `backoff` chances are skipped, and `backoff` doubles (up to `MAX_BACKOFF`), while
//! a reply that came in time halves it. A remote server thus costs one budget per `MAX_BACKOFF`
//! sleeps once the backoff has grown, and a server that answers fast keeps being waited for.
use std::time::Duration;

/// The most sleeps skipped between two waits: a wait that keeps missing costs at most its budget
/// once per this many loop turns.
pub const MAX_BACKOFF: u32 = 1024;

/// The budget when the owner sets none. Measured on this project's 2-vCPU VMs
/// (docs/performance/latency.md, "Waiting awake"): a fast local server's reply lands within 10 µs
/// of the loop's last callback, and a node:http server's often within 15; from 25 µs on, waiting
/// for the slower server costs more CPU than the sleep and wake-up it saves.
pub const DEFAULT_BUDGET: Duration = Duration::from_micros(15);

/// The wait policy of one event loop. `Copy`: the owner keeps it in a `Cell`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BusyPoll {
    budget: Duration,
    /// Chances still to skip after the last miss.
    skip: u32,
    /// Chances skipped after the next miss.
    backoff: u32,
    /// Waits made, and of them those the loop woke from before they ran out (for the tests and
    /// the owner's diagnostics).
    waits: u64,
    woke: u64,
}

impl BusyPoll {
    /// A policy that waits up to `budget`; a zero budget never waits.
    pub fn new(budget: Duration) -> BusyPoll {
        BusyPoll { budget, skip: 0, backoff: 0, waits: 0, woke: 0 }
    }

    /// The loop is about to sleep with replies due: how long to wait awake first, if at all.
    /// `limit` is when the loop would wake anyway (its next timer), None when nothing is due.
    pub fn start(&mut self, limit: Option<Duration>) -> Option<Duration> {
        if self.budget.is_zero() {
            return None;
        }
        if self.skip > 0 {
            self.skip -= 1;
            return None;
        }
        let wait = limit.map_or(self.budget, |l| l.min(self.budget));
        (!wait.is_zero()).then_some(wait)
    }

    /// What the wait `start` gave came to: `woke`, the loop had something to do before it ran out.
    pub fn end(&mut self, woke: bool) {
        self.waits += 1;
        if woke {
            self.woke += 1;
            self.backoff /= 2;
        } else {
            self.backoff = (self.backoff * 2).clamp(1, MAX_BACKOFF);
            self.skip = self.backoff;
        }
    }

    /// Waits made so far, and how many of them ended with something to do.
    pub fn counts(&self) -> (u64, u64) {
        (self.waits, self.woke)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const B: Duration = Duration::from_micros(50);

    /// Runs `n` chances whose waits all end as `woke`; how many of them waited.
    fn run(p: &mut BusyPoll, n: u32, woke: bool) -> u32 {
        let mut waited = 0;
        for _ in 0..n {
            if p.start(None).is_some() {
                waited += 1;
                p.end(woke);
            }
        }
        waited
    }

    #[test]
    fn a_server_that_answers_in_time_is_waited_for_every_time() {
        let mut p = BusyPoll::new(B);
        assert_eq!(run(&mut p, 1000, true), 1000);
        assert_eq!(p.start(None), Some(B));
        assert_eq!(p.counts(), (1000, 1000));
    }

    #[test]
    fn a_server_that_never_answers_in_time_costs_one_wait_per_max_backoff_chances() {
        let mut p = BusyPoll::new(B);
        // 1 + 2 + 4 + … + 1024 chances to grow the backoff: 11 waits; then one per 1025 chances.
        assert_eq!(run(&mut p, 2047, false), 11);
        assert_eq!(run(&mut p, 1025 * 100, false), 100);
        assert_eq!(p.counts(), (111, 0));
    }

    #[test]
    fn replies_in_time_shrink_the_backoff_a_miss_grew() {
        let mut p = BusyPoll::new(B);
        run(&mut p, 2047, false);
        assert_eq!(p.backoff, MAX_BACKOFF);
        // Skip out the current backoff, then every wait answered: halves each time.
        while p.start(None).is_none() {}
        p.end(true);
        assert_eq!(p.backoff, MAX_BACKOFF / 2);
        assert_eq!(p.start(None), Some(B), "a reply in time skips nothing before the next wait");
        for _ in 0..10 {
            p.end(true);
            p.start(None);
        }
        assert_eq!(p.backoff, 0);
    }

    #[test]
    fn the_wait_ends_at_the_loops_next_timer_and_a_zero_budget_never_waits() {
        let mut p = BusyPoll::new(B);
        assert_eq!(p.start(Some(Duration::from_micros(20))), Some(Duration::from_micros(20)));
        assert_eq!(p.start(Some(Duration::ZERO)), None, "a loop that will not sleep is not held");
        assert_eq!(p.start(Some(Duration::from_secs(1))), Some(B));
        let mut off = BusyPoll::new(Duration::ZERO);
        assert_eq!(off.start(None), None);
    }
}
