//! AFL target: the WebSocket frame decoder and permessage-deflate (see `ws::check::check_codec`).
#[global_allocator]
static ALLOC: ferro_engine_fuzz::Counting = ferro_engine_fuzz::Counting;

fn main() {
    afl::fuzz!(|data: &[u8]| ferro_engine::ws::check::check_codec(data, ferro_engine_fuzz::peak));
}
