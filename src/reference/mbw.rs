//! mbw (1.2): memory RWS, blocks copied in sequence — its MCBLOCK test (`-t2 -b BLOCK`) copies
//! an array into another with one `memcpy` per block, in order, as RWS does.
//!
//! mbw is one thread: at N threads the job starts N mbw processes at once, each with one
//! thread's share of the arrays, and adds up their rates (the command line says so). RWR (blocks
//! at random) has no mbw test: from 1 MiB blocks ([`super::IN_ORDER_FROM`]) its copy in
//! sequence stands in, and the row says so; under that, the row says why it has no figure.
//!
//! Units: mbw's "Copy: X MiB/s" is the array's MiB over the time of one copy — bytes copied,
//! once. peakbench counts a copy as STREAM does, bytes read plus bytes written: B/s = 2 × X ×
//! 2²⁰. The time of one operation (a block per thread, all threads at once) is the block's
//! bytes copied over one process's rate.

use super::process::run_at_once;
use super::{IN_ORDER_FROM, RefContext, RefError, Tool, block_time, params_of, unit_error};
use crate::results::params::Order;
use crate::results::{Metric, ResultRecord, Unit};
use std::path::Path;
use std::process::Command;
use std::time::Duration;

const TOOL: Tool = Tool::Mbw;

/// Copies timed per run at least, and at most (mbw reports their mean).
const COPIES: (u64, u64) = (3, 10_000);

/// One set of mbw processes run at once.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Job {
    /// mbw processes at once (the point's threads).
    pub processes: u64,
    /// Each process's array, MiB (mbw takes whole MiB).
    pub array_mib: u64,
    pub block_bytes: u64,
    /// Copies each process times (`-n`).
    pub copies: u64,
    /// About how long the copies take, ms (for the plan).
    pub expected_ms: u64,
}

/// The time of one memcpy call of a small block, s: mbw's rate on small blocks is its calls'.
const CALL_S: f64 = 2e-9;

/// The run for a memory RWS record (throughput, or the time of one operation).
pub fn job(rec: &ResultRecord, ctx: &RefContext) -> Option<Result<Job, RefError>> {
    if !matches!(rec.metric, Metric::Throughput | Metric::Latency) {
        return None;
    }
    Some(build(rec, ctx))
}

fn build(rec: &ResultRecord, ctx: &RefContext) -> Result<Job, RefError> {
    let kernel = params_of(rec, TOOL, |p| p.mem().and_then(|m| m.kernel.as_ref()))?;
    let blocks = kernel.blocks.as_ref().ok_or_else(|| {
        RefError::unsupported(TOOL, "the point has no blocks (a whole-array kernel)")
    })?;
    // From IN_ORDER_FROM, its blocks in sequence stand in for random ones (the row says so:
    // `Job::differs`).
    if blocks.order == Order::Random && blocks.block_size_bytes < IN_ORDER_FROM {
        return Err(RefError::unsupported(
            TOOL,
            format!(
                "mbw copies blocks in sequence only, and a random order of blocks under {} is not its sequence; no tool here copies blocks at random",
                crate::units::format_bytes_binary(IN_ORDER_FROM)
            ),
        ));
    }
    let array_mib = whole_blocks_mib(
        (kernel.array_bytes_per_thread >> 20).max(1),
        blocks.block_size_bytes,
    )
    .ok_or_else(|| {
        RefError::unsupported(
            TOOL,
            format!(
                "its arrays are whole MiB, and no whole number of MiB up to the point's {} is a whole number of {}-byte blocks (mbw 1.2 writes past its arrays' end otherwise)",
                crate::units::format_bytes_binary(kernel.array_bytes_per_thread),
                blocks.block_size_bytes
            ),
        )
    })?;
    // Bytes read and written per second by one process: the point's own per thread.
    let measured = match (rec.metric, rec.summary.mean) {
        // (A planned point, not measured yet, has no rate: 10 GB/s is assumed.)
        (Metric::Throughput, bps) if bps > 1e6 => bps / rec.params.threads().max(1) as f64,
        _ => 10e9,
    };
    Ok(sized(
        Job {
            processes: rec.params.threads().max(1) as u64,
            array_mib,
            block_bytes: blocks.block_size_bytes,
            copies: 0,
            expected_ms: 0,
        },
        measured,
        ctx.own_seconds(),
    ))
}

/// `job` with as many copies as fill `seconds` at `per_process` bytes read and written per
/// second (each copy reads and writes the array), within COPIES; no more than one memcpy call
/// per CALL_S allows.
fn sized(job: Job, per_process: f64, seconds: f64) -> Job {
    let per_process = per_process.min(2.0 * job.block_bytes as f64 / CALL_S);
    let copy_s = 2.0 * (job.array_mib << 20) as f64 / per_process;
    let copies = ((seconds / copy_s).ceil() as u64).clamp(COPIES.0, COPIES.1);
    Job {
        copies,
        expected_ms: (copies as f64 * copy_s * 1e3).ceil() as u64,
        ..job
    }
}

/// `job` sized from what its previous run measured (a planned point has no rate of its own).
pub fn resized(job: &Job, previous: &MbwResult, seconds: f64) -> Job {
    let per_process = 2.0 * previous.copy_mib_s * 1_048_576.0 / previous.processes.max(1) as f64;
    if !(per_process.is_finite() && per_process > 1e6) {
        return job.clone();
    }
    sized(job.clone(), per_process, seconds)
}

/// The largest array of whole MiB, at most `mib`, that is a whole number of `block`-byte
/// blocks: mbw 1.2's MCBLOCK copies its last, partial block past the arrays' end (glibc then
/// aborts it: "munmap_chunk(): invalid pointer"). `None` where there is none.
pub fn whole_blocks_mib(mib: u64, block: u64) -> Option<u64> {
    if block == 0 {
        return None;
    }
    // k MiB is a whole number of blocks when block / gcd(block, 2^20) divides k.
    let step = block / gcd(block, 1 << 20);
    let k = mib / step * step;
    (k > 0).then_some(k)
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// One mbw process's arguments: quiet, the MCBLOCK test, the block, the copies, the array.
pub fn argv(job: &Job) -> Vec<String> {
    vec![
        "-q".into(),
        "-t2".into(),
        "-b".into(),
        job.block_bytes.to_string(),
        "-n".into(),
        job.copies.to_string(),
        job.array_mib.to_string(),
    ]
}

/// Runs the job's processes at once; each bounded to five minutes.
pub fn run(program: &Path, job: &Job) -> Result<MbwResult, RefError> {
    let command = || {
        let mut cmd = Command::new(program);
        cmd.args(argv(job));
        cmd
    };
    // Each process on a thread of its own, all at once.
    let each = run_at_once(
        TOOL,
        job.processes,
        &|_| command(),
        Duration::from_secs(300),
        &|out| parse_output(&out.stdout),
    )?;
    let total = MbwResult {
        copy_mib_s: each.iter().map(|r| r.copy_mib_s).sum(),
        processes: each.len() as u64,
    };
    Ok(total)
}

/// What mbw reported: the mean copy rate (its AVG line), MiB copied per second, summed over
/// the processes run at once.
#[derive(Debug, Clone, PartialEq)]
pub struct MbwResult {
    pub copy_mib_s: f64,
    pub processes: u64,
}

/// Parses one mbw run's `AVG … Copy: X MiB/s` line.
pub fn parse_output(text: &str) -> Result<MbwResult, String> {
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with("AVG"))
        .ok_or("no AVG line (was it run with -a?)")?;
    let rate = line
        .split_once("Copy:")
        .and_then(|(_, r)| r.split_whitespace().next())
        .and_then(|v| v.parse::<f64>().ok())
        .and_then(super::tool_number)
        .filter(|v| *v > 0.0)
        .ok_or_else(|| format!("'{}' has no copy rate", line.trim()))?;
    Ok(MbwResult {
        copy_mib_s: rate,
        processes: 1,
    })
}

/// The figure for `rec`: bytes read and written per second, or the time of one block copied
/// by each thread at once, in seconds.
pub fn figure(r: &MbwResult, rec: &ResultRecord) -> Result<f64, RefError> {
    let copied = r.copy_mib_s * 1_048_576.0;
    match (rec.metric, rec.unit) {
        (Metric::Throughput, Unit::BytesPerSec) => Ok(2.0 * copied),
        (Metric::Latency, Unit::Seconds) => {
            block_time(TOOL, rec, copied / r.processes.max(1) as f64)
        }
        _ => Err(unit_error(TOOL, rec)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reference::testing::{fixture, record};
    use serde_json::json;

    fn rws(metric: &str, unit: &str, block: u64, order: &str, threads: usize) -> ResultRecord {
        record(
            "mem",
            if order == "random" { "RWR" } else { "RWS" },
            metric,
            unit,
            json!({"threads": threads, "isa": "avx512", "stores": "nt",
                   "array_bytes_per_thread": 64u64 << 20, "working_set_bytes": 128u64 << 20,
                   "block_size_bytes": block, "blocks_per_thread": (64u64 << 20) / block,
                   "order": order}),
            None,
        )
    }

    /// mbw 1.2 aborts when its array is no whole number of blocks: the array is rounded down
    /// to one that is.
    #[test]
    fn arrays_are_whole_numbers_of_blocks() {
        assert_eq!(whole_blocks_mib(256, 10 << 20), Some(250));
        assert_eq!(whole_blocks_mib(1024, 80 << 20), Some(960));
        assert_eq!(whole_blocks_mib(128, 80 << 20), Some(80));
        assert_eq!(whole_blocks_mib(64, 80 << 20), None);
        assert_eq!(whole_blocks_mib(64, 1024), Some(64));
        assert_eq!(whole_blocks_mib(64, 1), Some(64));
        assert_eq!(whole_blocks_mib(200, 1000), Some(125));
        assert_eq!(whole_blocks_mib(64, 0), None);
    }

    /// A recorded run: 64 MiB copied in 1 KiB blocks, five times; AVG 7791.955 MiB/s.
    #[test]
    fn parses_a_recorded_run() {
        let r = parse_output(&fixture("mbw-mcblock.txt")).unwrap();
        assert_eq!(r.copy_mib_s, 7791.955);
        // Read and written: twice the bytes copied.
        let t = rws("throughput", "B/s", 1024, "sequential", 1);
        assert_eq!(figure(&r, &t).unwrap(), 2.0 * 7791.955 * 1_048_576.0);
        let op = rws("latency", "s", 1024, "sequential", 1);
        assert_eq!(
            figure(&op_rate(&r, 2), &op).unwrap(),
            1024.0 / (7791.955 * 1_048_576.0)
        );
        for bad in [
            "",
            "AVG\tMethod: MCBLOCK\tCopy: nan MiB/s",
            "0\tMethod: MCBLOCK\tCopy: 1 MiB/s",
        ] {
            assert!(parse_output(bad).is_err(), "{bad}");
        }
    }

    /// Two processes at once, each as fast as the one recorded.
    fn op_rate(r: &MbwResult, n: u64) -> MbwResult {
        MbwResult {
            copy_mib_s: r.copy_mib_s * n as f64,
            processes: n,
        }
    }

    #[test]
    fn jobs_follow_the_point() {
        let ctx = RefContext::new(std::env::temp_dir());
        let j = job(&rws("throughput", "B/s", 4096, "sequential", 2), &ctx)
            .unwrap()
            .unwrap();
        assert_eq!((j.processes, j.array_mib, j.block_bytes), (2, 64, 4096));
        assert_eq!(&argv(&j)[..4], ["-q", "-t2", "-b", "4096"]);
        // No whole number of 1000-byte blocks fills 1 to 64 MiB (125 MiB is the least).
        let e = job(&rws("throughput", "B/s", 1000, "sequential", 2), &ctx)
            .unwrap()
            .unwrap_err()
            .to_string();
        assert!(e.contains("writes past its arrays"), "{e}");
        assert!(j.copies >= COPIES.0);
        let e = job(&rws("throughput", "B/s", 1000, "random", 1), &ctx)
            .unwrap()
            .unwrap_err()
            .to_string();
        assert!(e.contains("in sequence only"), "{e}");
        // From 1 MiB blocks, the copy in sequence stands in for random blocks (one run for
        // both), and says so.
        let (seq, rnd) = (
            rws("throughput", "B/s", 1 << 20, "sequential", 1),
            rws("throughput", "B/s", 1 << 20, "random", 1),
        );
        let j = job(&rnd, &ctx).unwrap().unwrap();
        assert_eq!(Some(&j), job(&seq, &ctx).unwrap().as_ref().ok());
        let j = crate::reference::Job::Mbw(j);
        assert!(
            j.differs(&rnd)
                .unwrap()
                .starts_with("mbw takes the same blocks in sequence")
        );
        assert_eq!(j.differs(&seq), None);
    }
}
