//! `NativeDecoder`: the engine's content decoders (crates/engine/src/coding) for one response
//! body, called synchronously from JS with buffers in and out (DESIGN §2: no Promise per chunk).
//! JS owns the output memory (`readInto`): decoded bytes land in buffers V8 allocated and accounts
//! for, so its GC sees them and no native allocation is freed on another schedule.
use ferro_engine::coding::{
    live_decoders, parse_content_encoding, DecodeError, Decoder, ErrorKind,
};
use napi::bindgen_prelude::*;
use napi_derive::napi;

/// Errors carry the kind as their `code`, which ts/native/coding.ts maps to error classes.
fn to_js(e: DecodeError) -> Error<String> {
    let code = match e.kind {
        ErrorKind::Corrupt => "DECODE_CORRUPT",
        ErrorKind::Truncated => "DECODE_TRUNCATED",
        ErrorKind::TooLarge => "DECODE_TOO_LARGE",
        ErrorKind::TooManyCodings => "DECODE_TOO_MANY_CODINGS",
    };
    Error::new(code.to_string(), e.to_string())
}

#[napi]
pub struct NativeDecoder {
    inner: Decoder,
}

#[napi]
impl NativeDecoder {
    /// Adds compressed bytes without decoding: `readInto` drains them.
    #[napi(catch_unwind)]
    pub fn push(&mut self, chunk: BufferSlice<'_>) -> std::result::Result<(), Error<String>> {
        self.inner.feed(&chunk).map_err(to_js)
    }

    /// Ends the input: `readInto` drains the rest (and throws when the stream was cut short).
    #[napi(catch_unwind)]
    pub fn end(&mut self) {
        self.inner.end_input();
    }

    /// Frees the decoder's state now (the body was abandoned); after a complete or failed body
    /// the engine has already done so.
    #[napi(catch_unwind)]
    pub fn release(&mut self) {
        self.inner.release();
    }

    /// Decodes into `out` (a JS-allocated buffer, so V8 accounts for the memory and nothing is
    /// allocated natively) and returns the byte count; 0: none ready until more input (after `end`: the body is complete).
    #[napi(catch_unwind)]
    pub fn read_into(
        &mut self,
        mut out: BufferSlice<'_>,
    ) -> std::result::Result<u32, Error<String>> {
        self.inner.read_into(&mut out).map(|n| n as u32).map_err(to_js)
    }
}

/// A decoder for a `content-encoding` value, or null when the body is to be passed on as it is
/// (no coding, or one this engine does not know). `maxSize` <= 0: no limit. `lenient`: a stream
/// cut short ends the body instead of failing it (fetch, as browsers do).
// Only JS calls it (the napi registration is absent from test builds).
#[cfg_attr(test, allow(dead_code))]
#[napi(catch_unwind)]
pub(crate) fn create_decoder(
    content_encoding: String,
    max_size: f64,
    lenient: bool,
) -> std::result::Result<Option<NativeDecoder>, Error<String>> {
    let Some(codings) = parse_content_encoding(&content_encoding).map_err(to_js)? else {
        return Ok(None);
    };
    let max = (max_size > 0.0).then_some(max_size as u64);
    Decoder::new(&codings, max, lenient).map(|inner| Some(NativeDecoder { inner })).map_err(to_js)
}

/// Decoders in this process still holding state (leak checks in tests: 0 once every body has
/// ended, failed or been abandoned).
#[cfg_attr(test, allow(dead_code))]
#[napi(catch_unwind)]
pub(crate) fn live_decoders_count() -> u32 {
    live_decoders() as u32
}
