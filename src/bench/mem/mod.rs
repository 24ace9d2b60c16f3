//! The memory benchmark: bandwidth (RWS, RWR, WS, WR, RS, RR and the four STREAM kernels) in GB/s
//! and latency (pointer chasing over a staircase of working sets, per-operation probes).
//!
//! Bytes are counted as STREAM counts them: the bytes the kernel reads plus the bytes it writes,
//! with no allowance for the write-allocate (read-for-ownership) traffic of regular stores —
//! copy and scale move 16 bytes per element, add and triad 24. Each workload declares how many
//! arrays it reads and writes ([`MemWorkload::traffic`]), and rates are computed here, once.

pub mod kernels;
pub mod latency;
pub mod order;

use crate::bench::buffer::{Buffer, HugePages};
use crate::results::Metric;
use crate::results::ResultRecord;
use crate::results::params::{self as rp, Params};
use crate::results::{Subsystem, Unit};
use crate::runner::{self, Repetition, affinity};
use crate::sysinfo::peak::{MemPeakOverrides, Peak, mem_peak};
use crate::sysinfo::{Isa, SystemInfo};
use kernels::Kernels;
use latency::{Chase, Probe, detect_levels, staircase_sizes};
use order::BlockOrder;
use std::fmt;
use std::str::FromStr;
use std::sync::Mutex;
use std::time::Duration;

/// A memory workload, as users type it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum MemWorkload {
    /// Read+write sequential: copy block by block (memcpy-like).
    Rws,
    /// Read+write at random block offsets.
    Rwr,
    /// Sequential write (memset-like).
    Ws,
    /// Write at random block offsets.
    Wr,
    /// Sequential read.
    Rs,
    /// Read at random block offsets.
    Rr,
    /// STREAM copy: c = a.
    Copy,
    /// STREAM scale: b = s·c.
    Scale,
    /// STREAM add: c = a + b.
    Add,
    /// STREAM triad: a = b + s·c.
    Triad,
    /// Pointer-chasing staircase, cache levels and per-operation latencies.
    Latency,
    /// No work: the harness's overhead per repetition.
    Null,
}

/// How long each LATENCY sample runs when `--duration` does not say.
pub const DEFAULT_LATENCY_SAMPLE: Duration = Duration::from_millis(25);

/// The largest working set of the latency staircase when none is given (`--latency-max 1Gi`).
pub const DEFAULT_LATENCY_MAX: u64 = 1 << 30;

impl MemWorkload {
    pub const ALL: [MemWorkload; 12] = [
        MemWorkload::Rws,
        MemWorkload::Rwr,
        MemWorkload::Ws,
        MemWorkload::Wr,
        MemWorkload::Rs,
        MemWorkload::Rr,
        MemWorkload::Copy,
        MemWorkload::Scale,
        MemWorkload::Add,
        MemWorkload::Triad,
        MemWorkload::Latency,
        MemWorkload::Null,
    ];
    /// The workloads run when none is named: all but NULL (the last).
    pub const DEFAULT: &[MemWorkload] = MemWorkload::ALL.split_at(MemWorkload::ALL.len() - 1).0;

    pub fn name(self) -> &'static str {
        match self {
            MemWorkload::Rws => "RWS",
            MemWorkload::Rwr => "RWR",
            MemWorkload::Ws => "WS",
            MemWorkload::Wr => "WR",
            MemWorkload::Rs => "RS",
            MemWorkload::Rr => "RR",
            MemWorkload::Copy => "COPY",
            MemWorkload::Scale => "SCALE",
            MemWorkload::Add => "ADD",
            MemWorkload::Triad => "TRIAD",
            MemWorkload::Latency => "LATENCY",
            MemWorkload::Null => "NULL",
        }
    }

    /// (arrays read, arrays written) per element: the work model of the bandwidth workloads.
    pub fn traffic(self) -> (u64, u64) {
        match self {
            MemWorkload::Rws | MemWorkload::Rwr | MemWorkload::Copy | MemWorkload::Scale => (1, 1),
            MemWorkload::Ws | MemWorkload::Wr => (0, 1),
            MemWorkload::Rs | MemWorkload::Rr => (1, 0),
            MemWorkload::Add | MemWorkload::Triad => (2, 1),
            MemWorkload::Latency | MemWorkload::Null => (0, 0),
        }
    }

    /// Arrays the workload touches.
    pub fn arrays(self) -> u64 {
        let (r, w) = self.traffic();
        r + w
    }

    /// Whether the workload works block by block (`--block-size`).
    pub fn uses_blocks(self) -> bool {
        matches!(
            self,
            MemWorkload::Rws
                | MemWorkload::Rwr
                | MemWorkload::Ws
                | MemWorkload::Wr
                | MemWorkload::Rs
                | MemWorkload::Rr
        )
    }

    fn random(self) -> bool {
        matches!(self, MemWorkload::Rwr | MemWorkload::Wr | MemWorkload::Rr)
    }
}

impl fmt::Display for MemWorkload {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for MemWorkload {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        MemWorkload::ALL
            .into_iter()
            .find(|w| w.name().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| {
                format!(
                    "unknown memory workload '{s}'; use RWS, RWR, WS, WR, RS, RR, COPY, SCALE, ADD, TRIAD, LATENCY or NULL"
                )
            })
    }
}

/// Store instructions for the kernels that write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Stores {
    /// Non-temporal where they help: whole arrays, and blocks that are whole cache lines of at
    /// least 1 KiB. Streaming a block that starts or ends inside a line flushes partial
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
    /// Bytes of each array, all threads together (None: 4 × LLC, at least 64 MiB).
    pub array_bytes: Option<u64>,
    pub stores: Stores,
    pub isa: Option<Isa>,
    /// Page modes of the latency staircase.
    pub huge_pages: Vec<HugePages>,
    /// Largest working set of the latency staircase.
    pub latency_max_bytes: u64,
    /// Thread counts of LATENCY: each thread chases its own ring (runs its own probe) at the
    /// same time, so that more than one shows the latency under load.
    pub latency_threads: Vec<usize>,
    /// How long each LATENCY sample chases (or probes).
    pub latency_sample: Duration,
    pub duration: Duration,
    /// Fixed work instead of `duration` (`--total-bytes`): the bytes each repetition of a
    /// bandwidth point moves (read + written), split between its threads (strong) or each
    /// thread's (weak).
    pub total_bytes: Option<u64>,
    pub scaling: crate::results::params::Scaling,
    pub reps: Repetition,
    pub peak: MemPeakOverrides,
}

/// Why a memory run cannot start or go on.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum MemError {
    #[error("--block-size {0} is out of range: use 8 B to 1 GiB")]
    BlockRange(u64),
    #[error("--block-size {0} is not a multiple of 8 bytes: the kernels move 8-byte words")]
    BlockAlign(u64),
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
    #[error("could not allocate {bytes} bytes: {reason}")]
    Alloc { bytes: u64, reason: String },
    #[error("could not pin a thread: {0}")]
    Pin(String),
}

impl MemError {
    /// True for errors in what the user typed (exit code 2).
    pub fn is_usage(&self) -> bool {
        !matches!(self, MemError::Alloc { .. } | MemError::Pin(_))
    }
}

/// One point of the sweep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemPoint {
    pub workload: MemWorkload,
    pub threads: usize,
    pub block: Option<u64>,
}

/// Every workload × block size (where it uses blocks) × thread count; LATENCY once per count of
/// `latency_threads`.
pub fn points(opts: &MemOptions) -> Vec<MemPoint> {
    let mut out = Vec::new();
    for &workload in &opts.workloads {
        if workload == MemWorkload::Latency {
            out.extend(opts.latency_threads.iter().map(|&threads| MemPoint {
                workload,
                threads,
                block: None,
            }));
            continue;
        }
        let blocks: Vec<Option<u64>> = if workload.uses_blocks() {
            opts.block_sizes.iter().map(|b| Some(*b)).collect()
        } else {
            vec![None]
        };
        for (block, threads) in crate::sweep::product(&blocks, &opts.threads) {
            out.push(MemPoint {
                workload,
                threads,
                block,
            });
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
        _ => per,
    }
}

const MIN_ARRAY: u64 = 64 << 20;

/// About how long the points of `opts` take on `sys` (a plan, not a promise). A bandwidth
/// point: its arrays allocated and first touched (about 2 GB/s here: page faults), a
/// calibration pass, then each round about the duration. A LATENCY point: the clock measured
/// (0.3 s), each staircase step's rings built (a random cycle of its lines, about 25 ns a
/// line per thread, the threads on their CPUs at once) and calibrated, then each round one
/// sample; and the four probes likewise on a DRAM-sized buffer.
/// How many threads share each CPU (at least 1).
fn share_of(threads: f64, cpus: f64) -> f64 {
    (threads / cpus).max(1.0)
}

pub fn estimate(opts: &MemOptions, sys: &SystemInfo) -> Duration {
    let cpus = affinity::allowed_cpus().len().max(1) as f64;
    let array = array_bytes(opts, sys) as f64;
    let rounds = (opts.reps.warmup + opts.reps.repeat) as f64;
    let mut s = 0.0;
    for p in points(opts) {
        let t = p.threads as f64;
        let share = (t / cpus).max(1.0);
        match p.workload {
            MemWorkload::Null => s += rounds * 1e-3,
            MemWorkload::Latency => {
                let sample = opts.latency_sample.as_secs_f64();
                s += 0.3;
                for size in staircase_sizes(4096, opts.latency_max_bytes) {
                    let build = (size / latency::LINE as u64) as f64 * 25e-9 * share;
                    s += opts.huge_pages.len() as f64
                        * (build + sample / 10.0 + rounds * sample * share);
                }
                s += array / 2e9
                    + Probe::ALL.len() as f64 * (sample / 10.0 + rounds * sample * share);
            }
            w => {
                // Fixed work: a thread's share at about 10 GB/s, the threads sharing the
                // memory's bandwidth as they do the CPUs.
                let d = match opts.total_bytes {
                    Some(b) => {
                        let share = match opts.scaling {
                            crate::results::params::Scaling::Strong => b as f64 / t,
                            crate::results::params::Scaling::Weak => b as f64,
                        };
                        share / 10e9 * share_of(t, cpus)
                    }
                    None => opts.duration.as_secs_f64() + opts.duration.as_secs_f64() / 20.0,
                };
                s += w.arrays() as f64 * array / 2e9 + rounds * d;
            }
        }
    }
    Duration::from_secs_f64(s)
}

/// Bytes of each array (all threads together): the user's, or 4 × the last-level cache and at
/// least 64 MiB, so that the arrays live in DRAM.
pub fn array_bytes(opts: &MemOptions, sys: &SystemInfo) -> u64 {
    opts.array_bytes
        .unwrap_or_else(|| (4 * sys.llc_bytes().unwrap_or(0)).max(MIN_ARRAY))
}

/// Checks the options against the machine before anything runs.
pub fn validate(opts: &MemOptions, sys: &SystemInfo) -> Result<(), MemError> {
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
    let array = array_bytes(opts, sys);
    let max_threads = opts.threads.iter().copied().max().unwrap_or(1);
    let per_thread = array / max_threads as u64;
    if per_thread < 4096 {
        return Err(MemError::WorkingSetTooSmall(array));
    }
    if opts.workloads.iter().any(|w| w.uses_blocks()) {
        for &b in &opts.block_sizes {
            if !(8..=1 << 30).contains(&b) {
                return Err(MemError::BlockRange(b));
            }
            if b % 8 != 0 {
                return Err(MemError::BlockAlign(b));
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
        if opts.workloads.contains(&MemWorkload::Latency) && chase > limit {
            return Err(MemError::TooMuchMemory {
                need: chase,
                available,
                hint: " or --latency-max",
            });
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

/// State of one run: the kernels chosen and the peak.
pub struct MemSession<'a> {
    sys: &'a SystemInfo,
    opts: &'a MemOptions,
    isa: Isa,
    /// Kernels with regular stores, and with non-temporal ones where the ISA has them.
    regular: Kernels,
    streaming: Option<Kernels>,
    allowed: Vec<usize>,
    peak: Result<Peak, String>,
}

/// Thread i's arrays for one point.
type Arrays = Vec<Buffer>;

fn ptr(b: &Buffer) -> *mut f64 {
    b.as_ptr() as *mut f64
}

impl<'a> MemSession<'a> {
    pub fn new(sys: &'a SystemInfo, opts: &'a MemOptions) -> Result<Self, MemError> {
        validate(opts, sys)?;
        // The widest instruction set that has kernels of its own (others run the portable
        // ones, which are recorded as scalar).
        let isa = opts.isa.unwrap_or_else(|| {
            sys.cpu
                .isas
                .iter()
                .copied()
                .find(|i| kernels::has_kernels(*i))
                .unwrap_or(Isa::Scalar)
        });
        let (regular, _) = kernels::kernels(isa, false);
        let streaming = match kernels::kernels(isa, true) {
            (k, true) => Some(k),
            _ => None,
        };
        if opts.stores == Stores::Nt && streaming.is_none() {
            return Err(MemError::NoStreamingStores(isa));
        }
        Ok(MemSession {
            sys,
            opts,
            isa,
            regular,
            streaming,
            allowed: affinity::allowed_cpus(),
            peak: mem_peak(&sys.memory.devices, &opts.peak),
        })
    }

    pub fn isa(&self) -> Isa {
        self.isa
    }

    /// The kernels for a point moving blocks of `block` bytes, and whether they stream.
    fn kernels_for(&self, block: u64) -> (Kernels, bool) {
        let want = match self.opts.stores {
            Stores::Nt => true,
            Stores::Regular => false,
            Stores::Auto => block.is_multiple_of(64) && block >= 1024,
        };
        match (want, self.streaming) {
            (true, Some(k)) => (k, true),
            _ => (self.regular, false),
        }
    }

    /// What the store option means on this machine, for the banner.
    pub fn stores(&self) -> &'static str {
        match (self.opts.stores, self.streaming.is_some()) {
            (_, false) | (Stores::Regular, _) => "regular",
            (Stores::Nt, true) => "non-temporal",
            (Stores::Auto, true) => "non-temporal where they help (auto)",
        }
    }

    /// Runs one point; returns its records (LATENCY gives many).
    pub fn run(
        &self,
        point: MemPoint,
        tick: &mut dyn FnMut(),
    ) -> Result<Vec<ResultRecord>, MemError> {
        match point.workload {
            MemWorkload::Latency => self.latency(point.threads, tick),
            MemWorkload::Null => {
                let placement =
                    affinity::place(point.threads, &self.allowed, &self.sys.cpu.logical);
                let times =
                    runner::run_rounds(&placement.cpus, self.opts.reps, |_| {}, |_| {}, |_| tick())
                        .map_err(|e| MemError::Pin(e.to_string()))?;
                let samples = times.iter().map(|t| t.as_secs_f64() * 1e9).collect();
                let params = Params::Mem(rp::MemParams {
                    threads: point.threads,
                    kernel: None,
                    node: rp::NodeTag::default(),
                });
                Ok(vec![record(
                    MemWorkload::Null,
                    params,
                    Metric::Latency,
                    Unit::Nanos,
                    samples,
                    Err("the NULL workload measures harness overhead and has no peak".into()),
                )])
            }
            _ => self.bandwidth(point, tick).map(|r| vec![r]),
        }
    }

    fn bandwidth(&self, point: MemPoint, tick: &mut dyn FnMut()) -> Result<ResultRecord, MemError> {
        let w = point.workload;
        let placement = affinity::place(point.threads, &self.allowed, &self.sys.cpu.logical);
        let cpus = &placement.cpus;
        let array = array_bytes(self.opts, self.sys);
        // Each thread's arrays: a whole number of 64-byte lines.
        let per_thread = (array / point.threads as u64) / 64 * 64;
        let elems = (per_thread / 8) as usize;
        let block = point.block.unwrap_or(per_thread);
        let blocks = per_thread / block;
        let block_elems = (block / 8) as usize;
        // Bytes moved per pass by one thread, as STREAM counts them.
        let (reads, writes) = w.traffic();
        let touched = if w.uses_blocks() {
            blocks * block
        } else {
            elems as u64 * 8
        };
        let pass_bytes = (reads + writes) * touched;

        // Allocate on each pinned thread: first touch places the pages on its node.
        let once = Repetition {
            warmup: 0,
            repeat: 1,
        };
        let arrays: Vec<Arrays> = on_each(cpus, w.arrays() * array, |_| {
            (0..w.arrays().max(1))
                .map(|k| {
                    let b = Buffer::new(per_thread as usize, HugePages::On)?;
                    // SAFETY: the buffer holds `elems` f64.
                    unsafe { (self.regular.fill)(ptr(&b), 1.0 + k as f64, elems) };
                    Ok(b)
                })
                .collect()
        })?;

        let (k, streams) = self.kernels_for(block);
        let sink = std::sync::atomic::AtomicU64::new(0);
        // One pass over thread i's arrays; `seed` varies the random block order.
        let pass = |i: usize, seed: u64| {
            let a = &arrays[i];
            let p = |n: usize| ptr(&a[n]);
            // SAFETY: every pointer and length stays within thread i's arrays of `elems` f64;
            // blocks are whole and inside (blocks × block ≤ per_thread).
            unsafe {
                match w {
                    MemWorkload::Copy => (k.copy)(p(1), p(0), elems),
                    MemWorkload::Scale => (k.scale)(p(1), p(0), 3.0, elems),
                    MemWorkload::Add => (k.add)(p(2), p(0), p(1), elems),
                    MemWorkload::Triad => (k.triad)(p(2), p(0), p(1), 3.0, elems),
                    _ => {
                        let mut acc = 0u64;
                        let mut one = |b: u64| {
                            let off = b as usize * block_elems;
                            match w {
                                MemWorkload::Rws | MemWorkload::Rwr => {
                                    (k.copy)(p(1).add(off), p(0).add(off), block_elems)
                                }
                                MemWorkload::Ws | MemWorkload::Wr => {
                                    (k.fill)(p(0).add(off), 2.0, block_elems)
                                }
                                _ => acc = acc.wrapping_add((k.read)(p(0).add(off), block_elems)),
                            }
                        };
                        if w.random() {
                            BlockOrder::new(blocks, seed ^ (i as u64) << 32).for_each(&mut one);
                        } else {
                            (0..blocks).for_each(&mut one);
                        }
                        sink.fetch_add(acc, std::sync::atomic::Ordering::Relaxed);
                    }
                }
            }
            kernels::fence();
        };
        let passes = match self.opts.total_bytes {
            // Fixed work: the passes that move each thread's share of the bytes (at least).
            Some(total) => {
                let share = match self.opts.scaling {
                    crate::results::params::Scaling::Strong => total / point.threads as u64,
                    crate::results::params::Scaling::Weak => total,
                };
                share.div_ceil(pass_bytes.max(1)).max(1)
            }
            // Calibrate: one timed pass, then as many passes as fill the target duration.
            None => {
                let first = runner::run_rounds(cpus, once, |i| pass(i, 0), |_| {}, |_| {})
                    .map_err(|e| MemError::Pin(e.to_string()))?;
                (self.opts.duration.as_secs_f64() / first[0].as_secs_f64().max(1e-9))
                    .ceil()
                    .max(1.0) as u64
            }
        };
        let times = runner::run_rounds(
            cpus,
            self.opts.reps,
            |i| (1..=passes).for_each(|s| pass(i, s)),
            |_| {},
            |_| tick(),
        )
        .map_err(|e| MemError::Pin(e.to_string()))?;
        std::hint::black_box(sink.into_inner());
        let total = pass_bytes as f64 * passes as f64 * point.threads as f64;
        let samples = times
            .iter()
            .map(|t| total / t.as_secs_f64() / 1e9)
            .collect();
        let stores = match (writes, streams) {
            (0, _) => "none",
            (_, true) => "nt",
            (_, false) => "regular",
        };
        let params = Params::Mem(rp::MemParams {
            threads: point.threads,
            kernel: Some(rp::MemKernel {
                cpus: placement.cpus.clone(),
                isa: self.isa,
                stores: stores.into(),
                blocks: w.uses_blocks().then(|| rp::MemBlocks {
                    block_size_bytes: block,
                    blocks_per_thread: blocks,
                    order: if w.random() { "random" } else { "sequential" }.into(),
                }),
                array_bytes_per_thread: per_thread,
                pages: HugePages::On.name().into(),
                working_set_bytes: w.arrays() * per_thread * point.threads as u64,
                bytes_read_per_pass: reads * touched * point.threads as u64,
                bytes_written_per_pass: writes * touched * point.threads as u64,
                passes: passes as u64,
                total_bytes: self.opts.total_bytes,
                scaling: self.opts.total_bytes.map(|_| self.opts.scaling),
                byte_counting: "STREAM: bytes read + bytes written, no write-allocate".into(),
            }),
            node: rp::NodeTag::default(),
        });
        Ok(record(
            w,
            params,
            Metric::Throughput,
            Unit::GBPerSec,
            samples,
            self.peak.clone(),
        ))
    }

    /// The staircase for each page mode, the levels found on it, and the per-operation probes,
    /// on `threads` pinned threads at once: each chases its own ring of the working set's size
    /// (runs its own probe), all started together, so that more than one thread shows the
    /// latency under load. A point's samples are the threads' mean latency per load.
    fn latency(
        &self,
        threads: usize,
        tick: &mut dyn FnMut(),
    ) -> Result<Vec<ResultRecord>, MemError> {
        let cpus = affinity::place(threads, &self.allowed, &self.sys.cpu.logical).cpus;
        // Each sample chases for about this long.
        let sample = self.opts.latency_sample;
        let budget = crate::sysinfo::ClockBudget::default();
        let clock = runner::on_cpu(cpus[0], || {
            self.sys.measure_clock(&self.sys.clock_probes(), budget).ghz
        })
        .map_err(|e| MemError::Pin(e.to_string()))?;
        let mut out = Vec::new();
        for &huge in &self.opts.huge_pages {
            let mut stair = Vec::new();
            for size in staircase_sizes(4096, self.opts.latency_max_bytes) {
                let rings = on_each(&cpus, size * threads as u64, |i| {
                    Chase::new(size as usize, huge, size ^ (i as u64) << 40)
                })?;
                let loads = runner::calibrate(sample, |n| {
                    std::hint::black_box(rings[0].run(n));
                });
                let loaded = self.loaded(&cpus, loads.div_ceil(16) * 16, tick, |i| {
                    std::hint::black_box(rings[i].run(loads));
                })?;
                // In ns, as measured (the record stores seconds).
                let ns = crate::measure::Summary::of(&loaded.samples_ns);
                let chase = rp::Chase {
                    working_set_bytes: size,
                    pages: huge.name().into(),
                    huge_page_bytes: rings[0].huge_page_bytes(),
                    loads: loaded.ops,
                    clock_ghz: clock,
                    latency_cycles: clock.zip(ns.as_ref()).map(|(c, ns)| ns.mean * c),
                };
                stair.push((size, ns.map_or(f64::NAN, |s| s.median)));
                let params = latency_params(threads, "chase", Some(chase), None, None);
                out.push(latency_record(loaded.params(params), loaded.samples_ns));
            }
            out.extend(self.levels(&stair, huge, clock, threads));
        }
        out.extend(self.probes(&cpus, sample, tick)?);
        Ok(out)
    }

    /// Runs `work(thread)` (`ops` loads each) on every CPU of `cpus` at once for the point's
    /// repetitions, `tick` after each.
    fn loaded(
        &self,
        cpus: &[usize],
        ops: u64,
        tick: &mut dyn FnMut(),
        work: impl Fn(usize) + Sync,
    ) -> Result<Loaded, MemError> {
        let rounds = runner::run_rounds_per_thread(cpus, self.opts.reps, work, |_| {}, |_| tick())
            .map_err(|e| MemError::Pin(e.to_string()))?;
        Ok(Loaded::of(cpus, ops, &rounds))
    }
    /// One record per level found on a staircase, next to sysfs's size for that level, named
    /// by [`latency::name_levels`].
    fn levels(
        &self,
        stair: &[(u64, f64)],
        huge: HugePages,
        clock: Option<f64>,
        threads: usize,
    ) -> Vec<ResultRecord> {
        let levels = detect_levels(stair);
        let caches: Vec<(u32, u64)> = self
            .sys
            .caches
            .iter()
            .filter(|c| c.kind != "Instruction")
            .map(|c| (c.level, c.size_bytes))
            .collect();
        let kinds = latency::name_levels(&levels, &caches);
        levels
            .iter()
            .zip(kinds)
            .map(|(l, kind)| {
                let cache = match kind {
                    latency::LevelKind::Cache(level) => Some(level),
                    latency::LevelKind::Memory(_) => None,
                };
                let level = rp::Level {
                    level: kind.name(),
                    pages: huge.name().into(),
                    plateau_from_bytes: l.from_bytes,
                    plateau_to_bytes: l.to_bytes,
                    capacity_bytes: cache.map(|_| l.capacity_bytes),
                    sysfs_size_bytes: cache.map(|level| {
                        caches
                            .iter()
                            .find(|c| c.0 == level)
                            .map(|c| c.1)
                    }),
                    latency_cycles: clock.map(|c| l.latency_ns * c),
                };
                // The level's floor: a cache's load-to-use cycles ÷ the clock, memory's the
                // modules' rated latency; a rise past memory is page walks, with no floor.
                let peak = match kind {
                    latency::LevelKind::Cache(level) => crate::sysinfo::peak::cache_latency(
                        level,
                        self.sys.uarch(),
                        clock.ok_or_else(|| "the clock probes did not agree".to_string()),
                    ),
                    latency::LevelKind::Memory(1) => {
                        crate::sysinfo::peak::memory_latency(self.opts.peak.latency_ns)
                    }
                    latency::LevelKind::Memory(_) => Err("a rise past memory comes from page walks (TLB reach), which have no floor here".into()),
                };
                record(
                    MemWorkload::Latency,
                    latency_params(threads, "level", None, Some(level), None),
                    Metric::Latency,
                    Unit::Nanos,
                    vec![l.latency_ns],
                    peak,
                )
            })
            .collect()
    }

    /// Time per operation of independent 1- and 8-byte loads, sequential and random, over a
    /// DRAM-sized span per thread (the largest power of two within its share of one array).
    fn probes(
        &self,
        cpus: &[usize],
        sample: Duration,
        tick: &mut dyn FnMut(),
    ) -> Result<Vec<ResultRecord>, MemError> {
        let threads = cpus.len().max(1);
        let share = (array_bytes(self.opts, self.sys) / threads as u64).max(4096);
        let span = 1usize << (63 - share.leading_zeros());
        let bufs = on_each(cpus, (span * threads) as u64, |_| {
            Buffer::new(span, HugePages::On)
        })?;
        let mut out = Vec::new();
        for probe in Probe::ALL {
            let ops = runner::calibrate(sample, |n| {
                std::hint::black_box(probe.run(&bufs[0], span, n));
            });
            let loaded = self.loaded(cpus, ops, tick, |i| {
                std::hint::black_box(probe.run(&bufs[i], span, ops));
            })?;
            let op = rp::OpProbe {
                op_bytes: probe.op_bytes as u64,
                order: if probe.random { "random" } else { "sequential" }.into(),
                working_set_bytes: span as u64,
                ops,
            };
            let params = latency_params(threads, &probe.name(), None, None, Some(op));
            out.push(latency_record(loaded.params(params), loaded.samples_ns));
        }
        Ok(out)
    }
}

/// Makes each thread's part on its own pinned CPU (first touch places the pages on its node),
/// all at once; `bytes` (of all of them) is for the error.
fn on_each<T: Send>(
    cpus: &[usize],
    bytes: u64,
    make: impl Fn(usize) -> std::io::Result<T> + Sync,
) -> Result<Vec<T>, MemError> {
    let once = Repetition {
        warmup: 0,
        repeat: 1,
    };
    let slots: Mutex<Vec<Option<std::io::Result<T>>>> =
        Mutex::new((0..cpus.len()).map(|_| None).collect());
    runner::run_rounds(
        cpus,
        once,
        |i| {
            let made = make(i);
            slots.lock().unwrap_or_else(|e| e.into_inner())[i] = Some(made);
        },
        |_| {},
        |_| {},
    )
    .map_err(|e| MemError::Pin(e.to_string()))?;
    slots
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .into_iter()
        .map(|a| a.unwrap_or_else(|| Err(std::io::Error::other("a thread made nothing"))))
        .collect::<std::io::Result<_>>()
        .map_err(|e| MemError::Alloc {
            bytes,
            reason: e.to_string(),
        })
}

/// The timed rounds of a latency point on one or more threads at once.
struct Loaded {
    /// Per round: the threads' mean time per operation, ns.
    samples_ns: Vec<f64>,
    /// Operations per thread per round.
    ops: u64,
    cpus: Vec<usize>,
    /// Per thread: its mean time per operation over the rounds, ns.
    thread_ns: Vec<f64>,
    /// Operations per second of all threads together, mean over the rounds.
    ops_per_s: f64,
}

impl Loaded {
    fn of(cpus: &[usize], ops: u64, rounds: &runner::Rounds) -> Loaded {
        let per_op = |d: &Duration| d.as_secs_f64().max(1e-12) * 1e9 / ops.max(1) as f64;
        let threads = rounds.threads.len().max(1) as f64;
        let n = rounds.wall.len();
        let samples_ns = (0..n)
            .map(|r| rounds.threads.iter().map(|t| per_op(&t[r])).sum::<f64>() / threads)
            .collect();
        let thread_ns = rounds
            .threads
            .iter()
            .map(|t| t.iter().map(per_op).sum::<f64>() / t.len().max(1) as f64)
            .collect();
        let ops_per_s = (0..n)
            .map(|r| {
                rounds
                    .threads
                    .iter()
                    .map(|t| 1e9 / per_op(&t[r]))
                    .sum::<f64>()
            })
            .sum::<f64>()
            / n.max(1) as f64;
        Loaded {
            samples_ns,
            ops,
            cpus: cpus.to_vec(),
            thread_ns,
            ops_per_s,
        }
    }

    /// `params` with the threads' CPUs, their own latencies and the rate of all of them.
    fn params(&self, mut params: Params) -> Params {
        if let Params::MemLatency(p) = &mut params {
            p.cpus = self.cpus.clone();
            p.thread_latency_ns = self.thread_ns.clone();
            p.ops_per_s = Some(self.ops_per_s);
        }
        params
    }
}

/// The parameters of a latency point on `threads` threads.
fn latency_params(
    threads: usize,
    probe: &str,
    chase: Option<rp::Chase>,
    level: Option<rp::Level>,
    op: Option<rp::OpProbe>,
) -> Params {
    Params::MemLatency(rp::LatencyParams {
        threads,
        probe: probe.into(),
        cpus: Vec::new(),
        thread_latency_ns: Vec::new(),
        ops_per_s: None,
        chase,
        level,
        op,
        node: rp::NodeTag::default(),
    })
}

/// A staircase step or a probe (ns): their floors are the levels' (see the level records).
fn latency_record(params: Params, samples: Vec<f64>) -> ResultRecord {
    record(
        MemWorkload::Latency,
        params,
        Metric::Latency,
        Unit::Nanos,
        samples,
        Err("the floor of each level is on its level record".into()),
    )
}

fn record(
    workload: MemWorkload,
    params: Params,
    metric: Metric,
    unit: Unit,
    samples: Vec<f64>,
    peak: Result<Peak, String>,
) -> ResultRecord {
    ResultRecord::new(
        Subsystem::Mem,
        workload.name(),
        params,
        metric,
        unit,
        samples,
        peak,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tiny(workloads: Vec<MemWorkload>) -> MemOptions {
        MemOptions {
            workloads,
            block_sizes: vec![8, 1000, 65536],
            threads: vec![1, 2],
            array_bytes: Some(1 << 20),
            stores: Stores::Nt,
            isa: None,
            huge_pages: vec![HugePages::On],
            latency_max_bytes: 64 << 10,
            latency_threads: vec![1, 2],
            latency_sample: Duration::from_millis(2),
            total_bytes: None,
            scaling: crate::results::params::Scaling::Strong,
            duration: Duration::from_millis(2),
            reps: Repetition {
                warmup: 0,
                repeat: 2,
            },
            peak: MemPeakOverrides {
                gbs: Some(100.0),
                ..Default::default()
            },
        }
    }

    fn sys() -> SystemInfo {
        crate::sysinfo::collect(crate::sysinfo::ClockBudget {
            warmup: Duration::from_millis(1),
            sample: Duration::from_millis(1),
            samples: 1,
        })
    }

    /// Every workload runs at a tiny size with every store mode and gives finite, positive
    /// figures with the bytes it declares.
    #[test]
    fn conformance_every_workload() {
        let sys = sys();
        for stores in [Stores::Nt, Stores::Regular, Stores::Auto] {
            let mut opts = tiny(MemWorkload::ALL.to_vec());
            opts.stores = stores;
            let session = MemSession::new(&sys, &opts).unwrap();
            for point in points(&opts) {
                let recs = session.run(point, &mut || {}).unwrap();
                assert!(!recs.is_empty());
                for r in &recs {
                    assert!(
                        r.samples.iter().all(|s| s.is_finite() && *s > 0.0),
                        "{point:?} {:?}",
                        r.samples
                    );
                }
                let r = &recs[0];
                if r.unit == Unit::BytesPerSec {
                    let (reads, writes) = point.workload.traffic();
                    let k = r.params.mem().unwrap().kernel.as_ref().unwrap();
                    let (read, written) = (k.bytes_read_per_pass, k.bytes_written_per_pass);
                    assert_eq!(read * writes, written * reads, "{point:?}");
                    assert_eq!(r.peak.as_ref().unwrap().value, 100e9);
                    assert!(r.efficiency.is_some());
                }
            }
        }
    }

    #[test]
    fn latency_gives_staircase_levels_and_probes() {
        let sys = sys();
        let opts = tiny(vec![MemWorkload::Latency]);
        let session = MemSession::new(&sys, &opts).unwrap();
        let latency_points = points(&opts);
        assert_eq!(
            latency_points.iter().map(|p| p.threads).collect::<Vec<_>>(),
            [1, 2],
            "one LATENCY point per thread count"
        );
        let recs = session.run(latency_points[0], &mut || {}).unwrap();
        let probe_of = |r: &ResultRecord| r.params.latency().unwrap().probe.clone();
        let probe = |p: &str| recs.iter().filter(|r| probe_of(r) == p).count();
        assert_eq!(probe("chase"), staircase_sizes(4096, 64 << 10).len());
        // Whether a plateau is found depends on timings (machines are shared and noisy; the
        // detection itself is tested on a recorded staircase): only its records' shape here.
        for level in recs.iter().filter(|r| probe_of(r) == "level") {
            assert!(
                !level
                    .params
                    .latency()
                    .unwrap()
                    .level
                    .as_ref()
                    .unwrap()
                    .level
                    .is_empty()
            );
            assert!(level.summary.mean > 0.0);
        }
        assert_eq!(
            probe("seq-1B") + probe("seq-8B") + probe("random-1B") + probe("random-8B"),
            4
        );
        assert!(recs.iter().all(|r| r.unit == Unit::Seconds));
        // Steps and probes have no floor of their own; a level has its cache's, where known,
        // with efficiency floor ÷ measured.
        for r in &recs {
            match (probe_of(r).as_str(), &r.peak) {
                ("level", Some(p)) => {
                    assert!((r.efficiency.unwrap() - p.value / r.summary.mean).abs() < 1e-9)
                }
                ("level", None) => assert!(r.peak_unknown_reason.is_some()),
                (_, peak) => assert!(peak.is_none()),
            }
        }
        // Cycles from the mean in ns, not from the stored seconds.
        for r in recs.iter().filter(|r| probe_of(r) == "chase") {
            let c = r.params.latency().unwrap().chase.clone().unwrap();
            if let (Some(cycles), Some(ghz)) = (c.latency_cycles, c.clock_ghz) {
                let ns = r.summary.mean * 1e9;
                assert!(
                    (cycles / ghz - ns).abs() <= ns * 1e-9,
                    "{cycles} cycles, {ns} ns"
                );
            }
        }
    }

    /// With two threads every chase and probe point runs two chains at once: each thread's own
    /// latency, the mean of them as the point's figure, and the rate of both together.
    #[test]
    fn latency_on_two_threads_runs_a_chain_on_each() {
        let sys = sys();
        let mut opts = tiny(vec![MemWorkload::Latency]);
        opts.latency_threads = vec![2];
        let session = MemSession::new(&sys, &opts).unwrap();
        let recs = session.run(points(&opts)[0], &mut || {}).unwrap();
        let mut measured = 0;
        for r in &recs {
            let l = r.params.latency().unwrap();
            assert_eq!(l.threads, 2, "{}", l.probe);
            if l.probe == "level" {
                continue;
            }
            measured += 1;
            assert_eq!(l.cpus.len(), 2, "{}", l.probe);
            assert_eq!(l.thread_latency_ns.len(), 2, "{}", l.probe);
            assert!(
                l.thread_latency_ns
                    .iter()
                    .all(|t| *t > 0.0 && t.is_finite())
            );
            // The point's figure is the mean of the threads' (each round's mean, then the mean
            // of rounds: the same sum), in seconds.
            let mean_ns = l.thread_latency_ns.iter().sum::<f64>() / 2.0;
            assert!(
                (r.summary.mean * 1e9 - mean_ns).abs() <= mean_ns * 1e-6,
                "{} {} vs {mean_ns}",
                l.probe,
                r.summary.mean * 1e9
            );
            // Together: the mean over rounds of the sum of the threads' rates, which is at
            // least the sum of the rates of their mean latencies (the mean of inverses is at
            // least the inverse of the mean), whatever the machine's noise.
            let rate = l.ops_per_s.unwrap();
            let floor: f64 = l.thread_latency_ns.iter().map(|ns| 1e9 / ns).sum();
            assert!(
                rate.is_finite() && rate >= floor * (1.0 - 1e-9),
                "{} {rate} {floor}",
                l.probe
            );
        }
        assert_eq!(measured, staircase_sizes(4096, 64 << 10).len() + 4);
    }

    #[test]
    fn bad_options_are_refused() {
        let sys = sys();
        let err = |opts: MemOptions| validate(&opts, &sys).unwrap_err();
        let mut o = tiny(vec![MemWorkload::Rws]);
        o.block_sizes = vec![0];
        assert_eq!(err(o), MemError::BlockRange(0));
        let mut o = tiny(vec![MemWorkload::Rws]);
        o.block_sizes = vec![1001];
        assert_eq!(err(o), MemError::BlockAlign(1001));
        let mut o = tiny(vec![MemWorkload::Rws]);
        o.block_sizes = vec![1 << 20];
        assert!(matches!(err(o), MemError::BlockTooLarge { .. }));
        let mut o = tiny(vec![MemWorkload::Copy]);
        o.array_bytes = Some(1 << 50);
        assert!(matches!(err(o), MemError::TooMuchMemory { .. }));
        let mut o = tiny(vec![MemWorkload::Latency]);
        o.latency_max_bytes = 1 << 50;
        assert!(matches!(err(o), MemError::TooMuchMemory { .. }));
        // Each LATENCY thread has its own ring: a ring that fits once may not fit four times.
        if let Some(&available) = sys.memory.available_bytes.get() {
            let mut o = tiny(vec![MemWorkload::Latency]);
            o.latency_max_bytes = available / 2;
            o.latency_threads = vec![1];
            assert!(validate(&o, &sys).is_ok());
            o.latency_threads = vec![1, 4];
            assert!(matches!(err(o), MemError::TooMuchMemory { .. }));
        }
        // Block sizes only matter to the block workloads.
        let mut o = tiny(vec![MemWorkload::Copy]);
        o.block_sizes = vec![0];
        assert!(validate(&o, &sys).is_ok());
    }
}
