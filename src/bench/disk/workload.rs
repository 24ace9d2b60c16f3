//! The disk workloads as users type them (RS, WS, RR, WR, RW, COPY, and IOzone's operations
//! WNEW, REREAD, RB, RSTRIDE), what each reads and writes and in which order, and the points of
//! a sweep: every workload × block size × thread count × queue depth.
//!
//! The test file is laid out before any point runs, so WS writes over allocated blocks: it is
//! IOzone's rewrite. WNEW is IOzone's write: its blocks are released before each repetition,
//! so that every write allocates them again.

use super::DiskOptions;
use crate::results::params::IoPattern;
use crate::workload::spec::Work;

pub use crate::workload::disk::DiskWorkload;

impl DiskWorkload {
    /// In which order it visits its blocks.
    pub fn pattern(self) -> IoPattern {
        match self {
            DiskWorkload::Rr | DiskWorkload::Wr | DiskWorkload::Rw => IoPattern::Random,
            DiskWorkload::Rb => IoPattern::Backward,
            DiskWorkload::Rstride => IoPattern::Stride,
            DiskWorkload::Rs
            | DiskWorkload::Ws
            | DiskWorkload::Copy
            | DiskWorkload::Wnew
            | DiskWorkload::Reread => IoPattern::Sequential,
        }
    }

    /// Whether it picks its blocks at random.
    pub fn random(self) -> bool {
        self.pattern() == IoPattern::Random
    }

    /// Whether it writes into blocks released before each repetition, in a file of its own
    /// beside the test file (COPY's destination, WNEW's file): each write allocates its block.
    pub fn new_blocks(self) -> bool {
        matches!(self, DiskWorkload::Copy | DiskWorkload::Wnew)
    }

    /// Whether its region is read once before each repetition, outside the timed window, so
    /// that it reads what was just read (REREAD: the page cache's figure unless O_DIRECT).
    pub fn pre_read(self) -> bool {
        self == DiskWorkload::Reread
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
