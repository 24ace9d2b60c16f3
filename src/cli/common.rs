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
    pub fn of(m: &clap::ArgMatches) -> Given {
        Given(
            m.ids()
                .filter(|id| {
                    m.value_source(id.as_str()) == Some(clap::parser::ValueSource::CommandLine)
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

#[derive(Debug, Clone, Args)]
pub struct OutputArgs {
    /// Write the results as JSON (schema: docs/json-schema.md) to FILE, or `-` for stdout.
    #[arg(short = 'o', long, value_name = "FILE")]
    pub json: Option<PathBuf>,
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
    /// Also run the standard tool of each point where one applies (likwid-bench, STREAM, fio,
    /// iperf3, sockperf; `peakbench reference check` lists them) and show its figure beside.
    #[arg(long)]
    pub reference: bool,
    /// Do not store the run in the results database.
    #[arg(long)]
    pub no_history: bool,
    #[command(flatten)]
    pub db: DbArgs,
    #[command(flatten)]
    pub display: DisplayArgs,
    /// The options of the whole command line that were given (set after parsing).
    #[arg(skip)]
    pub given: Given,
    /// How `run --budget` fits a job in time (set after parsing; none for one command).
    #[arg(skip)]
    pub fit: Fit,
}

/// How a job of `run --budget` is shortened: its durations (measured time, warm-up, ramp,
/// omit) × `time_scale`, down to each subsystem's floor, its repetitions at most
/// `max_repeat`, and with `--reference` each tool's runs per point at most `reference_runs`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fit {
    pub time_scale: f64,
    pub max_repeat: Option<usize>,
    /// Runs of each reference tool per point (`None`: as many as the point's repetitions).
    pub reference_runs: Option<usize>,
    /// The longest run of a reference tool (`None`: any).
    pub reference_longest: Option<std::time::Duration>,
}

/// How long a tool that sets its own time (likwid-bench, mbw) measures once tools run once a
/// point to fit a budget.
pub const FITTED_TOOL_TIME: std::time::Duration = std::time::Duration::from_millis(250);

impl Fit {
    /// What the reference tools may take under this fit.
    pub fn reference_limits(&self) -> crate::reference::Limits {
        crate::reference::Limits {
            runs: self.reference_runs.unwrap_or(crate::reference::MAX_RUNS),
            longest: self.reference_longest,
            own_time: self.reference_runs.map(|_| FITTED_TOOL_TIME),
            others: self.reference_runs.is_none(),
        }
    }
}

impl Default for Fit {
    fn default() -> Fit {
        Fit {
            time_scale: 1.0,
            max_repeat: None,
            reference_runs: None,
            reference_longest: None,
        }
    }
}

impl Fit {
    /// `d` scaled, not below `floor` (nor above `d`).
    pub fn time(&self, d: std::time::Duration, floor: std::time::Duration) -> std::time::Duration {
        if self.time_scale >= 1.0 {
            return d;
        }
        d.mul_f64(self.time_scale.max(0.0)).max(floor.min(d))
    }

    /// A fixed amount of work (`--total-ops`, `--total-bytes`) scaled as times are, not below
    /// `floor` (nor above `n`).
    pub fn work(&self, n: Option<u64>, floor: u64) -> Option<u64> {
        let n = n?;
        if self.time_scale >= 1.0 {
            return Some(n);
        }
        Some(((n as f64 * self.time_scale.max(0.0)) as u64).max(floor.min(n)))
    }

    /// `repeat` capped.
    pub fn repeat(&self, repeat: usize) -> usize {
        self.max_repeat.map_or(repeat, |m| repeat.min(m))
    }
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

/// Parses a positive finite number.
pub fn parse_positive(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        _ => Err(format!("'{s}' is not a positive number")),
    }
}

/// Parses `NAME=VALUE` where NAME parses as `T` and VALUE is a positive number.
pub fn parse_assignment<T: std::str::FromStr<Err = String>>(s: &str) -> Result<(T, f64), String> {
    let (name, value) = s
        .split_once('=')
        .ok_or_else(|| format!("'{s}' is not WORKLOAD=VALUE, e.g. DP=16"))?;
    Ok((name.parse()?, parse_positive(value)?))
}

/// Where the database is: `--db` (or PEAKBENCH_DB), else the user's data directory.
#[derive(Debug, Clone, Args)]
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
pub fn read_json(path: &Path, limit: u64) -> anyhow::Result<Report> {
    let bytes = crate::files::read_input(path, limit, "raise the limit with --max-input SIZE")
        .map_err(|e| UsageError(e.to_string()))?;
    Report::from_json(&bytes).map_err(|e| UsageError(format!("{}: {e}", path.display())).into())
}

/// Whether `input` names a run of the database (`12`, `latest`, `latest~2`) rather than a file.
fn is_run_id(input: &str) -> bool {
    let s = input.trim();
    let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
    digits(s) || s == "latest" || s.strip_prefix("latest~").is_some_and(digits)
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
