//! The network server in a thread on 127.0.0.1: every transport and workload round-trips, and
//! it survives abuse (garbage, a 2 GB length prefix, silent and vanishing clients, a client
//! process killed, wrong tokens, out-of-order messages) and keeps serving. Every test is tiny
//! and bounded in time.

mod common;

use common::net::{
    closed_by_server, params, raw, run_unless_busy, serves_again, start, still_serves,
};
use peakbench::bench::net::Proto;
use peakbench::bench::net::client;
use peakbench::bench::net::transport::tcp_hello;
use peakbench::wire::client::{NetError, Target};
use peakbench::wire::net_test::TestKind;
use peakbench::wire::protocol::{self, Msg, PROTOCOL_VERSION};
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
                // Whole datagrams, no more than were sent (how many a loaded host drops on
                // loopback is its business: a receiver stalled 30 ms loses a tenth).
                assert!(rx.messages_received <= tx.messages_sent, "{o:?}");
                assert_eq!(rx.bytes_received, rx.messages_received * 1400, "{o:?}");
                assert_eq!(tx.bytes_sent, tx.messages_sent * 1400, "{o:?}");
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
