//! qperf (0.4) `tcp_lat` / `udp_lat`: network LATENCY over loopback where sockperf cannot run
//! the point (messages under its 14-byte header, 1 B among them).
//!
//! The adapter starts `qperf --listen_port PORT` (its server) and kills it after the client's
//! run; the client talks to 127.0.0.1 only. qperf's server cannot be bound to one address: it
//! listens on every address it has. So, as root with iproute2, server and client run in a
//! network namespace made for the run (only its loopback up) and deleted after; elsewhere the
//! server listens on every address of the host for the seconds of the run (SECURITY.md).
//!
//! A point of several streams runs one server and one client per stream, all at once.
//!
//! Figures: qperf's `latency` is one way, half of a round trip, so the round trip (s) is twice
//! it; the rate (trans/s) is one round trip after another, 1 ÷ that round trip, summed over the
//! clients. With several clients the round trip is the mean of every round trip (as peakbench
//! counts them): each client makes time ÷ its round trip of them, so the mean is the clients'
//! harmonic mean.

use super::process::{LOOPBACK, NetNamespace, Server, Transport, run_at_once, whole_seconds};
use super::remote::{require_loopback, streams_of};
use super::{RefContext, RefError, Tool, params_of, unit_error};
use crate::results::Metric;
use crate::results::ResultRecord;
use crate::results::Unit;
use crate::results::params::Proto;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

const TOOL: Tool = Tool::Qperf;

/// One qperf latency run over loopback.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Job {
    pub udp: bool,
    pub message_bytes: u64,
    pub seconds: u64,
    /// Ping-pongs at once, each a client against its own server.
    pub streams: u64,
}

/// The run for a LATENCY record (round trip or rate) of one stream over loopback.
pub fn job(rec: &ResultRecord, ctx: &RefContext) -> Option<Result<Job, RefError>> {
    if !matches!(rec.metric, Metric::Latency | Metric::Rate) {
        return None;
    }
    Some(build(rec, ctx))
}

fn build(rec: &ResultRecord, ctx: &RefContext) -> Result<Job, RefError> {
    let p = params_of(rec, TOOL, |p| p.net())?;
    require_loopback(p, TOOL)?;
    let streams = streams_of(p, TOOL)?;
    let seconds = ctx.seconds(Some(p.duration_s)).unwrap_or(1.0);
    Ok(Job {
        streams,
        udp: p.protocol == Proto::Udp,
        message_bytes: p.message_size_bytes as u64,
        seconds: whole_seconds(seconds, 1),
    })
}

/// The client's arguments for `job` against the server on `port` of 127.0.0.1.
pub fn argv(job: &Job, port: u16) -> Vec<String> {
    vec![
        LOOPBACK.to_string(),
        "--listen_port".into(),
        port.to_string(),
        "--msg_size".into(),
        job.message_bytes.to_string(),
        "--time".into(),
        job.seconds.to_string(),
        if job.udp { "udp_lat" } else { "tcp_lat" }.into(),
    ]
}

/// Runs `job`: a qperf server and client per stream, the clients at once, the servers killed
/// afterwards.
pub fn run(program: &Path, job: &Job) -> Result<QperfResult, RefError> {
    let server = |port: u16| {
        let mut cmd = Command::new(program);
        cmd.args(["--listen_port", &port.to_string()]);
        cmd
    };
    // Dropped after the servers (declared before them), so the namespace outlives its processes.
    let namespace = NetNamespace::create(TOOL);
    let inside = |cmd: Command| match &namespace {
        Some(ns) => ns.wrap(&cmd),
        None => cmd,
    };
    let mut servers = Vec::new();
    let mut ports = Vec::new();
    for _ in 0..job.streams.max(1) {
        let (s, port) = Server::start_on_free_port(
            TOOL,
            LOOPBACK.into(),
            |port| inside(server(port)),
            Transport::Tcp,
        )?;
        servers.push(s);
        ports.push(port);
    }
    let client = |i: u64| {
        let mut cmd = Command::new(program);
        cmd.args(argv(job, ports[i as usize]));
        inside(cmd)
    };
    let parse = |out: &super::process::Output| parse_output(&out.stdout);
    let each = run_at_once(
        TOOL,
        ports.len() as u64,
        &client,
        Duration::from_secs(job.seconds + 20),
        &parse,
    )?;
    drop(servers);
    combine(&each).ok_or_else(|| RefError::failed(TOOL, "no client ran"))
}

/// The clients' reports as one: the harmonic mean of their latencies (the mean of every round
/// trip), and how many there were.
pub fn combine(each: &[QperfResult]) -> Option<QperfResult> {
    let inverse: f64 = each.iter().map(|r| r.clients as f64 / r.latency_us).sum();
    let clients: u64 = each.iter().map(|r| r.clients).sum();
    (clients > 0 && inverse > 0.0).then(|| QperfResult {
        latency_us: clients as f64 / inverse,
        clients,
    })
}

/// What one latency test reports.
#[derive(Debug, Clone, PartialEq)]
pub struct QperfResult {
    /// qperf's one-way latency (half a round trip), µs; of several clients, their harmonic
    /// mean.
    pub latency_us: f64,
    /// The clients that ran at once.
    pub clients: u64,
}

/// Parses `qperf … tcp_lat` ("    latency  =  30.7 us"; qperf picks ns, us, ms or sec).
pub fn parse_output(text: &str) -> Result<QperfResult, String> {
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with("latency"))
        .ok_or_else(|| {
            let last = text.lines().map(str::trim).rfind(|l| !l.is_empty());
            format!(
                "no 'latency =' line in qperf's output (it ends: {:?})",
                last.unwrap_or("")
            )
        })?;
    let rest = line.split_once('=').map(|x| x.1).unwrap_or("").trim();
    let mut parts = rest.split_whitespace();
    let value: f64 = parts
        .next()
        .and_then(|v| v.parse().ok())
        .and_then(super::tool_number)
        .filter(|v| *v > 0.0)
        .ok_or_else(|| format!("qperf's latency is not a positive number: {line:?}"))?;
    let scale = match parts.next() {
        Some("ns") => 1e-3,
        Some("us") => 1.0,
        Some("ms") => 1e3,
        Some("sec") | Some("s") => 1e6,
        other => return Err(format!("qperf's latency has an unknown unit {other:?}")),
    };
    Ok(QperfResult {
        latency_us: value * scale,
        clients: 1,
    })
}

/// The version from `qperf --version` ("qperf 0.4.11").
pub fn parse_version(text: &str) -> Option<String> {
    super::version_after(text, "qperf")
}

/// The figure for `rec`: the round trip (twice qperf's one-way latency) in s, or round trips
/// per second.
pub fn figure(r: &QperfResult, rec: &ResultRecord) -> Result<f64, RefError> {
    let rtt_s = 2.0 * r.latency_us / 1e6;
    match (rec.metric, rec.unit) {
        (Metric::Latency, Unit::Seconds) => Ok(rtt_s),
        (Metric::Rate, Unit::TransPerSec) => Ok(r.clients as f64 / rtt_s),
        _ => Err(unit_error(TOOL, rec)),
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{fixture, record};
    use super::*;
    use serde_json::json;

    fn lat(metric: &str, unit: &str, protocol: &str, size: u64, streams: u32) -> ResultRecord {
        record(
            "net",
            "LATENCY",
            metric,
            unit,
            json!({
                "threads": streams, "streams": streams, "protocol": protocol,
                "message_size_bytes": size, "duration_s": 1.0, "omit_s": 0.1,
                "server": "127.0.0.1:5301", "side": "client"
            }),
            None,
        )
    }

    #[test]
    fn one_byte_points_and_the_command() {
        let ctx = RefContext::new("/tmp");
        let j = job(&lat("latency", "us", "TCP", 1, 1), &ctx)
            .unwrap()
            .unwrap();
        assert_eq!(
            argv(&j, 40000),
            [
                "127.0.0.1",
                "--listen_port",
                "40000",
                "--msg_size",
                "1",
                "--time",
                "1",
                "tcp_lat"
            ]
        );
        let u = job(&lat("rate", "trans/s", "UDP", 1, 1), &ctx)
            .unwrap()
            .unwrap();
        assert_eq!(argv(&u, 1).last().unwrap(), "udp_lat");
        assert_eq!(
            job(&lat("latency", "us", "TCP", 1, 2), &ctx)
                .unwrap()
                .unwrap()
                .streams,
            2
        );
        let mut remote = lat("latency", "us", "TCP", 1, 1);
        if let crate::results::params::Params::Net(p) = &mut remote.params {
            p.server = Some("192.0.2.1:5301".into());
        }
        assert!(job(&remote, &ctx).unwrap().is_err());
    }

    /// Two clients at 10 and 30 µs one way: every round trip's mean is their harmonic mean
    /// (the faster made three times as many), and the rates add up.
    #[test]
    fn clients_at_once_combine() {
        let one = |us| QperfResult {
            latency_us: us,
            clients: 1,
        };
        let c = combine(&[one(10.0), one(30.0)]).unwrap();
        assert_eq!(c.clients, 2);
        assert!((c.latency_us - 15.0).abs() < 1e-9, "{c:?}");
        let rate = figure(&c, &lat("rate", "trans/s", "TCP", 1, 2)).unwrap();
        assert!((rate - (1.0 / 20e-6 + 1.0 / 60e-6)).abs() < 1e-6, "{rate}");
        assert_eq!(combine(&[]), None);
    }

    #[test]
    fn parses_recorded_output_and_doubles_the_one_way_latency() {
        let r = parse_output(&fixture("qperf-tcp-lat.txt")).unwrap();
        assert_eq!(r.latency_us, 30.7);
        let l = figure(&r, &lat("latency", "us", "TCP", 1, 1)).unwrap();
        assert!((l - 61.4e-6).abs() < 1e-12, "{l}");
        let rate = figure(&r, &lat("rate", "trans/s", "TCP", 1, 1)).unwrap();
        assert!((rate - 1.0 / 61.4e-6).abs() < 1e-6);
        assert_eq!(
            parse_output("    latency = 2.5 ms\n").unwrap().latency_us,
            2500.0
        );
        assert!(parse_output("").is_err());
        assert!(parse_output("tcp_lat:\n    latency = -1 us\n").is_err());
        assert!(parse_output("tcp_lat:\n    latency = 3 parsecs\n").is_err());
        assert_eq!(parse_version("qperf 0.4.11\n"), Some("0.4.11".into()));
    }
}
