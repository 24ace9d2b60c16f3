//! sockperf (3.x) `ping-pong --full-rtt`: network LATENCY — round-trip time and transactions
//! per second, TCP or UDP, one ping-pong per stream of the point, all at once.
//!
//! Over loopback the adapter starts one `sockperf server` per stream on free ports of 127.0.0.1
//! and kills them after the clients' run; against a peakbench server on another address, that
//! server starts them (`net serve --references`, see [`remote`](super::remote)). Each client
//! sends messages of the point's size to its own server for `-t` whole seconds (rounded up, at
//! least 1); sockperf warms up by itself first. `--full-rtt` makes it report round trips, as
//! peakbench does, not half of them.
//!
//! Figures: latency (µs) is sockperf's `avg-rtt` (with several streams, the mean of every
//! round trip: each client's weighted by its messages, as peakbench counts them); the rate is
//! the messages received in the valid duration ÷ that duration, summed over the clients.

use super::process::{run_at_once, whole_seconds};
use super::remote::{remote_of, streams_of, with_servers};
use super::{RefContext, RefError, Tool, params_of, unit_error};
use crate::results::Metric;
use crate::results::ResultRecord;
use crate::results::Unit;
use crate::results::params::Proto;
use crate::wire::tools::{RefTool, ToolRequest};
use std::net::{IpAddr, SocketAddr};
use std::path::Path;
use std::process::Command;
use std::time::Duration;

const TOOL: Tool = Tool::Sockperf;

/// sockperf's smallest message: its header (sequence number and flags) is 14 bytes.
pub const MIN_MESSAGE_BYTES: u64 = 14;

/// One sockperf run: a ping-pong per stream, at once.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Job {
    pub udp: bool,
    pub message_bytes: u64,
    pub seconds: u64,
    pub streams: u64,
    /// A paced point's round trips per second per stream (`--mps`; sockperf's `under-load`
    /// replies to one message in 100 and does not wait for it, so the paced ping-pong is the
    /// same measurement).
    pub mps: Option<u32>,
    /// The peakbench server that starts sockperf's servers (None: on loopback, here).
    pub remote: Option<SocketAddr>,
}

/// The run for a LATENCY record (round trip or rate).
pub fn job(rec: &ResultRecord, ctx: &RefContext) -> Option<Result<Job, RefError>> {
    if !matches!(rec.metric, Metric::Latency | Metric::Rate) {
        return None;
    }
    Some(build(rec, ctx))
}

fn build(rec: &ResultRecord, ctx: &RefContext) -> Result<Job, RefError> {
    let p = params_of(rec, TOOL, |p| p.net())?;
    let remote = remote_of(p, TOOL)?;
    let streams = streams_of(p, TOOL)?;
    let udp = p.protocol == Proto::Udp;
    let message_bytes = p.message_size_bytes as u64;
    if message_bytes < MIN_MESSAGE_BYTES {
        return Err(RefError::unsupported(
            TOOL,
            format!(
                "its messages are at least {MIN_MESSAGE_BYTES} bytes and this point's are {message_bytes}; measure with --message-size {MIN_MESSAGE_BYTES} or more (64 is usual) to compare"
            ),
        ));
    }
    if p.load_streams.is_some_and(|n| n > 0) {
        return Err(RefError::unsupported(
            TOOL,
            "this point's round trips ran beside bulk streams (--load), and sockperf's would run without them",
        ));
    }
    let seconds = ctx.seconds(Some(p.duration_s)).unwrap_or(1.0);
    Ok(Job {
        udp,
        message_bytes,
        seconds: whole_seconds(seconds, 1),
        streams,
        mps: p.mps,
        remote,
    })
}

/// One client's arguments for `job` against the server on `ip`:`port`.
pub fn argv(job: &Job, ip: IpAddr, port: u16) -> Vec<String> {
    let mut a = vec!["ping-pong".to_string()];
    if !job.udp {
        a.push("--tcp".into());
    }
    a.extend(["-i".into(), ip.to_string(), "-p".into(), port.to_string()]);
    a.extend([
        "-m".into(),
        job.message_bytes.to_string(),
        "-t".into(),
        job.seconds.to_string(),
        "--full-rtt".into(),
    ]);
    if let Some(mps) = job.mps {
        a.extend(["--mps".into(), mps.to_string()]);
    }
    a
}

/// Runs `job`: a client per stream at once, each against its own server started for it (here
/// on loopback, or by the peakbench server that proves `token`) and stopped afterwards.
pub fn run(program: &Path, job: &Job, token: Option<&str>) -> Result<SockperfResult, RefError> {
    let request = ToolRequest {
        tool: RefTool::Sockperf,
        proto: if job.udp { Proto::Udp } else { Proto::Tcp },
        instances: u32::try_from(job.streams).unwrap_or(u32::MAX),
        // Its warm-up and report after the run.
        seconds: u32::try_from(job.seconds + 2).unwrap_or(u32::MAX),
    };
    with_servers(program, &request, job.remote, token, |ip, ports| {
        let command = |i: u64| {
            let mut cmd = Command::new(program);
            cmd.args(argv(job, ip, ports[i as usize]));
            cmd
        };
        // sockperf writes its report to standard output and some lines to standard error.
        let parse =
            |out: &super::process::Output| parse_output(&format!("{}\n{}", out.stdout, out.stderr));
        let each = run_at_once(
            TOOL,
            job.streams.min(ports.len() as u64),
            &command,
            Duration::from_secs(job.seconds + 20),
            &parse,
        )?;
        combine(each).ok_or_else(|| RefError::failed(TOOL, "no client ran"))
    })
}

/// The clients' reports as one: every round trip's mean (each client's weighted by the
/// messages it received, equally where one did not say), the rates summed, the percentiles
/// the worst client's.
pub fn combine(each: Vec<SockperfResult>) -> Option<SockperfResult> {
    if each.len() <= 1 {
        return each.into_iter().next();
    }
    let counted = each.iter().all(|r| r.received_messages.is_some());
    let weight = |r: &SockperfResult| match (counted, r.received_messages) {
        (true, Some(m)) => m as f64,
        _ => 1.0,
    };
    let total: f64 = each.iter().map(weight).sum();
    let worst = |f: fn(&SockperfResult) -> Option<f64>| {
        each.iter()
            .filter_map(f)
            .fold(None, |m: Option<f64>, x| Some(m.map_or(x, |m| m.max(x))))
    };
    Some(SockperfResult {
        version: each[0].version.clone(),
        avg_rtt_us: each.iter().map(|r| r.avg_rtt_us * weight(r)).sum::<f64>() / total.max(1e-300),
        std_dev_us: None,
        p50_us: worst(|r| Some(r.p50_us)).unwrap_or(0.0),
        p99_us: worst(|r| r.p99_us),
        p999_us: worst(|r| r.p999_us),
        max_us: worst(|r| r.max_us),
        min_us: each.iter().filter_map(|r| r.min_us).reduce(f64::min),
        valid_seconds: worst(|r| r.valid_seconds),
        received_messages: counted.then(|| {
            each.iter()
                .filter_map(|r| r.received_messages)
                .fold(0, u64::saturating_add)
        }),
        rate_per_s: each.iter().map(|r| r.rate_per_s).sum::<Option<f64>>(),
    })
}

/// What one ping-pong run reports; times in µs.
#[derive(Debug, Clone, PartialEq)]
pub struct SockperfResult {
    pub version: Option<String>,
    pub avg_rtt_us: f64,
    pub std_dev_us: Option<f64>,
    pub p50_us: f64,
    pub p99_us: Option<f64>,
    pub p999_us: Option<f64>,
    pub max_us: Option<f64>,
    pub min_us: Option<f64>,
    /// The valid duration (after the warm-up), in s.
    pub valid_seconds: Option<f64>,
    pub received_messages: Option<u64>,
    /// Round trips per second: the messages received in the valid duration ÷ that duration
    /// (summed over the clients of a run of several).
    pub rate_per_s: Option<f64>,
}

/// The number after `key` in `line` (`key` included, e.g. "avg-rtt="), up to the next
/// character that cannot be part of it (a sign and an exponent are: "-1" and "1e308" are read
/// whole, and refused, rather than as 1).
fn after(line: &str, key: &str) -> Option<f64> {
    let i = line.find(key)? + key.len();
    let v: String = line[i..]
        .trim_start()
        .chars()
        .take_while(|c| c.is_ascii_digit() || ".eE+-".contains(*c))
        .collect();
    v.parse().ok().and_then(super::tool_number)
}

/// Parses `sockperf ping-pong --full-rtt`'s report.
pub fn parse_output(text: &str) -> Result<SockperfResult, String> {
    let mut avg = None;
    let mut r = SockperfResult {
        version: super::version_after(text, "version #"),
        avg_rtt_us: 0.0,
        std_dev_us: None,
        p50_us: 0.0,
        p99_us: None,
        p999_us: None,
        max_us: None,
        min_us: None,
        valid_seconds: None,
        received_messages: None,
        rate_per_s: None,
    };
    let mut p50 = None;
    for line in text.lines() {
        if line.contains("avg-rtt=") {
            avg = after(line, "avg-rtt=");
            r.std_dev_us = after(line, "std-dev=");
        } else if line.contains("[Valid Duration]") {
            r.valid_seconds = after(line, "RunTime=");
            r.received_messages = after(line, "ReceivedMessages=").map(|m| m as u64);
        } else if line.contains("<MAX> observation =") {
            r.max_us = after(line, "=");
        } else if line.contains("<MIN> observation =") {
            r.min_us = after(line, "=");
        } else if line.contains("percentile 50.000 =") {
            p50 = after(line, "=");
        } else if line.contains("percentile 99.000 =") {
            r.p99_us = after(line, "=");
        } else if line.contains("percentile 99.900 =") {
            r.p999_us = after(line, "=");
        }
    }
    if avg.is_none() && text.contains("avg-lat=") {
        return Err("sockperf reported half round trips (avg-lat); run it with --full-rtt".into());
    }
    r.avg_rtt_us = avg.ok_or_else(|| {
        let last = text.lines().map(str::trim).rfind(|l| !l.is_empty());
        format!(
            "no 'avg-rtt=' in sockperf's report (it ends: {:?})",
            last.unwrap_or("")
        )
    })?;
    r.p50_us = p50.ok_or_else(|| "no 'percentile 50.000' in sockperf's report".to_string())?;
    r.rate_per_s = match (r.received_messages, r.valid_seconds) {
        (Some(m), Some(s)) if s > 0.0 => Some(m as f64 / s),
        _ => None,
    };
    Ok(r)
}

/// The version from `sockperf --version` ("sockperf, version 3.7-no.git") or from a report
/// ("== version #3.7-no.git ==").
pub fn parse_version(text: &str) -> Option<String> {
    super::version_after(text, "version #").or_else(|| super::version_after(text, "version "))
}

/// The figure for `rec`: mean round trip (s), or transactions per second.
pub fn figure(r: &SockperfResult, rec: &ResultRecord) -> Result<f64, RefError> {
    match (rec.metric, rec.unit) {
        (Metric::Latency, Unit::Seconds) => Ok(r.avg_rtt_us / 1e6),
        (Metric::Rate, Unit::TransPerSec) => r.rate_per_s.ok_or_else(|| {
            RefError::parse(
                TOOL,
                "no [Valid Duration] line with RunTime and ReceivedMessages",
            )
        }),
        _ => Err(unit_error(TOOL, rec)),
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{fixture, record};
    use super::*;
    use serde_json::json;

    fn lat(metric: &str, unit: &str, protocol: &str, size: u64) -> ResultRecord {
        record(
            "net",
            "LATENCY",
            metric,
            unit,
            json!({
                "threads": 1, "streams": 1, "protocol": protocol, "message_size_bytes": size,
                "duration_s": 0.25, "omit_s": 0.1, "server": "127.0.0.1:5301", "side": "client"
            }),
            None,
        )
    }

    #[test]
    fn commands() {
        let ctx = RefContext::new("/tmp");
        let tcp = job(&lat("latency", "us", "TCP", 64), &ctx)
            .unwrap()
            .unwrap();
        let lo: IpAddr = "127.0.0.1".parse().unwrap();
        assert_eq!(tcp.remote, None);
        assert_eq!(
            argv(&tcp, lo, 40000),
            [
                "ping-pong",
                "--tcp",
                "-i",
                "127.0.0.1",
                "-p",
                "40000",
                "-m",
                "64",
                "-t",
                "1",
                "--full-rtt"
            ]
        );
        let udp = job(&lat("rate", "trans/s", "UDP", 14), &ctx)
            .unwrap()
            .unwrap();
        assert_eq!(argv(&udp, lo, 1)[1..5], ["-i", "127.0.0.1", "-p", "1"]);
        let tiny = job(&lat("latency", "us", "TCP", 1), &ctx)
            .unwrap()
            .unwrap_err();
        assert!(tiny.to_string().contains("at least 14 bytes"), "{tiny}");
        // Several streams: one client each, at once; against another host, its server's.
        let mut several = lat("latency", "us", "TCP", 64);
        if let crate::results::params::Params::Net(p) = &mut several.params {
            p.streams = 4;
            p.server = Some("10.231.0.1:5301".into());
        }
        let j = job(&several, &ctx).unwrap().unwrap();
        assert_eq!(j.streams, 4);
        assert_eq!(j.remote, Some("10.231.0.1:5301".parse().unwrap()));
        assert_eq!(
            argv(&j, "10.231.0.1".parse().unwrap(), 7)[2..6],
            ["-i", "10.231.0.1", "-p", "7"]
        );
        if let crate::results::params::Params::Net(p) = &mut several.params {
            p.streams = 100_000;
        }
        let e = job(&several, &ctx).unwrap().unwrap_err();
        assert!(e.to_string().contains("1 to 128"), "{e}");
    }

    #[test]
    fn clients_of_several_streams_combine() {
        let one = parse_output(&fixture("sockperf-tcp.txt")).unwrap();
        let mut two = one.clone();
        two.avg_rtt_us = 100.0;
        two.received_messages = Some(2 * 7679);
        two.rate_per_s = Some(1000.0);
        let c = combine(vec![one.clone(), two]).unwrap();
        assert!((c.avg_rtt_us - (71.801 + 2.0 * 100.0) / 3.0).abs() < 1e-9);
        assert_eq!(c.rate_per_s, Some(7679.0 / 0.552 + 1000.0));
        assert_eq!(c.received_messages, Some(3 * 7679));
        assert_eq!(combine(vec![one.clone()]), Some(one));
        assert_eq!(combine(vec![]), None);
    }

    #[test]
    fn parses_recorded_tcp() {
        let r = parse_output(&fixture("sockperf-tcp.txt")).unwrap();
        assert_eq!(
            r,
            SockperfResult {
                version: Some("3.7".into()),
                avg_rtt_us: 71.801,
                std_dev_us: Some(337.532),
                p50_us: 31.085,
                p99_us: Some(1989.123),
                p999_us: Some(3861.413),
                max_us: Some(4276.747),
                min_us: Some(23.534),
                valid_seconds: Some(0.552),
                received_messages: Some(7679),
                rate_per_s: Some(7679.0 / 0.552),
            }
        );
        assert_eq!(
            figure(&r, &lat("latency", "us", "TCP", 64)).unwrap(),
            71.801 / 1e6
        );
        assert_eq!(
            figure(&r, &lat("rate", "trans/s", "TCP", 64)).unwrap(),
            7679.0 / 0.552
        );
    }

    #[test]
    fn parses_recorded_udp() {
        let r = parse_output(&fixture("sockperf-udp.txt")).unwrap();
        assert_eq!(r.avg_rtt_us, 63.348);
        assert_eq!(r.std_dev_us, Some(33.735));
        assert_eq!(r.p50_us, 62.191);
        assert_eq!(r.received_messages, Some(8683));
        assert_eq!(r.valid_seconds, Some(0.550));
    }

    #[test]
    fn rejects_garbage_truncated_and_half_rtt_output() {
        assert!(parse_output("").is_err());
        assert!(parse_output("sockperf: ERROR: connect failed").is_err());
        let text = fixture("sockperf-tcp.txt");
        let cut = &text[..text.find("percentile 50.000").unwrap()];
        assert!(parse_output(cut).is_err());
        let half = text.replace("avg-rtt=", "avg-lat=");
        assert!(parse_output(&half).unwrap_err().contains("--full-rtt"));
    }
}
