//! `peakbench net serve`: the server, built not to be abused.
//!
//! * Every control read has a deadline (a silent client is dropped after `idle_timeout`; the
//!   deadline bounds the whole message, so a byte-a-second client is dropped too).
//! * Frames are bounded ([`MAX_FRAME_BYTES`](super::protocol::MAX_FRAME_BYTES)) and checked
//!   before allocation; parameters are validated against
//!   [`limits`](super::protocol::limits).
//! * At most `max_tests` tests run at once (others get `Busy`), at most `max_connections`
//!   control connections are open at once (others are closed at once), and every thread a
//!   test starts ends with the test.
//! * A client that vanishes mid-test ends its test: EOF on the control connection stops the
//!   streams.

use super::protocol::{self, FrameError, Msg, PROTOCOL_VERSION, TestKind, TestParams};
use super::roles::{self, Role};
use super::streams::{UDP_GRACE, Window};
use super::transport::{Attached, Pending};
use std::io;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// The server's settings.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// Shared secret; clients must prove they know it.
    pub token: Option<String>,
    /// How long a client may stay silent while the server waits for its next message.
    pub idle_timeout: Duration,
    /// Tests that may run at once.
    pub max_tests: usize,
    /// Control connections that may be open at once.
    pub max_connections: usize,
    /// Print one line per test and per refused client on stderr.
    pub log: bool,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            token: None,
            idle_timeout: Duration::from_secs(10),
            max_tests: 1,
            max_connections: 16,
            log: true,
        }
    }
}

/// A bound server.
pub struct Server {
    listener: TcpListener,
    cfg: Arc<ServerConfig>,
    tests: Arc<AtomicUsize>,
    connections: Arc<AtomicUsize>,
}

/// Why one control connection ended early (logged by the server, sent to the client when it
/// is still there).
#[derive(Debug, thiserror::Error)]
enum SessionError {
    #[error("{0}")]
    Frame(#[from] FrameError),
    #[error("{0}")]
    Refused(String),
    #[error("{0}")]
    Io(#[from] io::Error),
}

/// The state of one control connection: what it waits for next.
enum State {
    AwaitHello,
    AwaitAuth {
        nonce: String,
    },
    AwaitSetup,
    AwaitConnected {
        params: TestParams,
        pending: Pending,
    },
    AwaitStart {
        params: TestParams,
        attached: Attached,
    },
    Finished {
        params: TestParams,
    },
}

impl State {
    fn expects(&self) -> &'static str {
        match self {
            State::AwaitHello => "hello",
            State::AwaitAuth { .. } => "auth",
            State::AwaitSetup => "setup",
            State::AwaitConnected { .. } => "connected",
            State::AwaitStart { .. } => "start",
            State::Finished { .. } => "nothing",
        }
    }
}

/// Decrements a counter when dropped.
struct Slot(Arc<AtomicUsize>);

impl Slot {
    fn take(counter: &Arc<AtomicUsize>, max: usize) -> Option<Slot> {
        counter
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < max).then_some(n + 1)
            })
            .ok()
            .map(|_| Slot(counter.clone()))
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

fn recv_by(stream: &TcpStream, until: Instant) -> Result<Msg, FrameError> {
    protocol::recv_until(stream, until)
}

impl Server {
    /// Binds the control port.
    pub fn bind(addr: SocketAddr, cfg: ServerConfig) -> io::Result<Server> {
        Ok(Server {
            listener: TcpListener::bind(addr)?,
            cfg: Arc::new(cfg),
            tests: Arc::new(AtomicUsize::new(0)),
            connections: Arc::new(AtomicUsize::new(0)),
        })
    }

    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// Accepts clients until `stop` (checked every 100 ms); each control connection is
    /// handled on its own thread.
    pub fn serve(&self, stop: &AtomicBool) -> io::Result<()> {
        let fd = self.listener.as_raw_fd();
        while !stop.load(Ordering::Relaxed) {
            let mut pfd = libc::pollfd {
                fd,
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: one valid pollfd for the listener, which outlives the call.
            let ready = unsafe { libc::poll(&mut pfd, 1, 100) };
            if ready <= 0 {
                continue;
            }
            let (stream, peer) = match self.listener.accept() {
                Ok(x) => x,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                // Out of file descriptors and the like: wait, do not spin or die.
                Err(_) => {
                    std::thread::sleep(Duration::from_millis(50));
                    continue;
                }
            };
            let Some(slot) = Slot::take(&self.connections, self.cfg.max_connections) else {
                if self.cfg.log {
                    eprintln!("peakbench net serve: {peer}: too many connections, closed");
                }
                continue;
            };
            let cfg = self.cfg.clone();
            let tests = self.tests.clone();
            let spawned = std::thread::Builder::new()
                .name("control".into())
                .spawn(move || {
                    let _slot = slot;
                    let result = session(&stream, peer, &cfg, &tests);
                    if let Err(e) = &result {
                        let _ = protocol::send(
                            &mut &stream,
                            &Msg::Error {
                                message: e.to_string(),
                            },
                        );
                    }
                    if cfg.log {
                        match result {
                            Ok(params) => eprintln!(
                                "peakbench net serve: {peer}: {:?} {} {}×{} B done",
                                params.kind,
                                params.proto.name(),
                                params.streams,
                                params.message_bytes
                            ),
                            // The error may quote what the peer sent.
                            Err(e) => eprintln!(
                                "peakbench net serve: {peer}: {}",
                                crate::text::printable(&e.to_string())
                            ),
                        }
                    }
                });
            if spawned.is_err() {
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        Ok(())
    }
}

fn welcome(out: &mut &TcpStream) -> io::Result<()> {
    protocol::send(
        out,
        &Msg::Welcome {
            version: PROTOCOL_VERSION,
        },
    )
}

/// One control connection, from hello to results.
fn session(
    stream: &TcpStream,
    peer: SocketAddr,
    cfg: &ServerConfig,
    tests: &Arc<AtomicUsize>,
) -> Result<TestParams, SessionError> {
    stream.set_nodelay(true)?;
    stream.set_write_timeout(Some(cfg.idle_timeout))?;
    let local = stream.local_addr()?.ip();
    let mut out = stream;
    let mut state = State::AwaitHello;
    let mut slot = None;
    loop {
        let msg = recv_by(stream, Instant::now() + cfg.idle_timeout)?;
        state = match (state, msg) {
            (State::AwaitHello, Msg::Hello { version }) => {
                if version != PROTOCOL_VERSION {
                    return Err(SessionError::Refused(format!(
                        "protocol version {version} is not supported: this server speaks version {PROTOCOL_VERSION}; use the same peakbench version on both sides"
                    )));
                }
                slot = Slot::take(tests, cfg.max_tests);
                if slot.is_none() {
                    protocol::send(
                        &mut out,
                        &Msg::Busy {
                            reason: "the server is running another test; try again when it ends"
                                .into(),
                        },
                    )?;
                    return Err(SessionError::Refused("busy: refused a second test".into()));
                }
                match &cfg.token {
                    Some(_) => {
                        let nonce = protocol::new_nonce()?;
                        protocol::send(
                            &mut out,
                            &Msg::Challenge {
                                nonce: nonce.clone(),
                            },
                        )?;
                        State::AwaitAuth { nonce }
                    }
                    None => {
                        welcome(&mut out)?;
                        State::AwaitSetup
                    }
                }
            }
            (State::AwaitAuth { nonce }, Msg::Auth { mac }) => {
                let token = cfg.token.as_deref().unwrap_or_default();
                if !protocol::auth_ok(token, &nonce, &mac) {
                    return Err(SessionError::Refused(
                        "authentication failed: the client's --token does not match the server's"
                            .into(),
                    ));
                }
                welcome(&mut out)?;
                State::AwaitSetup
            }
            (State::AwaitSetup, Msg::Setup { params }) => {
                params
                    .validate()
                    .map_err(|e| SessionError::Refused(format!("refused parameters: {e}")))?;
                let pending = Pending::open(params.proto, local, params.streams as usize)?;
                protocol::send(
                    &mut out,
                    &Msg::Ready {
                        data_ports: pending.ports()?,
                    },
                )?;
                State::AwaitConnected { params, pending }
            }
            (State::AwaitConnected { params, pending }, Msg::Connected) => {
                let attached = pending.attach(
                    peer.ip(),
                    params.streams as usize,
                    Instant::now() + cfg.idle_timeout.min(Duration::from_secs(5)),
                    params.kind == TestKind::Latency,
                )?;
                protocol::send(&mut out, &Msg::Go)?;
                State::AwaitStart { params, attached }
            }
            (State::AwaitStart { params, attached }, Msg::Start) => {
                let stats = run_test(stream, cfg, params, attached)?;
                // Free the slot first: the client may start its next test at once.
                drop(slot.take());
                protocol::send(&mut out, &Msg::Results { stats })?;
                State::Finished { params }
            }
            (state, msg) => {
                return Err(SessionError::Refused(format!(
                    "unexpected {} message, expected {}",
                    msg.name(),
                    state.expects()
                )));
            }
        };
        if let State::Finished { params } = state {
            return Ok(params);
        }
    }
}

/// Runs the server's side of a started test while waiting for the client's `Done`; if the
/// client vanishes or says something else, the streams are stopped.
fn run_test(
    stream: &TcpStream,
    cfg: &ServerConfig,
    params: TestParams,
    attached: Attached,
) -> Result<protocol::SideStats, SessionError> {
    let w = Window {
        start: Instant::now(),
        omit: Duration::from_millis(params.omit_ms),
        duration: Duration::from_millis(params.duration_ms),
    };
    let stop = AtomicBool::new(false);
    let role = Role::of(&params, true);
    let (side, done) = std::thread::scope(|s| {
        let streams = s.spawn(|| roles::run(attached, &params, role, w, &stop));
        let until = w.end() + UDP_GRACE + cfg.idle_timeout;
        let done = recv_by(stream, until);
        if !matches!(done, Ok(Msg::Done { .. })) {
            stop.store(true, Ordering::Relaxed);
        }
        // An echo stops when the pinging client says it is done.
        if role == Role::Echo {
            stop.store(true, Ordering::Relaxed);
        }
        let side = streams
            .join()
            .unwrap_or_else(|_| Err(io::Error::other("the streams panicked")));
        (side, done)
    });
    match done? {
        Msg::Done { .. } => Ok(side?.stats),
        other => Err(SessionError::Refused(format!(
            "unexpected {} message, expected done",
            other.name()
        ))),
    }
}
