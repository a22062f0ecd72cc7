//! `NativeDecoder`: the engine's content decoders (crates/engine/src/decode) for one response
//! body, called synchronously from JS with buffers in and out (DESIGN §2: no Promise per chunk).
use ferro_engine::decode::{parse_content_encoding, DecodeError, Decoder, ErrorKind};
use napi::bindgen_prelude::*;
use napi_derive::napi;

/// Errors carry the kind as their `code`, which ts/native/decoder.ts maps to error classes.
fn to_js(e: DecodeError) -> Error<String> {
    let code = match e.kind {
        ErrorKind::Corrupt => "DECODE_CORRUPT",
        ErrorKind::Truncated => "DECODE_TRUNCATED",
        ErrorKind::TooLarge => "DECODE_TOO_LARGE",
        ErrorKind::TooManyCodings => "DECODE_TOO_MANY_CODINGS",
    };
    Error::new(code.to_string(), e.to_string())
}

fn out(v: Vec<u8>) -> Option<Buffer> {
    (!v.is_empty()).then(|| Buffer::from(v))
}

#[napi]
pub struct NativeDecoder {
    inner: Decoder,
}

#[napi]
impl NativeDecoder {
    /// Decoded bytes (at most 64 KiB) or null when none are ready; call `read` until null.
    #[napi(catch_unwind)]
    pub fn write(&mut self, chunk: BufferSlice<'_>) -> std::result::Result<Option<Buffer>, Error<String>> {
        self.inner.write(&chunk).map(out).map_err(to_js)
    }

    #[napi(catch_unwind)]
    pub fn read(&mut self) -> std::result::Result<Option<Buffer>, Error<String>> {
        self.inner.read().map(out).map_err(to_js)
    }

    /// Ends the input; the rest comes from this and `read` until null (throws when cut short).
    #[napi(catch_unwind)]
    pub fn finish(&mut self) -> std::result::Result<Option<Buffer>, Error<String>> {
        self.inner.finish().map(out).map_err(to_js)
    }
}

/// A decoder for a `content-encoding` value, or null when the body is to be passed on as it is
/// (no coding, or one this engine does not know). `maxSize` <= 0: no limit. `lenient`: a stream
/// cut short ends the body instead of failing it (fetch, as browsers do).
// Only JS calls it (the napi registration is absent from test builds).
#[cfg_attr(test, allow(dead_code))]
#[napi(catch_unwind)]
pub fn create_decoder(content_encoding: String, max_size: f64, lenient: bool) -> std::result::Result<Option<NativeDecoder>, Error<String>> {
    let Some(codings) = parse_content_encoding(&content_encoding).map_err(to_js)? else {
        return Ok(None);
    };
    let max = (max_size > 0.0).then_some(max_size as u64);
    Decoder::new(&codings, max, lenient).map(|inner| Some(NativeDecoder { inner })).map_err(to_js)
}
