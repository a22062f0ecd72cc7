//! Every fuzz target's seed corpus (`fuzz/seeds/<target>/`, made by `fuzz/make-seeds.mjs`) run
//! through the same check the AFL target runs (`fuzz/src/bin/<target>.rs`), in `cargo test`: the
//! seeds stay valid inputs that keep the invariants, on every run, without AFL. The memory probe is
//! the AFL build's counting allocator; here it is a pass-through (no bound is checked).

fn no_probe(f: &mut dyn FnMut()) -> usize {
    f();
    0
}

/// Runs `check` on each seed of `target`, and requires at least `min` of them.
fn replay(target: &str, min: usize, check: impl Fn(&[u8])) {
    let dir = format!("{}/fuzz/seeds/{target}", env!("CARGO_MANIFEST_DIR"));
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).expect("the seeds (fuzz/make-seeds.mjs)") {
        let input = std::fs::read(entry.unwrap().path()).unwrap();
        check(&input);
        n += 1;
    }
    assert!(n >= min, "{target}: {n} seeds");
}

#[test]
fn decode_response() {
    replay("decode_response", 10, crate::h1::check::check_decoder);
}

#[test]
fn encode_head() {
    replay("encode_head", 5, crate::h1::check::check_encoder);
}

#[test]
fn decode_body() {
    replay("decode_body", 10, |d| crate::coding::check::check_decoder(d, no_probe));
}

#[test]
fn ws_frames() {
    replay("ws_frames", 10, |d| crate::ws::check::check_codec(d, no_probe));
}

#[test]
fn h2_session() {
    replay("h2_session", 10, |d| crate::h2::check::check_session(d, no_probe));
}
