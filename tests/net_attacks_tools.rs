//! Requests for reference tools' servers (issue 29; security review, rows 2 and 3): only with
//! a token (or on loopback), bounded per request and 128 at most for a whole server, none
//! outliving it. Everything on 127.0.0.1, every wait bounded.

mod common;

use common::net::{Serving, hello, serves_again, start, start_with, target};
use peakbench::bench::net::Proto;
use peakbench::bench::net::server::ServerConfig;
use peakbench::wire::client::NetError;
use peakbench::wire::protocol::{self, Msg};
use peakbench::wire::tools::{RefTool, ToolRequest, ToolServers};
use std::time::{Duration, Instant};

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
    let wrong = peakbench::wire::client::start_tools(&target(s.addr, Some("guess")), &request(1));
    assert!(wrong.is_err());
    assert_eq!(
        started(),
        0,
        "a server was started for an unauthenticated client"
    );
    // Out of bounds, authenticated.
    let absurd =
        peakbench::wire::client::start_tools(&target(s.addr, Some("secret")), &request(1_000_000));
    assert!(
        matches!(&absurd, Err(NetError::Refused(m)) if m.contains("out of range")),
        "{absurd:?}"
    );
    assert_eq!(started(), 0);
    // Authenticated and bounded: the ports announced, stopped when done.
    let ok =
        peakbench::wire::client::start_tools(&target(s.addr, Some("secret")), &request(2)).unwrap();
    assert_eq!(ok.ports.len(), 2);
    ok.finish().unwrap();
    assert_eq!(started(), 2);
    // One that asks and goes away: the server serves the next.
    drop(
        peakbench::wire::client::start_tools(&target(s.addr, Some("secret")), &request(1)).unwrap(),
    );
    serves_again(&target(s.addr, Some("secret")));
    // A server without --references.
    let plain = start(None);
    let refused = peakbench::wire::client::start_tools(&target(plain.addr, None), &request(1));
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
    let ask = |n| peakbench::wire::client::start_tools(&t, &request(n));
    let refused = |r: Result<peakbench::wire::client::ToolSession, NetError>| match r {
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
        let session = peakbench::wire::client::start_tools(&target(addr, Some("secret")), &asked)
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
