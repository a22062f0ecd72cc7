//! permessage-deflate negotiation (RFC 7692 §7): the offer a client sends and the check of the
//! server's `Sec-WebSocket-Extensions` answer.

/// What the client offers, as browsers do: any server window, and the server may cap ours.
pub const OFFER: &str = "permessage-deflate; client_max_window_bits";

/// Parameters the server accepted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeflateParams {
    /// The server resets its compressor per message: the inflater may be reset too.
    pub server_no_context_takeover: bool,
    /// We must reset our compressor per message.
    pub client_no_context_takeover: bool,
    pub server_max_window_bits: u8,
    /// Our compressor's window may not exceed this.
    pub client_max_window_bits: u8,
}

impl Default for DeflateParams {
    fn default() -> Self {
        DeflateParams {
            server_no_context_takeover: false,
            client_no_context_takeover: false,
            server_max_window_bits: 15,
            client_max_window_bits: 15,
        }
    }
}

fn window_bits(value: Option<&str>) -> Result<u8, String> {
    let v = value.ok_or("window bits parameter without a value")?;
    let v = v.trim_matches('"');
    match v.parse::<u8>() {
        Ok(n @ 8..=15) if v.len() <= 2 && !v.starts_with('0') => Ok(n),
        _ => Err(format!("invalid window bits {v:?}")),
    }
}

/// Checks the server's answer to [`OFFER`]. Empty: no extension in use. Anything the client did not
/// offer, or a malformed or repeated parameter, fails the connection (RFC 6455 §9.1, RFC 7692 §5).
pub fn parse_response(header: &str) -> Result<Option<DeflateParams>, String> {
    let header = header.trim();
    if header.is_empty() {
        return Ok(None);
    }
    let mut found: Option<DeflateParams> = None;
    for ext in header.split(',') {
        let mut parts = ext.split(';').map(str::trim);
        let name = parts.next().unwrap_or("");
        if !name.eq_ignore_ascii_case("permessage-deflate") {
            return Err(format!("unexpected extension {name:?}"));
        }
        if found.is_some() {
            return Err("permessage-deflate accepted twice".into());
        }
        let mut p = DeflateParams::default();
        let mut seen = [false; 4];
        for param in parts {
            let (key, value) = match param.split_once('=') {
                Some((k, v)) => (k.trim(), Some(v.trim())),
                None => (param, None),
            };
            let slot = match key.to_ascii_lowercase().as_str() {
                "server_no_context_takeover" if value.is_none() => {
                    p.server_no_context_takeover = true;
                    0
                }
                "client_no_context_takeover" if value.is_none() => {
                    p.client_no_context_takeover = true;
                    1
                }
                "server_max_window_bits" => {
                    p.server_max_window_bits = window_bits(value)?;
                    2
                }
                "client_max_window_bits" => {
                    p.client_max_window_bits = window_bits(value)?;
                    3
                }
                _ => return Err(format!("unexpected permessage-deflate parameter {param:?}")),
            };
            if std::mem::replace(&mut seen[slot], true) {
                return Err(format!("repeated permessage-deflate parameter {key:?}"));
            }
        }
        found = Some(p);
    }
    Ok(found)
}
