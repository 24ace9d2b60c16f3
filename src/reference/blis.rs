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
//! Where BLIS runs generic code on a CPU with AVX2 or AVX-512, the reference asks for the
//! configuration of the point's instruction set (`skx` for AVX-512, `haswell` for AVX2) with
//! BLIS's own `BLIS_ARCH_TYPE`, as a user who knows BLIS would: two tiny multiplies in children
//! first tell whether BLIS chose generic code, and whether it then reports the configuration
//! asked for (BLIS numbers its configurations, and the numbers change between versions: a
//! number that names another is not used). The version says so; a `BLIS_ARCH_TYPE` in this
//! process's environment is the user's choice and is left alone.
//!
//! Units: the child's JSON record is in op/s, the record's unit.

use super::process::run_bounded;
use super::{RefContext, RefError, Tool, params_of, unit_error};
use crate::results::{Metric, ResultRecord, Unit, Workload};
use crate::sysinfo::Isa;
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

/// BLIS's environment variable choosing a configuration by number.
pub const ARCH_ENV: &str = "BLIS_ARCH_TYPE";

/// The order of the probes' multiplies: a few microseconds of work.
const PROBE_N: usize = 64;

/// A configuration of BLIS's, by the name it reports and its number in `BLIS_ARCH_TYPE`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Config {
    pub name: &'static str,
    pub arch_type: u32,
}

/// BLIS's AVX-512 configuration: arch_t's first in BLIS 0.8 and 0.9 (bli_type_defs.h).
pub const SKX: Config = Config {
    name: "skx",
    arch_type: 0,
};

/// BLIS's AVX2 configuration for Intel cores, arch_t's fourth in BLIS 0.8 and 0.9.
pub const HASWELL: Config = Config {
    name: "haswell",
    arch_type: 3,
};

/// One multiply through BLIS.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Job {
    pub workload: LinalgWorkload,
    pub n: usize,
    pub threads: usize,
    pub library: PathBuf,
    /// The configuration to ask for where BLIS runs generic code ([`config_for`]).
    pub config: Option<Config>,
}

/// The configuration for a point of instruction set `isa` (a system engine's point has none:
/// the widest of this CPU's), given whether this CPU has AVX-512 and AVX2: none for another
/// instruction set, or one the CPU lacks.
pub fn config_for(isa: Option<Isa>, avx512: bool, avx2: bool) -> Option<Config> {
    match isa {
        Some(Isa::Avx512) => avx512.then_some(SKX),
        Some(Isa::Avx2) => avx2.then_some(HASWELL),
        Some(_) => None,
        None if avx512 => Some(SKX),
        None => avx2.then_some(HASWELL),
    }
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
        let (avx512, avx2) = super::x86_vectors();
        Ok(Job {
            workload,
            n: l.n,
            threads: p.threads.max(1),
            library,
            config: config_for(l.micro_kernel_isa, avx512, avx2),
        })
    }))
}

/// The child's warm-up multiplies: about 0.3 s of them at a pessimistic 50 GFLOP/s a thread,
/// one at least and 100 at most. BLIS's threads run at a fraction of their rate for the first
/// fifth of a second or so of a process (Debian's 0.9 at N = 1000 on 2 threads of a KVM guest
/// read 48–83 GFLOP/s for 7 multiplies, about 0.2 s, then 204–230): one warm-up measured that
/// start (48 GFLOP/s, where 15 gave 224 and 230).
pub fn warmups(job: &Job) -> usize {
    let per_s = 50e9 * job.threads.max(1) as f64;
    let n = (0.3 * per_s / job.workload.flops(job.n).max(1.0)).ceil();
    (n as usize).clamp(1, 100)
}

/// The child's command line, after the program (this executable): one repetition after its
/// [`warmups`], no history, the record to `json`.
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
        &warmups(job).to_string(),
        "--no-history",
        "--json",
        &json.to_string_lossy(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

/// About how long a run takes: its multiplies (the warm-ups and one timed) at a pessimistic
/// 5 GFLOP/s a thread, and the child's start.
pub fn estimate_s(job: &Job) -> f64 {
    let flops = job.workload.flops(job.n);
    (1 + warmups(job)) as f64 * flops / 5e9 / job.threads.max(1) as f64 + 1.0
}

/// Runs the job: this executable as the child, bounded to ten times its estimate, with the
/// job's configuration asked for where BLIS would run generic code ([`asked`]).
pub fn run(job: &Job) -> Result<BlisResult, RefError> {
    let program = std::env::current_exe()
        .map_err(|e| RefError::failed(TOOL, format!("cannot find peakbench itself: {e}")))?;
    let asked = job
        .config
        .filter(|_| std::env::var_os(ARCH_ENV).is_none())
        .and_then(|c| asked(&program, job, c));
    let mut r = child(&program, job, asked)?;
    if let Some(c) = asked.filter(|c| r.kernel.as_deref() == Some(&format!("BLIS {}", c.name))) {
        r.kernel = Some(format!(
            "BLIS {}, asked with {ARCH_ENV}={}: BLIS runs generic code on this CPU",
            c.name, c.arch_type
        ));
    }
    Ok(r)
}

/// `config` where BLIS (the job's library) runs generic code on this CPU and reports `config`
/// when asked for it by number; None otherwise, or where a probe fails. Probed once a process
/// for each library and configuration.
fn asked(program: &Path, job: &Job, config: Config) -> Option<Config> {
    type Key = (PathBuf, Config);
    static ASKED: std::sync::Mutex<Vec<(Key, Option<Config>)>> = std::sync::Mutex::new(Vec::new());
    let key = (job.library.clone(), config);
    let mut known = ASKED.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, v)) = known.iter().find(|(k, _)| *k == key) {
        return *v;
    }
    let probe = Job {
        n: PROBE_N,
        threads: 1,
        ..job.clone()
    };
    let reports = |arch: Option<Config>, name: &str| {
        child(program, &probe, arch).is_ok_and(|r| r.kernel.as_deref() == Some(name))
    };
    let chosen = (reports(None, "BLIS generic")
        && reports(Some(config), &format!("BLIS {}", config.name)))
    .then_some(config);
    known.push((key, chosen));
    chosen
}

/// One child: the job's multiply, with `BLIS_ARCH_TYPE` set to `arch`'s number where given.
fn child(program: &Path, job: &Job, arch: Option<Config>) -> Result<BlisResult, RefError> {
    let dir = tempfile::tempdir()
        .map_err(|e| RefError::failed(TOOL, format!("cannot make a temporary directory: {e}")))?;
    let json = dir.path().join("blis.json");
    let mut cmd = Command::new(program);
    if let Some(c) = arch {
        cmd.env(ARCH_ENV, c.arch_type.to_string());
    }
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

    /// The configuration asked for follows the point's instruction set, and only one this CPU
    /// runs; a system engine's point (no instruction set of its own) takes the widest.
    #[test]
    fn the_configuration_asked_for_is_the_points_instruction_sets() {
        assert_eq!(config_for(Some(Isa::Avx512), true, true), Some(SKX));
        assert_eq!(config_for(Some(Isa::Avx2), true, true), Some(HASWELL));
        assert_eq!(config_for(Some(Isa::Avx512), false, true), None);
        assert_eq!(config_for(Some(Isa::Avx2), false, false), None);
        assert_eq!(config_for(Some(Isa::Sse2), true, true), None);
        assert_eq!(config_for(Some(Isa::Scalar), true, true), None);
        assert_eq!(config_for(None, true, true), Some(SKX));
        assert_eq!(config_for(None, false, true), Some(HASWELL));
        assert_eq!(config_for(None, false, false), None);
        // arch_t's order in BLIS 0.8 and 0.9: skx first, haswell fourth.
        assert_eq!((SKX.arch_type, HASWELL.arch_type), (0, 3));
    }

    /// The child warms BLIS's threads up for about 0.3 s at 50 GFLOP/s a thread: a small
    /// multiply many times, a large one once, never none and never without end.
    #[test]
    fn the_child_warms_up_small_multiplies_many_times() {
        let job = |n, threads| Job {
            workload: LinalgWorkload::Dgemm,
            n,
            threads,
            library: "/usr/lib/x86_64-linux-gnu/libblis.so.4".into(),
            config: None,
        };
        // 0.3 s × 100 GFLOP/s over 2·1000³ flops: 15.
        assert_eq!(warmups(&job(1000, 2)), 15);
        assert_eq!(warmups(&job(1000, 1)), 8);
        assert_eq!(warmups(&job(4000, 2)), 1);
        assert_eq!(warmups(&job(64, 1)), 100);
        let line = argv(&job(1000, 2), Path::new("/tmp/x/blis.json")).join(" ");
        assert!(
            line.contains("--repeat 1 --warmup 15 --no-history"),
            "{line}"
        );
        // Sixteen multiplies of 2 GFLOP at 5 GFLOP/s a thread on 2, and a second.
        assert!((estimate_s(&job(1000, 2)) - 4.2).abs() < 1e-9);
    }

    #[test]
    fn the_child_runs_the_points_multiply_once_without_history() {
        let job = Job {
            workload: LinalgWorkload::Sgemm,
            n: 4000,
            threads: 2,
            library: "/usr/lib/x86_64-linux-gnu/libblis.so.4".into(),
            config: Some(SKX),
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
