//! RFC 6455 §5.2 frame headers: parsing what a server sends, encoding what a client sends
//! (always masked, §5.3).

pub const CONTINUATION: u8 = 0x0;
pub const TEXT: u8 = 0x1;
pub const BINARY: u8 = 0x2;
pub const CLOSE: u8 = 0x8;
pub const PING: u8 = 0x9;
pub const PONG: u8 = 0xA;

/// Control frames carry at most this many payload bytes (§5.5).
pub const MAX_CONTROL_PAYLOAD: usize = 125;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    pub fin: bool,
    /// "Per-message compressed" under permessage-deflate (RFC 7692 §6).
    pub rsv1: bool,
    pub opcode: u8,
    pub len: u64,
    /// Bytes the header took.
    pub size: usize,
}

impl Header {
    pub fn is_control(&self) -> bool {
        self.opcode & 0x8 != 0
    }
}

/// Why a header is refused; each is a protocol error (close code 1002).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeaderError {
    ReservedBits,
    UnknownOpcode,
    Masked,
    ControlTooLong,
    ControlFragmented,
    LengthTooLarge,
}

impl HeaderError {
    /// The reason sent in the close frame; undici's wording where it has the same check.
    pub fn message(self) -> &'static str {
        match self {
            HeaderError::ReservedBits => "RSV1, RSV2, RSV3 must be clear",
            HeaderError::UnknownOpcode => "Invalid opcode received",
            HeaderError::Masked => "Frame cannot be masked",
            HeaderError::ControlTooLong | HeaderError::ControlFragmented => {
                "Control frame either too large or fragmented"
            }
            HeaderError::LengthTooLarge => "Payload length has its most significant bit set",
        }
    }
}

/// Parses a server frame header from the start of `buf`. `Ok(None)`: more bytes are needed.
/// `rsv1_allowed`: permessage-deflate was negotiated (the codec checks where RSV1 may appear).
pub fn parse(buf: &[u8], rsv1_allowed: bool) -> Result<Option<Header>, HeaderError> {
    if buf.len() < 2 {
        return Ok(None);
    }
    let (b0, b1) = (buf[0], buf[1]);
    let rsv1 = b0 & 0x40 != 0;
    if b0 & 0x30 != 0 || (rsv1 && !rsv1_allowed) {
        return Err(HeaderError::ReservedBits);
    }
    let opcode = b0 & 0x0F;
    if !matches!(opcode, CONTINUATION | TEXT | BINARY | CLOSE | PING | PONG) {
        return Err(HeaderError::UnknownOpcode);
    }
    if b1 & 0x80 != 0 {
        return Err(HeaderError::Masked);
    }
    let fin = b0 & 0x80 != 0;
    let short = (b1 & 0x7F) as u64;
    let control = opcode & 0x8 != 0;
    if control && short > MAX_CONTROL_PAYLOAD as u64 {
        return Err(HeaderError::ControlTooLong);
    }
    if control && !fin {
        return Err(HeaderError::ControlFragmented);
    }
    let (len, size) = match short {
        126 => {
            if buf.len() < 4 {
                return Ok(None);
            }
            (u16::from_be_bytes([buf[2], buf[3]]) as u64, 4)
        }
        127 => {
            if buf.len() < 10 {
                return Ok(None);
            }
            let len = u64::from_be_bytes(buf[2..10].try_into().unwrap());
            if len >> 63 != 0 {
                return Err(HeaderError::LengthTooLarge);
            }
            (len, 10)
        }
        n => (n, 2),
    };
    Ok(Some(Header { fin, rsv1, opcode, len, size }))
}

/// XORs `buf` with `mask`; `buf[0]` is payload byte 0 of the frame.
pub fn apply_mask(buf: &mut [u8], mask: [u8; 4]) {
    let word = u64::from_ne_bytes([
        mask[0], mask[1], mask[2], mask[3], mask[0], mask[1], mask[2], mask[3],
    ]);
    let mut chunks = buf.chunks_exact_mut(8);
    for chunk in &mut chunks {
        let v = u64::from_ne_bytes((&*chunk).try_into().unwrap()) ^ word;
        chunk.copy_from_slice(&v.to_ne_bytes());
    }
    for (i, b) in chunks.into_remainder().iter_mut().enumerate() {
        *b ^= mask[i & 3];
    }
}

/// Appends one masked client frame to `out`.
pub fn encode(out: &mut Vec<u8>, fin: bool, rsv1: bool, opcode: u8, payload: &[u8], mask: [u8; 4]) {
    let len = payload.len();
    out.reserve(len + 14);
    out.push(((fin as u8) << 7) | ((rsv1 as u8) << 6) | opcode);
    if len < 126 {
        out.push(0x80 | len as u8);
    } else if len <= u16::MAX as usize {
        out.push(0x80 | 126);
        out.extend_from_slice(&(len as u16).to_be_bytes());
    } else {
        out.push(0x80 | 127);
        out.extend_from_slice(&(len as u64).to_be_bytes());
    }
    out.extend_from_slice(&mask);
    let start = out.len();
    out.extend_from_slice(payload);
    apply_mask(&mut out[start..], mask);
}
