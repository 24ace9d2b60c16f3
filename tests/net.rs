//! `peakbench net` over loopback: every record in the schema, LATENCY's ping-pongs (per stream,
//! under load), CONNECT, fixed amounts, each stream's CPU cost, UDP receivers' polling; bad
//! input, a server that is not there and a foreign one, each one line. Every test is tiny and
//! bounded in time.

mod common;

use assert_cmd::Command;
use common::net::{params, start};
use common::peakbench;
use peakbench::bench::net::Proto;
use peakbench::bench::net::client;
use peakbench::wire::client::Target;
use peakbench::wire::net_test::TestKind;
use serde_json::Value;
use std::io::Write;
use std::time::{Duration, Instant};

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
