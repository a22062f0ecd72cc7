//! Frame masks from the OS's random source (RFC 6455 §10.3 wants them unpredictable), fetched
//! in blocks so a message does not cost a system call.
pub(super) struct Masks {
    pool: [u8; 1024],
    pos: usize,
}

impl Masks {
    pub(super) fn new() -> Self {
        Masks { pool: [0; 1024], pos: 1024 }
    }

    pub(super) fn next(&mut self) -> [u8; 4] {
        if self.pos + 4 > self.pool.len() {
            getrandom::getrandom(&mut self.pool).expect("the OS random source failed");
            self.pos = 0;
        }
        let m = [
            self.pool[self.pos],
            self.pool[self.pos + 1],
            self.pool[self.pos + 2],
            self.pool[self.pos + 3],
        ];
        self.pos += 4;
        m
    }
}
