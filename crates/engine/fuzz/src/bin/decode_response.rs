//! AFL target: the HTTP/1.1 response decoder (see `check_decoder` for the input layout).
fn main() {
    afl::fuzz!(|data: &[u8]| ferro_engine::h1::check::check_decoder(data));
}
