//! The pipeline of one HTTP/1.1 connection: the requests written on it that await their
//! responses, and the rules for it — which request may join it now (undici's pipelining rules)
//! and, when the connection dies, which of its requests go back to the queue and which fail.
//! Pure state: no I/O, no timers, so the rules are tested here directly.
use crate::error::ErrorCode;
use crate::request::{flags, ReqCtl, Request};
use std::collections::VecDeque;
use std::sync::Arc;

pub(super) struct InFlight {
    pub req: Request,
    /// Any byte of its response was seen (so it can no longer be re-sent).
    pub started: bool,
    /// The final (non-1xx) head arrived.
    pub head_done: bool,
    pub body_bytes: u64,
    /// Where its head starts in the write buffer, until the head starts going out.
    pub head_at: usize,
    /// Bytes the connection had read when the first byte of its head went out; None while none
    /// has. Its response cannot begin before that point: what does was sent before it was asked.
    pub sent_at: Option<u64>,
}

/// A request whose body is still arriving from JS through its pipe.
pub(super) struct Streaming {
    pub id: u32,
    pub ctl: Arc<ReqCtl>,
    /// Bytes still owed under Content-Length; None when chunked.
    pub remaining: Option<u64>,
}

pub(super) struct Pipeline {
    /// Requests at most in flight at once (the pool's `pipelining`, at least 1).
    cap: usize,
    pub inflight: VecDeque<InFlight>,
    /// Requests are only "written" once all of the write buffer went out; `unwritten` counts the
    /// tail of `inflight` still in it.
    pub unwritten: usize,
    /// A blocking request is outstanding without its headers: no more pipelining.
    pub blocked: bool,
    /// No more requests on this connection (reset requested, server said close, poisoned...).
    pub no_reuse: bool,
    /// Requests written on this connection so far.
    pub served: u64,
    /// Only one streamed body at a time, and nothing is pipelined behind it (undici's rule).
    pub streaming: Option<Streaming>,
}

impl Pipeline {
    pub(super) fn new(pipelining: usize) -> Pipeline {
        Pipeline {
            cap: pipelining.max(1),
            inflight: VecDeque::new(),
            unwritten: 0,
            blocked: false,
            no_reuse: false,
            served: 0,
            streaming: None,
        }
    }

    /// The connection has room for another request now.
    pub(super) fn wants_more(&self) -> bool {
        self.inflight.len() < self.cap
            && !self.blocked
            && !self.no_reuse
            && self.streaming.is_none()
    }

    /// undici's rules: an idle connection takes anything; only idempotent requests join a
    /// non-empty pipeline, and upgrades and streamed bodies never do.
    pub(super) fn admits(&self, next: &Request) -> bool {
        self.inflight.is_empty()
            || (next.has(flags::IDEMPOTENT)
                && !next.has(flags::UPGRADE)
                && !next.has(flags::STREAM_BODY))
    }

    /// The next request is the last `max_requests` allows on one connection (0: no limit).
    pub(super) fn next_is_last(&self, max_requests: u64) -> bool {
        max_requests > 0 && self.served + 1 >= max_requests
    }

    /// `req` was encoded into the write buffer: it joins the pipeline. `connect` says it is a
    /// CONNECT, `last` that it is the last this connection takes, `stream` the framing of a body
    /// still to come from JS (`Some(None)`: chunked).
    /// `head_at` is where its head starts in the write buffer.
    pub(super) fn push(
        &mut self,
        req: Request,
        head_at: usize,
        connect: bool,
        last: bool,
        stream: Option<Option<u64>>,
    ) {
        if req.has(flags::BLOCKING) {
            self.blocked = true;
        }
        if req.has(flags::RESET) || connect || req.has(flags::UPGRADE) || last {
            self.no_reuse = true;
        }
        self.served += 1;
        if let Some(remaining) = stream {
            self.streaming = Some(Streaming { id: req.id, ctl: req.ctl.clone(), remaining });
        }
        self.unwritten += 1;
        self.inflight.push_back(InFlight {
            req,
            started: false,
            head_done: false,
            body_bytes: 0,
            head_at,
            sent_at: None,
        });
    }

    /// `written` bytes of the write buffer went out (`all_out`: all of it), with `read` bytes read
    /// from the socket so far: the requests whose heads just started going out note that count.
    pub(super) fn note_sent(&mut self, written: usize, all_out: bool, read: u64) {
        // Heads go out in order: the ones not yet noted are a tail.
        for f in self.inflight.iter_mut().rev() {
            if f.sent_at.is_some() {
                break;
            }
            if all_out || f.head_at < written {
                f.sent_at = Some(read);
            }
        }
    }
}

/// What becomes of the requests aboard a connection that ended.
#[derive(Default)]
pub(super) struct Settled {
    /// Back to the pool's queue (JS hears RETRY), in pipeline order.
    pub requeue: Vec<Request>,
    /// Fail with the connection's cause.
    pub failed: Vec<u32>,
    /// Aborted by JS: nothing more is owed for them.
    pub aborted: Vec<u32>,
}

/// The retry rule: a request behind the head of the pipeline never had a chance, so it goes back
/// to the queue; the head may be re-sent only when no byte of its response arrived and the
/// failure is the connection's (a reused socket that turned out dead, or an abort of another
/// request), not the response's. Only idempotent requests with a body the engine still holds
/// are re-sent (as often as the pool's `requeue` allows). `served` counts the requests the
/// connection took.
pub(super) fn settle(
    inflight: VecDeque<InFlight>,
    served: u64,
    code: ErrorCode,
    aborted: bool,
) -> Settled {
    let mut out = Settled::default();
    let reused = served > inflight.len() as u64;
    for (i, f) in inflight.into_iter().enumerate() {
        if f.req.ctl.aborted() {
            out.aborted.push(f.req.id);
            continue;
        }
        let resendable = !f.started
            && f.req.has(flags::IDEMPOTENT)
            && !f.req.has(flags::STREAM_BODY)
            && (i > 0 || (reused && code == ErrorCode::Socket) || aborted);
        if resendable {
            out.requeue.push(f.req);
        } else {
            out.failed.push(f.req.id);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::StreamLength;

    fn req(id: u32, flags: u32) -> Request {
        Request {
            id,
            head: "GET\0/\0".into(),
            body: None,
            stream_length: StreamLength::Chunked,
            flags,
            limits: Default::default(),
            ctl: Arc::new(ReqCtl::default()),
            retries: 0,
        }
    }

    const GET: u32 = flags::IDEMPOTENT;
    const POST: u32 = 0;

    /// A pipeline of `cap` with `reqs` written, as `start` leaves it.
    fn with(cap: usize, reqs: &[(u32, u32)]) -> Pipeline {
        let mut p = Pipeline::new(cap);
        for &(id, f) in reqs {
            p.push(req(id, f), 0, false, false, None);
        }
        p
    }

    #[test]
    fn an_idle_connection_takes_any_request() {
        let p = with(1, &[]);
        assert!(p.wants_more());
        for f in [GET, POST, flags::UPGRADE, flags::STREAM_BODY, GET | flags::UPGRADE] {
            assert!(p.admits(&req(9, f)), "flags {f}");
        }
    }

    #[test]
    fn a_busy_connection_takes_only_idempotent_plain_requests() {
        let p = with(4, &[(1, GET)]);
        assert!(p.wants_more());
        assert!(p.admits(&req(2, GET)));
        assert!(!p.admits(&req(2, POST)), "non-idempotent waits for an idle connection");
        assert!(!p.admits(&req(2, GET | flags::UPGRADE)), "upgrades never join a pipeline");
        assert!(
            !p.admits(&req(2, GET | flags::STREAM_BODY)),
            "streamed bodies never join a pipeline"
        );
    }

    #[test]
    fn room_ends_at_the_pipelining_limit() {
        assert!(!with(1, &[(1, GET)]).wants_more(), "pipelining 1: one request at a time");
        assert!(!with(0, &[(1, GET)]).wants_more(), "0 counts as 1");
        let p = with(3, &[(1, GET), (2, GET)]);
        assert!(p.wants_more());
        assert!(!with(3, &[(1, GET), (2, GET), (3, GET)]).wants_more());
    }

    #[test]
    fn blocking_reset_upgrade_connect_and_streams_stop_the_pipeline() {
        let p = with(8, &[(1, GET | flags::BLOCKING)]);
        assert!(p.blocked && !p.wants_more(), "blocking: nothing until its headers");
        for f in [GET | flags::RESET, GET | flags::UPGRADE] {
            let p = with(8, &[(1, f)]);
            assert!(p.no_reuse && !p.wants_more(), "flags {f}");
        }
        let mut p = Pipeline::new(8);
        p.push(req(1, GET), 0, true, false, None);
        assert!(p.no_reuse, "a CONNECT takes the connection");
        let mut p = Pipeline::new(8);
        p.push(req(1, POST | flags::STREAM_BODY), 0, false, false, Some(Some(5)));
        assert!(!p.wants_more(), "nothing behind a streamed body");
        assert_eq!(p.streaming.as_ref().map(|s| (s.id, s.remaining)), Some((1, Some(5))));
    }

    #[test]
    fn max_requests_per_connection_makes_the_last_one_close() {
        let mut p = Pipeline::new(8);
        assert!(!p.next_is_last(0), "0: no limit");
        assert!(!p.next_is_last(2));
        p.push(req(1, GET), 0, false, false, None);
        assert!(p.next_is_last(2));
        p.push(req(2, GET), 0, false, true, None);
        assert!(p.no_reuse && !p.wants_more());
        assert_eq!(p.served, 2);
    }

    #[test]
    fn each_request_notes_what_was_read_when_its_head_started_going_out() {
        let sent = |p: &Pipeline| p.inflight.iter().map(|f| f.sent_at).collect::<Vec<_>>();
        let mut p = Pipeline::new(4);
        p.push(req(1, GET), 0, false, false, None);
        p.push(req(2, GET), 40, false, false, None);
        p.note_sent(10, false, 100);
        assert_eq!(
            sent(&p),
            [Some(100), None],
            "request 2's head is still waiting behind request 1"
        );
        p.note_sent(41, false, 150);
        assert_eq!(sent(&p), [Some(100), Some(150)]);
        // The buffer emptied and starts over: the next head is at its start.
        p.push(req(3, GET), 0, false, false, None);
        p.note_sent(5, true, 200);
        assert_eq!(sent(&p), [Some(100), Some(150), Some(200)]);
    }

    fn ids(r: &[Request]) -> Vec<u32> {
        r.iter().map(|r| r.id).collect()
    }

    #[test]
    fn requests_behind_the_head_go_back_to_the_queue() {
        // A fresh connection failed: the head may have reached the server, so it fails; the rest
        // never had a chance.
        let p = with(4, &[(1, GET), (2, GET), (3, GET)]);
        let s = settle(p.inflight, p.served, ErrorCode::Socket, false);
        assert_eq!(s.failed, vec![1]);
        assert_eq!(ids(&s.requeue), vec![2, 3]);
    }

    #[test]
    fn the_head_is_resent_when_a_reused_socket_turns_out_dead() {
        let mut p = with(4, &[(1, GET)]);
        p.inflight.pop_front(); // answered
        p.push(req(2, GET), 0, false, false, None);
        let s = settle(p.inflight, p.served, ErrorCode::Socket, false);
        assert_eq!(ids(&s.requeue), vec![2]);
        assert!(s.failed.is_empty());
    }

    #[test]
    fn the_head_fails_when_the_failure_is_the_responses() {
        // Reused, but a timeout or a parse error is about this response, not a stale socket.
        for code in [ErrorCode::HeadersTimeout, ErrorCode::Parser, ErrorCode::Info] {
            let mut p = with(4, &[(1, GET)]);
            p.inflight.pop_front();
            p.push(req(2, GET), 0, false, false, None);
            let s = settle(p.inflight, p.served, code, false);
            assert_eq!(s.failed, vec![2], "{code:?}");
        }
    }

    #[test]
    fn started_non_idempotent_and_streamed_requests_are_never_resent() {
        let mut p = with(4, &[(1, GET)]);
        p.inflight.pop_front();
        p.push(req(2, GET), 0, false, false, None);
        p.inflight[0].started = true;
        assert_eq!(
            settle(p.inflight, p.served, ErrorCode::Socket, false).failed,
            vec![2],
            "a response byte arrived"
        );

        let mut p = with(8, &[(1, GET)]);
        p.push(req(2, POST), 0, false, false, None);
        p.push(req(4, GET | flags::STREAM_BODY), 0, false, false, Some(None));
        p.push(req(5, GET), 0, false, false, None);
        let s = settle(p.inflight, p.served, ErrorCode::Socket, false);
        assert_eq!(s.failed, vec![1, 2, 4]);
        assert_eq!(ids(&s.requeue), vec![5]);
    }

    #[test]
    fn an_abort_resends_the_others_and_owes_nothing_for_the_aborted() {
        let p = with(4, &[(1, GET), (2, GET)]);
        p.inflight[1].req.ctl.abort();
        let s = settle(p.inflight, p.served, ErrorCode::Info, true);
        assert_eq!(s.aborted, vec![2]);
        assert_eq!(
            ids(&s.requeue),
            vec![1],
            "the head is re-sent: the abort was another request's"
        );
        assert!(s.failed.is_empty());
    }
}
