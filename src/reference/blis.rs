//! BLIS, the library the built-in multiply is modelled on, as the DGEMM and SGEMM reference:
//! the point's multiply (the same N, the same threads) through BLIS's own `dgemm_`/`sgemm_`,
//! timed by `peakbench cpu --blas system --blas-library LIBBLIS` in a process of its own (BLIS
//! starts threads, reads its environment and may abort: none of it touches this one). BLIS has
//! no LAPACK, so LINPACK keeps HPL.
//!
//! The library is Debian's `libblis4-pthread` (or `-openmp`, `-serial`), found where Debian's
//! alternatives put `libblis.so.4`, or named by `PEAKBENCH_BLIS`. Which of its configurations
//! BLIS chose on this CPU ("BLIS zen3", or "BLIS generic" on a core it does not know, such as
//! BLIS 0.9 on a Zen 5) is part of the figure's version ("0.9.0-1 (BLIS generic)"), for a
//! generic one is a fraction of the library's rate.
//!
//! Units: the child's JSON record is in op/s, the record's unit.

use super::process::run_bounded;
use super::{RefContext, RefError, Tool, params_of, unit_error};
use crate::results::{Metric, ResultRecord, Unit, Workload};
use crate::workload::linalg::LinalgWorkload;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

const TOOL: Tool = Tool::Blis;

/// The environment variable naming the BLIS library (a path).
pub const BLIS_ENV: &str = "PEAKBENCH_BLIS";

/// Where Debian's alternatives (and the usual prefixes) put `libblis.so.4`.
const LIBRARIES: [&str; 5] = [
    "/usr/lib/x86_64-linux-gnu/libblis.so.4",
    "/usr/lib/aarch64-linux-gnu/libblis.so.4",
    "/usr/lib64/libblis.so.4",
    "/usr/lib/libblis.so.4",
    "/usr/local/lib/libblis.so.4",
];

/// The largest JSON document the child may write (its one point's record is a few KiB).
const MAX_DOCUMENT: u64 = 4 << 20;

/// One multiply through BLIS.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Job {
    pub workload: LinalgWorkload,
    pub n: usize,
    pub threads: usize,
    pub library: PathBuf,
}

/// What the child measured.
#[derive(Debug, Clone, PartialEq)]
pub struct BlisResult {
    /// Its multiply's rate, op/s.
    pub ops_per_s: f64,
    /// The configuration BLIS chose ("BLIS zen3"), where the child says it.
    pub kernel: Option<String>,
}

/// The library: `PEAKBENCH_BLIS`, else the first of [`LIBRARIES`] that is a file.
pub fn library() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os(BLIS_ENV).filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(p));
    }
    LIBRARIES.iter().map(PathBuf::from).find(|p| p.is_file())
}

/// The run for a DGEMM or SGEMM throughput record of the built-in engine or a system one.
pub fn job(rec: &ResultRecord, ctx: &RefContext) -> Option<Result<Job, RefError>> {
    let workload = match rec.workload {
        Workload::Linalg(w @ (LinalgWorkload::Dgemm | LinalgWorkload::Sgemm)) => w,
        _ => return None,
    };
    if rec.metric != Metric::Throughput {
        return None;
    }
    Some(params_of(rec, TOOL, |p| p.cpu()).and_then(|p| {
        let l = p.linalg.as_ref().ok_or_else(|| {
            RefError::unsupported(TOOL, "the record has no order N (not a multiply's)")
        })?;
        let library = ctx.locator.blis.clone().ok_or_else(|| RefError::Missing {
            tools: TOOL.name().into(),
            install: TOOL.install().into(),
        })?;
        Ok(Job {
            workload,
            n: l.n,
            threads: p.threads.max(1),
            library,
        })
    }))
}

/// The child's command line, after the program (this executable): one repetition after one
/// warm-up, no history, the record to `json`.
pub fn argv(job: &Job, json: &Path) -> Vec<String> {
    [
        "cpu",
        "--workload",
        job.workload.name(),
        "--n",
        &job.n.to_string(),
        "--threads",
        &job.threads.to_string(),
        "--blas",
        "system",
        "--blas-library",
        &job.library.to_string_lossy(),
        "--repeat",
        "1",
        "--warmup",
        "1",
        "--no-history",
        "--json",
        &json.to_string_lossy(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

/// About how long a run takes: its multiplies (a warm-up and one timed) at a pessimistic
/// 5 GFLOP/s a thread, and the child's start.
pub fn estimate_s(job: &Job) -> f64 {
    let flops = job.workload.flops(job.n);
    2.0 * flops / 5e9 / job.threads.max(1) as f64 + 1.0
}

/// Runs the job: this executable as the child, bounded to ten times its estimate.
pub fn run(job: &Job) -> Result<BlisResult, RefError> {
    let program = std::env::current_exe()
        .map_err(|e| RefError::failed(TOOL, format!("cannot find peakbench itself: {e}")))?;
    let dir = tempfile::tempdir()
        .map_err(|e| RefError::failed(TOOL, format!("cannot make a temporary directory: {e}")))?;
    let json = dir.path().join("blis.json");
    let mut cmd = Command::new(program);
    cmd.args(argv(job, &json)).current_dir(dir.path());
    let limit = Duration::from_secs_f64((10.0 * estimate_s(job)).clamp(30.0, 3600.0));
    let out = run_bounded(TOOL, cmd, limit)?;
    if !out.status.success() {
        return Err(out.failure(TOOL));
    }
    let text = crate::files::read_input(&json, MAX_DOCUMENT, "")
        .map_err(|e| RefError::parse(TOOL, e.to_string()))?;
    parse_output(&text, job.workload).map_err(|m| RefError::parse(TOOL, m))
}

/// The rate of the `workload` record in the child's JSON document, and BLIS's configuration.
pub fn parse_output(text: &[u8], workload: LinalgWorkload) -> Result<BlisResult, String> {
    let doc: serde_json::Value =
        serde_json::from_slice(text).map_err(|e| format!("its JSON does not parse: {e}"))?;
    let rec = (doc["results"].as_array())
        .and_then(|r| {
            r.iter()
                .find(|x| x["workload"] == workload.name() && x["metric"] == "throughput")
        })
        .ok_or_else(|| format!("no {workload} throughput record in its JSON"))?;
    if rec["unit"] != "op/s" {
        return Err(format!("its record is in {}, not op/s", rec["unit"]));
    }
    let ops_per_s = rec["mean"]
        .as_f64()
        .filter(|v| v.is_finite() && *v > 0.0)
        .ok_or_else(|| "its record has no positive mean".to_string())?;
    // A library's own words, shown in reports: bounded, and nothing a terminal would act on.
    let kernel = rec["params"]["micro_kernel"]
        .as_str()
        .map(|k| crate::text::printable(&k.chars().take(64).collect::<String>()));
    Ok(BlisResult { ops_per_s, kernel })
}

/// The figure for `rec`: the child's rate.
pub fn figure(r: &BlisResult, rec: &ResultRecord) -> Result<f64, RefError> {
    match (rec.metric, rec.unit) {
        (Metric::Throughput, Unit::OpsPerSec) => Ok(r.ops_per_s),
        _ => Err(unit_error(TOOL, rec)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The child's document of a run on Debian's BLIS 0.9.0 (a Zen 5 guest, which BLIS does
    /// not know: its generic configuration), as peakbench wrote it.
    #[test]
    fn the_childs_record_is_read_with_blis_configuration() {
        let text = std::fs::read(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/reference/blis-dgemm.json"),
        )
        .unwrap();
        let r = parse_output(&text, LinalgWorkload::Dgemm).unwrap();
        assert!((r.ops_per_s - 34_770_350_181.932_38).abs() < 1.0, "{r:?}");
        assert_eq!(r.kernel.as_deref(), Some("BLIS generic"));
        assert!(
            parse_output(&text, LinalgWorkload::Sgemm)
                .unwrap_err()
                .contains("no SGEMM throughput record")
        );
        assert!(parse_output(b"{", LinalgWorkload::Dgemm).is_err());
        // A hostile configuration name is bounded and shown escaped.
        let hostile = format!(
            r#"{{"results": [{{"workload": "DGEMM", "metric": "throughput", "unit": "op/s", "mean": 1e9,
                "params": {{"micro_kernel": "BLIS \u001b[2J{}"}}}}]}}"#,
            "x".repeat(1000)
        );
        let k = parse_output(hostile.as_bytes(), LinalgWorkload::Dgemm)
            .unwrap()
            .kernel
            .unwrap();
        assert!(!k.contains('\u{1b}') && k.chars().count() < 300, "{k}");
        assert!(
            parse_output(
                br#"{"results": [{"workload": "DGEMM", "metric": "throughput", "unit": "op/s", "mean": -1}]}"#,
                LinalgWorkload::Dgemm
            )
            .is_err()
        );
    }

    #[test]
    fn the_child_runs_the_points_multiply_once_without_history() {
        let job = Job {
            workload: LinalgWorkload::Sgemm,
            n: 4000,
            threads: 2,
            library: "/usr/lib/x86_64-linux-gnu/libblis.so.4".into(),
        };
        let line = argv(&job, Path::new("/tmp/x/blis.json")).join(" ");
        assert_eq!(
            line,
            "cpu --workload SGEMM --n 4000 --threads 2 --blas system --blas-library /usr/lib/x86_64-linux-gnu/libblis.so.4 --repeat 1 --warmup 1 --no-history --json /tmp/x/blis.json"
        );
        // A warm-up and a timed 2·4000³ flops at 5 GFLOP/s a thread on 2, and a second.
        assert!(
            (estimate_s(&job) - 26.6).abs() < 0.1,
            "{}",
            estimate_s(&job)
        );
    }
}
