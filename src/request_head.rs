//! `NativePool.dispatch`'s head argument: the JS string `METHOD\0PATH\0name\0value…` read as its
//! UTF-16 code units straight into a checked `Head` (crates/engine/src/request/head.rs). Its code
//! points are bytes (latin1), so they are taken one byte each, never as UTF-8; one above U+00FF is
//! refused by the head's check, with the message undici gives for the piece that held it.
use ferro_engine::request::{Head, HeadError};
use napi::bindgen_prelude::{FromNapiValue, TypeName, ValidateNapiValue, ValueType};
use napi::sys;
use std::mem::MaybeUninit;

/// Code units read in one call into a buffer on the stack: a head is nearly always shorter.
const STACK_UNITS: usize = 2048;

pub struct HeadArg(pub Result<Head, HeadError>);

impl TypeName for HeadArg {
    fn type_name() -> &'static str {
        "String"
    }
    fn value_type() -> ValueType {
        ValueType::String
    }
}

impl ValidateNapiValue for HeadArg {}

impl FromNapiValue for HeadArg {
    unsafe fn from_napi_value(env: sys::napi_env, value: sys::napi_value) -> napi::Result<Self> {
        let mut buf = MaybeUninit::<[u16; STACK_UNITS]>::uninit();
        let ptr = buf.as_mut_ptr().cast::<u16>();
        let mut len = 0usize;
        // SAFETY: `ptr` is valid for STACK_UNITS units; N-API writes at most STACK_UNITS - 1 of
        // them and a terminator, and reports how many it wrote in `len`. A value that is not a
        // string is refused with a status, never read.
        check(unsafe { sys::napi_get_value_string_utf16(env, value, ptr, STACK_UNITS, &mut len) })?;
        if len < STACK_UNITS - 1 {
            // SAFETY: the first `len` units were written just above.
            let units = unsafe { std::slice::from_raw_parts(ptr, len) };
            return Ok(HeadArg(Head::from_utf16(units)));
        }
        // Perhaps cut short: ask for the length, then read it whole.
        let mut total = 0usize;
        // SAFETY: a null buffer asks only for the length, written to `total`.
        check(unsafe {
            sys::napi_get_value_string_utf16(env, value, std::ptr::null_mut(), 0, &mut total)
        })?;
        let mut units = vec![0u16; total + 1];
        // SAFETY: `units` holds `total + 1` units: the whole string and its terminator.
        check(unsafe {
            sys::napi_get_value_string_utf16(env, value, units.as_mut_ptr(), total + 1, &mut len)
        })?;
        Ok(HeadArg(Head::from_utf16(&units[..len])))
    }
}

fn check(status: sys::napi_status) -> napi::Result<()> {
    if status == sys::Status::napi_ok {
        Ok(())
    } else {
        Err(napi::Error::new(napi::Status::StringExpected, "the request head must be a string"))
    }
}
