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

/// One plateau of the staircase.
#[derive(Debug, Clone, PartialEq)]
pub struct Level {
    /// Median latency of the plateau's points, ns.
    pub latency_ns: f64,
    /// Smallest and largest working sets on the plateau.
    pub from_bytes: u64,
    pub to_bytes: u64,
    /// Where the level ends: the working set at which the latency crosses the geometric mean of
    /// this plateau and the next (interpolated in log size); None for the last plateau.
    pub capacity_bytes: Option<u64>,
}

pub use crate::results::params::LevelKind;

/// Names the plateaus `levels` (smallest working set first) after the data caches sysfs lists,
/// `caches` as (level, size in bytes).
///
/// With more plateaus than cache levels, they are taken in order (L1, L2…, then memory, then
/// memory-2…: sizes that sysfs reports for a whole package, or a hypervisor's, would
/// otherwise misplace them), except that a plateau reaching four times the last cache is
/// memory (and those after it memory-2…). With as many or fewer (a sweep that stops inside the caches, or
/// two levels too close to tell apart), a plateau that reaches past twice the last cache is
/// memory (with 4 KiB pages, or on a guest, the curve can rise so gently from inside the last
/// cache to far past it that it reads as one plateau), and any other is named by its middle
/// working set (the geometric mean of its ends): the first cache, above the previous
/// plateau's, that holds it, else memory. Without sysfs's caches, the last plateau is memory
/// and those before it L1, L2… in order.
pub fn name_levels(levels: &[Level], caches: &[(u32, u64)]) -> Vec<LevelKind> {
    let known = caches.iter().map(|c| c.0).max().unwrap_or(0) as usize;
    if known == 0 || levels.len() > known {
        let cache_levels = if known > 0 {
            known
        } else {
            levels.len().saturating_sub(1)
        };
        // A plateau that reaches four times the last cache is no cache, whatever the order
        // says (a staircase with no L3 plateau of its own named memory L3 and its page walks
        // memory on a Zen 4 guest).
        let last_size = caches.iter().map(|c| c.1).max().unwrap_or(0);
        let (mut cache, mut memory) = (0, 0);
        return levels
            .iter()
            .map(|l| {
                let past = known > 0 && l.to_bytes >= last_size.saturating_mul(4);
                if memory == 0 && !past && cache < cache_levels {
                    cache += 1;
                    LevelKind::Cache(cache as u32)
                } else {
                    memory += 1;
                    LevelKind::Memory(memory)
                }
            })
            .collect();
    }
    let last_size = caches.iter().map(|c| c.1).max().unwrap_or(0);
    let mut last_cache = 0;
    let mut memory = 0;
    levels
        .iter()
        .map(|l| {
            let middle = (l.from_bytes as f64 * l.to_bytes as f64).sqrt();
            let holds = caches
                .iter()
                .filter(|&&(level, size)| level > last_cache && size as f64 >= middle)
                .map(|&(level, _)| level)
                .min()
                .filter(|_| l.to_bytes <= last_size.saturating_mul(2));
            match holds {
                Some(level) if memory == 0 => {
                    last_cache = level;
                    LevelKind::Cache(level)
                }
                _ => {
                    memory += 1;
                    LevelKind::Memory(memory)
                }
            }
        })
        .collect()
}

/// A point is flat when it is within this factor of each neighbour.
const FLAT: f64 = 1.15;
/// Neighbouring plateaus closer than this factor are one level (drift, not a step: cache
/// levels differ by 3× or more in latency).
const SAME_LEVEL: f64 = 1.5;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Finds the plateaus of a staircase given as (working set, latency) sorted by size.
///
/// A point is flat when its latency is within 15 % of each neighbour's; runs of flat points are
/// plateaus, and neighbouring plateaus within 1.5× of each other are merged. A level's capacity
/// is where the curve between it and the next plateau crosses their geometric mean.
pub fn detect_levels(points: &[(u64, f64)]) -> Vec<Level> {
    detect_levels_within(points, FLAT, SAME_LEVEL)
}

/// [`detect_levels`] with a point flat within `flat` of each neighbour, and neighbouring
/// plateaus merged only within `same_level` of each other (a bandwidth staircase's L2 and L3
/// differ by less than its latency levels do).
pub fn detect_levels_within(points: &[(u64, f64)], flat: f64, same_level: f64) -> Vec<Level> {
    let n = points.len();
    let within = |a: f64, b: f64| a.max(b) <= a.min(b) * flat;
    let flat: Vec<bool> = (0..n)
        .map(|i| {
            (i == 0 || within(points[i - 1].1, points[i].1))
                && (i + 1 == n || within(points[i].1, points[i + 1].1))
        })
        .collect();
    // Runs of flat points: (first index, last index).
    let mut runs: Vec<(usize, usize)> = Vec::new();
    for i in (0..n).filter(|&i| flat[i]) {
        match runs.last_mut() {
            Some((_, last)) if *last + 1 == i => *last = i,
            _ => runs.push((i, i)),
        }
    }
    let latency = |(a, b): (usize, usize)| {
        median((a..=b).filter(|i| flat[*i]).map(|i| points[i].1).collect())
    };
    let mut merged: Vec<(usize, usize)> = Vec::new();
    for run in runs {
        match merged.last_mut() {
            Some(prev) if latency(run) < latency(*prev) * same_level => prev.1 = run.1,
            _ => merged.push(run),
        }
    }
    merged
        .iter()
        .enumerate()
        .map(|(k, &run)| {
            let capacity_bytes = merged.get(k + 1).map(|&next| {
                let target = (latency(run) * latency(next)).sqrt();
                let (lo, hi) = (run.1, next.0);
                let i = (lo..hi)
                    .find(|&i| points[i + 1].1 >= target)
                    .unwrap_or(hi - 1);
                let ((s0, l0), (s1, l1)) = (points[i], points[i + 1]);
                let t = ((target.ln() - l0.ln()) / (l1.ln() - l0.ln())).clamp(0.0, 1.0);
                ((s0 as f64).ln() + t * ((s1 as f64).ln() - (s0 as f64).ln())).exp() as u64
            });
            Level {
                latency_ns: latency(run),
                from_bytes: points[run.0].0,
                to_bytes: points[run.1].0,
                capacity_bytes,
            }
        })
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
    fn plateaus_are_named_by_order_or_by_size() {
        let names = |plateaus: &[(u64, u64)], caches: &[(u32, u64)]| -> Vec<String> {
            let levels: Vec<Level> = plateaus
                .iter()
                .map(|&(from_bytes, to_bytes)| Level {
                    latency_ns: 1.0,
                    from_bytes,
                    to_bytes,
                    capacity_bytes: None,
                })
                .collect();
            name_levels(&levels, caches)
                .into_iter()
                .map(|l| l.to_string())
                .collect()
        };
        // Zen 4: 32 KiB, 1 MiB, 32 MiB; the plateaus this machine's staircase found.
        let zen4 = [(1, 32 << 10), (2, 1 << 20), (3, 32 << 20)];
        let (l1, l2, l3) = (
            (4 << 10, 23 << 10),
            (64 << 10, 256 << 10),
            (3 << 20, 6 << 20),
        );
        let memory = (64 << 20, 1 << 30);
        // The whole staircase, and one more rise past memory (page walks): in order.
        assert_eq!(
            names(&[l1, l2, l3, memory], &zen4),
            ["L1", "L2", "L3", "memory"]
        );
        assert_eq!(
            names(&[l1, l2, l3, memory, (2 << 30, 4 << 30)], &zen4),
            ["L1", "L2", "L3", "memory", "memory-2"]
        );
        // No L3 plateau of its own, memory from inside L3 to 256 MiB, then page walks (huge
        // pages, a Zen 4 guest): memory and memory-2, not L3 and memory.
        assert_eq!(
            names(&[l1, l2, (5 << 20, 256 << 20), (724 << 20, 1 << 30)], &zen4),
            ["L1", "L2", "memory", "memory-2"]
        );
        // A sweep that stops inside the caches names no memory.
        assert_eq!(names(&[l1], &zen4), ["L1"]);
        assert_eq!(names(&[l1, l2], &zen4), ["L1", "L2"]);
        // With 4 KiB pages L3 was not told from memory: the last plateau runs from inside L3
        // to 1 GiB, and is memory.
        assert_eq!(
            names(&[l1, l2, (16 << 20, 1 << 30)], &zen4),
            ["L1", "L2", "memory"]
        );
        // A gentle rise from inside L3 to far past it read as one plateau: memory.
        assert_eq!(
            names(&[(8 << 10, 362 << 10), (4 << 20, 256 << 20)], &zen4),
            ["L2", "memory"]
        );
        // L2 and L3 too close to tell apart: the second plateau lies past L2.
        assert_eq!(
            names(&[l1, (2 << 20, 8 << 20), memory], &zen4),
            ["L1", "L3", "memory"]
        );
        // Only past the caches.
        assert_eq!(names(&[memory], &zen4), ["memory"]);
        // The Sapphire Rapids guest of ../shared/hardware: its sysfs says 300 MiB of L3 (the
        // hypervisor's figure). Four plateaus are named in order; with L3 not told apart,
        // memory from 128 MiB to 1 GiB is still memory.
        let spr = [(1, 48 << 10), (2, 2 << 20), (3, 300 << 20)];
        let (s1, s2) = ((4 << 10, 32 << 10), (64 << 10, 1448 << 10));
        assert_eq!(
            names(&[s1, s2, (8 << 20, 32 << 20), (256 << 20, 1 << 30)], &spr),
            ["L1", "L2", "L3", "memory"]
        );
        assert_eq!(
            names(&[s1, s2, (128 << 20, 1 << 30)], &spr),
            ["L1", "L2", "memory"]
        );
        // Without sysfs's caches: the last is memory.
        assert_eq!(names(&[l1, memory], &[]), ["L1", "memory"]);
        assert!(names(&[], &zen4).is_empty());
    }

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

    /// The staircase measured on the 2-vCPU Zen 4 VM (THP), rounded: L1, L2, a short L3, then
    /// DRAM whose latency drifts up with the working set (page walks).
    pub const MEASURED: [(u64, f64); 37] = [
        (4096, 1.11),
        (5792, 1.12),
        (8192, 1.10),
        (11585, 1.10),
        (16384, 1.10),
        (23170, 1.11),
        (32768, 1.30),
        (46340, 3.84),
        (65536, 3.87),
        (92681, 3.87),
        (131072, 3.91),
        (185363, 3.91),
        (262144, 3.87),
        (370727, 4.54),
        (524288, 4.98),
        (741455, 6.32),
        (1048576, 9.37),
        (1482910, 12.1),
        (2097152, 13.5),
        (2965820, 15.5),
        (4194304, 36.3),
        (5931641, 108.8),
        (8388608, 122.5),
        (11863283, 125.5),
        (16777216, 140.9),
        (23726566, 155.5),
        (33554432, 155.7),
        (47453132, 157.6),
        (67108864, 160.0),
        (94906265, 168.6),
        (134217728, 176.0),
        (189812531, 192.5),
        (268435456, 176.2),
        (379625062, 172.6),
        (536870912, 208.8),
        (759250124, 246.0),
        (1073741824, 257.3),
    ];

    #[test]
    fn levels_of_the_measured_staircase() {
        let levels = detect_levels(&MEASURED);
        let lat: Vec<f64> = levels.iter().map(|l| l.latency_ns).collect();
        assert_eq!(lat.len(), 5, "{levels:?}");
        assert_eq!(&lat[..3], &[1.1, 3.91, 13.5], "{levels:?}");
        assert!((140.0..=160.0).contains(&lat[3]), "{levels:?}");
        // L1 ends near 32 KiB, L2 near 1 MiB (between the plateaus' geometric mean crossings).
        let cap = |k: usize| levels[k].capacity_bytes.unwrap() as f64;
        assert!((24_000.0..48_000.0).contains(&cap(0)), "{}", cap(0));
        assert!((600_000.0..1_100_000.0).contains(&cap(1)), "{}", cap(1));
        assert!(levels.last().unwrap().capacity_bytes.is_none());
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
        let levels = detect_levels(&pts);
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
