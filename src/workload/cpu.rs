//! The CPU's synthetic kernels as users type them and what each is (its [`Spec`]).

use super::spec::{ChartKind, Spec, Work};
use crate::ids::{Metric, Subsystem, Tool};

super::spec::workloads! {
    /// A synthetic kernel of `peakbench cpu` (the linear-algebra workloads are
    /// [`super::linalg::LinalgWorkload`]).
    pub enum CpuWorkload ("CPU") {
        Qp = "QP",
        Hp = "HP",
        Sp = "SP",
        Dp = "DP",
        SpFa = "SPFA",
        DpFa = "DPFA",
        Int8Dot = "INT8-DOT",
        Bf16Dot = "BF16-DOT",
        Int8Mm = "INT8-MM",
        Bf16Mm = "BF16-MM",
        Int32 = "INT32",
        Int64 = "INT64",
        Null = "NULL",
    }
}

const KERNEL_CHARTS: &[ChartKind] = &[ChartKind::Sweeps, ChartKind::Efficiency];

impl CpuWorkload {
    /// What it is, everything every reader needs (see [`Spec`]).
    pub const fn spec(self) -> Spec {
        let (what, default, references): (_, _, &[Tool]) = match self {
            CpuWorkload::Qp => ("8-bit integer vector adds", true, &[]),
            CpuWorkload::Hp => ("16-bit adds, or fp16 FMA where the core has it", true, &[]),
            CpuWorkload::Sp => ("fp32 FMA", true, &[Tool::LikwidBench]),
            CpuWorkload::Dp => ("fp64 FMA", true, &[Tool::LikwidBench]),
            // likwid-bench 5.2 has no kernel of FMAs and adds together (newer likwid's
            // peakflops_*_fma_add are not in Debian).
            CpuWorkload::SpFa => (
                "fp32 FMAs and adds together: the FP issue ceiling",
                false,
                &[],
            ),
            CpuWorkload::DpFa => (
                "fp64 FMAs and adds together: the FP issue ceiling",
                false,
                &[],
            ),
            CpuWorkload::Int8Dot => (
                "int8 dot products into 32-bit lanes (VNNI vpdpbusd: 8 operations a lane)",
                false,
                &[],
            ),
            CpuWorkload::Bf16Dot => (
                "bf16 dot products into fp32 lanes (vdpbf16ps: 4 operations a lane)",
                false,
                &[],
            ),
            CpuWorkload::Int8Mm => (
                "int8 matrix multiplies (AMX tdpbusd tiles; Arm smmla: 16 operations a lane)",
                false,
                &[],
            ),
            CpuWorkload::Bf16Mm => (
                "bf16 matrix multiplies (AMX tdpbf16ps tiles; Arm bfmmla: 8 operations a lane)",
                false,
                &[],
            ),
            CpuWorkload::Int32 => ("32-bit integer vector adds", true, &[]),
            CpuWorkload::Int64 => ("64-bit integer vector adds", true, &[]),
            CpuWorkload::Null => {
                return Spec {
                    subsystem: Subsystem::Cpu,
                    name: self.name(),
                    what: "the harness alone",
                    default: false,
                    metrics: &[Metric::Latency],
                    references: &[],
                    charts: &[],
                    work: Work::Nothing,
                };
            }
        };
        Spec {
            subsystem: Subsystem::Cpu,
            name: self.name(),
            what,
            default,
            metrics: &[Metric::Throughput],
            references,
            charts: KERNEL_CHARTS,
            work: Work::KernelOps,
        }
    }
}
