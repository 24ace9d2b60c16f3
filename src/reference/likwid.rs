//! likwid-bench (likwid 5.x): its `peakflops` kernels for CPU DP and SP, its `copy` and `stream`
//! kernels for memory COPY and TRIAD.
//!
//! likwid-bench counts a fused multiply-add as two flops and memory traffic as bytes read plus
//! bytes written without write-allocate, both as peakbench does; its `MFlops/s` and `MByte/s`
//! are decimal (10⁶), so op/s = MFlops/s × 10⁶ and B/s = MByte/s × 10⁶. Its `stream` kernel is
//! STREAM's triad (a = b + s·c); its `triad` is another kernel (a = b + c·d) and is not used.
//!
//! Threads: `-W N:SIZE:THREADS` runs THREADS threads on the first hardware threads of the node
//! domain, which likwid orders one per physical core first — as peakbench places its threads.
//!
//! Run length: left alone, likwid-bench calibrates its iteration count by running the kernel
//! several times (3–5 s on top of the measured second). When the record's own figure is known,
//! the adapter reads the kernel's work model (`likwid-bench -l KERNEL`: streams, element type,
//! flops and bytes per element) and passes the iteration count that lasts the target time at
//! that rate (`-i`); otherwise it asks for a minimum time (`-s`, whole seconds).

use super::process::{run_bounded, whole_seconds};
use super::{RefContext, RefError, Tool, params_of, unit_error};
use crate::results::ResultRecord;
use crate::results::{Metric, Subsystem, Unit};
use crate::workload::cpu::CpuWorkload;
use crate::workload::mem::MemWorkload;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

const TOOL: Tool = Tool::LikwidBench;

/// Bytes per thread of the peakflops vector: half of a 32 KiB L1 data cache, the smallest of any
/// x86 core with AVX, so that the kernel runs from L1 as likwid's peakflops examples intend.
pub const PEAKFLOPS_BYTES_PER_THREAD: u64 = 16_000;

/// What a kernel's rate counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Counted {
    Flops,
    Bytes,
}

/// One likwid-bench run.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Job {
    /// The kernel (`-t`), e.g. `peakflops_avx512_fma`.
    pub kernel: String,
    /// Bytes of all the kernel's arrays together, split between the threads.
    pub size_bytes: u64,
    pub threads: u64,
    pub counted: Counted,
    /// How long the run should measure.
    pub target_ms: u64,
    /// peakbench's rate for the point per thread (flop/s or byte/s), to size the run; `None`
    /// lets likwid-bench calibrate.
    pub expected_per_thread: Option<u64>,
}

impl Job {
    /// The workgroup (`-W`), e.g. `N:16000B:1`. likwid-bench reads the size as a 32-bit int:
    /// from 2³¹ bytes on it is given in its kB (10³ bytes, rounded down: likwid-bench rounds the
    /// size to its own granularity anyway), and from 2³¹ kB on in MB.
    pub fn workgroup(&self) -> String {
        const INT_MAX: u64 = i32::MAX as u64;
        let size = match self.size_bytes {
            b if b <= INT_MAX => format!("{b}B"),
            b if b / 1000 <= INT_MAX => format!("{}kB", b / 1000),
            b => format!("{}MB", b / 1_000_000),
        };
        format!("N:{size}:{}", self.threads)
    }
}

/// The kernel name's ISA suffix for peakbench's ISA names.
fn isa_suffix(isa: &str, fma: bool) -> Option<&'static str> {
    Some(match (isa, fma) {
        ("avx512", true) => "_avx512_fma",
        ("avx512", false) => "_avx512",
        ("avx2", true) => "_avx_fma",
        ("avx2", false) => "_avx",
        ("sse2", _) => "_sse",
        ("scalar", _) => "",
        _ => return None,
    })
}

fn threads_and_isa(rec: &ResultRecord) -> Result<(u64, &'static str), RefError> {
    let threads = (rec.params.threads() as u64).max(1);
    let isa = rec.params.isa().ok_or_else(|| {
        RefError::unsupported(
            TOOL,
            "the record does not say which instruction set it used",
        )
    })?;
    Ok((threads, isa.name()))
}

fn target_ms(ctx: &RefContext) -> u64 {
    (ctx.own_seconds() * 1000.0).clamp(1.0, 600_000.0) as u64
}

/// The record's rate per thread in units (flop/s or byte/s), when it is a usable figure.
fn expected_per_thread(rec: &ResultRecord, threads: u64) -> Option<u64> {
    let rate = rec.summary.mean;
    (rate.is_finite() && rate > 0.0).then(|| (rate / threads as f64) as u64)
}

/// The peakflops run for a CPU DP or SP throughput record.
pub fn cpu_job(rec: &ResultRecord, ctx: &RefContext) -> Option<Result<Job, RefError>> {
    let sp = match (rec.workload.cpu(), rec.metric) {
        (Some(CpuWorkload::Dp), Metric::Throughput) => false,
        (Some(CpuWorkload::Sp), Metric::Throughput) => true,
        _ => return None,
    };
    Some(peakflops_job(rec, ctx, sp))
}

fn peakflops_job(rec: &ResultRecord, ctx: &RefContext, sp: bool) -> Result<Job, RefError> {
    let (threads, isa) = threads_and_isa(rec)?;
    let suffix = isa_suffix(isa, true).ok_or_else(|| {
        RefError::unsupported(TOOL, format!("likwid-bench has no {isa} peakflops kernel"))
    })?;
    Ok(Job {
        kernel: format!("peakflops{}{suffix}", if sp { "_sp" } else { "" }),
        size_bytes: PEAKFLOPS_BYTES_PER_THREAD * threads,
        threads,
        counted: Counted::Flops,
        target_ms: target_ms(ctx),
        expected_per_thread: expected_per_thread(rec, threads),
    })
}

/// The copy, stream (STREAM triad) or sum run for a memory throughput record of a workload
/// whose spec names likwid-bench: the same working set (all arrays, split between the
/// threads), threads, ISA and kind of store (`_mem` kernels use non-temporal stores; a sum
/// stores nothing).
pub fn mem_job(rec: &ResultRecord, ctx: &RefContext) -> Option<Result<Job, RefError>> {
    let w = rec.workload.mem()?;
    if rec.metric != Metric::Throughput {
        return None;
    }
    let base = match w {
        MemWorkload::Copy => "copy",
        MemWorkload::Triad => "stream",
        MemWorkload::Sum => "sum",
        // Each mix has its likwid-bench kernel: sum 1:0, triad (A = B·C + D) 3:1, stream
        // 2:1, copy 1:1, store 0:1.
        MemWorkload::Mix => {
            let mix = (rec.params.mem().and_then(|m| m.kernel.as_ref())).and_then(|k| k.mix);
            match mix.map(|m| (m.reads, m.writes)) {
                Some((1, 0)) => "sum",
                Some((3, 1)) => "triad",
                Some((2, 1)) => "stream",
                Some((1, 1)) => "copy",
                Some((0, 1)) => "store",
                _ => {
                    return Some(Err(RefError::unsupported(
                        TOOL,
                        "a MIX record without a mix likwid-bench has".to_string(),
                    )));
                }
            }
        }
        MemWorkload::Rws
        | MemWorkload::Rwr
        | MemWorkload::Ws
        | MemWorkload::Wr
        | MemWorkload::Rs
        | MemWorkload::Rr
        | MemWorkload::Scale
        | MemWorkload::Add
        | MemWorkload::Latency
        | MemWorkload::Loaded
        | MemWorkload::C2c
        | MemWorkload::Numa
        | MemWorkload::Null => {
            return Some(Err(RefError::unsupported(
                TOOL,
                format!("peakbench does not know likwid-bench's kernel for {w}"),
            )));
        }
    };
    Some(bandwidth_job(rec, ctx, base))
}

fn bandwidth_job(rec: &ResultRecord, ctx: &RefContext, base: &str) -> Result<Job, RefError> {
    let (threads, isa) = threads_and_isa(rec)?;
    let kernel = params_of(rec, TOOL, |p| p.mem().and_then(|m| m.kernel.as_ref()))?;
    let bytes = kernel.working_set_bytes;
    let nt = kernel.stores == crate::results::params::StoreKind::Nt && base != "sum";
    let suffix = isa_suffix(isa, false).ok_or_else(|| {
        RefError::unsupported(TOOL, format!("likwid-bench has no {isa} {base} kernel"))
    })?;
    Ok(Job {
        kernel: format!("{base}{}{suffix}", if nt { "_mem" } else { "" }),
        size_bytes: bytes,
        threads,
        counted: Counted::Bytes,
        target_ms: target_ms(ctx),
        expected_per_thread: expected_per_thread(rec, threads),
    })
}

/// likwid-bench's arguments for `job`: `iterations` per thread (`-i`), or else a minimum time
/// (`-s`) that likwid-bench calibrates to.
pub fn argv(job: &Job, iterations: Option<u64>) -> Vec<String> {
    let mut a = vec![
        "-t".to_string(),
        job.kernel.clone(),
        "-W".into(),
        job.workgroup(),
    ];
    match iterations {
        Some(n) => a.extend(["-i".into(), n.to_string()]),
        None => a.extend([
            "-s".into(),
            whole_seconds(job.target_ms as f64 / 1000.0, 1).to_string(),
        ]),
    }
    a
}

/// A kernel's work model, from `likwid-bench -l KERNEL`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelInfo {
    pub streams: u64,
    /// 8 for double precision, 4 for single.
    pub element_bytes: u64,
    pub flops_per_element: u64,
    /// Bytes read plus written per element, all streams together.
    pub bytes_per_element: u64,
}

/// Parses `likwid-bench -l KERNEL`.
pub fn parse_kernel_info(text: &str) -> Result<KernelInfo, String> {
    let field = |key: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(key))
            .map(str::trim)
            .ok_or_else(|| format!("no '{key}' in likwid-bench -l's output"))
    };
    let count = |key: &str| {
        field(key)?
            .parse::<u64>()
            .ok()
            .and_then(super::tool_count)
            .ok_or_else(|| format!("'{key}' is not a whole number"))
    };
    let element_bytes = match field("Data Type:")? {
        t if t.starts_with("Double") => 8,
        t if t.starts_with("Single") => 4,
        t => return Err(format!("unknown data type '{t}'")),
    };
    Ok(KernelInfo {
        streams: count("Number of streams:")?.max(1),
        element_bytes,
        flops_per_element: count("Flops per element:")?,
        bytes_per_element: count("Bytes per element:")?,
    })
}

/// Iterations per thread that last `job.target_ms` at the expected rate (at least 10, as
/// likwid-bench requires).
pub fn iterations(job: &Job, info: &KernelInfo, expected_per_thread: u64) -> Option<u64> {
    let elements = job.size_bytes / info.streams / job.threads / info.element_bytes;
    let per_element = match job.counted {
        Counted::Flops => info.flops_per_element,
        Counted::Bytes => info.bytes_per_element,
    };
    let work = elements * per_element;
    if work == 0 {
        return None;
    }
    let n = (job.target_ms as f64 / 1000.0 * expected_per_thread as f64 / work as f64).ceil();
    Some((n as u64).max(10))
}

/// `job` sized from what its previous run measured (a planned point has no rate of its own).
pub fn resized(job: &Job, previous: &LikwidResult) -> Job {
    let rate = match job.counted {
        Counted::Flops => previous.mflops_per_s,
        Counted::Bytes => previous.mbytes_per_s,
    };
    let per_thread = rate
        .map(|r| r * 1e6 / job.threads.max(1) as f64)
        .filter(|r| r.is_finite() && *r >= 1.0);
    Job {
        expected_per_thread: per_thread.map(|r| r as u64).or(job.expected_per_thread),
        ..job.clone()
    }
}

/// Runs `job`, sized by its expected rate when there is one (else calibrated by likwid-bench).
pub fn run(program: &Path, job: &Job) -> Result<LikwidResult, RefError> {
    let iterations = job.expected_per_thread.and_then(|rate| {
        let mut cmd = Command::new(program);
        cmd.args(["-l", &job.kernel]);
        let out = run_bounded(TOOL, cmd, Duration::from_secs(10)).ok()?;
        let info = parse_kernel_info(&out.stdout).ok()?;
        iterations(job, &info, rate)
    });
    let r = run_once(program, job, iterations)?;
    // peakbench's figure far below likwid's makes too short a run: measure again, sized by the
    // short run's own time (likwid-bench's own calibration, `-s`, doubles its iterations
    // run after run: 10 s where threads share CPUs).
    match (r.time_s, iterations) {
        (Some(t), Some(n)) if t * 4000.0 < job.target_ms as f64 => {
            let scale = (job.target_ms as f64 / 1000.0 / t.max(1e-6)).min(100_000.0);
            run_once(
                program,
                job,
                Some(((n as f64 * scale).ceil() as u64).max(10)),
            )
        }
        _ => Ok(r),
    }
}

fn run_once(program: &Path, job: &Job, iterations: Option<u64>) -> Result<LikwidResult, RefError> {
    let mut cmd = Command::new(program);
    cmd.args(argv(job, iterations));
    // The run, the arrays' first touch and, without -i, likwid's calibration; with -i, an
    // expected rate that was 10 times too high still finishes.
    let timeout = Duration::from_millis(60_000 + 10 * job.target_ms);
    let out = run_bounded(TOOL, cmd, timeout)?;
    if !out.status.success() {
        return Err(out.failure(TOOL));
    }
    parse_output(&out.stdout).map_err(|m| RefError::parse(TOOL, m))
}

/// What one likwid-bench run reports.
#[derive(Debug, Clone, PartialEq)]
pub struct LikwidResult {
    pub test: String,
    pub threads: Option<u64>,
    pub time_s: Option<f64>,
    pub mflops_per_s: Option<f64>,
    pub mbytes_per_s: Option<f64>,
}

fn number(key: &str, value: &str) -> Result<f64, String> {
    let v = value.split_whitespace().next().unwrap_or("");
    v.parse::<f64>()
        .ok()
        .and_then(super::tool_number)
        .ok_or_else(|| {
            format!(
                "'{key}: {value}' is not a number from 0 to {:e}",
                super::MAX_TOOL_NUMBER
            )
        })
}

/// Parses likwid-bench's report (`Key:<tabs>value` lines after the test's header).
pub fn parse_output(text: &str) -> Result<LikwidResult, String> {
    let mut r = LikwidResult {
        test: String::new(),
        threads: None,
        time_s: None,
        mflops_per_s: None,
        mbytes_per_s: None,
    };
    for line in text.lines() {
        if let Some(n) = line
            .strip_prefix("Using ")
            .and_then(|l| l.strip_suffix(" threads"))
        {
            r.threads = n.trim().parse().ok();
            continue;
        }
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim();
        match key.trim() {
            "Test" => r.test = value.to_string(),
            "Time" => r.time_s = Some(number(key, value)?),
            "MFlops/s" => r.mflops_per_s = Some(number(key, value)?),
            "MByte/s" => r.mbytes_per_s = Some(number(key, value)?),
            _ => {}
        }
    }
    if r.mflops_per_s.is_none() && r.mbytes_per_s.is_none() {
        let first = text.lines().map(str::trim).find(|l| !l.is_empty());
        return Err(format!(
            "no 'MFlops/s:' or 'MByte/s:' line (output begins: {:?})",
            first.unwrap_or("")
        ));
    }
    Ok(r)
}

/// The version from `likwid-bench -v` ("likwid-bench -- Version 5.2.2 (commit: …)").
pub fn parse_version(text: &str) -> Option<String> {
    super::version_after(text, "Version")
}

/// The figure for `rec`: op/s from MFlops/s, B/s from MByte/s.
pub fn figure(r: &LikwidResult, rec: &ResultRecord) -> Result<f64, RefError> {
    let (value, what) = match (rec.subsystem, rec.unit) {
        (Subsystem::Cpu, Unit::OpsPerSec) => (r.mflops_per_s, "MFlops/s"),
        (Subsystem::Mem, Unit::BytesPerSec) => (r.mbytes_per_s, "MByte/s"),
        _ => return Err(unit_error(TOOL, rec)),
    };
    value
        .map(|v| v * 1e6)
        .ok_or_else(|| RefError::parse(TOOL, format!("{} printed no {what}", r.test)))
}

#[cfg(test)]
mod tests {
    use super::super::testing::{fixture, record};
    use super::*;
    use serde_json::json;

    fn ctx() -> RefContext {
        RefContext::new(std::env::temp_dir())
    }

    /// likwid-bench reads its size as a 32-bit int: 2 GiB and more go in its kB.
    #[test]
    fn large_sizes_fit_likwid_benchs_int() {
        let job = |size_bytes| Job {
            kernel: "copy_avx512".into(),
            size_bytes,
            threads: 2,
            counted: Counted::Bytes,
            target_ms: 1000,
            expected_per_thread: None,
        };
        assert_eq!(job(16_000).workgroup(), "N:16000B:2");
        assert_eq!(job(2_147_483_647).workgroup(), "N:2147483647B:2");
        assert_eq!(job(2_181_038_080).workgroup(), "N:2181038kB:2");
        assert_eq!(
            job(u64::MAX).workgroup(),
            format!("N:{}MB:2", u64::MAX / 1_000_000)
        );
    }

    #[test]
    fn cpu_commands() {
        let dp = record(
            "cpu",
            "DP",
            "throughput",
            "GOPS",
            json!({"threads": 2, "isa": "avx512"}),
            None,
        );
        let job = cpu_job(&dp, &ctx()).unwrap().unwrap();
        assert_eq!(job.expected_per_thread, Some(500_000_000));
        assert_eq!(
            argv(&job, None),
            ["-t", "peakflops_avx512_fma", "-W", "N:32000B:2", "-s", "1"]
        );
        assert_eq!(
            argv(&job, Some(1234)),
            [
                "-t",
                "peakflops_avx512_fma",
                "-W",
                "N:32000B:2",
                "-i",
                "1234"
            ]
        );
        let sp = record(
            "cpu",
            "SP",
            "throughput",
            "GOPS",
            json!({"threads": 1, "isa": "avx2"}),
            None,
        );
        let mut c = ctx();
        c.duration = Some(Duration::from_millis(2500));
        let job = cpu_job(&sp, &c).unwrap().unwrap();
        assert_eq!(job.target_ms, 2500);
        assert_eq!(
            argv(&job, None),
            ["-t", "peakflops_sp_avx_fma", "-W", "N:16000B:1", "-s", "3"]
        );
        let scalar = record(
            "cpu",
            "DP",
            "throughput",
            "GOPS",
            json!({"threads": 1, "isa": "scalar"}),
            None,
        );
        assert_eq!(
            cpu_job(&scalar, &ctx()).unwrap().unwrap().kernel,
            "peakflops"
        );
        let neon = record(
            "cpu",
            "DP",
            "throughput",
            "GOPS",
            json!({"threads": 1, "isa": "neon"}),
            None,
        );
        assert!(matches!(
            cpu_job(&neon, &ctx()),
            Some(Err(RefError::Unsupported { .. }))
        ));
        let int = record("cpu", "INT32", "throughput", "GOPS", json!({}), None);
        assert!(cpu_job(&int, &ctx()).is_none());
    }

    #[test]
    fn mem_commands() {
        let copy = record(
            "mem",
            "COPY",
            "throughput",
            "GB/s",
            json!({"threads": 2, "isa": "avx512", "stores": "nt", "working_set_bytes": 268_435_456u64}),
            None,
        );
        let job = mem_job(&copy, &ctx()).unwrap().unwrap();
        assert_eq!(
            argv(&job, None),
            ["-t", "copy_mem_avx512", "-W", "N:268435456B:2", "-s", "1"]
        );
        let triad = record(
            "mem",
            "TRIAD",
            "throughput",
            "GB/s",
            json!({"threads": 1, "isa": "avx2", "stores": "regular", "working_set_bytes": 3_000_000}),
            None,
        );
        let job = mem_job(&triad, &ctx()).unwrap().unwrap();
        assert_eq!(
            argv(&job, None),
            ["-t", "stream_avx", "-W", "N:3000000B:1", "-s", "1"]
        );
        // SUM stores nothing: likwid-bench's plain sum kernel, whatever the stores say.
        let sum = record(
            "mem",
            "SUM",
            "throughput",
            "GB/s",
            json!({"threads": 2, "isa": "avx512", "stores": "nt", "working_set_bytes": 134_217_728u64}),
            None,
        );
        let job = mem_job(&sum, &ctx()).unwrap().unwrap();
        assert_eq!(
            argv(&job, None),
            ["-t", "sum_avx512", "-W", "N:134217728B:2", "-s", "1"]
        );
        let no_size = record(
            "mem",
            "COPY",
            "throughput",
            "GB/s",
            json!({"threads": 1}),
            None,
        );
        // A memory record without its kernel's parameters (the NULL workload's shape).
        let err = mem_job(&no_size, &ctx()).unwrap().unwrap_err();
        assert!(err.to_string().contains("instruction set"), "{err}");
        // likwid-bench has no SCALE kernel: the spec does not name it.
        let scale = record("mem", "SCALE", "throughput", "GB/s", json!({}), None);
        assert!(!scale.workload.spec().references.contains(&TOOL));
    }

    #[test]
    fn runs_are_sized_from_the_kernels_work_model() {
        let peakflops = parse_kernel_info(&fixture("likwid-list-peakflops.txt")).unwrap();
        assert_eq!(
            peakflops,
            KernelInfo {
                streams: 1,
                element_bytes: 8,
                flops_per_element: 30,
                bytes_per_element: 8
            }
        );
        // 2000 doubles × 30 flops = 60 000 flops per iteration; 1 s at 54.4 GFlop/s.
        let dp = record(
            "cpu",
            "DP",
            "throughput",
            "GOPS",
            json!({"threads": 1, "isa": "avx512"}),
            None,
        );
        let mut job = cpu_job(&dp, &ctx()).unwrap().unwrap();
        assert_eq!(iterations(&job, &peakflops, 54_400_000_000), Some(906_667));
        job.target_ms = 1;
        assert_eq!(iterations(&job, &peakflops, 1), Some(10));
        let stream = parse_kernel_info(&fixture("likwid-list-stream.txt")).unwrap();
        assert_eq!(
            stream,
            KernelInfo {
                streams: 3,
                element_bytes: 8,
                flops_per_element: 2,
                bytes_per_element: 24
            }
        );
        // 240 MB over 3 arrays and 2 threads: 5 M elements × 24 B = 120 MB per iteration and
        // thread; 0.5 s at 12 GB/s per thread.
        let triad = record(
            "mem",
            "TRIAD",
            "throughput",
            "GB/s",
            json!({"threads": 2, "isa": "avx512", "stores": "nt", "working_set_bytes": 240_000_000}),
            None,
        );
        let mut c = ctx();
        c.duration = Some(Duration::from_millis(500));
        let job = mem_job(&triad, &c).unwrap().unwrap();
        assert_eq!(iterations(&job, &stream, 12_000_000_000), Some(50));
        assert!(parse_kernel_info("Name: x\nData Type: Quad\n").is_err());
        assert!(parse_kernel_info("").is_err());
    }

    #[test]
    fn parses_recorded_peakflops() {
        let r = parse_output(&fixture("likwid-peakflops.txt")).unwrap();
        assert_eq!(r.test, "peakflops_avx512_fma");
        assert_eq!(r.threads, Some(1));
        assert_eq!(r.mflops_per_s, Some(54410.08));
        assert_eq!(r.mbytes_per_s, Some(14509.35));
        assert_eq!(r.time_s, Some(1.156303));
        let dp = record(
            "cpu",
            "DP",
            "throughput",
            "GOPS",
            json!({"threads": 1, "isa": "avx512"}),
            Some(100.0),
        );
        assert_eq!(figure(&r, &dp).unwrap(), 54410.08 * 1e6);
    }

    #[test]
    fn parses_recorded_copy() {
        let r = parse_output(&fixture("likwid-copy.txt")).unwrap();
        assert_eq!(r.test, "copy_mem_avx512");
        assert_eq!(r.threads, Some(1));
        assert_eq!(r.mbytes_per_s, Some(40836.17));
        let copy = record(
            "mem",
            "COPY",
            "throughput",
            "GB/s",
            json!({"threads": 1, "isa": "avx512", "stores": "nt", "working_set_bytes": 64_000_000}),
            Some(80.0),
        );
        assert_eq!(figure(&r, &copy).unwrap(), 40836.17 * 1e6);
    }

    #[test]
    fn parses_the_version() {
        assert_eq!(
            parse_version(&fixture("likwid-version.txt")).as_deref(),
            Some("5.2.2")
        );
        assert_eq!(parse_version("no version here"), None);
    }

    #[test]
    fn rejects_garbage_and_truncated_output() {
        assert!(parse_output("").is_err());
        assert!(parse_output("Segmentation fault").is_err());
        let text = fixture("likwid-peakflops.txt");
        let cut = &text[..text.find("MFlops/s").unwrap()];
        assert!(parse_output(cut).is_err());
        assert!(parse_output("MFlops/s:\t\tnan\n").is_err());
        assert!(parse_output("MFlops/s:\n").is_err());
        let unit = record("mem", "COPY", "latency", "ns", json!({}), None);
        let r = parse_output("MByte/s:\t\t1000.0\n").unwrap();
        assert!(figure(&r, &unit).is_err());
    }
}
