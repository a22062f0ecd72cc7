//! The Rust → JS event path (DESIGN §2): engine threads append packed events to one queue; only
//! the append that makes the queue non-empty signals the JS thread, through one long-lived
//! threadsafe function; the JS callback receives everything queued as Buffers (see `deliver`).
use ferro_engine::{events, Batch, EventSink};
use napi::sys;
use parking_lot::Mutex;
use std::ffi::c_void;
use std::ptr;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::Waker;

struct Tsfn(sys::napi_threadsafe_function);
// SAFETY: napi_call_threadsafe_function is documented as callable from any thread; the handle is
// only used under the queue lock, and cleared there before Node finalizes it.
unsafe impl Send for Tsfn {}

struct Inner {
    buf: Batch,
    /// The batch `deliver` copied out last, cleared, to become `buf` at the next take.
    spare: Batch,
    tsfn: Option<Tsfn>,
    /// Connections waiting for JS to catch up (see `congested`).
    blocked: Vec<Waker>,
}

/// Where small pieces are copied for JS: one ArrayBuffer that successive pieces fill, each handed
/// out as a view (an arena, as Node's own Buffer pool). A fresh Buffer per piece cost a `malloc`, a
/// V8 backing store and its extension (three allocations, freed again by the collector), about
/// 1 µs of a serial exchange whose batch is one small response (docs/performance/latency.md).
/// Held weakly: views keep it alive, and once none does the collector may take it (then the next
/// piece starts another). Only touched on the JS thread.
struct Arena {
    weak: sys::napi_ref,
    data: *mut u8,
    used: usize,
}
// SAFETY: the reference and the pointer are only used on the JS thread (`deliver`); the Mutex
// around the Arena only lets the Queue, shared with engine threads, hold it.
unsafe impl Send for Arena {}

/// The arena's size, and the largest piece copied into it: as Node's Buffer pool (8 KiB, pieces
/// under half of it), so a small chunk kept alive pins at most what Node's own small Buffers pin.
const ARENA: usize = 8 * 1024;
const ARENA_PIECE: usize = ARENA / 2;

pub(crate) struct Queue {
    inner: Mutex<Inner>,
    arena: Mutex<Arena>,
    /// The JS thread drives the engine (src/inline.rs) and takes the queue after each tick, so
    /// the engine's signals are not needed.
    inline: AtomicBool,
    /// `buf.len()` as of the last append or take: connections ask `congested` on every poll,
    /// and below the high-water mark (nearly always) the answer needs no lock.
    queued: AtomicUsize,
}

const BATCH_CAPACITY: usize = 16 * 1024;
/// A batch vector that grew past this is dropped once copied out (one burst must not pin it).
const RETAIN_CAPACITY: usize = 8 * 1024 * 1024;
/// Most bytes of one Buffer handed to JS, unless a single event is larger (see `deliver`).
const PIECE: usize = 112 * 1024;
/// Undelivered bytes beyond which connections stop reading until JS takes the queue. Large enough
/// that a busy JS thread still gets big batches, small enough to bound memory.
const HIGH_WATER: usize = 4 * 1024 * 1024;

impl EventSink for Queue {
    fn write(&self, write: &mut dyn FnMut(&mut Batch)) -> bool {
        let mut g = self.inner.lock();
        let was_empty = g.buf.is_empty();
        write(&mut g.buf);
        self.queued.store(g.buf.len(), Ordering::Relaxed);
        was_empty && !g.buf.is_empty()
    }

    fn signal(&self) {
        if !self.inline.load(Ordering::Relaxed) {
            self.hop();
        }
    }

    fn congested(&self, waker: &Waker) -> bool {
        // Stale by at most an append or a take made meanwhile, which the next poll sees; a
        // waker registered below is woken by the take that empties the queue.
        if self.queued.load(Ordering::Relaxed) < HIGH_WATER {
            return false;
        }
        let mut g = self.inner.lock();
        if g.buf.len() < HIGH_WATER {
            return false;
        }
        if !g.blocked.iter().any(|w| w.will_wake(waker)) {
            g.blocked.push(waker.clone());
        }
        true
    }
}

impl Queue {
    /// Has JS take the queue on a later turn of its event loop (through the threadsafe function).
    pub(crate) fn hop(&self) {
        let g = self.inner.lock();
        if g.buf.is_empty() {
            return; // JS already took it (a synchronous drain)
        }
        if let Some(t) = &g.tsfn {
            // Non-blocking on an unbounded queue: never waits. Its one failure, napi_closing,
            // means Node is finalizing the function and no JS will take the queue anyway.
            // SAFETY: callable from any thread; `t` is still ours: it is taken out of `tsfn`
            // under this lock before it is released (`close`) or finalized (`finalize`).
            let status = unsafe {
                sys::napi_call_threadsafe_function(
                    t.0,
                    ptr::null_mut(),
                    sys::ThreadsafeFunctionCallMode::nonblocking,
                )
            };
            debug_assert!(
                status == sys::Status::napi_ok || status == sys::Status::napi_closing,
                "napi_call_threadsafe_function: {status}"
            );
        }
    }

    /// The engine is driven inline from now on (see `inline`).
    pub(crate) fn set_inline(&self) {
        self.inline.store(true, Ordering::Relaxed);
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.inner.lock().buf.is_empty()
    }

    /// Hands everything queued to `call` as JS Buffers (copies), in order: the packed events as
    /// one Buffer, or for a large batch several, each of whole events and at most `PIECE` bytes
    /// unless one event alone is larger; with each, the payloads of its DATA_OWN events as Buffers
    /// of their own (`call`'s second argument, an array in event order). Nothing is called when
    /// nothing is queued.
    ///
    /// The copies go into memory V8 allocates and accounts for, and the vector is kept for a later
    /// batch. Handing each batch's vector over as an external Buffer (as before) saved the copy
    /// but cost an allocation, a backing store and a finalizer per batch; V8 did not count the
    /// vectors, and freed in bulk at collections they fragmented the heap: with 64 KiB bodies
    /// under the inline driver peak RSS reached 280–760 MB, against 120–150 MB with the copy, at
    /// the same throughput. Pieces stay below malloc's mmap threshold (128 KiB), so their memory
    /// is reused rather than mapped and zero-filled afresh for each (with 64 KiB bodies, `dispatch`:
    /// ~10 page faults per response before, ~2 after). Payloads beside the events don't count
    /// towards a piece's size, so a response's head, body and end reach JS in one call: splitting
    /// them let `request()` see the body before its end, pause the engine at its high-water mark
    /// and resume it, which cost ~20 µs per response. A large payload is copied once, from the
    /// read buffer into a Buffer of its own, which `arrayBuffer()` can hand out as it is.
    ///
    /// # Safety
    /// On the JS thread, inside a handle scope of `env`.
    pub(crate) unsafe fn deliver(
        &self,
        env: sys::napi_env,
        mut call: impl FnMut(sys::napi_value, Option<sys::napi_value>, Option<(u32, u32)>),
    ) {
        // Swap in the spare batch, so engine threads append to it while this one is copied.
        let (mut batch, blocked) = {
            let mut g = self.inner.lock();
            if g.buf.is_empty() {
                return;
            }
            let spare = std::mem::take(&mut g.spare);
            self.queued.store(0, Ordering::Relaxed);
            (std::mem::replace(&mut g.buf, spare), std::mem::take(&mut g.blocked))
        };
        for w in blocked {
            w.wake();
        }
        let (mut at, mut next_own) = (0, 0);
        while at < batch.bytes.len() {
            let (end, owns) = plan_piece(&batch.bytes, at);
            let piece = &batch.bytes[at..end];
            let mut out = ptr::null_mut();
            // SAFETY: on the JS thread inside a handle scope (this function's contract).
            let view = unsafe { self.arena_copy(env, piece) };
            let status = match view {
                Some((ab, _)) => {
                    out = ab;
                    sys::Status::napi_ok
                }
                // SAFETY: as above; `piece` is borrowed for the call, which copies it, and `out`
                // is a local.
                None => unsafe {
                    sys::napi_create_buffer_copy(
                        env,
                        piece.len(),
                        piece.as_ptr().cast(),
                        ptr::null_mut(),
                        &mut out,
                    )
                },
            };
            let own = &batch.own()
                [next_own.min(batch.own().len())..(next_own + owns).min(batch.own().len())];
            // SAFETY: as above (own_buffers has this function's contract).
            let blobs = if own.is_empty() { None } else { unsafe { own_buffers(env, own) } };
            at = end;
            next_own += owns;
            if status == sys::Status::napi_ok {
                call(out, blobs, view.map(|(_, off)| (off as u32, piece.len() as u32)));
            }
        }
        batch.clear();
        if batch.bytes.capacity() > RETAIN_CAPACITY {
            batch = Batch::with_capacity(BATCH_CAPACITY);
        }
        self.inner.lock().spare = batch;
    }

    /// Copies `piece` into the arena: the arena's ArrayBuffer and where the piece starts in it.
    /// None when the piece is too large for it or N-API refuses (the caller makes a Buffer).
    ///
    /// # Safety
    /// On the JS thread, inside a handle scope of `env`.
    unsafe fn arena_copy(
        &self,
        env: sys::napi_env,
        piece: &[u8],
    ) -> Option<(sys::napi_value, usize)> {
        if piece.len() > ARENA_PIECE {
            return None;
        }
        let mut a = self.arena.lock();
        let mut ab = ptr::null_mut();
        let mut detached = false;
        // SAFETY: per the contract; `a.weak` is a live reference of `env` (made below, deleted
        // only here), and the out-pointers are locals. A collected arena reads as null.
        unsafe {
            if !a.weak.is_null() {
                sys::napi_get_reference_value(env, a.weak, &mut ab);
            }
            // Transferred away (postMessage, structuredClone): its memory is someone else's now.
            if !ab.is_null() {
                sys::napi_is_detached_arraybuffer(env, ab, &mut detached);
            }
        }
        if ab.is_null() || detached || a.used + piece.len() > ARENA {
            let (mut data, mut weak) = (ptr::null_mut(), ptr::null_mut());
            // SAFETY: per the contract; the out-pointers are locals, the old reference is ours
            // and deleted once (replaced right after).
            unsafe {
                if !a.weak.is_null() {
                    sys::napi_delete_reference(env, a.weak);
                    a.weak = ptr::null_mut();
                }
                if sys::napi_create_arraybuffer(env, ARENA, &mut data, &mut ab)
                    != sys::Status::napi_ok
                    || sys::napi_create_reference(env, ab, 0, &mut weak) != sys::Status::napi_ok
                {
                    return None;
                }
            }
            *a = Arena { weak, data: data.cast(), used: 0 };
        }
        let off = a.used;
        // SAFETY: `ab` is alive (a handle of this scope) and not detached, so its ARENA bytes at
        // `data` are valid; `off + piece.len() <= ARENA` (checked above), and the source is a
        // Rust slice, which cannot overlap V8's memory.
        unsafe { ptr::copy_nonoverlapping(piece.as_ptr(), a.data.add(off), piece.len()) };
        a.used += piece.len();
        Some((ab, off))
    }

    /// Creates the queue and its threadsafe function around `callback` (called with one Buffer).
    /// The function starts unref'd: it keeps the process alive only while requests are in flight.
    pub(crate) fn new(env: sys::napi_env, callback: sys::napi_value) -> napi::Result<Arc<Queue>> {
        let queue = Arc::new(Queue {
            inner: Mutex::new(Inner {
                buf: Batch::with_capacity(BATCH_CAPACITY),
                spare: Batch::with_capacity(BATCH_CAPACITY),
                tsfn: None,
                blocked: Vec::new(),
            }),
            arena: Mutex::new(Arena { weak: ptr::null_mut(), data: ptr::null_mut(), used: 0 }),
            inline: AtomicBool::new(false),
            queued: AtomicUsize::new(0),
        });
        let mut name = ptr::null_mut();
        let label = "ferro.events";
        // SAFETY: called from a JS call on the JS thread, so `env` is live; `label` outlives the
        // call that copies it and `name` is a local.
        check(unsafe {
            sys::napi_create_string_utf8(
                env,
                label.as_ptr().cast(),
                label.len() as isize,
                &mut name,
            )
        })?;
        let ctx = Arc::into_raw(queue.clone()) as *mut c_void;
        let mut tsfn = ptr::null_mut();
        // SAFETY: `env` is live and `callback` a value of the current call's scope. `ctx` carries
        // one Arc count that `finalize` takes back (it is both the finalize data and the
        // context `call_js` borrows, so the Queue outlives every call_js). Both callbacks have
        // the signatures N-API calls.
        let status = unsafe {
            sys::napi_create_threadsafe_function(
                env,
                callback,
                ptr::null_mut(),
                name,
                0,
                1,
                ctx,
                Some(finalize),
                ctx,
                Some(call_js),
                &mut tsfn,
            )
        };
        if status != sys::Status::napi_ok || tsfn.is_null() {
            // SAFETY: no function was made, so `finalize` never runs: the count is ours to drop.
            drop(unsafe { Arc::from_raw(ctx as *const Queue) });
            return Err(napi::Error::from_reason("ferro: cannot create the event function"));
        }
        // SAFETY: `tsfn` was just created on this thread of `env`.
        check(unsafe { sys::napi_unref_threadsafe_function(env, tsfn) })?;
        queue.inner.lock().tsfn = Some(Tsfn(tsfn));
        Ok(queue)
    }

    pub(crate) fn set_ref(&self, env: sys::napi_env, on: bool) -> napi::Result<()> {
        let g = self.inner.lock();
        if let Some(t) = &g.tsfn {
            // SAFETY: on the JS thread (a call from JS); `t` is not released or finalized while
            // it is in `tsfn`, and the lock is held.
            check(unsafe {
                if on {
                    sys::napi_ref_threadsafe_function(env, t.0)
                } else {
                    sys::napi_unref_threadsafe_function(env, t.0)
                }
            })?;
        }
        Ok(())
    }

    /// Stops signalling and lets Node release the function (engine shutdown).
    pub(crate) fn close(&self) {
        if let Some(t) = self.inner.lock().tsfn.take() {
            // SAFETY: taken out of `tsfn` under the lock, so released exactly once and never
            // called again. Its one failure (napi_invalid_arg: already finalized) is ruled out
            // because `finalize` clears `tsfn` before Node frees the function.
            let status = unsafe {
                sys::napi_release_threadsafe_function(
                    t.0,
                    sys::ThreadsafeFunctionReleaseMode::release,
                )
            };
            debug_assert_eq!(status, sys::Status::napi_ok, "napi_release_threadsafe_function");
        }
    }
}

/// Where the piece starting at `at` ends: after as many whole frames (`events::frames`) as fit in
/// `PIECE` bytes, and after at least one. Also how many DATA_OWN events it holds (their payloads go
/// with it).
fn plan_piece(batch: &[u8], at: usize) -> (usize, usize) {
    let (mut end, mut owns) = (at, 0);
    for f in events::frames(&batch[at..]) {
        if end > at && end + f.size() - at > PIECE {
            return (end, owns);
        }
        owns += usize::from(f.kind == events::DATA_OWN);
        end += f.size();
    }
    // The rest fits; a torn tail (never written by the engine) goes along rather than being lost.
    (batch.len(), owns)
}

/// `own` as a JS array of Buffers, each its own allocation of exactly its size; None when N-API
/// refuses one (out of memory, or a pending exception).
///
/// # Safety
/// On the JS thread, inside a handle scope of `env`.
unsafe fn own_buffers<B: std::ops::Deref<Target = [u8]>>(
    env: sys::napi_env,
    own: &[B],
) -> Option<sys::napi_value> {
    let mut arr = ptr::null_mut();
    // SAFETY: per the contract; `arr` is a local.
    if unsafe { sys::napi_create_array_with_length(env, own.len(), &mut arr) }
        != sys::Status::napi_ok
    {
        return None;
    }
    for (i, bytes) in own.iter().enumerate() {
        let mut buf = ptr::null_mut();
        // SAFETY: per the contract; `bytes` is borrowed for the call, which copies it, and `arr`
        // is the array made above in the same scope.
        unsafe {
            if sys::napi_create_buffer_copy(
                env,
                bytes.len(),
                bytes.as_ptr().cast(),
                ptr::null_mut(),
                &mut buf,
            ) != sys::Status::napi_ok
                || sys::napi_set_element(env, arr, i as u32, buf) != sys::Status::napi_ok
            {
                return None;
            }
        }
    }
    Some(arr)
}

fn check(status: sys::napi_status) -> napi::Result<()> {
    if status == sys::Status::napi_ok {
        Ok(())
    } else {
        Err(napi::Error::from_reason(format!("ferro: N-API call failed with status {status}")))
    }
}

unsafe extern "C" fn call_js(
    env: sys::napi_env,
    js_cb: sys::napi_value,
    ctx: *mut c_void,
    _data: *mut c_void,
) {
    if env.is_null() || js_cb.is_null() {
        return; // environment tearing down
    }
    // SAFETY: `ctx` is the Queue whose Arc count `finalize` releases, and N-API calls `call_js`
    // only before `finalize`.
    let queue = unsafe { &*(ctx as *const Queue) };
    let mut undefined = ptr::null_mut();
    // SAFETY: N-API calls `call_js` on the JS thread with a live `env`, inside a handle scope.
    if unsafe { sys::napi_get_undefined(env, &mut undefined) } != sys::Status::napi_ok {
        return;
    }
    // SAFETY: as above: the JS thread, inside the handle scope N-API opened for this call.
    unsafe {
        queue.deliver(env, |buf, blobs, view| {
            let mut result = ptr::null_mut();
            let (args, argc) = args(env, buf, blobs, view, undefined);
            // An exception thrown by the callback is left pending; Node reports it as uncaught.
            sys::napi_call_function(env, undefined, js_cb, argc, args.as_ptr(), &mut result);
        })
    };
}

/// The JS callback's arguments for one piece: `(batch, own?)` for a Buffer of its own,
/// `(arena, own | undefined, offset, length)` for a view into the arena (see `Arena`).
///
/// # Safety
/// On the JS thread, inside a handle scope of `env`.
pub(crate) unsafe fn args(
    env: sys::napi_env,
    buf: sys::napi_value,
    blobs: Option<sys::napi_value>,
    view: Option<(u32, u32)>,
    undefined: sys::napi_value,
) -> ([sys::napi_value; 4], usize) {
    let mut args = [buf, blobs.unwrap_or(undefined), undefined, undefined];
    let Some((off, len)) = view else { return (args, if blobs.is_some() { 2 } else { 1 }) };
    // SAFETY: per the contract; the out-pointers are elements of a local array. A failed
    // conversion leaves `undefined`, which JS reads as a Buffer of its own: never, for a u32.
    unsafe {
        sys::napi_create_uint32(env, off, &mut args[2]);
        sys::napi_create_uint32(env, len, &mut args[3]);
    }
    (args, 4)
}

unsafe extern "C" fn finalize(_env: sys::napi_env, _data: *mut c_void, hint: *mut c_void) {
    // SAFETY: `hint` is the Arc count `new` made for the function; N-API finalizes once.
    let queue = unsafe { Arc::from_raw(hint as *const Queue) };
    queue.inner.lock().tsfn = None;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(kind: u8, len: usize) -> Vec<u8> {
        let mut e = vec![kind, 1, 0, 0, 0];
        e.extend_from_slice(&(len as u32).to_le_bytes());
        e.resize(9 + len, 0xab);
        e
    }

    /// Each piece as (bytes it covers in the batch, DATA_OWN events in it).
    fn pieces(batch: &[u8]) -> Vec<(usize, usize)> {
        let (mut at, mut out) = (0, Vec::new());
        while at < batch.len() {
            let (end, owns) = plan_piece(batch, at);
            out.push((end - at, owns));
            at = end;
        }
        out
    }

    #[test]
    fn small_batches_go_whole_and_large_ones_split_at_event_boundaries() {
        let small: Vec<u8> = (0..10).flat_map(|_| event(1, 100)).collect();
        assert_eq!(pieces(&small), vec![(small.len(), 0)]);
        let big =
            [event(2, 65536), event(3, 2), event(2, 65536), event(2, 30_000), event(2, 30_000)]
                .concat();
        assert_eq!(pieces(&big), vec![(65545 + 11, 0), (65545 + 30_009, 0), (30_009, 0)]);
    }

    #[test]
    fn a_piece_takes_the_payloads_of_its_data_own_events() {
        let response = [event(1, 200), event(events::DATA_OWN, 0), event(3, 2)].concat();
        let batch: Vec<u8> = (0..3).flat_map(|_| response.clone()).collect();
        assert_eq!(pieces(&batch), vec![(batch.len(), 3)]);
        // Split by their packed bytes alone: 40 heads of 4 KB make two pieces, 40 payloads in all.
        let many: Vec<u8> =
            (0..40).flat_map(|_| [event(1, 4000), event(events::DATA_OWN, 0)].concat()).collect();
        let split = pieces(&many);
        assert_eq!(split.len(), 2);
        assert_eq!(split[0].1 + split[1].1, 40);
    }

    #[test]
    fn a_torn_tail_is_kept_with_the_last_piece() {
        let mut b = event(1, 10);
        b.extend_from_slice(&[4, 0, 0]);
        assert_eq!(pieces(&b), vec![(b.len(), 0)]);
    }
}
