//! The reference tools: for a point peakbench measured, run the standard tool of its subsystem
//! with equivalent parameters and read its figure in peakbench's unit, so that a report can show
//! both side by side (SPEC §1, §4).
//!
//! One module per tool, each with the same parts: the job a record asks for (`job`; likwid's
//! `cpu_job` and `mem_job`), the command line (`argv`), the run (`run`, bounded in time, its
//! temporary files and servers removed whatever happens), pure parsers of what the tool prints
//! (`parse_*`, tested on recorded outputs in `tests/fixtures/reference/`) and the figure for
//! one record (`figure`).
//!
//! | tool         | records                                   | figure                          |
//! |--------------|-------------------------------------------|---------------------------------|
//! | likwid-bench | cpu DP, SP; mem COPY, TRIAD               | MFlops/s × 10⁶, MByte/s × 10⁶   |
//! | STREAM       | mem COPY, SCALE, ADD, TRIAD               | Best Rate MB/s × 10⁶            |
//! | hpcc         | cpu LINPACK, DGEMM                        | HPL_Tflops × 10¹², StarDGEMM × P |
//! | hpcc         | mem COPY, SCALE, ADD, TRIAD (its STREAM)  | Single/StarSTREAM GB/s × 10⁹     |
//! | sysbench     | mem RS, WS; RR, WR of 8-byte blocks       | MiB/sec × 2²⁰                   |
//! | mbw          | mem RWS (MCBLOCK: memcpy per block)       | 2 × Copy MiB/s × 2²⁰            |
//! | dd           | disk COPY (a dd per thread at once)       | 2 × bytes copied ÷ s            |
//! | fio          | disk RS, WS, RR, WR, RW; WNEW, REREAD, RB, RSTRIDE | bw_bytes, iops, lat_ns |
//! | iperf3       | net THROUGHPUT (goodput, UDP loss/jitter) | bits_per_second, lost_percent   |
//! | sockperf     | net LATENCY (round trip, rate), per stream | avg-rtt, messages ÷ run time   |
//! | qperf        | net LATENCY under 14 B (sockperf's least)  | 2 × one-way latency, its inverse |
//! | ping         | net LATENCY round trip, ICMP (last resort) | rtt avg                          |
//! | BLIS         | cpu DGEMM, SGEMM (`--blas system`, a child) | its record's op/s               |
//!
//! A tool that is not installed is an error that names the package to install; a tool that
//! fails, hangs or prints something unreadable is an error with its message — never a panic.

pub mod blis;
pub mod dd;
mod figures;
pub mod fileio;
pub mod fio;
pub mod hpcc;
mod interleave;
pub mod iperf3;
pub mod likwid;
mod locate;
pub mod mbw;
pub mod ping;
pub mod plan;
mod process;
pub mod qperf;
pub mod remote;
pub mod sockperf;
pub mod stream;
pub mod sysbench;

use crate::results::Subsystem;
use crate::results::{Reference, ResultRecord};
use figures::checked_figure;
pub use figures::{MAX_TOOL_NUMBER, tool_count, tool_number};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

/// The environment variable naming a STREAM binary (a path, or a name looked up on PATH).
pub const STREAM_ENV: &str = "PEAKBENCH_STREAM";

pub use crate::ids::Tool;
pub use interleave::Interleave;
pub use locate::{Locator, UNAVAILABLE, check, check_with, covers};

/// An installed tool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    pub path: PathBuf,
    /// As the tool states it ("3.33" for fio-3.33), or "unknown" when it would not say.
    pub version: String,
}

/// Whether a tool can be run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Availability {
    Found(Found),
    /// Not on PATH (nor named by PEAKBENCH_STREAM, for STREAM).
    Missing,
    /// Named explicitly (PEAKBENCH_STREAM) but not runnable.
    Unusable {
        path: PathBuf,
        reason: String,
    },
}

/// One line of `peakbench reference check`.
#[derive(Debug, Clone)]
pub struct ToolStatus {
    pub tool: Tool,
    pub name: &'static str,
    pub availability: Availability,
    pub covers: String,
    pub install: &'static str,
}

/// Why a reference figure could not be had.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RefError {
    #[error("{tools} not found: {install}")]
    Missing { tools: String, install: String },
    #[error("{tool} cannot be used: {reason}")]
    Unusable { tool: String, reason: String },
    #[error("{tool} cannot run this point: {reason}")]
    Unsupported { tool: String, reason: String },
    #[error("{tool} did not finish within {seconds:.0} s and was killed")]
    Timeout { tool: String, seconds: f64 },
    #[error("{tool} failed: {message}")]
    Failed { tool: String, message: String },
    #[error("cannot read {tool}'s output: {message}")]
    Parse { tool: String, message: String },
}

impl RefError {
    fn unsupported(tool: Tool, reason: impl Into<String>) -> RefError {
        RefError::Unsupported {
            tool: tool.name().into(),
            reason: reason.into(),
        }
    }

    fn failed(tool: Tool, message: impl Into<String>) -> RefError {
        RefError::Failed {
            tool: tool.name().into(),
            message: message.into(),
        }
    }

    fn parse(tool: Tool, message: impl Into<String>) -> RefError {
        RefError::Parse {
            tool: tool.name().into(),
            message: message.into(),
        }
    }
}

/// What the reference runs need, and what they share: the tools found and each run's outcome,
/// so that the records of one point (disk MB/s, IOPS and latency; net receiver, sender, loss
/// and jitter) cost the tool one run, not one each.
#[derive(Debug)]
pub struct RefContext {
    /// Where fio's temporary file goes: the file system peakbench measured (its `--dir`).
    pub dir: PathBuf,
    /// Measured time of one reference run where the tool takes one (fio, iperf3, sockperf,
    /// likwid-bench's minimum run time); `None`: the record's own (runtime_s, duration_s), and
    /// likwid-bench's default of 1 s.
    pub duration: Option<Duration>,
    /// For COPY, SCALE, ADD and TRIAD, STREAM before likwid-bench and hpcc when it is
    /// installed. likwid-bench and hpcc come first by default because they take the record's
    /// array size; STREAM's is fixed when it is compiled.
    pub prefer_stream: bool,
    /// Where the tools are looked up.
    pub locator: Locator,
    /// The token that a peakbench server on another host asks for before it starts a tool's
    /// servers (`net serve --references --token`): the network run's own.
    pub net_token: Option<String>,
    /// The micro-kernel the system BLAS's own detection chooses on this CPU ("OpenBLAS
    /// Prescott"), asked only when hpcc runs (loading the library starts its threads): the
    /// application, which loads libraries, supplies it; `None` by default.
    pub blas_core: fn() -> Option<String>,
    /// What the tools may take: fewer runs, no long run and shorter ones, to fit a `--budget`
    /// (set as each plan is made, so behind a lock).
    limits: Mutex<Limits>,
    /// fio's file, kept from one run to the next of the same directory and size.
    fio_scratch: Mutex<Option<fio::Scratch>>,
    fileio_scratch: Mutex<Option<fileio::Prepared>>,
    tools: Mutex<HashMap<Tool, Availability>>,
    runs: Mutex<HashMap<Job, Result<Runs, RefError>>>,
}

/// The most runs of a tool for one point (a point repeated more is matched by this many).
pub const MAX_RUNS: usize = 10;

/// How much of the tools a run can afford (`run --budget`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Limits {
    /// Runs of a tool per point at most (1 to [`MAX_RUNS`]).
    pub runs: usize,
    /// A tool whose one run takes longer (by [`Job::estimate`]) is not run: the point says so.
    pub longest: Option<Duration>,
    /// How long a tool that sets its own time measures (likwid-bench, mbw): 1 s unless fitted.
    pub own_time: Option<Duration>,
    /// Whether the other tools that measure a point run beside its preferred one (sysbench
    /// fileio beside fio): yes unless a budget leaves one run a point.
    pub others: bool,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            runs: MAX_RUNS,
            longest: None,
            own_time: None,
            others: true,
        }
    }
}

/// A job's runs: each one's outcome, and the transcript of them all.
#[derive(Debug, Clone)]
struct Runs {
    outcomes: Vec<Outcome>,
    transcript: process::Transcript,
    /// Made between the point's rounds ([`interleave`]), not after them.
    interleaved: bool,
}

impl RefContext {
    /// A context with temporary files in `dir`, the records' own durations and the tools on
    /// this process's PATH.
    pub fn new(dir: impl Into<PathBuf>) -> RefContext {
        RefContext {
            dir: dir.into(),
            duration: None,
            prefer_stream: false,
            locator: Locator::from_env(),
            net_token: None,
            blas_core: || None,
            limits: Mutex::new(Limits::default()),
            fio_scratch: Mutex::new(None),
            fileio_scratch: Mutex::new(None),
            tools: Mutex::new(HashMap::new()),
            runs: Mutex::new(HashMap::new()),
        }
    }

    /// The tool's availability, looked up once per context.
    pub fn availability(&self, tool: Tool) -> Availability {
        let mut tools = self.tools.lock().unwrap_or_else(|e| e.into_inner());
        tools
            .entry(tool)
            .or_insert_with(|| self.locator.availability(tool))
            .clone()
    }

    /// Removes the files kept between runs (fio's file, sysbench fileio's directory): the next
    /// run lays out its own.
    pub fn release_files(&self) {
        *self.fio_scratch.lock().unwrap_or_else(|e| e.into_inner()) = None;
        *self
            .fileio_scratch
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = None;
    }

    /// The run's duration in seconds: the context's, else the record's.
    fn seconds(&self, record_s: Option<f64>) -> Option<f64> {
        self.duration.map(|d| d.as_secs_f64()).or(record_s)
    }

    /// How long a tool that sets its own time measures: the context's duration, else the
    /// limits', else 1 s.
    fn own_seconds(&self) -> f64 {
        self.seconds(self.limits().own_time.map(|d| d.as_secs_f64()))
            .unwrap_or(1.0)
    }

    /// The runs of the job of `key` ([`Job::key`]), where they were made.
    fn cached(&self, key: &Job) -> Option<Result<Runs, RefError>> {
        let runs = self.runs.lock().unwrap_or_else(|e| e.into_inner());
        runs.get(key).cloned()
    }

    /// Whether the job of `key` has its runs already.
    fn has_runs(&self, key: &Job) -> bool {
        let runs = self.runs.lock().unwrap_or_else(|e| e.into_inner());
        runs.contains_key(key)
    }

    fn cache(&self, key: Job, runs: Result<Runs, RefError>) {
        let mut all = self.runs.lock().unwrap_or_else(|e| e.into_inner());
        all.insert(key, runs);
    }

    /// What the tools may take now.
    pub fn limits(&self) -> Limits {
        *self.limits.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Sets what the tools may take (a plan's, or the run's once fitted).
    pub fn set_limits(&self, limits: Limits) {
        *self.limits.lock().unwrap_or_else(|e| e.into_inner()) = limits;
    }
}

/// The block size from which a tool's run of blocks in sequence stands in for a point's random
/// blocks (sysbench memory and mbw have no random blocks): the order then changes only the
/// first lines of each block (a TLB miss, the prefetchers' restart: about a microsecond
/// against 50 µs or more a block). On a Sapphire Rapids guest, peakbench's own RR, WR and RWR
/// were within 2 % of RS, WS and RWS from 64 KiB blocks, and 15–25 % behind at 4–8 KiB.
pub const IN_ORDER_FROM: u64 = 1 << 20;

/// One run of one tool, as parameters: equal jobs give equal outcomes.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Job {
    Likwid(likwid::Job),
    Stream(stream::Job),
    Fio(fio::Job),
    Iperf3(iperf3::Job),
    Sockperf(sockperf::Job),
    Qperf(qperf::Job),
    Ping(ping::Job),
    Hpcc(hpcc::Job),
    Sysbench(sysbench::Job),
    SysbenchFileio(fileio::Job),
    Mbw(mbw::Job),
    Dd(dd::Job),
    Blis(blis::Job),
}

impl Job {
    pub fn tool(&self) -> Tool {
        match self {
            Job::Likwid(_) => Tool::LikwidBench,
            Job::Stream(_) => Tool::Stream,
            Job::Fio(_) => Tool::Fio,
            Job::Iperf3(_) => Tool::Iperf3,
            Job::Sockperf(_) => Tool::Sockperf,
            Job::Qperf(_) => Tool::Qperf,
            Job::Ping(_) => Tool::Ping,
            Job::Hpcc(_) => Tool::Hpcc,
            Job::Sysbench(_) | Job::SysbenchFileio(_) => Tool::Sysbench,
            Job::Mbw(_) => Tool::Mbw,
            Job::Dd(_) => Tool::Dd,
            Job::Blis(_) => Tool::Blis,
        }
    }

    /// The tool's name in `rec`'s row: the tool's, or for hpcc's STREAM figures
    /// [`hpcc::STREAM_NAME`].
    pub fn name(&self, rec: &ResultRecord) -> &'static str {
        match self {
            Job::Hpcc(_) if rec.subsystem == Subsystem::Mem => hpcc::STREAM_NAME,
            j => j.tool().name(),
        }
    }

    /// About how long one run takes (a plan, not a promise): the time it is given, with its
    /// start-up, warm-up and set-up.
    pub fn estimate(&self) -> Duration {
        let s = match self {
            Job::Likwid(j) => j.target_ms as f64 / 1e3 + 0.5,
            // Its arrays and repetitions are compiled in: a few seconds as usually built.
            Job::Stream(_) => 5.0,
            // The file laid out at about 500 MB/s, then the ramp and the run.
            // Its file is laid out once for the runs that share it: see `layout`.
            Job::Fio(j) => (j.ramp_ms + j.runtime_ms) as f64 / 1e3 + 0.5,
            Job::Iperf3(j) => (j.seconds + j.omit_seconds) as f64 + 1.0,
            Job::Sockperf(j) => j.seconds as f64 + 1.0,
            Job::Qperf(j) => j.seconds as f64 + 1.0,
            Job::Ping(j) => j.count as f64 * ping::INTERVAL_S + 0.5,
            Job::Hpcc(j) => hpcc::estimate_s(j),
            // Its time, after its buffers are written (page faults and all, about 5 GB/s).
            Job::Sysbench(j) => {
                j.seconds as f64 + 0.05 + j.buffer_bytes.saturating_mul(j.threads) as f64 / 5e9
            }
            // Its file is laid out once for the runs that share it: see `layout`.
            Job::SysbenchFileio(j) => (j.seconds + j.warmup_seconds) as f64 + 0.3,
            Job::Mbw(j) => j.expected_ms as f64 / 1e3 + 0.2,
            Job::Dd(j) => j.expected_ms as f64 / 1e3 + 0.5,
            Job::Blis(j) => blis::estimate_s(j),
        };
        crate::units::estimate_secs(s)
    }

    /// What this run measures where it is not exactly `rec`'s point, for the row to say: a
    /// tool that runs in sequence the blocks the point takes at random ([`IN_ORDER_FROM`]).
    pub fn differs(&self, rec: &ResultRecord) -> Option<String> {
        let blocks = rec.params.mem()?.kernel.as_ref()?.blocks.as_ref()?;
        let in_order = matches!(self, Job::Sysbench(_) | Job::Mbw(_))
            && blocks.order == crate::results::params::Order::Random
            && blocks.block_size_bytes >= IN_ORDER_FROM;
        in_order.then(|| {
            format!(
                "{} takes the same blocks in sequence, not at random (from {} blocks a random \
                 order changes only each block's first cache lines)",
                self.tool().name(),
                crate::units::format_bytes_binary(IN_ORDER_FROM)
            )
        })
    }

    /// The file a run lays out that the next runs of the same tool, directory and size reuse:
    /// those, and about how long laying it out takes (at about 500 MB/s).
    pub fn layout(&self) -> Option<(Tool, PathBuf, u64, Duration)> {
        let (dir, size) = match self {
            Job::Fio(j) if !j.file_per_job && !j.new_file => (&j.dir, j.size_bytes),
            Job::SysbenchFileio(j) => (&j.dir, j.size_bytes),
            _ => return None,
        };
        let time = crate::units::estimate_secs(size as f64 / 500e6);
        Some((self.tool(), dir.clone(), size, time))
    }

    fn run(&self, program: &Path, ctx: &RefContext) -> Result<Outcome, RefError> {
        let token = ctx.net_token.as_deref();
        Ok(match self {
            Job::Likwid(j) => Outcome::Likwid(likwid::run(program, j)?),
            Job::Stream(j) => Outcome::Stream(stream::run(program, j)?),
            Job::Fio(j) => Outcome::Fio(fio::run(program, j, &ctx.fio_scratch)?),
            Job::Iperf3(j) => Outcome::Iperf3(iperf3::run(program, j, token)?),
            Job::Sockperf(j) => Outcome::Sockperf(sockperf::run(program, j, token)?),
            Job::Qperf(j) => Outcome::Qperf(qperf::run(program, j)?),
            Job::Ping(j) => Outcome::Ping(ping::run(program, j)?),
            Job::Hpcc(j) => Outcome::Hpcc(hpcc::run(program, j, (ctx.blas_core)().as_deref())?),
            Job::Sysbench(j) => Outcome::Sysbench(sysbench::run(program, j)?),
            Job::SysbenchFileio(j) => {
                Outcome::SysbenchFileio(fileio::run(program, j, &ctx.fileio_scratch)?)
            }
            Job::Mbw(j) => Outcome::Mbw(mbw::run(program, j)?),
            Job::Dd(j) => Outcome::Dd(dd::run(program, j)?),
            // The library found is the job's; the program is this executable.
            Job::Blis(j) => Outcome::Blis(blis::run(j)?),
        })
    }
}

/// What one run printed, parsed.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    Likwid(likwid::LikwidResult),
    Stream(stream::StreamResult),
    Fio(fio::FioResult),
    Iperf3(iperf3::Iperf3Result),
    Sockperf(sockperf::SockperfResult),
    Qperf(qperf::QperfResult),
    Ping(ping::PingResult),
    Hpcc(hpcc::HpccResult),
    Sysbench(sysbench::MemoryResult),
    SysbenchFileio(fileio::FileioResult),
    Mbw(mbw::MbwResult),
    Dd(dd::DdResult),
    Blis(blis::BlisResult),
}

impl Outcome {
    /// What the run said of the tool that its version does not: BLIS's configuration on this
    /// CPU ("BLIS zen3", "BLIS generic").
    pub fn detail(&self) -> Option<String> {
        match self {
            Outcome::Blis(r) => r.kernel.clone(),
            _ => None,
        }
    }

    /// The figure for `rec`, in its unit.
    pub fn figure(&self, rec: &ResultRecord) -> Result<f64, RefError> {
        match self {
            Outcome::Likwid(r) => likwid::figure(r, rec),
            Outcome::Stream(r) => stream::figure(r, rec),
            Outcome::Fio(r) => fio::figure(r, rec),
            Outcome::Iperf3(r) => iperf3::figure(r, rec),
            Outcome::Sockperf(r) => sockperf::figure(r, rec),
            Outcome::Qperf(r) => qperf::figure(r, rec),
            Outcome::Ping(r) => ping::figure(r, rec),
            Outcome::Hpcc(r) => hpcc::figure(r, rec),
            Outcome::Sysbench(r) => sysbench::figure(r, rec),
            Outcome::SysbenchFileio(r) => fileio::figure(r, rec),
            Outcome::Mbw(r) => mbw::figure(r, rec),
            Outcome::Dd(r) => dd::figure(r, rec),
            Outcome::Blis(r) => blis::figure(r, rec),
        }
    }
}

/// The jobs that could give `rec` a reference figure, best first: the tools its workload's
/// spec names, in its order of preference (STREAM first with `prefer_stream`); `None` when no
/// tool applies to its subsystem, workload and metric. A run longer than the context's limits
/// allow is refused, and says so.
pub fn jobs(rec: &ResultRecord, ctx: &RefContext) -> Option<Result<Vec<Job>, RefError>> {
    let limits = ctx.limits();
    let spec = rec.workload.spec();
    let mut tools = spec.references.to_vec();
    if ctx.prefer_stream {
        // A stable sort: STREAM first, the others in the spec's order.
        tools.sort_by_key(|t| *t != Tool::Stream);
    }
    let within = |job: Result<Job, RefError>| match (job, limits.longest) {
        (Ok(j), Some(most)) if j.estimate() > most => Err(RefError::unsupported(
            j.tool(),
            format!(
                "a run takes longer than --budget leaves a tool's run ({}); give a larger --budget",
                crate::units::format_duration(most)
            ),
        )),
        (j, _) => j,
    };
    let candidates: Vec<(Tool, Option<Result<Job, RefError>>)> = tools
        .into_iter()
        .map(|t| (t, job_of(t, rec, ctx).map(within)))
        .collect();
    // Where no tool that would take the point is installed, the refusal of one that is says
    // more than "not found" (hpcc's STREAM too long for the budget, beside a STREAM never
    // built).
    let installed = |t: Tool| matches!(ctx.availability(t), Availability::Found(_));
    let runnable = candidates
        .iter()
        .any(|(t, c)| matches!(c, Some(Ok(_))) && installed(*t));
    if !runnable
        && let Some(e) = candidates.iter().find_map(|(t, c)| match c {
            Some(Err(e)) if installed(*t) => Some(e.clone()),
            _ => None,
        })
    {
        return Some(Err(e));
    }
    usable(candidates.into_iter().map(|(_, c)| c))
}

/// The job of `tool` for `rec`, where the tool applies to it (sockperf refuses messages under
/// its 14-byte header, qperf and ping take over where sockperf is missing or refuses).
fn job_of(tool: Tool, rec: &ResultRecord, ctx: &RefContext) -> Option<Result<Job, RefError>> {
    match tool {
        Tool::LikwidBench => match rec.subsystem {
            Subsystem::Cpu => likwid::cpu_job(rec, ctx).map(|r| r.map(Job::Likwid)),
            Subsystem::Mem => likwid::mem_job(rec, ctx).map(|r| r.map(Job::Likwid)),
            Subsystem::Disk | Subsystem::Net => None,
        },
        Tool::Stream => stream::job(rec).map(|r| r.map(Job::Stream)),
        Tool::Fio => fio::job(rec, ctx).map(|r| r.map(Job::Fio)),
        Tool::Iperf3 => iperf3::job(rec, ctx).map(|r| r.map(Job::Iperf3)),
        Tool::Sockperf => sockperf::job(rec, ctx).map(|r| r.map(Job::Sockperf)),
        Tool::Qperf => qperf::job(rec, ctx).map(|r| r.map(Job::Qperf)),
        Tool::Ping => ping::job(rec, ctx).map(|r| r.map(Job::Ping)),
        Tool::Hpcc => hpcc::job(rec, ctx).map(|r| r.map(Job::Hpcc)),
        Tool::Sysbench => match rec.subsystem {
            Subsystem::Disk => fileio::job(rec, ctx).map(|r| r.map(Job::SysbenchFileio)),
            _ => sysbench::job(rec, ctx).map(|r| r.map(Job::Sysbench)),
        },
        Tool::Mbw => mbw::job(rec, ctx).map(|r| r.map(Job::Mbw)),
        Tool::Dd => dd::job(rec, ctx).map(|r| r.map(Job::Dd)),
        Tool::Blis => blis::job(rec, ctx).map(|r| r.map(Job::Blis)),
    }
}

/// The jobs of the tools that can run a point, best first: `None` where no tool applies, the
/// first tool's refusal where none can run it.
fn usable(
    candidates: impl IntoIterator<Item = Option<Result<Job, RefError>>>,
) -> Option<Result<Vec<Job>, RefError>> {
    let mut jobs = Vec::new();
    let mut error = None;
    for c in candidates.into_iter().flatten() {
        match c {
            Ok(j) => jobs.push(j),
            Err(e) => error = error.or(Some(e)),
        }
    }
    match (jobs.is_empty(), error) {
        (true, None) => None,
        (true, Some(e)) => Some(Err(e)),
        (false, _) => Some(Ok(jobs)),
    }
}

/// The reference figure for `rec`: `None` when no tool applies to it; an error (a message for
/// the report) when the tool is missing or fails.
pub fn measure(rec: &ResultRecord, ctx: &RefContext) -> Option<Result<Reference, String>> {
    measure_typed(rec, ctx).map(|r| r.map_err(|e| e.to_string()))
}

/// [`measure`] with the error's kind kept.
pub fn measure_typed(rec: &ResultRecord, ctx: &RefContext) -> Option<Result<Reference, RefError>> {
    measure_with(rec, ctx, false).map(|r| r.map(|(first, _)| first))
}

/// The figure of the first tool found for `rec` (its workload's preferred), and those of the
/// other tools found that measure it too (or why they could not), unless the context's limits
/// leave them out: `None` when no tool applies; an error when the first tool found fails or
/// none is found.
pub fn measure_all(rec: &ResultRecord, ctx: &RefContext) -> Option<Result<Measured, RefError>> {
    measure_with(rec, ctx, ctx.limits().others)
}

/// [`measure_all`], the other tools run or not as `others` says.
fn measure_with(
    rec: &ResultRecord,
    ctx: &RefContext,
    others: bool,
) -> Option<Result<Measured, RefError>> {
    let jobs = match jobs(rec, ctx)? {
        Ok(jobs) => jobs,
        Err(e) => return Some(Err(e)),
    };
    let mut unusable = None;
    let mut found = Vec::new();
    for job in &jobs {
        match ctx.availability(job.tool()) {
            Availability::Found(f) => found.push((job, f)),
            Availability::Missing => {}
            Availability::Unusable { reason, .. } => {
                unusable.get_or_insert(RefError::Unusable {
                    tool: job.tool().name().into(),
                    reason,
                });
            }
        }
    }
    let Some(((first, tool), rest)) = found.split_first() else {
        return Some(Err(unusable.unwrap_or_else(|| none_installed(&jobs))));
    };
    let reference = match measure_job(rec, ctx, first, tool) {
        Ok(r) => r,
        Err(e) => return Some(Err(e)),
    };
    let others = if others {
        rest.iter()
            .filter(|(job, _)| job.tool().runs_beside())
            .map(|(job, tool)| measure_job(rec, ctx, job, tool))
            .collect()
    } else {
        Vec::new()
    };
    Some(Ok((reference, others)))
}

/// The preferred tool's figure, and each other tool's or why it has none.
pub type Measured = (Reference, Vec<Result<Reference, RefError>>);

/// `job`'s figure for `rec`: its runs (as many as the point has repetitions, once for all the
/// records that share them) and their evidence.
fn measure_job(
    rec: &ResultRecord,
    ctx: &RefContext,
    job: &Job,
    found: &Found,
) -> Result<Reference, RefError> {
    let key = job.key();
    let runs = match ctx.cached(&key) {
        Some(o) => o,
        None => {
            // As many runs as the point has repetitions, so that both have a spread.
            let wanted = rec
                .samples
                .len()
                .clamp(1, ctx.limits().runs.clamp(1, MAX_RUNS));
            let (outcomes, transcript) = process::transcribed(|| {
                (0..wanted)
                    .map(|_| job.run(&found.path, ctx))
                    .collect::<Result<Vec<_>, _>>()
            });
            let o = outcomes.map(|outcomes| Runs {
                outcomes,
                transcript,
                interleaved: false,
            });
            ctx.cache(key, o.clone());
            o
        }
    }?;
    let samples = runs
        .outcomes
        .iter()
        .map(|o| checked_figure(job.tool().name(), rec, o.figure(rec)?))
        .collect::<Result<Vec<f64>, _>>()?;
    let efficiency = |mean: f64| {
        rec.peak
            .as_ref()
            .map(|p| rec.metric.efficiency(mean, p.value))
    };
    // What the run itself says of the tool (the configuration BLIS chose) completes its version.
    let version = match runs.outcomes.first().and_then(Outcome::detail) {
        Some(d) => format!("{} ({d})", found.version),
        None => found.version.clone(),
    };
    let mut reference = Reference::measured(
        job.name(rec),
        &version,
        samples,
        efficiency,
        (runs.transcript.commands, runs.transcript.output),
    );
    // Bounded samples have a finite summary; a non-finite one is refused all the same.
    let summary = [
        Some(reference.mean),
        reference.stddev,
        reference.min,
        reference.max,
    ];
    if summary.iter().flatten().any(|x| !x.is_finite()) {
        return Err(RefError::parse(
            job.tool(),
            "its figures have no finite mean and spread",
        ));
    }
    reference.differs = job.differs(rec);
    reference.interleaved = runs.interleaved;
    Ok(reference)
}

/// The error of `jobs` whose tools are none of them installed: which, and how to install them.
fn none_installed(jobs: &[Job]) -> RefError {
    let tools: Vec<Tool> = jobs.iter().map(Job::tool).collect();
    RefError::Missing {
        tools: tools
            .iter()
            .map(|t| t.name())
            .collect::<Vec<_>>()
            .join(" or "),
        install: tools
            .iter()
            .map(|t| t.install())
            .collect::<Vec<_>>()
            .join("; or "),
    }
}

/// The parameters an adapter reads, of the kind it needs: another kind is an error that says
/// so, never a panic.
fn params_of<'a, T>(
    rec: &'a ResultRecord,
    tool: Tool,
    kind: impl Fn(&'a crate::results::params::Params) -> Option<&'a T>,
) -> Result<&'a T, RefError> {
    kind(&rec.params).ok_or_else(|| {
        RefError::unsupported(
            tool,
            format!(
                "a {} {} record is not one of its points",
                rec.subsystem, rec.workload
            ),
        )
    })
}

/// The version number that follows `marker` in `text` ("Version 5.2.2" → "5.2.2").
fn version_after(text: &str, marker: &str) -> Option<String> {
    text.match_indices(marker).find_map(|(i, _)| {
        let v: String = text[i + marker.len()..]
            .trim_start()
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == '.')
            .collect();
        let v = v.trim_end_matches('.');
        (v.starts_with(|c: char| c.is_ascii_digit())).then(|| v.to_string())
    })
}

/// The time of one block operation of a memory block record (a block per thread, all threads
/// at once), s, at `per_thread` bytes of blocks per second per thread.
fn block_time(tool: Tool, rec: &ResultRecord, per_thread: f64) -> Result<f64, RefError> {
    let block = rec
        .params
        .mem()
        .and_then(|m| m.kernel.as_ref()?.blocks.as_ref())
        .map(|b| b.block_size_bytes)
        .ok_or_else(|| unit_error(tool, rec))?;
    Ok(block as f64 / per_thread)
}

/// The vector instruction sets this CPU has that the libraries' kernels are chosen by: AVX-512
/// (F, BW, DQ and VL, as OpenBLAS's SkylakeX and BLIS's skx kernels use) and AVX2 with FMA;
/// neither off x86.
fn x86_vectors() -> (bool, bool) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::is_x86_feature_detected as has;
        (
            has!("avx512f") && has!("avx512bw") && has!("avx512dq") && has!("avx512vl"),
            has!("avx2") && has!("fma"),
        )
    }
    #[cfg(not(target_arch = "x86_64"))]
    (false, false)
}

/// An error for a record whose unit the adapter does not produce.
fn unit_error(tool: Tool, rec: &ResultRecord) -> RefError {
    RefError::unsupported(
        tool,
        format!(
            "no figure for {} {} in {}",
            rec.workload, rec.metric, rec.unit
        ),
    )
}

#[cfg(test)]
pub(crate) mod testing {
    //! Records shaped like the benchmarks' own, for the adapters' tests.
    use crate::results::params::Params;
    use crate::results::{Metric, ResultRecord, Subsystem, Unit};
    use crate::sysinfo::peak::Peak;
    use std::collections::BTreeMap;

    pub fn record(
        subsystem: &str,
        workload: &str,
        metric: &str,
        unit: &str,
        params: serde_json::Value,
        peak: Option<f64>,
    ) -> ResultRecord {
        let subsystem: Subsystem = subsystem.parse().unwrap();
        let metric: Metric = metric.parse().unwrap();
        let unit: Unit = unit.parse().unwrap();
        let params = Params::with_defaults(
            crate::results::Workload::named(subsystem, workload).unwrap(),
            params,
        )
        .expect("test parameters decode");
        let peak = peak.map_or_else(
            || Err("no peak".to_string()),
            |value| {
                Ok(Peak {
                    value,
                    unit,
                    formula: "test".into(),
                    inputs: BTreeMap::new(),
                })
            },
        );
        ResultRecord::new(
            crate::results::Workload::named(subsystem, workload).unwrap(),
            params,
            metric,
            unit,
            vec![1.0],
            peak,
        )
    }

    pub fn fixture(name: &str) -> String {
        let path = format!(
            "{}/tests/fixtures/reference/{name}",
            env!("CARGO_MANIFEST_DIR")
        );
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
    }
}

#[cfg(test)]
mod tests;
