//! The CPU benchmark: arithmetic throughput per data type in GOPS (one FMA = 2 operations).
//!
//! Each workload declares its work model: the kernel for an ISA states how many operations one
//! loop iteration performs (chains × lanes × operations per lane), and the rate is computed here,
//! once, from that and the measured time.

#[macro_use]
mod regs;
#[cfg(target_arch = "x86_64")]
mod amx;
#[cfg(target_arch = "aarch64")]
mod arm;
#[cfg(target_arch = "x86_64")]
mod x86;

pub use crate::sysinfo::peak::OpClass as Op;

use crate::measure::Summary;
use crate::measure::steady::{Feeder, Steady};
use crate::measure::timeline::{self, Marks};
use crate::results::ResultRecord;

use crate::results::params::{CpuKernel, CpuParams, NodeTag, Params};
use crate::results::{Metric, Unit};
use crate::runner::{self, Repetition, affinity};
use crate::sysinfo::clock::{self, ClockDecision, Probe, ProbeReading};
use crate::sysinfo::peak::plausible::Machine;
use crate::sysinfo::peak::{CpuPeakOverrides, cpu_peak};
use crate::sysinfo::{ClockBudget, Isa, SystemInfo};
use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;
use std::time::Duration;

pub use crate::workload::cpu::CpuWorkload;

impl CpuWorkload {
    pub fn op_with_fp16(self, fp16: bool) -> Option<Op> {
        match self {
            CpuWorkload::Hp if fp16 => Some(Op::Fma { element_bits: 16 }),
            _ => self.op(),
        }
    }

    /// The operation the workload performs without fp16 arithmetic; `None` for NULL.
    pub fn op(self) -> Option<Op> {
        Some(match self {
            CpuWorkload::Qp => Op::IntAdd { element_bits: 8 },
            CpuWorkload::Hp => Op::IntAdd { element_bits: 16 },
            CpuWorkload::Sp => Op::Fma { element_bits: 32 },
            CpuWorkload::Dp => Op::Fma { element_bits: 64 },
            CpuWorkload::SpFa => Op::FmaAdd { element_bits: 32 },
            CpuWorkload::DpFa => Op::FmaAdd { element_bits: 64 },
            CpuWorkload::Int8Dot => Op::Dot { element_bits: 8 },
            CpuWorkload::Bf16Dot => Op::Dot { element_bits: 16 },
            CpuWorkload::Int8Mm => Op::Matrix { element_bits: 8 },
            CpuWorkload::Bf16Mm => Op::Matrix { element_bits: 16 },
            CpuWorkload::Int32 => Op::IntAdd { element_bits: 32 },
            CpuWorkload::Int64 => Op::IntAdd { element_bits: 64 },
            CpuWorkload::Null => return None,
        })
    }
}

pub use crate::results::params::Scaling;

/// A compiled kernel and its work model.
#[derive(Debug, Clone, Copy)]
pub struct Kernel {
    /// Runs the given number of loop iterations.
    pub run: fn(u64),
    /// Operations per loop iteration (chains × lanes × operations per lane).
    pub ops_per_iteration: u64,
    /// The instruction timed, for the report.
    pub instruction: &'static str,
}

/// How many adds an FMA+add kernel issues per FMA: as many as the core's add pipes beside its
/// FMA pipes take at the kernel's width (`Uarch::fadd`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AddMix {
    /// None: the adds would take the FMA pipes (or the core is not in the table).
    None,
    /// One add for two FMAs (Golden Cove's adder beside two FMA pipes).
    Half,
    /// One add for each FMA (Zen's two add pipes beside two FMA pipes).
    Equal,
}

impl AddMix {
    /// The mix for `isa`'s width on `uarch`.
    pub fn of(uarch: Option<&crate::sysinfo::uarch::Uarch>, isa: Isa) -> AddMix {
        let Some(u) = uarch else {
            return AddMix::None;
        };
        let width = isa.width_bits();
        let fma = u.fma_at(width);
        match u.fadd_at(width) {
            a if a <= 0.0 || fma <= 0.0 || isa == Isa::Scalar => AddMix::None,
            a if a >= fma => AddMix::Equal,
            _ => AddMix::Half,
        }
    }
}

/// The kernel for `op` in `isa` (FMA+add: with `mix` adds; the FMA kernel where there are
/// none), where this build has one.
pub fn kernel_with(op: Op, isa: Isa, mix: AddMix) -> Option<Kernel> {
    match op {
        Op::FmaAdd { element_bits } => {
            let fma = || kernel(Op::Fma { element_bits }, isa);
            #[cfg(target_arch = "x86_64")]
            {
                if mix != AddMix::None {
                    return x86::fma_add_kernel(element_bits, isa, mix).or_else(fma);
                }
            }
            let _ = mix;
            fma()
        }
        _ => kernel(op, isa),
    }
}

/// The kernel for `op` in `isa`, where this build has one.
pub fn kernel(op: Op, isa: Isa) -> Option<Kernel> {
    #[cfg(target_arch = "x86_64")]
    {
        x86::kernel(op, isa)
    }
    #[cfg(target_arch = "aarch64")]
    {
        arm::kernel(op, isa)
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        let _ = (op, isa);
        None
    }
}

/// What the user asked for.
#[derive(Debug, Clone)]
pub struct CpuOptions {
    pub workloads: Vec<CpuWorkload>,
    pub threads: Vec<usize>,
    pub scaling: Scaling,
    /// Forced ISA; `None` picks the widest the machine supports.
    pub isa: Option<Isa>,
    /// Target time of one repetition (with `sustain`, the longest).
    pub duration: Duration,
    /// `--sustain`: each repetition of a kernel runs until its rate is steady
    /// ([`crate::measure::steady`]), `duration` at most.
    pub sustain: bool,
    /// Fixed work instead (`--total-ops`): the operations of one repetition of one thread's
    /// share, split between the threads (strong scaling) or each thread's (weak).
    pub total_ops: Option<u64>,
    pub reps: Repetition,
    pub clock_ghz: Option<f64>,
    pub ops_per_cycle: BTreeMap<CpuWorkload, f64>,
    pub peak_per_core: BTreeMap<CpuWorkload, f64>,
}

/// Why a CPU run cannot start.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum CpuError {
    #[error("--isa {isa} is not available on this CPU ({arch}); available: {available}")]
    IsaUnavailable {
        isa: Isa,
        arch: String,
        available: String,
    },
    #[error(
        "peakbench has no CPU kernels for {0} yet; run `peakbench sysinfo` for what it can detect"
    )]
    NoKernels(String),
    #[error(
        "{workload} needs {needs}, which this machine does not give with --isa {isa}; run `peakbench sysinfo` for what it has"
    )]
    NoDotKernel {
        workload: CpuWorkload,
        needs: String,
        isa: Isa,
    },
    #[error("could not pin a thread: {0}")]
    Pin(String),
}

/// The ISA a run uses: the forced one if the machine supports it, else the widest.
pub fn choose_isa(sys: &SystemInfo, forced: Option<Isa>) -> Result<Isa, CpuError> {
    let available = || {
        sys.cpu
            .isas
            .iter()
            .map(|i| i.name())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let isa = match forced {
        Some(isa) if !sys.cpu.isas.contains(&isa) => {
            return Err(CpuError::IsaUnavailable {
                isa,
                arch: sys.cpu.arch.clone(),
                available: available(),
            });
        }
        Some(isa) => isa,
        None => sys.cpu.isas[0],
    };
    if kernel(Op::Fma { element_bits: 64 }, isa).is_none() {
        return Err(CpuError::NoKernels(sys.cpu.arch.clone()));
    }
    Ok(isa)
}

/// One point of the sweep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CpuPoint {
    pub workload: CpuWorkload,
    pub threads: usize,
}

/// The sweep: every workload at every thread count.
pub fn points(opts: &CpuOptions) -> Vec<CpuPoint> {
    crate::sweep::product(&opts.workloads, &opts.threads)
        .into_iter()
        .map(|(workload, threads)| CpuPoint { workload, threads })
        .collect()
}

/// The time of one round of a kernel at `threads` threads on `cpus` CPUs, one thread's work
/// taking `d` seconds alone: strong scaling splits it between the threads, weak gives each
/// thread all of it; the threads share the CPUs.
fn kernel_secs(scaling: Scaling, d: f64, threads: usize, cpus: f64) -> f64 {
    let t = threads as f64;
    match scaling {
        Scaling::Weak => d * (t / cpus).max(1.0),
        Scaling::Strong => d / t.min(cpus),
    }
}

/// About how long one round of a kernel's fixed work (`--total-ops`) takes at `threads`
/// threads on `cpus` CPUs, a core's peak being `core_gops`: one thread's share at about 95 %
/// of it; None for a timed one.
fn work_secs(opts: &CpuOptions, threads: usize, cpus: f64, core_gops: f64) -> Option<f64> {
    let d = opts.total_ops? as f64 / (core_gops * 0.95e9).max(1.0);
    Some(kernel_secs(opts.scaling, d, threads, cpus))
}

/// Refuses a fixed amount of work (`--total-ops`) whose one round at some point of `opts`
/// is estimated to outlast [`crate::bench::MAX_WORK_TIME`] (`cpus` and `core_gops` as for
/// [`estimate`]).
pub fn check_work(
    opts: &CpuOptions,
    cpus: usize,
    core_gops: &dyn Fn(CpuWorkload) -> f64,
) -> Result<(), crate::bench::WorkTooLong> {
    let Some(ops) = opts.total_ops else {
        return Ok(());
    };
    let cpus = cpus.max(1) as f64;
    for w in &opts.workloads {
        if w.spec().work == crate::workload::spec::Work::Nothing {
            continue;
        }
        for &threads in &opts.threads {
            if let Some(seconds) = work_secs(opts, threads, cpus, core_gops(*w)) {
                crate::bench::WorkTooLong {
                    option: "--total-ops",
                    amount: format!("{ops}"),
                    scaling: opts.scaling,
                    threads,
                    seconds,
                    rate: "about 95 % of a core's peak",
                    timed: "--duration",
                }
                .check()?;
            }
        }
    }
    Ok(())
}

/// About how long the points of `opts` take on `cpus` CPUs (a plan for `run --dry-run` and
/// `--budget`, not a promise; `core_gops` is a core's peak of a workload, for fixed work):
/// each workload's calibration once (doubling runs up to a
/// twentieth of the duration, then about a tenth in all), and per round the kernel — one
/// thread's duration of work, spread over the CPUs the threads share (strong scaling splits
/// it between them, weak gives each thread all of it) — and the clock probes after it.
pub fn estimate(
    opts: &CpuOptions,
    cpus: usize,
    core_gops: &dyn Fn(CpuWorkload) -> f64,
) -> Duration {
    let cpus = cpus.max(1) as f64;
    let d = opts.duration.as_secs_f64();
    let rounds = (opts.reps.warmup + opts.reps.repeat) as f64;
    let mut s = 0.0;
    for w in &opts.workloads {
        // The cost follows the workload's work model (its spec): the harness alone costs
        // about a millisecond a round.
        if w.spec().work == crate::workload::spec::Work::Nothing {
            s += opts.threads.len() as f64 * rounds * 1e-3;
            continue;
        }
        // Fixed work: no calibration; under --sustain, on 2 s at most.
        if opts.total_ops.is_none() {
            s += if opts.sustain { d.min(2.0) } else { d } / 10.0;
        }
        for &t in &opts.threads {
            let kernel = work_secs(opts, t, cpus, core_gops(*w))
                .unwrap_or_else(|| kernel_secs(opts.scaling, d, t, cpus));
            let t = t as f64;
            // Three probes of four 0.5 ms samples, on each thread (threads share the CPUs).
            let probes = 6e-3 * (t / cpus).max(1.0);
            s += rounds * (kernel + probes + 1e-3);
        }
    }
    crate::units::estimate_secs(s)
}

/// The calls a round's kernel (and each timing of its calibration) is made in at most: between
/// two, a point cut short by a signal ([`crate::runner::stop::cut_short`]) ends its round. A
/// 2 s round makes 20 ms calls; a call costs the kernel's few cycles of filling its chains (and
/// an AMX kernel's tile configuration), nothing beside them.
const SLICES: u64 = 100;
/// The fewest iterations of a call: a round of fewer is one call, as it was before slicing.
const MIN_SLICE: u64 = 1 << 16;

/// Runs `iterations` of `run` in at most [`SLICES`] calls of at least [`MIN_SLICE`]
/// iterations, or in fewer where a signal cuts the point short.
fn run_sliced(run: fn(u64), iterations: u64) {
    let slice = iterations.div_ceil(SLICES).max(MIN_SLICE);
    let mut left = iterations;
    while left > 0 && !crate::runner::stop::cut_short() {
        let n = left.min(slice);
        run(n);
        left -= n;
    }
}

/// A `--sustain` repetition's watch as a thread sees it: the watch, its interval, the
/// operations of an iteration, and the repetition's longest time.
type Watch<'a> = (&'a Steady, Duration, f64, Duration);

/// [`run_sliced`] in `slices` calls at most, marking in `marks` the end of each call and its
/// iterations (the thread's timeline: [`crate::measure::timeline`]); with `steady`
/// (`--sustain`), ending after the call that finds the repetition steady, or that passes its
/// longest time (its iterations were calibrated on one thread: all of them may run slower).
fn run_sliced_marked(
    run: fn(u64),
    iterations: u64,
    marks: &mut Marks,
    steady: Option<Watch>,
    slices: u64,
) {
    let slice = iterations.div_ceil(slices.max(1)).max(MIN_SLICE);
    let mut left = iterations;
    let start = std::time::Instant::now();
    let mut last = start;
    marks.push((last, 0.0));
    let mut feeder = steady.map(|(s, interval, ops, _)| Feeder::new(s, last, interval, ops));
    let longest = steady.map(|w| w.3);
    while left > 0 && !crate::runner::stop::cut_short() {
        let n = left.min(slice);
        run(n);
        left -= n;
        let now = std::time::Instant::now();
        marks.push((now, n as f64));
        if feeder.as_mut().is_some_and(|f| f.call(last, now, n as f64))
            || longest.is_some_and(|d| now - start >= d)
        {
            break;
        }
        last = now;
    }
}

/// Each round of a point is followed, on every thread, by this clock measurement: short samples,
/// so that they finish while the core still runs at the frequency the kernel ran at (a vector
/// frequency licence outlasts its last wide instruction by about 2 ms).
const POINT_CLOCK: ClockBudget = ClockBudget {
    warmup: Duration::ZERO,
    sample: Duration::from_micros(500),
    samples: 4,
};

/// The clock probes of a point: a chain of the kernel's own instruction class at its vector width
/// (the FMA for FMA kernels, the vector add for integer kernels), then imul; scalar kernels use
/// the machine's scalar probes.
pub fn point_probes(sys: &SystemInfo, op: Op, isa: Isa) -> Vec<Probe> {
    let available = clock::available(&sys.cpu.isas);
    let width_bits = isa.width_bits();
    let own = match op {
        _ if isa == Isa::Scalar => None,
        // bf16 dot products run on the FP multipliers, as FMAs do, at their clock.
        Op::Fma { .. } | Op::FmaAdd { .. } | Op::Dot { element_bits: 16 } | Op::Matrix { .. }
            if isa.has_fma() =>
        {
            Some(Probe::Fma { width_bits })
        }
        _ => Some(Probe::VecAdd { width_bits }),
    };
    let mut probes: Vec<Probe> = own.into_iter().filter(|p| available.contains(p)).collect();
    for p in sys.clock_probes() {
        if probes.len() < 2 && !probes.contains(&p) {
            probes.push(p);
        }
    }
    probes.sort_by_key(|p| *p == Probe::Imul);
    probes
}

/// The clock of a point from each thread's decision after each round: per thread, the median of
/// its rounds' agreed clocks; then the mean over threads. Unknown, with the first reason, when a
/// thread never got an agreed clock. The readings are each probe's mean over threads and rounds.
fn point_clock(per_thread: &[Vec<ClockDecision>]) -> ClockDecision {
    let mut clocks = Vec::new();
    for rounds in per_thread {
        let known: Vec<f64> = rounds.iter().filter_map(|d| d.ghz).collect();
        match Summary::of(&known) {
            Some(s) => clocks.push(s.median),
            None => {
                let last = rounds.last();
                return ClockDecision {
                    ghz: None,
                    unknown_reason: Some(
                        last.and_then(|d| d.unknown_reason.clone())
                            .unwrap_or_else(|| "no clock reading was taken".into()),
                    ),
                    readings: last.map(|d| d.readings.clone()).unwrap_or_default(),
                };
            }
        }
    }
    let all: Vec<&ClockDecision> = per_thread.iter().flatten().collect();
    let readings = all.first().map_or_else(Vec::new, |first| {
        (0..first.readings.len())
            .map(|k| {
                let ghz: Vec<f64> = all
                    .iter()
                    .filter_map(|d| d.readings.get(k).map(|r| r.ghz))
                    .collect();
                ProbeReading {
                    ghz: ghz.iter().sum::<f64>() / ghz.len() as f64,
                    ..first.readings[k].clone()
                }
            })
            .collect()
    });
    if clocks.is_empty() {
        return ClockDecision {
            ghz: None,
            unknown_reason: Some("no clock reading was taken".into()),
            readings,
        };
    }
    ClockDecision {
        ghz: Some(clocks.iter().sum::<f64>() / clocks.len() as f64),
        unknown_reason: None,
        readings,
    }
}

/// What a dot-product or matrix workload needs that this machine lacks at `isa`, if anything.
fn missing_extension(op: Op, isa: Isa) -> Option<String> {
    let arm = cfg!(target_arch = "aarch64");
    let needs = match op {
        Op::Dot { .. } | Op::Matrix { .. } if kernel(op, isa).is_some() => return None,
        Op::Dot { element_bits: 8 } if arm => "FEAT_DotProd (NEON sdot) or SVE",
        Op::Dot { .. } if arm => "FEAT_BF16 (NEON or SVE bfdot)",
        Op::Dot { element_bits: 8 } => "AVX512-VNNI (--isa avx512) or AVX-VNNI (--isa avx2)",
        Op::Dot { .. } => "AVX512-BF16 (--isa avx512)",
        Op::Matrix { element_bits: 8 } if arm => "FEAT_I8MM (NEON or SVE smmla)",
        Op::Matrix { .. } if arm => "FEAT_BF16 (NEON or SVE bfmmla)",
        #[cfg(target_arch = "x86_64")]
        Op::Matrix { .. } if isa == Isa::Avx512 => {
            return amx::kernel(op).err();
        }
        Op::Matrix { .. } => "Intel AMX (--isa avx512)",
        _ => return None,
    };
    Some(needs.to_string())
}

/// State kept across the points of one run: the ISA and the calibrations.
pub struct CpuSession<'a> {
    sys: &'a SystemInfo,
    opts: &'a CpuOptions,
    /// The points' repetitions: the options', or as [`CpuSession::set_repeat`] changed them.
    reps: Repetition,
    isa: Isa,
    allowed: Vec<usize>,
    /// Each kernel's calibrated iterations (a point of a run asks, the first calibrates).
    iterations: std::cell::RefCell<HashMap<CpuWorkload, u64>>,
}

impl<'a> CpuSession<'a> {
    pub fn new(sys: &'a SystemInfo, opts: &'a CpuOptions) -> Result<Self, CpuError> {
        let isa = choose_isa(sys, opts.isa)?;
        // Dot products and matrix multiplies are extensions of their own (VNNI, BF16, AMX,
        // I8MM): refused here, before any point runs, where the machine has none at this width.
        for &w in &opts.workloads {
            if let Some(op) = w.op()
                && let Some(needs) = missing_extension(op, isa)
            {
                return Err(CpuError::NoDotKernel {
                    workload: w,
                    needs,
                    isa,
                });
            }
        }
        Ok(CpuSession {
            sys,
            opts,
            reps: opts.reps,
            isa,
            allowed: affinity::allowed_cpus(),
            iterations: Default::default(),
        })
    }

    pub fn isa(&self) -> Isa {
        self.isa
    }

    /// The timed repetitions of the points measured from now on.
    pub fn repeat(&self) -> usize {
        self.reps.repeat
    }

    /// Sets the timed repetitions of the points measured from now on (`--precision`).
    pub fn set_repeat(&mut self, repeat: usize) {
        self.reps.repeat = repeat;
    }

    /// Whether the chosen ISA has native fp16 arithmetic with a kernel here (AVX512-FP16; Arm
    /// FEAT_FP16 for NEON; SVE always): then HP measures fp16 FMAs.
    pub fn native_fp16(&self) -> bool {
        kernel(Op::Fma { element_bits: 16 }, self.isa).is_some()
    }

    /// The parameters of `point` before it runs: its CPUs and, for a kernel, what the kernel
    /// is (its ISA, instruction, operation and work per iteration). A run completes them with
    /// its iterations, the threads' rates and the clock; the dry run plans them as they are.
    pub fn point_params(&self, point: CpuPoint) -> CpuParams {
        let placement = affinity::place(point.threads, &self.allowed, &self.sys.cpu.logical);
        let kernel = point
            .workload
            .op_with_fp16(self.native_fp16())
            .and_then(|op| {
                let mix = AddMix::of(self.sys.uarch(), self.isa);
                let kernel = kernel_with(op, self.isa, mix)?;
                Some(CpuKernel {
                    scaling: self.opts.scaling,
                    isa: self.isa,
                    instruction: kernel.instruction.into(),
                    operation: operation_with(op, mix),
                    ops_per_iteration: kernel.ops_per_iteration,
                    iterations_per_thread: 0,
                    total_ops: self.opts.total_ops,
                    thread_gops: Vec::new(),
                    clock_ghz: None,
                    clock_probes: Vec::new(),
                    clock_unknown_reason: None,
                })
            });
        CpuParams {
            threads: point.threads,
            cpu_quota: None,
            cpus: placement.cpus,
            cores: placement.cores,
            oversubscribed: placement.oversubscribed,
            kernel,
            linalg: None,
            node: NodeTag::default(),
        }
    }

    /// `point`'s record before it runs ([`ResultRecord::planned`]) with
    /// [`point_params`](Self::point_params): what the reference tools are asked before it runs.
    pub fn planned(&self, point: CpuPoint) -> ResultRecord {
        let params = self.point_params(point);
        let metric = match params.kernel {
            None => Metric::Latency,
            Some(_) => Metric::Throughput,
        };
        ResultRecord::planned(
            point.workload,
            Params::Cpu(params),
            metric,
            self.reps.repeat,
        )
    }

    /// The iterations of one thread's repetition of `workload`'s `kernel` (before strong
    /// scaling splits them): the fixed work's, else calibrated once a workload on `cpu` to
    /// --duration (with --sustain, its longest time from 2 s at most: a calibration costs a
    /// tenth of its target).
    fn iterations(&self, workload: CpuWorkload, kernel: &Kernel, cpu: usize) -> u64 {
        if let Some(ops) = self.opts.total_ops {
            // Fixed work: the kernel's work model gives the iterations.
            return ops.div_ceil(kernel.ops_per_iteration.max(1)).max(1);
        }
        let duration = self.opts.duration;
        let target = match self.opts.sustain {
            true => duration.min(Duration::from_secs(2)),
            false => duration,
        };
        *self
            .iterations
            .borrow_mut()
            .entry(workload)
            .or_insert_with(|| {
                // Unpinned if pinning fails: the rounds that follow report that error.
                let n = runner::on_cpu(cpu, || {
                    runner::calibrate(target, |n| run_sliced(kernel.run, n))
                })
                .unwrap_or_else(|_| runner::calibrate(target, |n| run_sliced(kernel.run, n)));
                let longer = duration.as_secs_f64() / target.as_secs_f64().max(1e-9);
                (n as f64 * longer).ceil().min(u64::MAX as f64).max(1.0) as u64
            })
    }

    /// Runs one point; `tick` is called after each round (outside the timed region).
    pub fn run(&self, point: CpuPoint, tick: &mut dyn FnMut()) -> Result<ResultRecord, CpuError> {
        let mut params = self.point_params(point);
        // The point's CPUs as its parameters place it.
        let (cpus, cores) = (params.cpus.clone(), params.cores);
        let reps = self.reps;
        let Some(op) = point.workload.op_with_fp16(self.native_fp16()) else {
            // NULL: the harness alone, an empty timed region per thread.
            let times = runner::run_rounds(&cpus, reps, |_| {}, |_| {}, |_| tick())
                .map_err(|e| CpuError::Pin(e.to_string()))?;
            let samples: Vec<f64> = times.iter().map(|t| t.as_secs_f64() * 1e9).collect();
            return Ok(record(
                point.workload,
                params,
                Metric::Latency,
                Unit::Nanos,
                samples,
                Err("the NULL workload measures harness overhead and has no peak".into()),
            ));
        };
        let mix = AddMix::of(self.sys.uarch(), self.isa);
        let kernel = kernel_with(op, self.isa, mix)
            .ok_or_else(|| CpuError::NoKernels(self.sys.cpu.arch.clone()))?;
        let duration = self.opts.duration;
        let single = self.iterations(point.workload, &kernel, cpus[0]);
        let per_thread = match self.opts.scaling {
            Scaling::Weak => single,
            Scaling::Strong => (single / point.threads as u64).max(1),
        };
        let run = kernel.run;
        // The clock of each thread's core, measured right after every round of the kernel with
        // the kernel's own instruction class: the same cores, the same load, the same moment.
        let probes = point_probes(self.sys, op, self.isa);
        let decisions: Mutex<Vec<Vec<ClockDecision>>> = Mutex::new(vec![Vec::new(); point.threads]);
        // Each thread's calls of each round (its own lock: none waits on another's).
        let marks: Vec<Mutex<Vec<Marks>>> = (0..point.threads).map(|_| Mutex::default()).collect();
        let interval = match self.opts.total_ops {
            Some(_) => Duration::from_millis(100),
            None => timeline::interval_of(duration),
        };
        // --sustain: the watch the threads of a round share, and when each timed round was
        // steady.
        let steady = self
            .opts
            .sustain
            .then(|| Steady::over(duration, interval, point.threads));
        let mut steady_s: Vec<Option<f64>> = Vec::new();
        let slices = match &steady {
            Some(_) => crate::measure::steady::calls(duration, interval, SLICES),
            None => SLICES,
        };
        let ops = kernel.ops_per_iteration as f64;
        let rounds = runner::run_rounds_per_thread(
            &cpus,
            reps,
            |i| {
                let mut m = Marks::with_capacity(slices.min(1024) as usize + 2);
                let watch = steady.as_ref().map(|s| (s, interval, ops, duration));
                run_sliced_marked(run, per_thread, &mut m, watch, slices);
                marks[i].lock().expect("marks").push(m);
            },
            |i| {
                let d = self.sys.measure_clock(&probes, POINT_CLOCK);
                decisions.lock().expect("clock decisions")[i].push(d);
            },
            |round| {
                if let Some(s) = &steady {
                    s.round_ended(round >= reps.warmup, interval.as_secs_f64(), &mut steady_s);
                }
                tick()
            },
        )
        .map_err(|e| CpuError::Pin(e.to_string()))?;
        let marks: Vec<Vec<Marks>> = marks
            .into_iter()
            .map(|m| m.into_inner().expect("marks"))
            .collect();
        // A round that ended once steady did fewer iterations than asked: its times are
        // scaled to those asked (its rates as they were).
        let rounds = match self.opts.sustain {
            true => crate::bench::timeline::scaled_to(rounds, &marks, reps, per_thread as f64),
            false => rounds,
        };
        let clock = point_clock(&decisions.into_inner().expect("clock decisions"));
        let thread_ops = kernel.ops_per_iteration as f64 * per_thread as f64;
        let total_ops = thread_ops * point.threads as f64;
        // Each thread's own rate, mean over the timed rounds: a slow core or a thread that
        // started late shows here, while the point's rate counts the whole span.
        let thread_gops: Vec<f64> = rounds
            .threads
            .iter()
            .map(|t| {
                t.iter()
                    .map(|d| thread_ops / d.as_secs_f64() / 1e9)
                    .sum::<f64>()
                    / t.len().max(1) as f64
            })
            .collect();
        let samples: Vec<f64> = rounds
            .wall
            .iter()
            .map(|t| total_ops / t.as_secs_f64() / 1e9)
            .collect();
        if let Some(k) = &mut params.kernel {
            k.iterations_per_thread = per_thread;
            k.thread_gops = thread_gops;
            k.clock_ghz = clock.ghz;
            k.clock_probes = clock.readings.clone();
            k.clock_unknown_reason = clock.unknown_reason.clone();
        }
        let user = CpuPeakOverrides {
            clock_ghz: self.opts.clock_ghz,
            ops_per_cycle: self.opts.ops_per_cycle.get(&point.workload).copied(),
            gops_per_core: self.opts.peak_per_core.get(&point.workload).copied(),
        };
        let peak = cpu_peak(
            op,
            cores,
            clock
                .ghz
                .ok_or_else(|| clock.unknown_reason.clone().unwrap_or_default()),
            self.sys.uarch(),
            &self.sys.cpu.isas,
            &user,
        );
        let mut rec = record(
            point.workload,
            params,
            Metric::Throughput,
            Unit::Gops,
            samples,
            peak,
        );
        crate::bench::timeline::timed(&mut rec, &marks, reps, interval, ops);
        rec.sustain = steady.map(|_| crate::results::phases::Sustain {
            max_s: duration.as_secs_f64(),
            steady_s,
        });
        rec.check_inputs(&Machine::of(self.sys), Some(op));
        Ok(rec)
    }
}

/// What a point's instructions compute with the mix of FMAs to adds its kernel issued
/// ("fp64 FMA+add 2:1").
fn operation_with(op: Op, mix: AddMix) -> String {
    match op {
        Op::FmaAdd { .. } => format!(
            "{} {}",
            operation(op),
            match mix {
                AddMix::None => "1:0",
                AddMix::Half => "2:1",
                AddMix::Equal => "1:1",
            }
        ),
        _ => operation(op),
    }
}

/// What a point's instructions compute, for the record and the report ("fp16 FMA").
pub fn operation(op: Op) -> String {
    match op {
        Op::Fma { element_bits } => format!("fp{element_bits} FMA"),
        Op::FmaAdd { element_bits } => format!("fp{element_bits} FMA+add"),
        Op::IntAdd { element_bits } => format!("int{element_bits} add"),
        Op::Dot { element_bits: 8 } => "int8 dot product".into(),
        Op::Dot { element_bits } => format!("bf{element_bits} dot product"),
        Op::Matrix { element_bits: 8 } => "int8 matrix multiply".into(),
        Op::Matrix { element_bits } => format!("bf{element_bits} matrix multiply"),
    }
}

fn record(
    workload: CpuWorkload,
    params: CpuParams,
    metric: Metric,
    unit: Unit,
    samples: Vec<f64>,
    peak: Result<crate::sysinfo::peak::Peak, String>,
) -> ResultRecord {
    ResultRecord::new(workload, Params::Cpu(params), metric, unit, samples, peak)
}

#[cfg(test)]
mod tests;
