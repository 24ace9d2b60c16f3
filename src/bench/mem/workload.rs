//! The memory workloads as users type them, each one's work model (the arrays it reads and
//! writes per element), and the points of a sweep.

use super::MemOptions;
use super::latency::{Probe, staircase_sizes};
use std::fmt;
use std::str::FromStr;

/// A memory workload, as users type it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum MemWorkload {
    /// Read+write sequential: copy block by block (memcpy-like).
    Rws,
    /// Read+write at random block offsets.
    Rwr,
    /// Sequential write (memset-like).
    Ws,
    /// Write at random block offsets.
    Wr,
    /// Sequential read.
    Rs,
    /// Read at random block offsets.
    Rr,
    /// STREAM copy: c = a.
    Copy,
    /// STREAM scale: b = s·c.
    Scale,
    /// STREAM add: c = a + b.
    Add,
    /// STREAM triad: a = b + s·c.
    Triad,
    /// Pointer-chasing staircase, cache levels and per-operation latencies.
    Latency,
    /// No work: the harness's overhead per repetition.
    Null,
}

impl MemWorkload {
    pub const ALL: [MemWorkload; 12] = [
        MemWorkload::Rws,
        MemWorkload::Rwr,
        MemWorkload::Ws,
        MemWorkload::Wr,
        MemWorkload::Rs,
        MemWorkload::Rr,
        MemWorkload::Copy,
        MemWorkload::Scale,
        MemWorkload::Add,
        MemWorkload::Triad,
        MemWorkload::Latency,
        MemWorkload::Null,
    ];
    /// The workloads run when none is named: all but NULL (the last).
    pub const DEFAULT: &[MemWorkload] = MemWorkload::ALL.split_at(MemWorkload::ALL.len() - 1).0;

    pub fn name(self) -> &'static str {
        match self {
            MemWorkload::Rws => "RWS",
            MemWorkload::Rwr => "RWR",
            MemWorkload::Ws => "WS",
            MemWorkload::Wr => "WR",
            MemWorkload::Rs => "RS",
            MemWorkload::Rr => "RR",
            MemWorkload::Copy => "COPY",
            MemWorkload::Scale => "SCALE",
            MemWorkload::Add => "ADD",
            MemWorkload::Triad => "TRIAD",
            MemWorkload::Latency => "LATENCY",
            MemWorkload::Null => "NULL",
        }
    }

    /// (arrays read, arrays written) per element: the work model of the bandwidth workloads.
    pub fn traffic(self) -> (u64, u64) {
        match self {
            MemWorkload::Rws | MemWorkload::Rwr | MemWorkload::Copy | MemWorkload::Scale => (1, 1),
            MemWorkload::Ws | MemWorkload::Wr => (0, 1),
            MemWorkload::Rs | MemWorkload::Rr => (1, 0),
            MemWorkload::Add | MemWorkload::Triad => (2, 1),
            MemWorkload::Latency | MemWorkload::Null => (0, 0),
        }
    }

    /// Arrays the workload touches.
    pub fn arrays(self) -> u64 {
        let (r, w) = self.traffic();
        r + w
    }

    /// Whether the workload works block by block (`--block-size`).
    pub fn uses_blocks(self) -> bool {
        matches!(
            self,
            MemWorkload::Rws
                | MemWorkload::Rwr
                | MemWorkload::Ws
                | MemWorkload::Wr
                | MemWorkload::Rs
                | MemWorkload::Rr
        )
    }

    /// Whether it moves its blocks in a random order.
    pub(super) fn random(self) -> bool {
        matches!(self, MemWorkload::Rwr | MemWorkload::Wr | MemWorkload::Rr)
    }
}

impl fmt::Display for MemWorkload {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for MemWorkload {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        MemWorkload::ALL
            .into_iter()
            .find(|w| w.name().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| {
                format!(
                    "unknown memory workload '{s}'; use RWS, RWR, WS, WR, RS, RR, COPY, SCALE, ADD, TRIAD, LATENCY or NULL"
                )
            })
    }
}

/// One point of the sweep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemPoint {
    pub workload: MemWorkload,
    pub threads: usize,
    pub block: Option<u64>,
}

/// Every workload × block size (where it uses blocks) × thread count; LATENCY once per count of
/// `latency_threads`.
pub fn points(opts: &MemOptions) -> Vec<MemPoint> {
    let mut out = Vec::new();
    for &workload in &opts.workloads {
        if workload == MemWorkload::Latency {
            out.extend(opts.latency_threads.iter().map(|&threads| MemPoint {
                workload,
                threads,
                block: None,
            }));
            continue;
        }
        let blocks: Vec<Option<u64>> = if workload.uses_blocks() {
            opts.block_sizes.iter().map(|b| Some(*b)).collect()
        } else {
            vec![None]
        };
        for (block, threads) in crate::sweep::product(&blocks, &opts.threads) {
            out.push(MemPoint {
                workload,
                threads,
                block,
            });
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
        _ => per,
    }
}
