//! The memory workloads as users type them, each one's work model (the arrays it reads and
//! writes per element), and the points of a sweep.

use super::MemOptions;
use super::latency::{Probe, staircase_sizes};
use crate::bench::spec::{Axis, ChartKind, Spec, Work};
use crate::ids::{Metric, Subsystem, Tool};
use crate::results::params::Mix;

crate::bench::spec::workloads! {
    /// A memory workload, as users type it.
    pub enum MemWorkload ("memory") {
        /// Read+write sequential: copy block by block (memcpy-like).
        Rws = "RWS",
        /// Read+write at random block offsets.
        Rwr = "RWR",
        /// Sequential write (memset-like).
        Ws = "WS",
        /// Write at random block offsets.
        Wr = "WR",
        /// Sequential read.
        Rs = "RS",
        /// Read at random block offsets.
        Rr = "RR",
        /// STREAM copy: c = a.
        Copy = "COPY",
        /// STREAM scale: b = s·c.
        Scale = "SCALE",
        /// STREAM add: c = a + b.
        Add = "ADD",
        /// STREAM triad: a = b + s·c.
        Triad = "TRIAD",
        /// The sum of a whole array: read-only bandwidth (likwid-bench's `sum`).
        Sum = "SUM",
        /// Read/write mixes (`--mix`), as Intel MLC's `--max_bandwidth` runs them.
        Mix = "MIX",
        /// Pointer-chasing staircase, cache levels and per-operation latencies.
        Latency = "LATENCY",
        /// Loaded latency: one thread chases pointers while the others inject traffic of a
        /// mix at a series of delays (Intel MLC's `--loaded_latency`).
        Loaded = "LOADED",
        /// Core-to-core latency: a cache line's round trip between every two CPUs.
        C2c = "C2C",
        /// NUMA node matrices: each node's CPUs on each node's memory (Intel MLC's
        /// `--latency_matrix` and `--bandwidth_matrix`).
        Numa = "NUMA",
        /// No work: the harness's overhead per repetition.
        Null = "NULL",
    }
}

/// The options of every bandwidth workload: their kernels, their peak, their work.
const BANDWIDTH: [&str; 7] = [
    "isa",
    "mem-peak-gbs",
    "mem-channels",
    "mem-mts",
    "total-bytes",
    "duration",
    "array-size",
];
const BLOCKS_WRITTEN: &[&[&str]] = &[
    &["block-size", "stores", "mem-latency-ns", "mem-cl"],
    &BANDWIDTH,
];
const BLOCKS_READ: &[&[&str]] = &[&["block-size", "mem-latency-ns", "mem-cl"], &BANDWIDTH];
const STREAM_OPTIONS: &[&[&str]] = &[&["stores"], &BANDWIDTH];
const MIX_OPTIONS: &[&[&str]] = &[&["mix", "stores"], &BANDWIDTH];
const BANDWIDTH_READ: &[&[&str]] = &[&BANDWIDTH];
const BANDWIDTH_CHARTS: &[ChartKind] = &[
    ChartKind::Sweeps,
    ChartKind::Staircase,
    ChartKind::Efficiency,
];

/// LATENCY's spec: the staircase, its levels and the per-operation probes.
const LATENCY_SPEC: Spec = Spec {
    subsystem: Subsystem::Mem,
    name: MemWorkload::Latency.name(),
    what: "pointer-chasing staircase and cache levels",
    default: true,
    metrics: &[Metric::Latency],
    options: &[&[
        "huge-pages",
        "latency-max",
        "mem-latency-ns",
        "mem-cl",
        "mem-mts",
        "duration",
        "array-size",
    ]],
    axes: &[Axis::WorkingSet, Axis::Threads],
    // Its 8-byte per-operation probes; nothing here chases pointers.
    references: &[Tool::Sysbench],
    charts: &[
        ChartKind::Sweeps,
        ChartKind::Staircase,
        ChartKind::Efficiency,
    ],
    work: Work::Loads,
};

/// C2C's spec: a matrix of round trips, one point per ordered pair of CPUs.
const C2C_SPEC: Spec = Spec {
    subsystem: Subsystem::Mem,
    name: MemWorkload::C2c.name(),
    what: "core-to-core latency: a cache line's round trip between every two CPUs",
    default: false,
    metrics: &[Metric::Latency],
    options: &[&["cpus", "duration"]],
    axes: &[Axis::CpuPair],
    // Intel MLC's --c2c_latency and the core-to-core-latency tools cannot be had here.
    references: &[],
    charts: &[],
    work: Work::Loads,
};

/// LOADED's spec: the chaser's latency and the traffic's bandwidth at each injection delay.
const LOADED_SPEC: Spec = Spec {
    subsystem: Subsystem::Mem,
    name: MemWorkload::Loaded.name(),
    what: "loaded latency: a pointer chase while the other threads inject traffic of a mix at a series of delays",
    default: false,
    metrics: &[Metric::Latency, Metric::Throughput],
    options: &[&[
        "mix",
        "stores",
        "isa",
        "huge-pages",
        "mem-latency-ns",
        "mem-cl",
        "mem-peak-gbs",
        "mem-channels",
        "mem-mts",
        "duration",
        "array-size",
    ]],
    axes: &[Axis::InjectionDelay, Axis::Threads],
    // Intel MLC's --loaded_latency cannot be had here (not in Debian, Intel-only).
    references: &[],
    charts: &[ChartKind::LoadedLatency],
    work: Work::Loads,
};

/// NUMA's spec: a latency and a bandwidth record per cell of the node matrices.
const NUMA_SPEC: Spec = Spec {
    subsystem: Subsystem::Mem,
    name: MemWorkload::Numa.name(),
    what: "NUMA node matrices: latency and read bandwidth of each node's CPUs on each node's memory",
    default: false,
    metrics: &[Metric::Latency, Metric::Throughput],
    options: &[&[
        "isa",
        "array-size",
        "duration",
        "mem-latency-ns",
        "mem-cl",
        "mem-peak-gbs",
        "mem-channels",
        "mem-mts",
    ]],
    axes: &[Axis::NodePair],
    // Intel MLC's --latency_matrix and --bandwidth_matrix cannot be had here.
    references: &[],
    charts: &[],
    work: Work::Loads,
};

/// NULL's spec: the harness alone.
const NULL_SPEC: Spec = Spec {
    subsystem: Subsystem::Mem,
    name: MemWorkload::Null.name(),
    what: "the harness alone",
    default: false,
    metrics: &[Metric::Latency],
    options: &[],
    axes: &[Axis::Threads],
    references: &[],
    charts: &[],
    work: Work::Nothing,
};

impl MemWorkload {
    /// What it is, everything every reader needs (see [`Spec`]).
    pub const fn spec(self) -> Spec {
        let (what, options, references, work): (_, &[&[&str]], &[Tool], _) = match self {
            MemWorkload::Rws => (
                "read and write blocks in sequence",
                BLOCKS_WRITTEN,
                &[Tool::Mbw],
                Work::Blocks {
                    read: true,
                    write: true,
                },
            ),
            MemWorkload::Rwr => (
                "read and write blocks at random",
                BLOCKS_WRITTEN,
                &[Tool::Mbw],
                Work::Blocks {
                    read: true,
                    write: true,
                },
            ),
            MemWorkload::Ws => (
                "write blocks in sequence",
                BLOCKS_WRITTEN,
                &[Tool::Sysbench],
                Work::Blocks {
                    read: false,
                    write: true,
                },
            ),
            MemWorkload::Wr => (
                "write blocks at random",
                BLOCKS_WRITTEN,
                &[Tool::Sysbench],
                Work::Blocks {
                    read: false,
                    write: true,
                },
            ),
            MemWorkload::Rs => (
                "read blocks in sequence",
                BLOCKS_READ,
                &[Tool::Sysbench],
                Work::Blocks {
                    read: true,
                    write: false,
                },
            ),
            MemWorkload::Rr => (
                "read blocks at random",
                BLOCKS_READ,
                &[Tool::Sysbench],
                Work::Blocks {
                    read: true,
                    write: false,
                },
            ),
            MemWorkload::Copy => (
                "STREAM copy",
                STREAM_OPTIONS,
                // likwid-bench first: the point's own arrays, threads, ISA and stores, in about
                // a second; hpcc's arrays come within a few kilobytes, after its whole suite.
                &[Tool::LikwidBench, Tool::Hpcc, Tool::Stream],
                Work::Arrays {
                    read: 1,
                    written: 1,
                },
            ),
            MemWorkload::Scale => (
                "STREAM scale",
                STREAM_OPTIONS,
                // hpcc first: its arrays are sized to the point's, STREAM's compiled in.
                &[Tool::Hpcc, Tool::Stream],
                Work::Arrays {
                    read: 1,
                    written: 1,
                },
            ),
            MemWorkload::Add => (
                "STREAM add",
                STREAM_OPTIONS,
                // hpcc first: its arrays are sized to the point's, STREAM's compiled in.
                &[Tool::Hpcc, Tool::Stream],
                Work::Arrays {
                    read: 2,
                    written: 1,
                },
            ),
            MemWorkload::Triad => (
                "STREAM triad",
                STREAM_OPTIONS,
                // likwid-bench first: the point's own arrays, threads, ISA and stores, in about
                // a second; hpcc's arrays come within a few kilobytes, after its whole suite.
                &[Tool::LikwidBench, Tool::Hpcc, Tool::Stream],
                Work::Arrays {
                    read: 2,
                    written: 1,
                },
            ),
            MemWorkload::Sum => (
                "sum of a whole array (read only)",
                BANDWIDTH_READ,
                &[Tool::LikwidBench],
                Work::Arrays {
                    read: 1,
                    written: 0,
                },
            ),
            MemWorkload::Mix => (
                "read/write mixes as Intel MLC names them (--mix)",
                MIX_OPTIONS,
                // likwid-bench has a kernel for each mix (Intel MLC cannot be had here).
                &[Tool::LikwidBench],
                // The most a mix touches: three arrays read, one written (3:1); each point's
                // own is its mix ([`MemPoint::traffic`]).
                Work::Arrays {
                    read: 3,
                    written: 1,
                },
            ),
            MemWorkload::Latency => return LATENCY_SPEC,
            MemWorkload::Loaded => return LOADED_SPEC,
            MemWorkload::C2c => return C2C_SPEC,
            MemWorkload::Numa => return NUMA_SPEC,
            MemWorkload::Null => return NULL_SPEC,
        };
        let axes: &[Axis] = match (self, work) {
            (_, Work::Blocks { .. }) => &[Axis::BlockSize, Axis::Threads],
            (MemWorkload::Mix, _) => &[Axis::Mix, Axis::Threads],
            _ => &[Axis::Threads],
        };
        Spec {
            subsystem: Subsystem::Mem,
            name: self.name(),
            what,
            // SUM and MIX came after the reports' set: named, not run by default.
            default: !matches!(self, MemWorkload::Sum | MemWorkload::Mix),
            // A block workload also times one operation (a block per thread).
            metrics: match work {
                Work::Blocks { .. } => &[Metric::Throughput, Metric::Latency],
                _ => &[Metric::Throughput],
            },
            options,
            axes,
            references,
            charts: BANDWIDTH_CHARTS,
            work,
        }
    }

    /// (arrays read, arrays written) per element: the work model of the bandwidth workloads
    /// (a block workload moves one array: its blocks, read, written or both).
    pub const fn traffic(self) -> (u64, u64) {
        match self.spec().work {
            Work::Arrays { read, written } => (read, written),
            Work::Blocks { read, write } => (read as u64, write as u64),
            Work::KernelOps
            | Work::Nothing
            | Work::Flops
            | Work::Loads
            | Work::Io { .. }
            | Work::Messages => (0, 0),
        }
    }

    /// Arrays the workload touches.
    pub fn arrays(self) -> u64 {
        let (r, w) = self.traffic();
        r + w
    }

    /// Whether the workload works block by block (`--block-size`).
    pub const fn uses_blocks(self) -> bool {
        matches!(self.spec().work, Work::Blocks { .. })
    }

    /// Whether it moves its blocks in a random order.
    pub fn random(self) -> bool {
        matches!(self, MemWorkload::Rwr | MemWorkload::Wr | MemWorkload::Rr)
    }
}

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
