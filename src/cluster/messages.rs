//! The coordinator's protocol: the network benchmark's framing (a 4-byte big-endian length,
//! then JSON with a `"type"` field), versioned, with a larger frame limit because a node's
//! results travel in one message.
//!
//! ```text
//! rank                                     coordinator (rank 0)
//! Join {version, node, nonce}      ->
//!                                  <-      Challenge {nonce}       (only with --token)
//! Auth {proof}                     ->
//!                                  <-      Welcome {version, proof} | Refused {reason}
//!                                  <-      RunLocal                (your turn: the profile)
//! LocalDone {report, failed_jobs}  ->
//!                                  <-      RunTest {test}          (be the client of a link)
//! TestDone {records, error}        ->
//!                                  <-      Finish {ok, message}
//! ```
//!
//! The coordinator sends one command to each rank of a step and waits for every reply before
//! the next step: that wait is the barrier between phases and between rounds. With a token,
//! the join is a mutual proof of it and every message after `Welcome` is sealed
//! ([`channel`](super::channel)).

use crate::results::{Report, ResultRecord};
use crate::wire::net_test::TestParams;
use serde::{Deserialize, Serialize};
use std::net::{IpAddr, SocketAddr};

/// Sent in `Join` and `Welcome` (and in the rendezvous file); another version is refused.
pub const VERSION: u32 = 2;
/// The largest message (a node's whole report), once the join is over; until then both ends
/// read at most the network benchmark's
/// [`MAX_FRAME_BYTES`](crate::wire::protocol::MAX_FRAME_BYTES) (see
/// [`channel`](super::channel)).
pub const MAX_FRAME_BYTES: u32 = 64 * 1024 * 1024;

/// Who a rank is, as it tells the coordinator.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeHello {
    pub rank: u32,
    pub world_size: u32,
    pub local_rank: Option<u32>,
    pub identity_source: String,
    pub hostname: String,
    pub machine_id: String,
    /// The port of this rank's network server.
    pub net_port: u16,
    /// The address the others should use for this rank (`--advertise`); else the address its
    /// connection to the coordinator came from.
    pub advertise: Option<IpAddr>,
}

/// One link test: the receiving rank is the client, `server` is the other rank's network
/// server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkTest {
    pub pattern: crate::results::params::LinkPattern,
    pub src: u32,
    pub dst: u32,
    pub server: SocketAddr,
    pub throughput: Option<TestParams>,
    pub latency: Option<TestParams>,
    pub repeat: u32,
    /// Run the reference tools against the servers the destination rank starts for them
    /// (absent from coordinators before issue 29: none).
    #[serde(default)]
    pub reference: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Msg {
    Join {
        version: u32,
        node: NodeHello,
        /// The rank's nonce (absent before version 2, so that an old rank is told about
        /// versions).
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
        /// The coordinator's proof that it knows the token (only with a token).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        proof: Option<String>,
    },
    Refused {
        reason: String,
    },
    RunLocal,
    LocalDone {
        /// None when nothing could be measured (the reason is in `failed_jobs`).
        report: Option<Box<Report>>,
        failed_jobs: Vec<String>,
    },
    RunTest {
        test: LinkTest,
    },
    TestDone {
        records: Vec<ResultRecord>,
        error: Option<String>,
    },
    Finish {
        ok: bool,
        message: String,
    },
}

impl Msg {
    pub fn name(&self) -> &'static str {
        match self {
            Msg::Join { .. } => "join",
            Msg::Challenge { .. } => "challenge",
            Msg::Auth { .. } => "auth",
            Msg::Welcome { .. } => "welcome",
            Msg::Refused { .. } => "refused",
            Msg::RunLocal => "run_local",
            Msg::LocalDone { .. } => "local_done",
            Msg::RunTest { .. } => "run_test",
            Msg::TestDone { .. } => "test_done",
            Msg::Finish { .. } => "finish",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::frame::{self, FrameError};
    use proptest::prelude::*;

    #[test]
    fn messages_round_trip_and_unknown_fields_are_refused() {
        let m = Msg::Join {
            version: VERSION,
            node: NodeHello {
                rank: 2,
                world_size: 3,
                local_rank: Some(0),
                identity_source: "open_mpi".into(),
                hostname: "n2".into(),
                machine_id: "abc".into(),
                net_port: 40000,
                advertise: None,
            },
            nonce: String::new(),
        };
        let wire = frame::encode_frame(&m);
        let back: Msg = frame::read_frame(&mut &wire[..], MAX_FRAME_BYTES).unwrap();
        assert!(matches!(back, Msg::Join { node, .. } if node.rank == 2 && node.net_port == 40000));
        let bad = br#"{"type":"welcome","version":2,"extra":1}"#;
        let mut framed = (bad.len() as u32).to_be_bytes().to_vec();
        framed.extend_from_slice(bad);
        assert!(matches!(
            frame::read_frame::<Msg>(&mut &framed[..], MAX_FRAME_BYTES),
            Err(FrameError::Malformed(_))
        ));
        let huge = (MAX_FRAME_BYTES + 1).to_be_bytes();
        assert!(matches!(
            frame::read_frame::<Msg>(&mut &huge[..], MAX_FRAME_BYTES),
            Err(FrameError::TooLong(..))
        ));
    }

    fn arb_node() -> impl Strategy<Value = NodeHello> {
        (
            any::<u32>(),
            any::<u32>(),
            proptest::option::of(any::<u32>()),
            ".{0,20}",
            ".{0,40}",
            any::<u16>(),
            proptest::option::of(any::<[u8; 4]>()),
        )
            .prop_map(
                |(rank, world_size, local_rank, host, id, port, adv)| NodeHello {
                    rank,
                    world_size,
                    local_rank,
                    identity_source: "flags".into(),
                    hostname: host,
                    machine_id: id,
                    net_port: port,
                    advertise: adv.map(IpAddr::from),
                },
            )
    }

    fn arb_msg() -> impl Strategy<Value = Msg> {
        prop_oneof![
            (any::<u32>(), arb_node(), ".{0,70}").prop_map(|(version, node, nonce)| Msg::Join {
                version,
                node,
                nonce
            }),
            ".{0,70}".prop_map(|nonce| Msg::Challenge { nonce }),
            ".{0,70}".prop_map(|proof| Msg::Auth { proof }),
            (any::<u32>(), proptest::option::of(".{0,70}"))
                .prop_map(|(version, proof)| Msg::Welcome { version, proof }),
            ".{0,100}".prop_map(|reason| Msg::Refused { reason }),
            Just(Msg::RunLocal),
            proptest::collection::vec(".{0,30}", 0..4).prop_map(|failed_jobs| Msg::LocalDone {
                report: None,
                failed_jobs
            }),
            proptest::option::of(".{0,50}").prop_map(|error| Msg::TestDone {
                records: Vec::new(),
                error
            }),
            (any::<bool>(), ".{0,100}").prop_map(|(ok, message)| Msg::Finish { ok, message }),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        /// Every message survives the wire (compared through its JSON: a report has no `Eq`).
        #[test]
        fn any_message_round_trips(m in arb_msg()) {
            let wire = frame::encode_frame(&m);
            let back: Msg = frame::read_frame(&mut &wire[..], MAX_FRAME_BYTES).unwrap();
            prop_assert_eq!(serde_json::to_value(&back).unwrap(), serde_json::to_value(&m).unwrap());
        }

        /// Bytes from a stranger, or a message with one byte changed, give an error, never a
        /// panic.
        #[test]
        fn arbitrary_and_mutated_frames_never_panic(
            bytes in proptest::collection::vec(any::<u8>(), 0..512),
            m in arb_msg(),
            at in any::<usize>(),
            byte in any::<u8>(),
        ) {
            let _ = frame::read_frame::<Msg>(&mut &bytes[..], MAX_FRAME_BYTES);
            let _ = frame::parse::<Msg>(&bytes);
            let mut wire = frame::encode_frame(&m);
            let i = at % wire.len();
            wire[i] = byte;
            let _ = frame::read_frame::<Msg>(&mut &wire[..], MAX_FRAME_BYTES);
        }
    }
}
