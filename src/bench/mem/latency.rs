//! Memory latency: dependent loads through a random cyclic permutation of cache lines (pointer
//! chasing), so that every load waits for the previous one and no prefetcher can guess the next
//! address; swept over working sets from a few KiB to DRAM sizes, the latency rises in steps at
//! each cache level's capacity (the staircase). Also the time per operation of independent 1- and
//! 8-byte loads, sequential and random.

use super::order::{SplitMix64, single_cycle};
use crate::bench::buffer::{Buffer, HugePages};

/// Bytes between two chased pointers: one cache line, so each load touches a new line.
pub const LINE: usize = 64;

/// A pointer-chasing ring in its own buffer.
pub struct Chase {
    buffer: Buffer,
    lines: usize,
}

impl Chase {
    /// Builds a ring over `working_set` bytes (rounded down to whole lines, at least 2), each
    /// line holding the address of the next line of one random cycle.
    pub fn new(working_set: usize, huge: HugePages, seed: u64) -> std::io::Result<Chase> {
        Chase::on_node(working_set, huge, seed, None)
    }

    /// [`Chase::new`], its memory bound to NUMA `node` where one is given.
    pub fn on_node(
        working_set: usize,
        huge: HugePages,
        seed: u64,
        node: Option<u32>,
    ) -> std::io::Result<Chase> {
        let lines = (working_set / LINE).max(2);
        let buffer = Buffer::new_with(lines * LINE, huge, |p, len| match node {
            Some(n) => super::numa::bind(p, len, n),
            None => Ok(()),
        })?;
        let base = buffer.as_ptr();
        let next = single_cycle(lines, seed);
        for (i, &n) in next.iter().enumerate() {
            // SAFETY: i and n are below `lines`; each line is 64-byte aligned within the buffer.
            unsafe {
                *(base.add(i * LINE) as *mut usize) = base.add(n as usize * LINE) as usize;
            }
        }
        Ok(Chase { buffer, lines })
    }

    pub fn lines(&self) -> usize {
        self.lines
    }

    /// Follows the ring for `loads` dependent loads (rounded up to 16); returns where it ended,
    /// which the caller must use (black_box) so that the loads are not removed.
    pub fn run(&self, loads: u64) -> usize {
        let mut p = self.buffer.as_ptr() as usize;
        for _ in 0..loads.div_ceil(16) {
            for _ in 0..16 {
                // SAFETY: every line holds the address of a line of this buffer, which lives as
                // long as `self`.
                p = unsafe { *(p as *const usize) };
            }
        }
        p
    }

    /// Bytes of the ring backed by huge pages.
    pub fn huge_page_bytes(&self) -> Option<u64> {
        self.buffer.huge_page_bytes()
    }

    /// The record's parameters of a chase through this ring of `working_set` bytes (`huge`
    /// pages asked for): `loads` a round at a mean of `mean_ns` each, on a core at `clock_ghz`.
    pub fn params(
        &self,
        working_set: u64,
        huge: HugePages,
        loads: u64,
        clock_ghz: Option<f64>,
        mean_ns: Option<f64>,
    ) -> crate::results::params::Chase {
        crate::results::params::Chase {
            working_set_bytes: working_set,
            pages: huge.pages(),
            huge_page_bytes: self.huge_page_bytes(),
            loads,
            clock_ghz,
            latency_cycles: clock_ghz.zip(mean_ns).map(|(c, ns)| ns * c),
        }
    }
}

/// Working sets from `min` to `max` bytes, spaced by √2 (powers of two and their √2 multiples),
/// rounded to whole cache lines.
///
/// The grid is computed in `f64` and ends at the first step past `max` or past what a `u64`
/// holds (2⁶⁴ bytes, 120 steps from 4 KiB), whichever comes first: a `max` near `u64::MAX`
/// gives a finite list, never a step that saturates and repeats.
pub fn staircase_sizes(min: u64, max: u64) -> Vec<u64> {
    // 4096 × 2^(k/2) < 2^64 for k < 2 × (64 − 12).
    const STEPS: u32 = 2 * (64 - 12);
    (0..STEPS)
        .map(|k| 4096.0 * 2f64.powf(f64::from(k) / 2.0))
        .take_while(|&size| size <= max as f64)
        .map(|size| (size as u64) / LINE as u64 * LINE as u64)
        .filter(|&size| size >= min && size <= max)
        .collect()
}

/// Kinds of per-operation probes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Probe {
    pub random: bool,
    pub op_bytes: usize,
}

impl Probe {
    pub const ALL: [Probe; 4] = [
        Probe {
            random: false,
            op_bytes: 1,
        },
        Probe {
            random: false,
            op_bytes: 8,
        },
        Probe {
            random: true,
            op_bytes: 1,
        },
        Probe {
            random: true,
            op_bytes: 8,
        },
    ];

    /// What its records name it (`seq-8B`, `random-1B`).
    pub fn name(self) -> crate::results::params::Probe {
        let order = if self.random {
            crate::results::params::Order::Random
        } else {
            crate::results::params::Order::Sequential
        };
        crate::results::params::Probe::Op {
            order,
            bytes: self.op_bytes as u64,
        }
    }

    /// Performs `ops` independent loads of `op_bytes` over the first `span` bytes of `buf`
    /// (`span` a power of two): sequential, or at random aligned offsets. Volatile loads, so each
    /// is one real load of that width, never merged or vectorised. Returns their sum.
    pub fn run(self, buf: &Buffer, span: usize, ops: u64) -> u64 {
        let base = buf.as_ptr();
        let mask = (span - 1) & !(self.op_bytes - 1);
        let mut rng = SplitMix64(ops);
        let mut x = rng.next_u64();
        let (a, c) = (6364136223846793005u64, 1442695040888963407u64);
        let mut sum = 0u64;
        let mut off = 0usize;
        for _ in 0..ops {
            let at = if self.random {
                x = x.wrapping_mul(a).wrapping_add(c);
                (x >> 16) as usize & mask
            } else {
                off = (off + self.op_bytes) & mask;
                off
            };
            // SAFETY: `at` is below span ≤ the buffer's length and aligned to op_bytes.
            let v = unsafe {
                if self.op_bytes == 1 {
                    std::ptr::read_volatile(base.add(at)) as u64
                } else {
                    std::ptr::read_volatile(base.add(at) as *const u64)
                }
            };
            sum = sum.wrapping_add(v);
        }
        sum
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chase_walks_the_whole_ring() {
        let c = Chase::new(64 * 100, HugePages::Off, 9).unwrap();
        assert_eq!(c.lines(), 100);
        let start = c.buffer.as_ptr() as usize;
        // 1600 loads = 16 full laps: back at the start.
        assert_eq!(c.run(1600), start);
    }

    #[test]
    fn the_staircase_ends_for_any_max() {
        let all = staircase_sizes(1, u64::MAX);
        assert_eq!(all.len(), 104);
        assert!(all.windows(2).all(|w| w[0] < w[1]), "{all:?}");
        assert!(staircase_sizes(u64::MAX - 63, u64::MAX).is_empty());
        assert!(staircase_sizes(1, 4095).is_empty());
    }

    #[test]
    fn sizes_are_root_two_spaced() {
        let s = staircase_sizes(4096, 65536);
        assert_eq!(s.first(), Some(&4096));
        assert_eq!(s.last(), Some(&65536));
        assert_eq!(s.len(), 9);
        assert!(s.iter().all(|x| x % 64 == 0));
    }

    #[test]
    fn levels_of_a_synthetic_staircase() {
        let sizes = staircase_sizes(4096, 1 << 30);
        let pts: Vec<(u64, f64)> = sizes
            .iter()
            .map(|&s| {
                let lat = match s {
                    s if s <= 32 << 10 => 1.0,
                    s if s <= 1 << 20 => 4.0,
                    s if s <= 32 << 20 => 14.0,
                    _ => 160.0,
                };
                (s, lat)
            })
            .collect();
        let levels = crate::results::levels::detect_levels(&pts);
        let lat: Vec<f64> = levels.iter().map(|l| l.latency_ns).collect();
        assert_eq!(lat, vec![1.0, 4.0, 14.0, 160.0]);
        // Each capacity lies between the last size of a level and the first of the next.
        for (level, (lo, hi)) in
            levels
                .iter()
                .zip([(32 << 10, 46341), (1 << 20, 1482911), (32 << 20, 47453133)])
        {
            let cap = level.capacity_bytes.unwrap();
            assert!((lo..=hi).contains(&cap), "{cap} not in {lo}..={hi}");
        }
    }

    #[test]
    fn probes_read_what_is_there() {
        let b = Buffer::new(1 << 20, HugePages::Off).unwrap();
        for p in Probe::ALL {
            assert_eq!(p.run(&b, 1 << 20, 1000), 0, "{}", p.name());
        }
    }
}
