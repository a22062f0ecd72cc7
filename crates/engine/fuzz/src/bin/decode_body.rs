//! AFL target: the content decoders, alone and chained (see `coding::check::check_decoder`).
#[global_allocator]
static ALLOC: ferro_engine_fuzz::Counting = ferro_engine_fuzz::Counting;

fn main() {
    afl::fuzz!(|data: &[u8]| ferro_engine::coding::check::check_decoder(data, ferro_engine_fuzz::peak));
}
