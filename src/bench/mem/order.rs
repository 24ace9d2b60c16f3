//! Random orders for the memory benchmarks: a full-period LCG walk that visits every block of a
//! range exactly once per pass without a table (so that even 8-byte blocks cost no memory), and
//! Sattolo's shuffle, which makes one single cycle for pointer chasing.

pub use crate::bench::rng::SplitMix64;

/// Visits 0..n in a pseudo-random order, each index exactly once: an LCG modulo the next power
/// of two m ≥ n, x ← (a·x + c) mod m, has full period m when a ≡ 1 (mod 4) and c is odd
/// (Hull–Dobell); values ≥ n are skipped (fewer than half of them).
#[derive(Debug, Clone)]
pub struct BlockOrder {
    n: u64,
    mask: u64,
    a: u64,
    c: u64,
    x: u64,
    left: u64,
}

impl BlockOrder {
    pub fn new(n: u64, seed: u64) -> BlockOrder {
        let m = n.max(1).next_power_of_two();
        let mut rng = SplitMix64(seed);
        BlockOrder {
            n,
            mask: m - 1,
            a: (rng.next_u64() & !3) | 1 | 4, // ≡ 1 (mod 4), not 1
            c: rng.next_u64() | 1,
            x: rng.next_u64() & (m - 1),
            left: n,
        }
    }
}

impl Iterator for BlockOrder {
    type Item = u64;

    #[inline]
    fn next(&mut self) -> Option<u64> {
        if self.left == 0 {
            return None;
        }
        loop {
            self.x = self.a.wrapping_mul(self.x).wrapping_add(self.c) & self.mask;
            if self.x < self.n {
                self.left -= 1;
                return Some(self.x);
            }
        }
    }
}

/// A random cyclic permutation of 0..n (Sattolo's algorithm): following `next[i]` from any
/// start visits all n elements before returning.
pub fn single_cycle(n: usize, seed: u64) -> Vec<u32> {
    let mut perm: Vec<u32> = (0..n as u32).collect();
    let mut rng = SplitMix64(seed);
    for i in (1..n).rev() {
        let j = rng.below(i as u64) as usize; // j < i: Sattolo, not Fisher–Yates
        perm.swap(i, j);
    }
    // perm is now a cyclic order; turn it into successor form.
    let mut next = vec![0u32; n];
    for k in 0..n {
        next[perm[k] as usize] = perm[(k + 1) % n];
    }
    next
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_order_visits_each_block_once() {
        for n in [1u64, 2, 3, 7, 64, 1000, 4097] {
            let mut seen: Vec<u64> = BlockOrder::new(n, n * 7 + 1).collect();
            assert_eq!(seen.len() as u64, n);
            seen.sort();
            assert!(seen.iter().copied().eq(0..n), "n = {n}");
        }
        assert_eq!(BlockOrder::new(0, 1).count(), 0);
        // Not the identity order.
        let first: Vec<u64> = BlockOrder::new(1000, 3).take(10).collect();
        assert_ne!(first, (0..10).collect::<Vec<_>>());
    }

    #[test]
    fn sattolo_is_one_cycle() {
        for n in [1usize, 2, 5, 1000] {
            let next = single_cycle(n, 42);
            let mut i = 0usize;
            for step in 1..=n {
                i = next[i] as usize;
                if i == 0 {
                    assert_eq!(step, n, "cycle shorter than n = {n}");
                }
            }
            assert_eq!(i, 0);
        }
    }
}
