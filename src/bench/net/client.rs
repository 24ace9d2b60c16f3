//! The client's side of one test: the control conversation (see `protocol.rs`) around the
//! client's streams, and both sides' figures at the end.

use super::auth::{self, Speaker, Transcript};
use super::protocol::{
    self, AUTH_PROTOCOL, FrameError, Msg, PROTOCOL_VERSION, SideStats, TestKind, TestParams,
    ToolRequest,
};
use super::roles::{self, SideResult};
use super::streams::{UDP_GRACE, Window};
use super::transport;
use crate::results::params::CpuUse;
use crate::results::socket::SocketState;
use std::io;
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

/// How long the client waits for each reply of the server outside the measured window.
const REPLY_TIMEOUT: Duration = Duration::from_secs(10);

/// Where the server is and how to prove we may use it.
#[derive(Debug, Clone)]
pub struct Target {
    pub addr: SocketAddr,
    pub token: Option<String>,
}

/// Why a test could not run.
#[derive(Debug, thiserror::Error)]
pub enum NetError {
    #[error(
        "cannot connect to {addr}: {source}; is `peakbench net serve` running there (and the port open)?"
    )]
    Connect { addr: SocketAddr, source: io::Error },
    #[error("the server at {0} is busy: {1}")]
    Busy(SocketAddr, String),
    #[error("the server refused: {0}")]
    Refused(String),
    #[error("the server requires a token: pass the same --token as `peakbench net serve`")]
    NeedsToken,
    #[error(
        "the server at {0} did not prove that it knows the token: it was started without --token or with another one, or it is not the server you meant"
    )]
    ServerNotAuthenticated(SocketAddr),
    #[error("control connection: {0}")]
    Frame(#[from] FrameError),
    #[error("unexpected {got} message from the server, expected {expected}")]
    Unexpected {
        got: &'static str,
        expected: &'static str,
    },
    #[error("data streams: {0}")]
    Io(#[from] io::Error),
    #[error("{0}")]
    Usage(String),
    /// A signal cut the test short ([`crate::runner::stop::cut_short`]): its figures are not
    /// whole.
    #[error("interrupted")]
    Interrupted,
}

impl NetError {
    /// Errors the user fixes by changing the command line (exit code 2).
    pub fn is_usage(&self) -> bool {
        matches!(
            self,
            NetError::NeedsToken
                | NetError::ServerNotAuthenticated(_)
                | NetError::Usage(_)
                | NetError::Refused(_)
        )
    }
}

/// Both sides' figures of one test.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub client: SideResult,
    pub server: SideStats,
    /// A `bidir` test: the figures of the streams the server sends on (`client` and `server`
    /// are those of the streams the client sends on).
    pub client_second: Option<SideResult>,
    pub server_second: Option<SideStats>,
    /// The client's first data socket as the kernel held it at the end of the test.
    pub socket: Option<SocketState>,
    /// The server's, as it reported it.
    pub server_socket: Option<Box<SocketState>>,
    /// The CPU the test cost on this machine, from the start of the transfer to its end.
    pub cpu: CpuUse,
    /// What it cost the server's machine, as the server reported it.
    pub server_cpu: Option<Box<CpuUse>>,
}

fn expect(msg: Msg, expected: &'static str) -> NetError {
    match msg {
        Msg::Error { message } => NetError::Refused(message),
        other => NetError::Unexpected {
            got: other.name(),
            expected,
        },
    }
}

fn reply(ctl: &TcpStream) -> Result<Msg, NetError> {
    Ok(protocol::recv_until(ctl, Instant::now() + REPLY_TIMEOUT)?)
}

/// The control connection to `target`, authenticated (see [`handshake`]).
fn connect(target: &Target) -> Result<TcpStream, NetError> {
    let ctl = TcpStream::connect_timeout(&target.addr, Duration::from_secs(5)).map_err(|e| {
        NetError::Connect {
            addr: target.addr,
            source: e,
        }
    })?;
    ctl.set_nodelay(true)?;
    ctl.set_write_timeout(Some(REPLY_TIMEOUT))?;
    handshake(&ctl, target)?;
    Ok(ctl)
}

/// Runs one test against the server at `target`.
pub fn run_test(target: &Target, params: &TestParams) -> Result<Outcome, NetError> {
    let ctl = connect(target)?;
    let mut out = &ctl;
    protocol::send(&mut out, &Msg::Setup { params: *params })?;
    let (ports, cookie) = match reply(&ctl)? {
        Msg::Ready { data_ports, cookie } => (data_ports, cookie),
        other => return Err(expect(other, "ready")),
    };
    let attached = transport::connect(params, target.addr.ip(), &ports, cookie)?;
    protocol::send(&mut out, &Msg::Connected)?;
    // UDP hellos can be lost: resend them until the server has seen every stream.
    let until = Instant::now() + REPLY_TIMEOUT;
    loop {
        attached.hello(cookie);
        if protocol::readable(&ctl, Duration::from_millis(50)) {
            match reply(&ctl)? {
                Msg::Go => break,
                other => return Err(expect(other, "go")),
            }
        }
        if Instant::now() >= until {
            return Err(FrameError::Timeout.into());
        }
    }
    let w = Window {
        start: Instant::now(),
        omit: Duration::from_millis(params.omit_ms),
        duration: Duration::from_millis(params.duration_ms),
    };
    protocol::send(&mut out, &Msg::Start)?;
    let stop = AtomicBool::new(false);
    let probe = attached.probe();
    let before = crate::measure::cpu_usage::snapshot();
    let sides = roles::run_end(attached, params, false, w, cookie, &stop);
    // Cut short, the streams ended early: the server's figures are not waited for (dropping
    // the control connection ends its side).
    if crate::runner::stop::cut_short() {
        return Err(NetError::Interrupted);
    }
    let sides = sides?;
    let cpu = before.until(&crate::measure::cpu_usage::snapshot());
    let socket = probe.map(|p| {
        p.read().with_zerocopy(
            params.socket.zerocopy,
            sides.first.stats.zerocopy_sends,
            sides.first.stats.zerocopy_copied,
        )
    });
    protocol::send(
        &mut out,
        &Msg::Done {
            stats: sides.first.stats,
            second: sides.second.as_ref().map(|s| s.stats),
        },
    )?;
    let results = protocol::recv_until(&ctl, Instant::now() + UDP_GRACE + REPLY_TIMEOUT)?;
    let Msg::Results {
        stats,
        second,
        cpu: server_cpu,
        socket: server_socket,
    } = results
    else {
        return Err(expect(results, "results"));
    };
    // The server's word, checked: figures no machine can have are refused.
    let lie = |what: &str, e: String| NetError::Refused(format!("the server sent {what}: {e}"));
    if let Some(c) = &server_cpu {
        c.validate().map_err(|e| lie("impossible CPU figures", e))?;
    }
    if let Some(s) = &server_socket {
        s.validate()
            .map_err(|e| lie("impossible socket figures", e))?;
    }
    if second.is_some() != (params.bidir || params.load_streams > 0) {
        return Err(lie(
            "figures of the wrong shape",
            "two sets with --bidir or a load, one otherwise".into(),
        ));
    }
    // Its streams' figures: a throughput stream's rates are taken over its window (the
    // second set is always one: --bidir's other way, or the load's bulk streams).
    stats
        .validate(params, params.kind == TestKind::Throughput)
        .map_err(|e| lie("impossible figures for its side", e))?;
    if let Some(s) = &second {
        s.validate(params, true)
            .map_err(|e| lie("impossible figures for its side", e))?;
    }
    Ok(Outcome {
        client: sides.first,
        server: stats,
        client_second: sides.second,
        server_second: second,
        socket,
        server_socket,
        cpu,
        server_cpu,
    })
}

/// A reference tool's servers that `net serve --references` started for this client; they
/// stop when [`ToolSession::finish`] says the run is done, or when this is dropped (the
/// control connection closes).
#[derive(Debug)]
pub struct ToolSession {
    ctl: TcpStream,
    /// The ports the servers listen on, one per instance asked for.
    pub ports: Vec<u16>,
}

/// Asks the server at `target` for the reference tool's servers of `request`.
pub fn start_tools(target: &Target, request: &ToolRequest) -> Result<ToolSession, NetError> {
    let ctl = connect(target)?;
    protocol::send(&mut &ctl, &Msg::ToolSetup { request: *request })?;
    match reply(&ctl)? {
        Msg::ToolReady { ports } if ports.len() == request.instances as usize => {
            Ok(ToolSession { ctl, ports })
        }
        Msg::ToolReady { ports } => Err(NetError::Refused(format!(
            "the server announced {} ports for {} {} servers",
            ports.len(),
            request.instances,
            request.tool.name()
        ))),
        other => Err(expect(other, "tool_ready")),
    }
}

impl ToolSession {
    /// Tells the server the run is over and waits until it has stopped the servers.
    pub fn finish(self) -> Result<(), NetError> {
        protocol::send(&mut &self.ctl, &Msg::ToolDone)?;
        match reply(&self.ctl)? {
            Msg::ToolStopped => Ok(()),
            other => Err(expect(other, "tool_stopped")),
        }
    }
}

/// Hello to Welcome: with a token, both sides prove that they know it (the server second, so a
/// server that cannot is left before any test).
fn handshake(ctl: &TcpStream, target: &Target) -> Result<(), NetError> {
    let mut out = ctl;
    let nonce = auth::new_nonce()?;
    protocol::send(
        &mut out,
        &Msg::Hello {
            version: PROTOCOL_VERSION,
            nonce: nonce.clone(),
        },
    )?;
    let welcome = match reply(ctl)? {
        Msg::Challenge {
            nonce: server_nonce,
        } => {
            let token = target.token.as_deref().ok_or(NetError::NeedsToken)?;
            let t = Transcript {
                protocol: AUTH_PROTOCOL,
                initiator_nonce: &nonce,
                responder_nonce: &server_nonce,
            };
            protocol::send(
                &mut out,
                &Msg::Auth {
                    proof: t.proof(token, Speaker::Initiator),
                },
            )?;
            match reply(ctl)? {
                Msg::Welcome {
                    proof: Some(proof), ..
                } if t.verify(token, Speaker::Responder, &proof) => return Ok(()),
                Msg::Welcome { .. } => return Err(NetError::ServerNotAuthenticated(target.addr)),
                other => other,
            }
        }
        other => other,
    };
    match welcome {
        // A server without a token cannot prove one: a client with a token does not trust it.
        Msg::Welcome { .. } if target.token.is_some() => {
            Err(NetError::ServerNotAuthenticated(target.addr))
        }
        Msg::Welcome { .. } => Ok(()),
        Msg::Busy { reason } => Err(NetError::Busy(target.addr, reason)),
        other => Err(expect(other, "welcome")),
    }
}
