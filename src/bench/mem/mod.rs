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
use crate::results::ResultRecord;
use crate::results::params::{self as rp, Params};
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
    pub duration: Duration,
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
    #[error("--isa {isa} is not available on this CPU; available: {available}")]
    IsaUnavailable { isa: Isa, available: String },
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

/// Every workload × block size (where it uses blocks) × thread count; LATENCY runs once.
pub fn points(opts: &MemOptions) -> Vec<MemPoint> {
    let mut out = Vec::new();
    for &workload in &opts.workloads {
        if workload == MemWorkload::Latency {
            out.push(MemPoint {
                workload,
                threads: 1,
                block: None,
            });
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

/// Bytes of each array (all threads together): the user's, or 4 × the last-level cache and at
/// least 64 MiB, so that the arrays live in DRAM.
pub fn array_bytes(opts: &MemOptions, sys: &SystemInfo) -> u64 {
    opts.array_bytes
        .unwrap_or_else(|| (4 * sys.llc_bytes().unwrap_or(0)).max(MIN_ARRAY))
}

/// Checks the options against the machine before anything runs.
pub fn validate(opts: &MemOptions, sys: &SystemInfo) -> Result<(), MemError> {
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
        // The chase ring plus its permutation (4 bytes per 64-byte line) while it is built.
        let chase = opts.latency_max_bytes + opts.latency_max_bytes / 16;
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
        let isa = opts.isa.unwrap_or(sys.cpu.isas[0]);
        let (regular, _) = kernels::kernels(isa, false);
        let streaming = match kernels::kernels(isa, true) {
            (k, true) => Some(k),
            _ => None,
        };
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
            MemWorkload::Latency => self.latency(tick),
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
                    "latency",
                    "ns",
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
        let slots: Mutex<Vec<Option<std::io::Result<Arrays>>>> =
            Mutex::new((0..cpus.len()).map(|_| None).collect());
        runner::run_rounds(
            cpus,
            once,
            |i| {
                let arrays: std::io::Result<Arrays> = (0..w.arrays().max(1))
                    .map(|k| {
                        let b = Buffer::new(per_thread as usize, HugePages::On)?;
                        // SAFETY: the buffer holds `elems` f64.
                        unsafe { (self.regular.fill)(ptr(&b), 1.0 + k as f64, elems) };
                        Ok(b)
                    })
                    .collect();
                slots.lock().expect("array slots")[i] = Some(arrays);
            },
            |_| {},
            |_| {},
        )
        .map_err(|e| MemError::Pin(e.to_string()))?;
        let arrays: Vec<Arrays> = slots
            .into_inner()
            .expect("array slots")
            .into_iter()
            .map(|a| a.expect("every thread allocated"))
            .collect::<std::io::Result<_>>()
            .map_err(|e| MemError::Alloc {
                bytes: w.arrays() * array,
                reason: e.to_string(),
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
        // Calibrate: one timed pass, then as many passes as fill the target duration.
        let first = runner::run_rounds(cpus, once, |i| pass(i, 0), |_| {}, |_| {})
            .map_err(|e| MemError::Pin(e.to_string()))?;
        let passes = (self.opts.duration.as_secs_f64() / first[0].as_secs_f64().max(1e-9))
            .ceil()
            .max(1.0) as u64;
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
                byte_counting: "STREAM: bytes read + bytes written, no write-allocate".into(),
            }),
            node: rp::NodeTag::default(),
        });
        Ok(record(
            w,
            params,
            "throughput",
            "GB/s",
            samples,
            self.peak.clone(),
        ))
    }

    /// The staircase for each page mode, the levels found on it, and the per-operation probes.
    fn latency(&self, tick: &mut dyn FnMut()) -> Result<Vec<ResultRecord>, MemError> {
        let cpu = affinity::place(1, &self.allowed, &self.sys.cpu.logical).cpus;
        let reps = self.opts.reps;
        // Each sample chases for about this long.
        let sample = self.opts.duration.min(Duration::from_millis(25));
        let budget = crate::sysinfo::ClockBudget::default();
        let clock = runner::on_cpu(cpu[0], || {
            self.sys.measure_clock(&self.sys.clock_probes(), budget).ghz
        })
        .map_err(|e| MemError::Pin(e.to_string()))?;
        let mut out = Vec::new();
        for &huge in &self.opts.huge_pages {
            let mut stair = Vec::new();
            for size in staircase_sizes(4096, self.opts.latency_max_bytes) {
                let ring = runner::on_cpu(cpu[0], || Chase::new(size as usize, huge, size))
                    .map_err(|e| MemError::Pin(e.to_string()))?
                    .map_err(|e| MemError::Alloc {
                        bytes: size,
                        reason: e.to_string(),
                    })?;
                let loads = runner::calibrate(sample, |n| {
                    std::hint::black_box(ring.run(n));
                });
                let times = runner::run_rounds(
                    &cpu,
                    reps,
                    |_| {
                        std::hint::black_box(ring.run(loads));
                    },
                    |_| {},
                    |_| tick(),
                )
                .map_err(|e| MemError::Pin(e.to_string()))?;
                let loads = loads.div_ceil(16) * 16;
                let samples: Vec<f64> = times
                    .iter()
                    .map(|t| t.as_secs_f64() * 1e9 / loads as f64)
                    .collect();
                // In ns, as measured (the record stores seconds).
                let ns = crate::measure::Summary::of(&samples);
                let chase = rp::Chase {
                    working_set_bytes: size,
                    pages: huge.name().into(),
                    huge_page_bytes: ring.huge_page_bytes(),
                    loads,
                    clock_ghz: clock,
                    latency_cycles: clock.zip(ns.as_ref()).map(|(c, ns)| ns.mean * c),
                };
                stair.push((size, ns.map_or(f64::NAN, |s| s.median)));
                let rec = latency_record(latency_params("chase", Some(chase), None, None), samples);
                out.push(rec);
            }
            out.extend(self.levels(&stair, huge, clock));
        }
        out.extend(self.probes(&cpu, sample, tick)?);
        Ok(out)
    }

    /// One record per level found on a staircase, next to sysfs's size for that level. The
    /// first plateaus are named after the data-cache levels sysfs lists (L1, L2, L3); the next
    /// is "memory", and any later one "memory-2"…: a rise past the caches comes from page walks
    /// (TLB reach), not from another cache.
    fn levels(
        &self,
        stair: &[(u64, f64)],
        huge: HugePages,
        clock: Option<f64>,
    ) -> Vec<ResultRecord> {
        let levels = detect_levels(stair);
        let caches: Vec<&crate::sysinfo::Cache> = self
            .sys
            .caches
            .iter()
            .filter(|c| c.kind != "Instruction")
            .collect();
        let known = caches.iter().map(|c| c.level).max().unwrap_or(0) as usize;
        let cache_levels = if known > 0 && levels.len() > known {
            known
        } else {
            levels.len().saturating_sub(1)
        };
        levels
            .iter()
            .enumerate()
            .map(|(n, l)| {
                let name = match n {
                    n if n < cache_levels => format!("L{}", n + 1),
                    n if n == cache_levels => "memory".to_string(),
                    n => format!("memory-{}", n - cache_levels + 1),
                };
                let level = rp::Level {
                    level: name,
                    pages: huge.name().into(),
                    plateau_from_bytes: l.from_bytes,
                    plateau_to_bytes: l.to_bytes,
                    capacity_bytes: (n < cache_levels).then_some(l.capacity_bytes),
                    sysfs_size_bytes: (n < cache_levels).then(|| {
                        caches
                            .iter()
                            .find(|c| c.level as usize == n + 1)
                            .map(|c| c.size_bytes)
                    }),
                    latency_cycles: clock.map(|c| l.latency_ns * c),
                };
                latency_record(
                    latency_params("level", None, Some(level), None),
                    vec![l.latency_ns],
                )
            })
            .collect()
    }

    /// Time per operation of independent 1- and 8-byte loads, sequential and random, over a
    /// DRAM-sized span (the largest power of two within one array).
    fn probes(
        &self,
        cpu: &[usize],
        sample: Duration,
        tick: &mut dyn FnMut(),
    ) -> Result<Vec<ResultRecord>, MemError> {
        let span = 1usize << (63 - array_bytes(self.opts, self.sys).leading_zeros());
        let buf = runner::on_cpu(cpu[0], || Buffer::new(span, HugePages::On))
            .map_err(|e| MemError::Pin(e.to_string()))?
            .map_err(|e| MemError::Alloc {
                bytes: span as u64,
                reason: e.to_string(),
            })?;
        let mut out = Vec::new();
        for probe in Probe::ALL {
            let ops = runner::calibrate(sample, |n| {
                std::hint::black_box(probe.run(&buf, span, n));
            });
            let times = runner::run_rounds(
                cpu,
                self.opts.reps,
                |_| {
                    std::hint::black_box(probe.run(&buf, span, ops));
                },
                |_| {},
                |_| tick(),
            )
            .map_err(|e| MemError::Pin(e.to_string()))?;
            let samples = times
                .iter()
                .map(|t| t.as_secs_f64() * 1e9 / ops as f64)
                .collect();
            let op = rp::OpProbe {
                op_bytes: probe.op_bytes as u64,
                order: if probe.random { "random" } else { "sequential" }.into(),
                working_set_bytes: span as u64,
                ops,
            };
            out.push(latency_record(
                latency_params(&probe.name(), None, None, Some(op)),
                samples,
            ));
        }
        Ok(out)
    }
}

/// The parameters of a one-thread latency point.
fn latency_params(
    probe: &str,
    chase: Option<rp::Chase>,
    level: Option<rp::Level>,
    op: Option<rp::OpProbe>,
) -> Params {
    Params::MemLatency(rp::LatencyParams {
        threads: 1,
        probe: probe.into(),
        chase,
        level,
        op,
        node: rp::NodeTag::default(),
    })
}

/// A latency point (ns): latency has no theoretical peak.
fn latency_record(params: Params, samples: Vec<f64>) -> ResultRecord {
    record(
        MemWorkload::Latency,
        params,
        "latency",
        "ns",
        samples,
        Err("latency has no theoretical peak".into()),
    )
}

fn record(
    workload: MemWorkload,
    params: Params,
    metric: &str,
    unit: &str,
    samples: Vec<f64>,
    peak: Result<Peak, String>,
) -> ResultRecord {
    ResultRecord::new("mem", workload.name(), params, metric, unit, samples, peak)
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
                if r.unit == "B/s" {
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
        let recs = session.run(points(&opts)[0], &mut || {}).unwrap();
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
        assert!(recs.iter().all(|r| r.unit == "s" && r.peak.is_none()));
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
        // Block sizes only matter to the block workloads.
        let mut o = tiny(vec![MemWorkload::Copy]);
        o.block_sizes = vec![0];
        assert!(validate(&o, &sys).is_ok());
    }
}
