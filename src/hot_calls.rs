//! The calls JS makes per request and per tick — `NativePool.dispatch`, `NativePool.flush` and
//! `NativeEngine.flushTick` — as plain N-API callbacks on the classes' prototypes instead of
//! napi-rs methods.
//!
//! napi-rs wraps every method that borrows its object in alias tracking: a scope allocated per
//! call (an `Arc<Mutex<…>>`), two vectors it pushes each borrow into, and an entry in a
//! process-wide map under a mutex. That was three `malloc`s and two lock round trips per request.
//! The tracking guards `&mut self` methods against a call that re-enters JS; these three take
//! `&self`, never call JS (events are delivered on a later turn), and their objects are alive for
//! the length of the call (the receiver and an argument). Each object is checked as napi-rs
//! checks it, by its class's type tag, before it is unwrapped.
use crate::binding::{NativeEngine, NativePool};
use crate::request_head::HeadArg;
use napi::bindgen_prelude::{
    panic_to_error, validate_type_tag, BufferSlice, FromNapiValue, JsError, Object, Result, TypeTag,
};
use napi::{sys, Error, JsValue, Status};
use napi_derive::napi;
use std::ffi::{c_void, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;

/// Defines the calls on the prototypes once napi-rs has registered the classes (the one module
/// hook napi-rs keeps: a second `module_exports` function would replace this one).
#[napi(module_exports)]
pub fn install_hot_calls(exports: Object<'_>) -> Result<()> {
    let env = exports.value().env;
    // SAFETY: module initialisation on the JS thread, with `exports` live.
    unsafe {
        define(env, exports.raw(), c"NativePool", &[(c"dispatch", dispatch), (c"flush", flush)])?;
        define(env, exports.raw(), c"NativeEngine", &[(c"flushTick", flush_tick)])
    }
}

/// Adds `methods` to the prototype of the class exported as `class`.
///
/// # Safety
/// On the JS thread, inside a handle scope of `env`; `exports` a live value of it.
unsafe fn define(
    env: sys::napi_env,
    exports: sys::napi_value,
    class: &CStr,
    methods: &[(
        &'static CStr,
        unsafe extern "C" fn(sys::napi_env, sys::napi_callback_info) -> sys::napi_value,
    )],
) -> Result<()> {
    let props: Vec<sys::napi_property_descriptor> = methods
        .iter()
        .map(|&(name, f)| sys::napi_property_descriptor {
            utf8name: name.as_ptr(),
            name: ptr::null_mut(),
            method: Some(f),
            getter: None,
            setter: None,
            value: ptr::null_mut(),
            attributes: sys::PropertyAttributes::writable | sys::PropertyAttributes::configurable,
            data: ptr::null_mut(),
        })
        .collect();
    let (mut ctor, mut proto) = (ptr::null_mut(), ptr::null_mut());
    // SAFETY: per this function's contract; the names are NUL-terminated and `props` outlives
    // the call that copies it.
    unsafe {
        check(sys::napi_get_named_property(env, exports, class.as_ptr(), &mut ctor))?;
        check(sys::napi_get_named_property(env, ctor, c"prototype".as_ptr(), &mut proto))?;
        check(sys::napi_define_properties(env, proto, props.len(), props.as_ptr()))
    }
}

/// `pool.dispatch(id, head, body, flags, headersTimeout, bodyTimeout, bodyLength)`: see
/// `NativePool::dispatch`.
unsafe extern "C" fn dispatch(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    let mut argv = [ptr::null_mut(); 7];
    // SAFETY: N-API calls this on the JS thread with a live `env` and `info` (every callback
    // here relies on it). Arguments not passed read as undefined, as napi-rs's conversions see
    // them in its own methods.
    unsafe {
        call(env, info, &mut argv, |pool: &NativePool, a| {
            let queued = pool.dispatch(
                u32::from_napi_value(env, a[0])?,
                HeadArg::from_napi_value(env, a[1])?,
                Option::<BufferSlice<'_>>::from_napi_value(env, a[2])?,
                u32::from_napi_value(env, a[3])?,
                u32::from_napi_value(env, a[4])?,
                u32::from_napi_value(env, a[5])?,
                f64::from_napi_value(env, a[6])?,
            )?;
            let mut out = ptr::null_mut();
            check(sys::napi_get_boolean(env, queued, &mut out))?;
            Ok(out)
        })
    }
}

/// `pool.flush()`: see `NativePool::flush`.
unsafe extern "C" fn flush(env: sys::napi_env, info: sys::napi_callback_info) -> sys::napi_value {
    // SAFETY: as `dispatch`.
    unsafe {
        call(env, info, &mut [], |pool: &NativePool, _| {
            pool.flush();
            undefined(env)
        })
    }
}

/// `engine.flushTick(pool)`: see `NativeEngine::flush_tick`.
unsafe extern "C" fn flush_tick(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    let mut argv = [ptr::null_mut(); 1];
    // SAFETY: as `dispatch`; the pool argument is alive for the call (JS holds it in the call's
    // arguments).
    unsafe {
        call(env, info, &mut argv, |engine: &NativeEngine, a| {
            engine.flush_tick(unwrap::<NativePool>(env, a[0])?);
            undefined(env)
        })
    }
}

/// Reads the arguments into `argv`, unwraps the receiver, and runs `f`; an error (or a panic,
/// as napi-rs reports one for a `catch_unwind` method) is thrown as a JS error.
///
/// # Safety
/// On the JS thread, inside the callback N-API made with `env` and `info`.
unsafe fn call<T: TypeTag>(
    env: sys::napi_env,
    info: sys::napi_callback_info,
    argv: &mut [sys::napi_value],
    f: impl FnOnce(&T, &[sys::napi_value]) -> Result<sys::napi_value>,
) -> sys::napi_value {
    let run = AssertUnwindSafe(|| -> Result<sys::napi_value> {
        let (mut argc, mut this) = (argv.len(), ptr::null_mut());
        // SAFETY: per this function's contract; `argv` has room for `argc` values.
        check(unsafe {
            sys::napi_get_cb_info(
                env,
                info,
                &mut argc,
                argv.as_mut_ptr(),
                &mut this,
                ptr::null_mut(),
            )
        })?;
        // SAFETY: `this` is this call's receiver, alive for the call.
        f(unsafe { unwrap::<T>(env, this)? }, argv)
    });
    match catch_unwind(run).map_err(panic_to_error).and_then(|r| r) {
        Ok(v) => v,
        Err(e) => {
            // SAFETY: per this function's contract.
            unsafe { JsError::from(e).throw_into(env) };
            ptr::null_mut()
        }
    }
}

/// The `T` a JS object of class `T` wraps; an error for any other value.
///
/// # Safety
/// On the JS thread, inside a handle scope of `env`; `value` must stay alive (reachable from JS)
/// for as long as the reference is used.
unsafe fn unwrap<'a, T: TypeTag>(env: sys::napi_env, value: sys::napi_value) -> Result<&'a T> {
    let (tag, mut matches, mut wrapped) = (T::type_tag(), false, ptr::null_mut());
    // SAFETY: only an object napi-rs made for class T carries T's tag, and what it wraps is a
    // `T` (napi-rs's own methods unwrap it the same way), alive while the object is.
    unsafe {
        let status = sys::napi_check_object_type_tag(env, value, &tag, &mut matches);
        if status != sys::Status::napi_ok || !matches {
            // napi-rs's own check again, for its error; the class name (a string search) is
            // worked out only here, not on every call.
            let name = std::any::type_name::<T>().rsplit("::").next().unwrap_or("");
            validate_type_tag(env, value, &tag, name)?;
        }
        check(sys::napi_unwrap(env, value, &mut wrapped))?;
        Ok(&*(wrapped as *const c_void as *const T))
    }
}

/// `undefined`, the return value of the calls that return nothing.
///
/// # Safety
/// On the JS thread, inside a handle scope of `env`.
unsafe fn undefined(env: sys::napi_env) -> Result<sys::napi_value> {
    let mut out = ptr::null_mut();
    // SAFETY: per this function's contract.
    check(unsafe { sys::napi_get_undefined(env, &mut out) })?;
    Ok(out)
}

fn check(status: sys::napi_status) -> Result<()> {
    match status {
        sys::Status::napi_ok => Ok(()),
        s => Err(Error::new(Status::from(s), "N-API call failed")),
    }
}
