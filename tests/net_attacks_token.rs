//! The network server's token (issue 16, item 9; the security review's rule that a server
//! listens on loopback or asks for a token): the handshake is
//! mutual and bound to its connection, a token file is read and checked, and a server without a
//! token listens on loopback only unless told, saying so. Everything on 127.0.0.1, every wait
//! bounded.

mod common;

use common::net::{Serving, params, raw, start, target};
use peakbench::bench::net::Proto;
use peakbench::bench::net::client;
use peakbench::wire::auth::{self, Speaker, Transcript};
use peakbench::wire::client::NetError;
use peakbench::wire::net_test::TestKind;
use peakbench::wire::protocol::{self, AUTH_PROTOCOL, Msg, PROTOCOL_VERSION};
use std::io::Read;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::time::{Duration, Instant};

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
