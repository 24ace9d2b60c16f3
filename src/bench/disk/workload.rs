//! The disk workloads as users type them (RS, WS, RR, WR, RW, COPY), what each reads and
//! writes, and the points of a sweep: every workload × block size × thread count × queue depth.

use super::DiskOptions;
use std::fmt;
use std::str::FromStr;

/// A disk workload, as users type it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum DiskWorkload {
    /// Sequential read.
    Rs,
    /// Sequential write.
    Ws,
    /// Random read.
    Rr,
    /// Random write.
    Wr,
    /// Random mixed read/write (`--read-percent`).
    Rw,
    /// Sequential copy: each block read from the test file and written to a second, new file.
    Copy,
}

impl DiskWorkload {
    pub const ALL: [DiskWorkload; 6] = [
        DiskWorkload::Rs,
        DiskWorkload::Ws,
        DiskWorkload::Rr,
        DiskWorkload::Wr,
        DiskWorkload::Rw,
        DiskWorkload::Copy,
    ];

    pub fn name(self) -> &'static str {
        match self {
            DiskWorkload::Rs => "RS",
            DiskWorkload::Ws => "WS",
            DiskWorkload::Rr => "RR",
            DiskWorkload::Wr => "WR",
            DiskWorkload::Rw => "RW",
            DiskWorkload::Copy => "COPY",
        }
    }

    /// Whether it picks its blocks at random.
    pub(super) fn random(self) -> bool {
        matches!(self, DiskWorkload::Rr | DiskWorkload::Wr | DiskWorkload::Rw)
    }

    /// Whether it writes.
    pub fn writes(self) -> bool {
        self.read_percent(50) < 100
    }

    /// Percent of I/Os that read (a copy reads and writes every block once).
    pub(super) fn read_percent(self, mixed: u32) -> u32 {
        match self {
            DiskWorkload::Rs | DiskWorkload::Rr => 100,
            DiskWorkload::Ws | DiskWorkload::Wr => 0,
            DiskWorkload::Rw => mixed,
            DiskWorkload::Copy => 50,
        }
    }
}

impl fmt::Display for DiskWorkload {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for DiskWorkload {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        DiskWorkload::ALL
            .into_iter()
            .find(|w| w.name().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| format!("unknown disk workload '{s}'; use RS, WS, RR, WR, RW or COPY"))
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
