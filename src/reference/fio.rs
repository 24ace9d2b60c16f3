//! fio (3.x) with `--output-format=json`: disk RS, WS, RR, WR and RW, and IOzone's operations
//! (WNEW, REREAD, RB, RSTRIDE).
//!
//! IOzone's operations as fio jobs: a write into new blocks (WNEW) runs on a file of its own,
//! created empty for the run and not preallocated (`--fallocate=none`), so that fio allocates
//! each block as it writes; a rewrite (WS, WR, RW) runs over the laid-out file
//! (`--overwrite=1`); a reread (REREAD) has its file read into the page cache first
//! (`--pre_read=1`, which keeps it there) when the point was buffered; a backward read (RB) is
//! a sequential read whose every offset steps back two blocks (`--rw=read:-2×bs`: fio reads
//! block 0, then from the second-to-last back to 1, wrapping); a stride read (RSTRIDE) is a
//! sequential read with holes of stride − 1 blocks (`--rw=read:(stride−1)×bs`), whose passes
//! all start at block 0 where peakbench's and IOzone's start a block further each time: the
//! same access pattern, not the same blocks after the first pass. The stream engine
//! (fread/fwrite through a library buffer) has no fio engine: such points have no fio figure.
//!
//! The job mirrors the point: the same block size, queue depth, jobs (threads, `--thread` so
//! that killing fio kills them all), engine, O_DIRECT or buffered, read share, file size, ramp
//! and runtime, on the same CPUs, writes ending with a sync (`end_fsync`) as peakbench's end
//! with fdatasync, its buffers on transparent huge pages as peakbench's
//! ([`huge_page_tunables`]). The file is created empty under a fresh name (O_EXCL) in the point's
//! directory and laid out by fio on its first run; the next runs of the same directory and size
//! reuse it (fio lays out a file it finds too short only, and invalidates its pages in the
//! cache before each run), so that a 10 GB file is written once, not once a point. It is removed
//! when a run needs another, and when the context ends, whatever the outcomes. With a file per
//! job, fio's files go to a directory of their own, removed after each run.
//!
//! Units: fio's `bw_bytes` is bytes per second (its `bw` is KiB/s: not used); MB/s = bw_bytes ÷
//! 10⁶, MiB/s = bw_bytes ÷ 2²⁰. Latency is fio's `lat_ns` (submission to completion), which is
//! what peakbench times per I/O; percentiles are fio's `clat_ns` ones.

use super::process::run_bounded;
use super::{RefContext, RefError, Tool, params_of, unit_error};
use crate::results::Metric;
use crate::results::ResultRecord;
use crate::results::Unit;
use crate::results::params::SyncMode;
use crate::workload::disk::DiskWorkload;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::sync::Mutex;
use std::time::Duration;

const TOOL: Tool = Tool::Fio;

/// One fio run.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Job {
    /// `read`, `write`, `randread`, `randwrite`, `rw` or `randrw`; `read:-N` backwards,
    /// `read:N` by stride.
    pub rw: String,
    /// Percent of reads, for `rw` and `randrw`.
    pub rwmixread: Option<u64>,
    pub block_bytes: u64,
    pub iodepth: u64,
    pub jobs: u64,
    /// `psync`, `io_uring` or `null`.
    pub engine: String,
    pub direct: bool,
    pub size_bytes: u64,
    pub runtime_ms: u64,
    pub ramp_ms: u64,
    /// `--cpus_allowed`, e.g. "1" or "0,1".
    pub cpus: Option<String>,
    /// Where fio's file goes: the directory of the file peakbench measured (same file system,
    /// same device), or the context's directory when the record does not say.
    pub dir: std::path::PathBuf,
    /// How writes are made durable, as the point's `--sync`.
    pub sync: SyncMode,
    /// A file per job (fio's own names in a directory of their own) instead of one shared.
    pub file_per_job: bool,
    /// Fixed work: each job's bytes (fio's io_size) instead of a time-based run.
    pub io_bytes: Option<u64>,
    /// The file read into the page cache before the run and kept there (a reread).
    pub pre_read: bool,
    /// Writes into new blocks: a file of its own, created empty for the run.
    pub new_file: bool,
}

/// The run for a disk throughput, IOPS or latency record.
pub fn job(rec: &ResultRecord, ctx: &RefContext) -> Option<Result<Job, RefError>> {
    file_tool_record(rec).then(|| build(rec, ctx))
}

/// Whether the file tools (fio, sysbench fileio) measure `rec`, a record of a workload whose
/// spec names them: its throughput, IOPS or latency.
pub(super) fn file_tool_record(rec: &ResultRecord) -> bool {
    matches!(
        rec.metric,
        Metric::Throughput | Metric::Iops | Metric::Latency
    )
}

/// The directory of the file a disk point measured (the same file system and device), the
/// context's where the point does not say; `None` for a block device, which no tool is handed
/// (its run would write over it).
pub(super) fn point_dir(target: &str, ctx: &RefContext) -> Option<std::path::PathBuf> {
    Some(
        match Some(Path::new(target)).filter(|t| !t.as_os_str().is_empty()) {
            Some(t) if t.starts_with("/dev") => return None,
            Some(t) => match t.parent() {
                Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
                _ => std::path::PathBuf::from("."),
            },
            None => ctx.dir.clone(),
        },
    )
}

fn build(rec: &ResultRecord, ctx: &RefContext) -> Result<Job, RefError> {
    use crate::results::params::IoPattern;
    let p = params_of(rec, TOOL, |p| p.disk())?;
    if p.engine.caps().stream_buffer {
        return Err(RefError::unsupported(
            TOOL,
            "the point read and wrote through a library buffer (fread/fwrite), which no fio engine does (IOzone, which does, is not in Debian)",
        ));
    }
    let read_percent = p.read_percent.min(100) as u64;
    let bs = p.block_size_bytes;
    let (rw, rwmixread) = match (read_percent, p.pattern) {
        (100, IoPattern::Sequential) => ("read".to_string(), None),
        (100, IoPattern::Random) => ("randread".into(), None),
        // Each offset two blocks before the one after the last: one block back.
        (100, IoPattern::Backward) => (format!("read:-{}", bs.saturating_mul(2)), None),
        (100, IoPattern::Stride) => {
            let stride = p.stride_blocks.unwrap_or(17).max(1);
            (format!("read:{}", bs.saturating_mul(stride - 1)), None)
        }
        (0, IoPattern::Sequential) => ("write".into(), None),
        (0, IoPattern::Random) => ("randwrite".into(), None),
        (p, IoPattern::Sequential) => ("rw".into(), Some(p)),
        (p, IoPattern::Random) => ("randrw".into(), Some(p)),
        (_, pattern) => {
            return Err(RefError::unsupported(
                TOOL,
                format!("fio reads {pattern}, it does not write so"),
            ));
        }
    };
    let buffered = p.io_mode == crate::results::params::IoMode::Buffered;
    // fio's ioengines of the same names.
    let engine = p.engine.name();
    let dir = point_dir(&p.target, ctx).ok_or_else(|| {
        RefError::unsupported(
            TOOL,
            "the point measured a block device; the reference runs on files only",
        )
    })?;
    let seconds = ctx.seconds(Some(p.runtime_s)).unwrap_or(1.0);
    let cpus = p
        .cpus
        .iter()
        .map(|c| c.to_string())
        .collect::<Vec<_>>()
        .join(",");
    Ok(Job {
        rw,
        rwmixread,
        block_bytes: p.block_size_bytes,
        iodepth: p.iodepth as u64,
        jobs: p.threads as u64,
        engine: engine.into(),
        direct: p.io_mode != crate::results::params::IoMode::Buffered,
        size_bytes: p.file_size_bytes,
        runtime_ms: (seconds * 1000.0).round().max(1.0) as u64,
        ramp_ms: (p.ramp_s * 1000.0).round() as u64,
        cpus: Some(cpus).filter(|c| !c.is_empty()),
        dir,
        sync: p.sync,
        file_per_job: p.file_per_thread,
        io_bytes: p.total_bytes.map(|t| match p.scaling {
            Some(crate::results::params::Scaling::Weak) => t,
            _ => (t / (p.threads.max(1) as u64)).max(1),
        }),
        // Read just before through the page cache; with O_DIRECT a reread is a read.
        pre_read: rec.workload == DiskWorkload::Reread && buffered,
        new_file: rec.workload == DiskWorkload::Wnew,
    })
}

/// fio's arguments for `job` on `file` (a file per job: a directory for fio's own files).
pub fn argv(job: &Job, file: &Path) -> Vec<String> {
    let mut a = vec![
        "--name=peakbench-reference".to_string(),
        if job.file_per_job {
            format!("--directory={}", file.display())
        } else {
            format!("--filename={}", file.display())
        },
        format!("--size={}", job.size_bytes),
        format!("--rw={}", job.rw),
    ];
    if let Some(p) = job.rwmixread {
        a.push(format!("--rwmixread={p}"));
    }
    a.extend([
        format!("--bs={}", job.block_bytes),
        format!("--ioengine={}", job.engine),
        format!("--iodepth={}", job.iodepth),
        format!("--numjobs={}", job.jobs),
        "--thread".into(),
        "--group_reporting".into(),
        format!("--direct={}", u8::from(job.direct)),
    ]);
    if job.engine == "io_uring" {
        // peakbench's io_uring engine registers its file and buffers once (no lookup or
        // pinning per I/O): fio is run the same way (a 1 MiB QD32 read on a virtio disk: 0.93
        // GB/s without, 1.27 with).
        a.extend(["--fixedbufs".into(), "--registerfiles".into()]);
    }
    match job.io_bytes {
        Some(b) => a.push(format!("--io_size={b}")),
        None => a.extend([
            "--time_based".into(),
            format!("--runtime={}ms", job.runtime_ms),
        ]),
    }
    a.push(format!("--ramp_time={}ms", job.ramp_ms));
    if job.pre_read {
        a.push("--pre_read=1".into());
    }
    let writes = !job.rw.starts_with("read") && job.rw != "randread";
    if writes {
        a.push(if job.new_file {
            // Blocks allocated as they are written, not before.
            "--fallocate=none".into()
        } else {
            // Over the laid-out file (a rewrite), laid out first where it is new.
            "--overwrite=1".into()
        });
    }
    if writes {
        match job.sync {
            SyncMode::None => {}
            SyncMode::FdatasyncEnd => a.push("--end_fsync=1".into()),
            SyncMode::FsyncEach => a.push("--fsync=1".into()),
            SyncMode::OSync => a.push("--sync=1".into()),
            SyncMode::ODsync => a.push("--sync=dsync".into()),
        }
    }
    if let Some(c) = &job.cpus {
        a.push(format!("--cpus_allowed={c}"));
    }
    a.push("--output-format=json".into());
    a
}

/// fio's file between runs: its directory, size and path (removed when dropped).
#[derive(Debug)]
pub struct Scratch {
    dir: std::path::PathBuf,
    size: u64,
    file: tempfile::TempPath,
}

/// The file for a run of `size` bytes in `dir`: the one `kept` holds when it matches, else a
/// new empty one (the old removed first, to free its space).
fn scratch_file(
    kept: &Mutex<Option<Scratch>>,
    dir: &Path,
    size: u64,
) -> Result<std::path::PathBuf, RefError> {
    let mut slot = kept.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(s) = slot.as_ref()
        && s.dir == dir
        && s.size == size
        && s.file.exists()
    {
        return Ok(s.file.to_path_buf());
    }
    *slot = None;
    let file = temp_file(dir, "peakbench-ref-fio")?;
    let path = file.to_path_buf();
    *slot = Some(Scratch {
        dir: dir.to_path_buf(),
        size,
        file,
    });
    Ok(path)
}

/// The environment variable of glibc's tunables.
const TUNABLES: &str = "GLIBC_TUNABLES";

/// glibc's tunables for fio (`given`: the caller's, kept) with malloc's memory on transparent
/// huge pages (`glibc.malloc.hugetlb=1`, glibc 2.35 and later; ignored before), so that fio's
/// buffers are on huge pages where peakbench's are: a 1 MiB block in 4 KiB pages is 256
/// segments, which a queue limited to fewer splits in two requests (virtio-blk's 254), where
/// a huge page's block is one. On a KVM guest, 1 MiB reads at QD32 with io_uring: fio 1234
/// MB/s without (6538 requests for 3561 blocks), 3566 MB/s with it; as `--reference` beside
/// peakbench's 3934 and 3808 MB/s, fio read 2078 and 2085 without, and beside 3951 and 3867
/// read 3824 and 4006 with it (writes: 2969 and 3269 beside 8221 and 7365; 7573 and 8258
/// beside 8431 and 8489).
pub fn huge_page_tunables(given: Option<&str>) -> String {
    const HUGE: &str = "glibc.malloc.hugetlb=1";
    match given.map(str::trim).filter(|g| !g.is_empty()) {
        Some(g) if g.split(':').any(|t| t.starts_with("glibc.malloc.hugetlb=")) => g.to_string(),
        Some(g) => format!("{g}:{HUGE}"),
        None => HUGE.to_string(),
    }
}

/// A new empty file in `dir` (O_EXCL), removed when the returned path is dropped.
fn temp_file(dir: &Path, prefix: &str) -> Result<tempfile::TempPath, RefError> {
    tempfile::Builder::new()
        .prefix(prefix)
        .tempfile_in(dir)
        .map(tempfile::NamedTempFile::into_temp_path)
        .map_err(|e| {
            RefError::failed(
                TOOL,
                format!("cannot create a file in {}: {e}", dir.display()),
            )
        })
}

/// Runs `job` on its directory's file (see [`Scratch`]), or on a directory of files of its own
/// removed afterwards, even when fio fails or overruns.
pub fn run(
    program: &Path,
    job: &Job,
    kept: &Mutex<Option<Scratch>>,
) -> Result<FioResult, RefError> {
    let dir = job.dir.as_path();
    // fio would create a missing directory; the reference writes only where it is told to.
    if !dir.is_dir() {
        return Err(RefError::failed(
            TOOL,
            format!("{} is not a directory; give an existing one", dir.display()),
        ));
    }
    // The kept file, a new empty file for writes into new blocks, or a directory of fio's
    // files (one per job); all but the kept file removed afterwards.
    let mut new_file = None;
    let (file, jobs_dir) = if job.new_file && !job.file_per_job {
        let f = temp_file(dir, "peakbench-ref-fio-new")?;
        let path = f.to_path_buf();
        new_file = Some(f);
        (path, None)
    } else if job.file_per_job {
        let d = tempfile::Builder::new()
            .prefix("peakbench-ref-fio")
            .tempdir_in(dir)
            .map_err(|e| {
                RefError::failed(
                    TOOL,
                    format!("cannot create a directory in {}: {e}", dir.display()),
                )
            })?;
        (d.path().to_path_buf(), Some(d))
    } else {
        (scratch_file(kept, dir, job.size_bytes)?, None)
    };
    let mut cmd = Command::new(program);
    cmd.args(argv(job, &file));
    cmd.env(
        TUNABLES,
        huge_page_tunables(std::env::var(TUNABLES).ok().as_deref()),
    );
    // Laying the file out at 20 MB/s or faster, then ramp and runtime, then slack.
    let layout_s = job.size_bytes / 20_000_000;
    let timeout = Duration::from_millis(job.runtime_ms + job.ramp_ms)
        + Duration::from_secs(60 + layout_s + job.io_bytes.unwrap_or(0) * job.jobs / 20_000_000);
    let out = run_bounded(TOOL, cmd, timeout);
    drop(jobs_dir);
    drop(new_file);
    let out = out?;
    let parsed = parse_json(&out.stdout);
    match parsed {
        Ok(r) if out.status.success() => Ok(r),
        Ok(_) => Err(out.failure(TOOL)),
        Err(m) if out.status.success() => Err(RefError::parse(TOOL, m)),
        Err(_) => Err(out.failure(TOOL)),
    }
}

/// One direction of a fio job.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FioSide {
    pub io_bytes: u64,
    pub total_ios: u64,
    pub iops: f64,
    pub bw_bytes_per_s: f64,
    pub lat_mean_ns: f64,
    /// clat percentiles by fio's key ("50.000000", "99.000000", "99.900000"), in ns.
    pub clat_percentiles_ns: BTreeMap<String, f64>,
}

impl FioSide {
    /// A clat percentile in µs, e.g. `percentile_us(99.9)`.
    pub fn percentile_us(&self, p: f64) -> Option<f64> {
        self.clat_percentiles_ns
            .get(&format!("{p:.6}"))
            .map(|ns| ns / 1000.0)
    }
}

/// What one fio run reports (its single, group-reported job).
#[derive(Debug, Clone, PartialEq)]
pub struct FioResult {
    pub version: String,
    pub read: FioSide,
    pub write: FioSide,
}

fn get<'a>(v: &'a Value, path: &[&str]) -> Result<&'a Value, String> {
    path.iter().try_fold(v, |v, k| {
        v.get(k)
            .ok_or_else(|| format!("no '{}' in fio's JSON", path.join(".")))
    })
}

fn num(v: &Value, path: &[&str]) -> Result<f64, String> {
    get(v, path)?
        .as_f64()
        .and_then(super::tool_number)
        .ok_or_else(|| {
            format!(
                "'{}' in fio's JSON is not a number from 0 to {:e}",
                path.join("."),
                super::MAX_TOOL_NUMBER
            )
        })
}

fn side(job: &Value, name: &str) -> Result<FioSide, String> {
    let s = get(job, &[name])?;
    let clat_percentiles_ns = match s.get("clat_ns").and_then(|c| c.get("percentile")) {
        Some(Value::Object(m)) => m
            .iter()
            .filter_map(|(k, v)| {
                v.as_f64()
                    .and_then(super::tool_number)
                    .map(|x| (k.clone(), x))
            })
            .collect(),
        _ => BTreeMap::new(),
    };
    Ok(FioSide {
        io_bytes: num(s, &["io_bytes"])? as u64,
        total_ios: num(s, &["total_ios"])? as u64,
        iops: num(s, &["iops"])?,
        bw_bytes_per_s: num(s, &["bw_bytes"])?,
        lat_mean_ns: num(s, &["lat_ns", "mean"])?,
        clat_percentiles_ns,
    })
}

/// Parses fio's JSON report; text before the document (fio's notes) is skipped.
pub fn parse_json(text: &str) -> Result<FioResult, String> {
    let start = text
        .find("\n{")
        .map(|i| i + 1)
        .or_else(|| text.starts_with('{').then_some(0))
        .ok_or_else(|| "no JSON document in fio's output".to_string())?;
    let doc: Value = serde_json::Deserializer::from_str(&text[start..])
        .into_iter::<Value>()
        .next()
        .ok_or_else(|| "empty JSON document".to_string())?
        .map_err(|e| format!("fio's JSON is not valid: {e}"))?;
    let version = get(&doc, &["fio version"])?
        .as_str()
        .unwrap_or("")
        .trim_start_matches("fio-")
        .to_string();
    let job = get(&doc, &["jobs"])?
        .as_array()
        .and_then(|j| j.first())
        .ok_or_else(|| "fio's JSON has no job".to_string())?;
    let error = job.get("error").and_then(|e| e.as_i64()).unwrap_or(0);
    if error != 0 {
        return Err(format!("fio's job ended with error {error}"));
    }
    Ok(FioResult {
        version,
        read: side(job, "read")?,
        write: side(job, "write")?,
    })
}

/// The version from `fio --version` ("fio-3.33").
pub fn parse_version(text: &str) -> Option<String> {
    super::version_after(text, "fio-")
}

/// The figure for `rec`, in its base unit: bytes/s and IOPS of reads and writes together, or
/// the mean latency (s) over both, weighted by their I/O counts.
pub fn figure(r: &FioResult, rec: &ResultRecord) -> Result<f64, RefError> {
    let sides = [&r.read, &r.write];
    let bw: f64 = sides.iter().map(|s| s.bw_bytes_per_s).sum();
    match (rec.metric, rec.unit) {
        (Metric::Throughput, Unit::BytesPerSec) => Ok(bw),
        (Metric::Iops, Unit::Iops) => Ok(sides.iter().map(|s| s.iops).sum()),
        (Metric::Latency, Unit::Seconds) => {
            let ios: u64 = sides.iter().map(|s| s.total_ios).sum();
            if ios == 0 {
                return Err(RefError::parse(TOOL, "fio completed no I/O"));
            }
            let ns: f64 = sides
                .iter()
                .map(|s| s.lat_mean_ns * s.total_ios as f64)
                .sum();
            Ok(ns / ios as f64 / 1e9)
        }
        _ => Err(unit_error(TOOL, rec)),
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{fixture, record};
    use super::*;
    use crate::results::params::Params;
    use serde_json::json;

    /// fio's tunables ask for huge pages, keep the caller's, and leave a caller's own choice
    /// of them as it is.
    #[test]
    fn fio_asks_for_huge_pages_and_keeps_the_callers_tunables() {
        let t = huge_page_tunables;
        assert_eq!(t(None), "glibc.malloc.hugetlb=1");
        assert_eq!(t(Some(" ")), "glibc.malloc.hugetlb=1");
        assert_eq!(
            t(Some("glibc.malloc.arena_max=2")),
            "glibc.malloc.arena_max=2:glibc.malloc.hugetlb=1"
        );
        assert_eq!(t(Some("glibc.malloc.hugetlb=0")), "glibc.malloc.hugetlb=0");
    }

    fn disk(
        metric: &str,
        unit: &str,
        workload: &str,
        read_percent: u64,
        pattern: &str,
    ) -> ResultRecord {
        record(
            "disk",
            workload,
            metric,
            unit,
            json!({
                "threads": 1, "iodepth": 32, "block_size_bytes": 4096, "engine": "io_uring",
                "io_mode": "direct", "pattern": pattern, "read_percent": read_percent,
                "file_size_bytes": 1_073_741_824u64, "runtime_s": 5.0, "ramp_s": 1.0, "cpus": [1]
            }),
            None,
        )
    }

    #[test]
    fn commands() {
        let ctx = RefContext::new("/tmp");
        let rec = disk("iops", "IOPS", "RR", 100, "random");
        let job = job(&rec, &ctx).unwrap().unwrap();
        assert_eq!(
            argv(&job, Path::new("/tmp/f")),
            [
                "--name=peakbench-reference",
                "--filename=/tmp/f",
                "--size=1073741824",
                "--rw=randread",
                "--bs=4096",
                "--ioengine=io_uring",
                "--iodepth=32",
                "--numjobs=1",
                "--thread",
                "--group_reporting",
                "--direct=1",
                "--fixedbufs",
                "--registerfiles",
                "--time_based",
                "--runtime=5000ms",
                "--ramp_time=1000ms",
                "--cpus_allowed=1",
                "--output-format=json"
            ]
        );
        let mut ctx = RefContext::new("/tmp");
        ctx.duration = Some(Duration::from_millis(1500));
        let rw = super::job(&disk("throughput", "MB/s", "RW", 70, "random"), &ctx)
            .unwrap()
            .unwrap();
        let a = argv(&rw, Path::new("/tmp/f"));
        assert!(a.contains(&"--rw=randrw".to_string()));
        assert!(a.contains(&"--rwmixread=70".to_string()));
        assert!(a.contains(&"--runtime=1500ms".to_string()));
        assert!(a.contains(&"--end_fsync=1".to_string()));
        let ws = super::job(&disk("throughput", "MB/s", "WS", 0, "sequential"), &ctx)
            .unwrap()
            .unwrap();
        assert_eq!(ws.rw, "write");
        let other = disk("loss", "%", "RR", 100, "random");
        assert!(super::job(&other, &ctx).is_none());
    }

    /// The point's --sync and --file-per-thread become fio's options; COPY has no fio job.
    #[test]
    fn sync_modes_files_per_job_and_copy() {
        let ctx = RefContext::new("/tmp");
        for (sync, want) in [
            (SyncMode::None, None),
            (SyncMode::FdatasyncEnd, Some("--end_fsync=1")),
            (SyncMode::FsyncEach, Some("--fsync=1")),
            (SyncMode::OSync, Some("--sync=1")),
            (SyncMode::ODsync, Some("--sync=dsync")),
        ] {
            let mut rec = disk("throughput", "MB/s", "WR", 0, "random");
            if let Params::Disk(d) = &mut rec.params {
                d.sync = sync;
                d.file_per_thread = true;
            }
            let a = argv(&job(&rec, &ctx).unwrap().unwrap(), Path::new("/tmp/d"));
            let syncs: Vec<&String> = a.iter().filter(|x| x.contains("sync=")).collect();
            assert_eq!(syncs.len(), usize::from(want.is_some()), "{sync:?}: {a:?}");
            if let Some(w) = want {
                assert_eq!(syncs[0], w);
            }
            assert!(a.contains(&"--directory=/tmp/d".to_string()), "{a:?}");
            assert!(!a.iter().any(|x| x.starts_with("--filename")));
        }
        // A copy of one file to another is not fio's: its spec does not name it.
        let copy = disk("throughput", "MB/s", "COPY", 50, "sequential");
        assert!(!copy.workload.spec().references.contains(&TOOL));
    }

    /// IOzone's operations as fio jobs: backwards and by stride as sequential reads with a
    /// step, a reread pre-read through the page cache, a write into a new file not
    /// preallocated, a rewrite over the laid-out one; the stream engine has no fio job.
    #[test]
    fn iozone_operations_and_the_stream_engine() {
        let ctx = RefContext::new("/tmp");
        let args = |workload: &str, read_percent, pattern: &str, extra: serde_json::Value| {
            let mut rec = disk("throughput", "MB/s", workload, read_percent, pattern);
            if let Params::Disk(d) = &mut rec.params {
                d.block_size_bytes = 8192;
                d.stride_blocks = extra["stride_blocks"].as_u64();
                if extra["buffered"] == true {
                    d.io_mode = crate::results::params::IoMode::Buffered;
                }
            }
            job(&rec, &ctx)
                .unwrap()
                .map(|j| argv(&j, Path::new("/tmp/f")))
        };
        let has = |a: &[String], want: &str| a.iter().any(|x| x == want);
        let rb = args("RB", 100, "backward", json!({})).unwrap();
        assert!(has(&rb, "--rw=read:-16384"), "{rb:?}");
        let stride = args("RSTRIDE", 100, "stride", json!({"stride_blocks": 17})).unwrap();
        assert!(has(&stride, "--rw=read:131072"), "{stride:?}");
        let reread = args("REREAD", 100, "sequential", json!({"buffered": true})).unwrap();
        assert!(has(&reread, "--rw=read") && has(&reread, "--pre_read=1"));
        // With O_DIRECT a reread is a read: nothing is kept in the page cache.
        let direct = args("REREAD", 100, "sequential", json!({})).unwrap();
        assert!(
            !direct.iter().any(|x| x.starts_with("--pre_read")),
            "{direct:?}"
        );
        let wnew = args("WNEW", 0, "sequential", json!({})).unwrap();
        assert!(has(&wnew, "--fallocate=none") && !has(&wnew, "--overwrite=1"));
        let ws = args("WS", 0, "sequential", json!({})).unwrap();
        assert!(has(&ws, "--overwrite=1") && !has(&ws, "--fallocate=none"));
        let rs = args("RS", 100, "sequential", json!({})).unwrap();
        assert!(!rs.iter().any(|x| x.starts_with("--overwrite")), "{rs:?}");
        let mut fread = disk("throughput", "MB/s", "RS", 100, "sequential");
        if let Params::Disk(d) = &mut fread.params {
            d.engine = crate::results::params::EngineKind::Stream;
        }
        let e = job(&fread, &ctx).unwrap().unwrap_err().to_string();
        assert!(e.contains("library buffer (fread/fwrite)"), "{e}");
    }

    #[test]
    fn parses_recorded_randread() {
        let r = parse_json(&fixture("fio-randread.json")).unwrap();
        assert_eq!(r.version, "3.33");
        assert_eq!(r.read.iops, 15719.280719);
        assert_eq!(r.read.bw_bytes_per_s, 64386173.0);
        assert_eq!(r.read.io_bytes, 64450560);
        assert_eq!(r.read.total_ios, 15735);
        assert_eq!(r.read.lat_mean_ns, 62925.231014);
        assert_eq!(r.read.percentile_us(50.0), Some(53504.0 / 1000.0));
        assert_eq!(r.read.percentile_us(99.0), Some(132096.0 / 1000.0));
        assert_eq!(r.read.percentile_us(99.9), Some(2506752.0 / 1000.0));
        assert_eq!(r.write.total_ios, 0);
        assert_eq!(r.write.iops, 0.0);
        let iops = disk("iops", "IOPS", "RR", 100, "random");
        assert_eq!(figure(&r, &iops).unwrap(), 15719.280719);
        // Records store base units, whatever unit the benchmark stated.
        let mbps = disk("throughput", "MB/s", "RR", 100, "random");
        assert_eq!(figure(&r, &mbps).unwrap(), 64386173.0);
        let mib = disk("throughput", "MiB/s", "RR", 100, "random");
        assert_eq!(figure(&r, &mib).unwrap(), 64386173.0);
        let lat = disk("latency", "us", "RR", 100, "random");
        assert_eq!(
            figure(&r, &lat).unwrap(),
            62925.231014 * 15735.0 / 15735.0 / 1e9
        );
    }

    #[test]
    fn runs_beside_the_measured_file_and_never_on_a_device() {
        let ctx = RefContext::new("/ctx");
        let mut rec = disk("iops", "IOPS", "RR", 100, "random");
        // No target (a record that does not say): the context's directory.
        assert_eq!(job(&rec, &ctx).unwrap().unwrap().dir, Path::new("/ctx"));
        let mut target = |t: &str| {
            if let Params::Disk(d) = &mut rec.params {
                d.target = t.into();
            }
            job(&rec, &ctx).unwrap()
        };
        assert_eq!(
            target("/mnt/nvme/.peakbench-disk-1.tmp").unwrap().dir,
            Path::new("/mnt/nvme")
        );
        assert_eq!(target(".peakbench-disk-1.tmp").unwrap().dir, Path::new("."));
        let err = target("/dev/nvme0n1").unwrap_err().to_string();
        assert!(err.contains("block device"), "{err}");
    }

    #[test]
    fn parses_the_version() {
        assert_eq!(parse_version("fio-3.33\n").as_deref(), Some("3.33"));
        assert_eq!(parse_version("fio version unknown"), None);
    }

    #[test]
    fn rejects_garbage_truncated_and_failed_output() {
        assert!(parse_json("").is_err());
        assert!(parse_json("fio: unrecognized option '--bogus'").is_err());
        let text = fixture("fio-randread.json");
        assert!(parse_json(&text[..text.len() / 2]).is_err());
        let failed = text.replacen("\"error\" : 0", "\"error\" : 5", 1);
        assert_eq!(
            parse_json(&failed).unwrap_err(),
            "fio's job ended with error 5"
        );
        let mut j = job(
            &disk("iops", "IOPS", "RR", 100, "random"),
            &RefContext::new("/"),
        )
        .unwrap()
        .unwrap();
        j.dir = "/nonexistent-peakbench-dir".into();
        let err = run(Path::new("/nonexistent/fio"), &j, &Mutex::new(None)).unwrap_err();
        assert!(err.to_string().contains("is not a directory"), "{err}");
        assert!(!Path::new("/nonexistent-peakbench-dir").exists());
        let noted = format!("note: both iodepth >= 1 and synchronous I/O engine\n{text}");
        assert!(parse_json(&noted).is_ok());
        assert!(parse_json("{\"fio version\": \"fio-3.33\", \"jobs\": []}").is_err());
    }
}
