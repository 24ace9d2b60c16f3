//! sysbench (1.0) `fileio`: disk RS, WS, RR, WR and RW beside fio — IOzone's operations, with
//! the point's block size, threads, file size, O_DIRECT and sync mode.
//!
//! The job mirrors the point: one file of the point's size (`--file-num=1`), the block
//! (`--file-block-size`), the threads, `--file-test-mode` seqrd, seqwr, rndrd, rndwr or rndrw
//! (with `--file-rw-ratio` = reads ÷ writes), `--file-extra-flags=direct` unless buffered, the
//! sync mode (none; fdatasync at the end; fsync after each write; O_SYNC; O_DSYNC), uniform
//! random offsets (`--rand-type=uniform`; its default favours a few blocks), and the ramp and
//! the runtime in whole seconds (`--time` is both; `--report-checkpoints` at the ramp's end
//! resets the counters, and the last report is parsed).
//! sysbench names its files `test_file.N` in its working directory, so it runs in a directory
//! of its own created (O_EXCL) in the point's directory: `prepare` lays the file out once, the
//! next runs of the same directory and size reuse it, and the directory is removed when a run
//! needs another and when the context ends. What sysbench cannot do is refused with the reason:
//! a queue deeper than 1 or another engine than psync (it runs `sync` I/O here), a mix of reads
//! and writes in sequence, a file per thread, a fixed amount of work.
//!
//! Units: "read, MiB/s" and "written, MiB/s" are 2²⁰ bytes per second; IOPS = reads/s +
//! writes/s; the mean latency is the latency "sum" over the events (its "avg" is rounded to
//! 10 µs).

use super::process::run_bounded;
use super::{RefContext, RefError, Tool, params_of, unit_error};
use crate::results::params::{EngineKind, IoMode, IoPattern, SyncMode};
use crate::results::{Metric, ResultRecord, Unit};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::time::Duration;

const TOOL: Tool = Tool::Sysbench;

/// One `sysbench fileio` run.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Job {
    /// `seqrd`, `seqwr`, `rndrd`, `rndwr` or `rndrw`.
    pub mode: &'static str,
    /// Percent of reads, for `rndrw`.
    pub read_percent: Option<u64>,
    pub block_bytes: u64,
    pub threads: u64,
    pub direct: bool,
    pub sync: SyncMode,
    pub size_bytes: u64,
    /// The run's and the ramp's time, whole seconds.
    pub seconds: u64,
    pub warmup_seconds: u64,
    /// The directory of the file peakbench measured (its own directory goes in it).
    pub dir: PathBuf,
}

/// The run for a disk throughput, IOPS or latency record (not COPY: dd's).
pub fn job(rec: &ResultRecord, ctx: &RefContext) -> Option<Result<Job, RefError>> {
    super::fio::file_tool_record(rec).then(|| build(rec, ctx))
}

fn build(rec: &ResultRecord, ctx: &RefContext) -> Result<Job, RefError> {
    let p = params_of(rec, TOOL, |p| p.disk())?;
    let refuse = |why: String| {
        Err(RefError::unsupported(
            TOOL,
            format!("sysbench fileio {why}"),
        ))
    };
    if p.engine.caps().stream_buffer {
        return refuse(
            "reads and writes with pread/pwrite, and the point went through a library buffer (fread/fwrite)".into(),
        );
    }
    if p.engine != EngineKind::Psync || p.iodepth > 1 {
        return refuse(format!(
            "runs synchronous I/O here, one request a thread; the point's {} engine at queue depth {} is fio's",
            p.engine.name(),
            p.iodepth
        ));
    }
    if p.file_per_thread {
        return refuse(
            "spreads every thread's requests over all its files, not a file a thread".into(),
        );
    }
    if p.total_bytes.is_some() {
        return refuse("runs for a time here, not a fixed amount of work".into());
    }
    let random = match p.pattern {
        IoPattern::Sequential => false,
        IoPattern::Random => true,
        other => return refuse(format!("reads in sequence or at random, not {other}")),
    };
    let (mode, read_percent) = match (p.read_percent.min(100) as u64, random) {
        (100, false) => ("seqrd", None),
        (100, true) => ("rndrd", None),
        (0, false) => ("seqwr", None),
        (0, true) => ("rndwr", None),
        (r, true) => ("rndrw", Some(r)),
        (_, false) => return refuse("mixes reads and writes at random only".into()),
    };
    let Some(dir) = super::fio::point_dir(&p.target, ctx) else {
        return refuse("runs on files only, and the point measured a block device".into());
    };
    let seconds = ctx.seconds(Some(p.runtime_s)).unwrap_or(1.0);
    Ok(Job {
        mode,
        read_percent,
        block_bytes: p.block_size_bytes,
        threads: p.threads.max(1) as u64,
        direct: p.io_mode != IoMode::Buffered,
        sync: p.sync,
        size_bytes: p.file_size_bytes,
        seconds: seconds.ceil().clamp(1.0, 3600.0) as u64,
        warmup_seconds: p.ramp_s.ceil().clamp(0.0, 3600.0) as u64,
        dir,
    })
}

/// The options every command of `job` takes (prepare and run alike).
fn common(job: &Job) -> Vec<String> {
    vec![
        "fileio".into(),
        "--file-num=1".into(),
        format!("--file-total-size={}", job.size_bytes),
    ]
}

/// sysbench's arguments for the run of `job`.
pub fn argv(job: &Job) -> Vec<String> {
    let mut a = common(job);
    a.extend([
        format!("--file-block-size={}", job.block_bytes),
        format!("--file-test-mode={}", job.mode),
        "--file-io-mode=sync".into(),
        format!("--threads={}", job.threads),
        // Random offsets spread evenly over the file, as fio's and peakbench's (sysbench's
        // default, "special", sends most requests to a few blocks).
        "--rand-type=uniform".into(),
        format!("--time={}", job.warmup_seconds + job.seconds),
    ]);
    // The ramp: a report at its end resets the counters, and the last report is the run's.
    if job.warmup_seconds > 0 {
        a.push(format!("--report-checkpoints={}", job.warmup_seconds));
    }
    if let Some(r) = job.read_percent {
        // Reads per write; a point of only writes never gets here (rndwr).
        a.push(format!(
            "--file-rw-ratio={}",
            r as f64 / (100 - r).max(1) as f64
        ));
    }
    let mut flags = Vec::new();
    if job.direct {
        flags.push("direct");
    }
    let writes = job.mode != "seqrd" && job.mode != "rndrd";
    let (fsync_end, fsync_all) = match job.sync {
        SyncMode::FdatasyncEnd if writes => (true, false),
        SyncMode::FsyncEach if writes => (false, true),
        SyncMode::OSync => {
            flags.push("sync");
            (false, false)
        }
        SyncMode::ODsync => {
            flags.push("dsync");
            (false, false)
        }
        _ => (false, false),
    };
    if !flags.is_empty() {
        a.push(format!("--file-extra-flags={}", flags.join(",")));
    }
    a.extend([
        "--file-fsync-freq=0".into(),
        format!("--file-fsync-end={}", if fsync_end { "on" } else { "off" }),
        format!("--file-fsync-all={}", if fsync_all { "on" } else { "off" }),
        format!(
            "--file-fsync-mode={}",
            if fsync_end { "fdatasync" } else { "fsync" }
        ),
        "run".into(),
    ]);
    a
}

/// sysbench's directory between runs: where it is, for which size, and the directory itself
/// (removed with its file when dropped).
#[derive(Debug)]
pub struct Prepared {
    dir: PathBuf,
    size: u64,
    tmp: tempfile::TempDir,
}

/// The directory with a laid-out file of `job`'s size in its directory: the one `kept` holds
/// when it matches, else a new one prepared (the old removed first, to free its space).
fn prepared(
    program: &Path,
    job: &Job,
    kept: &Mutex<Option<Prepared>>,
) -> Result<PathBuf, RefError> {
    let mut slot = kept.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(p) = slot.as_ref()
        && p.dir == job.dir
        && p.size == job.size_bytes
        && p.tmp.path().join("test_file.0").is_file()
    {
        return Ok(p.tmp.path().to_path_buf());
    }
    *slot = None;
    if !job.dir.is_dir() {
        return Err(RefError::failed(
            TOOL,
            format!(
                "{} is not a directory; give an existing one",
                job.dir.display()
            ),
        ));
    }
    let tmp = tempfile::Builder::new()
        .prefix("peakbench-ref-sysbench")
        .tempdir_in(&job.dir)
        .map_err(|e| {
            RefError::failed(
                TOOL,
                format!("cannot create a directory in {}: {e}", job.dir.display()),
            )
        })?;
    let mut cmd = Command::new(program);
    cmd.args(common(job)).arg("prepare").current_dir(tmp.path());
    // Laid out at 20 MB/s or faster, and a minute more.
    let limit = Duration::from_secs(60 + job.size_bytes / 20_000_000);
    let out = run_bounded(TOOL, cmd, limit)?;
    if !out.status.success() {
        return Err(out.failure(TOOL));
    }
    let path = tmp.path().to_path_buf();
    *slot = Some(Prepared {
        dir: job.dir.clone(),
        size: job.size_bytes,
        tmp,
    });
    Ok(path)
}

/// Runs `job` in its prepared directory, bounded to its time and a minute more.
pub fn run(
    program: &Path,
    job: &Job,
    kept: &Mutex<Option<Prepared>>,
) -> Result<FileioResult, RefError> {
    let dir = prepared(program, job, kept)?;
    let mut cmd = Command::new(program);
    cmd.args(argv(job)).current_dir(&dir);
    let limit = Duration::from_secs(job.seconds + job.warmup_seconds + 60);
    let out = run_bounded(TOOL, cmd, limit)?;
    if !out.status.success() {
        return Err(out.failure(TOOL));
    }
    parse(&out.stdout).map_err(|m| RefError::parse(TOOL, m))
}

/// What one `sysbench fileio` run reports.
#[derive(Debug, Clone, PartialEq)]
pub struct FileioResult {
    pub reads_per_s: f64,
    pub writes_per_s: f64,
    /// "read, MiB/s" and "written, MiB/s".
    pub read_mib_per_s: f64,
    pub written_mib_per_s: f64,
    pub events: u64,
    /// The latency "sum" of all events, ms.
    pub latency_sum_ms: f64,
}

/// Parses sysbench fileio's report: its last, after a checkpoint report at the ramp's end.
pub fn parse(text: &str) -> Result<FileioResult, String> {
    let text = text.rfind("File operations:").map_or(text, |i| &text[i..]);
    let value = |key: &str| -> Result<f64, String> {
        text.lines()
            .map(str::trim)
            .find_map(|l| l.strip_prefix(key))
            .and_then(|rest| rest.trim().parse::<f64>().ok())
            .and_then(super::tool_number)
            .ok_or_else(|| format!("no '{key} N' line"))
    };
    let r = FileioResult {
        reads_per_s: value("reads/s:")?,
        writes_per_s: value("writes/s:")?,
        read_mib_per_s: value("read, MiB/s:")?,
        written_mib_per_s: value("written, MiB/s:")?,
        events: value("total number of events:")? as u64,
        latency_sum_ms: value("sum:")?,
    };
    if r.events == 0 || r.reads_per_s + r.writes_per_s <= 0.0 {
        return Err("sysbench fileio completed no I/O".into());
    }
    Ok(r)
}

/// The figure for `rec`: bytes per second, I/Os per second or the mean latency in seconds.
pub fn figure(r: &FileioResult, rec: &ResultRecord) -> Result<f64, RefError> {
    match (rec.metric, rec.unit) {
        (Metric::Throughput, Unit::BytesPerSec) => {
            Ok((r.read_mib_per_s + r.written_mib_per_s) * 1_048_576.0)
        }
        (Metric::Iops, Unit::Iops) => Ok(r.reads_per_s + r.writes_per_s),
        (Metric::Latency, Unit::Seconds) => Ok(r.latency_sum_ms / 1e3 / r.events as f64),
        _ => Err(unit_error(TOOL, rec)),
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{fixture, record};
    use super::*;
    use serde_json::json;

    fn disk(
        workload: &str,
        read_percent: u64,
        pattern: &str,
        extra: serde_json::Value,
    ) -> ResultRecord {
        let mut params = json!({
            "threads": 2, "iodepth": 1, "block_size_bytes": 4096, "engine": "psync",
            "io_mode": "direct", "pattern": pattern, "read_percent": read_percent,
            "file_size_bytes": 67_108_864u64, "runtime_s": 1.0, "ramp_s": 0.0,
            "target": "/var/tmp/x/peakbench.dat", "sync": "none"
        });
        if let (Some(to), Some(from)) = (params.as_object_mut(), extra.as_object()) {
            to.extend(from.clone());
        }
        record("disk", workload, "throughput", "B/s", params, None)
    }

    /// Recorded runs: 4 KiB random reads and writes at 3:2 with O_DIRECT on two threads; random
    /// reads after a second's ramp, whose checkpoint report comes first.
    #[test]
    fn parses_a_recorded_run() {
        let ramped = parse(&fixture("sysbench-fileio-rndrd-ramp.txt")).unwrap();
        assert_eq!(ramped.events, 15911);
        assert!((ramped.reads_per_s - 15887.14).abs() < 1e-9);
        let r = parse(&fixture("sysbench-fileio-rndrw.txt")).unwrap();
        assert_eq!(r.events, 27941);
        assert!((r.reads_per_s - 16738.34).abs() < 1e-9);
        assert!((r.written_mib_per_s - 43.59).abs() < 1e-9);
        let rec = disk("RW", 60, "random", json!({}));
        assert_eq!(figure(&r, &rec).unwrap(), (65.38 + 43.59) * 1_048_576.0);
        let mut lat = rec.clone();
        (lat.metric, lat.unit) = (Metric::Latency, Unit::Seconds);
        let t = figure(&r, &lat).unwrap();
        assert!((t - 1.98738 / 27941.0).abs() < 1e-12, "{t}");
        for text in [
            "",
            "reads/s: x",
            "reads/s: 0\nwrites/s: 0\nread, MiB/s: 0\nwritten, MiB/s: 0\ntotal number of events: 0\nsum: 0",
        ] {
            assert!(parse(text).is_err(), "{text}");
        }
    }

    /// The job follows the point; what sysbench cannot do is refused with the reason.
    #[test]
    fn jobs_match_the_point_or_say_why_not() {
        let ctx = RefContext::new(std::env::temp_dir());
        let job = |rec: &ResultRecord| super::job(rec, &ctx).unwrap();
        let rw = job(&disk("RW", 60, "random", json!({}))).unwrap();
        assert_eq!(
            (rw.mode, rw.read_percent, rw.threads),
            ("rndrw", Some(60), 2)
        );
        assert_eq!(rw.dir, PathBuf::from("/var/tmp/x"));
        let a = argv(&rw);
        for want in [
            "--file-rw-ratio=1.5",
            "--file-extra-flags=direct",
            "--file-fsync-end=off",
            "--rand-type=uniform",
        ] {
            assert!(a.iter().any(|x| x == want), "{want}: {a:?}");
        }
        let ws = job(&disk(
            "WS",
            0,
            "sequential",
            json!({"io_mode": "buffered", "sync": "fsync-each"}),
        ))
        .unwrap();
        let a = argv(&ws);
        assert_eq!(ws.mode, "seqwr");
        assert!(a.iter().any(|x| x == "--file-fsync-all=on"), "{a:?}");
        assert!(
            !a.iter().any(|x| x.starts_with("--file-extra-flags")),
            "{a:?}"
        );
        for (extra, why) in [
            (json!({"iodepth": 8, "engine": "io_uring"}), "queue depth 8"),
            (json!({"file_per_thread": true}), "a file a thread"),
            (json!({"target": "/dev/vdb"}), "block device"),
        ] {
            let e = job(&disk("RR", 100, "random", extra))
                .unwrap_err()
                .to_string();
            assert!(e.contains(why), "{e}");
        }
        let e = job(&disk("RW", 50, "sequential", json!({})))
            .unwrap_err()
            .to_string();
        assert!(e.contains("at random only"), "{e}");
    }
}
