//! The client's side of the control connection: where the server is, reaching it and proving
//! the token both ways (see [`protocol`](super::protocol)), why a conversation failed, and the
//! session that holds a reference tool's servers up.

use super::auth::{self, Speaker, Transcript};
use super::frame::FrameError;
use super::protocol::{self, AUTH_PROTOCOL, Msg, PROTOCOL_VERSION};
use super::tools::ToolRequest;
use std::io;
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

/// How long the client waits for each reply of the server outside the measured window.
pub const REPLY_TIMEOUT: Duration = Duration::from_secs(10);

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

/// The server's message when another was expected: its refusal, or an unexpected message.
pub fn expect(msg: Msg, expected: &'static str) -> NetError {
    match msg {
        Msg::Error { message } => NetError::Refused(message),
        other => NetError::Unexpected {
            got: other.name(),
            expected,
        },
    }
}

pub fn reply(ctl: &TcpStream) -> Result<Msg, NetError> {
    Ok(protocol::recv_until(ctl, Instant::now() + REPLY_TIMEOUT)?)
}

/// The control connection to `target`, authenticated (with a token each side proves it, the
/// server second).
pub fn connect(target: &Target) -> Result<TcpStream, NetError> {
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
