//! The control connection's protocol: versioned, length-prefixed JSON messages.
//!
//! Every message is one frame: a 4-byte big-endian length, then that many bytes of UTF-8 JSON
//! that parse into [`Msg`] (an object with a `"type"` field). Frames longer than
//! [`MAX_FRAME_BYTES`] are refused before anything is allocated, so a peer that announces 2 GB
//! costs nothing. One control connection carries one test (one repetition):
//!
//! ```text
//! client                                   server
//! Hello {version, nonce}           ->
//!                                  <-      Challenge {nonce}      (only with --token)
//! Auth {proof}                     ->
//!                                  <-      Welcome {version, proof} | Busy {reason} | Error {message}
//! Setup {TestParams}               ->
//!                                  <-      Ready {data_ports, cookie}  (data sockets are open)
//! (client opens the data connections, each starting with the cookie; UDP streams send hellos)
//! Connected                        ->
//!                                  <-      Go                      (every stream is attached)
//! Start                            ->      (both sides start their streams together)
//! Done {SideStats}                 ->      (the client's side has finished)
//!                                  <-      Results {SideStats, cpu, socket}  (the server's
//!                                          view, its CPU cost and its socket's options)
//! ```
//!
//! Instead of `Setup`, a client may ask a server started with `--references` for a reference
//! tool's servers (iperf3's or sockperf's), bound to the address it reached, for one test:
//!
//! ```text
//! ToolSetup {ToolRequest}          ->
//!                                  <-      ToolReady {ports}       (the tool's servers listen)
//! (the client runs the tool's clients against those ports)
//! ToolDone                         ->      (or EOF, or the request's time runs out)
//!                                  <-      ToolStopped             (the servers are gone)
//! ```
//!
//! With a token, authentication is mutual (see [`auth`](super::auth)): the client's `Hello` and
//! the server's `Challenge` carry a nonce each; the client proves it knows the token in `Auth`,
//! the server in `Welcome`, each proof bound to both nonces and its direction. The server takes
//! a test slot only after the client's proof, and a client with a token goes on only after the
//! server's.
//!
//! Every data stream is bound to its test by the 64-bit random `cookie` of `Ready`: the first 8
//! bytes of each TCP data connection, and in every UDP datagram (hellos included), so that
//! nothing but the client that set the test up can join or feed its streams.

use super::frame::{self, FrameError};
use super::net_test::{SideStats, TestParams};
use super::tools::ToolRequest;
use serde::{Deserialize, Serialize};
use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::time::Instant;

use crate::results::params::CpuUse;
use crate::results::socket::SocketState;

/// The protocol version sent in `Hello` and `Welcome`; a peer with another version is refused.
pub const PROTOCOL_VERSION: u32 = 4;
/// What the proofs of this protocol are bound to (with both nonces and the direction).
pub const AUTH_PROTOCOL: &str = "peakbench-net-v4";
/// The largest frame either side accepts (the length prefix is checked before allocation).
pub const MAX_FRAME_BYTES: u32 = 64 * 1024;
/// The default TCP port of `peakbench net serve`.
pub const DEFAULT_PORT: u16 = 5301;

/// One control message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Msg {
    Hello {
        version: u32,
        /// The client's nonce (checked only by a server with a token; absent before version 3,
        /// so that an old client is told about versions, not about a missing field).
        #[serde(default)]
        nonce: String,
    },
    Challenge {
        nonce: String,
    },
    Auth {
        proof: String,
    },
    Welcome {
        version: u32,
        /// The server's proof that it knows the token (only with a token).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        proof: Option<String>,
    },
    Busy {
        reason: String,
    },
    Error {
        message: String,
    },
    Setup {
        params: TestParams,
    },
    Ready {
        data_ports: Vec<u16>,
        /// Binds the data streams to this test.
        cookie: u64,
    },
    Connected,
    Go,
    Start,
    Done {
        stats: SideStats,
        /// A `bidir` test: the figures of the second half of the streams (server to client);
        /// `stats` are the first half's. Since version 4.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        second: Option<SideStats>,
    },
    Results {
        stats: SideStats,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        second: Option<SideStats>,
        /// What the test cost the server's machine in CPU (checked: it is a peer's word).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cpu: Option<Box<CpuUse>>,
        /// The server's first data socket as its kernel held it at the end.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        socket: Option<Box<SocketState>>,
    },
    ToolSetup {
        request: ToolRequest,
    },
    ToolReady {
        ports: Vec<u16>,
    },
    ToolDone,
    ToolStopped,
}

impl Msg {
    /// The message's type name, for "unexpected X" errors.
    pub fn name(&self) -> &'static str {
        match self {
            Msg::Hello { .. } => "hello",
            Msg::Challenge { .. } => "challenge",
            Msg::Auth { .. } => "auth",
            Msg::Welcome { .. } => "welcome",
            Msg::Busy { .. } => "busy",
            Msg::Error { .. } => "error",
            Msg::Setup { .. } => "setup",
            Msg::Ready { .. } => "ready",
            Msg::Connected => "connected",
            Msg::Go => "go",
            Msg::Start => "start",
            Msg::Done { .. } => "done",
            Msg::Results { .. } => "results",
            Msg::ToolSetup { .. } => "tool_setup",
            Msg::ToolReady { .. } => "tool_ready",
            Msg::ToolDone => "tool_done",
            Msg::ToolStopped => "tool_stopped",
        }
    }
}

/// Encodes a message as one frame.
pub fn encode(msg: &Msg) -> Vec<u8> {
    frame::encode_frame(msg)
}

/// Decodes one frame's body.
pub fn decode(body: &[u8]) -> Result<Msg, FrameError> {
    serde_json::from_slice(body).map_err(|e| FrameError::Malformed(e.to_string()))
}

/// Parses as many whole frames as `buf` holds: the messages, and the bytes consumed. A frame
/// that is too long or malformed is an error (the connection is then closed).
pub fn decode_frames(buf: &[u8]) -> Result<(Vec<Msg>, usize), FrameError> {
    let mut msgs = Vec::new();
    let mut at = 0;
    while buf.len() - at >= 4 {
        let len = u32::from_be_bytes([buf[at], buf[at + 1], buf[at + 2], buf[at + 3]]);
        if len > MAX_FRAME_BYTES {
            return Err(FrameError::TooLong(len, MAX_FRAME_BYTES));
        }
        let end = at + 4 + len as usize;
        if buf.len() < end {
            break;
        }
        msgs.push(decode(&buf[at + 4..end])?);
        at = end;
    }
    Ok((msgs, at))
}

/// Writes one message.
pub fn send(w: &mut impl Write, msg: &Msg) -> io::Result<()> {
    frame::write_frame(w, msg)
}

/// Reads one message; the stream's read timeout bounds the wait.
pub fn recv(r: &mut impl Read) -> Result<Msg, FrameError> {
    frame::read_frame(r, MAX_FRAME_BYTES)
}

/// Reads one message that must be complete by `until` (a peer that trickles bytes is cut off
/// as surely as a silent one).
pub fn recv_until(stream: &TcpStream, until: Instant) -> Result<Msg, FrameError> {
    frame::read_frame_until(stream, until, MAX_FRAME_BYTES)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::params::Proto;
    use crate::wire::net_test::TestKind;
    use crate::wire::tools::RefTool;
    use proptest::prelude::*;

    fn params() -> TestParams {
        super::super::net_test::sample()
    }

    fn every_message() -> Vec<Msg> {
        let stats = SideStats {
            bytes_sent: 1,
            bytes_received: 2,
            messages_sent: 3,
            messages_received: 4,
            window_ns: 5,
            out_of_order: 6,
            jitter_ns: 7.5,
            lost: 8,
            zerocopy_sends: 9,
            zerocopy_copied: 9,
            steady_ns: Some(10),
        };
        let cpu = CpuUse {
            window_s: 1.0,
            process_user_cpus: 0.25,
            process_system_cpus: 0.5,
            user_cpus: Some(0.25),
            system_cpus: None,
            irq_cpus: Some(0.0),
            softirq_cpus: Some(0.125),
            online_cpus: 2,
            service_demand_us_per_kb: Some(0.5),
        };
        let socket = SocketState {
            send_buffer_bytes: Some(1 << 20),
            congestion: Some(crate::results::socket::CcName::new("cubic").unwrap()),
            mss_bytes: Some(1448),
            nodelay: Some(false),
            ..Default::default()
        };
        vec![
            Msg::Hello {
                version: 1,
                nonce: "ef".into(),
            },
            Msg::Challenge { nonce: "ab".into() },
            Msg::Auth { proof: "cd".into() },
            Msg::Welcome {
                version: 1,
                proof: None,
            },
            Msg::Welcome {
                version: 1,
                proof: Some("01".into()),
            },
            Msg::Busy {
                reason: "a test is running".into(),
            },
            Msg::Error {
                message: "no".into(),
            },
            Msg::Setup { params: params() },
            Msg::Ready {
                data_ports: vec![1, 65535],
                cookie: u64::MAX,
            },
            Msg::Connected,
            Msg::Go,
            Msg::Start,
            Msg::Done {
                stats,
                second: None,
            },
            Msg::Done {
                stats,
                second: Some(stats),
            },
            Msg::Results {
                stats,
                second: None,
                cpu: None,
                socket: None,
            },
            Msg::Results {
                stats,
                second: Some(stats),
                cpu: Some(Box::new(cpu)),
                socket: Some(Box::new(socket)),
            },
            Msg::ToolSetup {
                request: ToolRequest {
                    tool: RefTool::Sockperf,
                    proto: Proto::Udp,
                    instances: 2,
                    seconds: 3,
                },
            },
            Msg::ToolReady {
                ports: vec![1, 65535],
            },
            Msg::ToolDone,
            Msg::ToolStopped,
        ]
    }

    #[test]
    fn every_message_round_trips() {
        let all = every_message();
        let mut wire = Vec::new();
        for m in &all {
            send(&mut wire, m).unwrap();
        }
        let mut r = &wire[..];
        for m in &all {
            assert_eq!(&recv(&mut r).unwrap(), m, "{}", m.name());
        }
        assert!(matches!(recv(&mut r), Err(FrameError::Closed)));
        let (msgs, used) = decode_frames(&wire).unwrap();
        assert_eq!(msgs, all);
        assert_eq!(used, wire.len());
    }

    #[test]
    fn oversized_and_malformed_frames_are_refused() {
        let huge = 2_000_000_000u32.to_be_bytes();
        assert!(matches!(
            recv(&mut &huge[..]),
            Err(FrameError::TooLong(2_000_000_000, MAX_FRAME_BYTES))
        ));
        assert!(matches!(decode_frames(&huge), Err(FrameError::TooLong(..))));
        let mut junk = 5u32.to_be_bytes().to_vec();
        junk.extend_from_slice(b"{\"ty");
        assert!(matches!(recv(&mut &junk[..]), Err(FrameError::Closed)));
        junk.push(b'x');
        assert!(matches!(
            recv(&mut &junk[..]),
            Err(FrameError::Malformed(_))
        ));
        let unknown = encode(&Msg::Go);
        let mut bad = unknown.clone();
        bad[6] = b'X';
        assert!(recv(&mut &bad[..]).is_err());
        let extra = br#"{"type":"hello","version":1,"extra":1}"#;
        assert!(decode(extra).is_err(), "unknown fields are refused");
        // An unknown tool is a malformed message, not a program the server looks for.
        let foreign = br#"{"type":"tool_setup","request":{"tool":"sh","proto":"tcp","instances":1,"seconds":1}}"#;
        assert!(decode(foreign).is_err());
    }

    /// A version-2 client's hello (no nonce) is understood, so that it can be told about
    /// versions.
    #[test]
    fn an_old_hello_parses() {
        let old = br#"{"type":"hello","version":2}"#;
        assert_eq!(
            decode(old).unwrap(),
            Msg::Hello {
                version: 2,
                nonce: String::new()
            }
        );
    }

    fn arb_msg() -> impl Strategy<Value = Msg> {
        let stats =
            (any::<u64>(), any::<u64>(), any::<u32>(), 0.0f64..1e12).prop_map(|(a, b, c, j)| {
                SideStats {
                    bytes_sent: a,
                    bytes_received: b,
                    messages_sent: c as u64,
                    messages_received: a / 2,
                    window_ns: b / 3,
                    out_of_order: c as u64 / 5,
                    jitter_ns: j,
                    lost: c as u64 / 7,
                    zerocopy_sends: a / 3,
                    zerocopy_copied: a / 5,
                    steady_ns: (c % 2 == 0).then_some(b / 7),
                }
            });
        let params = (
            any::<bool>(),
            any::<bool>(),
            any::<u32>(),
            any::<u32>(),
            any::<u64>(),
            any::<u64>(),
            any::<bool>(),
            any::<u64>(),
            any::<u32>(),
            any::<bool>(),
            (
                proptest::option::of(any::<u32>()),
                proptest::option::of(any::<u32>()),
                proptest::option::of(any::<bool>()),
                any::<bool>(),
            ),
            (any::<u64>(), any::<u32>(), any::<u32>(), any::<u8>()),
        )
            .prop_map(
                |(k, p, s, m, d, o, r, b, bp, bidir, so, (amount, mps, load, kind))| TestParams {
                    kind: match (k, kind % 3) {
                        (_, 0) => TestKind::Connect,
                        (true, _) => TestKind::Latency,
                        (false, _) => TestKind::Throughput,
                    },
                    proto: if p { Proto::Udp } else { Proto::Tcp },
                    streams: s,
                    message_bytes: m,
                    duration_ms: d,
                    omit_ms: o,
                    reverse: r,
                    rate_bps: b,
                    busy_poll_us: bp,
                    bidir,
                    socket: crate::results::socket::SocketOptions {
                        window_bytes: so.0,
                        congestion: None,
                        mss_bytes: so.1,
                        nodelay: so.2,
                        zerocopy: so.3,
                    },
                    amount_per_stream: amount,
                    mps,
                    load_streams: load,
                    sustain: kind % 2 == 1,
                },
            );
        prop_oneof![
            (any::<u32>(), ".{0,70}").prop_map(|(version, nonce)| Msg::Hello { version, nonce }),
            ".{0,40}".prop_map(|nonce| Msg::Challenge { nonce }),
            ".{0,40}".prop_map(|proof| Msg::Auth { proof }),
            (any::<u32>(), proptest::option::of(".{0,70}"))
                .prop_map(|(version, proof)| Msg::Welcome { version, proof }),
            ".{0,40}".prop_map(|reason| Msg::Busy { reason }),
            ".{0,200}".prop_map(|message| Msg::Error { message }),
            params.prop_map(|params| Msg::Setup { params }),
            (
                proptest::collection::vec(any::<u16>(), 0..130),
                any::<u64>()
            )
                .prop_map(|(data_ports, cookie)| Msg::Ready { data_ports, cookie }),
            Just(Msg::Connected),
            Just(Msg::Go),
            Just(Msg::Start),
            (stats.clone(), proptest::option::of(stats.clone()))
                .prop_map(|(stats, second)| Msg::Done { stats, second }),
            (stats.clone(), proptest::option::of(stats)).prop_map(|(stats, second)| {
                Msg::Results {
                    stats,
                    second,
                    cpu: None,
                    socket: None,
                }
            }),
        ]
    }

    proptest! {
        #[test]
        fn any_message_round_trips(msgs in proptest::collection::vec(arb_msg(), 1..8)) {
            let mut wire = Vec::new();
            for m in &msgs {
                wire.extend(encode(m));
            }
            let (back, used) = decode_frames(&wire).unwrap();
            prop_assert_eq!(used, wire.len());
            prop_assert_eq!(back, msgs);
        }

        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
            let _ = decode_frames(&bytes);
            let _ = recv(&mut &bytes[..]);
            let _ = decode(&bytes);
        }

        #[test]
        fn a_frame_cut_anywhere_waits_for_the_rest(msg in arb_msg(), cut in 0usize..64) {
            let wire = encode(&msg);
            let cut = cut.min(wire.len() - 1);
            let (msgs, used) = decode_frames(&wire[..cut]).unwrap();
            prop_assert!(msgs.is_empty());
            prop_assert_eq!(used, 0);
        }

        #[test]
        fn mutated_frames_never_panic(msg in arb_msg(), at in any::<usize>(), byte in any::<u8>()) {
            let mut wire = encode(&msg);
            let i = at % wire.len();
            wire[i] = byte;
            let _ = decode_frames(&wire);
        }
    }
}
