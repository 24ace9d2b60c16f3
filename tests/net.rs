//! Network tests: the server survives abuse (garbage, a 2 GB length prefix, silent and vanishing
//! clients, wrong tokens, out-of-order messages) and keeps serving; the CLI over loopback gives
//! every record; across a veth pair between two network namespaces (root and `ip` needed,
//! skipped with a printed reason otherwise). Every test is tiny and bounded in time.

mod common;

use assert_cmd::Command;
use common::net::{
    closed_by_server, params, raw, run_unless_busy, serves_again, start, still_serves,
};
use common::{Namespaces, run_ip};
use peakbench::bench::net::client::{self, NetError, Target};
use peakbench::bench::net::protocol::{self, Msg, PROTOCOL_VERSION, Proto, TestKind};
use peakbench::bench::net::transport::tcp_hello;
use serde_json::Value;
use std::io::Write;
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

#[test]
fn every_transport_and_workload_round_trips() {
    // Beside other tests, not beside a timed one.
    let _shared = common::share(false);
    let s = start(None);
    let t = Target {
        addr: s.addr,
        token: None,
    };
    for proto in [Proto::Tcp, Proto::Udp] {
        for reverse in [false, true] {
            let mut p = params(proto, TestKind::Throughput, 100);
            p.reverse = reverse;
            p.streams = 2;
            p.message_bytes = if proto == Proto::Udp { 1400 } else { 65536 };
            if proto == Proto::Udp {
                // 50 Mbit/s per stream: nothing should be lost on loopback.
                p.rate_bps = 50_000_000;
            }
            let o = client::run_test(&t, &p).unwrap();
            let (tx, rx) = if reverse {
                (&o.server, &o.client.stats)
            } else {
                (&o.client.stats, &o.server)
            };
            assert!(tx.bytes_sent > 0, "{proto:?} reverse={reverse}: {o:?}");
            assert!(rx.bytes_received > 0, "{proto:?} reverse={reverse}: {o:?}");
            if proto == Proto::Udp {
                assert!(rx.messages_received <= tx.messages_sent);
                assert!(
                    rx.messages_received as f64 >= 0.9 * tx.messages_sent as f64,
                    "{o:?}"
                );
            }
        }
        let o = client::run_test(&t, &params(proto, TestKind::Latency, 100)).unwrap();
        let rtt = o.client.rtt.unwrap();
        assert!(rtt.len() > 10);
        assert_eq!(o.server.messages_sent, o.server.messages_received);
        assert!(o.server.messages_sent >= rtt.len());
    }
}

#[test]
fn garbage_and_a_2gb_length_prefix_leave_the_server_serving() {
    // Beside other tests, not beside a timed one.
    let _shared = common::share(false);
    let s = start(None);
    let mut g = raw(s.addr);
    g.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
    assert!(closed_by_server(g));
    let mut big = raw(s.addr);
    big.write_all(&2_000_000_000u32.to_be_bytes()).unwrap();
    assert!(closed_by_server(big));
    let mut bad_json = raw(s.addr);
    bad_json.write_all(&5u32.to_be_bytes()).unwrap();
    bad_json.write_all(b"{\"a\":").unwrap();
    assert!(closed_by_server(bad_json));
    still_serves(&s);
}

#[test]
fn silent_and_trickling_clients_are_dropped_without_blocking_others() {
    // Beside other tests, not beside a timed one.
    let _shared = common::share(false);
    let s = start(None);
    let silent = raw(s.addr);
    // A client that sends one byte of a frame and then nothing.
    let mut trickle = raw(s.addr);
    trickle.write_all(&[0]).unwrap();
    // Others are served while they hang around…
    still_serves(&s);
    // …and both are dropped once the idle timeout (500 ms) has passed.
    let t0 = Instant::now();
    assert!(closed_by_server(silent));
    assert!(closed_by_server(trickle));
    assert!(t0.elapsed() < Duration::from_secs(3));
    still_serves(&s);
}

#[test]
fn out_of_order_and_oversized_requests_are_refused() {
    // Beside other tests, not beside a timed one.
    let _shared = common::share(false);
    let s = start(None);
    let mut c = raw(s.addr);
    protocol::send(&mut c, &Msg::Start).unwrap();
    match protocol::recv(&mut c).unwrap() {
        Msg::Error { message } => assert!(message.contains("unexpected start"), "{message}"),
        other => panic!("{other:?}"),
    }
    let t = Target {
        addr: s.addr,
        token: None,
    };
    let mut p = params(Proto::Tcp, TestKind::Throughput, 50);
    p.streams = 10_000;
    let e = client::run_test(&t, &p).unwrap_err();
    assert!(matches!(e, NetError::Refused(_)), "{e}");
    assert!(e.to_string().contains("streams"), "{e}");
    p.streams = 1;
    p.message_bytes = u32::MAX;
    assert!(client::run_test(&t, &p).is_err());
    let mut v = raw(s.addr);
    protocol::send(
        &mut v,
        &Msg::Hello {
            version: 99,
            nonce: String::new(),
        },
    )
    .unwrap();
    match protocol::recv(&mut v).unwrap() {
        Msg::Error { message } => assert!(message.contains("version 99"), "{message}"),
        other => panic!("{other:?}"),
    }
    still_serves(&s);
}

#[test]
fn a_client_that_vanishes_mid_test_frees_the_server() {
    // Beside other tests, not beside a timed one.
    let _shared = common::share(false);
    let s = start(None);
    let mut c = raw(s.addr);
    protocol::send(
        &mut c,
        &Msg::Hello {
            version: PROTOCOL_VERSION,
            nonce: String::new(),
        },
    )
    .unwrap();
    assert!(matches!(
        protocol::recv(&mut c).unwrap(),
        Msg::Welcome { .. }
    ));
    let p = params(Proto::Tcp, TestKind::Throughput, 60_000);
    protocol::send(&mut c, &Msg::Setup { params: p }).unwrap();
    let Msg::Ready { data_ports, cookie } = protocol::recv(&mut c).unwrap() else {
        panic!("no ready")
    };
    let mut data = TcpStream::connect(SocketAddr::new(s.addr.ip(), data_ports[0])).unwrap();
    data.write_all(&tcp_hello(cookie, 0)).unwrap();
    protocol::send(&mut c, &Msg::Connected).unwrap();
    assert!(matches!(protocol::recv(&mut c).unwrap(), Msg::Go));
    protocol::send(&mut c, &Msg::Start).unwrap();
    data.write_all(&[1u8; 65536]).unwrap();
    // While the test runs, a second client is told the server is busy.
    let t = Target {
        addr: s.addr,
        token: None,
    };
    let e = client::run_test(&t, &params(Proto::Tcp, TestKind::Throughput, 50)).unwrap_err();
    assert!(matches!(e, NetError::Busy(..)), "{e}");
    // The client dies: its sockets close. The 60 s test ends at once.
    drop(data);
    drop(c);
    serves_again(&t);
}

#[test]
fn a_client_process_killed_mid_test_leaves_the_server_serving() {
    // Beside other tests, not beside a timed one.
    let _shared = common::share(false);
    let s = start(None);
    for proto in ["tcp", "udp"] {
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_peakbench"))
            .env("PEAKBENCH_DB", common::test_db())
            .args(["net", "--server", &s.addr.to_string(), "--protocol", proto])
            .args(["--workload", "THROUGHPUT", "--duration", "60s"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // Its banner comes right before its first test; wait until the server is busy with it
        // (a client on a loaded machine may take a while to start: up to 40 tries 250 ms
        // apart), then kill it (SIGKILL: no goodbye of any kind).
        let stderr = child.stderr.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut reader = std::io::BufReader::new(stderr);
            let mut line = String::new();
            let _ = std::io::BufRead::read_line(&mut reader, &mut line);
            let _ = tx.send(line);
            // Read on to the end: the client's stderr stays open, as a terminal's would.
            let _ = std::io::copy(&mut reader, &mut std::io::sink());
        });
        let banner = rx.recv_timeout(Duration::from_secs(20)).unwrap();
        assert!(banner.contains("peakbench net: server"), "{banner}");
        let t = Target {
            addr: s.addr,
            token: None,
        };
        let busy = (0..40).any(|_| {
            std::thread::sleep(Duration::from_millis(250));
            matches!(
                client::run_test(&t, &params(Proto::Tcp, TestKind::Throughput, 20)),
                Err(NetError::Busy(..))
            )
        });
        assert!(busy, "{proto}: the client's test is running");
        child.kill().unwrap();
        child.wait().unwrap();
        serves_again(&t);
    }
}

#[test]
fn the_token_is_required_and_checked() {
    // Beside other tests, not beside a timed one.
    let _shared = common::share(false);
    let s = start(Some("s3cret"));
    let p = params(Proto::Tcp, TestKind::Throughput, 50);
    let none = Target {
        addr: s.addr,
        token: None,
    };
    assert!(matches!(
        client::run_test(&none, &p),
        Err(NetError::NeedsToken)
    ));
    let wrong = Target {
        addr: s.addr,
        token: Some("guess".into()),
    };
    let e = run_unless_busy(&wrong, &p).unwrap_err();
    assert!(e.to_string().contains("authentication failed"), "{e}");
    let right = Target {
        addr: s.addr,
        token: Some("s3cret".into()),
    };
    assert!(run_unless_busy(&right, &p).is_ok());
}

fn peakbench() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_peakbench"));
    c.env(common::MOCK_CLOCK.0, common::MOCK_CLOCK.1);
    c.env("PEAKBENCH_DB", common::test_db());
    c
}

#[test]
fn loopback_cli_reports_every_record_in_the_schema() {
    // Beside other tests, not beside a timed one.
    let _shared = common::share(false);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("net.json");
    peakbench()
        .args([
            "net",
            "--loopback",
            "--duration",
            "100ms",
            "--omit",
            "0",
            "--repeat",
            "2",
            "--message-size",
            "1K",
            "--quiet",
            "--json",
        ])
        .arg(&json)
        .timeout(Duration::from_secs(60))
        .assert()
        .success();
    let doc: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(common::schema_errors(&doc), Vec::<String>::new());
    let recs = doc["results"].as_array().unwrap();
    let find = |wl: &str, proto: &str, metric: &str, side: Option<&str>| {
        recs.iter()
            .find(|r| {
                r["workload"] == wl
                    && r["params"]["protocol"] == proto
                    && r["metric"] == metric
                    && side.is_none_or(|s| r["params"]["side"] == s)
            })
            .unwrap_or_else(|| panic!("no {wl} {proto} {metric} {side:?}"))
    };
    for proto in ["TCP", "UDP"] {
        for side in ["sender", "receiver"] {
            let r = find("THROUGHPUT", proto, "throughput", Some(side));
            assert_eq!(r["unit"], "bit/s");
            assert_eq!(r["samples"].as_array().unwrap().len(), 2);
            assert!(r["mean"].as_f64().unwrap() > 0.0, "{r}");
            assert_eq!(r["params"]["message_size_bytes"], 1024);
            // The client sends (no --reverse): its record has the per-interval goodput, 10 ms
            // intervals of 100 ms.
            let iv = &r["intervals"];
            if side == "sender" {
                assert_eq!(iv["interval_s"], 0.01, "{r}");
                let n = iv["values"].as_array().unwrap().len();
                assert!((5..=10).contains(&n), "{iv}");
            } else {
                assert!(iv.is_null(), "{iv}");
            }
            // The client's socket buffers, as the kernel reports them.
            for b in ["send_buffer_bytes", "receive_buffer_bytes"] {
                assert!(r["params"][b].as_u64().unwrap() >= 1024, "{b}: {r}");
            }
            assert!(
                r["peak_unknown_reason"]
                    .as_str()
                    .unwrap()
                    .contains("loopback")
            );
        }
        let lat = find("LATENCY", proto, "latency", None);
        assert_eq!(lat["unit"], "s");
        let p = &lat["percentiles"];
        for q in ["min", "p50", "p90", "p99", "p99.9", "p99.99", "max"] {
            assert!(p[q].as_f64().is_some_and(|v| v > 0.0), "{q}: {p}");
        }
        // Percentiles in the record's unit, seconds: a loopback round trip is far below 1 s,
        // and no repetition's mean is above the slowest round trip.
        let max = p["max"].as_f64().unwrap();
        assert!(max < 1.0, "{p}");
        assert!(lat["mean"].as_f64().unwrap() <= max * 1.001, "{lat}");
        assert!(p["p50"].as_f64().unwrap() > 0.0);
        assert!(p["p50"].as_f64() <= p["p99"].as_f64());
        assert!(p["p99"].as_f64() <= p["max"].as_f64());
        assert!(
            find("LATENCY", proto, "rate", None)["mean"]
                .as_f64()
                .unwrap()
                > 0.0
        );
    }
    let loss = find("THROUGHPUT", "UDP", "loss", None);
    assert_eq!(loss["unit"], "%");
    assert!(loss["params"]["datagrams_sent"].as_u64().unwrap() > 0);
    assert_eq!(find("THROUGHPUT", "UDP", "jitter", None)["unit"], "s");
}

/// LATENCY with several streams runs a ping-pong on each at once: every stream's own mean round
/// trip, the merged histogram of all of them, and each stream's round trips counted.
#[test]
fn latency_runs_one_ping_pong_per_stream() {
    // Beside other tests, not beside a timed one.
    let _shared = common::share(false);
    let s = start(None);
    let t = Target {
        addr: s.addr,
        token: None,
    };
    for proto in [Proto::Tcp, Proto::Udp] {
        let mut p = params(proto, TestKind::Latency, 200);
        p.streams = 3;
        let o = client::run_test(&t, &p).unwrap();
        assert_eq!(o.client.stream_rtt_ns.len(), 3, "{proto:?}: {o:?}");
        assert!(o.client.stream_rtt_ns.iter().all(|ns| *ns > 0.0));
        let rtt = o.client.rtt.unwrap();
        assert_eq!(rtt.len(), o.client.stats.messages_received, "{proto:?}");
        // The merged mean lies within the streams' means.
        let (lo, hi) = o
            .client
            .stream_rtt_ns
            .iter()
            .fold((f64::MAX, 0.0f64), |(l, h), v| (l.min(*v), h.max(*v)));
        assert!(
            rtt.mean() >= lo * 0.999 && rtt.mean() <= hi * 1.001,
            "{proto:?}"
        );
        assert_eq!(o.server.messages_sent, o.server.messages_received);
    }
    // From the command line: a point per stream count, each with its streams' round trips.
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("lat.json");
    Command::new(env!("CARGO_BIN_EXE_peakbench"))
        .env("PEAKBENCH_DB", common::test_db())
        .args([
            "net",
            "--loopback",
            "--workload",
            "LATENCY",
            "--protocol",
            "tcp",
        ])
        .args(["--streams", "1,2", "--duration", "200ms", "--omit", "50ms"])
        .args(["--repeat", "1", "--quiet", "--no-history", "--json"])
        .arg(&json)
        .timeout(Duration::from_secs(60))
        .assert()
        .success();
    let doc: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(common::schema_errors(&doc), Vec::<String>::new());
    for streams in [1u64, 2] {
        let r = doc["results"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["metric"] == "latency" && r["params"]["streams"] == streams)
            .unwrap_or_else(|| panic!("no latency point with {streams} streams"));
        let each = r["params"]["stream_rtt_us"].as_array().unwrap();
        assert_eq!(each.len() as u64, streams, "{r}");
        assert_eq!(r["params"]["threads"], streams);
    }
    let mut p = params(Proto::Tcp, TestKind::Latency, 100);
    p.reverse = true;
    assert!(p.validate().unwrap_err().contains("--reverse"));
}

#[test]
fn net_bad_input_is_one_line_and_exit_2() {
    // Beside other tests, not beside a timed one.
    let _shared = common::share(false);
    for (args, expected) in [
        (&["net", "--streams", "0"][..], "--streams"),
        (&["net", "--streams", "1000"], "--streams"),
        (&["net", "--message-size", "0"], "--message-size"),
        (&["net", "--message-size", "1T"], "--message-size"),
        (&["net", "--message-size", "100K"], "UDP"),
        (&["net", "--protocol", "sctp"], "--protocol"),
        (&["net", "--workload", "BANDWIDTH"], "THROUGHPUT"),
        (&["net", "--rate", "fast"], "--rate"),
        (&["net", "--protocol", "tcp", "--rate", "1G"], "UDP only"),
        (&["net", "--server", "localhost:99999"], "port"),
        (&["net", "--server", "x", "--loopback"], "--loopback"),
        (&["net", "serve", "--port", "70000"], "--port"),
        (&["net", "serve", "--bind", "nowhere"], "--bind"),
        (&["net", "--token", ""], "the token is empty"),
        (
            &["net", "serve", "--token-file", "/nonexistent/token"],
            "--token-file",
        ),
        (&["net", "--token-file", "/dev/zero"], "not a regular file"),
        (
            &["net", "--token", "a", "--token-file", "f"],
            "cannot be used with",
        ),
        (
            &["net", "--protocol", "udp", "--message-size", "8"],
            "out of range: 32",
        ),
    ] {
        common::one_line_exit_2(args, expected);
    }
}

#[test]
fn a_server_that_is_not_there_is_a_one_line_failure() {
    // Beside other tests, not beside a timed one.
    let _shared = common::share(false);
    // Port 1 on loopback: nothing listens there.
    let out = peakbench()
        .args([
            "net",
            "--server",
            "127.0.0.1:1",
            "--duration",
            "100ms",
            "--quiet",
        ])
        .timeout(Duration::from_secs(30))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("is `peakbench net serve` running"), "{err}");
}

/// `peakbench net serve` on 10.231.0.1 in the namespace `ns`, with `args` (and, without
/// `--token` in them, `--no-token`: only the test's namespaces reach it).
fn serve_in(ns: &str, args: &[&str]) -> std::process::Child {
    std::process::Command::new("ip")
        .args([
            "netns",
            "exec",
            ns,
            env!("CARGO_BIN_EXE_peakbench"),
            "net",
            "serve",
        ])
        .args(["--bind", "10.231.0.1"])
        .args(if args.contains(&"--token") {
            &[][..]
        } else {
            &["--no-token"]
        })
        .args(args)
        .env_remove("PEAKBENCH_TOKEN")
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap()
}

/// One veth pair at a time: they share their names and addresses.
static VETH: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Two network namespaces joined by a veth pair, 10.231.0.1 and .2, removed when dropped (and
/// the next test's pair made only then).
struct VethPair {
    ns: Namespaces,
    _one: std::sync::MutexGuard<'static, ()>,
}

impl std::ops::Deref for VethPair {
    type Target = Namespaces;
    fn deref(&self) -> &Namespaces {
        &self.ns
    }
}

fn veth_pair() -> Result<VethPair, String> {
    let one = VETH.lock().unwrap_or_else(|e| e.into_inner());
    let id = std::process::id() % 10_000;
    let ns = Namespaces::new(vec![format!("pbtest{id}a"), format!("pbtest{id}b")])?;
    let (a, b) = (&ns.names[0], &ns.names[1]);
    let veth = (format!("pb{id}a"), format!("pb{id}b"));
    run_ip(&[
        "link", "add", &veth.0, "netns", a, "type", "veth", "peer", "name", &veth.1, "netns", b,
    ])?;
    for (n, dev, addr) in [(a, &veth.0, "10.231.0.1/24"), (b, &veth.1, "10.231.0.2/24")] {
        run_ip(&["-n", n, "addr", "add", addr, "dev", dev])?;
        run_ip(&["-n", n, "link", "set", dev, "up"])?;
        run_ip(&["-n", n, "link", "set", "lo", "up"])?;
    }
    Ok(VethPair { ns, _one: one })
}

#[test]
fn across_a_veth_pair_between_two_namespaces() {
    // Beside other tests, not beside a timed one.
    let _shared = common::share(false);
    let ns = match veth_pair() {
        Ok(ns) => ns,
        Err(why) => {
            eprintln!("SKIPPED across_a_veth_pair_between_two_namespaces: {why}");
            return;
        }
    };
    let bin = env!("CARGO_BIN_EXE_peakbench");
    let mut server = serve_in(&ns.names[0], &["--idle-timeout", "2s"]);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("veth.json");
    // The server needs a moment to listen: retry a bounded number of times.
    let mut ok = false;
    for _ in 0..20 {
        let status = std::process::Command::new("ip")
            .env("PEAKBENCH_DB", common::test_db())
            .args(["netns", "exec", &ns.names[1], bin, "net"])
            .args([
                "--server",
                "10.231.0.1",
                "--duration",
                "200ms",
                "--omit",
                "0",
            ])
            .args(["--repeat", "1", "--streams", "2", "--quiet", "--json"])
            .arg(&json)
            .status()
            .unwrap();
        if status.success() {
            ok = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let _ = server.kill();
    let _ = server.wait();
    assert!(ok, "the client never completed across the veth pair");
    let doc: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let recs = doc["results"].as_array().unwrap();
    let tcp = recs
        .iter()
        .find(|r| {
            r["params"]["protocol"] == "TCP"
                && r["metric"] == "throughput"
                && r["params"]["side"] == "receiver"
        })
        .unwrap();
    assert!(tcp["mean"].as_f64().unwrap() > 0.0);
    assert!(
        tcp["params"]["interface"]
            .as_str()
            .unwrap()
            .starts_with("pb")
    );
    assert!(
        tcp["peak_unknown_reason"]
            .as_str()
            .unwrap()
            .contains("virtual"),
        "{tcp}"
    );
    assert_eq!(tcp["params"]["streams"], 2);
    // A remote server reports what the test cost it, checked by the client.
    let server_cpu = &tcp["params"]["server_cpu"];
    assert!(server_cpu["online_cpus"].as_u64().is_some(), "{tcp}");
    assert!(
        server_cpu["service_demand_us_per_kb"].as_f64().is_some(),
        "{tcp}"
    );
    drop(ns);
}

/// The pids in network namespace `ns` (`ip netns pids`).
fn pids_in(ns: &str) -> Vec<String> {
    let out = std::process::Command::new("ip")
        .args(["netns", "pids", ns])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .map(str::to_string)
        .collect()
}

/// Issue 29: `net serve --references` in one namespace, the client in another across a veth
/// pair: iperf3's and sockperf's figures for 1 and 2 streams are in the rows, measured against
/// servers the peakbench server started for each test and stopped after; a client without
/// the token gets no reference server.
#[test]
fn remote_references_across_a_veth_pair() {
    // Beside other tests, not beside a timed one.
    let _shared = common::share(false);
    let missing: Vec<&str> = ["iperf3", "sockperf"]
        .into_iter()
        .filter(|t| {
            std::process::Command::new(t)
                .arg("--version")
                .output()
                .is_err()
        })
        .collect();
    if !missing.is_empty() {
        eprintln!(
            "SKIPPED remote_references_across_a_veth_pair: {missing:?} not installed (apt-get install iperf3 sockperf)"
        );
        return;
    }
    let ns = match veth_pair() {
        Ok(ns) => ns,
        Err(why) => {
            eprintln!("SKIPPED remote_references_across_a_veth_pair: {why}");
            return;
        }
    };
    let bin = env!("CARGO_BIN_EXE_peakbench");
    let mut server = serve_in(
        &ns.names[0],
        &[
            "--idle-timeout",
            "5s",
            "--references",
            "--token",
            "shared-secret",
        ],
    );
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("refs.json");
    let client = |token: Option<&str>| {
        let mut cmd = std::process::Command::new("ip");
        cmd.env("PEAKBENCH_DB", common::test_db())
            .args(["netns", "exec", &ns.names[1], bin, "net"])
            .args(["--server", "10.231.0.1", "--workload", "THROUGHPUT,LATENCY"])
            .args(["--protocol", "tcp", "--streams", "1,2", "--duration", "1s"])
            .args(["--message-size", "64"])
            .args([
                "--omit",
                "0",
                "--repeat",
                "1",
                "--reference",
                "--quiet",
                "--json",
            ])
            .arg(&json);
        if let Some(t) = token {
            cmd.args(["--token", t]);
        }
        cmd.output().unwrap()
    };
    // The server needs a moment to listen: retry a bounded number of times.
    let mut out = client(Some("shared-secret"));
    for _ in 0..20 {
        if out.status.success() {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
        out = client(Some("shared-secret"));
    }
    let server_pid = server.id().to_string();
    let left: Vec<String> = pids_in(&ns.names[0])
        .into_iter()
        .filter(|p| *p != server_pid)
        .collect();
    let doc: Option<Value> = std::fs::read(&json)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok());
    // Without the token: refused before any test, and no tool's server started.
    let stranger = client(None);
    let after_stranger = pids_in(&ns.names[0]);
    let _ = server.kill();
    let _ = server.wait();
    drop(ns);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        left.is_empty(),
        "processes left in the server's namespace: {left:?}"
    );
    assert!(!stranger.status.success());
    assert_eq!(
        after_stranger,
        [server_pid],
        "a tool started for a client without the token"
    );
    let doc = doc.expect("the run wrote its JSON");
    let recs = doc["results"].as_array().unwrap();
    for (workload, metric, tool) in [
        ("THROUGHPUT", "throughput", "iperf3"),
        ("LATENCY", "latency", "sockperf"),
    ] {
        for streams in [1, 2] {
            let r = recs
                .iter()
                .find(|r| {
                    r["workload"] == workload
                        && r["metric"] == metric
                        && r["params"]["streams"] == streams
                })
                .unwrap_or_else(|| panic!("no {workload} {metric} row of {streams} streams"));
            let reference = &r["reference"];
            assert_eq!(reference["tool"], tool, "{r}");
            assert!(reference["mean"].as_f64().unwrap() > 0.0, "{r}");
            let command = reference["commands"].to_string();
            assert!(command.contains("10.231.0.1"), "{command}");
            // Run between the point's own tests, the server's tools started for each.
            assert_eq!(reference["interleaved"], true, "{r}");
        }
    }
}

/// Something that is not a peakbench server (here an HTTP-speaking listener on loopback) gets
/// a one-line error that says each thing once.
#[test]
fn a_foreign_server_is_one_clear_line() {
    // Beside other tests, not beside a timed one.
    let _shared = common::share(false);
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        if let Ok((mut s, _)) = listener.accept() {
            let _ = s.write_all(b"HTTP/1.1 400 Bad Request\r\n\r\n");
        }
    });
    let out = peakbench()
        .args(["net", "--server", &format!("127.0.0.1:{port}")])
        .args([
            "--workload",
            "LATENCY",
            "--protocol",
            "tcp",
            "--repeat",
            "1",
        ])
        .args([
            "--duration",
            "100ms",
            "--omit",
            "0",
            "--no-history",
            "--quiet",
        ])
        .timeout(Duration::from_secs(30))
        .assert()
        .failure();
    let err = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert_eq!(err.matches("exceeds").count(), 1, "said once: {err}");
}

/// A CPU-bound loopback stream: its records carry what it cost in CPU, at least 80 % of one CPU
/// of the machine busy (sender and receiver are both here), this process's own share, and the
/// service demand (µs of CPU per KB of goodput).
#[test]
fn a_loopback_stream_carries_its_cpu_cost() {
    // Beside other tests, not beside a timed one.
    let _shared = common::share(false);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("net.json");
    peakbench()
        .args([
            "net",
            "--loopback",
            "--protocol",
            "tcp",
            "--workload",
            "THROUGHPUT",
            "--duration",
            "300ms",
            "--omit",
            "0",
            "--repeat",
            "1",
            "--quiet",
            "--json",
        ])
        .arg(&json)
        .timeout(Duration::from_secs(60))
        .assert()
        .success();
    let doc: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let recs = doc["results"].as_array().unwrap();
    assert!(!recs.is_empty());
    for r in recs {
        let cpu = &r["params"]["cpu"];
        let f = |k: &str| cpu[k].as_f64().unwrap_or_else(|| panic!("no {k}: {cpu}"));
        let busy = f("user_cpus") + f("system_cpus") + f("irq_cpus") + f("softirq_cpus");
        assert!(busy >= 0.8, "{cpu}");
        assert!(busy <= cpu["online_cpus"].as_f64().unwrap() + 0.01, "{cpu}");
        // This process's share: both ends are its threads; other tests on these cores may
        // take part of the machine's busy time, so only its presence is asserted.
        assert!(
            f("process_user_cpus") + f("process_system_cpus") > 0.0,
            "{cpu}"
        );
        assert!(f("window_s") >= 0.25, "{cpu}");
        assert!(f("service_demand_us_per_kb") > 0.0, "{cpu}");
    }
}

/// Issue 32: over a veth pair whose two ends are each limited to 100 Mbit/s (tc tbf), `--bidir`
/// reports each way and their sum, and the sum is within 5 % of a one-way run plus a
/// `--reverse` run (each way has its own link, as on a full-duplex wire).
#[test]
fn both_ways_at_once_across_a_rate_limited_veth_pair() {
    // Timed: no other test of this binary runs beside it.
    let _alone = common::share(true);
    let ns = match veth_pair() {
        Ok(ns) => ns,
        Err(why) => {
            eprintln!("SKIPPED both_ways_at_once_across_a_rate_limited_veth_pair: {why}");
            return;
        }
    };
    let id = std::process::id() % 10_000;
    for (n, dev) in [
        (&ns.names[0], format!("pb{id}a")),
        (&ns.names[1], format!("pb{id}b")),
    ] {
        let ok = std::process::Command::new("ip")
            .args([
                "netns", "exec", n, "tc", "qdisc", "add", "dev", &dev, "root", "tbf",
            ])
            .args(["rate", "100mbit", "burst", "32kb", "latency", "20ms"])
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            eprintln!("SKIPPED both_ways_at_once_across_a_rate_limited_veth_pair: tc tbf failed");
            return;
        }
    }
    let bin = env!("CARGO_BIN_EXE_peakbench");
    let mut server = serve_in(&ns.names[0], &["--idle-timeout", "2s"]);
    let dir = tempfile::tempdir().unwrap();
    // Each run's receiver records: direction → Mbit/s (bounded retries while the server starts).
    let run = |extra: &[&str]| -> Vec<(String, f64)> {
        let json = dir.path().join("bidir.json");
        for _ in 0..20 {
            let status = std::process::Command::new("ip")
                .args([
                    "netns",
                    "exec",
                    &ns.names[1],
                    bin,
                    "net",
                    "--server",
                    "10.231.0.1",
                ])
                .args(["--workload", "THROUGHPUT", "--protocol", "tcp"])
                .args(["--duration", "1s", "--omit", "300ms", "--repeat", "1"])
                .args(["--quiet", "--no-history", "--json"])
                .arg(&json)
                .args(extra)
                .stderr(std::process::Stdio::null())
                .status()
                .unwrap();
            if status.success() {
                let doc: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
                return doc["results"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter(|r| r["metric"] == "throughput" && r["params"]["side"] == "receiver")
                    .map(|r| {
                        let d = r["params"]["direction"].as_str().unwrap().to_string();
                        (d, r["mean"].as_f64().unwrap() / 1e6)
                    })
                    .collect();
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!("the client never completed across the veth pair");
    };
    let one = run(&[]);
    let reverse = run(&["--reverse"]);
    let both = run(&["--bidir"]);
    let _ = server.kill();
    let _ = server.wait();
    let get = |v: &[(String, f64)], d: &str| {
        v.iter()
            .find(|(x, _)| x == d)
            .map(|(_, m)| *m)
            .unwrap_or_else(|| panic!("no {d}: {v:?}"))
    };
    let one = get(&one, "client to server");
    let reverse = get(&reverse, "server to client (--reverse)");
    let there = get(&both, "client to server, both ways at once (--bidir)");
    let back = get(&both, "server to client, both ways at once (--bidir)");
    let sum = get(&both, "both ways at once, summed (--bidir)");
    assert!(
        (sum - (there + back)).abs() < 0.01 * sum,
        "{sum} {there} {back}"
    );
    // About 100 Mbit/s less the headers each way, as the token bucket allows.
    for v in [one, reverse, there, back] {
        assert!(
            (80.0..=101.0).contains(&v),
            "{one} {reverse} {there} {back}"
        );
    }
    let ratio = sum / (one + reverse);
    assert!(
        (0.95..=1.05).contains(&ratio),
        "bidir {sum} against {one} + {reverse}"
    );
    drop(ns);
}

/// `--total-bytes` and `--count` are fixed work: each stream sends exactly its bytes (the last
/// write cut to fit; no warm-up) or makes exactly its round trips, and its window ends with
/// them, long before the bound; `--bidir` gives both ways' figures.
#[test]
fn fixed_amounts_are_exact_and_both_ways_are_reported() {
    // Beside other tests, not beside a timed one.
    let _shared = common::share(false);
    let s = common::net::start(None);
    let t = common::net::target_of(&s);
    let bytes = peakbench::bench::net::TestParams {
        streams: 2,
        duration_ms: 20_000,
        omit_ms: 0,
        amount_per_stream: 5_000_003,
        ..params(Proto::Tcp, TestKind::Throughput, 1)
    };
    let begun = Instant::now();
    let out = client::run_test(&t, &bytes).unwrap();
    assert_eq!(
        out.client.stats.bytes_sent, 10_000_006,
        "{:?}",
        out.client.stats
    );
    assert_eq!(out.server.bytes_received, 10_000_006, "{:?}", out.server);
    assert!(out.server.window_ns < 10_000_000_000, "{:?}", out.server);
    assert!(begun.elapsed() < Duration::from_secs(15));
    let trips = peakbench::bench::net::TestParams {
        duration_ms: 20_000,
        omit_ms: 0,
        amount_per_stream: 300,
        ..params(Proto::Udp, TestKind::Latency, 1)
    };
    let out = client::run_test(&t, &trips).unwrap();
    assert_eq!(
        out.client.stats.messages_sent, 300,
        "{:?}",
        out.client.stats
    );
    let both = peakbench::bench::net::TestParams {
        bidir: true,
        ..params(Proto::Udp, TestKind::Throughput, 200)
    };
    let out = client::run_test(&t, &both).unwrap();
    let (back_sent, back_received) = (
        out.server_second.expect("the server's way").bytes_sent,
        out.client_second
            .expect("the client's way")
            .stats
            .bytes_received,
    );
    assert!(out.client.stats.bytes_sent > 0 && out.server.bytes_received > 0);
    assert!(
        back_sent > 0 && back_received > 0,
        "{back_sent} {back_received}"
    );
    assert_eq!(
        out.client.stats.bytes_received, 0,
        "the first half only sends"
    );
}

/// CONNECT over loopback: connections per second, the time of a whole connection and of its
/// connect (the connect the shorter), nothing lost, each stream's own mean; a client's own
/// connections only (the server counts as many as the client made).
#[test]
fn connect_opens_requests_and_closes_connections() {
    // Beside other tests, not beside a timed one.
    let _shared = common::share(false);
    let s = common::net::start(None);
    let t = common::net::target_of(&s);
    let p = peakbench::bench::net::TestParams {
        kind: TestKind::Connect,
        streams: 2,
        message_bytes: 100,
        omit_ms: 50,
        ..params(Proto::Tcp, TestKind::Connect, 400)
    };
    let out = client::run_test(&t, &p).unwrap();
    let st = &out.client.stats;
    assert!(st.messages_received > 20, "{st:?}");
    assert_eq!(st.lost, 0, "{st:?}");
    assert_eq!(st.bytes_received, 100 * st.messages_received);
    let (whole, connect) = (out.client.rtt.unwrap(), out.client.connect.unwrap());
    assert_eq!(whole.len(), st.messages_received);
    assert!(
        connect.mean() < whole.mean(),
        "{} {}",
        connect.mean(),
        whole.mean()
    );
    assert_eq!(out.client.stream_rtt_ns.len(), 2);
    // The server answered every connection the client made, warm-up ones too.
    assert!(
        out.server.messages_received >= st.messages_received,
        "{:?}",
        out.server
    );
    // Paced: at most the asked rate.
    let paced = peakbench::bench::net::TestParams {
        mps: 200,
        streams: 1,
        omit_ms: 0,
        ..p
    };
    let out = client::run_test(&t, &paced).unwrap();
    let rate = out.client.stats.messages_received as f64 / 0.4;
    assert!((100.0..=215.0).contains(&rate), "{rate} connections/s");
}

/// LATENCY under load over loopback: the ping-pong and a bulk stream in one test, the bulk
/// stream's goodput counted by the server, the pings answered.
#[test]
fn a_ping_pong_runs_under_load() {
    // Beside other tests, not beside a timed one.
    let _shared = common::share(false);
    let s = common::net::start(None);
    let t = common::net::target_of(&s);
    let p = peakbench::bench::net::TestParams {
        load_streams: 1,
        omit_ms: 50,
        ..params(Proto::Tcp, TestKind::Latency, 300)
    };
    let out = client::run_test(&t, &p).unwrap();
    assert!(
        out.client.stats.messages_received > 10,
        "{:?}",
        out.client.stats
    );
    let load = out.server_second.expect("the bulk stream's figures");
    assert!(load.bytes_received > 1 << 20, "{load:?}");
    assert!(out.client_second.unwrap().stats.bytes_sent > 0);
}

/// Over loopback, UDP receivers do not busy-poll where both ends' threads outnumber the CPUs
/// (spinning receivers starve the paced senders), unless `--busy-poll` says so; the record says
/// what ran.
#[test]
fn loopback_udp_receivers_poll_only_where_the_cpus_suffice() {
    let _shared = common::share(false);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("udp.json");
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    for (extra, asked) in [(&[][..], false), (&["--busy-poll", "50us"][..], true)] {
        peakbench()
            .args([
                "net",
                "--workload",
                "THROUGHPUT",
                "--protocol",
                "udp",
                "--streams",
                "2",
            ])
            .args([
                "--duration",
                "100ms",
                "--omit",
                "0",
                "--repeat",
                "1",
                "--quiet",
                "--json",
            ])
            .arg(&json)
            .args(extra)
            .timeout(Duration::from_secs(60))
            .assert()
            .success();
        let doc: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
        let poll = doc["results"][0]["params"]["busy_poll_us"]
            .as_u64()
            .unwrap();
        let expected = if !asked && 2 * 2 > cpus { 0 } else { 50 };
        assert_eq!(poll, expected, "{extra:?} on {cpus} CPUs");
    }
}
