//! Thread pinning: which CPUs the process may use, the order threads are placed on them, and
//! sched_setaffinity for the calling thread (or another thread of the process).

use crate::sysinfo::LogicalCpu;
use std::collections::BTreeMap;

pub use crate::sysinfo::cpuset::{
    allowed_cpus, pin_current_thread, restrict_current_thread, restrict_thread,
};

/// Where a point's threads run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placement {
    /// The CPU of each thread.
    pub cpus: Vec<usize>,
    /// Distinct physical cores used.
    pub cores: u32,
    /// More threads than allowed CPUs: some CPUs run two threads.
    pub oversubscribed: bool,
}

/// Places `threads` threads: one per physical core first (spread over sockets in order), then
/// the second hardware thread of each core, and so on; beyond the allowed CPUs, round robin.
pub fn place(threads: usize, allowed: &[usize], topology: &[LogicalCpu]) -> Placement {
    let key = |cpu: usize| {
        topology
            .iter()
            .find(|l| l.cpu == cpu)
            .map_or((-1, cpu as i64), |l| (l.package, l.core))
    };
    // Rank each CPU among the siblings of its core: 0 for the first hardware thread.
    let mut seen: BTreeMap<(i64, i64), usize> = BTreeMap::new();
    let mut ranked: Vec<(usize, (i64, i64), usize)> = allowed
        .iter()
        .map(|&cpu| {
            let k = key(cpu);
            let rank = seen.entry(k).or_insert(0);
            *rank += 1;
            (*rank - 1, k, cpu)
        })
        .collect();
    ranked.sort();
    let order: Vec<usize> = ranked.iter().map(|r| r.2).collect();
    let cpus: Vec<usize> = if order.is_empty() {
        Vec::new()
    } else {
        (0..threads).map(|i| order[i % order.len()]).collect()
    };
    let cores = cpus
        .iter()
        .map(|&c| key(c))
        .collect::<std::collections::BTreeSet<_>>()
        .len() as u32;
    Placement {
        cpus,
        cores,
        oversubscribed: threads > order.len(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lc(cpu: usize, package: i64, core: i64) -> LogicalCpu {
        LogicalCpu { cpu, package, core }
    }

    #[test]
    fn physical_cores_first() {
        // 2 cores with SMT: cpus 0,2 on core 0 and 1,3 on core 1 (Linux's usual numbering).
        let topo = [lc(0, 0, 0), lc(1, 0, 1), lc(2, 0, 0), lc(3, 0, 1)];
        let p = place(2, &[0, 1, 2, 3], &topo);
        assert_eq!((p.cpus, p.cores, p.oversubscribed), (vec![0, 1], 2, false));
        let p = place(3, &[0, 1, 2, 3], &topo);
        assert_eq!((p.cpus, p.cores), (vec![0, 1, 2], 2));
        let p = place(5, &[0, 1, 2, 3], &topo);
        assert!(p.oversubscribed);
        assert_eq!(p.cpus.len(), 5);
    }

    #[test]
    fn this_process_can_pin() {
        let allowed = allowed_cpus();
        assert!(!allowed.is_empty());
        std::thread::spawn(move || pin_current_thread(allowed[0]).unwrap())
            .join()
            .unwrap();
    }
}
