//! The plateaus of a measured staircase (latency, or bandwidth, against the working set): where
//! each level ends, and which cache or memory each one is. The memory benchmark finds its
//! levels with them, and the report the levels of a bandwidth staircase.

pub use super::kinds::LevelKind;

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

    /// The staircase measured on the 2-vCPU Zen 4 VM (THP), rounded: L1, L2, a short L3, then
    /// DRAM whose latency drifts up with the working set (page walks).
    const MEASURED: [(u64, f64); 37] = [
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
}
