//! AFL target: request-head encoding and its validation (see `check_encoder`).
fn main() {
    afl::fuzz!(|data: &[u8]| ferro_engine_fuzz::check_encoder(data));
}
