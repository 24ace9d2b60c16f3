//! dd (GNU coreutils): disk COPY, a file copied block by block to a second file — what dd is.
//!
//! The job mirrors the point: the same block size (`bs`), O_DIRECT on both files
//! (`iflag=direct oflag=direct`) or through the page cache, the writes made durable at the end
//! (`conv=fdatasync`) as peakbench's are, and one dd per thread at once, each copying its own
//! part of one source into the same place of one destination (`skip`, `seek`,
//! `conv=notrunc`). The source is laid out first (from /dev/zero) in the point's directory,
//! and both files are removed afterwards whatever happens.
//!
//! Units: dd states the bytes it copied and the seconds it took. peakbench counts a copy's
//! bytes read and written, and its reads and writes as I/Os: B/s = 2 × copied ÷ time (the
//! longest dd's), IOPS = B/s ÷ block, and the latency of one I/O is the threads over the IOPS
//! (each thread has one I/O in flight).

use super::process::{TempPath, run_at_once, run_bounded};
use super::{RefContext, RefError, Tool, params_of, unit_error};
use crate::results::params::IoMode;
use crate::results::{Metric, ResultRecord, Unit};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

const TOOL: Tool = Tool::Dd;

/// The least block O_DIRECT takes (a logical sector).
const SECTOR: u64 = 512;
/// Each thread copies at most this much (the source is laid out first).
const MAX_PER_THREAD: u64 = 256 << 20;

/// One copy: `threads` dd processes at once.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Job {
    pub block_bytes: u64,
    /// Blocks each dd copies.
    pub count: u64,
    pub threads: u64,
    pub direct: bool,
    pub dir: PathBuf,
    /// About how long the copy takes, ms (for the plan).
    pub expected_ms: u64,
}

/// The run for a disk COPY record (throughput, IOPS or latency).
pub fn job(rec: &ResultRecord, ctx: &RefContext) -> Option<Result<Job, RefError>> {
    if !matches!(
        rec.metric,
        Metric::Throughput | Metric::Iops | Metric::Latency
    ) {
        return None;
    }
    Some(build(rec, ctx))
}

fn build(rec: &ResultRecord, ctx: &RefContext) -> Result<Job, RefError> {
    let p = params_of(rec, TOOL, |p| p.disk())?;
    let block = p.block_size_bytes.max(1);
    let direct = p.io_mode != IoMode::Buffered;
    if direct && !block.is_multiple_of(SECTOR) {
        return Err(RefError::unsupported(
            TOOL,
            format!(
                "O_DIRECT takes whole {SECTOR}-byte sectors, and this point's blocks are {block} bytes"
            ),
        ));
    }
    if p.iodepth > 1 {
        return Err(RefError::unsupported(
            TOOL,
            format!("dd has one I/O in flight, and this point had {}", p.iodepth),
        ));
    }
    let dir = match Path::new(&p.target).parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => ctx.dir.clone(),
    };
    let threads = p.threads.max(1) as u64;
    // As many blocks as fill the point's time at about 100 MB/s, or 300 000 blocks a second
    // for small ones (two system calls each). Not from the point's figures: the records of
    // one point (MB/s, IOPS, latency) share one run.
    let seconds = ctx.seconds(Some(p.runtime_s)).unwrap_or(1.0);
    let blocks_per_s = (100e6 / block as f64).min(300_000.0);
    let count = ((seconds * blocks_per_s).ceil() as u64).clamp(1, (MAX_PER_THREAD / block).max(1));
    Ok(Job {
        block_bytes: block,
        count,
        threads,
        direct,
        dir,
        // The copy, the source laid out (at about 500 MB/s) and the copy synced to the disk at
        // the end (at about 200 MB/s).
        expected_ms: (count as f64 / blocks_per_s * 1e3).ceil() as u64
            + (count * block * threads) / 500_000
            + (count * block * threads) / 200_000,
    })
}

/// Thread `i`'s dd: its part of the source into the same place of the destination.
pub fn argv(job: &Job, i: u64, src: &Path, dst: &Path) -> Vec<String> {
    let mut a = vec![
        format!("if={}", src.display()),
        format!("of={}", dst.display()),
        format!("bs={}", job.block_bytes),
        format!("count={}", job.count),
        format!("skip={}", i * job.count),
        format!("seek={}", i * job.count),
        "conv=notrunc,fdatasync".into(),
    ];
    if job.direct {
        a.extend(["iflag=direct".into(), "oflag=direct".into()]);
    }
    a
}

/// Lays the source out, runs the dd processes at once, and removes both files.
pub fn run(program: &Path, job: &Job) -> Result<DdResult, RefError> {
    if !job.dir.is_dir() {
        return Err(RefError::failed(
            TOOL,
            format!("{} is not a directory", job.dir.display()),
        ));
    }
    let src = TempPath::new(&job.dir, "peakbench-ref-dd-src");
    let dst = TempPath::new(&job.dir, "peakbench-ref-dd-dst");
    let total = job.count * job.block_bytes * job.threads;
    let layout_bs = job.block_bytes.max(1 << 20);
    let mut lay = Command::new(program);
    lay.args([
        "if=/dev/zero".to_string(),
        format!("of={}", src.0.display()),
        format!("bs={layout_bs}"),
        format!("count={}", total.div_ceil(layout_bs)),
        "conv=fdatasync".into(),
    ]);
    let timeout = Duration::from_secs(60 + total / 10_000_000);
    let laid = run_bounded(TOOL, lay, timeout)?;
    if !laid.status.success() {
        return Err(laid.failure(TOOL));
    }
    let command = |i: u64| {
        let mut cmd = Command::new(program);
        cmd.args(argv(job, i, &src.0, &dst.0));
        cmd
    };
    // Each dd on a thread of its own, all at once.
    let each = run_at_once(TOOL, job.threads, &command, timeout, &|out| {
        parse_output(&out.stderr)
    })?;
    let r = DdResult {
        bytes: each.iter().fold(0u64, |sum, (b, _)| sum.saturating_add(*b)),
        seconds: each.iter().map(|(_, s)| *s).fold(0.0, f64::max),
        threads: job.threads,
        block_bytes: job.block_bytes,
    };
    drop((src, dst));
    Ok(r)
}

/// What the dd processes of one copy did together.
#[derive(Debug, Clone, PartialEq)]
pub struct DdResult {
    /// Bytes copied by all of them.
    pub bytes: u64,
    /// The longest one's time.
    pub seconds: f64,
    pub threads: u64,
    pub block_bytes: u64,
}

/// Parses dd's last line: "N bytes (…) copied, T s, R MB/s" → (N, T).
pub fn parse_output(text: &str) -> Result<(u64, f64), String> {
    let line = text
        .lines()
        .rev()
        .find(|l| l.contains(" copied, "))
        .ok_or("no '… bytes … copied, … s' line")?;
    let bytes = line
        .split_whitespace()
        .next()
        .and_then(|b| b.parse::<u64>().ok())
        .and_then(super::tool_count)
        .ok_or_else(|| format!("'{}' has no byte count", line.trim()))?;
    let secs = line
        .split_once(" copied, ")
        .and_then(|(_, rest)| rest.split_whitespace().next())
        .and_then(|s| s.parse::<f64>().ok())
        .and_then(super::tool_number)
        .filter(|s| *s > 0.0)
        .ok_or_else(|| format!("'{}' has no time", line.trim()))?;
    if bytes == 0 {
        return Err(format!("'{}': nothing was copied", line.trim()));
    }
    Ok((bytes, secs))
}

/// The figure for `rec`: bytes read and written per second, reads and writes per second, or
/// the time of one of them.
pub fn figure(r: &DdResult, rec: &ResultRecord) -> Result<f64, RefError> {
    let bps = 2.0 * r.bytes as f64 / r.seconds;
    let iops = bps / r.block_bytes.max(1) as f64;
    match (rec.metric, rec.unit) {
        (Metric::Throughput, Unit::BytesPerSec) => Ok(bps),
        (Metric::Iops, Unit::Iops) => Ok(iops),
        (Metric::Latency, Unit::Seconds) => Ok(r.threads as f64 / iops),
        _ => Err(unit_error(TOOL, rec)),
    }
}

/// dd's version ("dd (coreutils) 9.1" → "9.1").
pub fn parse_version(text: &str) -> Option<String> {
    super::version_after(text, "coreutils)")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reference::testing::{fixture, record};
    use serde_json::json;

    fn copy(metric: &str, unit: &str, block: u64, buffered: bool) -> ResultRecord {
        record(
            "disk",
            "COPY",
            metric,
            unit,
            json!({"threads": 2, "block_size_bytes": block, "read_percent": 50,
                   "pattern": "sequential",
                   "io_mode": if buffered { "buffered" } else { "direct" }}),
            None,
        )
    }

    /// A recorded copy: 4 MiB in 64 KiB blocks in 0.00392109 s.
    #[test]
    fn parses_a_recorded_copy() {
        let (bytes, secs) = parse_output(&fixture("dd-copy.txt")).unwrap();
        assert_eq!((bytes, secs), (4_194_304, 0.00392109));
        let r = DdResult {
            bytes,
            seconds: secs,
            threads: 2,
            block_bytes: 65536,
        };
        let bps = 2.0 * 4_194_304.0 / 0.00392109;
        assert_eq!(
            figure(&r, &copy("throughput", "B/s", 65536, false)).unwrap(),
            bps
        );
        assert_eq!(
            figure(&r, &copy("iops", "IOPS", 65536, false)).unwrap(),
            bps / 65536.0
        );
        let lat = figure(&r, &copy("latency", "s", 65536, false)).unwrap();
        assert!((lat - 2.0 * 65536.0 / bps).abs() < 1e-15, "{lat}");
        for bad in [
            "",
            "0 bytes copied, 0.1 s, 0 kB/s",
            "x bytes copied, 1 s",
            "5 bytes copied, nan s",
        ] {
            assert!(parse_output(bad).is_err(), "{bad}");
        }
        assert_eq!(
            parse_version("dd (coreutils) 9.1\nCopyright").as_deref(),
            Some("9.1")
        );
    }

    /// Sectors for O_DIRECT; depth 1; other workloads are not dd's.
    #[test]
    fn jobs_follow_the_point_or_say_why_not() {
        let ctx = RefContext::new(std::env::temp_dir());
        let j = job(&copy("throughput", "B/s", 65536, false), &ctx)
            .unwrap()
            .unwrap();
        assert!(j.direct && j.threads == 2 && j.count >= 1);
        let a = argv(&j, 1, Path::new("/s"), Path::new("/d"));
        assert!(a.contains(&format!("skip={}", j.count)) && a.contains(&"oflag=direct".into()));
        let e = job(&copy("throughput", "B/s", 8, false), &ctx)
            .unwrap()
            .unwrap_err();
        assert!(e.to_string().contains("512-byte sectors"), "{e}");
        assert!(
            job(&copy("throughput", "B/s", 8, true), &ctx)
                .unwrap()
                .is_ok()
        );
        // dd is chosen for COPY by its spec, and for no other disk workload.
        for w in crate::workload::disk::DiskWorkload::ALL {
            let named = w.spec().references.contains(&Tool::Dd);
            assert_eq!(named, w == crate::workload::disk::DiskWorkload::Copy, "{w}");
        }
    }
}
