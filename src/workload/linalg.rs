//! The linear-algebra workloads (LINPACK, DGEMM, SGEMM) as users type them and what each is
//! (its [`Spec`]).

use super::spec::{ChartKind, Spec, Work};
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

impl LinalgWorkload {
    /// Bytes of one element (fp64 or fp32).
    pub fn element_bytes(self) -> u64 {
        match self {
            LinalgWorkload::Sgemm => 4,
            _ => 8,
        }
    }

    /// Operations of one solve or multiply of order `n`, as counted for the rate.
    pub fn flops(self, n: usize) -> f64 {
        match self {
            LinalgWorkload::Linpack => hpl_flops(n),
            LinalgWorkload::Dgemm | LinalgWorkload::Sgemm => 2.0 * (n as f64).powi(3),
        }
    }

    /// Matrices of N² values a point allocates.
    pub fn matrices(self) -> u64 {
        match self {
            LinalgWorkload::Linpack => 1,
            LinalgWorkload::Dgemm | LinalgWorkload::Sgemm => 3,
        }
    }

    /// The largest N whose matrices fit `fraction` of `bytes`, in multiples of 64 (HPL's way of
    /// choosing N from memory).
    pub fn n_for_memory(self, bytes: u64, fraction: f64) -> usize {
        let values = (bytes as f64 * fraction) / ((self.element_bytes() * self.matrices()) as f64);
        ((values.max(0.0).sqrt() as usize) / 64 * 64).max(64)
    }

    /// The N of a point on a machine with `memory` bytes available where none is asked: the
    /// N whose matrices fill a tenth of it, at most [`LARGEST_DEFAULT_N`].
    pub fn default_n(self, memory: u64) -> usize {
        self.n_for_memory(memory, 0.1).min(LARGEST_DEFAULT_N)
    }

    /// The order at which `--diagnose` measures a point of order `n` again for
    /// `problem-size`: four times `n`, 1000 at least, at most the [`default_n`](Self::default_n)
    /// of `memory`; None where that is not larger than `n`.
    pub fn larger_n(self, n: usize, memory: u64) -> Option<usize> {
        // Not `clamp`: a machine with under 80 MB free has a default N below 1000.
        let larger = n.saturating_mul(4).max(1000).min(self.default_n(memory));
        (larger > n).then_some(larger)
    }

    /// What it is, everything every reader needs (see [`Spec`]).
    pub const fn spec(self) -> Spec {
        let (what, references): (_, &[Tool]) = match self {
            LinalgWorkload::Linpack => (
                "solve of a random dense system by LU with partial pivoting (HPL's problem, count and residual check)",
                &[Tool::Hpcc],
            ),
            LinalgWorkload::Dgemm => (
                "fp64 matrix multiply C = A·B (2·N³ operations)",
                &[Tool::Blis, Tool::Hpcc],
            ),
            LinalgWorkload::Sgemm => (
                "fp32 matrix multiply C = A·B (2·N³ operations)",
                &[Tool::Blis],
            ),
        };
        Spec {
            subsystem: Subsystem::Cpu,
            name: self.name(),
            what,
            default: false,
            metrics: &[Metric::Throughput],
            references,
            charts: &[ChartKind::Sweeps, ChartKind::Efficiency],
            work: Work::Flops,
        }
    }
}

/// The largest N a point is given where none is asked: a few seconds of a solve on a small
/// server (2/3·8000³ operations take 1.7 s at 200 GFLOP/s).
pub const LARGEST_DEFAULT_N: usize = 8000;

/// Operations of a solve as HPL counts them: 2/3·N³ + 3/2·N² (HPL_pdtest's count).
pub fn hpl_flops(n: usize) -> f64 {
    let n = n as f64;
    2.0 / 3.0 * n * n * n + 1.5 * n * n
}

/// HPL's threshold for the scaled residual of a solution: a solve whose residual is not under
/// it is wrong.
pub const RESIDUAL_THRESHOLD: f64 = 16.0;

/// The factorisation's block for a large matrix. HPL's usual 256 loses to 128 with this
/// factorisation (its look-ahead keeps the panel's thread busy while the others update, and
/// a narrower panel leaves less of it serial): on 2 threads of a Zen 5 guest (AVX-512), medians
/// of 2–3 runs, N = 4000 NB = 128 177–179 GFLOP/s, 256 160; N = 6000 194 against 178–184;
/// N = 8000 203 against 188; on 1 thread at N = 4000, 94 against 88.
pub const DEFAULT_NB: usize = 128;

/// The factorisation's block for an `n × n` matrix when none is given: [`DEFAULT_NB`], or for a
/// small matrix the largest power of two that leaves it twelve panels or more (at least 32). A
/// wide panel on a small matrix leaves the threads idle while one factors it. Six panels were
/// the rule while a step's threads were spawned for it (on 2 threads of a Zen 4 at N = 1000,
/// NB = 256 reached 39.5 GFLOP/s and NB = 128 44.1; at N = 500, 11.9 and 64 19.3); with the
/// team of the LU team (`bench::linalg::lu_team`) the narrower block wins up to N = 3000 (2 threads of a Sapphire
/// Rapids guest, medians: N = 1000 NB = 64 63.1 GFLOP/s, 128 59.3, 160 55.1; N = 2000 NB = 128
/// 87.8, 256 77.8; N = 3000 128 97–101, 256 91–94; on 1 thread at N = 1000, 64 36.6 and 128
/// 32–36).
pub fn default_nb(n: usize) -> usize {
    let fit = (n / 12).max(1);
    (1usize << fit.ilog2()).clamp(32, DEFAULT_NB)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `--diagnose`'s larger N: four times N, 1000 at least, at most the default N (8000, or
    /// less where a tenth of memory holds less); none where it is not larger; no panic or
    /// overflow for a machine with almost no memory, an absurd N or an absurd memory.
    #[test]
    fn the_larger_n_for_problem_size() {
        let gib: u64 = 1 << 30;
        let w = LinalgWorkload::Linpack;
        assert_eq!(w.default_n(24 * gib), LARGEST_DEFAULT_N);
        assert_eq!(w.larger_n(200, 24 * gib), Some(1000));
        assert_eq!(w.larger_n(1000, 24 * gib), Some(4000));
        assert_eq!(w.larger_n(2000, 24 * gib), Some(8000));
        assert_eq!(w.larger_n(8000, 24 * gib), None);
        assert_eq!(w.larger_n(10_000, 24 * gib), None);
        // A tenth of 1 GiB holds N = 3648 (a multiple of 64).
        assert_eq!(w.default_n(gib), 3648);
        assert_eq!(w.larger_n(2000, gib), Some(3648));
        // 50 MB free: a default N below 1000 (768), so 200 is measured again at 768 and 800
        // at nothing larger.
        assert_eq!(w.larger_n(200, 50 << 20), Some(768));
        assert_eq!(w.larger_n(800, 50 << 20), None);
        assert_eq!(w.larger_n(usize::MAX, 0), None);
        // A hostile document's memory: the default N's cap holds.
        assert_eq!(w.larger_n(2000, u64::MAX), Some(LARGEST_DEFAULT_N));
        // Three matrices of DGEMM's in the same memory: a smaller default.
        assert!(LinalgWorkload::Dgemm.default_n(gib) < w.default_n(gib));
    }
}
