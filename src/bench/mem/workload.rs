//! The points of a memory sweep (the workloads themselves, their specs and work models, are
//! [`crate::workload::mem`]).

use super::MemOptions;
use super::latency::{Probe, staircase_sizes};
use crate::results::params::Mix;

pub use crate::workload::mem::MemWorkload;

/// One point of the sweep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemPoint {
    pub workload: MemWorkload,
    pub threads: usize,
    pub block: Option<u64>,
    /// Bytes of each array, all threads together, where the user gave sizes (None: the
    /// default size, [`super::default_array_bytes`]; LATENCY and NULL have none).
    pub array: Option<u64>,
    /// MIX's and LOADED's read/write mix (None for the others).
    pub mix: Option<Mix>,
}

impl MemPoint {
    /// (arrays read, arrays written) per element: its mix's, else its workload's.
    pub fn traffic(&self) -> (u64, u64) {
        match self.mix {
            Some(m) => (m.reads as u64, m.writes as u64),
            None => self.workload.traffic(),
        }
    }
}

/// The mixes a workload runs: the user's (`--mix`), else MLC's four for MIX and all reads
/// for LOADED; none for the others.
pub fn mixes(workload: MemWorkload, opts: &MemOptions) -> Vec<Option<Mix>> {
    match workload {
        MemWorkload::Mix | MemWorkload::Loaded if !opts.mixes.is_empty() => {
            // Once each (6:2 and 3:1 are one mix).
            let mut out: Vec<Option<Mix>> = Vec::new();
            for m in &opts.mixes {
                if !out.contains(&Some(*m)) {
                    out.push(Some(*m));
                }
            }
            out
        }
        MemWorkload::Mix => Mix::MLC.iter().map(|m| Some(*m)).collect(),
        MemWorkload::Loaded => vec![Some(Mix::ALL_READS)],
        _ => vec![None],
    }
}

/// Every workload × array size × block size (where it uses blocks) × thread count; LATENCY
/// once per count of `latency_threads`.
pub fn points(opts: &MemOptions) -> Vec<MemPoint> {
    let mut out = Vec::new();
    for &workload in &opts.workloads {
        if workload == MemWorkload::Numa {
            // One point: every cell of the node matrices.
            out.push(MemPoint {
                workload,
                threads: 1,
                block: None,
                array: None,
                mix: None,
            });
            continue;
        }
        if workload == MemWorkload::C2c {
            // One point: every pair of CPUs, two threads at a time.
            out.push(MemPoint {
                workload,
                threads: 2,
                block: None,
                array: None,
                mix: None,
            });
            continue;
        }
        if workload == MemWorkload::Loaded {
            // A chaser and at least one thread of traffic.
            for mix in mixes(workload, opts) {
                out.extend(
                    opts.threads
                        .iter()
                        .filter(|t| **t >= 2)
                        .map(|&threads| MemPoint {
                            workload,
                            threads,
                            block: None,
                            array: None,
                            mix,
                        }),
                );
            }
            continue;
        }
        if workload == MemWorkload::Latency {
            out.extend(opts.latency_threads.iter().map(|&threads| MemPoint {
                workload,
                threads,
                block: None,
                array: None,
                mix: None,
            }));
            continue;
        }
        let blocks: Vec<Option<u64>> = if workload.uses_blocks() {
            opts.block_sizes.iter().map(|b| Some(*b)).collect()
        } else {
            vec![None]
        };
        let arrays: Vec<Option<u64>> = match workload {
            _ if opts.array_sizes.is_empty() => vec![None],
            MemWorkload::Null => vec![None],
            _ => opts.array_sizes.iter().map(|s| Some(*s)).collect(),
        };
        for mix in mixes(workload, opts) {
            for &array in &arrays {
                for (block, threads) in crate::sweep::product(&blocks, &opts.threads) {
                    out.push(MemPoint {
                        workload,
                        threads,
                        block,
                        array,
                        mix,
                    });
                }
            }
        }
    }
    out
}

/// Rounds of the progress bar a point takes.
pub fn rounds(point: &MemPoint, opts: &MemOptions) -> u64 {
    let per = (opts.reps.warmup + opts.reps.repeat) as u64;
    match point.workload {
        MemWorkload::Latency => {
            let sizes = staircase_sizes(4096, opts.latency_max_bytes).len() as u64;
            per * (sizes * opts.huge_pages.len() as u64 + Probe::ALL.len() as u64)
        }
        MemWorkload::Loaded => {
            per * super::loaded::DELAYS_NS.len() as u64 * opts.huge_pages.len() as u64
        }
        MemWorkload::Numa => {
            let allowed = crate::runner::affinity::allowed_cpus();
            // Each cell: its latency's rounds and its bandwidth's.
            2 * per * super::numa_matrix::matrix_cells(&allowed).0.len() as u64
        }
        MemWorkload::C2c => {
            let allowed = crate::runner::affinity::allowed_cpus();
            let pairs = super::c2c::pairs(&super::c2c::cpus_of(opts, &allowed));
            per * pairs.len() as u64
        }
        _ => per,
    }
}
