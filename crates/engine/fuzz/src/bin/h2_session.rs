//! AFL target: the HTTP/2 client session driven by arbitrary server bytes (see
//! `h2::check::check_session` for the input layout).
#[global_allocator]
static ALLOC: ferro_engine_fuzz::Counting = ferro_engine_fuzz::Counting;

fn main() {
    afl::fuzz!(|data: &[u8]| ferro_engine::h2::check::check_session(data, ferro_engine_fuzz::peak));
}
