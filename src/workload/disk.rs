//! The disk workloads as users type them and what each is (its [`Spec`]).

use super::spec::{ChartKind, Spec, Work};
use crate::ids::{Metric, Subsystem, Tool};

super::spec::workloads! {
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
        /// Sequential writes into new blocks (IOzone's write; WS is its rewrite).
        Wnew = "WNEW",
        /// Sequential reads of a region just read (IOzone's reread).
        Reread = "REREAD",
        /// Sequential reads from the end of the region back to its start (IOzone's read
        /// backwards).
        Rb = "RB",
        /// A block read every `--stride` blocks, wrapping (IOzone's stride read).
        Rstride = "RSTRIDE",
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
            DiskWorkload::Wnew => (
                "sequential writes into new blocks (IOzone's write; WS is its rewrite)",
                false,
                Work::Io {
                    read_percent: Some(0),
                    copy: false,
                },
            ),
            DiskWorkload::Reread => (
                "sequential reads of a region just read (IOzone's reread)",
                false,
                Work::Io {
                    read_percent: Some(100),
                    copy: false,
                },
            ),
            DiskWorkload::Rb => (
                "sequential reads backwards, from the end to the start (IOzone's)",
                false,
                Work::Io {
                    read_percent: Some(100),
                    copy: false,
                },
            ),
            DiskWorkload::Rstride => (
                "a block read every --stride blocks, wrapping (IOzone's stride read)",
                false,
                Work::Io {
                    read_percent: Some(100),
                    copy: false,
                },
            ),
        };
        // IOzone's operations: fio alone has them (sysbench fileio reads and writes in sequence
        // or at random over a file it laid out, nothing else).
        let iozone = matches!(
            self,
            DiskWorkload::Wnew | DiskWorkload::Reread | DiskWorkload::Rb | DiskWorkload::Rstride
        );
        let copy = matches!(work, Work::Io { copy: true, .. });
        Spec {
            subsystem: Subsystem::Disk,
            name: self.name(),
            what,
            default,
            metrics: &[Metric::Throughput, Metric::Iops, Metric::Latency],
            references: if copy {
                &[Tool::Dd]
            } else if iozone {
                &[Tool::Fio]
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
}
