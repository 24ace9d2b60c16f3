//! `peakbench cpu`.

use super::common::{
    Counts, OutputArgs, RunArgs, UsageError, bounds, parse_assignment, parse_thread_counts,
    workload_help,
};
use crate::app::cpu::{CpuRequest, CpuWorkload, LinalgWorkload, Scaling, linalg_kernels};
use crate::app::setting::Setting;
use crate::app::workloads::Workload;
use crate::app::{Recorder, Request};
use crate::results::Subsystem;
use crate::runner::Repetition;
use crate::sysinfo::Isa;
use clap::{Args, ValueEnum};
use std::path::PathBuf;

#[derive(Debug, Clone, Args)]
pub struct CpuArgs {
    #[arg(long, value_delimiter = ',', value_parser = parse_workload, help = workload_help(Subsystem::Cpu, true))]
    pub workload: Vec<CpuChoice>,
    /// LINPACK, DGEMM, SGEMM: the order N of the matrices; a list sweeps. Default: from
    /// --memory-fraction, at most 8000.
    #[arg(long, value_delimiter = ',', value_parser = parse_n, conflicts_with = "memory_fraction")]
    pub n: Vec<usize>,
    /// LINPACK, DGEMM, SGEMM: N from this share of the available memory (HPL's usual way, e.g. 0.8).
    #[arg(long, value_name = "FRACTION", value_parser = parse_fraction)]
    pub memory_fraction: Option<f64>,
    /// LINPACK with the built-in engine: the factorisation's block (HPL's NB). Default: 128, or
    /// for N under 1536 the largest power of two up to N/12 (at least 32).
    #[arg(long, value_parser = parse_nb)]
    pub nb: Option<usize>,
    /// LINPACK, DGEMM, SGEMM: the engine: built-in (peakbench's own, the default) or system (an
    /// installed BLAS/LAPACK loaded at run time: OpenBLAS, BLIS, MKL, or Debian's
    /// libblas/liblapack; --nb does not apply).
    #[arg(long, value_enum, value_name = "ENGINE")]
    pub blas: Option<BlasEngine>,
    /// With --blas system: this library (a path, or a name the dynamic loader searches) instead
    /// of the search for OpenBLAS, BLIS, MKL and liblapack.so.3.
    #[arg(long, value_name = "PATH")]
    pub blas_library: Option<PathBuf>,
    /// Thread counts to sweep, e.g. 1,2,4. Default: 1, 2, 4 … up to the hardware threads.
    #[arg(short = 't', long, value_parser = parse_thread_counts)]
    pub threads: Option<Counts>,
    /// Strong (fixed total work) or weak (fixed work per thread) scaling.
    #[arg(long, value_enum, default_value = "weak")]
    pub scaling: Scaling,
    /// Fixed work instead of --duration: the operations of each repetition of the kernels
    /// QP … INT64 (decimal K, M, G, T: 100G = 10¹¹), split between the threads with --scaling
    /// strong, each thread's with weak; at most 10¹⁸, and at most about a day a repetition.
    #[arg(long, value_name = "OPS", value_parser = parse_ops, conflicts_with = "duration")]
    pub total_ops: Option<u64>,
    /// Instead of --duration: each repetition of the kernels QP … INT64 runs until its rate is
    /// steady, this long at most (fio's steadystate: over the last 5 intervals of a twentieth of
    /// it, every interval within 10 % of their mean and their trend under 5 %; docs/cpu.md).
    #[arg(long, value_name = "DURATION", value_parser = super::common::parse_sustain, conflicts_with_all = ["duration", "total_ops"])]
    pub sustain: Option<std::time::Duration>,
    /// Force an instruction set: avx512, avx2, sse2 (x86), sve, neon (aarch64) or scalar. Default: the widest.
    #[arg(long, value_parser = parse_isa)]
    pub isa: Option<Isa>,
    /// Core clock in GHz for the peak, instead of the measured one (0.01 to 20).
    #[arg(long, value_name = "GHZ", value_parser = bounds::CLOCK_GHZ.parser())]
    pub clock_ghz: Option<f64>,
    /// Operations per cycle per core for the peak, e.g. DP=16,SP=32 (overrides the table; each
    /// 0.001 to 100000).
    #[arg(long, value_name = "WORKLOAD=N", value_delimiter = ',', value_parser = parse_ops_per_cycle)]
    pub ops_per_cycle: Vec<(CpuWorkload, f64)>,
    /// Theoretical peak in GOPS per core, e.g. DP=57.6 (overrides clock and table; each 0.001
    /// to 1000000).
    #[arg(long, value_name = "WORKLOAD=GOPS", value_delimiter = ',', value_parser = parse_peak)]
    pub peak: Vec<(CpuWorkload, f64)>,
    /// Measure each point below 90 % of its peak once more with the knob of its first cause
    /// changed (the widest instruction set for `isa`, a larger N for `problem-size`), to
    /// confirm or drop that cause (docs/diagnosis.md).
    #[arg(long)]
    pub diagnose: bool,
    #[command(flatten)]
    pub run: RunArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// The defaults the command line gives (a test of `cli` holds them equal to a parse of the
/// bare subcommand): a job made in code ([`Setting`]) starts from them.
impl Default for CpuArgs {
    fn default() -> CpuArgs {
        CpuArgs {
            workload: Vec::new(),
            n: Vec::new(),
            memory_fraction: None,
            nb: None,
            blas: None,
            blas_library: None,
            threads: None,
            scaling: Scaling::Weak,
            total_ops: None,
            sustain: None,
            isa: None,
            clock_ghz: None,
            ops_per_cycle: Vec::new(),
            peak: Vec::new(),
            diagnose: false,
            run: RunArgs::default(),
            output: OutputArgs::default(),
        }
    }
}

/// The engine of LINPACK and DGEMM.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum BlasEngine {
    /// peakbench's own multiply and factorisation.
    BuiltIn,
    /// An installed BLAS/LAPACK, loaded at run time.
    System,
}

/// A workload of `peakbench cpu`: a synthetic kernel or a linear-algebra one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CpuChoice {
    Kernel(CpuWorkload),
    Linalg(LinalgWorkload),
}

fn parse_workload(s: &str) -> Result<CpuChoice, String> {
    match s.parse::<LinalgWorkload>() {
        Ok(w) => Ok(CpuChoice::Linalg(w)),
        Err(_) => s
            .parse::<CpuWorkload>()
            .map(CpuChoice::Kernel)
            .map_err(|e| format!("{e}, LINPACK, DGEMM or SGEMM")),
    }
}

/// The largest N accepted: 2^20 (8 TiB of matrix), far beyond any machine's memory.
const MAX_N: u64 = 1 << 20;

fn parse_n(s: &str) -> Result<usize, String> {
    super::common::count_in(s, 1, MAX_N)
}

/// `--total-ops`: 1 to [`super::common::MAX_TOTAL_OPS`].
fn parse_ops(s: &str) -> Result<u64, String> {
    use super::common::MAX_TOTAL_OPS;
    let range =
        || format!("'{s}' is out of range: at most {MAX_TOTAL_OPS} (10¹⁸) operations a repetition");
    match crate::units::parse_si_count(s) {
        Ok(0) => Err(format!("'{s}' is not a number of operations above 0")),
        Ok(n) if n <= MAX_TOTAL_OPS => Ok(n),
        Ok(_) | Err(crate::units::ParseError::Range(..)) => Err(range()),
        Err(e) => Err(e.to_string().replace("size", "count")),
    }
}

fn parse_nb(s: &str) -> Result<usize, String> {
    super::common::count_in(s, 1, 4096)
}

fn parse_fraction(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(f) if f > 0.0 && f <= 0.95 => Ok(f),
        _ => Err(format!(
            "'{s}' is not a share of memory: give a number above 0 and at most 0.95"
        )),
    }
}

fn parse_isa(s: &str) -> Result<Isa, String> {
    s.parse()
}

fn parse_ops_per_cycle(s: &str) -> Result<(CpuWorkload, f64), String> {
    parse_assignment(s, &bounds::OPS_PER_CYCLE)
}

fn parse_peak(s: &str) -> Result<(CpuWorkload, f64), String> {
    parse_assignment(s, &bounds::CPU_PEAK_GOPS)
}

/// The shortest a kernel point's repetition is made by `run --budget` (see
/// [`super::fit::POINT_FLOOR`]).
const MIN_DURATION: std::time::Duration = super::fit::POINT_FLOOR;

pub fn run(args: CpuArgs, argv: Vec<String>) -> anyhow::Result<()> {
    args.output.validate()?;
    let mut rec = Recorder::new(argv, args.output.outputs());
    let outcome = job(&args).and_then(|job| job.run(&mut rec));
    rec.finish(outcome)
}

/// The synthetic kernels and the linear-algebra workloads of `args` (the kernels QP … INT64
/// when it names none).
fn split(args: &CpuArgs) -> (Vec<CpuWorkload>, Vec<LinalgWorkload>) {
    let mut kernels = Vec::new();
    let mut linalg = Vec::new();
    for c in &args.workload {
        match c {
            CpuChoice::Kernel(w) => kernels.push(*w),
            CpuChoice::Linalg(w) => linalg.push(*w),
        }
    }
    if args.workload.is_empty() {
        kernels = CpuWorkload::defaults();
    }
    (kernels, linalg)
}

/// The checks that need no machine: options that do not apply, or that contradict others.
fn refuse(
    args: &CpuArgs,
    kernels: &[CpuWorkload],
    linalg: &[LinalgWorkload],
) -> Result<(), UsageError> {
    // The options that only some workloads use, by the options' table.
    let chosen: Vec<Workload> = kernels
        .iter()
        .map(|w| Workload::from(*w))
        .chain(linalg.iter().map(|w| Workload::from(*w)))
        .collect();
    args.output
        .given
        .refuse_unused_by(Subsystem::Cpu, &chosen)?;
    if args.nb.is_some() && args.blas == Some(BlasEngine::System) {
        return Err(UsageError(
            "--nb sets the built-in factorisation's block; a system LAPACK chooses its own: drop --nb or use --blas built-in".into(),
        ));
    }
    if args.blas_library.is_some() && args.blas != Some(BlasEngine::System) {
        return Err(UsageError(
            "--blas-library names the library of the system engine: add --blas system".into(),
        ));
    }
    refuse_unused(args, kernels, linalg)
}

/// The request of `args`: the workloads and options, every option that needs no machine
/// checked (an option accepted is used or refused, never ignored).
pub(super) fn request(args: &CpuArgs) -> Result<CpuRequest, UsageError> {
    let (kernels, linalg) = split(args);
    refuse(args, &kernels, &linalg)?;
    Ok(CpuRequest {
        kernels,
        linalg,
        threads: args.threads.as_ref().map(|t| t.to_vec()),
        scaling: args.scaling,
        isa: args.isa,
        duration: args.sustain.unwrap_or(args.run.duration),
        sustain: args.sustain.is_some(),
        total_ops: args.total_ops,
        reps: Repetition {
            warmup: args.run.warmup,
            repeat: args.run.repeat,
        },
        clock_ghz: args.clock_ghz,
        ops_per_cycle: args.ops_per_cycle.clone(),
        peak: args.peak.clone(),
        n: args.n.clone(),
        memory_fraction: args.memory_fraction,
        nb: args.nb,
        system_blas: args.blas == Some(BlasEngine::System),
        blas_library: args.blas_library.clone(),
        diagnose: args.diagnose,
        precision: args.run.precision.precision(args.run.repeat)?,
    })
}

/// The options of a suite's job that `fit` changes, at their fitted values: its kernels'
/// --duration (or --total-ops, no less than a thread's [`super::fit::POINT_FLOOR`] of work
/// at a core's peak on `sys`: a point still runs long enough to be timed) and --repeat.
pub fn fitted(
    args: &CpuArgs,
    fit: &super::fit::Fit,
    sys: &crate::sysinfo::SystemInfo,
) -> Vec<crate::app::setting::Setting> {
    let (kernels, _) = split(args);
    let timed = kernels.iter().any(|w| Workload::from(*w).uses("scaling"));
    let amount = match args.total_ops {
        Some(_) => {
            let floor =
                request(args).map_or(u64::MAX, |r| r.floor_ops(sys, super::fit::POINT_FLOOR));
            fit.work_option("total-ops", args.total_ops, floor)
        }
        None if timed => match args.sustain {
            Some(s) => fit.time_option("sustain", s, super::common::MIN_SUSTAIN),
            None => fit.time_option("duration", args.run.duration, MIN_DURATION),
        },
        None => None,
    };
    amount
        .into_iter()
        .chain(fit.repeat_options(args.run.repeat, &args.run.precision))
        .collect()
}

/// Sets each of `settings` on `args` (a budget's fit, from [`fitted`], or a job made in code:
/// [`Setting`]), each counted as given; an option this command does not take is an internal
/// error.
pub fn apply(args: &mut CpuArgs, settings: &[Setting]) -> Result<(), String> {
    for f in settings {
        match f {
            Setting::Time("duration", d) => args.run.duration = *d,
            Setting::Time("sustain", d) => args.sustain = Some(*d),
            Setting::Work("total-ops", n) => args.total_ops = Some(*n),
            Setting::Repeat(r) => args.run.repeat = *r,
            Setting::MaxRepeat(r) => args.run.precision.max_repeat = Some(*r),
            Setting::Warmup(w) => args.run.warmup = *w,
            Setting::Workload(Workload::Cpu(w)) => args.workload = vec![CpuChoice::Kernel(*w)],
            Setting::Workload(Workload::Linalg(w)) => args.workload = vec![CpuChoice::Linalg(*w)],
            Setting::Count("threads", n) => args.threads = Some(Counts(vec![*n])),
            Setting::Count("n", n) => args.n = vec![*n],
            Setting::Isa(isa) => args.isa = Some(*isa),
            Setting::Number("clock-ghz", g) => args.clock_ghz = Some(*g),
            _ => return Err(super::fit::unknown_setting(f)),
        }
        args.output.given.note(f.key());
    }
    Ok(())
}

/// The request of `args`: one command, or one job of a suite.
pub fn job(args: &CpuArgs) -> anyhow::Result<Box<dyn Request>> {
    Ok(Box::new(request(args)?))
}

/// Refuses every option given that no point of the run would use (an option accepted is used
/// or refused, never ignored).
fn refuse_unused(
    args: &CpuArgs,
    kernels: &[CpuWorkload],
    linalg: &[LinalgWorkload],
) -> Result<(), UsageError> {
    let given = &args.output.given;
    args.output.refuse_display(false, false)?;
    // The kernels that run something (NULL is the harness alone).
    let measured: Vec<CpuWorkload> = kernels
        .iter()
        .copied()
        .filter(|w| Workload::from(*w).uses("scaling"))
        .collect();
    let built_in = !linalg.is_empty() && args.blas != Some(BlasEngine::System);
    if let Some(isa) = args.isa {
        // A system BLAS chooses its own instructions.
        given.refuse_unless(
            !measured.is_empty() || built_in,
            &["isa"],
            "chooses the instructions of the kernels and of the built-in LINPACK, DGEMM and SGEMM, and this run has none of them (a system BLAS chooses its own)",
            "drop --isa or --blas system",
        )?;
        if built_in && linalg_kernels::for_isa::<f64>(isa).is_none() {
            return Err(UsageError(format!(
                "--isa {isa}: LINPACK, DGEMM and SGEMM have {} micro-kernels on this CPU; choose one of them",
                linalg_kernels::available::<f64>()
                    .iter()
                    .map(|k| k.kind.name())
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
    }
    // The workloads whose peak the overrides may set: the kernels, and the FMA of each
    // linear-algebra workload's element type (DP for LINPACK and DGEMM, SP for SGEMM).
    let mut peaked = measured.clone();
    for w in linalg {
        peaked.push(match w {
            LinalgWorkload::Sgemm => CpuWorkload::Sp,
            LinalgWorkload::Linpack | LinalgWorkload::Dgemm => CpuWorkload::Dp,
        });
    }
    for (option, list) in [
        ("--ops-per-cycle", &args.ops_per_cycle),
        ("--peak", &args.peak),
    ] {
        for (i, (w, _)) in list.iter().enumerate() {
            if !peaked.contains(w) {
                return Err(UsageError(format!(
                    "{option} {w}=…: no point of this run has {w}'s peak ({}); add {w} to --workload or drop the entry",
                    if *w == CpuWorkload::Null {
                        "NULL has none"
                    } else {
                        "DP= sets LINPACK's and DGEMM's, SP= SGEMM's"
                    }
                )));
            }
            if list[..i].iter().any(|(x, _)| x == w) {
                return Err(UsageError(format!(
                    "{option} gives {w} twice; give it once"
                )));
            }
        }
    }
    if let Some((w, _)) = args
        .ops_per_cycle
        .iter()
        .find(|(w, _)| args.peak.iter().any(|(p, _)| p == w))
    {
        return Err(UsageError(format!(
            "--peak {w}=… gives {w}'s peak outright, so --ops-per-cycle {w}=… would not be used; drop one of them"
        )));
    }
    given.refuse_unless(
        peaked
            .iter()
            .any(|w| !args.peak.iter().any(|(p, _)| p == w)),
        &["clock_ghz"],
        "enters the peak of points whose peak --peak does not give outright, and this run has none",
        "drop --clock-ghz",
    )
}
