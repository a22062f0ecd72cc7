//! AFL target: request-head encoding and its validation (see `check_encoder`).
fn main() {
    afl::fuzz!(|data: &[u8]| ferro_engine::h1::check::check_encoder(data));
}
