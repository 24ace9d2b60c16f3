//! The cluster coordinator against strangers (issue 16, items 10 and 11): silent connections
//! do not hold the join up; with a token a rank that cannot prove it is refused and a message
//! that fails its check fails the run; a rank that answers wrongly is left out. Everything on
//! 127.0.0.1 (the rendezvous file of a temporary directory), every wait bounded.

mod common;

use peakbench::cluster::channel;
use peakbench::cluster::messages::{self, Msg, NodeHello};
use peakbench::cluster::rendezvous;
use peakbench::wire::auth;
use peakbench::wire::protocol;
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A profile of one tiny CPU job.
fn profile(dir: &Path) -> std::path::PathBuf {
    let p = dir.join("p.toml");
    std::fs::write(
        &p,
        "[[job]]\nsubsystem = 'cpu'\nworkload = ['NULL']\nthreads = 1\nwarmup = 0\nrepeat = 1\n",
    )
    .unwrap();
    p
}

/// Rank `rank` of `world` with the rendezvous directory `dir`, no network tests, and `extra`.
fn rank(rank: u32, world: u32, dir: &Path, extra: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_peakbench"))
        .args(["cluster", "run", "--rank", &rank.to_string()])
        .args(["--world-size", &world.to_string(), "--no-net"])
        .args(["--run-id", "t", "--join-timeout", "20s", "--profile"])
        .arg(profile(dir))
        .arg("--rendezvous")
        .arg(dir)
        .args(extra)
        .env_remove("PEAKBENCH_TOKEN")
        .env_remove("PEAKBENCH_COORDINATOR")
        .env("PEAKBENCH_DB", common::test_db())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// The coordinator's address, once rank 0 has written it.
fn coordinator(dir: &Path) -> SocketAddr {
    let file = rendezvous::file_in(dir, "t");
    let until = Instant::now() + Duration::from_secs(20);
    loop {
        if let Some(a) = rendezvous::read(&file) {
            return a[0];
        }
        assert!(Instant::now() < until, "no rendezvous file");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn connect(addr: SocketAddr) -> TcpStream {
    let s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    s
}

fn fake_rank(rank: u32) -> NodeHello {
    NodeHello {
        rank,
        world_size: 2,
        local_rank: None,
        identity_source: "flags".into(),
        hostname: "fake".into(),
        machine_id: "another machine".into(),
        net_port: 9,
        advertise: None,
    }
}

fn read(s: &mut TcpStream) -> Msg {
    peakbench::wire::frame::read_frame(s, messages::MAX_FRAME_BYTES).unwrap()
}

fn stderr_of(c: Child) -> (Option<i32>, String) {
    let out = c.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(!err.contains("panicked"), "{err}");
    (out.status.code(), err)
}

/// Item 11: seven connections that never say anything, opened before the ranks, cost the join
/// nothing: a three-rank run (authenticated: every rank has the token) completes, where silent
/// connections that held the join would fail it at its 20 s join timeout ("rank N of 3 did
/// not join within 20s"). How long the whole run takes is the host's business.
#[test]
fn silent_connections_do_not_keep_ranks_from_joining() {
    let dir = tempfile::tempdir().unwrap();
    let token = ["--token", "s3cret"];
    let rank0 = rank(0, 3, dir.path(), &token);
    let addr = coordinator(dir.path());
    let silent: Vec<TcpStream> = (0..7).map(|_| connect(addr)).collect();
    let others = [
        rank(1, 3, dir.path(), &token),
        rank(2, 3, dir.path(), &token),
    ];
    let (code, err) = stderr_of(rank0);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("authenticated"), "{err}");
    assert!(!err.contains("no --token"), "{err}");
    for r in others {
        let (code, err) = stderr_of(r);
        assert_eq!(code, Some(0), "{err}");
    }
    drop(silent);
}

/// Item 10: with a token, a stranger who cannot prove it is refused, and a rank whose message
/// fails its check (here: a result sent without its seal, as one injected into the connection
/// would be) is left out and fails the run.
#[test]
fn with_a_token_strangers_cannot_join_or_forge_results() {
    let dir = tempfile::tempdir().unwrap();
    let rank0 = rank(0, 2, dir.path(), &["--token", "s3cret"]);
    let addr = coordinator(dir.path());
    // A stranger: a join, then a made-up proof.
    let mut s = connect(addr);
    peakbench::wire::frame::write_frame(
        &mut s,
        &Msg::Join {
            version: messages::VERSION,
            node: fake_rank(1),
            nonce: auth::new_nonce().unwrap(),
        },
    )
    .unwrap();
    assert!(matches!(read(&mut s), Msg::Challenge { .. }));
    peakbench::wire::frame::write_frame(
        &mut s,
        &Msg::Auth {
            proof: "00".repeat(32),
        },
    )
    .unwrap();
    match read(&mut s) {
        Msg::Refused { reason } => assert!(reason.contains("authentication failed"), "{reason}"),
        other => panic!("a stranger was let in: {}", other.name()),
    }
    // A rank that knows the token and joins; its result arrives without a seal.
    let until = Instant::now() + Duration::from_secs(20);
    let mut ch = channel::join(connect(addr), fake_rank(1), Some("s3cret"), until).unwrap();
    assert!(ch.sealed());
    assert!(matches!(ch.recv(until).unwrap(), Msg::RunLocal));
    peakbench::wire::frame::write_frame(
        &mut ch.stream(),
        &Msg::LocalDone {
            report: None,
            failed_jobs: Vec::new(),
        },
    )
    .unwrap();
    let (code, err) = stderr_of(rank0);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("failed authentication"), "{err}");
}

/// A rank that answers a command with a message of the wrong kind is told and left out, and
/// the run exits 1; without a token the coordinator says at start that anyone may join.
#[test]
fn a_rank_that_answers_wrongly_is_told_and_left_out() {
    let dir = tempfile::tempdir().unwrap();
    let rank0 = rank(0, 2, dir.path(), &[]);
    let mut s = connect(coordinator(dir.path()));
    let join = Msg::Join {
        version: messages::VERSION,
        node: fake_rank(1),
        nonce: String::new(),
    };
    peakbench::wire::frame::write_frame(&mut s, &join).unwrap();
    assert!(matches!(read(&mut s), Msg::Welcome { .. }));
    assert!(matches!(read(&mut s), Msg::RunLocal));
    peakbench::wire::frame::write_frame(
        &mut s,
        &Msg::Welcome {
            version: messages::VERSION,
            proof: None,
        },
    )
    .unwrap();
    match read(&mut s) {
        Msg::Finish { ok, message } => {
            assert!(!ok);
            assert!(
                message.contains("answered welcome to run_local"),
                "{message}"
            );
        }
        other => panic!("expected finish, got {}", other.name()),
    }
    let (code, err) = stderr_of(rank0);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("the run is incomplete: rank 1 (fake) answered welcome"),
        "{err}"
    );
    assert!(err.contains("no --token: anyone who can reach"), "{err}");
}

/// The announcement of a node report's worth of frame (64 MiB), with nothing after it.
fn announce_a_large_frame(s: &mut TcpStream) {
    use std::io::Write;
    s.write_all(&messages::MAX_FRAME_BYTES.to_be_bytes())
        .unwrap();
    s.flush().unwrap();
}

/// Whether the peer closed `s` (end of file or reset) before the read timeout.
fn closed(s: &mut TcpStream) -> bool {
    use std::io::Read;
    let mut b = [0u8; 64];
    loop {
        match s.read(&mut b) {
            Ok(0) => return true,
            Ok(_) => {}
            Err(e) => return e.kind() == std::io::ErrorKind::ConnectionReset,
        }
    }
}

/// Before a joiner has proved the token, the coordinator reads its frames with the network
/// benchmark's 64 KiB limit: an auth frame that announces 64 MiB is refused at its length (the
/// coordinator says so, instead of waiting for a body it would have to hold) and the
/// connection is closed; the run goes on and completes with the real rank.
#[test]
fn before_the_token_is_proved_a_large_frame_is_refused_at_its_length() {
    let dir = tempfile::tempdir().unwrap();
    let token = ["--token", "s3cret"];
    let rank0 = rank(0, 2, dir.path(), &token);
    let mut s = connect(coordinator(dir.path()));
    peakbench::wire::frame::write_frame(
        &mut s,
        &Msg::Join {
            version: messages::VERSION,
            node: fake_rank(1),
            nonce: auth::new_nonce().unwrap(),
        },
    )
    .unwrap();
    assert!(matches!(read(&mut s), Msg::Challenge { .. }));
    announce_a_large_frame(&mut s);
    assert!(closed(&mut s), "the coordinator kept the connection");
    let rank1 = rank(1, 2, dir.path(), &token);
    let (code, err) = stderr_of(rank0);
    assert_eq!(code, Some(0), "{err}");
    let limit = format!(
        "a {}-byte control message exceeds the {}-byte limit",
        messages::MAX_FRAME_BYTES,
        protocol::MAX_FRAME_BYTES
    );
    assert!(err.contains(&limit), "{err}");
    let (code, err) = stderr_of(rank1);
    assert_eq!(code, Some(0), "{err}");
}

/// The rank's side: until the coordinator has proved the token, its challenge and its welcome
/// are read with the 64 KiB limit too; a fake coordinator that announces 64 MiB instead is
/// refused at the length, not waited for.
#[test]
fn a_rank_reads_the_join_replies_with_the_small_limit() {
    use peakbench::cluster::channel::JoinError;
    use peakbench::wire::frame::FrameError;
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    // The first connection: a large challenge; the second: a challenge, then a large welcome.
    let fake = std::thread::spawn(move || {
        for with_challenge in [false, true] {
            let (mut s, _) = listener.accept().unwrap();
            s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
            assert!(matches!(read(&mut s), Msg::Join { .. }));
            if with_challenge {
                let challenge = Msg::Challenge {
                    nonce: auth::new_nonce().unwrap(),
                };
                peakbench::wire::frame::write_frame(&mut s, &challenge).unwrap();
                assert!(matches!(read(&mut s), Msg::Auth { .. }));
            }
            announce_a_large_frame(&mut s);
            assert!(closed(&mut s), "the rank kept the connection");
        }
    });
    for _ in 0..2 {
        let until = Instant::now() + Duration::from_secs(20);
        match channel::join(connect(addr), fake_rank(1), Some("s3cret"), until) {
            Err(JoinError::Frame(FrameError::TooLong(n, max))) => {
                assert_eq!(
                    (n, max),
                    (messages::MAX_FRAME_BYTES, protocol::MAX_FRAME_BYTES)
                );
            }
            Err(e) => panic!("expected a refusal at the length, got: {e}"),
            Ok(_) => panic!("joined a fake coordinator"),
        }
    }
    fake.join().unwrap();
}
