//! What a workload is, in one place: each subsystem's workload enum returns its [`Spec`] from a
//! `match` with no wildcard, so that a variant without a spec does not compile. The command
//! line's defaults, help and refusals, the profiles' estimates, the reference tools, the charts
//! and the conformance test read their lists from here ([`super::registry`] gathers them).

use crate::ids::{Metric, Subsystem, Tool};

/// One workload's description.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spec {
    pub subsystem: Subsystem,
    /// As users type it (`--workload`).
    pub name: &'static str,
    /// What it measures, in a few words.
    pub what: &'static str,
    /// Run when no `--workload` is given.
    pub default: bool,
    /// The metrics of its records.
    pub metrics: &'static [Metric],
    /// The standard tools that measure the same point, in order of preference.
    pub references: &'static [Tool],
    /// The charts its points get.
    pub charts: &'static [ChartKind],
    /// What one iteration (or repetition) does: the rate is computed from it.
    pub work: Work,
}

/// A chart a workload's points get.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChartKind {
    /// Each figure against each parameter the run swept (threads, N, block size, queue depth,
    /// streams, message size), a line per value of the others.
    Sweeps,
    /// Latency per load against the working set, the cache levels marked.
    Staircase,
    /// Latency percentiles per point.
    Percentiles,
    /// The figure per interval of the last repetition.
    Intervals,
    /// Each point's efficiency against its peak, and its figure beside the reference tool's and
    /// the peak (grouped bars).
    Efficiency,
    /// Latency against bandwidth, a point per injection delay (LOADED).
    LoadedLatency,
}

impl Work {
    /// Whether its workloads come in pairs that differ only in their order (sequential and
    /// random blocks or I/Os), which one chart draws together.
    pub fn ordered(self) -> bool {
        matches!(self, Work::Blocks { .. } | Work::Io { copy: false, .. })
    }
}

/// The work model: what the rate counts (likwid-bench declares it in each kernel's header),
/// and so what a point costs: the estimates follow it (the harness alone, arrays to fill and
/// stream, staircase rings to build, a solve of order N, a timed window of I/Os or messages).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Work {
    /// Vector operations: the kernel for the ISA states how many one loop iteration performs
    /// (chains × lanes × operations per lane).
    KernelOps,
    /// The harness alone: nothing is counted, the time of a repetition is the figure.
    Nothing,
    /// Floating-point operations of a dense solve or multiply of order N (HPL's count for the
    /// solve, 2·N³ for a multiply).
    Flops,
    /// Arrays read and written per element, as STREAM counts bytes.
    Arrays { read: u64, written: u64 },
    /// Blocks read and written, in sequence or at random.
    Blocks { read: bool, write: bool },
    /// Dependent loads (a pointer chase) or independent ones (the per-operation probes).
    Loads,
    /// I/Os of one block each: `read_percent` of them reads (`None`: `--read-percent`), and
    /// a copy writes every block it reads to a second file.
    Io {
        read_percent: Option<u32>,
        copy: bool,
    },
    /// Messages: their payload bytes per second (goodput), or round trips.
    Messages,
}

/// Declares a workload enum whose every variant has one name: the ids' named enum
/// (`ALL`, `name()`, `Display`, serde), `defaults()` (the variants whose spec says `default`)
/// and `FromStr` in any case, with a "use A, B or C" message built from `ALL`. The enum must
/// implement `fn spec(self) -> Spec` with an exhaustive `match`.
macro_rules! workloads {
    ($(#[$m:meta])* $vis:vis enum $t:ident ($what:literal) {
        $($(#[$vm:meta])* $v:ident = $n:literal,)+
    }) => {
        crate::ids::named_enum! {
            @shape $(#[$m])* $vis enum $t { $($(#[$vm])* $v = $n,)+ }
        }

        impl $t {
            /// The workloads run when none is named.
            pub fn defaults() -> Vec<$t> {
                Self::ALL.into_iter().filter(|w| w.spec().default).collect()
            }
        }

        impl std::str::FromStr for $t {
            type Err = String;
            fn from_str(s: &str) -> Result<$t, String> {
                $t::ALL
                    .into_iter()
                    .find(|w| w.name().eq_ignore_ascii_case(s.trim()))
                    .ok_or_else(|| {
                        format!(
                            "unknown {} workload '{}'; use {}",
                            $what,
                            crate::text::printable(s),
                            crate::text::one_of($t::ALL.iter().map(|w| w.name()))
                        )
                    })
            }
        }
    };
}
pub(crate) use workloads;
