//! The network server under attack (issue 16, items 7, 8, 9 and 12): a client that never reads,
//! crowds of silent or unauthenticated connections, a server that cannot prove the token,
//! strangers that try to claim or feed a test's data streams, and requests for reference tools'
//! servers (issue 29) without the token or out of bounds; absurd socket options, amounts and
//! rates, stream indexes out of range and a server that lies about itself (issue 32); tools'
//! servers only with a token (or on loopback), 128 at most for a whole server, none outliving
//! it, and a server's impossible rates refused (security review, rows 2, 3 and 13).
//! Everything on 127.0.0.1, every wait bounded.

mod common;

use common::net::{params, raw, serves_again, start, start_with};
use peakbench::bench::net::auth::{self, Speaker, Transcript};
use peakbench::bench::net::client::{self, NetError, Target};
use peakbench::bench::net::protocol::{
    self, AUTH_PROTOCOL, Msg, PROTOCOL_VERSION, Proto, RefTool, TestKind, TestParams, ToolRequest,
};
use peakbench::bench::net::server::{ServerConfig, ToolServers};
use peakbench::bench::net::streams::{HEADER_BYTES, MAGIC, MEASURED};
use peakbench::bench::net::transport::{UDP_HELLO, tcp_hello};
use peakbench::results::socket::{CcName, SocketOptions};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::time::{Duration, Instant};

/// A raw connection that has said hello (with a fresh nonce).
fn hello(addr: SocketAddr) -> TcpStream {
    let mut c = raw(addr);
    protocol::send(
        &mut c,
        &Msg::Hello {
            version: PROTOCOL_VERSION,
            nonce: auth::new_nonce().unwrap(),
        },
    )
    .unwrap();
    c
}

/// Hello to Welcome on a raw connection to a server without a token.
fn welcomed(addr: SocketAddr) -> TcpStream {
    let mut c = hello(addr);
    assert!(matches!(
        protocol::recv(&mut c).unwrap(),
        Msg::Welcome { .. }
    ));
    c
}

/// Setup to Ready: the data ports and the test's cookie.
fn set_up(c: &mut TcpStream, p: TestParams) -> (Vec<u16>, u64) {
    protocol::send(c, &Msg::Setup { params: p }).unwrap();
    match protocol::recv(c).unwrap() {
        Msg::Ready { data_ports, cookie } => (data_ports, cookie),
        other => panic!("{other:?}"),
    }
}

fn go(c: &mut TcpStream) {
    protocol::send(c, &Msg::Connected).unwrap();
    assert!(matches!(protocol::recv(c).unwrap(), Msg::Go));
    protocol::send(c, &Msg::Start).unwrap();
}

fn target(addr: SocketAddr, token: Option<&str>) -> Target {
    Target {
        addr,
        token: token.map(str::to_string),
    }
}

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

/// A fake server on 127.0.0.1 that speaks the protocol but does not know the token: it
/// challenges (or not) and then welcomes without a valid proof. Returns its address and what
/// it received after its welcome.
fn fake_server(challenge: bool) -> (SocketAddr, std::thread::JoinHandle<Option<Msg>>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    let t = std::thread::spawn(move || {
        let (mut s, _) = l.accept().ok()?;
        s.set_read_timeout(Some(Duration::from_secs(3))).ok()?;
        let Msg::Hello { .. } = protocol::recv(&mut s).ok()? else {
            return None;
        };
        if challenge {
            let nonce = auth::new_nonce().ok()?;
            protocol::send(&mut s, &Msg::Challenge { nonce }).ok()?;
            let Msg::Auth { .. } = protocol::recv(&mut s).ok()? else {
                return None;
            };
        }
        let proof = challenge.then(|| "00".repeat(32));
        protocol::send(
            &mut s,
            &Msg::Welcome {
                version: PROTOCOL_VERSION,
                proof,
            },
        )
        .ok()?;
        protocol::recv(&mut s).ok()
    });
    (addr, t)
}

/// Item 9: the handshake is mutual: a client with a token goes no further with a server that
/// cannot prove it knows the token (it sends no `Setup`), and a proof is good for one
/// connection only.
#[test]
fn the_token_handshake_is_mutual_and_bound_to_its_connection() {
    for challenge in [true, false] {
        let (addr, fake) = fake_server(challenge);
        let e = client::run_test(
            &target(addr, Some("s3cret")),
            &params(Proto::Tcp, TestKind::Throughput, 50),
        )
        .unwrap_err();
        assert!(
            matches!(e, NetError::ServerNotAuthenticated(_)),
            "challenge {challenge}: {e}"
        );
        assert!(e.to_string().contains("did not prove"), "{e}");
        let after = fake.join().unwrap();
        assert!(
            !matches!(after, Some(Msg::Setup { .. })),
            "the client set a test up: {after:?}"
        );
    }
    // A proof made for one connection's nonces is refused on another.
    let s = start(Some("s3cret"));
    let nonce = auth::new_nonce().unwrap();
    let challenge = |c: &mut TcpStream| {
        protocol::send(
            c,
            &Msg::Hello {
                version: PROTOCOL_VERSION,
                nonce: nonce.clone(),
            },
        )
        .unwrap();
        match protocol::recv(c).unwrap() {
            Msg::Challenge { nonce } => nonce,
            other => panic!("{other:?}"),
        }
    };
    let mut first = raw(s.addr);
    let server_nonce = challenge(&mut first);
    let proof = Transcript {
        protocol: AUTH_PROTOCOL,
        initiator_nonce: &nonce,
        responder_nonce: &server_nonce,
    }
    .proof("s3cret", Speaker::Initiator);
    let mut second = raw(s.addr);
    challenge(&mut second);
    protocol::send(&mut second, &Msg::Auth { proof }).unwrap();
    match protocol::recv(&mut second).unwrap() {
        Msg::Error { message } => assert!(message.contains("authentication failed"), "{message}"),
        other => panic!("a replayed proof was accepted: {other:?}"),
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

fn results(c: &mut TcpStream) -> protocol::SideStats {
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

/// `--token-file` gives the token out of sight of `ps`: the right one is let in, a wrong one
/// is one line and exit code 2.
#[test]
fn a_token_file_is_read_and_checked() {
    let s = start(Some("s3cret"));
    let dir = tempfile::tempdir().unwrap();
    for (token, ok) in [("s3cret\n", true), ("guess\n", false)] {
        let file = dir.path().join("token");
        std::fs::write(&file, token).unwrap();
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_peakbench"))
            .args(["net", "--server", &s.addr.to_string(), "--token-file"])
            .arg(&file)
            .args([
                "--workload",
                "THROUGHPUT",
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
            .env_remove("PEAKBENCH_TOKEN")
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        if ok {
            assert!(out.status.success(), "{err}");
        } else {
            assert_eq!(out.status.code(), Some(2), "{err}");
            assert_eq!(err.trim().lines().count(), 1, "{err}");
            assert!(err.contains("authentication failed"), "{err}");
        }
    }
}

/// Counts the tool servers a server was asked to start; starts nothing.
#[derive(Debug, Default)]
struct CountingTools(std::sync::atomic::AtomicUsize);

impl ToolServers for CountingTools {
    fn start(
        &self,
        request: &ToolRequest,
        _ip: std::net::IpAddr,
    ) -> Result<(Vec<u16>, Box<dyn Send>), String> {
        self.0.fetch_add(
            request.instances as usize,
            std::sync::atomic::Ordering::SeqCst,
        );
        Ok((vec![1; request.instances as usize], Box::new(())))
    }

    fn describe(&self) -> String {
        "counting".into()
    }
}

fn tool_request(instances: u32) -> Msg {
    Msg::ToolSetup {
        request: ToolRequest {
            tool: RefTool::Sockperf,
            proto: Proto::Tcp,
            instances,
            seconds: 1,
        },
    }
}

/// `net serve --references` starts a reference tool's servers only for a client that proved
/// the token, within the request's bounds; a server without `--references` starts none and
/// says why; a client that asks and vanishes leaves the server serving.
#[test]
fn reference_servers_only_for_an_authenticated_bounded_request() {
    let tools = std::sync::Arc::new(CountingTools::default());
    let started = || tools.0.load(std::sync::atomic::Ordering::SeqCst);
    let s = start_with(ServerConfig {
        token: Some("secret".into()),
        idle_timeout: Duration::from_millis(500),
        log: false,
        tools: Some(tools.clone()),
        ..Default::default()
    });
    // Without the token: hello, then the request instead of the proof.
    let mut c = hello(s.addr);
    assert!(matches!(
        protocol::recv(&mut c).unwrap(),
        Msg::Challenge { .. }
    ));
    protocol::send(&mut c, &tool_request(1)).unwrap();
    match protocol::recv(&mut c).unwrap() {
        Msg::Error { message } => assert!(message.contains("expected auth"), "{message}"),
        other => panic!("{other:?}"),
    }
    // With the wrong token.
    let wrong = client::start_tools(&target(s.addr, Some("guess")), &request(1));
    assert!(wrong.is_err());
    assert_eq!(
        started(),
        0,
        "a server was started for an unauthenticated client"
    );
    // Out of bounds, authenticated.
    let absurd = client::start_tools(&target(s.addr, Some("secret")), &request(1_000_000));
    assert!(
        matches!(&absurd, Err(NetError::Refused(m)) if m.contains("out of range")),
        "{absurd:?}"
    );
    assert_eq!(started(), 0);
    // Authenticated and bounded: the ports announced, stopped when done.
    let ok = client::start_tools(&target(s.addr, Some("secret")), &request(2)).unwrap();
    assert_eq!(ok.ports.len(), 2);
    ok.finish().unwrap();
    assert_eq!(started(), 2);
    // One that asks and goes away: the server serves the next.
    drop(client::start_tools(&target(s.addr, Some("secret")), &request(1)).unwrap());
    serves_again(&target(s.addr, Some("secret")));
    // A server without --references.
    let plain = start(None);
    let refused = client::start_tools(&target(plain.addr, None), &request(1));
    assert!(
        matches!(&refused, Err(NetError::Refused(m)) if m.contains("--references")),
        "{refused:?}"
    );
}

fn request(instances: u32) -> ToolRequest {
    match tool_request(instances) {
        Msg::ToolSetup { request } => request,
        _ => unreachable!(),
    }
}

/// Security review, row 2: however many tests may run at once, one server runs at most 128
/// tools' servers: two clients that each ask for 128 get them once, the second is refused in
/// one line; a client's share is freed when it is done or goes away.
#[test]
fn tool_servers_are_bounded_for_the_whole_server() {
    let tools = std::sync::Arc::new(CountingTools::default());
    let started = || tools.0.load(std::sync::atomic::Ordering::SeqCst);
    let s = start_with(ServerConfig {
        token: Some("secret".into()),
        idle_timeout: Duration::from_secs(2),
        max_tests: 8,
        log: false,
        tools: Some(tools.clone()),
        ..Default::default()
    });
    let t = target(s.addr, Some("secret"));
    let ask = |n| client::start_tools(&t, &request(n));
    let refused = |r: Result<client::ToolSession, NetError>| match r {
        Err(NetError::Refused(m)) => {
            assert!(m.contains("bound of 128") && !m.contains('\n'), "{m}");
        }
        other => panic!("more than 128 tools' servers at once: {other:?}"),
    };
    let first = ask(128).unwrap();
    refused(ask(128));
    refused(ask(1));
    assert_eq!(started(), 128);
    first.finish().unwrap();
    let a = ask(100).unwrap();
    let b = ask(28).unwrap();
    refused(ask(1));
    // One that goes away: its share is freed once the server has seen it go.
    drop(a);
    let until = Instant::now() + Duration::from_secs(5);
    let c = loop {
        match ask(100) {
            Ok(c) => break c,
            Err(e) => assert!(Instant::now() < until, "the share was not freed: {e}"),
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    b.finish().unwrap();
    c.finish().unwrap();
    assert_eq!(started(), 128 + 128 + 100);
}

/// `peakbench net serve` with `args` on 127.0.0.1 (an ephemeral port), `env` added: its
/// standard error line by line, and the process, killed when dropped.
struct Serving {
    child: std::process::Child,
    lines: std::sync::mpsc::Receiver<String>,
}

impl Serving {
    fn start(args: &[&str], env: &[(&str, &std::ffi::OsStr)]) -> Serving {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_peakbench"));
        cmd.args(["net", "serve", "--bind", "127.0.0.1", "--port", "0"])
            .args(args)
            .envs(env.iter().copied());
        Serving::spawn(cmd)
    }

    /// `cmd` (a `net serve`, PEAKBENCH_TOKEN removed), its standard error read line by line.
    fn spawn(mut cmd: std::process::Command) -> Serving {
        let mut child = cmd
            .env_remove("PEAKBENCH_TOKEN")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let err = std::io::BufReader::new(child.stderr.take().unwrap());
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            use std::io::BufRead;
            for line in err.lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        Serving { child, lines }
    }

    /// The lines of standard error up to the one that says where it listens, and that
    /// address (within 20 s).
    fn listening(&self) -> (Vec<String>, SocketAddr) {
        let mut seen = Vec::new();
        let until = Instant::now() + Duration::from_secs(20);
        while let Ok(line) = self
            .lines
            .recv_timeout(until.saturating_duration_since(Instant::now()))
        {
            if let Some(rest) = line.split("listening on ").nth(1) {
                let addr = rest.split_whitespace().next().unwrap().parse().unwrap();
                return (seen, addr);
            }
            seen.push(line);
        }
        panic!("the server did not listen within 20 s: {seen:?}");
    }

    /// Sends `signal` and waits (at most 20 s) for the process to end.
    fn stop(&mut self, signal: libc::c_int) -> std::process::ExitStatus {
        // SAFETY: kill sends a signal to our own child process.
        unsafe { libc::kill(self.child.id() as i32, signal) };
        let until = Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(
                Instant::now() < until,
                "the server did not stop within 20 s"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Serving {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Security review, row 2: a server that would start the tools' servers for anybody is
/// refused. `net serve --references` without a token: one line and exit code 2 on an address
/// other hosts reach (a documentation address, never bound), a warning first on loopback; the
/// library refuses the same; `cluster run --reference` without a token is refused on every
/// rank (their servers listen on every address), unless there are no link tests.
#[test]
fn references_need_a_token_unless_on_loopback() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_peakbench"))
        .args(["net", "serve", "--references", "--bind", "192.0.2.1"])
        .args(["--port", "0"])
        .env_remove("PEAKBENCH_TOKEN")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("needs --token or --token-file"), "{err}");

    let bound = peakbench::bench::net::server::Server::bind(
        "192.0.2.1:5301".parse().unwrap(),
        ServerConfig {
            log: false,
            tools: Some(std::sync::Arc::new(CountingTools::default())),
            ..Default::default()
        },
    );
    match bound {
        Err(e) => assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput, "{e}"),
        Ok(_) => panic!("a server without a token started tools for anybody"),
    }

    let mut local = Serving::start(&["--references"], &[]);
    let (before, _) = local.listening();
    assert!(
        before
            .iter()
            .any(|l| l.contains("warning: --references without a token")),
        "{before:?}"
    );
    assert!(local.stop(libc::SIGINT).success());

    let dir = tempfile::tempdir().unwrap();
    let profile = dir.path().join("p.toml");
    std::fs::write(
        &profile,
        "[[job]]\nsubsystem = 'cpu'\nworkload = ['NULL']\nthreads = 1\nrepeat = 1\n",
    )
    .unwrap();
    for (extra, ok) in [(None, false), (Some("--no-net"), true)] {
        let out = assert_cmd::Command::new(env!("CARGO_BIN_EXE_peakbench"))
            .args(["cluster", "run", "--rank", "0", "--world-size", "2"])
            .args(["--dry-run", "--reference", "--profile"])
            .arg(&profile)
            .args(extra)
            .env_remove("PEAKBENCH_TOKEN")
            .env("PEAKBENCH_DB", common::test_db())
            .timeout(Duration::from_secs(60))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        if ok {
            assert!(out.status.success(), "{err}");
        } else {
            assert_eq!(out.status.code(), Some(2), "{err}");
            assert_eq!(err.trim().lines().count(), 1, "{err}");
            assert!(err.contains("--reference needs --token"), "{err}");
        }
    }
}

/// A stand-in for sockperf: answers `--version`; as `server [--tcp] -i IP -p PORT` it notes
/// its process id and port in $FAKE_PIDS and becomes a TCP listener on IP:PORT (a peakbench
/// server, $FAKE_LISTENER) until it is killed.
const FAKE_SOCKPERF: &str = r#"#!/bin/sh
if [ "$1" = "--version" ]; then echo "sockperf: version 3.10"; exit 0; fi
while [ $# -gt 0 ]; do
  case "$1" in -i) ip=$2; shift ;; -p) port=$2; shift ;; esac
  shift
done
echo "$$ $port" >> "$FAKE_PIDS"
exec "$FAKE_LISTENER" net serve --bind "$ip" --port "$port" --idle-timeout 1s
"#;

/// Whether process `pid` still runs the fake tool's server on `port` (a zombie does not: in a
/// container nobody may reap it).
fn runs(pid: u32, port: &str) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    // The state follows the command's name, in parentheses.
    let state = stat
        .rsplit_once(')')
        .and_then(|(_, rest)| rest.split_whitespace().next());
    state != Some("Z")
        && std::fs::read(format!("/proc/{pid}/cmdline"))
            .is_ok_and(|c| c.split(|&b| b == 0).any(|a| a == port.as_bytes()))
}

/// Security review, row 3: the tools' servers `net serve --references` started for a client
/// do not outlive it, however it ends: after SIGINT and SIGTERM it has killed and reaped them
/// before it exits; after SIGKILL the kernel kills them (PR_SET_PDEATHSIG). The tool is a
/// stand-in that listens on its port like sockperf; its processes are counted in /proc.
#[test]
fn no_tool_server_outlives_the_server() {
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let fake = bin.join("sockperf");
    std::fs::write(&fake, FAKE_SOCKPERF).unwrap();
    std::fs::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let path = std::env::join_paths(std::iter::once(bin.clone()).chain(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    )))
    .unwrap();
    for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGKILL] {
        let pids = dir.path().join(format!("pids.{signal}"));
        let mut s = Serving::start(
            &["--references", "--token", "secret", "--idle-timeout", "30s"],
            &[
                ("PATH", path.as_os_str()),
                ("FAKE_PIDS", pids.as_os_str()),
                ("FAKE_LISTENER", env!("CARGO_BIN_EXE_peakbench").as_ref()),
            ],
        );
        let (_, addr) = s.listening();
        let asked = ToolRequest {
            seconds: 600,
            ..request(3)
        };
        let session = client::start_tools(&target(addr, Some("secret")), &asked)
            .unwrap_or_else(|e| panic!("signal {signal}: {e}"));
        let tools: Vec<(u32, String)> = std::fs::read_to_string(&pids)
            .unwrap()
            .lines()
            .map(|l| {
                let (pid, port) = l.split_once(' ').unwrap();
                (pid.parse().unwrap(), port.to_string())
            })
            .collect();
        assert_eq!(tools.len(), 3, "{tools:?}");
        for (pid, port) in &tools {
            assert!(runs(*pid, port), "the tool's server {pid} is not running");
            assert!(session.ports.iter().any(|p| p.to_string() == *port));
        }
        let status = s.stop(signal);
        if signal != libc::SIGKILL {
            // It stopped on its own (`net serve` ends with 0 after Ctrl-C, having served).
            assert!(status.success(), "signal {signal}: {status:?}");
        }
        // The kernel's SIGKILL is sent as the server dies; give it a moment to land.
        let until =
            Instant::now() + Duration::from_secs(if signal == libc::SIGKILL { 10 } else { 0 });
        let left = loop {
            let left: Vec<u32> = tools
                .iter()
                .filter(|(pid, port)| runs(*pid, port))
                .map(|(pid, _)| *pid)
                .collect();
            if left.is_empty() || Instant::now() >= until {
                break left;
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        // Whatever happened, none of them is left running after the test.
        for pid in &left {
            // SAFETY: kill sends a signal to a process this test started (its pid checked).
            unsafe { libc::kill(*pid as i32, libc::SIGKILL) };
        }
        assert!(
            left.is_empty(),
            "signal {signal}: the tools' servers {left:?} outlived the server"
        );
        drop(session);
    }
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
        protocol::write_raw(&mut c, setup.to_string().as_bytes()).unwrap();
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
            protocol::write_raw(&mut s, results.to_string().as_bytes()).ok()
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

/// `peakbench net serve ARGS` (PEAKBENCH_TOKEN removed) that is expected to end by itself: its
/// exit code and standard error; killed, and the test failed, if it still runs after 20 s.
fn serve_bounded(args: &[&str]) -> (Option<i32>, String) {
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_peakbench"))
        .args(["net", "serve"])
        .args(args)
        .env_remove("PEAKBENCH_TOKEN")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let until = Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() >= until {
            let _ = child.kill();
            let _ = child.wait();
            panic!("`net serve {}` still ran after 20 s", args.join(" "));
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    assert!(!err.contains("panicked"), "{err}");
    (status.code(), err)
}

/// The TCP sockets that listen on `port`, as /proc/net/tcp and tcp6 write their local
/// addresses (hex, e.g. `0100007F` for 127.0.0.1).
fn listeners_on(port: u16) -> Vec<String> {
    let mut found = Vec::new();
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let Ok(text) = std::fs::read_to_string(table) else {
            continue;
        };
        for line in text.lines().skip(1) {
            let f: Vec<&str> = line.split_whitespace().collect();
            // sl, local_address, rem_address, st (0A: listening)
            if f.len() > 3
                && f[3] == "0A"
                && let Some((ip, p)) = f[1].split_once(':')
                && u16::from_str_radix(p, 16) == Ok(port)
            {
                found.push(ip.to_string());
            }
        }
    }
    found
}

/// Security review, rule "a server listens on loopback or asks for a token": a bare
/// `net serve` without a token listens on 127.0.0.1 only (a connection there is served; the
/// kernel's table has no other listener on its port) and says so, and how to serve others.
#[test]
fn without_a_token_serve_listens_on_loopback_only() {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_peakbench"));
    cmd.args(["net", "serve", "--port", "0"]);
    let serving = Serving::spawn(cmd);
    let (before, addr) = serving.listening();
    assert_eq!(addr.ip(), std::net::Ipv4Addr::LOCALHOST, "{before:?}");
    assert_eq!(before.len(), 1, "{before:?}");
    assert!(
        before[0].contains("listens on 127.0.0.1 only"),
        "{before:?}"
    );
    assert!(
        before[0].contains("--token") && before[0].contains("--no-token"),
        "{before:?}"
    );
    let mut c = raw(addr);
    protocol::send(
        &mut c,
        &Msg::Hello {
            version: PROTOCOL_VERSION,
            nonce: auth::new_nonce().unwrap(),
        },
    )
    .unwrap();
    assert!(matches!(protocol::recv(&mut c), Ok(Msg::Welcome { .. })));
    assert_eq!(listeners_on(addr.port()), ["0100007F"]);
}

/// Without a token, an address other hosts reach is refused in one line (exit code 2) that
/// says what to give, unless --no-token says so aloud; --no-token with a token, or on loopback
/// (where it would change nothing), is refused too, and --references still needs a token off
/// loopback. Nothing is bound: the refusals come first, and the one accepted address
/// (a documentation address) cannot be bound here.
#[test]
fn serving_others_without_a_token_needs_no_token_said_aloud() {
    for bind in ["0.0.0.0", "192.0.2.1", "::"] {
        let (code, err) = serve_bounded(&["--bind", bind, "--port", "0"]);
        assert_eq!(code, Some(2), "{bind}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{bind}: {err}");
        for hint in ["--token or --token-file", "--bind 127.0.0.1", "--no-token"] {
            assert!(err.contains(hint), "{bind}: {err}");
        }
    }
    for (args, says) in [
        (&["--no-token", "--token", "x"][..], "contradicts the token"),
        (
            &["--no-token", "--bind", "127.0.0.1"],
            "--no-token is unused",
        ),
        (
            &["--no-token", "--references", "--bind", "0.0.0.0"],
            "--references on 0.0.0.0 needs --token",
        ),
    ] {
        let (code, err) = serve_bounded(&[args, &["--port", "0"]].concat());
        assert_eq!(code, Some(2), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
    // Accepted: the warning first, then the attempt to listen (on an address this host does
    // not have).
    let (code, err) = serve_bounded(&["--no-token", "--bind", "192.0.2.1", "--port", "0"]);
    let lines: Vec<&str> = err.trim().lines().collect();
    assert_eq!(code, Some(2), "{err}");
    assert_eq!(lines.len(), 2, "{err}");
    assert!(
        lines[0].contains("warning: --no-token: serving anyone"),
        "{err}"
    );
    assert!(lines[1].contains("cannot listen on 192.0.2.1"), "{err}");
}

/// `net serve --no-token` listens on every address, after its warning: in a network namespace
/// made for the test (skipped without root or `ip`), killed once it listens.
#[test]
fn no_token_serves_every_address_with_a_warning() {
    let ns = match common::Namespaces::new(vec![format!("pbnotok{}", std::process::id())]) {
        Ok(ns) => ns,
        Err(why) => {
            eprintln!("SKIPPED no_token_serves_every_address_with_a_warning: {why}");
            return;
        }
    };
    let mut cmd = std::process::Command::new("ip");
    cmd.args([
        "netns",
        "exec",
        &ns.names[0],
        env!("CARGO_BIN_EXE_peakbench"),
    ])
    .args(["net", "serve", "--no-token", "--port", "0"]);
    let serving = Serving::spawn(cmd);
    let (before, addr) = serving.listening();
    drop(serving);
    assert_eq!(addr.ip(), std::net::Ipv4Addr::UNSPECIFIED, "{before:?}");
    assert_eq!(before.len(), 1, "{before:?}");
    assert!(
        before[0].contains("warning: --no-token: serving anyone who reaches the port on 0.0.0.0"),
        "{before:?}"
    );
}
