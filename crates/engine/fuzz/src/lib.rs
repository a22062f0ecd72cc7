//! The fuzz targets' counting allocator: each target installs [`Counting`] as its global
//! allocator and passes [`peak`] to the checks that bound the codec's memory.
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

/// The system allocator, counting live bytes and their high-water mark.
pub struct Counting;

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc(layout);
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc_zeroed(layout);
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout);
        LIVE.fetch_sub(layout.size(), Relaxed);
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = System.realloc(ptr, layout, new_size);
        if !p.is_null() {
            LIVE.fetch_sub(layout.size(), Relaxed);
            grew(new_size);
        }
        p
    }
}

fn grew(n: usize) {
    let live = LIVE.fetch_add(n, Relaxed) + n;
    PEAK.fetch_max(live, Relaxed);
}

/// Most bytes `f` had allocated at once beyond what was live when it started.
pub fn peak(f: &mut dyn FnMut()) -> usize {
    let base = LIVE.load(Relaxed);
    PEAK.store(base, Relaxed);
    f();
    PEAK.load(Relaxed) - base
}

#[cfg(test)]
#[global_allocator]
static ALLOC: Counting = Counting;

#[cfg(test)]
mod tests {
    #[test]
    fn peak_counts_what_the_closure_holds_at_once() {
        let held = super::peak(&mut || {
            let a = vec![1u8; 3 << 20];
            let b = vec![2u8; 1 << 20];
            std::hint::black_box((&a, &b));
        });
        assert!((4 << 20..5 << 20).contains(&held), "{held}");
        let sequential = super::peak(&mut || {
            for _ in 0..8 {
                std::hint::black_box(vec![1u8; 1 << 20]);
            }
        });
        assert!((1 << 20..2 << 20).contains(&sequential), "{sequential}");
    }
}
