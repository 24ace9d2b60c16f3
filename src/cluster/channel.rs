//! One rank's connection to the coordinator, from both ends: the join handshake and, with a
//! token, every later message sealed (see [`auth`](crate::wire::auth)).
//!
//! ```text
//! rank                                     coordinator
//! Join {version, node, nonce}      ->
//!                                  <-      Challenge {nonce}           (only with --token)
//! Auth {proof}                     ->
//!                                  <-      Welcome {version, proof} | Refused {reason}
//! (with a token, every message from here on carries a tag over the session key, its direction
//!  and its sequence number)
//! ```
//!
//! Until the welcome, both ends read frames of at most the network benchmark's
//! [`MAX_FRAME_BYTES`](protocol::MAX_FRAME_BYTES) (64 KiB): a peer that has not proved the token
//! cannot make the other end hold a node report's worth of memory
//! ([`messages::MAX_FRAME_BYTES`]); a larger frame closes the connection after its length.

use super::messages::{self, Msg, NodeHello};
use crate::wire::auth::{self, Sealer, Speaker, Transcript};
use crate::wire::frame::{self, FrameError};
use crate::wire::protocol;
use std::io;
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

/// What the proofs of the cluster protocol are bound to.
const AUTH_PROTOCOL: &str = "peakbench-cluster-v2";

/// A connection that sends and receives cluster messages, sealed once a token has been proved.
pub struct Channel {
    stream: TcpStream,
    sealer: Option<Sealer>,
    /// The largest frame [`recv`](Channel::recv) reads: the join's until the welcome, a node
    /// report's after it.
    max_frame: u32,
}

impl Channel {
    /// A channel that has not been through the join: small frames only, not sealed.
    pub fn new(stream: TcpStream) -> Channel {
        Channel {
            stream,
            sealer: None,
            max_frame: protocol::MAX_FRAME_BYTES,
        }
    }

    /// The join is over (the welcome sent or received): from here on, a frame may hold a
    /// node's report; with a token, every message is sealed with `sealer`.
    fn joined(&mut self, sealer: Option<Sealer>) {
        self.sealer = sealer;
        self.max_frame = messages::MAX_FRAME_BYTES;
    }

    pub fn stream(&self) -> &TcpStream {
        &self.stream
    }

    /// Whether messages are sealed.
    pub fn sealed(&self) -> bool {
        self.sealer.is_some()
    }

    pub fn send(&mut self, m: &Msg) -> io::Result<()> {
        let mut body = serde_json::to_vec(m).map_err(io::Error::other)?;
        if let Some(s) = &mut self.sealer {
            s.seal(&mut body);
        }
        frame::write_raw(&mut &self.stream, &body)
    }

    /// Reads one message that must be complete by `until`; a sealed channel refuses one whose
    /// tag is wrong ([`FrameError::Forged`]). Before the join is over, a frame longer than
    /// [`protocol::MAX_FRAME_BYTES`] is refused ([`FrameError::TooLong`]) before its body is
    /// read.
    pub fn recv(&mut self, until: Instant) -> Result<Msg, FrameError> {
        let raw = frame::read_raw_until(&self.stream, until, self.max_frame)?;
        match &mut self.sealer {
            Some(s) => frame::parse(s.open(&raw).ok_or(FrameError::Forged)?),
            None => frame::parse(&raw),
        }
    }
}

/// Why a rank could not join.
#[derive(Debug, thiserror::Error)]
pub enum JoinError {
    #[error("the coordinator refused this rank: {0}")]
    Refused(String),
    #[error(
        "the coordinator requires a token: give this rank the same --token (or PEAKBENCH_TOKEN) as rank 0"
    )]
    NeedsToken,
    #[error(
        "the coordinator did not prove that it knows the token: rank 0 runs without --token or with another one, or it is not rank 0 of this run"
    )]
    NotAuthenticated,
    #[error("the coordinator connection failed: {0}")]
    Frame(#[from] FrameError),
    #[error("the coordinator sent {0} during the join")]
    Unexpected(&'static str),
}

impl From<io::Error> for JoinError {
    fn from(e: io::Error) -> Self {
        JoinError::Frame(e.into())
    }
}

/// The rank's side: joins as `node`, proves the token and checks the coordinator's proof; the
/// channel is sealed when there is a token.
pub fn join(
    stream: TcpStream,
    node: NodeHello,
    token: Option<&str>,
    until: Instant,
) -> Result<Channel, JoinError> {
    let mut ch = Channel::new(stream);
    let nonce = auth::new_nonce()?;
    ch.send(&Msg::Join {
        version: messages::VERSION,
        node,
        nonce: nonce.clone(),
    })?;
    let reply = match ch.recv(until)? {
        Msg::Challenge { nonce: theirs } => {
            let token = token.ok_or(JoinError::NeedsToken)?;
            let t = Transcript {
                protocol: AUTH_PROTOCOL,
                initiator_nonce: &nonce,
                responder_nonce: &theirs,
            };
            ch.send(&Msg::Auth {
                proof: t.proof(token, Speaker::Initiator),
            })?;
            match ch.recv(until)? {
                Msg::Welcome {
                    proof: Some(proof), ..
                } if t.verify(token, Speaker::Responder, &proof) => {
                    ch.joined(Some(Sealer::new(t.session_key(token), Speaker::Initiator)));
                    return Ok(ch);
                }
                Msg::Welcome { .. } => return Err(JoinError::NotAuthenticated),
                other => other,
            }
        }
        other => other,
    };
    match reply {
        // A coordinator without a token cannot prove one: a rank with a token does not trust it.
        Msg::Welcome { .. } if token.is_some() => Err(JoinError::NotAuthenticated),
        Msg::Welcome { .. } => {
            ch.joined(None);
            Ok(ch)
        }
        Msg::Refused { reason } => Err(JoinError::Refused(reason)),
        other => Err(JoinError::Unexpected(other.name())),
    }
}

/// A connection that has said who it is (and proved the token, when there is one), not yet
/// welcomed: the coordinator checks that it fits the run first.
pub struct Candidate {
    pub ch: Channel,
    pub peer: SocketAddr,
    pub node: NodeHello,
    /// The coordinator's proof and the session key (with a token).
    proof: Option<(String, [u8; 32])>,
}

impl Candidate {
    /// Welcomes the rank; from here on, with a token, the channel is sealed.
    pub fn welcome(mut self) -> io::Result<Channel> {
        let (proof, key) = self.proof.take().unzip();
        self.ch.send(&Msg::Welcome {
            version: messages::VERSION,
            proof,
        })?;
        self.ch
            .joined(key.map(|key| Sealer::new(key, Speaker::Responder)));
        Ok(self.ch)
    }

    /// Refuses the rank with `reason` (sent in the clear: it may not know the token).
    pub fn refuse(mut self, reason: String) -> String {
        let _ = self.ch.send(&Msg::Refused {
            reason: reason.clone(),
        });
        reason
    }
}

/// The coordinator's side of one connection: reads the join and, with a token, checks the
/// rank's proof, all by `until`. A refusal is sent to the rank and returned.
pub fn accept(
    stream: TcpStream,
    peer: SocketAddr,
    token: Option<&str>,
    until: Instant,
) -> Result<Candidate, String> {
    let _ = stream.set_nodelay(true);
    let _ = stream.set_write_timeout(Some(Duration::from_secs(10)));
    let mut ch = Channel::new(stream);
    let refuse = |ch: &mut Channel, reason: String| {
        let _ = ch.send(&Msg::Refused {
            reason: reason.clone(),
        });
        reason
    };
    // A join is small: the network benchmark's frame limit (the channel's until the welcome).
    let (node, nonce) = match ch.recv(until).map_err(|e| e.to_string())? {
        Msg::Join {
            version,
            node,
            nonce,
        } if version == messages::VERSION => (node, nonce),
        Msg::Join { version, .. } => {
            return Err(refuse(
                &mut ch,
                format!(
                    "protocol version {version}, the coordinator speaks {}; run the same peakbench on every node",
                    messages::VERSION
                ),
            ));
        }
        other => return Err(format!("expected join, got {}", other.name())),
    };
    let Some(token) = token else {
        return Ok(Candidate {
            ch,
            peer,
            node,
            proof: None,
        });
    };
    if !auth::is_nonce(&nonce) {
        return Err(refuse(
            &mut ch,
            "the join's nonce is not 64 hex digits".into(),
        ));
    }
    let ours = auth::new_nonce().map_err(|e| e.to_string())?;
    ch.send(&Msg::Challenge {
        nonce: ours.clone(),
    })
    .map_err(|e| e.to_string())?;
    let t = Transcript {
        protocol: AUTH_PROTOCOL,
        initiator_nonce: &nonce,
        responder_nonce: &ours,
    };
    // Still the join's limit: the proof is checked only once the frame is read.
    match ch.recv(until).map_err(|e| e.to_string())? {
        Msg::Auth { proof } if t.verify(token, Speaker::Initiator, &proof) => Ok(Candidate {
            ch,
            peer,
            node,
            proof: Some((t.proof(token, Speaker::Responder), t.session_key(token))),
        }),
        Msg::Auth { .. } => Err(refuse(
            &mut ch,
            "authentication failed: this rank's --token does not match rank 0's".into(),
        )),
        other => Err(format!("expected auth, got {}", other.name())),
    }
}
