//! The disk workloads as users type them (RS, WS, RR, WR, RW, COPY), what each reads and
//! writes, and the points of a sweep: every workload × block size × thread count × queue depth.

use super::DiskOptions;
use crate::bench::spec::{Axis, ChartKind, Spec, Work};
use crate::ids::{Metric, Subsystem, Tool};

crate::bench::spec::workloads! {
    /// A disk workload, as users type it.
    pub enum DiskWorkload ("disk") {
        /// Sequential read.
        Rs = "RS",
        /// Sequential write.
        Ws = "WS",
        /// Random read.
        Rr = "RR",
        /// Random write.
        Wr = "WR",
        /// Random mixed read/write (`--read-percent`).
        Rw = "RW",
        /// Sequential copy: each block read from the test file and written to a second, new file.
        Copy = "COPY",
    }
}

impl DiskWorkload {
    /// What it is, everything every reader needs (see [`Spec`]).
    pub const fn spec(self) -> Spec {
        let (what, default, work) = match self {
            DiskWorkload::Rs => (
                "sequential reads",
                true,
                Work::Io {
                    read_percent: Some(100),
                    copy: false,
                },
            ),
            DiskWorkload::Ws => (
                "sequential writes",
                true,
                Work::Io {
                    read_percent: Some(0),
                    copy: false,
                },
            ),
            DiskWorkload::Rr => (
                "random reads",
                true,
                Work::Io {
                    read_percent: Some(100),
                    copy: false,
                },
            ),
            DiskWorkload::Wr => (
                "random writes",
                true,
                Work::Io {
                    read_percent: Some(0),
                    copy: false,
                },
            ),
            DiskWorkload::Rw => (
                "random mixed reads and writes",
                false,
                Work::Io {
                    read_percent: None,
                    copy: false,
                },
            ),
            DiskWorkload::Copy => (
                "sequential copy to a second, new file (read + write)",
                false,
                Work::Io {
                    read_percent: Some(50),
                    copy: true,
                },
            ),
        };
        let copy = matches!(work, Work::Io { copy: true, .. });
        Spec {
            subsystem: Subsystem::Disk,
            name: self.name(),
            what,
            default,
            metrics: &[Metric::Throughput, Metric::Iops, Metric::Latency],
            options: match work {
                Work::Io {
                    read_percent: None, ..
                } => &[&["read-percent"]],
                _ => &[],
            },
            axes: &[Axis::BlockSize, Axis::Threads, Axis::QueueDepth],
            references: if copy {
                &[Tool::Dd]
            } else {
                &[Tool::Fio, Tool::Sysbench]
            },
            charts: &[
                ChartKind::Sweeps,
                ChartKind::Percentiles,
                ChartKind::Intervals,
                ChartKind::Efficiency,
            ],
            work,
        }
    }

    /// Whether it picks its blocks at random.
    pub fn random(self) -> bool {
        matches!(self, DiskWorkload::Rr | DiskWorkload::Wr | DiskWorkload::Rw)
    }

    /// Whether every one of its I/Os reads (its rated peak is the read figure alone).
    pub const fn only_reads(self) -> bool {
        matches!(
            self.spec().work,
            Work::Io {
                read_percent: Some(100),
                ..
            }
        )
    }

    /// Whether every one of its I/Os writes.
    pub const fn only_writes(self) -> bool {
        matches!(
            self.spec().work,
            Work::Io {
                read_percent: Some(0),
                ..
            }
        )
    }

    /// Whether it writes.
    pub fn writes(self) -> bool {
        self.read_percent(50) < 100
    }

    /// Percent of I/Os that read (a copy reads and writes every block once).
    pub fn read_percent(self, mixed: u32) -> u32 {
        match self.spec().work {
            Work::Io {
                read_percent: Some(p),
                ..
            } => p,
            _ => mixed,
        }
    }
}

/// One point of the sweep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DiskPoint {
    pub workload: DiskWorkload,
    pub block: u64,
    pub threads: usize,
    pub iodepth: usize,
}

/// Every workload × block size × thread count × queue depth.
pub fn points(opts: &DiskOptions) -> Vec<DiskPoint> {
    let mut out = Vec::new();
    for &workload in &opts.workloads {
        for &block in &opts.block_sizes {
            for &threads in &opts.threads {
                for &iodepth in &opts.iodepths {
                    out.push(DiskPoint {
                        workload,
                        block,
                        threads,
                        iodepth,
                    });
                }
            }
        }
    }
    out
}
