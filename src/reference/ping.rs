//! ping (iputils) over loopback: the ICMP round trip, the last reference of a LATENCY point
//! where neither sockperf nor qperf is installed. ICMP is not the point's TCP or UDP: its
//! round trip has no socket layer above IP, and the reference says so in its version.
//!
//! `ping -c N -i 0.002 -s SIZE -q 127.0.0.1` (or ::1): as many echoes as fit the record's
//! duration at ping's shortest interval for an ordinary user, the point's message as the
//! payload. ping times an echo with a timestamp in its payload, so payloads under 16 bytes
//! have no round trip: those points are not compared.
//!
//! Figure: the mean of `rtt min/avg/max/mdev`, in ms → s. No rate: echoes are sent at ping's
//! interval, not one after another.

use super::process::run_bounded;
use super::remote::single_stream_loopback;
use super::{RefContext, RefError, Tool, unit_error};
use crate::results::Metric;
use crate::results::ResultRecord;
use crate::results::Unit;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

const TOOL: Tool = Tool::Ping;

/// The least payload ping times (its timestamp).
pub const MIN_PAYLOAD: u64 = 16;
/// Echoes of one run, at most.
const MAX_COUNT: u64 = 5000;
/// ping's shortest interval for an ordinary user, s.
pub const INTERVAL_S: f64 = 0.002;

/// One ping run.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Job {
    pub ipv6: bool,
    pub payload: u64,
    pub count: u64,
}

/// The run for a LATENCY round-trip record of one stream over loopback.
pub fn job(rec: &ResultRecord, ctx: &RefContext) -> Option<Result<Job, RefError>> {
    if rec.metric != Metric::Latency {
        return None;
    }
    Some(build(rec, ctx))
}

fn build(rec: &ResultRecord, ctx: &RefContext) -> Result<Job, RefError> {
    let p = single_stream_loopback(rec, TOOL, |streams| {
        format!("it sends one echo at a time and this point ran {streams} ping-pongs at once")
    })?;
    let payload = p.message_size_bytes as u64;
    if payload < MIN_PAYLOAD {
        return Err(RefError::unsupported(
            TOOL,
            format!(
                "it times only payloads of {MIN_PAYLOAD} bytes or more (its timestamp) and this point's messages are {payload}; install qperf (apt-get install qperf) for them"
            ),
        ));
    }
    let seconds = ctx.seconds(Some(p.duration_s)).unwrap_or(1.0);
    let ipv6 = p
        .server
        .as_deref()
        .and_then(|s| s.parse::<std::net::SocketAddr>().ok())
        .is_some_and(|a| a.is_ipv6());
    Ok(Job {
        ipv6,
        payload,
        count: ((seconds / INTERVAL_S) as u64).clamp(10, MAX_COUNT),
    })
}

/// ping's arguments for `job`: loopback only.
pub fn argv(job: &Job) -> Vec<String> {
    vec![
        "-c".into(),
        job.count.to_string(),
        "-i".into(),
        INTERVAL_S.to_string(),
        "-s".into(),
        job.payload.to_string(),
        "-q".into(),
        if job.ipv6 { "::1" } else { "127.0.0.1" }.into(),
    ]
}

pub fn run(program: &Path, job: &Job) -> Result<PingResult, RefError> {
    let mut cmd = Command::new(program);
    cmd.args(argv(job));
    let bound = Duration::from_secs_f64(job.count as f64 * INTERVAL_S * 4.0 + 10.0);
    let out = run_bounded(TOOL, cmd, bound)?;
    if !out.status.success() {
        return Err(out.failure(TOOL));
    }
    parse_output(&out.stdout).map_err(|m| RefError::parse(TOOL, m))
}

/// What one ping run reports.
#[derive(Debug, Clone, PartialEq)]
pub struct PingResult {
    pub avg_ms: f64,
    pub received: Option<u64>,
}

/// Parses ping's summary ("rtt min/avg/max/mdev = 0.021/0.035/0.081/0.010 ms").
pub fn parse_output(text: &str) -> Result<PingResult, String> {
    let line = text
        .lines()
        .find(|l| l.contains("min/avg/max"))
        .ok_or("no 'rtt min/avg/max' line in ping's summary (a payload under 16 bytes has none)")?;
    let values = line.split_once('=').map(|x| x.1).unwrap_or("").trim();
    let avg = values
        .split('/')
        .nth(1)
        .and_then(|v| v.trim().parse::<f64>().ok())
        .and_then(super::tool_number)
        .filter(|v| *v > 0.0)
        .ok_or_else(|| format!("ping's average round trip is not a positive number: {line:?}"))?;
    if !values.trim_end().ends_with("ms") {
        return Err(format!("ping's round trips are not in ms: {line:?}"));
    }
    let received = text
        .lines()
        .find(|l| l.contains("received"))
        .and_then(|l| l.split(',').nth(1))
        .and_then(|f| f.split_whitespace().next())
        .and_then(|n| n.parse().ok());
    Ok(PingResult {
        avg_ms: avg,
        received,
    })
}

/// The version from `ping -V` ("ping from iputils 20221126").
pub fn parse_version(text: &str) -> Option<String> {
    super::version_after(text, "iputils").map(|v| format!("{v} (iputils, ICMP)"))
}

/// The figure for a round-trip record, in s.
pub fn figure(r: &PingResult, rec: &ResultRecord) -> Result<f64, RefError> {
    match (rec.metric, rec.unit) {
        (Metric::Latency, Unit::Seconds) => Ok(r.avg_ms / 1e3),
        _ => Err(unit_error(TOOL, rec)),
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{fixture, record};
    use super::*;
    use serde_json::json;

    fn lat(size: u64, server: &str) -> ResultRecord {
        record(
            "net",
            "LATENCY",
            "latency",
            "us",
            json!({
                "threads": 1, "streams": 1, "protocol": "UDP", "message_size_bytes": size,
                "duration_s": 0.5, "omit_s": 0.1, "server": server, "side": "client"
            }),
            None,
        )
    }

    #[test]
    fn commands_sizes_and_addresses() {
        let ctx = RefContext::new("/tmp");
        let j = job(&lat(64, "127.0.0.1:5301"), &ctx).unwrap().unwrap();
        assert_eq!(
            argv(&j),
            ["-c", "250", "-i", "0.002", "-s", "64", "-q", "127.0.0.1"]
        );
        let v6 = job(&lat(64, "[::1]:5301"), &ctx).unwrap().unwrap();
        assert_eq!(argv(&v6).last().unwrap(), "::1");
        let tiny = job(&lat(1, "127.0.0.1:5301"), &ctx).unwrap().unwrap_err();
        assert!(tiny.to_string().contains("16 bytes or more"), "{tiny}");
        assert!(job(&lat(64, "192.0.2.1:5301"), &ctx).unwrap().is_err());
        let mut rate = lat(64, "127.0.0.1:5301");
        rate.metric = Metric::Rate;
        assert!(job(&rate, &ctx).is_none());
    }

    #[test]
    fn parses_recorded_summary() {
        let r = parse_output(&fixture("ping-loopback.txt")).unwrap();
        assert_eq!(r.avg_ms, 0.035);
        assert_eq!(r.received, Some(250));
        assert!((figure(&r, &lat(64, "127.0.0.1:1")).unwrap() - 35e-6).abs() < 1e-15);
        assert!(parse_output("PING 127.0.0.1 (127.0.0.1) 1(29) bytes of data.\n").is_err());
        assert!(parse_output("rtt min/avg/max/mdev = 0.1/x/0.3/0.1 ms\n").is_err());
        assert_eq!(
            parse_version("ping from iputils 20221126\nlibcap: yes"),
            Some("20221126 (iputils, ICMP)".into())
        );
    }
}
