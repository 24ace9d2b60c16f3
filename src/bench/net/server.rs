//! `peakbench net serve`: the server, built not to be abused.
//!
//! * A connection is *unauthenticated* until it has proved it knows the token (or, without a
//!   token, until its `Hello`): it must get there within `handshake_timeout` of being accepted,
//!   and at most `max_pending` such connections are kept — when one more arrives, the oldest
//!   is dropped (as sshd's MaxStartups does), so that silent or slow connections, however many,
//!   cannot keep a real client out.
//! * A test slot is taken only after authentication: at most `max_tests` tests run at once
//!   (others get `Busy`).
//! * Every control read has a deadline (a silent client is dropped after `idle_timeout`; the
//!   deadline bounds the whole message, so a byte-a-second client is dropped too), every
//!   control write a timeout, and every data socket a send timeout: a client that stops
//!   reading is given up at the end of its test's window.
//! * Frames are bounded ([`MAX_FRAME_BYTES`](crate::wire::protocol::MAX_FRAME_BYTES)) and checked
//!   before allocation; parameters are validated against
//!   [`limits`](crate::wire::net_test::limits).
//! * Every thread a test starts ends with the test, and a client that vanishes mid-test ends
//!   its test: EOF on the control connection stops the streams.
//! * Reference tools' servers (`--references`) are started only for an authenticated client,
//!   on a server that has a token or listens on loopback only ([`Server::bind`] refuses the
//!   others), at most [`MAX_TOOL_PROCESSES`] at once whatever the number of tests, and all of
//!   them are stopped and reaped when the server stops.

use super::roles::{self, Role};
use super::streams::{UDP_GRACE, Window};
use super::transport::{Attached, Pending};
use crate::wire::auth::{self, Speaker, Transcript};
use crate::wire::frame::FrameError;
use crate::wire::net_test::{TestParams, limits};
use crate::wire::protocol::{self, AUTH_PROTOCOL, Msg, PROTOCOL_VERSION};
use crate::wire::tools::{ToolRequest, ToolServers};
use std::collections::{HashMap, VecDeque};
use std::io;
use std::net::{IpAddr, Shutdown, SocketAddr, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long after a reference run's announced time its servers are stopped whatever the
/// client says: the tools' start-up and reports.
pub const TOOL_GRACE: Duration = Duration::from_secs(20);

/// The most reference tools' servers (processes) one server runs at once, for all its tests
/// together: one request's most (sockperf's 128 streams), so that `--max-tests` does not
/// multiply it.
pub const MAX_TOOL_PROCESSES: u32 = limits::MAX_STREAMS;

/// Why [`Server::bind`] refuses reference tools' servers: a server reachable from other hosts
/// that would start them for anyone.
pub const TOOLS_NEED_A_TOKEN: &str = "the reference tools' servers (--references) are started only by a server with a token, or one that listens on loopback (127.0.0.0/8, ::1)";

/// The server's settings.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// Shared secret; clients must prove they know it.
    pub token: Option<String>,
    /// How long a client may stay silent while the server waits for its next message.
    pub idle_timeout: Duration,
    /// How long after being accepted a connection has to authenticate.
    pub handshake_timeout: Duration,
    /// Tests that may run at once.
    pub max_tests: usize,
    /// Unauthenticated connections kept at once; one more drops the oldest.
    pub max_pending: usize,
    /// Print one line per test and per refused client on stderr.
    pub log: bool,
    /// Reference tools' servers an authenticated client may ask for (`--references`).
    pub tools: Option<std::sync::Arc<dyn ToolServers>>,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            token: None,
            idle_timeout: Duration::from_secs(10),
            handshake_timeout: Duration::from_secs(5),
            max_tests: 1,
            max_pending: 8,
            log: true,
            tools: None,
        }
    }
}

/// A bound server.
pub struct Server {
    listener: TcpListener,
    cfg: Arc<ServerConfig>,
    tests: Arc<AtomicUsize>,
    startups: Arc<Startups>,
    /// Control threads alive (a backstop: unauthenticated ones are bounded by `startups`,
    /// authenticated ones by the test slots).
    connections: Arc<AtomicUsize>,
    /// The reference tools' servers running for clients.
    tool_runs: Arc<ToolRuns>,
}

/// The reference tools' servers running for clients, counted against [`MAX_TOOL_PROCESSES`],
/// and all stopped when the server stops.
#[derive(Default)]
struct ToolRuns {
    state: Mutex<ToolRunsState>,
}

#[derive(Default)]
struct ToolRunsState {
    /// Processes running or being started.
    processes: u32,
    next_id: u64,
    /// The guards of the servers started (dropping one stops and reaps its servers).
    running: HashMap<u64, Box<dyn Send>>,
    /// The server has stopped: nothing more is started.
    closed: bool,
}

/// One client's share of [`ToolRuns`]: its processes counted from before they start until
/// they have been stopped and reaped (when this is dropped).
struct ToolRun<'a> {
    runs: &'a ToolRuns,
    id: u64,
    processes: u32,
}

impl ToolRuns {
    fn lock(&self) -> std::sync::MutexGuard<'_, ToolRunsState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Counts `processes` more, or says why not (one line for the client).
    fn reserve(&self, processes: u32) -> Result<ToolRun<'_>, String> {
        let mut st = self.lock();
        if st.closed {
            return Err("the server is stopping".into());
        }
        if st.processes.saturating_add(processes) > MAX_TOOL_PROCESSES {
            return Err(format!(
                "{processes} more servers would exceed this server's bound of {MAX_TOOL_PROCESSES} reference tools' servers at once ({} running for other clients); try again when they end",
                st.processes
            ));
        }
        st.processes += processes;
        st.next_id += 1;
        Ok(ToolRun {
            runs: self,
            id: st.next_id,
            processes,
        })
    }

    /// Stops and reaps every server still running; nothing is started after. Returns how many
    /// clients' servers were stopped.
    fn close(&self) -> usize {
        let running: Vec<Box<dyn Send>> = {
            let mut st = self.lock();
            st.closed = true;
            st.running.drain().map(|(_, guard)| guard).collect()
        };
        let n = running.len();
        drop(running);
        n
    }
}

impl ToolRun<'_> {
    /// Keeps the started servers' guard until this run ends or the server stops; when the
    /// server has stopped already, they are stopped at once and that is the error.
    fn hold(&self, guard: Box<dyn Send>) -> Result<(), String> {
        let mut st = self.runs.lock();
        if st.closed {
            drop(st);
            drop(guard);
            return Err("the server is stopping".into());
        }
        st.running.insert(self.id, guard);
        Ok(())
    }
}

impl Drop for ToolRun<'_> {
    fn drop(&mut self) {
        // Stopped and reaped outside the lock (killing takes a moment), then uncounted.
        let guard = self.runs.lock().running.remove(&self.id);
        drop(guard);
        let mut st = self.runs.lock();
        st.processes = st.processes.saturating_sub(self.processes);
    }
}

/// The unauthenticated connections, oldest first.
struct Startups {
    max: usize,
    next_id: AtomicU64,
    queue: Mutex<VecDeque<(u64, SocketAddr, TcpStream)>>,
}

impl Startups {
    /// Registers a new connection (a clone of its socket); when there are already `max`, the
    /// oldest is shut down (its thread then ends) and its peer returned.
    fn admit(&self, stream: &TcpStream, peer: SocketAddr) -> io::Result<(u64, Option<SocketAddr>)> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let clone = stream.try_clone()?;
        let mut q = self.queue.lock().unwrap_or_else(|p| p.into_inner());
        let dropped = if q.len() >= self.max.max(1) {
            q.pop_front().map(|(_, from, s)| {
                let _ = s.shutdown(Shutdown::Both);
                from
            })
        } else {
            None
        };
        q.push_back((id, peer, clone));
        Ok((id, dropped))
    }

    /// The connection has authenticated, or ended: it no longer counts.
    fn leave(&self, id: u64) {
        let mut q = self.queue.lock().unwrap_or_else(|p| p.into_inner());
        q.retain(|(i, _, _)| *i != id);
    }
}

/// Removes a connection from the unauthenticated ones when its session ends.
struct Startup<'a> {
    startups: &'a Startups,
    id: u64,
}

impl Drop for Startup<'_> {
    fn drop(&mut self) {
        self.startups.leave(self.id);
    }
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
        client_nonce: String,
        server_nonce: String,
    },
    AwaitSetup,
    AwaitConnected {
        params: TestParams,
        pending: Pending,
        cookie: u64,
    },
    AwaitStart {
        params: TestParams,
        attached: Attached,
        cookie: u64,
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
    /// Binds the control port. A server that would start reference tools' servers
    /// (`cfg.tools`) without a token on an address other hosts can reach is refused
    /// ([`TOOLS_NEED_A_TOKEN`]).
    pub fn bind(addr: SocketAddr, cfg: ServerConfig) -> io::Result<Server> {
        if cfg.tools.is_some() && cfg.token.is_none() && !addr.ip().is_loopback() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                TOOLS_NEED_A_TOKEN,
            ));
        }
        Ok(Server {
            listener: TcpListener::bind(addr)?,
            startups: Arc::new(Startups {
                max: cfg.max_pending,
                next_id: AtomicU64::new(0),
                queue: Mutex::new(VecDeque::new()),
            }),
            cfg: Arc::new(cfg),
            tests: Arc::new(AtomicUsize::new(0)),
            connections: Arc::new(AtomicUsize::new(0)),
            tool_runs: Arc::new(ToolRuns::default()),
        })
    }

    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    pub fn config(&self) -> &ServerConfig {
        &self.cfg
    }

    /// Accepts clients until `stop` (checked every 100 ms); each control connection is
    /// handled on its own thread. When it returns, every reference tool's server it started
    /// has been stopped and reaped.
    pub fn serve(&self, stop: &AtomicBool) -> io::Result<()> {
        self.accept_until(stop);
        let stopped = self.tool_runs.close();
        if stopped > 0 && self.cfg.log {
            eprintln!(
                "peakbench net serve: stopped the reference tools' servers of {stopped} client(s)"
            );
        }
        Ok(())
    }

    fn accept_until(&self, stop: &AtomicBool) {
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
            // A backstop far above what the limits below allow: the threads of dropped
            // connections are still ending.
            let backstop = (self.cfg.max_pending + self.cfg.max_tests).saturating_mul(4) + 16;
            let Some(slot) = Slot::take(&self.connections, backstop) else {
                if self.cfg.log {
                    eprintln!("peakbench net serve: {peer}: too many connections, closed");
                }
                continue;
            };
            let (id, dropped) = match self.startups.admit(&stream, peer) {
                Ok(x) => x,
                Err(_) => continue,
            };
            if let Some(old) = dropped
                && self.cfg.log
            {
                eprintln!(
                    "peakbench net serve: {old}: dropped: the oldest of {} unauthenticated connections",
                    self.cfg.max_pending
                );
            }
            let cfg = self.cfg.clone();
            let tests = self.tests.clone();
            let startups = self.startups.clone();
            let tool_runs = self.tool_runs.clone();
            let spawned = std::thread::Builder::new()
                .name("control".into())
                .spawn(move || {
                    let _slot = slot;
                    let startup = Startup {
                        startups: &startups,
                        id,
                    };
                    let shared = Shared {
                        cfg: &cfg,
                        tests: &tests,
                        tool_runs: &tool_runs,
                    };
                    let result = session(&stream, peer, &shared, startup);
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
                            Ok(Served::Test(params)) => eprintln!(
                                "peakbench net serve: {peer}: {:?} {} {}×{} B done",
                                params.kind,
                                params.proto.name(),
                                params.streams,
                                params.message_bytes
                            ),
                            Ok(Served::Tool(r)) => eprintln!(
                                "peakbench net serve: {peer}: {} {} ×{} for a reference run, stopped",
                                r.tool.name(),
                                r.proto.name(),
                                r.instances
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
                self.startups.leave(id);
                std::thread::sleep(Duration::from_millis(50));
            }
        }
    }
}

/// After authentication: takes a test slot and welcomes the client (with the server's proof
/// when there is a token), or tells it the server is busy.
fn admit(
    out: &mut &TcpStream,
    cfg: &ServerConfig,
    tests: &Arc<AtomicUsize>,
    proof: Option<String>,
) -> Result<Slot, SessionError> {
    let Some(slot) = Slot::take(tests, cfg.max_tests) else {
        protocol::send(
            out,
            &Msg::Busy {
                reason: "the server is running another test; try again when it ends".into(),
            },
        )?;
        return Err(SessionError::Refused("busy: refused a second test".into()));
    };
    protocol::send(
        out,
        &Msg::Welcome {
            version: PROTOCOL_VERSION,
            proof,
        },
    )?;
    Ok(slot)
}

/// What one control connection was served.
enum Served {
    Test(TestParams),
    Tool(ToolRequest),
}

/// What every control connection shares with the server.
struct Shared<'a> {
    cfg: &'a ServerConfig,
    tests: &'a Arc<AtomicUsize>,
    tool_runs: &'a ToolRuns,
}

/// One control connection, from hello to results.
fn session(
    stream: &TcpStream,
    peer: SocketAddr,
    shared: &Shared,
    startup: Startup,
) -> Result<Served, SessionError> {
    let (cfg, tests) = (shared.cfg, shared.tests);
    stream.set_nodelay(true)?;
    stream.set_write_timeout(Some(cfg.idle_timeout.min(cfg.handshake_timeout)))?;
    let local = stream.local_addr()?.ip();
    let mut out = stream;
    let mut state = State::AwaitHello;
    let mut slot = None;
    // Until it has authenticated, the whole handshake must be done by this deadline.
    let handshake_by = Instant::now() + cfg.handshake_timeout.min(cfg.idle_timeout);
    let mut startup = Some(startup);
    loop {
        let by = if startup.is_some() {
            handshake_by
        } else {
            Instant::now() + cfg.idle_timeout
        };
        let msg = recv_by(stream, by)?;
        state = match (state, msg) {
            (State::AwaitHello, Msg::Hello { version, nonce }) => {
                if version != PROTOCOL_VERSION {
                    return Err(SessionError::Refused(format!(
                        "protocol version {version} is not supported: this server speaks version {PROTOCOL_VERSION}; use the same peakbench version on both sides"
                    )));
                }
                match &cfg.token {
                    Some(_) => {
                        if !auth::is_nonce(&nonce) {
                            return Err(SessionError::Refused(
                                "the hello's nonce is not 64 hex digits".into(),
                            ));
                        }
                        let server_nonce = auth::new_nonce()?;
                        protocol::send(
                            &mut out,
                            &Msg::Challenge {
                                nonce: server_nonce.clone(),
                            },
                        )?;
                        State::AwaitAuth {
                            client_nonce: nonce,
                            server_nonce,
                        }
                    }
                    None => {
                        drop(startup.take());
                        stream.set_write_timeout(Some(cfg.idle_timeout))?;
                        slot = Some(admit(&mut out, cfg, tests, None)?);
                        State::AwaitSetup
                    }
                }
            }
            (
                State::AwaitAuth {
                    client_nonce,
                    server_nonce,
                },
                Msg::Auth { proof },
            ) => {
                let token = cfg.token.as_deref().unwrap_or_default();
                let t = Transcript {
                    protocol: AUTH_PROTOCOL,
                    initiator_nonce: &client_nonce,
                    responder_nonce: &server_nonce,
                };
                if !t.verify(token, Speaker::Initiator, &proof) {
                    return Err(SessionError::Refused(
                        "authentication failed: the client's --token does not match the server's"
                            .into(),
                    ));
                }
                drop(startup.take());
                stream.set_write_timeout(Some(cfg.idle_timeout))?;
                let proof = t.proof(token, Speaker::Responder);
                slot = Some(admit(&mut out, cfg, tests, Some(proof))?);
                State::AwaitSetup
            }
            (State::AwaitSetup, Msg::ToolSetup { request }) => {
                serve_tool(stream, shared, &request, local)?;
                return Ok(Served::Tool(request));
            }
            (State::AwaitSetup, Msg::Setup { params }) => set_up(stream, params, local)?,
            (
                State::AwaitConnected {
                    params,
                    pending,
                    cookie,
                },
                Msg::Connected,
            ) => {
                let attached = pending.attach(
                    peer.ip(),
                    &params,
                    Instant::now() + cfg.idle_timeout.min(Duration::from_secs(5)),
                    cookie,
                )?;
                protocol::send(&mut out, &Msg::Go)?;
                State::AwaitStart {
                    params,
                    attached,
                    cookie,
                }
            }
            (
                State::AwaitStart {
                    params,
                    attached,
                    cookie,
                },
                Msg::Start,
            ) => {
                let results = run_test(stream, cfg, params, attached, cookie)?;
                // Free the slot first: the client may start its next test at once.
                drop(slot.take());
                protocol::send(&mut out, &results)?;
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
            return Ok(Served::Test(params));
        }
    }
}

/// Checks a test's parameters, opens its data sockets on `local` and announces them with the
/// test's cookie.
fn set_up(stream: &TcpStream, params: TestParams, local: IpAddr) -> Result<State, SessionError> {
    params
        .validate()
        .map_err(|e| SessionError::Refused(format!("refused parameters: {e}")))?;
    if let Some(cc) = params.socket.congestion {
        super::sockopt::loaded(cc).map_err(SessionError::Refused)?;
    }
    let pending = Pending::open(&params, local)?;
    let cookie = auth::random_u64()?;
    protocol::send(
        &mut &*stream,
        &Msg::Ready {
            data_ports: pending.ports()?,
            cookie,
        },
    )?;
    Ok(State::AwaitConnected {
        params,
        pending,
        cookie,
    })
}

/// Starts the reference tool's servers `request` asks for (with the test slot this session
/// holds, within [`MAX_TOOL_PROCESSES`] for the whole server), announces their ports, and
/// stops them when the client is done, goes away or its time is up, or the server stops.
fn serve_tool(
    stream: &TcpStream,
    shared: &Shared,
    request: &ToolRequest,
    local: IpAddr,
) -> Result<(), SessionError> {
    let Some(tools) = &shared.cfg.tools else {
        return Err(SessionError::Refused(
            "this server starts no reference tool: start it with `peakbench net serve --references` (in a cluster: `--reference` on every rank) to compare with iperf3 and sockperf".into(),
        ));
    };
    request
        .validate()
        .map_err(|e| SessionError::Refused(format!("refused reference run: {e}")))?;
    let refused = |e: String| SessionError::Refused(format!("{}: {e}", request.tool.name()));
    let run = shared
        .tool_runs
        .reserve(request.instances)
        .map_err(refused)?;
    let (ports, servers) = tools.start(request, local).map_err(refused)?;
    run.hold(servers).map_err(refused)?;
    let mut out = stream;
    protocol::send(&mut out, &Msg::ToolReady { ports })?;
    let until = Instant::now() + Duration::from_secs(request.seconds.into()) + TOOL_GRACE;
    let done = recv_by(stream, until);
    drop(run);
    match done? {
        Msg::ToolDone => Ok(protocol::send(&mut out, &Msg::ToolStopped)?),
        other => Err(SessionError::Refused(format!(
            "unexpected {} message, expected tool_done",
            other.name()
        ))),
    }
}

/// Runs the server's side of a started test while waiting for the client's `Done`; if the
/// client vanishes or says something else, the streams are stopped. The `Results` to send: the
/// server's figures, its CPU cost and its first data socket's options.
fn run_test(
    stream: &TcpStream,
    cfg: &ServerConfig,
    params: TestParams,
    attached: Attached,
    cookie: u64,
) -> Result<Msg, SessionError> {
    let w = Window {
        start: Instant::now(),
        omit: Duration::from_millis(params.omit_ms),
        duration: Duration::from_millis(params.duration_ms),
    };
    let stop = AtomicBool::new(false);
    let role = Role::of(&params, true);
    let probe = attached.probe();
    let before = crate::measure::cpu_usage::snapshot();
    let (side, done) = std::thread::scope(|s| {
        let streams = s.spawn(|| roles::run_end(attached, &params, true, w, cookie, &stop));
        let until = w.end() + UDP_GRACE + cfg.idle_timeout;
        let done = recv_by(stream, until);
        if !matches!(done, Ok(Msg::Done { .. })) {
            stop.store(true, Ordering::Relaxed);
        }
        // An echo or an acceptor stops when the client says it is done.
        if matches!(role, Role::Echo | Role::Accept) {
            stop.store(true, Ordering::Relaxed);
        }
        let side = streams
            .join()
            .unwrap_or_else(|_| Err(io::Error::other("the streams panicked")));
        (side, done)
    });
    let cpu = before.until(&crate::measure::cpu_usage::snapshot());
    match done? {
        Msg::Done { .. } => {
            let side = side?;
            let second = side.second.map(|s| s.stats);
            // Zero-copy sends of both halves (with --bidir the server sends on the second).
            let both = [Some(side.first.stats), second];
            let zc = |f: fn(&crate::wire::net_test::SideStats) -> u64| {
                both.iter().flatten().map(f).sum::<u64>()
            };
            let (sends, copied) = (zc(|s| s.zerocopy_sends), zc(|s| s.zerocopy_copied));
            Ok(Msg::Results {
                stats: side.first.stats,
                second,
                cpu: Some(Box::new(cpu)),
                socket: probe.map(|p| {
                    let asked = params.socket.zerocopy;
                    Box::new(p.read().with_zerocopy(asked, sends, copied))
                }),
            })
        }
        other => Err(SessionError::Refused(format!(
            "unexpected {} message, expected done",
            other.name()
        ))),
    }
}
