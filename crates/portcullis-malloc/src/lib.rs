//! The C allocator's heap, as the proxy sees it: how much of it is in use and how much is free
//! but still held ([`stats`]), and giving the free pages back to the OS ([`trim`]).
//!
//! glibc's `malloc` keeps what a burst of connections freed: a free chunk is returned to the OS
//! only when it sits at the top of an arena's heap, so a few live allocations scattered over the
//! pages of 1,000 closed streams keep all of those pages resident (`scripts/bench-memory` saw
//! +9 MB per round of 1,000 SSE streams; docs/BENCHMARKS.md, issue 29). `malloc_trim(0)` walks
//! every arena and hands each whole free page back (`madvise(MADV_DONTNEED)`), wherever it sits.
//!
//! This is the only crate of the workspace with `unsafe` code: two calls into the C library that
//! take no pointer the caller supplies. Elsewhere (musl, macOS) both functions report that the
//! allocator offers neither, and nothing is called.
#![deny(unsafe_op_in_unsafe_fn)]

/// What the allocator holds (glibc's `mallinfo2`), in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Heap {
    /// Allocated and not yet freed: what the program holds.
    pub in_use: usize,
    /// Freed but kept by the allocator (in its bins and at the top of its heaps) for reuse.
    /// Pages a [`trim`] gave back still count here (they stay in the bins, unbacked): what is
    /// resident shows in the process's RSS, not here.
    pub free: usize,
    /// Large blocks served by `mmap` of their own (given back on `free`).
    pub mmapped: usize,
}

/// What a [`trim`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trim {
    /// Some memory went back to the OS.
    Released,
    /// Nothing could be given back.
    Nothing,
    /// This allocator has no trim (not glibc).
    Unsupported,
}

/// Gives every whole free page of every arena back to the OS. Holds each arena's lock while it
/// walks it: an allocation on that arena waits meanwhile (a 60 MB heap with 48 MB of free pages
/// took 10–25 ms to trim on the 2-core bench machine, 3 ms with nothing left to give), so call
/// it when a load has gone, never per request.
pub fn trim() -> Trim {
    imp::trim()
}

/// The allocator's figures, or `None` where it offers none. Walks every arena's free lists
/// under its lock: for a scrape or a probe, not for a hot path.
pub fn stats() -> Option<Heap> {
    imp::stats()
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[allow(unsafe_code)]
mod imp {
    use super::{Heap, Trim};

    pub fn trim() -> Trim {
        // SAFETY: `malloc_trim` takes a byte count (how much to keep at the top of the main
        // heap) and touches only the allocator's own state, under its own locks.
        match unsafe { libc::malloc_trim(0) } {
            0 => Trim::Nothing,
            _ => Trim::Released,
        }
    }

    pub fn stats() -> Option<Heap> {
        // SAFETY: `mallinfo2` takes nothing and returns a plain struct by value; it reads the
        // allocator's state under its own locks (glibc ≥ 2.33, which every supported distro has).
        let m = unsafe { libc::mallinfo2() };
        Some(Heap { in_use: m.uordblks + m.hblkhd, free: m.fordblks, mmapped: m.hblkhd })
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
mod imp {
    use super::{Heap, Trim};

    pub fn trim() -> Trim {
        Trim::Unsupported
    }

    pub fn stats() -> Option<Heap> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    #[test]
    fn freed_small_blocks_show_as_free_until_a_trim_gives_them_back() {
        // Many small blocks (below the mmap threshold, so they live in the heap), then four of
        // every five freed: runs of 8 KB, each holding a whole page, between the kept blocks.
        let mut blocks: Vec<Vec<u8>> = (0..20_000).map(|i| vec![i as u8; 2_000]).collect();
        let before = stats().expect("glibc reports its heap");
        let mut kept = Vec::new();
        for (i, b) in blocks.drain(..).enumerate() {
            if i % 5 == 0 {
                kept.push(b);
            }
        }
        let freed = stats().expect("glibc reports its heap");
        assert!(freed.free >= before.free + 16_000 * 2_000, "{before:?} → {freed:?}");
        assert_eq!(trim(), Trim::Released, "whole free pages lie between the kept blocks");
        assert_eq!(kept.len(), 4_000);
    }
}
