//! The network server under attack on its data path (issue 16, items 7, 8 and 12; issue 32; security review, row 13): a
//! client that never reads or sends past its window, crowds of silent or unauthenticated
//! connections and connection floods, strangers that try to claim or feed a test's data streams,
//! absurd socket options, amounts and rates, stream indexes out of range, and a server that lies
//! about itself. Everything on 127.0.0.1, every wait bounded.

mod common;

use common::net::{
    go, hello, params, raw, serves_again, set_up, start, start_with, target, welcomed,
};
use peakbench::bench::net::Proto;
use peakbench::bench::net::client;
use peakbench::bench::net::server::ServerConfig;
use peakbench::bench::net::streams::{HEADER_BYTES, MAGIC, MEASURED};
use peakbench::bench::net::transport::{UDP_HELLO, tcp_hello};
use peakbench::results::socket::{CcName, SocketOptions};
use peakbench::wire::client::NetError;
use peakbench::wire::net_test::{TestKind, TestParams};
use peakbench::wire::protocol::{self, Msg, PROTOCOL_VERSION};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::time::{Duration, Instant};

/// Item 7: a client that sets up a reverse TCP test (or 16 MiB pings) and then never reads
/// anything must not hold the server: its test ends with its window, and the next client is
/// served.
#[test]
fn a_client_that_never_reads_does_not_block_the_server() {
    let s = start(None);
    for kind in [TestKind::Throughput, TestKind::Latency] {
        let mut c = welcomed(s.addr);
        let mut p = params(Proto::Tcp, kind, 300);
        p.message_bytes = 16 << 20;
        p.reverse = kind == TestKind::Throughput;
        let (ports, cookie) = set_up(&mut c, p);
        let mut data = TcpStream::connect(SocketAddr::new(s.addr.ip(), ports[0])).unwrap();
        data.write_all(&tcp_hello(cookie, 0)).unwrap();
        go(&mut c);
        // A ping the echo will try to return to a client that does not read.
        let ping = if kind == TestKind::Latency {
            let mut d = data.try_clone().unwrap();
            Some(std::thread::spawn(move || {
                let _ = d.write_all(&vec![3u8; 16 << 20]);
            }))
        } else {
            None
        };
        // Neither the data nor the control connection is read or closed while the next
        // client is served.
        serves_again(&target(s.addr, None));
        drop(data);
        drop(c);
        if let Some(t) = ping {
            t.join().unwrap();
        }
    }
}

/// Item 8: dozens of connections that stay silent, or that say hello and never prove the
/// token, neither take the test slot nor keep a real client out: it is served at once, with or
/// without a token.
#[test]
fn silent_and_unauthenticated_crowds_do_not_keep_a_client_out() {
    for token in [Some("s3cret"), None] {
        let s = start_with(ServerConfig {
            token: token.map(str::to_string),
            log: false,
            ..Default::default()
        });
        let mut crowd: Vec<TcpStream> = (0..40).map(|_| raw(s.addr)).collect();
        if token.is_some() {
            crowd.extend((0..10).map(|_| hello(s.addr)));
        }
        // Give the server the time to accept them all.
        std::thread::sleep(Duration::from_millis(200));
        let t0 = Instant::now();
        let out = client::run_test(
            &target(s.addr, token),
            &params(Proto::Tcp, TestKind::Throughput, 50),
        );
        assert!(out.is_ok(), "token {token:?}: {:?}", out.err());
        assert!(t0.elapsed() < Duration::from_secs(3), "{:?}", t0.elapsed());
        drop(crowd);
    }
}

/// A UDP data datagram of the test with `cookie`, sequence number `seq`, flagged as measured.
fn datagram(seq: u64, cookie: u64) -> Vec<u8> {
    let mut d = vec![0u8; 1400];
    d[0..8].copy_from_slice(&seq.to_be_bytes());
    d[16..20].copy_from_slice(&MEASURED.to_be_bytes());
    d[20..24].copy_from_slice(&MAGIC.to_be_bytes());
    d[24..HEADER_BYTES].copy_from_slice(&cookie.to_be_bytes());
    d
}

fn results(c: &mut TcpStream) -> peakbench::wire::net_test::SideStats {
    protocol::send(
        c,
        &Msg::Done {
            stats: Default::default(),
            second: None,
        },
    )
    .unwrap();
    match protocol::recv(c).unwrap() {
        Msg::Results { stats, .. } => stats,
        other => panic!("{other:?}"),
    }
}

/// Item 12: a stranger on the same address that knows the data ports but not the test's cookie
/// can neither claim a stream (a hello before the client's) nor feed one (well-formed
/// datagrams, or a TCP connection of its own): the server counts exactly what the client sent.
#[test]
fn strangers_can_neither_claim_nor_feed_a_tests_streams() {
    let s = start(None);
    // UDP.
    let mut c = welcomed(s.addr);
    let p = TestParams {
        message_bytes: 1400,
        ..params(Proto::Udp, TestKind::Throughput, 300)
    };
    let (ports, cookie) = set_up(&mut c, p);
    let to = SocketAddr::new(s.addr.ip(), ports[0]);
    let stranger = UdpSocket::bind("127.0.0.1:0").unwrap();
    stranger.send_to(UDP_HELLO, to).unwrap();
    let mut forged_hello = UDP_HELLO.to_vec();
    forged_hello.extend_from_slice(&(cookie ^ 1).to_be_bytes());
    stranger.send_to(&forged_hello, to).unwrap();
    std::thread::sleep(Duration::from_millis(50));
    let client = UdpSocket::bind("127.0.0.1:0").unwrap();
    client.connect(to).unwrap();
    let mut hello = UDP_HELLO.to_vec();
    hello.extend_from_slice(&cookie.to_be_bytes());
    client.send(&hello).unwrap();
    go(&mut c);
    for seq in 0..100 {
        stranger.send_to(&datagram(seq, cookie ^ 1), to).unwrap();
        if seq < 10 {
            client.send(&datagram(seq, cookie)).unwrap();
        }
    }
    let server = results(&mut c);
    assert_eq!(server.messages_received, 10, "{server:?}");
    // TCP: a stranger connects first, without the cookie.
    let mut c = welcomed(s.addr);
    let (ports, cookie) = set_up(&mut c, params(Proto::Tcp, TestKind::Throughput, 300));
    let to = SocketAddr::new(s.addr.ip(), ports[0]);
    let mut stranger = TcpStream::connect(to).unwrap();
    stranger.write_all(&tcp_hello(0, 0)).unwrap();
    let mut data = TcpStream::connect(to).unwrap();
    data.write_all(&tcp_hello(cookie, 0)).unwrap();
    go(&mut c);
    let _ = stranger.write_all(&[9u8; 1 << 20]);
    data.write_all(&[1u8; 100_000]).unwrap();
    data.shutdown(std::net::Shutdown::Write).unwrap();
    let server = results(&mut c);
    assert_eq!(server.bytes_received, 100_000, "{server:?}");
}

/// Issue 32, item 7: what a client may ask of sockets, amounts and pacing is bounded by the
/// server (an absurd window, MSS, amount, rate or stream count is refused in one message), a
/// congestion control the server's kernel lacks is refused by name, a name that could be
/// anything else is a malformed message, and the server serves the next client.
#[test]
fn absurd_socket_options_amounts_and_rates_are_refused_and_the_server_stays_up() {
    let s = start(None);
    let tcp = params(Proto::Tcp, TestKind::Throughput, 100);
    let ping = params(Proto::Tcp, TestKind::Latency, 100);
    let socket = |o: SocketOptions| TestParams { socket: o, ..tcp };
    for p in [
        socket(SocketOptions {
            window_bytes: Some(u32::MAX),
            ..Default::default()
        }),
        socket(SocketOptions {
            mss_bytes: Some(1 << 20),
            ..Default::default()
        }),
        TestParams {
            amount_per_stream: u64::MAX,
            ..tcp
        },
        TestParams {
            mps: u32::MAX,
            ..ping
        },
        TestParams {
            amount_per_stream: u64::MAX,
            ..ping
        },
        TestParams {
            streams: 100,
            bidir: true,
            ..tcp
        },
        TestParams {
            load_streams: 1000,
            ..ping
        },
        TestParams {
            load_streams: 1,
            ..tcp
        },
    ] {
        let mut c = welcomed(s.addr);
        protocol::send(&mut c, &Msg::Setup { params: p }).unwrap();
        match protocol::recv(&mut c) {
            Ok(Msg::Error { message }) => {
                assert!(message.contains("refused parameters"), "{message}")
            }
            other => panic!("{p:?}: {other:?}"),
        }
    }
    // A congestion control this kernel has not got: refused with the kernel's list.
    let p = socket(SocketOptions {
        congestion: Some(CcName::new("no_such_cc").unwrap()),
        ..Default::default()
    });
    match client::run_test(&target(s.addr, None), &p) {
        Err(NetError::Refused(m)) => {
            assert!(m.contains("no congestion control 'no_such_cc'"), "{m}")
        }
        other => panic!("{other:?}"),
    }
    // A name that is not one (a path, a terminal's escape): a malformed message.
    for name in ["../../etc/passwd", "\u{1b}[2Jcubic"] {
        let mut c = welcomed(s.addr);
        let setup = serde_json::json!({"type": "setup", "params": {
            "kind": "throughput", "proto": "tcp", "streams": 1, "message_bytes": 1024,
            "duration_ms": 100, "omit_ms": 0, "reverse": false, "rate_bps": 0,
            "busy_poll_us": 0, "socket": {"congestion": name}}});
        peakbench::wire::frame::write_raw(&mut c, setup.to_string().as_bytes()).unwrap();
        match protocol::recv(&mut c) {
            Ok(Msg::Error { message }) => {
                assert!(message.contains("malformed"), "{message}");
                assert!(!message.contains('\u{1b}'), "{message}");
            }
            other => panic!("{name}: {other:?}"),
        }
    }
    serves_again(&target(s.addr, None));
}

/// A TCP data connection with the test's cookie but an index out of range, or one already
/// taken, joins nothing: the test counts exactly what its own streams sent.
#[test]
fn stream_indexes_out_of_range_or_taken_twice_join_nothing() {
    let s = start(None);
    let mut c = welcomed(s.addr);
    let p = TestParams {
        streams: 2,
        ..params(Proto::Tcp, TestKind::Throughput, 300)
    };
    let (ports, cookie) = set_up(&mut c, p);
    let to = SocketAddr::new(s.addr.ip(), ports[0]);
    let mut far = TcpStream::connect(to).unwrap();
    far.write_all(&tcp_hello(cookie, u32::MAX)).unwrap();
    let mut first = TcpStream::connect(to).unwrap();
    first.write_all(&tcp_hello(cookie, 0)).unwrap();
    let mut twice = TcpStream::connect(to).unwrap();
    twice.write_all(&tcp_hello(cookie, 0)).unwrap();
    let mut second = TcpStream::connect(to).unwrap();
    second.write_all(&tcp_hello(cookie, 1)).unwrap();
    go(&mut c);
    let _ = twice.write_all(&[9u8; 1 << 16]);
    let _ = far.write_all(&[9u8; 1 << 16]);
    for (d, n) in [(&mut first, 50_000), (&mut second, 30_000)] {
        d.write_all(&vec![1u8; n]).unwrap();
        d.shutdown(std::net::Shutdown::Write).unwrap();
    }
    let server = results(&mut c);
    assert_eq!(server.bytes_received, 80_000, "{server:?}");
    serves_again(&target(s.addr, None));
}

/// A server that claims CPU figures no machine can have, socket figures no kernel gives, or
/// to have received at a rate no link carries (1.5×10²⁹ bit/s: every byte a u64 holds in one
/// nanosecond) is refused by the client: its word is checked like any peer's.
#[test]
fn a_server_that_lies_about_its_cpu_sockets_or_rate_is_refused() {
    let lies = [
        (
            Some(
                serde_json::json!({"window_s": 1.0, "process_user_cpus": 1e12,
                "process_system_cpus": 0.0, "user_cpus": null, "system_cpus": null,
                "irq_cpus": null, "softirq_cpus": null, "online_cpus": 2}),
            ),
            None,
            None,
            "impossible CPU figures",
        ),
        (
            None,
            Some(serde_json::json!({"receive_buffer_bytes": u64::MAX})),
            None,
            "impossible socket figures",
        ),
        // What TCP_INFO says of a client's own connection, out of every bound.
        (
            None,
            Some(serde_json::json!({"rtt_us": -1.0})),
            None,
            "impossible socket figures: a round trip that is negative",
        ),
        (
            None,
            Some(serde_json::json!({"window_limited": 7.5})),
            None,
            "impossible socket figures: a share of the time outside 0 to 1",
        ),
        (
            None,
            Some(serde_json::json!({"peer_window_bytes": u64::MAX})),
            None,
            "impossible socket figures: a window above 1 TiB",
        ),
        (
            None,
            None,
            Some(serde_json::json!({"bytes_sent": 0, "bytes_received": u64::MAX, "window_ns": 1})),
            "impossible figures for its side: 18446744073709551615 bytes received",
        ),
    ];
    for (cpu, socket, side, what) in lies {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        let server = std::thread::spawn(move || -> Option<()> {
            let (mut s, _) = l.accept().ok()?;
            s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
            let Msg::Hello { .. } = protocol::recv(&mut s).ok()? else {
                return None;
            };
            let welcome = Msg::Welcome {
                version: PROTOCOL_VERSION,
                proof: None,
            };
            protocol::send(&mut s, &welcome).ok()?;
            let Msg::Setup { .. } = protocol::recv(&mut s).ok()? else {
                return None;
            };
            let data = TcpListener::bind("127.0.0.1:0").ok()?;
            let ready = Msg::Ready {
                data_ports: vec![data.local_addr().ok()?.port()],
                cookie: 7,
            };
            protocol::send(&mut s, &ready).ok()?;
            let (mut d, _) = data.accept().ok()?;
            let Msg::Connected = protocol::recv(&mut s).ok()? else {
                return None;
            };
            protocol::send(&mut s, &Msg::Go).ok()?;
            let Msg::Start = protocol::recv(&mut s).ok()? else {
                return None;
            };
            // Drain the data until the client is done.
            d.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
            let mut buf = vec![0u8; 1 << 16];
            while d.read(&mut buf).ok()? > 0 {}
            let Msg::Done { stats, .. } = protocol::recv(&mut s).ok()? else {
                return None;
            };
            // The client's own figures as the server's, but for what the lie changes.
            let mut stats = serde_json::to_value(stats).ok()?;
            for (k, v) in side
                .iter()
                .flat_map(|s| s.as_object().into_iter().flatten())
            {
                stats[k] = v.clone();
            }
            let results = serde_json::json!({"type": "results",
                "stats": stats, "cpu": cpu, "socket": socket});
            peakbench::wire::frame::write_raw(&mut s, results.to_string().as_bytes()).ok()
        });
        let got = client::run_test(
            &target(addr, None),
            &params(Proto::Tcp, TestKind::Throughput, 100),
        );
        match got {
            Err(NetError::Refused(m)) => assert!(m.contains(what), "{m}"),
            other => panic!("{what}: {other:?}"),
        }
        server
            .join()
            .unwrap()
            .expect("the fake server's conversation");
    }
}

/// CONNECT: a client asking for a million connections per second is refused; one that floods
/// the test's port with connections that never show the cookie, or never send, does not stop
/// the test's own connections, and the server serves the next client.
#[test]
fn connection_floods_and_absurd_rates_are_bounded() {
    let s = start(None);
    let connect = TestParams {
        message_bytes: 1,
        ..params(Proto::Tcp, TestKind::Connect, 300)
    };
    let mut c = welcomed(s.addr);
    let p = TestParams {
        mps: 1_000_000,
        ..connect
    };
    protocol::send(&mut c, &Msg::Setup { params: p }).unwrap();
    match protocol::recv(&mut c) {
        Ok(Msg::Error { message }) => {
            assert!(message.contains("connections per second"), "{message}")
        }
        other => panic!("{other:?}"),
    }
    // Strangers on the test's port: silent ones, and ones with a wrong cookie.
    let mut c = welcomed(s.addr);
    let (ports, cookie) = set_up(&mut c, connect);
    let to = SocketAddr::new(s.addr.ip(), ports[0]);
    go(&mut c);
    let silent: Vec<TcpStream> = (0..20)
        .filter_map(|_| TcpStream::connect(to).ok())
        .collect();
    for _ in 0..50 {
        if let Ok(mut x) = TcpStream::connect(to) {
            let _ = x.write_all(&tcp_hello(cookie ^ 1, 0));
            let _ = x.write_all(&[1]);
        }
    }
    // The test's own connection is still answered.
    let mut own = TcpStream::connect(to).unwrap();
    own.set_read_timeout(Some(Duration::from_secs(3))).unwrap();
    own.write_all(&tcp_hello(cookie, 0)).unwrap();
    own.write_all(&[7]).unwrap();
    let mut reply = [0u8; 1];
    own.read_exact(&mut reply).unwrap();
    assert_eq!(reply, [7]);
    let server = results(&mut c);
    assert!(server.messages_received >= 1, "{server:?}");
    drop(silent);
    serves_again(&target(s.addr, None));
}

/// A client that goes on sending after its window and never says it is done (a bulk stream,
/// or pings it reads the echoes of) does not hold the server: the test ends at its deadline and
/// the next client is served while the flood goes on.
#[test]
fn a_client_that_sends_past_its_window_does_not_hold_the_server() {
    let s = start(None);
    for kind in [TestKind::Throughput, TestKind::Latency] {
        let mut c = welcomed(s.addr);
        let (ports, cookie) = set_up(&mut c, params(Proto::Tcp, kind, 200));
        let mut data = TcpStream::connect(SocketAddr::new(s.addr.ip(), ports[0])).unwrap();
        data.write_all(&tcp_hello(cookie, 0)).unwrap();
        go(&mut c);
        let flooding = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
        let on = flooding.clone();
        let flood = std::thread::spawn(move || {
            data.set_write_timeout(Some(Duration::from_millis(200)))
                .unwrap();
            data.set_read_timeout(Some(Duration::from_millis(1)))
                .unwrap();
            let message = vec![
                5u8;
                if kind == TestKind::Latency {
                    64
                } else {
                    16 << 10
                }
            ];
            let mut echo = [0u8; 4096];
            let until = Instant::now() + Duration::from_secs(8);
            while on.load(std::sync::atomic::Ordering::Relaxed) && Instant::now() < until {
                if data.write_all(&message).is_err() {
                    break;
                }
                let _ = data.read(&mut echo);
            }
        });
        // The control connection stays open and silent: no Done.
        serves_again(&target(s.addr, None));
        flooding.store(false, std::sync::atomic::Ordering::Relaxed);
        flood.join().unwrap();
        drop(c);
    }
}
