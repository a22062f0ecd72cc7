//! The inline driver's delivery to JS: from a loop callback, everything queued goes to JS's
//! `onEvents` through `napi_make_callback`, inside a handle scope the callback's deliveries share.
//! When to deliver (the loop callback, ticking, re-arming) is src/inline.rs.
use super::State;
use napi::sys;
use std::ptr;

/// What one loop callback's deliveries share: a handle scope (N-API allocates one per open) and
/// the values each call takes. Its drop closes the scope.
pub(super) struct Js {
    env: sys::napi_env,
    scope: sys::napi_handle_scope,
    cb: sys::napi_value,
    global: sys::napi_value,
    undefined: sys::napi_value,
}

impl Js {
    /// # Safety
    /// A libuv callback on the JS thread of `s.env`, which is live until the cleanup hook closes
    /// the handles (no callback runs after that), with no handle scope open.
    pub(super) unsafe fn open(s: &State) -> Option<Js> {
        let env = s.env;
        let mut js = Js {
            env,
            scope: ptr::null_mut(),
            cb: ptr::null_mut(),
            global: ptr::null_mut(),
            undefined: ptr::null_mut(),
        };
        // SAFETY: per the contract; the values are made in the scope just opened, which `js`
        // closes when dropped; `s.callback` is a strong reference `start` made and none deletes.
        unsafe {
            if sys::napi_open_handle_scope(env, &mut js.scope) != sys::Status::napi_ok {
                return None;
            }
            let got = sys::napi_get_reference_value(env, s.callback, &mut js.cb)
                == sys::Status::napi_ok
                && sys::napi_get_global(env, &mut js.global) == sys::Status::napi_ok
                && sys::napi_get_undefined(env, &mut js.undefined) == sys::Status::napi_ok
                && !js.cb.is_null();
            got.then_some(js)
        }
    }
}

impl Drop for Js {
    fn drop(&mut self) {
        // SAFETY: the scope `open` opened, on the JS thread, closed once; scopes opened inside it
        // (N-API's callback scopes) were closed before their calls returned.
        unsafe { sys::napi_close_handle_scope(self.env, self.scope) };
    }
}

/// Calls JS's `onEvents` with everything queued, from a loop callback. True when JS was handed
/// a buffer of its own (a large batch, or a body's blobs) rather than only views into the event
/// arena.
pub(super) fn deliver(s: &State, js: &Js) -> bool {
    let env = js.env;
    let mut own = false;
    s.delivering.set(true);
    // SAFETY: inside `js`'s scope on the JS thread; every out-pointer is a local.
    unsafe {
        s.queue.deliver(env, |batch, blobs, view| {
            own |= view.is_none() || blobs.is_some();
            let mut result = ptr::null_mut();
            let (args, argc) = crate::queue::args(env, batch, blobs, view, js.undefined);
            let status = sys::napi_make_callback(
                env,
                s.async_ctx,
                js.global,
                js.cb,
                argc,
                args.as_ptr(),
                &mut result,
            );
            if status == sys::Status::napi_pending_exception {
                // Nothing up the stack can catch it: report it as Node reports uncaught errors.
                let mut err = ptr::null_mut();
                sys::napi_get_and_clear_last_exception(env, &mut err);
                sys::napi_fatal_exception(env, err);
            }
        });
    }
    s.delivering.set(false);
    own
}
