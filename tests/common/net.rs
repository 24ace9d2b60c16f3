//! A network server on 127.0.0.1 in a thread, and raw clients to attack it with; `peakbench net
//! serve` as a process.

use peakbench::bench::net::Proto;
use peakbench::bench::net::client;
use peakbench::bench::net::server::{Server, ServerConfig};
use peakbench::wire::auth;
use peakbench::wire::client::{NetError, Target};
use peakbench::wire::net_test::{TestKind, TestParams};
use peakbench::wire::protocol::{self, Msg, PROTOCOL_VERSION};
use std::io::Read;
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// A server on 127.0.0.1 in a thread, stopped when dropped.
pub struct Running {
    pub addr: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for Running {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            t.join().unwrap();
        }
    }
}

pub fn start(token: Option<&str>) -> Running {
    start_with(ServerConfig {
        token: token.map(str::to_string),
        idle_timeout: Duration::from_millis(500),
        log: false,
        ..Default::default()
    })
}

pub fn start_with(cfg: ServerConfig) -> Running {
    let server = Server::bind("127.0.0.1:0".parse().unwrap(), cfg).unwrap();
    let addr = server.local_addr().unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    let thread = std::thread::spawn(move || server.serve(&flag).unwrap());
    Running {
        addr,
        stop,
        thread: Some(thread),
    }
}

/// A client's target of the server `s`, without a token.
pub fn target_of(s: &Running) -> Target {
    Target {
        addr: s.addr,
        token: None,
    }
}

pub fn params(proto: Proto, kind: TestKind, ms: u64) -> TestParams {
    TestParams {
        kind,
        proto,
        streams: 1,
        message_bytes: if kind == TestKind::Latency {
            64
        } else {
            16 * 1024
        },
        duration_ms: ms,
        omit_ms: 0,
        reverse: false,
        rate_bps: 0,
        busy_poll_us: 50,
        bidir: false,
        socket: Default::default(),
        amount_per_stream: 0,
        mps: 0,
        load_streams: 0,
        sustain: false,
    }
}

pub fn raw(addr: SocketAddr) -> TcpStream {
    let s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(3))).unwrap();
    s
}

/// Reads until the server closes the connection (bounded by the read timeout).
pub fn closed_by_server(mut s: TcpStream) -> bool {
    let mut buf = [0u8; 4096];
    let until = Instant::now() + Duration::from_secs(3);
    while Instant::now() < until {
        match s.read(&mut buf) {
            Ok(0) => return true,
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => return true,
            Err(_) => return false,
        }
    }
    false
}

/// A short TCP test must succeed: the server is still serving.
pub fn still_serves(s: &Running) {
    let t = Target {
        addr: s.addr,
        token: None,
    };
    let out = client::run_test(&t, &params(Proto::Tcp, TestKind::Throughput, 50))
        .expect("the server serves the next client");
    assert!(out.server.bytes_received > 0);
    assert!(out.client.stats.bytes_sent >= out.server.bytes_received / 2);
}

/// Runs a test, retrying for up to 5 s while the server is busy (it takes a moment to see
/// that a client that gave up or vanished has gone).
pub fn run_unless_busy(t: &Target, p: &TestParams) -> Result<client::Outcome, NetError> {
    let until = Instant::now() + Duration::from_secs(5);
    loop {
        match client::run_test(t, p) {
            Err(NetError::Busy(..)) if Instant::now() < until => {
                std::thread::sleep(Duration::from_millis(20))
            }
            other => return other,
        }
    }
}

/// A test succeeds (within 5 s).
pub fn serves_again(t: &Target) {
    if let Err(e) = run_unless_busy(t, &params(Proto::Tcp, TestKind::Throughput, 50)) {
        panic!("the server does not serve again: {e}");
    }
}

/// A raw connection that has said hello (with a fresh nonce).
pub fn hello(addr: SocketAddr) -> TcpStream {
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
pub fn welcomed(addr: SocketAddr) -> TcpStream {
    let mut c = hello(addr);
    assert!(matches!(
        protocol::recv(&mut c).unwrap(),
        Msg::Welcome { .. }
    ));
    c
}

/// Setup to Ready: the data ports and the test's cookie.
pub fn set_up(c: &mut TcpStream, p: TestParams) -> (Vec<u16>, u64) {
    protocol::send(c, &Msg::Setup { params: p }).unwrap();
    match protocol::recv(c).unwrap() {
        Msg::Ready { data_ports, cookie } => (data_ports, cookie),
        other => panic!("{other:?}"),
    }
}

pub fn go(c: &mut TcpStream) {
    protocol::send(c, &Msg::Connected).unwrap();
    assert!(matches!(protocol::recv(c).unwrap(), Msg::Go));
    protocol::send(c, &Msg::Start).unwrap();
}

pub fn target(addr: SocketAddr, token: Option<&str>) -> Target {
    Target {
        addr,
        token: token.map(str::to_string),
    }
}

/// `peakbench net serve` with `args` on 127.0.0.1 (an ephemeral port), `env` added: its
/// standard error line by line, and the process, killed when dropped.
pub struct Serving {
    child: std::process::Child,
    lines: std::sync::mpsc::Receiver<String>,
}

impl Serving {
    pub fn start(args: &[&str], env: &[(&str, &std::ffi::OsStr)]) -> Serving {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_peakbench"));
        cmd.args(["net", "serve", "--bind", "127.0.0.1", "--port", "0"])
            .args(args)
            .envs(env.iter().copied());
        Serving::spawn(cmd)
    }

    /// `cmd` (a `net serve`, PEAKBENCH_TOKEN removed), its standard error read line by line.
    pub fn spawn(mut cmd: std::process::Command) -> Serving {
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
    pub fn listening(&self) -> (Vec<String>, SocketAddr) {
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
    pub fn stop(&mut self, signal: libc::c_int) -> std::process::ExitStatus {
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
