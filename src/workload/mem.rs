//! The memory workloads as users type them, what each is (its [`Spec`]) and its work model
//! (the arrays it reads and writes per element).

use super::spec::{ChartKind, Spec, Work};
use crate::ids::{Metric, Subsystem, Tool};

super::spec::workloads! {
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

const BANDWIDTH_CHARTS: &[ChartKind] = &[
    ChartKind::Sweeps,
    ChartKind::Staircase,
    ChartKind::Efficiency,
];

/// C2C's spec: a matrix of round trips, one point per ordered pair of CPUs.
const C2C_SPEC: Spec = Spec {
    subsystem: Subsystem::Mem,
    name: MemWorkload::C2c.name(),
    what: "core-to-core latency: a cache line's round trip between every two CPUs",
    default: false,
    metrics: &[Metric::Latency],
    // Intel MLC's --c2c_latency and the core-to-core-latency tools cannot be had here.
    references: &[],
    charts: &[],
    work: Work::Loads,
};

/// LATENCY's spec: the staircase, its levels and the per-operation probes.
const LATENCY_SPEC: Spec = Spec {
    subsystem: Subsystem::Mem,
    name: MemWorkload::Latency.name(),
    what: "pointer-chasing staircase and cache levels",
    default: true,
    metrics: &[Metric::Latency],
    // Its 8-byte per-operation probes; nothing here chases pointers.
    references: &[Tool::Sysbench],
    charts: &[
        ChartKind::Sweeps,
        ChartKind::Staircase,
        ChartKind::Efficiency,
    ],
    work: Work::Loads,
};

/// LOADED's spec: the chaser's latency and the traffic's bandwidth at each injection delay.
const LOADED_SPEC: Spec = Spec {
    subsystem: Subsystem::Mem,
    name: MemWorkload::Loaded.name(),
    what: "loaded latency: a pointer chase while the other threads inject traffic of a mix at a series of delays",
    default: false,
    metrics: &[Metric::Latency, Metric::Throughput],
    // Intel MLC's --loaded_latency cannot be had here (not in Debian, Intel-only).
    references: &[],
    charts: &[ChartKind::LoadedLatency],
    work: Work::Loads,
};

/// NULL's spec: the harness alone.
const NULL_SPEC: Spec = Spec {
    subsystem: Subsystem::Mem,
    name: MemWorkload::Null.name(),
    what: "the harness alone",
    default: false,
    metrics: &[Metric::Latency],
    references: &[],
    charts: &[],
    work: Work::Nothing,
};

/// NUMA's spec: a latency and a bandwidth record per cell of the node matrices.
const NUMA_SPEC: Spec = Spec {
    subsystem: Subsystem::Mem,
    name: MemWorkload::Numa.name(),
    what: "NUMA node matrices: latency and read bandwidth of each node's CPUs on each node's memory",
    default: false,
    metrics: &[Metric::Latency, Metric::Throughput],
    // Intel MLC's --latency_matrix and --bandwidth_matrix cannot be had here.
    references: &[],
    charts: &[],
    work: Work::Loads,
};

impl MemWorkload {
    /// What it is, everything every reader needs (see [`Spec`]).
    pub const fn spec(self) -> Spec {
        let (what, references, work): (_, &[Tool], _) = match self {
            MemWorkload::Rws => (
                "read and write blocks in sequence",
                &[Tool::Mbw],
                Work::Blocks {
                    read: true,
                    write: true,
                },
            ),
            MemWorkload::Rwr => (
                "read and write blocks at random",
                &[Tool::Mbw],
                Work::Blocks {
                    read: true,
                    write: true,
                },
            ),
            MemWorkload::Ws => (
                "write blocks in sequence",
                &[Tool::Sysbench],
                Work::Blocks {
                    read: false,
                    write: true,
                },
            ),
            MemWorkload::Wr => (
                "write blocks at random",
                &[Tool::Sysbench],
                Work::Blocks {
                    read: false,
                    write: true,
                },
            ),
            MemWorkload::Rs => (
                "read blocks in sequence",
                &[Tool::Sysbench],
                Work::Blocks {
                    read: true,
                    write: false,
                },
            ),
            MemWorkload::Rr => (
                "read blocks at random",
                &[Tool::Sysbench],
                Work::Blocks {
                    read: true,
                    write: false,
                },
            ),
            MemWorkload::Copy => (
                "STREAM copy",
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
                // hpcc first: its arrays are sized to the point's, STREAM's compiled in.
                &[Tool::Hpcc, Tool::Stream],
                Work::Arrays {
                    read: 1,
                    written: 1,
                },
            ),
            MemWorkload::Add => (
                "STREAM add",
                // hpcc first: its arrays are sized to the point's, STREAM's compiled in.
                &[Tool::Hpcc, Tool::Stream],
                Work::Arrays {
                    read: 2,
                    written: 1,
                },
            ),
            MemWorkload::Triad => (
                "STREAM triad",
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
                &[Tool::LikwidBench],
                Work::Arrays {
                    read: 1,
                    written: 0,
                },
            ),
            MemWorkload::Mix => (
                "read/write mixes as Intel MLC names them (--mix)",
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
            references,
            charts: BANDWIDTH_CHARTS,
            work,
        }
    }
}

impl MemWorkload {
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
