//! The memory benchmark: bandwidth (RWS, RWR, WS, WR, RS, RR and the four STREAM kernels) in GB/s
//! and latency (pointer chasing over a staircase of working sets, per-operation probes).
//!
//! Bytes are counted as STREAM counts them: the bytes the kernel reads plus the bytes it writes,
//! with no allowance for the write-allocate (read-for-ownership) traffic of regular stores —
//! copy and scale move 16 bytes per element, add and triad 24. Each workload declares how many
//! arrays it reads and writes ([`MemWorkload::traffic`]), and rates are computed here, once.

mod bandwidth;
pub mod c2c;
pub mod kernels;
pub mod latency;
mod latency_point;
pub mod loaded;
pub mod numa;
mod numa_matrix;
pub mod order;
mod records;
mod session;
mod workload;

use crate::bench::buffer::HugePages;
use crate::runner::{Repetition, affinity};
use crate::sysinfo::peak::MemPeakOverrides;
use crate::sysinfo::{Isa, SystemInfo};
use crate::workload::spec::Work;
use latency::{Probe, staircase_sizes};
pub use latency_point::{planned as planned_latency, probe_span};
pub use session::MemSession;
use std::time::Duration;
pub use workload::{MemPoint, MemWorkload, points, rounds};

/// How long each LATENCY sample runs when `--duration` does not say.
pub const DEFAULT_LATENCY_SAMPLE: Duration = Duration::from_millis(25);

/// The largest working set of the latency staircase when none is given (`--latency-max 1Gi`).
pub const DEFAULT_LATENCY_MAX: u64 = 1 << 30;

/// Store instructions for the kernels that write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Stores {
    /// Non-temporal where they help: whole arrays, and blocks that are whole cache lines of at
    /// least 1 KiB, of arrays that do not fit in the last-level cache (in a cache, streaming
    /// stores send every line to memory: a copy of 16 KiB arrays ran at 47 GB/s with them, 174
    /// without, on a Zen 4). Streaming a block that starts or ends inside a line flushes partial
    /// write-combining buffers, which halves the rate (1000-byte blocks: 11 vs 25 GB/s here).
    Auto,
    /// Non-temporal (streaming) stores: no read-for-ownership, caches bypassed.
    Nt,
    /// Ordinary stores through the caches.
    Regular,
}

/// What the user asked for.
#[derive(Debug, Clone)]
pub struct MemOptions {
    pub workloads: Vec<MemWorkload>,
    pub block_sizes: Vec<u64>,
    pub threads: Vec<usize>,
    /// Bytes of each array, all threads together, one bandwidth point per size (the bandwidth
    /// staircase); empty: one size, 4 × LLC and at least 64 MiB.
    pub array_sizes: Vec<u64>,
    pub stores: Stores,
    pub isa: Option<Isa>,
    /// Page modes of the latency staircase.
    pub huge_pages: Vec<HugePages>,
    /// Largest working set of the latency staircase.
    pub latency_max_bytes: u64,
    /// Thread counts of LATENCY: each thread chases its own ring (runs its own probe) at the
    /// same time, so that more than one shows the latency under load.
    pub latency_threads: Vec<usize>,
    /// How long each LATENCY sample chases (or probes), and each C2C pair bounces its line.
    pub latency_sample: Duration,
    /// The CPUs C2C pairs (empty: every CPU this process may run on).
    pub c2c_cpus: Vec<usize>,
    /// The read/write mixes of MIX and of LOADED's traffic (empty: MLC's four for MIX, all
    /// reads for LOADED).
    pub mixes: Vec<crate::results::params::Mix>,
    pub duration: Duration,
    /// Fixed work instead of `duration` (`--total-bytes`): the bytes each repetition of a
    /// bandwidth point moves (read + written), split between its threads (strong) or each
    /// thread's (weak).
    pub total_bytes: Option<u64>,
    /// `--sustain`: each repetition of a bandwidth point runs until its rate is steady
    /// ([`crate::measure::steady`]), this long at most (instead of `duration`).
    pub sustain: Option<Duration>,
    pub scaling: crate::results::params::Scaling,
    pub reps: Repetition,
    pub peak: MemPeakOverrides,
    /// `--diagnose`: the points below 90 % of their peak measured again with their first
    /// cause's knob turned (docs/diagnosis.md).
    pub diagnose: bool,
    /// `--precision`: each point measured again until its interval is within the target.
    pub precision: Option<crate::measure::precision::Precision>,
}

impl MemOptions {
    /// A timed bandwidth repetition's time: `duration`, or with `sustain` its longest.
    pub fn bandwidth_time(&self) -> Duration {
        self.sustain.unwrap_or(self.duration)
    }
}

/// Why a memory run cannot start or go on.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum MemError {
    #[error("--block-size {0} is out of range: use 1 B to 1 GiB")]
    BlockRange(u64),
    #[error(
        "--block-size {block} is larger than each thread's array ({array} bytes with {threads} threads); give a larger --array-size or a smaller block"
    )]
    BlockTooLarge {
        block: u64,
        array: u64,
        threads: usize,
    },
    #[error(
        "the working set ({need} bytes) is more than 90 % of the available memory ({available} bytes); give a smaller --array-size{hint}"
    )]
    TooMuchMemory {
        need: u64,
        available: u64,
        hint: &'static str,
    },
    #[error("--array-size {0} is too small: each thread needs at least 4 KiB per array")]
    WorkingSetTooSmall(u64),
    #[error(
        "--stores nt needs non-temporal store instructions, and the {0} kernels have none; use --isa avx2 or avx512 where the CPU has them, or --stores auto"
    )]
    NoStreamingStores(Isa),
    #[error("--isa {isa} is not available on this CPU; available: {available}")]
    IsaUnavailable { isa: Isa, available: String },
    #[error(
        "--mem-latency-ns is the floor of the staircase's memory plateau, and --latency-max {} ends inside the caches (the last holds {}): raise --latency-max to {} or more, or drop --mem-latency-ns",
        crate::units::format_size(*max),
        crate::units::format_size(*cache),
        crate::units::format_size(cache.saturating_mul(4))
    )]
    NoMemoryPlateau { max: u64, cache: u64 },
    #[error(
        "C2C needs two CPUs or more to bounce a line between, and has {0}; give --cpus with two of those this process may run on"
    )]
    TooFewCpus(usize),
    #[error(
        "LOADED needs two threads or more (one chases, the others make traffic), and -t gives at most {0}; give -t 2 or more"
    )]
    LoadedNeedsTwo(usize),
    #[error(
        "LOADED runs each of its {0} threads on a CPU of its own (the chaser must not share one), and this process may run on {1}; give -t {1} or fewer"
    )]
    LoadedOversubscribed(usize, usize),
    #[error("--cpus names CPU {0}, which this process may not run on; allowed: {1}")]
    CpuNotAllowed(usize, String),
    #[error(
        "NUMA cannot bind memory to a node here (mbind: {0}): a seccomp filter, as containers have, forbids it; run it where mbind is allowed"
    )]
    NoBinding(String),
    #[error("could not allocate {bytes} bytes: {reason}")]
    Alloc { bytes: u64, reason: String },
    #[error("could not pin a thread: {0}")]
    Pin(String),
    #[error(transparent)]
    WorkTooLong(#[from] crate::bench::WorkTooLong),
    /// A point that the session should not have given this path (a bug, said as one).
    #[error("internal: {0}")]
    Invalid(String),
}

impl MemError {
    /// True for errors in what the user typed (exit code 2).
    pub fn is_usage(&self) -> bool {
        !matches!(
            self,
            MemError::Alloc { .. }
                | MemError::Pin(_)
                | MemError::Invalid(_)
                | MemError::NoBinding(_)
        )
    }
}

const MIN_ARRAY: u64 = 64 << 20;

/// How many threads share each CPU (at least 1).
fn share_of(threads: f64, cpus: f64) -> f64 {
    (threads / cpus).max(1.0)
}

/// About how long one round of a bandwidth point's fixed work (`--total-bytes`) takes at
/// `threads` threads on `cpus` CPUs: a thread's share at about 10 GB/s, the threads sharing
/// the memory's bandwidth as they do the CPUs; None for a timed one.
fn work_secs(opts: &MemOptions, threads: usize, cpus: f64) -> Option<f64> {
    let b = opts.total_bytes? as f64;
    let t = threads as f64;
    let share = match opts.scaling {
        crate::results::params::Scaling::Strong => b / t,
        crate::results::params::Scaling::Weak => b,
    };
    Some(share / 10e9 * share_of(t, cpus))
}

/// Whether `w`'s points move the fixed bytes of `--total-bytes` (the bandwidth kernels; not
/// the latency chases, C2C, NUMA, LOADED or NULL, whose work is their own).
fn moves_total_bytes(w: MemWorkload) -> bool {
    !matches!(
        w,
        MemWorkload::C2c | MemWorkload::Numa | MemWorkload::Loaded
    ) && !matches!(w.spec().work, Work::Nothing | Work::Loads)
}

/// About how long the points of `opts` take on `sys` (a plan, not a promise). A bandwidth
/// point: its arrays allocated and first touched (about 2 GB/s here: page faults), a
/// calibration pass, then each round about the duration. A LATENCY point: the clock measured
/// (0.3 s), each staircase step's rings built (a random cycle of its lines, about 25 ns a
/// line per thread, the threads on their CPUs at once) and calibrated, then each round one
/// sample; and the four probes likewise on a DRAM-sized buffer.
pub fn estimate(opts: &MemOptions, sys: &SystemInfo) -> Duration {
    let cpus = affinity::allowed_cpus().len().max(1) as f64;
    let array = default_array_bytes(sys) as f64;
    // Under --precision, the most repetitions a point may take.
    let repeat = crate::measure::precision::worst_repeat(opts.reps.repeat, opts.precision);
    let rounds = (opts.reps.warmup + repeat) as f64;
    let mut s = 0.0;
    for p in points(opts) {
        let t = p.threads as f64;
        let share = (t / cpus).max(1.0);
        // The cost follows the workload's work model (its spec).
        if p.workload == MemWorkload::C2c {
            // Per pair: the calibration (two rounds of 1000 round trips) and each round a
            // sample.
            let n = c2c::pairs(&c2c::cpus_of(opts, &affinity::allowed_cpus())).len() as f64;
            s += n * (2e-3 + rounds * opts.latency_sample.as_secs_f64());
            continue;
        }
        if p.workload == MemWorkload::Numa {
            // Per cell: a ring built and chased, arrays first touched and read.
            let cells = numa_matrix::matrix_cells(&affinity::allowed_cpus()).0.len() as f64;
            let ring = loaded::ring_bytes(opts, sys) as f64;
            let sample = opts.latency_sample.as_secs_f64();
            let d = opts.duration.as_secs_f64() * 1.05;
            // Each cell's clock (0.3 s) and the calibration of its passes (d / 20 and more).
            s += cells
                * (0.3
                    + d / 10.0
                    + ring / 64.0 * 25e-9
                    + sample / 10.0
                    + rounds * sample
                    + array_bytes(opts, sys) as f64 / 2e9
                    + rounds * d);
            continue;
        }
        if p.workload == MemWorkload::Loaded {
            // The clock, then per page mode the ring built and calibrated, and each delay's
            // rounds with the traffic's arrays (first touched once).
            let size = loaded::ring_bytes(opts, sys) as f64;
            let sample = opts.latency_sample.as_secs_f64();
            let delays = loaded::DELAYS_NS.len() as f64;
            let (r, w) = p.traffic();
            s += 0.3 + (r + w) as f64 * array_bytes(opts, sys) as f64 / 2e9;
            s += opts.huge_pages.len() as f64
                * (size / 64.0 * 25e-9 + sample / 10.0 + delays * (rounds * sample + 1e-3));
            continue;
        }
        match p.workload.spec().work {
            Work::Nothing => s += rounds * 1e-3,
            Work::Loads => {
                let sample = opts.latency_sample.as_secs_f64();
                s += 0.3;
                for size in staircase_sizes(4096, opts.latency_max_bytes) {
                    let build = (size / latency::LINE as u64) as f64 * 25e-9 * share;
                    s += opts.huge_pages.len() as f64
                        * (build + sample / 10.0 + rounds * sample * share);
                }
                s += array_bytes(opts, sys) as f64 / 2e9
                    + Probe::ALL.len() as f64 * (sample / 10.0 + rounds * sample * share);
            }
            _ => {
                let timed = opts.bandwidth_time().as_secs_f64();
                let d = work_secs(opts, p.threads, cpus).unwrap_or(timed + timed / 20.0);
                let array = p.array.map_or(array, |a| a as f64);
                let (r, w) = p.traffic();
                s += (r + w) as f64 * array / 2e9 + rounds * d;
            }
        }
    }
    crate::units::estimate_secs(s)
}

/// Bytes of each array (all threads together) when the user gives no size: 4 × the
/// last-level cache and at least 64 MiB, so that the arrays live in DRAM.
pub fn default_array_bytes(sys: &SystemInfo) -> u64 {
    (4 * sys.llc_bytes().unwrap_or(0)).max(MIN_ARRAY)
}

/// The array sizes of the bandwidth points (all threads together): the user's, in order, or
/// the default one.
fn array_sizes(opts: &MemOptions, sys: &SystemInfo) -> Vec<u64> {
    if opts.array_sizes.is_empty() {
        vec![default_array_bytes(sys)]
    } else {
        opts.array_sizes.clone()
    }
}

/// The largest array of `opts` (the per-operation probes' buffer is sized from it).
pub fn array_bytes(opts: &MemOptions, sys: &SystemInfo) -> u64 {
    array_sizes(opts, sys)
        .into_iter()
        .max()
        .unwrap_or(MIN_ARRAY)
}

/// Checks the options against the machine before anything runs.
pub fn validate(opts: &MemOptions, sys: &SystemInfo) -> Result<(), MemError> {
    // A fixed amount whose one round would outlast a day.
    let cpus = affinity::allowed_cpus().len().max(1) as f64;
    if let Some(bytes) = opts.total_bytes
        && opts.workloads.iter().any(|w| moves_total_bytes(*w))
    {
        for &threads in opts.threads.iter() {
            if let Some(seconds) = work_secs(opts, threads, cpus) {
                crate::bench::WorkTooLong {
                    option: "--total-bytes",
                    amount: crate::units::format_bytes_binary(bytes),
                    scaling: opts.scaling,
                    threads,
                    seconds,
                    rate: "about 10 GB/s",
                    timed: "--duration",
                }
                .check()?;
            }
        }
    }
    // A staircase that ends inside the last cache has no memory plateau for the user's floor.
    let last_cache = sys
        .caches
        .iter()
        .filter(|c| c.kind != "Instruction")
        .map(|c| c.size_bytes)
        .max();
    if opts.peak.latency_ns.is_some()
        && opts.workloads.contains(&MemWorkload::Latency)
        && let Some(cache) = last_cache
        && opts.latency_max_bytes <= cache
    {
        return Err(MemError::NoMemoryPlateau {
            max: opts.latency_max_bytes,
            cache,
        });
    }
    let sizes = array_sizes(opts, sys);
    let array = sizes.iter().copied().max().unwrap_or(MIN_ARRAY);
    let smallest = sizes.iter().copied().min().unwrap_or(MIN_ARRAY);
    let max_threads = opts.threads.iter().copied().max().unwrap_or(1);
    if smallest / (max_threads as u64) < 4096 {
        return Err(MemError::WorkingSetTooSmall(smallest));
    }
    let per_thread = smallest / max_threads as u64;
    if opts.workloads.iter().any(|w| w.uses_blocks()) {
        for &b in &opts.block_sizes {
            if !(1..=1 << 30).contains(&b) {
                return Err(MemError::BlockRange(b));
            }
            if b > per_thread {
                return Err(MemError::BlockTooLarge {
                    block: b,
                    array: per_thread,
                    threads: max_threads,
                });
            }
        }
    }
    if let Some(&available) = sys.memory.available_bytes.get() {
        let limit = available / 10 * 9;
        let arrays = opts.workloads.iter().map(|w| w.arrays()).max().unwrap_or(0);
        if arrays * array > limit {
            return Err(MemError::TooMuchMemory {
                need: arrays * array,
                available,
                hint: "",
            });
        }
        // Each thread's chase ring plus its permutation (4 bytes per 64-byte line) while it is
        // built.
        let latency_threads = opts.latency_threads.iter().copied().max().unwrap_or(1) as u64;
        let chase =
            (opts.latency_max_bytes + opts.latency_max_bytes / 16).saturating_mul(latency_threads);
        // LOADED: one ring, and the traffic's arrays (up to four).
        let ring = loaded::ring_bytes(opts, sys);
        let loaded = (ring + ring / 16).saturating_add(4u64.saturating_mul(array));
        // NUMA: one cell's ring and arrays at a time.
        if opts.workloads.contains(&MemWorkload::Numa) && ring + ring / 16 + array > limit {
            return Err(MemError::TooMuchMemory {
                need: ring + ring / 16 + array,
                available,
                hint: "",
            });
        }
        if opts.workloads.contains(&MemWorkload::Loaded) && loaded > limit {
            return Err(MemError::TooMuchMemory {
                need: loaded,
                available,
                hint: " or --latency-max",
            });
        }
        if opts.workloads.contains(&MemWorkload::Latency) && chase > limit {
            return Err(MemError::TooMuchMemory {
                need: chase,
                available,
                hint: " or --latency-max",
            });
        }
    }
    if opts.workloads.contains(&MemWorkload::Loaded) {
        if max_threads < 2 {
            return Err(MemError::LoadedNeedsTwo(max_threads));
        }
        let allowed = crate::runner::affinity::allowed_cpus().len();
        if max_threads > allowed {
            return Err(MemError::LoadedOversubscribed(max_threads, allowed));
        }
    }
    if opts.workloads.contains(&MemWorkload::C2c) {
        let allowed = crate::runner::affinity::allowed_cpus();
        if let Some(&cpu) = opts.c2c_cpus.iter().find(|c| !allowed.contains(c)) {
            let list: Vec<String> = allowed.iter().map(|c| c.to_string()).collect();
            return Err(MemError::CpuNotAllowed(cpu, list.join(",")));
        }
        let cpus = c2c::cpus_of(opts, &allowed);
        if cpus.len() < 2 {
            return Err(MemError::TooFewCpus(cpus.len()));
        }
    }
    if let Some(isa) = opts.isa
        && !sys.cpu.isas.contains(&isa)
    {
        return Err(MemError::IsaUnavailable {
            isa,
            available: sys
                .cpu
                .isas
                .iter()
                .map(|i| i.name())
                .collect::<Vec<_>>()
                .join(", "),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests;
