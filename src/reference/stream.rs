//! STREAM (John McCalpin's stream.c, built by the user with OpenMP): COPY, SCALE, ADD and TRIAD.
//!
//! The binary is `stream` on PATH, or the one PEAKBENCH_STREAM names. Its "Best Rate MB/s" is
//! decimal and counts bytes read plus bytes written (copy and scale 16 B per element, add and
//! triad 24 B), as peakbench does: GB/s = MB/s ÷ 1000. Its array size is fixed when it is
//! compiled (STREAM_ARRAY_SIZE); the threads are OMP_NUM_THREADS, bound one per core.

use super::process::run_bounded;
use super::{RefError, Tool, unit_error};
use crate::results::ResultRecord;
use crate::results::{Metric, Unit};
use crate::workload::mem::MemWorkload;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

const TOOL: Tool = Tool::Stream;

/// One STREAM run: all four kernels at one thread count.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Job {
    pub threads: u64,
}

/// The run for a memory throughput record of a workload whose spec names STREAM (its four
/// kernels: COPY, SCALE, ADD, TRIAD).
pub fn job(rec: &ResultRecord) -> Option<Result<Job, RefError>> {
    if rec.metric != Metric::Throughput {
        return None;
    }
    Some(Ok(Job {
        threads: rec.params.threads() as u64,
    }))
}

/// The environment of the run: OpenMP threads, one per core, spread as peakbench places its own.
pub fn env(job: &Job) -> Vec<(&'static str, String)> {
    vec![
        ("OMP_NUM_THREADS", job.threads.to_string()),
        ("OMP_PROC_BIND", "spread".into()),
        ("OMP_PLACES", "cores".into()),
    ]
}

/// Runs `job` (STREAM takes no arguments; its size and repetitions are compiled in).
pub fn run(program: &Path, job: &Job) -> Result<StreamResult, RefError> {
    let mut cmd = Command::new(program);
    cmd.envs(env(job));
    let out = run_bounded(TOOL, cmd, Duration::from_secs(300))?;
    if !out.status.success() {
        return Err(out.failure(TOOL));
    }
    let r = parse_output(&out.stdout).map_err(|m| RefError::parse(TOOL, m))?;
    if let Some(t) = r.threads
        && t != job.threads
    {
        return Err(RefError::failed(
            TOOL,
            format!(
                "it ran {t} threads, not {}: was it built without -fopenmp?",
                job.threads
            ),
        ));
    }
    Ok(r)
}

/// What one STREAM run reports; rates in MB/s (10⁶ bytes per second).
#[derive(Debug, Clone, PartialEq)]
pub struct StreamResult {
    pub version: Option<String>,
    pub array_elements: Option<u64>,
    /// "Number of Threads counted" (absent when built without OpenMP).
    pub threads: Option<u64>,
    pub copy_mb_s: f64,
    pub scale_mb_s: f64,
    pub add_mb_s: f64,
    pub triad_mb_s: f64,
}

/// Parses STREAM's report: the `Copy:`, `Scale:`, `Add:`, `Triad:` lines (best rate first) and
/// the validation line, which must not say that the results failed.
pub fn parse_output(text: &str) -> Result<StreamResult, String> {
    let mut rates = [None; 4];
    let mut r = StreamResult {
        version: super::version_after(text, "$Revision:"),
        array_elements: None,
        threads: None,
        copy_mb_s: 0.0,
        scale_mb_s: 0.0,
        add_mb_s: 0.0,
        triad_mb_s: 0.0,
    };
    let names = ["Copy:", "Scale:", "Add:", "Triad:"];
    for line in text.lines() {
        let mut words = line.split_whitespace();
        let first = words.next().unwrap_or("");
        if let Some(i) = names.iter().position(|n| *n == first) {
            let rate = words.next().unwrap_or("");
            match rate.parse::<f64>().ok().and_then(super::tool_number) {
                Some(v) if v > 0.0 => rates[i] = Some(v),
                _ => return Err(format!("'{}' has no rate", line.trim())),
            }
        } else if let Some(rest) = line.trim().strip_prefix("Array size =") {
            r.array_elements = rest.split_whitespace().next().and_then(|n| n.parse().ok());
        } else if let Some(rest) = line.trim().strip_prefix("Number of Threads counted =") {
            r.threads = rest.trim().parse().ok();
        }
    }
    if let Some(line) = text.lines().find(|l| l.contains("Failed Validation")) {
        return Err(format!(
            "STREAM's results did not validate: {}",
            line.trim()
        ));
    }
    match rates {
        [Some(c), Some(s), Some(a), Some(t)] => {
            r.copy_mb_s = c;
            r.scale_mb_s = s;
            r.add_mb_s = a;
            r.triad_mb_s = t;
            Ok(r)
        }
        _ => {
            let missing: Vec<&str> = names
                .iter()
                .zip(rates)
                .filter(|(_, r)| r.is_none())
                .map(|(n, _)| n.trim_end_matches(':'))
                .collect();
            Err(format!("no rate for {}", missing.join(", ")))
        }
    }
}

/// STREAM's version, read from its binary (`STREAM version $Revision: 5.10 $`): the program has
/// no version option, and run it would benchmark.
pub fn version_in_binary(bytes: &[u8]) -> Option<String> {
    let marker = b"STREAM version $Revision:";
    let at = bytes.windows(marker.len()).position(|w| w == marker)?;
    let tail = &bytes[at..bytes.len().min(at + 64)];
    super::version_after(&String::from_utf8_lossy(tail), "$Revision:")
}

/// The figure for `rec`: its kernel's best rate in B/s.
pub fn figure(r: &StreamResult, rec: &ResultRecord) -> Result<f64, RefError> {
    if rec.unit != Unit::BytesPerSec {
        return Err(unit_error(TOOL, rec));
    }
    let mb_s = match rec.workload.mem() {
        Some(MemWorkload::Copy) => r.copy_mb_s,
        Some(MemWorkload::Scale) => r.scale_mb_s,
        Some(MemWorkload::Add) => r.add_mb_s,
        Some(MemWorkload::Triad) => r.triad_mb_s,
        _ => return Err(unit_error(TOOL, rec)),
    };
    Ok(mb_s * 1e6)
}

#[cfg(test)]
mod tests {
    use super::super::testing::{fixture, record};
    use super::*;
    use serde_json::json;

    #[test]
    fn job_and_environment() {
        let rec = record(
            "mem",
            "SCALE",
            "throughput",
            "GB/s",
            json!({"threads": 2}),
            None,
        );
        let job = job(&rec).unwrap().unwrap();
        assert_eq!(job, Job { threads: 2 });
        assert_eq!(
            env(&job),
            [
                ("OMP_NUM_THREADS", "2".to_string()),
                ("OMP_PROC_BIND", "spread".into()),
                ("OMP_PLACES", "cores".into())
            ]
        );
        let lat = record("mem", "LATENCY", "latency", "ns", json!({}), None);
        assert!(super::job(&lat).is_none());
    }

    #[test]
    fn parses_recorded_output() {
        let text = fixture("stream.txt");
        let r = parse_output(&text).unwrap();
        assert_eq!(r.version.as_deref(), Some("5.10"));
        assert_eq!(r.array_elements, Some(100_000_000));
        assert_eq!(r.threads, Some(1));
        assert_eq!(
            [r.copy_mb_s, r.scale_mb_s, r.add_mb_s, r.triad_mb_s],
            [23300.5, 25957.7, 23201.8, 22390.0]
        );
        let triad = record(
            "mem",
            "TRIAD",
            "throughput",
            "GB/s",
            json!({"threads": 1}),
            None,
        );
        assert_eq!(figure(&r, &triad).unwrap(), 22390.0 * 1e6);
    }

    #[test]
    fn reads_the_version_from_a_binary() {
        let mut bytes = vec![0u8, 1, 2];
        bytes.extend_from_slice(b"STREAM version $Revision: 5.10 $\0more");
        assert_eq!(version_in_binary(&bytes).as_deref(), Some("5.10"));
        assert_eq!(version_in_binary(b"\x7fELF nothing"), None);
    }

    #[test]
    fn rejects_garbage_truncated_and_failed_output() {
        assert!(parse_output("").is_err());
        assert!(parse_output("bash: stream: command not found").is_err());
        let text = fixture("stream.txt");
        let cut = &text[..text.find("Add:").unwrap()];
        assert_eq!(parse_output(cut).unwrap_err(), "no rate for Add, Triad");
        let failed = text.replace(
            "Solution Validates",
            "Failed Validation on array c[]\nSolution Validates",
        );
        assert!(parse_output(&failed).is_err());
        assert!(parse_output("Copy: fast\n").is_err());
    }
}
