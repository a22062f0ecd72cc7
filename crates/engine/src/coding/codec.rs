//! One content coding's streaming decoder: bytes in, bytes out into a caller-sized slice, so the
//! caller decides how much output one step may produce.
use super::kind::{Coding, DecodeError, ErrorKind};
use brotli_decompressor::{BrotliDecompressStream, BrotliResult, BrotliState, StandardAlloc};
use flate2::{Decompress, FlushDecompress, Status};

/// What one call to [`Codec::step`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Step {
    pub consumed: usize,
    pub produced: usize,
}

/// zstd frames may ask for any window size; RFC 9659 §3 lets HTTP decoders refuse more than
/// 8 MiB (2^23), which also bounds a hostile frame's memory.
pub(crate) const ZSTD_WINDOW_LOG_MAX: u32 = 23;

pub(super) enum Flate {
    /// `deflate` before its first byte: zlib-wrapped (RFC 9110) or raw (what some servers send).
    Undecided,
    Zlib(Decompress),
    Raw(Decompress),
    Gzip(Decompress),
    /// Bytes after the end that start no new member: ignored, and so is everything after them.
    Trailing,
}

pub(super) enum Codec {
    Flate { z: Flate, ended: bool },
    Brotli { state: Box<BrotliState<StandardAlloc, StandardAlloc, StandardAlloc>>, ended: bool },
    Zstd { z: Box<zstd::stream::raw::Decoder<'static>>, ended: bool, started: bool },
}

/// A zlib stream's first byte is CMF: method 8 (deflate) in the low nibble and a window of at
/// most 32 KiB (CINFO <= 7) in the high one. A raw deflate stream starting with that byte would
/// be a non-final stored block with reserved padding bits set, which encoders do not emit.
fn looks_like_zlib(first: u8) -> bool {
    first & 0x0f == 8 && first >> 4 <= 7
}

impl Codec {
    pub(crate) fn new(coding: Coding) -> Result<Codec, DecodeError> {
        Ok(match coding {
            Coding::Gzip => Codec::Flate { z: Flate::Gzip(Decompress::new_gzip(15)), ended: false },
            Coding::Deflate => Codec::Flate { z: Flate::Undecided, ended: false },
            Coding::Brotli => Codec::Brotli {
                state: Box::new(BrotliState::new(
                    StandardAlloc::default(),
                    StandardAlloc::default(),
                    StandardAlloc::default(),
                )),
                ended: false,
            },
            Coding::Zstd => {
                let mut z = zstd::stream::raw::Decoder::new()
                    .map_err(|e| DecodeError::new(ErrorKind::Corrupt, coding, e.to_string()))?;
                z.set_parameter(zstd::stream::raw::DParameter::WindowLogMax(ZSTD_WINDOW_LOG_MAX))
                    .map_err(|e| DecodeError::new(ErrorKind::Corrupt, coding, e.to_string()))?;
                Codec::Zstd { z: Box::new(z), ended: false, started: false }
            }
        })
    }

    /// True once the stream is complete (the coding's own end marker was decoded) and nothing
    /// decoded is held back.
    pub(crate) fn ended(&self) -> bool {
        match self {
            Codec::Flate { ended, .. } | Codec::Brotli { ended, .. } => *ended,
            // An empty zstd body is no frame at all: treat "nothing started" as complete too.
            Codec::Zstd { ended, started, .. } => *ended || !*started,
        }
    }

    /// Decodes from `input` into `out`. Never consumes input it has not decoded into `out` or into
    /// its own bounded state (a window at most), so the caller's output limit holds.
    pub(crate) fn step(
        &mut self,
        coding: Coding,
        input: &[u8],
        out: &mut [u8],
    ) -> Result<Step, DecodeError> {
        let corrupt = |msg: String| DecodeError::new(ErrorKind::Corrupt, coding, msg);
        match self {
            Codec::Flate { z, ended } => {
                if let Flate::Undecided = z {
                    let Some(&first) = input.first() else {
                        return Ok(Step { consumed: 0, produced: 0 });
                    };
                    *z = if looks_like_zlib(first) {
                        Flate::Zlib(Decompress::new(true))
                    } else {
                        Flate::Raw(Decompress::new(false))
                    };
                }
                if *ended {
                    // A gzip body may hold several members back to back (RFC 1952 §2.2); any other
                    // bytes after the end are ignored, as zlib-based decoders do.
                    // Whether a member follows is decided by the first byte after the end, wherever the
                    // reads split the body.
                    match input.first() {
                        None => return Ok(Step { consumed: 0, produced: 0 }),
                        Some(0x1f) if matches!(z, Flate::Gzip(_)) => {
                            *z = Flate::Gzip(Decompress::new_gzip(15));
                            *ended = false;
                        }
                        Some(_) => {
                            *z = Flate::Trailing;
                            return Ok(Step { consumed: input.len(), produced: 0 });
                        }
                    }
                }
                let d = match z {
                    Flate::Zlib(d) | Flate::Raw(d) | Flate::Gzip(d) => d,
                    Flate::Undecided | Flate::Trailing => {
                        unreachable!("decided above; trailing only once ended")
                    }
                };
                let (in0, out0) = (d.total_in(), d.total_out());
                let status = d
                    .decompress(input, out, FlushDecompress::None)
                    .map_err(|e| corrupt(e.to_string()))?;
                if status == Status::StreamEnd {
                    *ended = true;
                }
                Ok(Step {
                    consumed: (d.total_in() - in0) as usize,
                    produced: (d.total_out() - out0) as usize,
                })
            }
            Codec::Brotli { state, ended } => {
                if *ended {
                    return Ok(Step { consumed: input.len(), produced: 0 });
                }
                let (mut avail_in, mut in_off, mut avail_out, mut out_off, mut total) =
                    (input.len(), 0, out.len(), 0, 0);
                let r = BrotliDecompressStream(
                    &mut avail_in,
                    &mut in_off,
                    input,
                    &mut avail_out,
                    &mut out_off,
                    out,
                    &mut total,
                    state,
                );
                match r {
                    BrotliResult::ResultFailure => {
                        return Err(corrupt("invalid brotli stream".into()))
                    }
                    BrotliResult::ResultSuccess => *ended = true,
                    BrotliResult::NeedsMoreInput | BrotliResult::NeedsMoreOutput => {}
                }
                Ok(Step { consumed: in_off, produced: out_off })
            }
            Codec::Zstd { z, ended, started } => {
                use zstd::stream::raw::{InBuffer, Operation, OutBuffer};
                if input.is_empty() && (*ended || !*started) {
                    return Ok(Step { consumed: 0, produced: 0 });
                }
                let mut inb = InBuffer::around(input);
                let mut outb = OutBuffer::around(out);
                let hint = z.run(&mut inb, &mut outb).map_err(|e| corrupt(e.to_string()))?;
                let (consumed, produced) = (inb.pos(), outb.pos());
                if consumed > 0 || produced > 0 {
                    *started = true;
                }
                // 0: a frame is fully decoded and flushed; more input starts another frame.
                *ended = hint == 0;
                Ok(Step { consumed, produced })
            }
        }
    }
}
