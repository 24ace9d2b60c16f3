//! `peakbench cpu`.

use super::common::{
    OutputArgs, RunArgs, UsageError, parse_assignment, parse_positive, parse_threads,
};
use crate::app::Recorder;
use crate::bench::cpu::{CpuOptions, CpuSession, CpuWorkload, Scaling, points};
use crate::report;
use crate::runner::Repetition;
use crate::sysinfo::Isa;
use clap::Args;

#[derive(Debug, Args)]
pub struct CpuArgs {
    /// Workloads: QP (int8), HP (int16), SP (fp32 FMA), DP (fp64 FMA), INT32, INT64, NULL
    /// (harness overhead). Default: all but NULL.
    #[arg(long, value_delimiter = ',', value_parser = parse_workload)]
    pub workload: Vec<CpuWorkload>,
    /// Thread counts to sweep, e.g. 1,2,4. Default: 1, 2, 4 … up to the hardware threads.
    #[arg(long, value_delimiter = ',', value_parser = parse_threads)]
    pub threads: Vec<usize>,
    /// Strong (fixed total work) or weak (fixed work per thread) scaling.
    #[arg(long, value_enum, default_value = "weak")]
    pub scaling: Scaling,
    /// Force an instruction set: avx512, avx2, sse2 (x86), sve, neon (aarch64) or scalar. Default: the widest.
    #[arg(long, value_parser = parse_isa)]
    pub isa: Option<Isa>,
    /// Core clock in GHz for the peak, instead of the measured one.
    #[arg(long, value_name = "GHZ", value_parser = parse_positive)]
    pub clock_ghz: Option<f64>,
    /// Operations per cycle per core for the peak, e.g. DP=16,SP=32 (overrides the table).
    #[arg(long, value_name = "WORKLOAD=N", value_delimiter = ',', value_parser = parse_assignment::<CpuWorkload>)]
    pub ops_per_cycle: Vec<(CpuWorkload, f64)>,
    /// Theoretical peak in GOPS per core, e.g. DP=57.6 (overrides clock and table).
    #[arg(long, value_name = "WORKLOAD=GOPS", value_delimiter = ',', value_parser = parse_assignment::<CpuWorkload>)]
    pub peak: Vec<(CpuWorkload, f64)>,
    #[command(flatten)]
    pub run: RunArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

fn parse_workload(s: &str) -> Result<CpuWorkload, String> {
    s.parse()
}

fn parse_isa(s: &str) -> Result<Isa, String> {
    s.parse()
}

pub fn run(args: CpuArgs, argv: Vec<String>) -> anyhow::Result<()> {
    args.output.validate()?;
    let mut rec = Recorder::new(argv, args.output.outputs());
    let outcome = run_into(args, &mut rec);
    rec.finish(outcome)
}

/// Measures the points of `args` into `rec` (one command, or one job of a suite).
pub fn run_into(args: CpuArgs, rec: &mut Recorder) -> anyhow::Result<()> {
    let sys = rec.system();
    let opts = CpuOptions {
        workloads: if args.workload.is_empty() {
            CpuWorkload::DEFAULT.to_vec()
        } else {
            args.workload.clone()
        },
        threads: if args.threads.is_empty() {
            crate::sweep::powers_of_two_up_to(sys.cpu.threads as usize)
        } else {
            args.threads.clone()
        },
        scaling: args.scaling,
        isa: args.isa,
        duration: args.run.duration,
        reps: Repetition {
            warmup: args.run.warmup,
            repeat: args.run.repeat,
        },
        clock_ghz: args.clock_ghz,
        ops_per_cycle: args.ops_per_cycle.iter().copied().collect(),
        peak_per_core: args.peak.iter().copied().collect(),
    };
    let mut session = CpuSession::new(&sys, &opts).map_err(|e| UsageError(e.to_string()))?;
    if !rec.quiet() {
        eprintln!(
            "peakbench cpu: {} — ISA {}, {} scaling, {} repetitions of ~{:?} after {} warm-up",
            report::table::machine_line(&sys),
            session.isa(),
            opts.scaling.name(),
            opts.reps.repeat,
            opts.duration,
            opts.reps.warmup
        );
    }
    let rounds = (opts.reps.warmup + opts.reps.repeat) as u64;
    rec.drive(
        &points(&opts),
        |_| rounds,
        |p| format!("{} ×{}", p.workload, p.threads),
        |point, tick| {
            session.run(point, tick).map(|r| vec![r]).map_err(|e| {
                anyhow::anyhow!("{} with {} threads: {e}", point.workload, point.threads)
            })
        },
    )
}
