//! `peakbench mem`.

use super::common::{
    Counts, OutputArgs, RunArgs, UsageError, bounds, parse_thread_counts, workload_help,
};
use crate::app::mem::{
    DEFAULT_LATENCY_SAMPLE, HugePages, MemOptions, MemWorkload, Stores, has_kernels,
};
use crate::app::setting::Setting;
use crate::app::workloads::Workload;
use crate::app::{Recorder, Request};
use crate::results::Subsystem;
use crate::results::params::Mix;
use crate::runner::Repetition;
use crate::sysinfo::Isa;
use crate::sysinfo::SystemInfo;
use crate::sysinfo::peak::MemPeakOverrides;
use crate::units::{format_bytes_binary, parse_size};
use clap::{Args, ValueEnum};

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum HugeArg {
    /// Transparent huge pages (madvise MADV_HUGEPAGE).
    On,
    /// 4 KiB pages (MADV_NOHUGEPAGE).
    Off,
    /// Both, one staircase each.
    Both,
}

#[derive(Debug, Clone, Args)]
pub struct MemArgs {
    #[arg(long, value_delimiter = ',', value_parser = parse_workload, help = workload_help(Subsystem::Mem, true))]
    pub workload: Vec<MemWorkload>,
    /// Block sizes of RWS…RR, 1 B to 1 GiB; a block not a multiple of 8 bytes is moved byte by
    /// byte, each byte one load or store (sizes: 4k = 4K = 4KiB = 4096 B,
    /// 4kB = 4KB = 4000 B; M, G, T alike).
    #[arg(long, value_delimiter = ',', value_parser = parse_bytes, default_value = "1KB,1MB,10MB")]
    pub block_size: Vec<u64>,
    /// Thread counts to sweep, e.g. 1,2. Default: 1, 2, 4 … up to the hardware threads, and 1
    /// for LATENCY (given, LATENCY runs one chain per thread at once at each count: the latency
    /// under load, per thread and together).
    #[arg(short = 't', long, value_parser = parse_thread_counts)]
    pub threads: Option<Counts>,
    /// Fixed work instead of --duration: the bytes each repetition of a bandwidth point moves
    /// (read + written, as STREAM counts; 10GB = 10¹⁰ B, 10G = 10 GiB), split between the
    /// threads with --scaling strong (the default) or each thread's with weak; at most 1 PiB,
    /// and at most about a day a repetition at 10 GB/s.
    #[arg(long, value_name = "BYTES", value_parser = super::common::parse_total_bytes, conflicts_with = "duration")]
    pub total_bytes: Option<u64>,
    /// Instead of --duration for the bandwidth workloads: each repetition runs until its rate
    /// is steady, this long at most (fio's steadystate: over the last 5 intervals of a
    /// twentieth of it, every interval within 10 % of their mean and their trend under 5 %;
    /// docs/mem.md).
    #[arg(long, value_name = "DURATION", value_parser = super::common::parse_sustain, conflicts_with = "total_bytes")]
    pub sustain: Option<std::time::Duration>,
    /// With --total-bytes: strong (the bytes split between the threads) or weak (each
    /// thread's).
    #[arg(long, value_enum, default_value = "strong")]
    pub scaling: crate::results::params::Scaling,
    /// Size of each array, all threads together (split between them; 1G = 1 GiB, 1GB = 10⁹ B).
    /// A list or a range gives the bandwidth staircase, a point per size: 16K,1M,1G, or
    /// 16K..1G (√2 steps, as LATENCY's). Default: 4 × the last-level cache, at least 64 MiB,
    /// so that it lives in DRAM.
    #[arg(long, value_name = "SIZES", value_parser = parse_array_sizes)]
    pub array_size: Option<Sizes>,
    /// Read/write mixes of MIX and of LOADED's traffic, reads:writes per element as Intel MLC
    /// names them: 1:0 (all reads), 3:1, 2:1, 1:1, and 0:1 (all writes). Default: the first
    /// four for MIX, 1:0 for LOADED.
    #[arg(long, value_name = "MIXES", value_delimiter = ',', value_parser = parse_mix)]
    pub mix: Vec<Mix>,
    /// Store instructions of the writing kernels.
    #[arg(long, value_enum, default_value = "auto")]
    pub stores: Stores,
    /// The CPUs C2C bounces its cache line between, every ordered pair of them: CPU numbers
    /// and ranges, e.g. 0,8,64 or 0..7. Default: every CPU this process may run on.
    #[arg(long, value_name = "CPUS", value_parser = parse_cpu_list)]
    pub cpus: Option<Counts>,
    /// Force an instruction set: avx512, avx2 or scalar (portable code). Default: the widest.
    #[arg(long, value_parser = parse_isa)]
    pub isa: Option<Isa>,
    /// Page size of the latency staircase and of LOADED's chase.
    #[arg(long, value_enum, default_value = "both")]
    pub huge_pages: HugeArg,
    /// Largest working set of the latency staircase (from 4 KiB, √2 steps).
    #[arg(long, value_parser = parse_working_set, default_value = "1Gi")]
    pub latency_max: u64,
    /// The memory's theoretical peak in GB/s (instead of SMBIOS; 0.01 to 100000).
    #[arg(long, value_name = "GBS", value_parser = bounds::MEM_PEAK_GBS.parser())]
    pub mem_peak_gbs: Option<f64>,
    /// Memory channels, for the peak (with --mem-mts).
    #[arg(long, value_name = "N", requires = "mem_mts", conflicts_with = "mem_peak_gbs", value_parser = parse_channels)]
    pub mem_channels: Option<u32>,
    /// The memory modules' rated latency in ns (e.g. CAS latency: CL × 2000 / MT/s), the floor
    /// of LATENCY's memory level (--latency-max must then reach past the last cache) and of a
    /// block workload's operation (plus its bytes at the bandwidth peak); SMBIOS does not give
    /// it (1 to 100000).
    #[arg(long, value_name = "NS", value_parser = bounds::MEM_LATENCY_NS.parser())]
    pub mem_latency_ns: Option<f64>,
    /// Memory transfer rate in MT/s: for the bandwidth peak (with --mem-channels) and for the
    /// rated latency (with --mem-cl; 100 to 100000).
    #[arg(long, value_name = "MTS", value_parser = bounds::MEM_MTS.parser())]
    pub mem_mts: Option<f64>,
    /// The modules' CAS latency in cycles (CL, as DDR4-2133 CL15 gives it): the rated latency
    /// is CL × 2000 / MT/s ns (with --mem-mts), in place of --mem-latency-ns (1 to 200).
    #[arg(long, value_name = "CL", requires = "mem_mts", conflicts_with = "mem_latency_ns", value_parser = bounds::MEM_CL.parser())]
    pub mem_cl: Option<f64>,
    /// Measure each point below 90 % of its peak once more with the knob of its first cause
    /// changed (transparent huge pages for `pages`: a bandwidth point alone, a LATENCY level by
    /// its staircase), to confirm or drop that cause (docs/diagnosis.md).
    #[arg(long)]
    pub diagnose: bool,
    #[command(flatten)]
    pub run: RunArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// The defaults the command line gives (a test of `cli` holds them equal to a parse of the
/// bare subcommand): a job made in code ([`Setting`]) starts from them.
impl Default for MemArgs {
    fn default() -> MemArgs {
        MemArgs {
            workload: Vec::new(),
            block_size: vec![1_000, 1_000_000, 10_000_000],
            threads: None,
            total_bytes: None,
            sustain: None,
            scaling: crate::results::params::Scaling::Strong,
            array_size: None,
            mix: Vec::new(),
            stores: Stores::Auto,
            cpus: None,
            isa: None,
            huge_pages: HugeArg::Both,
            latency_max: 1 << 30,
            mem_peak_gbs: None,
            mem_channels: None,
            mem_latency_ns: None,
            mem_mts: None,
            mem_cl: None,
            diagnose: false,
            run: RunArgs::default(),
            output: OutputArgs::default(),
        }
    }
}

fn parse_workload(s: &str) -> Result<MemWorkload, String> {
    s.parse()
}

fn parse_mix(s: &str) -> Result<Mix, String> {
    Mix::parse(s)
}

fn parse_isa(s: &str) -> Result<Isa, String> {
    s.parse()
}

fn parse_bytes(s: &str) -> Result<u64, String> {
    parse_size(s).map_err(|e| e.to_string())
}

/// The largest working set an option may name: more memory than any one machine has (the
/// largest single-system-image servers hold tens of TiB), so that a typo is refused here
/// rather than by the memory check after the plan is made.
const MAX_WORKING_SET: u64 = 1 << 50;

/// A working set (`--array-size`, `--latency-max`): 1 byte to [`MAX_WORKING_SET`].
fn parse_working_set(s: &str) -> Result<u64, String> {
    let n = parse_bytes(s)?;
    if n > MAX_WORKING_SET {
        return Err(format!(
            "'{s}' is out of range: at most {} of memory",
            format_bytes_binary(MAX_WORKING_SET)
        ));
    }
    Ok(n)
}

/// The sizes of `--array-size`, in the order given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sizes(pub Vec<u64>);

/// The most sizes one `--array-size` may name.
const MAX_SIZES: usize = 256;

/// `--array-size`: sizes and ranges separated by commas; a range `A..B` is A, the sizes of
/// LATENCY's √2 grid (powers of two and their √2 multiples) between, and B.
fn parse_array_sizes(s: &str) -> Result<Sizes, String> {
    let mut out = Vec::new();
    for item in s.split(',') {
        if item.trim().is_empty() {
            return Err(format!(
                "'{s}' has an empty entry; give sizes or ranges separated by commas, e.g. 16K,1M or 16K..1G"
            ));
        }
        match item.split_once("..") {
            Some((a, b)) => {
                let (a, b) = (parse_working_set(a.trim())?, parse_working_set(b.trim())?);
                if a == 0 || a > b {
                    return Err(format!(
                        "'{item}' is an empty range; write the smaller size first, e.g. 16K..1G"
                    ));
                }
                out.push(a);
                let grid = crate::app::mem::staircase_sizes(a, b);
                out.extend(grid.into_iter().filter(|&g| g > a && g < b));
                out.push(b);
                out.dedup();
            }
            None => out.push(parse_working_set(item.trim())?),
        }
        if out.len() > MAX_SIZES {
            return Err(format!(
                "'{s}' names more than {MAX_SIZES} sizes; give fewer"
            ));
        }
    }
    Ok(Sizes(out))
}

/// `--cpus`: CPU numbers (0…65535) and ranges.
fn parse_cpu_list(s: &str) -> Result<Counts, String> {
    super::common::parse_counts(s, 0, 65535)
}

fn parse_channels(s: &str) -> Result<u32, String> {
    super::common::count_in(s, 1, 64)
}

/// The shortest a bandwidth point's repetition and a LATENCY sample are made by `run
/// --budget` (a sample is one of a staircase step's many: 5 ms is about 50 000 loads).
const MIN_DURATION: std::time::Duration = super::fit::POINT_FLOOR;
const MIN_SAMPLE: std::time::Duration = std::time::Duration::from_millis(5);

pub fn run(args: MemArgs, argv: Vec<String>) -> anyhow::Result<()> {
    args.output.validate()?;
    let mut rec = Recorder::new(argv, args.output.outputs());
    let sys = rec.system();
    let outcome = job(&args, &sys).and_then(|job| job.run(&mut rec));
    rec.finish(outcome)
}

/// The request of `args` on `sys`: one command, or one job of a suite.
pub fn job(args: &MemArgs, sys: &SystemInfo) -> anyhow::Result<Box<dyn Request>> {
    refuse_unused(args, &workloads(args))?;
    let precision = args.run.precision.precision(args.run.repeat)?;
    Ok(Box::new(MemOptions {
        precision,
        ..options(args, sys)
    }))
}

/// The options of a suite's job that `fit` changes, at their fitted values: --duration (or
/// --total-bytes, no less than a thread's [`super::fit::POINT_FLOOR`] of copying at
/// [`crate::app::mem::FLOOR_BYTES_PER_SEC`]) and --repeat. One --duration sets a job's
/// bandwidth time and its latency samples alike once given: a job of latency samples only
/// (LATENCY, C2C) gets its samples fitted (25 ms when it gives none, down to 5 ms), any other
/// its bandwidth time (down to the floor, 50 ms), its samples then as long.
pub fn fitted(
    args: &MemArgs,
    fit: &super::fit::Fit,
    sys: &SystemInfo,
) -> Vec<crate::app::setting::Setting> {
    let workloads = workloads(args);
    let timed = workloads
        .iter()
        .any(|w| Workload::from(*w).uses("duration"));
    let samples_only = workloads.iter().all(|w| {
        matches!(
            w,
            MemWorkload::Latency | MemWorkload::C2c | MemWorkload::Null
        )
    });
    let amount = match args.total_bytes {
        Some(_) => {
            let threads = match &args.threads {
                None => crate::sweep::powers_of_two_up_to(sys.cpu.threads as usize),
                Some(t) => t.to_vec(),
            };
            let sharing = match args.scaling {
                crate::results::params::Scaling::Strong => {
                    threads.iter().copied().max().unwrap_or(1)
                }
                crate::results::params::Scaling::Weak => 1,
            };
            let floor = MIN_DURATION.as_secs_f64()
                * crate::app::mem::FLOOR_BYTES_PER_SEC
                * sharing.max(1) as f64;
            fit.work_option("total-bytes", args.total_bytes, floor as u64)
        }
        None if !timed => None,
        None if samples_only => {
            let sample = if args.output.given.has("duration") {
                args.run.duration
            } else {
                DEFAULT_LATENCY_SAMPLE
            };
            let fitted = fit.time_above(sample, MIN_SAMPLE);
            (fitted != args.run.duration)
                .then_some(crate::app::setting::Setting::Time("duration", fitted))
        }
        None => match args.sustain {
            Some(d) => fit.time_option("sustain", d, super::common::MIN_SUSTAIN),
            None => fit.time_option("duration", args.run.duration, MIN_DURATION),
        },
    };
    amount
        .into_iter()
        .chain(fit.repeat_options(args.run.repeat, &args.run.precision))
        .collect()
}

/// Sets each of `settings` on `args` (a budget's fit, from [`fitted`], or a job made in code:
/// [`Setting`]), each counted as given; an option this command does not take is an internal
/// error.
pub fn apply(args: &mut MemArgs, settings: &[Setting]) -> Result<(), String> {
    for f in settings {
        match f {
            Setting::Time("duration", d) => args.run.duration = *d,
            Setting::Time("sustain", d) => args.sustain = Some(*d),
            Setting::Work("total-bytes", n) => args.total_bytes = Some(*n),
            Setting::Repeat(r) => args.run.repeat = *r,
            Setting::MaxRepeat(r) => args.run.precision.max_repeat = Some(*r),
            Setting::Warmup(w) => args.run.warmup = *w,
            Setting::Workload(Workload::Mem(w)) => args.workload = vec![*w],
            Setting::Count("threads", n) => args.threads = Some(Counts(vec![*n])),
            Setting::Bytes("array-size", n) => args.array_size = Some(Sizes(vec![*n])),
            Setting::Bytes("latency-max", n) => args.latency_max = *n,
            Setting::HugePages(on) => {
                args.huge_pages = if *on { HugeArg::On } else { HugeArg::Off }
            }
            Setting::Isa(isa) => args.isa = Some(*isa),
            Setting::Number("mem-peak-gbs", g) => args.mem_peak_gbs = Some(*g),
            _ => return Err(super::fit::unknown_setting(f)),
        }
        args.output.given.note(f.key());
    }
    Ok(())
}

/// The workloads of `args` (all but NULL when it names none).
fn workloads(args: &MemArgs) -> Vec<MemWorkload> {
    if args.workload.is_empty() {
        MemWorkload::defaults()
    } else {
        args.workload.clone()
    }
}

/// The benchmark's options from the command line's.
fn options(args: &MemArgs, sys: &SystemInfo) -> MemOptions {
    MemOptions {
        workloads: workloads(args),
        block_sizes: args.block_size.clone(),
        threads: match &args.threads {
            None => crate::sweep::powers_of_two_up_to(sys.cpu.threads as usize),
            Some(t) => t.to_vec(),
        },
        array_sizes: args.array_size.clone().map(|s| s.0).unwrap_or_default(),
        stores: args.stores,
        isa: args.isa,
        huge_pages: match args.huge_pages {
            HugeArg::On => vec![HugePages::On],
            HugeArg::Off => vec![HugePages::Off],
            HugeArg::Both => vec![HugePages::On, HugePages::Off],
        },
        latency_max_bytes: args.latency_max,
        c2c_cpus: args.cpus.as_ref().map(|c| c.to_vec()).unwrap_or_default(),
        mixes: args.mix.clone(),
        latency_threads: args
            .threads
            .as_ref()
            .map_or_else(|| vec![1], |t| t.to_vec()),
        latency_sample: if args.output.given.has("duration") {
            args.run.duration
        } else {
            DEFAULT_LATENCY_SAMPLE
        },
        duration: args.run.duration,
        total_bytes: args.total_bytes,
        sustain: args.sustain,
        scaling: args.scaling,
        reps: Repetition {
            warmup: args.run.warmup,
            repeat: args.run.repeat,
        },
        peak: MemPeakOverrides {
            gbs: args.mem_peak_gbs,
            channels: args.mem_channels,
            mts: args.mem_mts,
            latency_ns: args.mem_latency_ns,
            cl: args.mem_cl,
        },
        diagnose: args.diagnose,
        precision: None,
    }
}

/// Refuses every option given that no point of the run would use (an option accepted is used
/// or refused, never ignored): those that only some workloads use by the options' table, then
/// those that other options decide.
fn refuse_unused(args: &MemArgs, workloads: &[MemWorkload]) -> Result<(), UsageError> {
    let given = &args.output.given;
    args.output.refuse_display(false, false)?;
    if args.mem_mts.is_some() && args.mem_channels.is_none() && args.mem_cl.is_none() {
        return Err(UsageError(
            "--mem-mts is the transfer rate of the bandwidth peak (with --mem-channels) or of the rated latency (with --mem-cl): give one of them, or drop --mem-mts".into(),
        ));
    }
    let chosen: Vec<Workload> = workloads.iter().map(|w| Workload::from(*w)).collect();
    given.refuse_unused_by(Subsystem::Mem, &chosen)?;
    // MIX and LOADED store only in a mix that writes (LOADED's default reads only).
    let writes = |w: &MemWorkload| match w {
        MemWorkload::Mix | MemWorkload::Loaded if args.mix.is_empty() => *w == MemWorkload::Mix,
        MemWorkload::Mix | MemWorkload::Loaded => args.mix.iter().any(|m| m.writes > 0),
        w => Workload::from(*w).uses("stores"),
    };
    given.refuse_unless(
        workloads.iter().any(writes),
        &["stores"],
        "chooses the store instructions of the mixes that write, and every mix of MIX and LOADED here reads only",
        "add a mix that writes (--mix 3:1, 2:1, 1:1 or 0:1) or drop --stores",
    )?;
    given.refuse_unless(
        workloads.iter().any(|w| *w != MemWorkload::Numa),
        &["threads"],
        "sets thread counts, and NUMA runs every CPU of each node (its latency one)",
        "drop --threads",
    )?;
    if let Some(isa) = args.isa
        && !has_kernels(isa)
    {
        return Err(UsageError(format!(
            "--isa {isa}: the memory kernels are written for avx512, avx2 and scalar (portable code); choose one of them"
        )));
    }
    given.refuse_unless(
        args.total_bytes.is_some(),
        &["scaling"],
        "splits --total-bytes between the threads, and no --total-bytes is given (a timed point runs each thread for --duration)",
        "give --total-bytes or drop --scaling",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn array_sizes_take_lists_and_ranges() {
        assert_eq!(parse_array_sizes("16K"), Ok(Sizes(vec![16 << 10])));
        assert_eq!(
            parse_array_sizes("1M, 16K"),
            Ok(Sizes(vec![1 << 20, 16 << 10]))
        );
        let Sizes(r) = parse_array_sizes("16K..1G").unwrap();
        // √2 steps from 2^14 to 2^30: 33 sizes, each a whole number of lines.
        assert_eq!((r.len(), r[0], r[1], r[32]), (33, 16 << 10, 23168, 1 << 30));
        assert!(r.windows(2).all(|w| w[0] < w[1]) && r.iter().all(|s| s % 64 == 0));
        // Ends off the grid are kept as given.
        let Sizes(r) = parse_array_sizes("10000..20000").unwrap();
        assert_eq!(r, vec![10000, 11584, 16384, 20000]);
        for bad in [
            "",
            "1M,",
            "1G..1M",
            "0..1M",
            "x..1M",
            "16K..1G,16K..1G,16K..1G,16K..1G,16K..1G,16K..1G,16K..1G,16K..1G",
            "1..18446744073709551615",
            "18446744073709551615",
            "2Pi",
        ] {
            assert!(parse_array_sizes(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_staircase_default_is_the_library_s() {
        assert_eq!(parse_bytes("1Gi"), Ok(crate::app::mem::DEFAULT_LATENCY_MAX));
    }
}
