//! A network server on 127.0.0.1 in a thread, and raw clients to attack it with.

use peakbench::bench::net::client::{self, NetError, Target};
use peakbench::bench::net::protocol::{Proto, TestKind, TestParams};
use peakbench::bench::net::server::{Server, ServerConfig};
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
