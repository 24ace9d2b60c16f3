//! The bandwidth staircase of a run that swept `--array-size`: each bandwidth workload's
//! rate against the working set per thread, a line per workload and thread count (and what
//! else names the point), and the levels the line shows (L1, L2…, memory), found as LATENCY
//! finds its own: plateaus of the time per byte, named after sysfs's caches.

use crate::results::levels::{detect_levels_within, name_levels};
use crate::results::params::{LevelKind, Params};
use crate::results::point::{Field, fields};
use crate::results::{Metric, ResultRecord, Subsystem};
use crate::sysinfo::Cache;
use std::collections::{HashMap, HashSet};

/// One line of the staircase.
#[derive(Debug, Clone)]
pub struct Staircase<'a> {
    /// "TRIAD · 1 thread": the workload and what tells this line from the others.
    pub name: String,
    /// Its records, by working set.
    pub records: Vec<&'a ResultRecord>,
    /// (working set per thread in bytes, mean rate in the records' unit), by working set.
    pub points: Vec<(u64, f64)>,
    pub levels: Vec<BandwidthLevel>,
}

/// A plateau of the staircase.
#[derive(Debug, Clone, PartialEq)]
pub struct BandwidthLevel {
    pub kind: LevelKind,
    /// The plateau's median rate, in its records' unit.
    pub gbps: f64,
    /// Its smallest and largest working sets per thread, bytes.
    pub from_bytes: u64,
    pub to_bytes: u64,
    /// Where it ends: the working set at which the rate crosses the geometric mean of this
    /// plateau's and the next one's; None for the last.
    pub capacity_bytes: Option<u64>,
    /// The size sysfs gives the cache it is named after (per instance); None for memory.
    pub sysfs_bytes: Option<u64>,
}

/// A point is flat within this of each neighbour, and neighbouring plateaus closer than
/// `SAME_LEVEL` are one level: a core's L2 and L3 rates differ by 1.2× on a Zen 4 (106 and 89
/// GB/s), where their latencies differ by 3×, and the rate eases from one to the other over a
/// few sizes (LATENCY's 15 % would join them through those).
const FLAT: f64 = 1.10;
const SAME_LEVEL: f64 = 1.15;

/// A line needs this many working sets to be a staircase.
const MIN_SIZES: usize = 3;

/// The parameters a line runs along (the working set and the array it follows from) or may
/// cross (the stores: `--stores auto` streams only past the last-level cache).
pub(super) const ALONG: &[&str] = &["working_set_bytes", "array_bytes_per_thread", "stores"];

/// The working set per thread of a bandwidth throughput record: all its arrays.
pub(super) fn per_thread(r: &ResultRecord) -> Option<u64> {
    match &r.params {
        Params::Mem(p) if r.metric == Metric::Throughput && r.subsystem == Subsystem::Mem => p
            .kernel
            .as_ref()
            .map(|k| k.working_set_bytes / p.threads.max(1) as u64),
        _ => None,
    }
}

/// The data cache level a bandwidth point's arrays fit in (its threads' share of each
/// instance: working set ÷ threads × the threads that share one), or None for memory.
pub fn level_of(r: &ResultRecord, caches: &[Cache]) -> Option<u32> {
    let kernel = r.params.mem()?.kernel.as_ref()?;
    let threads = r.params.threads().max(1) as u64;
    let per_thread = kernel.working_set_bytes / threads;
    caches
        .iter()
        .filter(|c| c.kind != "Instruction")
        .filter(|c| {
            let sharing = threads.min(u64::from(c.shared_by_cpus.max(1)));
            per_thread.saturating_mul(sharing) <= c.size_bytes
        })
        .map(|c| c.level)
        .min()
}

/// The staircases of `records` (any records: those that are not bandwidth points are left
/// out), in the order their first records come; `caches`: sysfs's, to name the levels.
pub fn staircases<'a>(records: &[&'a ResultRecord], caches: &[Cache]) -> Vec<Staircase<'a>> {
    let mut groups: Vec<(String, Vec<Field>, Vec<&'a ResultRecord>)> = Vec::new();
    let mut at: HashMap<String, usize> = HashMap::new();
    for &r in records {
        if per_thread(r).is_none() {
            continue;
        }
        let own: Vec<Field> = fields(&r.params)
            .into_iter()
            .filter(|f| !ALONG.contains(&f.key))
            .collect();
        let key = format!(
            "{}/{}",
            r.workload,
            serde_json::to_string(&own.iter().map(|f| (f.key, &f.value)).collect::<Vec<_>>())
                .unwrap_or_default()
        );
        match at.get(&key) {
            Some(&i) => groups[i].2.push(r),
            None => {
                at.insert(key.clone(), groups.len());
                groups.push((key, own, vec![r]));
            }
        }
    }
    groups.retain(|g| {
        let mut sizes: Vec<u64> = g.2.iter().filter_map(|r| per_thread(r)).collect();
        sizes.sort_unstable();
        sizes.dedup();
        sizes.len() >= MIN_SIZES
    });
    // A line's name: its workload and the words of what names it, less those all lines share.
    let words = |own: &[Field]| -> Vec<String> {
        own.iter()
            .filter(|f| f.role.names())
            .filter_map(Field::words)
            .collect()
    };
    let all: Vec<Vec<String>> = groups.iter().map(|g| words(&g.1)).collect();
    // How many lines have each word: a word every line has is shared.
    let mut lines_with: HashMap<&str, usize> = HashMap::new();
    for ws in &all {
        let distinct: HashSet<&str> = ws.iter().map(String::as_str).collect();
        for w in distinct {
            *lines_with.entry(w).or_default() += 1;
        }
    }
    let shared = |w: &String| lines_with.get(w.as_str()) == Some(&all.len());
    let sizes: Vec<(u32, u64)> = caches
        .iter()
        .filter(|c| c.kind != "Instruction")
        .map(|c| (c.level, c.size_bytes))
        .collect();
    groups
        .into_iter()
        .zip(&all)
        .map(|((_, own, mut recs), ws)| {
            recs.sort_by_key(|r| per_thread(r));
            let points: Vec<(u64, f64)> = recs
                .iter()
                .filter_map(|r| Some((per_thread(r)?, r.summary.mean)))
                .collect();
            let mut name = vec![recs[0].workload.name().to_string()];
            // The thread count always: the lines of one workload differ in it.
            let threads = own
                .iter()
                .find(|f| f.key == "threads")
                .and_then(Field::words);
            name.extend(threads.clone());
            name.extend(
                ws.iter()
                    .filter(|w| Some(*w) != threads.as_ref() && !shared(w))
                    .cloned(),
            );
            Staircase {
                name: name.join(" · "),
                levels: levels(&points, &sizes),
                records: recs,
                points,
            }
        })
        .collect()
}

/// Whether a record is one of the records of `stairs` (the same record, not an equal one): a
/// test built once, for many records.
pub fn on_stairs(stairs: &[Staircase]) -> impl Fn(&ResultRecord) -> bool + use<> {
    let on: HashSet<*const ResultRecord> = stairs
        .iter()
        .flat_map(|l| l.records.iter().map(|&r| std::ptr::from_ref(r)))
        .collect();
    move |r| on.contains(&std::ptr::from_ref(r))
}

/// The plateaus of a line (x: working set per thread, y: GB/s), named after `caches` (level,
/// bytes per instance).
pub fn levels(points: &[(u64, f64)], caches: &[(u32, u64)]) -> Vec<BandwidthLevel> {
    // The time per byte rises as the rate falls: LATENCY's staircase, in ns per byte.
    let steps: Vec<(u64, f64)> = points
        .iter()
        .filter(|p| p.1 > 0.0)
        .map(|&(x, gbps)| (x, 1.0 / gbps))
        .collect();
    if steps.len() < MIN_SIZES {
        return Vec::new();
    }
    let found = detect_levels_within(&steps, FLAT, SAME_LEVEL);
    let kinds = name_levels(&found, caches);
    found
        .iter()
        .zip(kinds)
        .map(|(l, kind)| BandwidthLevel {
            kind,
            gbps: 1.0 / l.latency_ns,
            from_bytes: l.from_bytes,
            to_bytes: l.to_bytes,
            capacity_bytes: l.capacity_bytes,
            sysfs_bytes: match kind {
                LevelKind::Cache(n) => caches.iter().find(|c| c.0 == n).map(|c| c.1),
                LevelKind::Memory(_) => None,
            },
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Zen 4's caches per instance.
    const CACHES: &[(u32, u64)] = &[(1, 32 << 10), (2, 1 << 20), (3, 32 << 20)];

    #[test]
    fn a_measured_staircase_names_its_levels() {
        // SUM on one thread of a Zen 4 guest (√2 steps from 16 KiB to 1 GiB, every other
        // size), with the host's noise in the memory part.
        let gbps = [
            (16 << 10, 178.1),
            (32 << 10, 165.5),
            (64 << 10, 101.7),
            (128 << 10, 110.4),
            (256 << 10, 109.9),
            (512 << 10, 102.9),
            (1 << 20, 87.21),
            (2 << 20, 88.5),
            (4 << 20, 95.28),
            (8 << 20, 89.15),
            (16 << 20, 64.76),
            (32 << 20, 45.73),
            (64 << 20, 28.81),
            (128 << 20, 27.87),
            (256 << 20, 28.31),
            (512 << 20, 27.26),
            (1 << 30, 23.57),
        ];
        let found = levels(&gbps, CACHES);
        let kinds: Vec<String> = found.iter().map(|l| l.kind.to_string()).collect();
        assert_eq!(kinds, ["L1", "L2", "L3", "memory"], "{found:?}");
        let gbps: Vec<f64> = found.iter().map(|l| l.gbps).collect();
        assert!((170.0..180.0).contains(&gbps[0]), "{found:?}");
        assert!((100.0..111.0).contains(&gbps[1]), "{found:?}");
        assert!((87.0..96.0).contains(&gbps[2]), "{found:?}");
        assert!((23.0..30.0).contains(&gbps[3]), "{found:?}");
        // A plateau's ends are its flat points: the last size inside a cache is not one when
        // the next is far below it.
        assert_eq!(
            (found[1].from_bytes, found[1].to_bytes),
            (128 << 10, 256 << 10)
        );
        assert_eq!(
            (found[3].from_bytes, found[3].to_bytes),
            (128 << 20, 256 << 20)
        );
        // Each cache level ends between its last flat size and the next level's first.
        let ends: Vec<Option<u64>> = found.iter().map(|l| l.capacity_bytes).collect();
        assert!(
            ends[0].is_some_and(|b| (16 << 10..64 << 10).contains(&b)),
            "{ends:?}"
        );
        assert!(
            ends[2].is_some_and(|b| (8 << 20..64 << 20).contains(&b)),
            "{ends:?}"
        );
        assert_eq!(ends[3], None);
        let sysfs: Vec<Option<u64>> = found.iter().map(|l| l.sysfs_bytes).collect();
        assert_eq!(sysfs, [Some(32 << 10), Some(1 << 20), Some(32 << 20), None]);
    }

    #[test]
    fn too_few_sizes_have_no_levels() {
        assert!(levels(&[(1 << 20, 10.0), (2 << 20, 9.0)], CACHES).is_empty());
        assert!(levels(&[], CACHES).is_empty());
    }
}
