//! Where the engine's timing stamps (`ferro_engine::timings`: ns since an instant of the process)
//! fall on JavaScript's `performance.now()` clock. Both read the monotonic clock libuv reads
//! (`uv_hrtime`, also `process.hrtime`), so one reading of each side by side is enough: JS turns
//! the libuv reading into `performance.now()` terms (ts/native/timings.ts).
use napi_derive::napi;

#[cfg(unix)]
extern "C" {
    fn uv_hrtime() -> u64;
}

/// `[stamp, hrtime]`: an engine stamp and `uv_hrtime()` read at the same moment (ns). hrtime is
/// -1 where libuv's symbols are not linked (Windows): JS then brackets the call with its own
/// clock reads.
#[cfg_attr(test, allow(dead_code))] // only JS calls it: no napi registration in test builds
#[napi(catch_unwind)]
pub(crate) fn timings_anchor() -> Vec<f64> {
    #[cfg(unix)]
    {
        let before = ferro_engine::timings::now();
        // SAFETY: uv_hrtime takes no arguments, touches no loop and only reads the clock.
        let hr = unsafe { uv_hrtime() };
        let after = ferro_engine::timings::now();
        vec![(before / 2 + after / 2) as f64, hr as f64]
    }
    #[cfg(not(unix))]
    {
        vec![ferro_engine::timings::now() as f64, -1.0]
    }
}
