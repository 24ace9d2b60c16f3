//! sysbench (1.0) `memory`: memory RS, WS (blocks read or written in sequence), RR, WR with
//! 8-byte blocks (words read or written at random) or blocks of 1 MiB or more, and LATENCY's
//! 8-byte probes.
//!
//! What sysbench measures: each thread has a buffer of its own (`--memory-scope=local`) of
//! `--memory-block-size` bytes (a power of two); one event reads or writes the whole buffer,
//! 8-byte word by word, in order (`seq`) or at random word offsets (`rnd`). So the job gives
//! it a buffer of the point's array per thread (the largest power of two that fits in it),
//! and:
//! - RS, WS at any block size of 8 B or more: blocks in sequence through the array are one
//!   sequential stream of it, which `seq` reads or writes;
//! - RR, WR at 8-byte blocks: random 8-byte words of the array, which `rnd` is;
//! - RR, WR at blocks of 1 MiB or more ([`super::IN_ORDER_FROM`]): `seq` over the same array
//!   stands in, as a random order of such blocks changes only each block's first lines (the
//!   row says so);
//! - LATENCY's 8-byte probes (`seq-8B`, `random-8B`): independent 8-byte loads over each
//!   thread's span, which `read` of a buffer of that span in `seq` or `rnd` mode is; the time
//!   of one load is a word over one thread's share of the rate;
//! - nothing else: random blocks of more than a word are not random words, a block under 8
//!   bytes is not sysbench's smallest operation, and sysbench chases no pointers (the row says
//!   so).
//!
//! Units: "MiB transferred (X MiB/sec)" counts the bytes read or written, as peakbench counts
//! RS, WS, RR and WR: B/s = X × 2²⁰. The time of one operation (a block per thread, all
//! threads at once) is the block's bytes over one thread's share of that rate.

use super::process::run_bounded;
use super::{IN_ORDER_FROM, RefContext, RefError, Tool, block_time, params_of, unit_error};
use crate::results::params::{LatencyParams, Order, Params};
use crate::results::{Metric, ResultRecord, Unit};
use crate::workload::mem::MemWorkload;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

const TOOL: Tool = Tool::Sysbench;

/// sysbench's smallest operation: one 8-byte word (`size_t`).
const WORD: u64 = 8;

/// One `sysbench memory` run.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Job {
    /// `read` or `write`.
    pub oper: &'static str,
    /// `seq` or `rnd`.
    pub mode: &'static str,
    /// Each thread's buffer, bytes: a power of two.
    pub buffer_bytes: u64,
    pub threads: u64,
    /// `--time`, whole seconds (sysbench takes no fraction).
    pub seconds: u64,
}

/// The run for a memory RS, WS, RR or WR record (throughput, or the time of one operation).
pub fn job(rec: &ResultRecord, ctx: &RefContext) -> Option<Result<Job, RefError>> {
    let w = rec.workload.mem()?;
    if !matches!(rec.metric, Metric::Throughput | Metric::Latency) {
        return None;
    }
    Some(match &rec.params {
        Params::MemLatency(p) => probe_job(p, ctx),
        _ => build(rec, ctx, w),
    })
}

/// The run for a LATENCY point's 8-byte probe: independent 8-byte loads over each thread's
/// span, in sequence or at random, are `read` of a buffer of that span in `seq` or `rnd` mode;
/// the time of one load is the word over one thread's share of the rate.
fn probe_job(p: &LatencyParams, ctx: &RefContext) -> Result<Job, RefError> {
    let Some(op) = &p.op else {
        return Err(RefError::unsupported(
            TOOL,
            "it does not chase pointers (each load's address read by the load before); \
             lmbench's lat_mem_rd and Intel MLC, which do, cannot be had here",
        ));
    };
    if op.op_bytes != WORD {
        return Err(RefError::unsupported(
            TOOL,
            format!(
                "its smallest operation is an 8-byte word, and this point's are {}-byte loads",
                op.op_bytes
            ),
        ));
    }
    let span = op.working_set_bytes.max(WORD);
    Ok(Job {
        oper: "read",
        mode: if op.order == Order::Random {
            "rnd"
        } else {
            "seq"
        },
        buffer_bytes: 1u64 << (63 - span.leading_zeros()),
        threads: p.threads.max(1) as u64,
        seconds: seconds(ctx),
    })
}

/// `--time`: the context's time for a tool's run, in whole seconds.
fn seconds(ctx: &RefContext) -> u64 {
    ctx.seconds(None).unwrap_or(1.0).ceil().clamp(1.0, 3600.0) as u64
}

fn build(rec: &ResultRecord, ctx: &RefContext, w: MemWorkload) -> Result<Job, RefError> {
    let kernel = params_of(rec, TOOL, |p| p.mem().and_then(|m| m.kernel.as_ref()))?;
    let blocks = kernel.blocks.as_ref().ok_or_else(|| {
        RefError::unsupported(TOOL, "the point has no blocks (a whole-array kernel)")
    })?;
    let block = blocks.block_size_bytes;
    if block < WORD {
        return Err(RefError::unsupported(
            TOOL,
            format!(
                "its smallest operation is an 8-byte word, and this point's are {block}-byte blocks"
            ),
        ));
    }
    // Random blocks of a word are rnd's random words; from IN_ORDER_FROM, seq's blocks in
    // sequence stand in for random ones (the row says so: `Job::differs`).
    let random = blocks.order == Order::Random && block == WORD;
    if blocks.order == Order::Random && block != WORD && block < IN_ORDER_FROM {
        return Err(RefError::unsupported(
            TOOL,
            format!(
                "--memory-access-mode=rnd reads or writes random 8-byte words, not random {block}-byte blocks, and a random order of blocks under {} is not the sequence it reads",
                crate::units::format_bytes_binary(IN_ORDER_FROM)
            ),
        ));
    }
    let oper = match w {
        MemWorkload::Rs | MemWorkload::Rr => "read",
        MemWorkload::Ws | MemWorkload::Wr => "write",
        _ => return Err(unit_error(TOOL, rec)),
    };
    // The largest power of two within each thread's array (sysbench allows nothing else).
    let array = kernel.array_bytes_per_thread.max(WORD);
    let buffer_bytes = 1u64 << (63 - array.leading_zeros());
    Ok(Job {
        oper,
        mode: if random { "rnd" } else { "seq" },
        buffer_bytes,
        threads: rec.params.threads().max(1) as u64,
        seconds: seconds(ctx),
    })
}

/// sysbench's arguments for `job`: time-bound (the total is set past anything reachable).
pub fn argv(job: &Job) -> Vec<String> {
    vec![
        "memory".into(),
        format!("--memory-block-size={}", job.buffer_bytes),
        "--memory-scope=local".into(),
        "--memory-total-size=1000T".into(),
        format!("--memory-oper={}", job.oper),
        format!("--memory-access-mode={}", job.mode),
        format!("--threads={}", job.threads),
        format!("--time={}", job.seconds),
        "run".into(),
    ]
}

/// Runs `job`, bounded to its time and a minute more (a buffer is written before the clock
/// starts).
pub fn run(program: &Path, job: &Job) -> Result<MemoryResult, RefError> {
    let mut cmd = Command::new(program);
    cmd.args(argv(job));
    let out = run_bounded(TOOL, cmd, Duration::from_secs(job.seconds + 60))?;
    if !out.status.success() {
        return Err(out.failure(TOOL));
    }
    let r = parse_memory(&out.stdout).map_err(|m| RefError::parse(TOOL, m))?;
    if r.threads != Some(job.threads) {
        return Err(RefError::failed(
            TOOL,
            format!("it ran {:?} threads, not {}", r.threads, job.threads),
        ));
    }
    Ok(r)
}

/// What one `sysbench memory` run reports.
#[derive(Debug, Clone, PartialEq)]
pub struct MemoryResult {
    /// "Number of threads".
    pub threads: Option<u64>,
    /// "Total operations: N (R per second)": events (whole buffers), all threads.
    pub operations: u64,
    pub operations_per_s: f64,
    /// "X MiB transferred (R MiB/sec)".
    pub mib_per_s: f64,
    /// The buffer sysbench stated ("block size: 65536KiB"), bytes.
    pub block_bytes: Option<u64>,
}

/// Parses sysbench's report: the thread count, the operations line and the transfer line.
pub fn parse_memory(text: &str) -> Result<MemoryResult, String> {
    let mut r = MemoryResult {
        threads: None,
        operations: 0,
        operations_per_s: f64::NAN,
        mib_per_s: f64::NAN,
        block_bytes: None,
    };
    for line in text.lines().map(str::trim) {
        if let Some(rest) = line.strip_prefix("Number of threads:") {
            r.threads = rest.trim().parse().ok();
        } else if let Some(rest) = line.strip_prefix("Total operations:") {
            // "1048576 (7159187.43 per second)"
            let (count, rate) = rest
                .split_once('(')
                .ok_or_else(|| format!("'{line}' has no rate"))?;
            r.operations = count
                .trim()
                .parse()
                .ok()
                .and_then(super::tool_count)
                .ok_or_else(|| format!("'{line}' has no count"))?;
            r.operations_per_s =
                number_before(rate, "per second").ok_or_else(|| format!("'{line}' has no rate"))?;
        } else if line.contains("MiB transferred (") {
            let (_, rate) = line.split_once('(').unwrap_or_default();
            r.mib_per_s =
                number_before(rate, "MiB/sec").ok_or_else(|| format!("'{line}' has no rate"))?;
        } else if let Some(rest) = line.strip_prefix("block size:") {
            r.block_bytes = crate::units::parse_size(rest.trim()).ok();
        }
    }
    if !(r.mib_per_s.is_finite() && r.mib_per_s > 0.0) {
        return Err("no 'MiB transferred (… MiB/sec)' line with a rate above zero".into());
    }
    if !(r.operations_per_s.is_finite() && r.operations_per_s > 0.0) {
        return Err("no 'Total operations: … per second' line with a rate above zero".into());
    }
    Ok(r)
}

/// The number in `text` before `unit` ("  37746.23 MiB/sec)" → 37746.23).
fn number_before(text: &str, unit: &str) -> Option<f64> {
    let head = &text[..text.find(unit)?];
    head.split_whitespace()
        .last()?
        .parse()
        .ok()
        .and_then(super::tool_number)
}

/// The figure for `rec`: its bytes per second, or the time of one of its operations (a block
/// per thread, all threads at once), in seconds.
pub fn figure(r: &MemoryResult, rec: &ResultRecord) -> Result<f64, RefError> {
    let bytes_per_s = r.mib_per_s * 1_048_576.0;
    match (rec.metric, rec.unit) {
        (Metric::Throughput, Unit::BytesPerSec) => Ok(bytes_per_s),
        (Metric::Latency, Unit::Seconds) => {
            let per_thread = bytes_per_s / rec.params.threads().max(1) as f64;
            match &rec.params {
                // One 8-byte load of each thread.
                Params::MemLatency(_) => Ok(WORD as f64 / per_thread),
                _ => block_time(TOOL, rec, per_thread),
            }
        }
        _ => Err(unit_error(TOOL, rec)),
    }
}

/// sysbench's version ("sysbench 1.0.20" → "1.0.20").
pub fn parse_version(text: &str) -> Option<String> {
    super::version_after(text, "sysbench")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reference::testing::{fixture, record};
    use serde_json::json;

    fn block_record(
        workload: &str,
        metric: &str,
        unit: &str,
        block: u64,
        order: &str,
    ) -> ResultRecord {
        record(
            "mem",
            workload,
            metric,
            unit,
            json!({"threads": 2, "isa": "avx512", "stores": "regular",
                   "array_bytes_per_thread": 100_000_000u64, "working_set_bytes": 200_000_000u64,
                   "block_size_bytes": block, "blocks_per_thread": 100_000_000u64 / block,
                   "order": order}),
            None,
        )
    }

    /// Recorded runs: 64 MiB buffers on two threads, read in sequence, and words at random.
    #[test]
    fn parses_recorded_runs() {
        let seq = parse_memory(&fixture("sysbench-memory-seq-read.txt")).unwrap();
        assert_eq!(seq.threads, Some(2));
        assert_eq!(seq.operations, 517);
        assert!((seq.operations_per_s - 514.76).abs() < 1e-9);
        assert!((seq.mib_per_s - 32944.68).abs() < 1e-9);
        assert_eq!(seq.block_bytes, Some(64 << 20));
        let rnd = parse_memory(&fixture("sysbench-memory-rnd-read.txt")).unwrap();
        assert!((rnd.mib_per_s - 1273.00).abs() < 1e-9);
        let rs = block_record("RS", "throughput", "B/s", 1000, "sequential");
        assert_eq!(figure(&seq, &rs).unwrap(), 32944.68 * 1_048_576.0);
        // One 1000-byte block per thread, two threads, at that rate.
        let op = block_record("RS", "latency", "s", 1000, "sequential");
        let t = figure(&seq, &op).unwrap();
        assert!((t - 2000.0 / (32944.68 * 1_048_576.0)).abs() < 1e-18, "{t}");
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        for text in [
            "",
            "Total operations: x",
            "Total operations: 5 (abc per second)\n1 MiB transferred (0 MiB/sec)",
        ] {
            assert!(parse_memory(text).is_err(), "{text}");
        }
        assert_eq!(
            parse_version("sysbench 1.0.20 (using bundled LuaJIT)").as_deref(),
            Some("1.0.20")
        );
    }

    /// The job follows the point: the array per thread as a power of two, read or write, in
    /// sequence or at random words; what sysbench cannot do is refused with the reason.
    #[test]
    fn jobs_match_the_point_or_say_why_not() {
        let ctx = RefContext::new(std::env::temp_dir());
        let job = |w, block, order| {
            job(&block_record(w, "throughput", "B/s", block, order), &ctx).unwrap()
        };
        let rs = job("RS", 1000, "sequential").unwrap();
        assert_eq!(
            (rs.oper, rs.mode, rs.buffer_bytes, rs.threads),
            ("read", "seq", 64 << 20, 2)
        );
        assert!(argv(&rs).contains(&"--memory-scope=local".to_string()));
        let wr = job("WR", 8, "random").unwrap();
        assert_eq!((wr.oper, wr.mode), ("write", "rnd"));
        // Random blocks of 1 MiB or more: the same blocks in sequence, and the row says so.
        let rr = block_record("RR", "throughput", "B/s", 1 << 20, "random");
        let big = super::job(&rr, &ctx).unwrap().unwrap();
        assert_eq!((big.oper, big.mode), ("read", "seq"));
        let rs_rec = block_record("RS", "throughput", "B/s", 1 << 20, "sequential");
        let rs_job = super::job(&rs_rec, &ctx).unwrap().unwrap();
        // One run for both.
        assert_eq!(big, rs_job);
        let differs = crate::reference::Job::Sysbench(big).differs(&rr).unwrap();
        assert!(differs.contains("in sequence, not at random"), "{differs}");
        assert_eq!(
            crate::reference::Job::Sysbench(rs_job).differs(&rs_rec),
            None
        );
        let e = job("RR", 1000, "random").unwrap_err().to_string();
        assert!(
            e.contains("random 8-byte words, not random 1000-byte blocks"),
            "{e}"
        );
        let e = job("RS", 1, "sequential").unwrap_err().to_string();
        assert!(e.contains("8-byte word"), "{e}");
        // LATENCY's 8-byte probes over each thread's span; not its 1-byte ones, nor a chase.
        let probe = |name: &str, bytes: u64, order: &str| {
            let params = json!({"threads": 2, "probe": name, "op_bytes": bytes, "order": order,
                                "working_set_bytes": 3u64 << 20, "ops": 10});
            super::job(
                &record("mem", "LATENCY", "latency", "s", params, None),
                &ctx,
            )
            .unwrap()
        };
        let rnd = probe("random-8B", 8, "random").unwrap();
        assert_eq!(
            (rnd.oper, rnd.mode, rnd.buffer_bytes, rnd.threads),
            ("read", "rnd", 2 << 20, 2)
        );
        assert_eq!(probe("seq-8B", 8, "sequential").unwrap().mode, "seq");
        let e = probe("seq-1B", 1, "sequential").unwrap_err().to_string();
        assert!(e.contains("1-byte loads"), "{e}");
        let chase = json!({"threads": 1, "probe": "chase"});
        let e = super::job(&record("mem", "LATENCY", "latency", "s", chase, None), &ctx)
            .unwrap()
            .unwrap_err()
            .to_string();
        assert!(e.contains("does not chase pointers"), "{e}");
        // One 8-byte load of each of the two threads at the seq run's rate.
        let seq = parse_memory(&fixture("sysbench-memory-seq-read.txt")).unwrap();
        let params = json!({"threads": 2, "probe": "seq-8B", "op_bytes": 8,
                            "order": "sequential", "working_set_bytes": 64u64 << 20, "ops": 10});
        let t = figure(
            &seq,
            &record("mem", "LATENCY", "latency", "s", params, None),
        )
        .unwrap();
        assert!((t - 16.0 / (32944.68 * 1_048_576.0)).abs() < 1e-18, "{t}");
        // No tool for a copy of blocks here (mbw's); nor for the whole-array kernels.
        let rws = block_record("RWS", "throughput", "B/s", 1000, "sequential");
        assert!(!rws.workload.spec().references.contains(&TOOL));
    }
}
