//! Deterministic randomness for the codec checks (`*/check.rs`) shared by the fuzz targets and
//! the property tests: a seeded generator, and seeded splitting of an input into read-sized pieces.

/// splitmix64: dependency-free, and the same sequence on every run so failures reproduce.
pub struct Gen(pub u64);

impl Gen {
    pub fn u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// 0..=n.
    pub fn upto(&mut self, n: usize) -> usize {
        (self.u64() % (n as u64 + 1)) as usize
    }

    pub fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.upto(xs.len() - 1)]
    }

    pub fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.u64() as u8).collect()
    }
}

/// `input` cut into non-empty pieces whose sizes (1 to 64 bytes, or up to 4 KiB when the seed's
/// top bit is set) follow `seed`: the same seed always cuts the same way.
pub fn split(input: &[u8], seed: u8) -> Vec<&[u8]> {
    let mut g = Gen(u64::from(seed));
    let most = if seed & 0x80 != 0 { 4096 } else { 64 };
    let mut pieces = Vec::new();
    let mut at = 0;
    while at < input.len() {
        let len = 1 + g.upto((input.len() - at).min(most) - 1);
        pieces.push(&input[at..at + len]);
        at += len;
    }
    pieces
}
