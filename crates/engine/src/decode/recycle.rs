//! Brotli's byte buffers, recycled between bodies on the same thread. A brotli decoder grows its
//! ring buffer by doubling up to the stream's window (4 MiB at the common quality settings) and
//! frees it with each body; a busy client decoding many bodies then hands glibc a stream of
//! multi-MiB blocks of every power-of-two size, freed in a different order, and the main heap
//! fragmented to several hundred MB. Reusing the same few blocks keeps it at what is in use.
use brotli_decompressor::{Allocator, SliceWrapper, SliceWrapperMut};
use std::cell::RefCell;

/// Smaller blocks come and go cheaply in malloc's bins: only large ones are kept.
const MIN_KEPT: usize = 64 * 1024;
/// Most bytes kept per thread (a 16 MiB window, the largest brotli allows, plus change).
const MAX_KEPT_BYTES: usize = 20 * 1024 * 1024;
const MAX_KEPT_BLOCKS: usize = 8;

thread_local! {
    static KEPT: RefCell<Vec<Box<[u8]>>> = const { RefCell::new(Vec::new()) };
}

/// One block handed to the decoder.
#[derive(Default)]
pub(super) struct Block(Box<[u8]>);

impl SliceWrapper<u8> for Block {
    fn slice(&self) -> &[u8] {
        &self.0
    }
}

impl SliceWrapperMut<u8> for Block {
    fn slice_mut(&mut self) -> &mut [u8] {
        &mut self.0
    }
}

/// The decoder's `u8` allocator: a kept block of the exact size when there is one (ring buffer
/// sizes are powers of two plus a fixed slack, so sizes recur), zeroed as a fresh one would be.
#[derive(Default)]
pub(super) struct RecyclingAlloc;

impl Allocator<u8> for RecyclingAlloc {
    type AllocatedMemory = Block;

    fn alloc_cell(&mut self, len: usize) -> Block {
        if len >= MIN_KEPT {
            let kept = KEPT.with(|k| {
                let mut k = k.borrow_mut();
                k.iter().position(|b| b.len() == len).map(|i| k.swap_remove(i))
            });
            if let Some(mut b) = kept {
                // Never let one body's bytes show through in another's output.
                b.fill(0);
                return Block(b);
            }
        }
        Block(vec![0; len].into_boxed_slice())
    }

    fn free_cell(&mut self, block: Block) {
        if block.0.len() < MIN_KEPT {
            return;
        }
        KEPT.with(|k| {
            let mut k = k.borrow_mut();
            let held: usize = k.iter().map(|b| b.len()).sum();
            if k.len() < MAX_KEPT_BLOCKS && held + block.0.len() <= MAX_KEPT_BYTES {
                k.push(block.0);
            }
        });
    }
}

/// Bytes kept on this thread (tests).
#[cfg(test)]
pub(super) fn kept_bytes() -> usize {
    KEPT.with(|k| k.borrow().iter().map(|b| b.len()).sum())
}
