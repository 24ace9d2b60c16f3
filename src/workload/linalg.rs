//! The linear-algebra workloads (LINPACK, DGEMM, SGEMM) as users type them and what each is
//! (its [`Spec`]).

use super::spec::{Axis, ChartKind, Spec, Work};
use crate::ids::{Metric, Subsystem, Tool};

super::spec::workloads! {
    /// A dense linear-algebra workload.
    pub enum LinalgWorkload ("linear-algebra") {
        /// HPL's problem: solve A·x = b by LU with partial pivoting.
        Linpack = "LINPACK",
        /// C = A·B in fp64.
        Dgemm = "DGEMM",
        /// C = A·B in fp32.
        Sgemm = "SGEMM",
    }
}

const ENGINE: &[&str] = &["blas", "blas-library", "isa"];

/// The options of every linear-algebra workload: its size, its engine.
const SIZES: &[&str] = &["n", "memory-fraction"];

impl LinalgWorkload {
    /// What it is, everything every reader needs (see [`Spec`]).
    pub const fn spec(self) -> Spec {
        let (what, options, references): (_, &[&[&str]], &[Tool]) = match self {
            LinalgWorkload::Linpack => (
                "solve of a random dense system by LU with partial pivoting (HPL's problem, count and residual check)",
                &[SIZES, &["nb"], ENGINE],
                &[Tool::Hpcc],
            ),
            LinalgWorkload::Dgemm => (
                "fp64 matrix multiply C = A·B (2·N³ operations)",
                &[SIZES, ENGINE],
                &[Tool::Hpcc],
            ),
            LinalgWorkload::Sgemm => (
                "fp32 matrix multiply C = A·B (2·N³ operations)",
                &[SIZES, ENGINE],
                &[],
            ),
        };
        Spec {
            subsystem: Subsystem::Cpu,
            name: self.name(),
            what,
            default: false,
            metrics: &[Metric::Throughput],
            options,
            axes: &[Axis::N, Axis::Threads],
            references,
            charts: &[ChartKind::Sweeps, ChartKind::Efficiency],
            work: Work::Flops,
        }
    }
}
