//! `peakbench disk`.

use super::common::{
    Counts, OutputArgs, PrecisionArgs, UsageError, bounds, parse_duration, parse_repeat,
    workload_help,
};
use crate::app::disk::{self, DiskOptions, DiskPeaks, DiskWorkload, EngineKind, MAX_DEPTH, Place};
use crate::app::setting::Setting;
use crate::app::workloads::Workload;
use crate::app::{Recorder, Request};
use crate::results::Subsystem;
use crate::results::params::SyncMode;
use crate::runner::Repetition;
use clap::{Args, ValueEnum};
use std::path::PathBuf;

/// `--engine`: an engine, or `auto` (None): psync when every --iodepth is 1, io_uring
/// otherwise.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EngineChoice(pub Option<EngineKind>);

fn parse_engine(s: &str) -> Result<EngineChoice, String> {
    if s.trim().eq_ignore_ascii_case("auto") {
        return Ok(EngineChoice(None));
    }
    EngineKind::from_str(s.trim(), true)
        .map(|k| EngineChoice(Some(k)))
        .map_err(|_| format!("'{s}' is not an engine: use auto, psync, io_uring, null or stream"))
}

#[derive(Debug, Clone, Args)]
pub struct DiskArgs {
    #[arg(long, value_delimiter = ',', value_parser = parse_workload, help = workload_help(Subsystem::Disk, false), default_values_t = DiskWorkload::defaults())]
    pub workload: Vec<DiskWorkload>,
    /// Record sizes, 1 B to 1 GiB (sizes, as fio: 4k = 4K = 4KiB = 4096 B, 4kB = 4KB = 4000 B;
    /// M, G, T alike). With
    /// O_DIRECT (the default), records that are not whole logical blocks go through the page
    /// cache, dropped before each repetition, and are labelled so.
    #[arg(long, value_delimiter = ',', value_parser = parse_binary, default_value = "4K,64K,1M,16M")]
    pub block_size: Vec<u64>,
    /// Threads (jobs), 1…128; a list sweeps.
    #[arg(short = 't', long, value_parser = parse_jobs, default_value = "1")]
    pub threads: Counts,
    /// I/Os in flight per thread, 1…256; a list sweeps (1,4,16 or 1..32).
    #[arg(long, value_parser = parse_depth, default_value = "1")]
    pub iodepth: Counts,
    /// I/O engine: auto (psync when every --iodepth is 1, io_uring otherwise), psync
    /// (pread/pwrite, one I/O at a time per thread), io_uring (registered file and buffers, up
    /// to 256 in flight per thread), null (no I/O: the harness's own cost per I/O) or stream
    /// (fread/fwrite through a library buffer of --stream-buffer bytes, one I/O at a time per
    /// thread, with --buffered: IOzone's fread and fwrite).
    #[arg(long, value_parser = parse_engine, default_value = "auto")]
    pub engine: EngineChoice,
    /// Benchmark this file: it must not exist (peakbench creates and removes it), unless
    /// --allow-overwrite; a block device needs --destructive.
    #[arg(long, value_name = "PATH", conflicts_with = "dir")]
    pub file: Option<PathBuf>,
    /// Create a temporary file in this directory (removed afterwards).
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub dir: PathBuf,
    /// Let --file name an existing file, whose contents are destroyed.
    #[arg(long)]
    pub allow_overwrite: bool,
    /// Let --file name a block device, whose data are destroyed.
    #[arg(long)]
    pub destructive: bool,
    /// File size (1G = 1 GiB, 1GB = 10⁹ B).
    #[arg(long, value_parser = parse_binary, default_value = "1G")]
    pub size: u64,
    /// Measured time of one repetition (the defaults measure the 16 default points in about a
    /// minute; give more for a device with a large write cache).
    #[arg(long, value_parser = parse_duration, default_value = "1s")]
    pub runtime: std::time::Duration,
    /// Fixed work instead of --runtime: the bytes each repetition moves after its ramp
    /// (10G = 10 GiB, 10GB = 10¹⁰ B), split between the threads with --scaling strong (the default)
    /// or each thread's with weak, as fio's io_size; at most 1 PiB, and at most about a day a
    /// repetition at 1 GB/s.
    #[arg(long, value_name = "BYTES", value_parser = super::common::parse_total_bytes, conflicts_with = "runtime")]
    pub total_bytes: Option<u64>,
    /// Instead of --runtime: each repetition runs until its rate is steady, this long at most
    /// (fio's steadystate: over the last 5 intervals of a twentieth of it, every interval
    /// within 10 % of their mean and their trend under 5 %; a burst shorter than that window
    /// is seen through, docs/disk.md).
    #[arg(long, value_name = "DURATION", value_parser = super::common::parse_sustain, conflicts_with_all = ["runtime", "total_bytes"])]
    pub sustain: Option<std::time::Duration>,
    /// The percentiles of every I/O's latency each point reports beside min and max (fio's
    /// --percentile_list), e.g. 50,99,99.9,99.999: above 0 and below 100, 4 decimals and 16 at
    /// most. Default: 50,90,99,99.9,99.99.
    #[arg(long, value_name = "LIST", value_parser = crate::measure::latency::Percentiles::parse)]
    pub percentiles: Option<crate::measure::latency::Percentiles>,
    /// With --total-bytes: strong (the bytes split between the threads) or weak (each
    /// thread's).
    #[arg(long, value_enum, default_value = "strong")]
    pub scaling: crate::results::params::Scaling,
    /// Time at the start of each repetition that is not measured.
    #[arg(long, value_parser = parse_ramp, default_value = "250ms")]
    pub ramp: std::time::Duration,
    /// Percent of reads in RW.
    #[arg(long, value_parser = parse_percent, default_value = "70")]
    pub read_percent: u32,
    /// RSTRIDE's distance between two blocks it reads, in blocks, 2…1048576 (IOzone's -j).
    #[arg(long, value_parser = parse_stride, default_value = "17")]
    pub stride: u64,
    /// The stream engine's library buffer, 512 B to 64 MiB (as setvbuf's; sizes as
    /// --block-size).
    #[arg(long, value_name = "BYTES", value_parser = parse_stream_buffer, default_value = "64K")]
    pub stream_buffer: u64,
    /// Go through the page cache (no O_DIRECT); labelled "buffered" in every output.
    #[arg(long)]
    pub buffered: bool,
    /// When writes are made durable: none, fdatasync-end (once at the end of each repetition,
    /// inside its time, as fio's end_fsync), fsync-each (after every write, inside its latency,
    /// as fio's fsync=1), o-sync or o-dsync (the file opened O_SYNC or O_DSYNC, as fio's sync).
    #[arg(long, value_enum, default_value = "fdatasync-end")]
    pub sync: SyncMode,
    /// Each thread on a file of its own of --size bytes in --dir (as fio's jobs without a shared
    /// filename), instead of one file shared in regions.
    #[arg(long)]
    pub file_per_thread: bool,
    /// Repetitions of every point.
    #[arg(long, default_value = "3", value_parser = parse_repeat)]
    pub repeat: usize,
    #[command(flatten)]
    pub precision: PrecisionArgs,
    /// Measure each point below 90 % of its peak once more with the knob of its first cause
    /// changed (32 I/Os in flight through io_uring for `queue-depth`), to confirm or drop that
    /// cause (docs/diagnosis.md).
    #[arg(long)]
    pub diagnose: bool,
    #[command(flatten)]
    pub rated: DiskPeakArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// The defaults the command line gives (a test of `cli` holds them equal to a parse of the
/// bare subcommand): a job made in code ([`Setting`]) starts from them.
impl Default for DiskArgs {
    fn default() -> DiskArgs {
        DiskArgs {
            workload: DiskWorkload::defaults(),
            block_size: vec![4 << 10, 64 << 10, 1 << 20, 16 << 20],
            threads: Counts(vec![1]),
            iodepth: Counts(vec![1]),
            engine: EngineChoice(None),
            file: None,
            dir: PathBuf::from("."),
            allow_overwrite: false,
            destructive: false,
            size: 1 << 30,
            runtime: std::time::Duration::from_secs(1),
            total_bytes: None,
            sustain: None,
            percentiles: None,
            scaling: crate::results::params::Scaling::Strong,
            ramp: std::time::Duration::from_millis(250),
            read_percent: 70,
            stride: 17,
            stream_buffer: 64 << 10,
            buffered: false,
            sync: SyncMode::FdatasyncEnd,
            file_per_thread: false,
            repeat: 3,
            precision: PrecisionArgs::default(),
            diagnose: false,
            rated: DiskPeakArgs::default(),
            output: OutputArgs::default(),
        }
    }
}

/// A device's rated figures, for its peaks (`disk`, and `peak` for a machine not at hand).
#[derive(Debug, Clone, Default, Args)]
pub struct DiskPeakArgs {
    /// The device's rated sequential read throughput, MB/s (0.01 to 1000000).
    #[arg(long, value_name = "MBPS", value_parser = bounds::DISK_MBPS.parser())]
    pub disk_peak_read_mbps: Option<f64>,
    /// The device's rated sequential write throughput, MB/s (0.01 to 1000000).
    #[arg(long, value_name = "MBPS", value_parser = bounds::DISK_MBPS.parser())]
    pub disk_peak_write_mbps: Option<f64>,
    /// The device's rated random read IOPS (0.01 to 1000000000).
    #[arg(long, value_name = "IOPS", value_parser = bounds::DISK_IOPS.parser())]
    pub disk_peak_read_iops: Option<f64>,
    /// The device's rated random write IOPS (0.01 to 1000000000).
    #[arg(long, value_name = "IOPS", value_parser = bounds::DISK_IOPS.parser())]
    pub disk_peak_write_iops: Option<f64>,
    /// The device's rated access latency of one I/O, µs: the floor of the latency (with the
    /// record's transfer at the bandwidth peak) and a bound of the IOPS of random I/O (0.01 to
    /// 100000000).
    #[arg(long, value_name = "US", value_parser = bounds::DISK_LATENCY_US.parser(), conflicts_with = "rpm")]
    pub disk_latency_us: Option<f64>,
    /// A rotating disk's spindle speed (with --seek-ms): random I/O waits for a seek and half a
    /// rotation, its IOPS peak 1 / (seek + ½ × 60 s / rpm) (100 to 100000).
    #[arg(long, value_name = "RPM", value_parser = bounds::RPM.parser(), requires = "seek_ms")]
    pub rpm: Option<f64>,
    /// A rotating disk's average seek time in ms (with --rpm; 0.001 to 100000).
    #[arg(long, value_name = "MS", value_parser = bounds::SEEK_MS.parser(), requires = "rpm")]
    pub seek_ms: Option<f64>,
}

impl DiskPeakArgs {
    /// The rated figures given.
    pub fn peaks(&self) -> DiskPeaks {
        DiskPeaks {
            read_mbps: self.disk_peak_read_mbps,
            write_mbps: self.disk_peak_write_mbps,
            read_iops: self.disk_peak_read_iops,
            write_iops: self.disk_peak_write_iops,
            latency_us: self.disk_latency_us,
            rpm: self.rpm,
            seek_ms: self.seek_ms,
        }
    }
}

fn parse_workload(s: &str) -> Result<DiskWorkload, String> {
    s.parse()
}

fn parse_binary(s: &str) -> Result<u64, String> {
    crate::units::parse_size(s).map_err(|e| e.to_string())
}

fn parse_jobs(s: &str) -> Result<Counts, String> {
    super::common::parse_counts(s, 1, 128)
}

fn parse_depth(s: &str) -> Result<Counts, String> {
    super::common::parse_counts(s, 1, MAX_DEPTH as u64)
}

fn parse_stride(s: &str) -> Result<u64, String> {
    super::common::count_in(s, 2, 1 << 20)
}

fn parse_stream_buffer(s: &str) -> Result<u64, String> {
    let (lo, hi) = (disk::STREAM_BUFFER_MIN, disk::STREAM_BUFFER_MAX);
    let b = parse_binary(s)?;
    if (lo..=hi).contains(&b) {
        Ok(b)
    } else {
        Err(format!(
            "'{s}' is out of range: give a library buffer of 512 B to 64 MiB (512, 4K, 1M)"
        ))
    }
}

fn parse_percent(s: &str) -> Result<u32, String> {
    super::common::count_in(s, 0, 100)
}

fn parse_ramp(s: &str) -> Result<std::time::Duration, String> {
    if s.trim()
        .trim_end_matches(|c: char| c.is_ascii_alphabetic())
        .parse::<f64>()
        == Ok(0.0)
    {
        return Ok(std::time::Duration::ZERO);
    }
    parse_duration(s)
}

/// The shortest a repetition is made by `run --budget` (above the common floor, 50 ms: a
/// device's queue fills and its cache settles in tens of milliseconds).
const MIN_RUNTIME: std::time::Duration = std::time::Duration::from_millis(100);
/// Fixed work (`--total-bytes`) shortened by `run --budget` keeps [`MIN_RUNTIME`] of it at
/// 2 GB/s (twice what the estimate assumes).
const FLOOR_BYTES: u64 = 200_000_000;

pub fn run(args: DiskArgs, argv: Vec<String>) -> anyhow::Result<()> {
    args.output.validate()?;
    let mut rec = Recorder::new(argv, args.output.outputs());
    let outcome = job(&args).and_then(|job| job.run(&mut rec));
    rec.finish(outcome)
}

/// The benchmark's options from the command line's: the engine chosen (`auto`: psync at
/// QD1, io_uring above, where the kernel has it), every option checked that needs no machine.
fn options(args: &DiskArgs) -> anyhow::Result<DiskOptions> {
    let engine = match args.engine.0 {
        Some(kind) => kind,
        None => disk::auto_engine(&args.iodepth.to_vec()).map_err(UsageError)?,
    };
    refuse_unused(args)?;
    args.output.given.refuse_unless(
        engine.caps().stream_buffer,
        &["stream_buffer"],
        &format!(
            "sizes the stream engine's library buffer, and --engine is {}",
            engine.name()
        ),
        "add --engine stream or drop --stream-buffer",
    )?;
    Ok(DiskOptions {
        workloads: args.workload.clone(),
        block_sizes: args.block_size.clone(),
        threads: args.threads.to_vec(),
        iodepths: args.iodepth.to_vec(),
        engine,
        place: match &args.file {
            Some(path) => Place::File {
                path: path.clone(),
                allow_overwrite: args.allow_overwrite,
                destructive: args.destructive,
            },
            None => Place::Dir(args.dir.clone()),
        },
        size: args.size,
        runtime: args.sustain.unwrap_or(args.runtime),
        ramp: args.ramp,
        read_percent: args.read_percent,
        stride: args.stride,
        stream_buffer: args.stream_buffer,
        direct: !args.buffered,
        sync: args.sync,
        file_per_thread: args.file_per_thread,
        total_bytes: args.total_bytes,
        sustain: args.sustain.is_some(),
        percentiles: args.percentiles.clone().unwrap_or_default(),
        scaling: args.scaling,
        reps: Repetition {
            warmup: 0,
            repeat: args.repeat,
        },
        peaks: args.rated.peaks(),
        diagnose: args.diagnose,
        precision: args.precision.precision(args.repeat)?,
    })
}

/// The options of a suite's job that `fit` changes, at their fitted values: --runtime (or
/// --total-bytes, at least 200 MB, or --sustain, 1 s at least), --ramp and --repeat.
pub fn fitted(args: &DiskArgs, fit: &super::fit::Fit) -> Vec<crate::app::setting::Setting> {
    let amount = match (args.total_bytes, args.sustain) {
        (Some(_), _) => fit.work_option("total-bytes", args.total_bytes, FLOOR_BYTES),
        (None, Some(s)) => fit.time_option("sustain", s, super::common::MIN_SUSTAIN),
        (None, None) => fit.time_option("runtime", args.runtime, MIN_RUNTIME),
    };
    amount
        .into_iter()
        .chain(fit.time_above_option("ramp", args.ramp, std::time::Duration::ZERO))
        .chain(fit.repeat_options(args.repeat, &args.precision))
        .collect()
}

/// Sets each of `settings` on `args` (a budget's fit, from [`fitted`], or a job made in code:
/// [`Setting`]), each counted as given; an option this command does not take is an internal
/// error.
pub fn apply(args: &mut DiskArgs, settings: &[Setting]) -> Result<(), String> {
    for f in settings {
        match f {
            Setting::Time("runtime", d) => args.runtime = *d,
            Setting::Time("sustain", d) => args.sustain = Some(*d),
            Setting::Time("ramp", d) => args.ramp = *d,
            Setting::Work("total-bytes", n) => args.total_bytes = Some(*n),
            Setting::Repeat(r) => args.repeat = *r,
            Setting::MaxRepeat(r) => args.precision.max_repeat = Some(*r),
            Setting::Workload(Workload::Disk(w)) => args.workload = vec![*w],
            Setting::Count("threads", n) => args.threads = Counts(vec![*n]),
            Setting::Count("iodepth", n) => args.iodepth = Counts(vec![*n]),
            Setting::Bytes("size", n) => args.size = *n,
            Setting::Bytes("block-size", n) => args.block_size = vec![*n],
            Setting::Engine(e) => args.engine = EngineChoice(Some(*e)),
            Setting::Path("dir", p) => args.dir = p.clone(),
            Setting::Path("file", p) => args.file = Some(p.clone()),
            Setting::Flag("destructive") => args.destructive = true,
            Setting::Flag("buffered") => args.buffered = true,
            Setting::Number("disk-peak-read-iops", x) => args.rated.disk_peak_read_iops = Some(*x),
            Setting::Number("disk-peak-read-mbps", x) => args.rated.disk_peak_read_mbps = Some(*x),
            _ => return Err(super::fit::unknown_setting(f)),
        }
        args.output.given.note(f.key());
    }
    Ok(())
}

/// The request of `args`: one command, or one job of a suite.
pub fn job(args: &DiskArgs) -> anyhow::Result<Box<dyn Request>> {
    Ok(Box::new(options(args)?))
}

/// Refuses every option given that no point of the run would use (an option accepted is used
/// or refused, never ignored).
fn refuse_unused(args: &DiskArgs) -> Result<(), UsageError> {
    let given = &args.output.given;
    args.output.refuse_display(true, false)?;
    given.refuse_unless(
        args.file.is_some(),
        &["allow_overwrite", "destructive"],
        "lets --file name an existing file or a block device, and no --file is given (a --dir file is always new)",
        "give --file or drop it",
    )?;
    given.refuse_unless(
        args.total_bytes.is_some(),
        &["scaling"],
        "splits --total-bytes between the threads, and no --total-bytes is given (a timed point runs each thread for --runtime)",
        "give --total-bytes or drop --scaling",
    )?;
    let w = &args.workload;
    // Which workloads do what, from their specs' work models.
    let named = |f: fn(DiskWorkload) -> bool, and: bool| {
        let names: Vec<&str> = DiskWorkload::ALL
            .into_iter()
            .filter(|x| f(*x))
            .map(|x| x.name())
            .collect();
        match (and, names.split_last()) {
            (true, Some((last, rest))) if !rest.is_empty() => {
                format!("{} and {last}", rest.join(", "))
            }
            _ => crate::text::one_of(names),
        }
    };
    let mixes = |x: DiskWorkload| !x.only_reads() && !x.only_writes();
    given.refuse_unless(
        w.iter().any(|x| x.writes()),
        &["sync"],
        "says when writes are made durable, and no workload in --workload writes",
        &format!("add {}, or drop --sync", named(DiskWorkload::writes, false)),
    )?;
    let chosen: Vec<Workload> = w.iter().map(|x| Workload::from(*x)).collect();
    given.refuse_unused_by(Subsystem::Disk, &chosen)?;
    // A rated figure is used by the points that only read (or only write), and by those that
    // mix both when the other figure of the pair is given too.
    let reads = w.iter().any(|x| x.only_reads());
    let writes = w.iter().any(|x| x.only_writes());
    let mixed = w.iter().any(|x| mixes(*x));
    let mixers = named(mixes, true);
    for (read, write, read_id, write_id) in [
        (
            args.rated.disk_peak_read_mbps,
            args.rated.disk_peak_write_mbps,
            "disk_peak_read_mbps",
            "disk_peak_write_mbps",
        ),
        (
            args.rated.disk_peak_read_iops,
            args.rated.disk_peak_write_iops,
            "disk_peak_read_iops",
            "disk_peak_write_iops",
        ),
    ] {
        let both = read.is_some() && write.is_some();
        given.refuse_unless(
            reads || (mixed && both),
            &[read_id],
            &format!(
                "is the peak of points that read, and no point of this run only reads ({mixers} mix reads and writes: their peak needs the write figure too)"
            ),
            &format!(
                "add {}, give the write figure too, or drop it",
                named(DiskWorkload::only_reads, false)
            ),
        )?;
        given.refuse_unless(
            writes || (mixed && both),
            &[write_id],
            &format!(
                "is the peak of points that write, and no point of this run only writes ({mixers} mix reads and writes: their peak needs the read figure too)"
            ),
            &format!(
                "add {}, give the read figure too, or drop it",
                named(DiskWorkload::only_writes, false)
            ),
        )?;
    }
    Ok(())
}
