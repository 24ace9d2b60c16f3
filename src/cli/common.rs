//! Options shared by the benchmark subcommands, their parsers, and the outputs they write.

use crate::app::Outputs;
use crate::history::{self, Store};
use crate::results::Report;
use crate::units;
use clap::Args;
use std::path::{Path, PathBuf};

pub use crate::error::UsageError;

/// The options a command line gave itself, by their ids (the field names): not defaults, not
/// the environment. An option that applies to none of the points measured is refused, but
/// only when it was given (a default applies where it applies).
#[derive(Debug, Clone, Default)]
pub struct Given(std::collections::BTreeSet<String>);

impl Given {
    /// The options of subcommand `options` that its matches `m` took from the command line
    /// (its options only: not the groups clap makes of each flattened set of them).
    pub fn of(m: &clap::ArgMatches, options: &clap::Command) -> Given {
        Given(
            m.ids()
                .filter(|id| {
                    m.value_source(id.as_str()) == Some(clap::parser::ValueSource::CommandLine)
                        && options.get_arguments().any(|a| a.get_id() == *id)
                })
                .map(|id| id.to_string())
                .collect(),
        )
    }

    /// Forgets option `key` (as a profile writes it, `block-size`): a profile's [defaults]
    /// apply to a job where they apply, as defaults do.
    pub fn forget(&mut self, key: &str) {
        self.0.remove(&key.replace('-', "_"));
    }

    /// Counts option `key` (as a profile writes it) as given, as a fitted one is.
    pub fn note(&mut self, key: &str) {
        self.0.insert(key.replace('-', "_"));
    }

    /// Whether option `id` (its field name, e.g. `block_size`) was on the command line.
    pub fn has(&self, id: &str) -> bool {
        self.0.contains(id)
    }

    /// The first of `ids` on the command line, as users type it (`--block-size`).
    pub fn first(&self, ids: &[&str]) -> Option<String> {
        ids.iter()
            .find(|id| self.has(id))
            .map(|id| format!("--{}", id.replace('_', "-")))
    }

    /// The first option on the command line other than `id`, as users type it.
    pub fn other_than(&self, id: &str) -> Option<String> {
        self.0
            .iter()
            .find(|given| given.as_str() != id)
            .map(|given| format!("--{}", given.replace('_', "-")))
    }

    /// Refuses the first option given that no workload of `chosen` (all of `subsystem`) uses,
    /// by its row of the options' table, in the table's order (an option accepted is used or
    /// refused, never ignored).
    pub fn refuse_unused_by(
        &self,
        subsystem: crate::results::Subsystem,
        chosen: &[crate::app::workloads::Workload],
    ) -> Result<(), UsageError> {
        for row in crate::app::workloads::options::rows(subsystem) {
            let given = row.names.iter().find(|n| self.has(&n.replace('-', "_")));
            if let Some(why) = given.and_then(|n| row.refusal(n, chosen)) {
                return Err(UsageError(why));
            }
        }
        Ok(())
    }

    /// Refuses the first of `ids` given where `applies` is false: "`--X` `what`: `fix`".
    pub fn refuse_unless(
        &self,
        applies: bool,
        ids: &[&str],
        what: &str,
        fix: &str,
    ) -> Result<(), UsageError> {
        match self.first(ids) {
            Some(option) if !applies => Err(UsageError(format!("{option} {what}: {fix}"))),
            _ => Ok(()),
        }
    }
}

/// The help of a subsystem's `--workload`, from its workloads' specs: each name with what it
/// measures, and (`with_default`, where clap does not show a default of its own) those run
/// when none is named.
pub fn workload_help(subsystem: crate::results::Subsystem, with_default: bool) -> String {
    let specs = crate::app::workloads::registry::of(subsystem);
    let each: Vec<String> = specs
        .iter()
        .map(|s| format!("{}: {}", s.name, s.what))
        .collect();
    let mut help = format!("Workloads: {}", each.join("; "));
    if with_default {
        let defaults: Vec<&str> = specs.iter().filter(|s| s.default).map(|s| s.name).collect();
        help.push_str(&format!(". Default: {}", defaults.join(",")));
    }
    help
}

#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    /// Timed repetitions of every point (after the warm-up).
    #[arg(long, default_value = "3", value_parser = parse_repeat)]
    pub repeat: usize,
    /// Untimed warm-up rounds before the repetitions.
    #[arg(long, default_value = "1", value_parser = parse_warmup)]
    pub warmup: usize,
    /// Target time of one repetition, e.g. 200ms or 1s (mem LATENCY: of each staircase step
    /// and probe, 25ms unless given).
    #[arg(long, default_value = "250ms", value_parser = parse_duration)]
    pub duration: std::time::Duration,
    #[command(flatten)]
    pub precision: PrecisionArgs,
}

/// The defaults the command line gives (`default_value` above; a test of `cli` holds them
/// equal): a job made in code starts from them.
impl Default for RunArgs {
    fn default() -> RunArgs {
        RunArgs {
            repeat: 3,
            warmup: 1,
            duration: std::time::Duration::from_millis(250),
            precision: PrecisionArgs::default(),
        }
    }
}

/// `--precision` and `--max-repeat`: a point's repetitions chosen from its spread.
#[derive(Debug, Clone, Default, Args)]
pub struct PrecisionArgs {
    /// Measure a point again, with as many repetitions as its first measurement's spread says
    /// it takes, until its mean's 95 % interval is within this share
    /// of the mean (e.g. 2%: ±2 %; 0.1% to 50%); --repeat is the first measurement's, at
    /// least 2. The record keeps the last measurement and says what was reached.
    #[arg(long, value_name = "PERCENT", value_parser = crate::measure::precision::parse_target)]
    pub precision: Option<f64>,
    /// With --precision: the most timed repetitions of a point, all its measurements together
    /// (2 to 1000; default 50).
    #[arg(long, value_name = "N", requires = "precision", value_parser = parse_max_repeat)]
    pub max_repeat: Option<usize>,
}

impl PrecisionArgs {
    /// What `--precision` asks, checked against the first measurement's `repeat`.
    pub fn precision(
        &self,
        repeat: usize,
    ) -> Result<Option<crate::measure::precision::Precision>, UsageError> {
        let Some(target) = self.precision else {
            return Ok(None);
        };
        let max_repeat = self
            .max_repeat
            .unwrap_or(crate::measure::precision::DEFAULT_MAX_REPEAT);
        if repeat < 2 {
            return Err(UsageError(format!(
                "--precision judges a point by the interval of its first measurement, which --repeat {repeat} does not give: use --repeat 2 or more"
            )));
        }
        if max_repeat < repeat {
            return Err(UsageError(format!(
                "--max-repeat {max_repeat} is below --repeat {repeat}, the first measurement's: raise --max-repeat or lower --repeat"
            )));
        }
        Ok(Some(crate::measure::precision::Precision {
            target,
            max_repeat,
        }))
    }
}

pub fn parse_max_repeat(s: &str) -> Result<usize, String> {
    count_in(s, 2, 1000)
}

/// How figures are printed. Records always store base units (op/s, B/s, bit/s, s); these
/// options change only the tables, CSV, Markdown, HTML and charts.
#[derive(Debug, Clone, Copy, Default, Args)]
pub struct DisplayArgs {
    /// Print disk throughput in MiB/s instead of MB/s.
    #[arg(long)]
    pub mib: bool,
    /// Print network goodput in Gbit/s instead of Mbit/s.
    #[arg(long)]
    pub gbit: bool,
}

impl DisplayArgs {
    pub fn display(&self) -> units::Display {
        units::Display {
            mib: self.mib,
            gbit: self.gbit,
            ..Default::default()
        }
    }
}

#[derive(Debug, Clone, Default, Args)]
pub struct OutputArgs {
    /// Write the results as JSON (schema: docs/json-schema.md) to FILE, or `-` for stdout.
    #[arg(short = 'o', long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write the run as it happens to FILE (or - for stdout) as NDJSON, one event a line, each
    /// flushed at once: its start with the system information, each point's intervals and
    /// record as soon as it is measured, its end (iperf3's --json-stream)
    #[arg(long, value_name = "FILE")]
    pub json_stream: Option<PathBuf>,
    /// Write the results as CSV to FILE, or `-` for stdout: one row per point, each parameter
    /// in its own column (for pandas and R).
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
    /// The --csv file has one row per repetition (repetition, value) instead of one per point.
    #[arg(long, requires = "csv")]
    pub csv_samples: bool,
    /// Write the results as Markdown to FILE, or `-` for stdout.
    #[arg(long, value_name = "FILE")]
    pub markdown: Option<PathBuf>,
    /// Write a self-contained HTML report with charts to FILE, or `-` for stdout.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// No progress bar and no table on the terminal: one line saying where the results are
    /// (the run stored, the files written).
    #[arg(short = 'q', long, conflicts_with = "verbose")]
    pub quiet: bool,
    /// Print every row of every table, the notes and the peaks' formulas instead of the
    /// summary, and every point on standard error as it is measured: its parameters, mean,
    /// spread and each repetition.
    #[arg(short = 'v', long)]
    pub verbose: bool,
    /// Also run the standard tool of each point where one applies (`peakbench reference check`
    /// lists them and what each measures) and show its figure beside.
    #[arg(long)]
    pub reference: bool,
    /// Do not store the run in the results database.
    #[arg(long)]
    pub no_history: bool,
    /// Measure a point again, up to twice, where another process or the hypervisor took the
    /// machine while it ran (its noise shows a co-runner or steal); the last try is kept.
    #[arg(long)]
    pub strict: bool,
    #[command(flatten)]
    pub db: DbArgs,
    #[command(flatten)]
    pub display: DisplayArgs,
    /// The options of the whole command line that were given (set after parsing).
    #[arg(skip)]
    pub given: Given,
}

impl OutputArgs {
    /// The outputs these options choose.
    pub fn outputs(&self) -> Outputs {
        Outputs {
            json: self.json.clone(),
            csv: self.csv.clone(),
            csv_samples: self.csv_samples,
            markdown: self.markdown.clone(),
            html: self.html.clone(),
            quiet: self.quiet,
            verbose: self.verbose,
            reference: self.reference,
            history: !self.no_history,
            db: self.db.db.clone(),
            display: self.display.display(),
            strict: self.strict,
            json_stream: self.json_stream.clone(),
        }
    }

    /// Checks that each output file can be created before any benchmark runs.
    pub fn validate(&self) -> anyhow::Result<()> {
        self.given.refuse_unless(
            !self.no_history,
            &["db"],
            "names the results database, and --no-history stores nothing",
            "drop one of them",
        )?;
        self.outputs().validate()
    }

    /// Refuses `--mib` and `--gbit` where the command measures nothing they show: `--mib`
    /// shows disk throughput, `--gbit` network goodput.
    pub fn refuse_display(&self, disk_throughput: bool, goodput: bool) -> Result<(), UsageError> {
        self.given.refuse_unless(
            disk_throughput,
            &["mib"],
            "shows disk throughput in MiB/s, and this command measures none",
            "drop --mib",
        )?;
        self.given.refuse_unless(
            goodput,
            &["gbit"],
            "shows network goodput (THROUGHPUT) in Gbit/s, and this command measures none",
            "drop --gbit",
        )
    }
}

/// A count within `lo..=hi` as the integer type a value parser returns (the range keeps it in
/// that type); the message says what is wrong.
pub fn count_in<T: TryFrom<u64>>(s: &str, lo: u64, hi: u64) -> Result<T, String> {
    let n = units::parse_count(s, lo, hi).map_err(|e| e.to_string())?;
    T::try_from(n).map_err(|_| format!("'{s}' is out of range: {lo} to {hi}"))
}

/// A list of counts as a user types it (`--threads`, `--streams`, `--iodepth`): counts and
/// ranges separated by commas — `1,2,4`, `1..8` (every count from 1 to 8), `all` (the CPUs this
/// process may run on), `1..all` — each within the option's bounds; a point is measured for
/// each, in the order given.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Counts(pub Vec<usize>);

impl std::ops::Deref for Counts {
    type Target = Vec<usize>;
    fn deref(&self) -> &Vec<usize> {
        &self.0
    }
}

/// The most counts one list may hold.
const MAX_COUNTS: usize = 4096;

/// The CPUs this process may run on (its affinity and cgroup quota), for `all`.
fn all_cpus() -> u64 {
    std::thread::available_parallelism().map_or(1, |n| n.get() as u64)
}

/// Parses a [`Counts`] list whose counts lie within `lo..=hi`; `all` is the CPUs, capped at
/// `hi`.
pub fn parse_counts(s: &str, lo: u64, hi: u64) -> Result<Counts, String> {
    let one = |t: &str| -> Result<u64, String> {
        if t.trim().eq_ignore_ascii_case("all") {
            return Ok(all_cpus().clamp(lo, hi));
        }
        units::parse_count(t.trim(), lo, hi).map_err(|e| e.to_string())
    };
    let mut out = Vec::new();
    for item in s.split(',') {
        if item.trim().is_empty() {
            return Err(format!(
                "'{s}' has an empty entry; give counts or ranges separated by commas, e.g. 1,2,4 or 1..8"
            ));
        }
        let (a, b) = match item.split_once("..") {
            Some((a, b)) => (one(a)?, one(b)?),
            None => {
                let n = one(item)?;
                (n, n)
            }
        };
        if a > b {
            return Err(format!(
                "'{item}' is an empty range; write the smaller count first, e.g. 1..8"
            ));
        }
        if out.len() as u64 + (b - a + 1) > MAX_COUNTS as u64 {
            return Err(format!(
                "'{s}' names more than {MAX_COUNTS} counts; sweep fewer"
            ));
        }
        out.extend((a..=b).map(|n| n as usize));
    }
    Ok(Counts(out))
}

/// `--threads` of cpu and mem: 1…4096.
pub fn parse_thread_counts(s: &str) -> Result<Counts, String> {
    parse_counts(s, 1, 4096)
}

pub fn parse_repeat(s: &str) -> Result<usize, String> {
    count_in(s, 1, 1000)
}

pub fn parse_warmup(s: &str) -> Result<usize, String> {
    count_in(s, 0, 100)
}

/// A duration of at most 600 s (one repetition, or one wait).
pub fn parse_duration(s: &str) -> Result<std::time::Duration, String> {
    units::parse_duration_within(
        s,
        std::time::Duration::from_secs(600),
        "600s per repetition",
    )
    .map_err(|e| e.to_string())
}

/// The shortest `--sustain`: twenty intervals of 50 ms.
pub const MIN_SUSTAIN: std::time::Duration = std::time::Duration::from_secs(1);

/// A sustained repetition's longest time (`--sustain`): [`MIN_SUSTAIN`] to 10 hours (the
/// steady watch's [`crate::measure::timeline::MAX_INTERVALS`] of 1 s).
pub fn parse_sustain(s: &str) -> Result<std::time::Duration, String> {
    let most = std::time::Duration::from_secs(36_000);
    let d = units::parse_duration_within(s, most, "10h").map_err(|e| e.to_string())?;
    if d < MIN_SUSTAIN {
        return Err(format!(
            "'{s}' is no time to reach a steady state in: give 1s to 10h"
        ));
    }
    Ok(d)
}

/// The most bytes `--total-bytes` (disk, mem) may give one repetition: 1 PiB, as a network
/// stream's fixed amount (`bench::net::params::limits::MAX_AMOUNT_BYTES`). At the fastest
/// memory's few TB/s that is minutes; at a disk's GB/s, days (the check of the request then
/// refuses it by its estimate, [`crate::bench::MAX_WORK_TIME`]).
pub const MAX_TOTAL_BYTES: u64 = 1 << 50;

/// The most operations `--total-ops` (cpu) may give one repetition: 10¹⁸. A core runs at
/// most a few hundred billion operations a second (10¹¹·⁵), so that even a thousand of them
/// together (weak scaling gives each thread all of it anyway) take about an hour; no machine
/// runs through 10¹⁸ in a day on one thread, and the check of the request refuses what its
/// estimate puts beyond [`crate::bench::MAX_WORK_TIME`].
pub const MAX_TOTAL_OPS: u64 = 1_000_000_000_000_000_000;

/// `--total-bytes`: a size of at most [`MAX_TOTAL_BYTES`].
pub fn parse_total_bytes(s: &str) -> Result<u64, String> {
    let range = || format!("'{s}' is out of range: at most 1024T (1 PiB) a repetition");
    match units::parse_size(s) {
        Ok(n) if n <= MAX_TOTAL_BYTES => Ok(n),
        // Beyond 2^64 − 1 too, with this option's bound.
        Ok(_) | Err(units::ParseError::Range(..)) => Err(range()),
        Err(e) => Err(e.to_string()),
    }
}

/// Parses a positive finite number.
pub fn parse_positive(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        _ => Err(format!("'{s}' is not a positive number")),
    }
}

/// Parses `NAME=VALUE` where NAME parses as `T` and VALUE is a number within `bound`.
pub fn parse_assignment<T: std::str::FromStr<Err = String>>(
    s: &str,
    bound: &Bound,
) -> Result<(T, f64), String> {
    let (name, value) = s
        .split_once('=')
        .ok_or_else(|| format!("'{s}' is not WORKLOAD=VALUE, e.g. DP=16"))?;
    Ok((name.parse()?, bound.parse(value)?))
}

/// The range of a theoretical input given on the command line (a clock, a rated figure, a
/// peak): what any machine of the coming decade can have, with a wide margin. Within these,
/// every peak computed from such inputs, and every efficiency against it, is a finite number
/// (see [`bounds`]); beyond them a typo or an attack would overflow to infinity, which JSON
/// cannot hold.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bound {
    /// The least value (above 0).
    pub lo: f64,
    /// The greatest value.
    pub hi: f64,
    /// What the number is, as the error says it ("a core clock in GHz").
    pub what: &'static str,
}

impl Bound {
    /// `lo` to `hi` as the help and the errors say it ("0.01 to 20").
    pub fn range(&self) -> String {
        format!("{} to {}", self.lo, self.hi)
    }

    /// The value parser of an option with this bound.
    pub fn parser(self) -> impl Fn(&str) -> Result<f64, String> + Clone + Send + Sync + 'static {
        move |s| self.parse(s)
    }

    /// Parses a number within the bound: one line quoting `s` otherwise ("not a positive
    /// number", or "out of range" with the range).
    pub fn parse(&self, s: &str) -> Result<f64, String> {
        let v = match s.trim().parse::<f64>() {
            // NaN fails the comparison; +∞ passes it and is out of range below.
            Ok(v) if v > 0.0 => v,
            _ => return Err(format!("'{s}' is not a positive number")),
        };
        if (self.lo..=self.hi).contains(&v) {
            Ok(v)
        } else {
            Err(format!(
                "'{s}' is out of range for {}: give {}",
                self.what,
                self.range()
            ))
        }
    }
}

/// Every theoretical input's range, in one place (the help of each option says its range).
///
/// The largest peak they allow is far from overflowing: a CPU peak is at most 4096 cores ×
/// 20 GHz × 10⁵ operations a cycle ≈ 10¹⁰ GOPS (or 4096 × 10⁶ GOPS per core ≈ 4·10⁹ GOPS), and
/// in base units (×10⁹) ≈ 10¹⁹ op/s, against f64's 1.8·10³⁰⁸; the least is no smaller than
/// 10⁻⁵ GOPS, so a measured figure over it stays finite too. The same holds for memory, disks
/// and links.
pub mod bounds {
    use super::Bound;

    /// The fastest cores shipped boost to about 6 GHz and overclocking records reach about
    /// 9 GHz: 20 GHz leaves a margin; 10 MHz is below any core that runs Linux.
    pub const CLOCK_GHZ: Bound = Bound {
        lo: 0.01,
        hi: 20.0,
        what: "a core clock in GHz",
    };
    /// A core's operations a cycle: Intel AMX does 2048 int8 operations a cycle per core
    /// (1024 multiply-adds), the most of any core today; 10⁵ leaves fifty times that. The
    /// least, one operation every thousand cycles, is slower than any divider.
    pub const OPS_PER_CYCLE: Bound = Bound {
        lo: 0.001,
        hi: 1e5,
        what: "operations per cycle per core",
    };
    /// A core's peak in GOPS: AMX at 2048 operations a cycle and 4 GHz is about 8·10³ GOPS;
    /// 10⁶ (a POPS a core) leaves a hundred times that; the least is a million operations a
    /// second.
    pub const CPU_PEAK_GOPS: Bound = Bound {
        lo: 0.001,
        hi: 1e6,
        what: "a peak in GOPS per core",
    };
    /// A machine's memory bandwidth: two sockets of 12 DDR5-8800 channels give about
    /// 1.7·10³ GB/s, an HBM3e package about 8·10³; 10⁵ GB/s (100 TB/s) is over ten times
    /// either. The least is below one channel of DDR-200 (1.6 GB/s).
    pub const MEM_PEAK_GBS: Bound = Bound {
        lo: 0.01,
        hi: 1e5,
        what: "a memory bandwidth in GB/s",
    };
    /// A load from memory takes 50–150 ns on DRAM, a few hundred ns on CXL or a remote
    /// socket: 1 ns to 100 µs covers any memory with a wide margin.
    pub const MEM_LATENCY_NS: Bound = Bound {
        lo: 1.0,
        hi: 1e5,
        what: "a memory latency in ns",
    };
    /// DDR5 reaches 8800 MT/s (MRDIMMs a little more); DDR-200 was the slowest.
    pub const MEM_MTS: Bound = Bound {
        lo: 100.0,
        hi: 100_000.0,
        what: "a transfer rate in MT/s",
    };
    /// CAS latencies run from 2 (SDRAM) to about 60 cycles (fast DDR5).
    pub const MEM_CL: Bound = Bound {
        lo: 1.0,
        hi: 200.0,
        what: "a CAS latency in cycles",
    };
    /// A device's sequential throughput: a PCIe 6.0 x16 device moves about 1.3·10⁵ MB/s;
    /// 10⁶ MB/s (1 TB/s, an array behind one block device) is more; the least is a floppy's.
    pub const DISK_MBPS: Bound = Bound {
        lo: 0.01,
        hi: 1e6,
        what: "a throughput in MB/s",
    };
    /// A device's random IOPS: the fastest NVMe devices do a few million, a RAM disk tens of
    /// millions; 10⁹ is more than any; the least is a tape's.
    pub const DISK_IOPS: Bound = Bound {
        lo: 0.01,
        hi: 1e9,
        what: "an IOPS figure",
    };
    /// One I/O's access latency: about 10 µs for the fastest flash, 4–15 ms for a spinning
    /// disk, a minute or so for a tape: 0.01 µs to 100 s.
    pub const DISK_LATENCY_US: Bound = Bound {
        lo: 0.01,
        hi: 1e8,
        what: "an access latency in µs",
    };
    /// Spindles turn at 4200–15000 rpm.
    pub const RPM: Bound = Bound {
        lo: 100.0,
        hi: 100_000.0,
        what: "a spindle speed in rpm",
    };
    /// Average seeks take 2–15 ms on a disk, about 100 ms on an optical drive.
    pub const SEEK_MS: Bound = Bound {
        lo: 0.001,
        hi: 100_000.0,
        what: "a seek time in ms",
    };
    /// Links run at up to 800 Gbit/s (1.6 Tbit/s coming): 100 Tbit/s is over fifty times the
    /// fastest; the least is 1 Mbit/s.
    pub const LINK_GBPS: Bound = Bound {
        lo: 0.001,
        hi: 100_000.0,
        what: "a link speed in Gbit/s",
    };
}

/// A path's one-way propagation delay in µs (`net`, `peak`): 0 (loopback) to 10 s, farther
/// than a geostationary satellite's round trip.
pub fn parse_propagation(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if (0.0..=1e7).contains(&v) => Ok(v),
        _ => Err(format!(
            "'{s}' is not a propagation delay: give µs from 0 to 10000000"
        )),
    }
}

/// Where the database is: `--db` (or PEAKBENCH_DB), else the user's data directory.
#[derive(Debug, Clone, Default, Args)]
pub struct DbArgs {
    /// The results database (SQLite). Default: $XDG_DATA_HOME/peakbench/history.db or
    /// ~/.local/share/peakbench/history.db.
    #[arg(long, value_name = "FILE", env = "PEAKBENCH_DB")]
    pub db: Option<PathBuf>,
}

impl DbArgs {
    pub fn path(&self) -> anyhow::Result<PathBuf> {
        history::db_path(self.db.as_deref())
    }

    /// The database for writing (see [`history::open`]).
    pub fn open(&self) -> anyhow::Result<Store> {
        history::open(self.db.as_deref())
    }

    /// The database for reading only (listing, comparing, reporting).
    pub fn open_read_only(&self) -> anyhow::Result<Store> {
        Store::open_read_only(&self.path()?)
    }
}

pub fn parse_alpha(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v > 0.0 && v < 1.0 => Ok(v),
        _ => Err(format!(
            "'{s}' is not a significance level between 0 and 1, e.g. 0.05"
        )),
    }
}

/// How large an input document may be.
#[derive(Debug, Clone, Copy, Args)]
pub struct InputArgs {
    /// The largest JSON document read (a regular file only), e.g. 1Gi.
    #[arg(long, value_name = "SIZE", value_parser = parse_input_size, default_value = "256Mi")]
    pub max_input: u64,
}

fn parse_input_size(s: &str) -> Result<u64, String> {
    crate::units::parse_size(s).map_err(|e| e.to_string())
}

/// Reads a JSON document written by `--json` (any schema version this peakbench reads): a
/// regular file of at most `limit` bytes.
/// [`read_json`], refusing a document changed since peakbench wrote it (its content hash):
/// "cannot {doing} FILE: why; {what_to_do}".
pub fn read_as_written(
    path: &Path,
    limit: u64,
    doing: &str,
    what_to_do: &str,
) -> anyhow::Result<Report> {
    let report = read_json(path, limit)?;
    report.check_sha256().map_err(|e| {
        UsageError(format!(
            "cannot {doing} {}: {e}; {what_to_do}",
            crate::text::printable(&path.display().to_string())
        ))
    })?;
    Ok(report)
}

pub fn read_json(path: &Path, limit: u64) -> anyhow::Result<Report> {
    let bytes = crate::files::read_input(path, limit, "raise the limit with --max-input SIZE")
        .map_err(|e| UsageError(e.to_string()))?;
    Report::from_json(&bytes).map_err(|e| UsageError(format!("{}: {e}", path.display())).into())
}

/// Whether `input` names a run of the database (`12`, `latest`, `latest~2`) rather than a file.
pub fn is_run_id(input: &str) -> bool {
    let s = input.trim();
    let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
    digits(s) || s == "latest" || s.strip_prefix("latest~").is_some_and(digits)
}

/// The id of the run `input` names in `store`, where it names one of the database's (as
/// [`load_run`] reads it) rather than a file.
pub fn stored_id(input: &str, store: &Store) -> Option<i64> {
    (is_run_id(input) && !Path::new(input).is_file())
        .then(|| store.resolve(input).ok())
        .flatten()
}

/// A run named on the command line: a run of the database (id, latest, latest~N), or a JSON
/// document written by `--json`.
pub fn load_run(input: &str, db: &DbArgs, limit: &InputArgs) -> anyhow::Result<Report> {
    if !is_run_id(input) || Path::new(input).is_file() {
        return read_json(Path::new(input), limit.max_input);
    }
    let store = db.open_read_only()?;
    let id = store.resolve(input)?;
    store.load(id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::duration_arg;

    /// A duration as a command line gives it, exactly; a fitted time is whole milliseconds.
    #[test]
    fn fitted_times_are_written_exactly() {
        use std::time::Duration;
        assert_eq!(duration_arg(Duration::from_secs(2)), "2s");
        assert_eq!(duration_arg(Duration::from_millis(1250)), "1250ms");
        assert_eq!(duration_arg(Duration::from_micros(40)), "40us");
        assert_eq!(duration_arg(Duration::from_nanos(7)), "7ns");
        assert_eq!(duration_arg(Duration::ZERO), "0s");
        for d in ["2s", "1250ms", "40us", "7ns"] {
            assert_eq!(duration_arg(parse_duration(d).unwrap()), d);
        }
    }
    use proptest::prelude::*;

    /// The command line's own bounds are said, whatever the number's size.
    #[test]
    fn overflow_is_out_of_range_on_the_command_line() {
        assert_eq!(
            parse_duration("99999999999999999999s").unwrap_err(),
            "'99999999999999999999s' is out of range: at most 600s per repetition"
        );
        assert_eq!(
            parse_duration("601s").unwrap_err(),
            "'601s' is out of range: at most 600s per repetition"
        );
        assert_eq!(
            parse_duration("600s"),
            Ok(std::time::Duration::from_secs(600))
        );
        assert_eq!(
            parse_thread_counts("18446744073709551616").unwrap_err(),
            "'18446744073709551616' is out of range: must be between 1 and 4096"
        );
    }

    #[test]
    fn counts_take_lists_ranges_and_all() {
        assert_eq!(parse_counts("1,2,4", 1, 64).unwrap().0, vec![1, 2, 4]);
        assert_eq!(
            parse_counts("1..4,8", 1, 64).unwrap().0,
            vec![1, 2, 3, 4, 8]
        );
        let all = all_cpus().min(64) as usize;
        assert_eq!(parse_counts("all", 1, 64).unwrap().0, vec![all]);
        assert_eq!(parse_counts("1..all", 1, 64).unwrap().len(), all);
        assert_eq!(parse_counts(" 2 .. 3 ", 1, 64).unwrap().0, vec![2, 3]);
        for bad in [
            "", "1,,2", "4..1", "0..2", "1..65", "x", "1..", "..3", "1..2..3",
        ] {
            let e = parse_counts(bad, 1, 64).unwrap_err();
            assert!(!e.contains('\n'), "{bad}: {e}");
        }
        assert!(
            parse_counts("1..4096,1", 1, 4096)
                .unwrap_err()
                .contains("more than")
        );
    }

    /// A theoretical input beyond what a machine can have (1e308, +∞, 1e-300) is refused in one
    /// line that says the range; the range's ends are accepted.
    #[test]
    fn a_theoretical_input_is_bounded_to_a_machine() {
        let b = bounds::CLOCK_GHZ;
        assert_eq!(
            b.parse("1e308").unwrap_err(),
            "'1e308' is out of range for a core clock in GHz: give 0.01 to 20"
        );
        for s in ["inf", "1e400", "1e-300", "20.5", "0.001"] {
            let e = b.parse(s).unwrap_err();
            assert!(e.starts_with(&format!("'{s}' is out of range")), "{e}");
        }
        for s in ["0", "-1", "NaN", "-inf", "x", ""] {
            assert_eq!(
                b.parse(s).unwrap_err(),
                format!("'{s}' is not a positive number")
            );
        }
        assert_eq!((b.parse("0.01"), b.parse(" 20 ")), (Ok(0.01), Ok(20.0)));
        assert_eq!(
            parse_assignment::<crate::app::cpu::CpuWorkload>("DP=1e308", &bounds::CPU_PEAK_GOPS)
                .unwrap_err(),
            "'1e308' is out of range for a peak in GOPS per core: give 0.001 to 1000000"
        );
        assert_eq!(
            parse_assignment("DP=57.6", &bounds::CPU_PEAK_GOPS),
            Ok((crate::app::cpu::CpuWorkload::Dp, 57.6))
        );
        assert!(parse_propagation("inf").is_err() && parse_propagation("NaN").is_err());
        assert_eq!(parse_propagation("0"), Ok(0.0));
    }

    /// The largest and the least CPU peak the bounds allow, in base units (op/s), and a
    /// measured figure against them, are finite: what the bounds are for.
    #[test]
    fn the_bounds_keep_every_peak_finite() {
        use bounds::*;
        let most = [
            4096.0 * CLOCK_GHZ.hi * OPS_PER_CYCLE.hi * 1e9,
            4096.0 * 64.0 * CPU_PEAK_GOPS.hi * 1e9,
            MEM_PEAK_GBS.hi * 1e9,
            DISK_MBPS.hi * 1e6,
            DISK_IOPS.hi,
            LINK_GBPS.hi * 1e9,
        ];
        let least = CLOCK_GHZ.lo * OPS_PER_CYCLE.lo * 1e9;
        for p in most {
            assert!(p.is_finite() && p < 1e30, "{p}");
            // A measured figure a thousand times a peak, or the least, stays finite.
            assert!((p * 1e3 / least).is_finite());
        }
    }

    /// Every option that gives a theoretical input has its bound, and its help says the range.
    #[test]
    fn each_bounded_option_says_its_range() {
        use bounds::*;
        use clap::CommandFactory;
        let cli = crate::cli::Cli::command();
        let disk = [
            ("disk-peak-read-mbps", DISK_MBPS),
            ("disk-peak-write-mbps", DISK_MBPS),
            ("disk-peak-read-iops", DISK_IOPS),
            ("disk-peak-write-iops", DISK_IOPS),
            ("disk-latency-us", DISK_LATENCY_US),
            ("rpm", RPM),
            ("seek-ms", SEEK_MS),
        ];
        let mut cases = vec![
            ("cpu", "clock-ghz", CLOCK_GHZ),
            ("cpu", "ops-per-cycle", OPS_PER_CYCLE),
            ("cpu", "peak", CPU_PEAK_GOPS),
            ("mem", "mem-peak-gbs", MEM_PEAK_GBS),
            ("mem", "mem-latency-ns", MEM_LATENCY_NS),
            ("mem", "mem-mts", MEM_MTS),
            ("mem", "mem-cl", MEM_CL),
            ("net", "link-gbps", LINK_GBPS),
            ("peak", "ghz", CLOCK_GHZ),
            ("peak", "mem-mts", MEM_MTS),
            ("peak", "mem-cl", MEM_CL),
            ("peak", "link-gbps", LINK_GBPS),
        ];
        for (long, b) in disk {
            cases.push(("disk", long, b));
            cases.push(("peak", long, b));
        }
        for (sub, long, b) in cases {
            let arg = cli
                .find_subcommand(sub)
                .and_then(|c| c.get_arguments().find(|a| a.get_long() == Some(long)))
                .unwrap_or_else(|| panic!("{sub} --{long}"));
            let help = arg.get_help().map(|h| h.to_string()).unwrap_or_default();
            let range = b.range();
            assert!(
                help.contains(&range),
                "{sub} --{long}: '{range}' not in: {help}"
            );
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        /// Every parser of a count, a duration or a number answers any text without panicking,
        /// with one line quoting it.
        #[test]
        fn option_parsers_never_panic(s in "[0-9a-zA-Zµ.,= -]{0,40}") {
            let errors = [
                parse_repeat(&s).err(),
                parse_warmup(&s).err(),
                parse_duration(&s).err(),
                parse_positive(&s).err(),
                bounds::CLOCK_GHZ.parse(&s).err(),
                bounds::LINK_GBPS.parse(&s).err(),
            ];
            for e in errors.into_iter().flatten() {
                prop_assert!(e.starts_with(&format!("'{s}' ")), "{}", e);
                prop_assert!(!e.contains('\n'));
            }
            if let Err(e) = parse_thread_counts(&s) {
                prop_assert!(e.starts_with('\'') && !e.contains('\n'), "{}", e);
            }
        }
    }
}
