//! What every rank (rank 0 included) does: serve the network tests of the others, join the
//! coordinator, and carry out its commands — the node-local profile, a link test as the client
//! — until it says the run is over.

use super::channel::{self, JoinError};
use super::merge::tag;
use super::messages::{LinkTest, Msg, NodeHello};
use super::rendezvous::{self, Locator};
use crate::results::params::Link;
use crate::results::{Report, ResultRecord};
use crate::wire::frame::{self, FrameError};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// Why a rank's run ended badly.
#[derive(Debug, thiserror::Error)]
pub enum WorkerError {
    #[error("cannot reach the coordinator ({0})")]
    Unreachable(String),
    #[error("{0}")]
    Join(#[from] JoinError),
    #[error("the coordinator connection failed: {0}")]
    Frame(#[from] FrameError),
    #[error("the coordinator sent {0}, which a rank does not expect")]
    Unexpected(&'static str),
    #[error("the run failed: {0}")]
    Failed(String),
    #[error("no command from the coordinator before the run's time limit")]
    TimedOut,
    #[error("interrupted")]
    Interrupted,
}

/// How a rank reaches the coordinator and how long it tries.
pub struct Joining<'a> {
    pub locator: &'a Locator,
    /// The coordinator's port when the locator names none.
    pub default_port: u16,
    pub timeout: Duration,
}

/// Tries to connect until `timeout`: a rank may start before rank 0 is listening, and a
/// rendezvous file appears only once it is.
fn connect(j: &Joining) -> Result<TcpStream, WorkerError> {
    let until = Instant::now() + j.timeout;
    let mut last = String::from("nothing tried yet");
    loop {
        let addrs = match j.locator {
            Locator::Address { addr, .. } => rendezvous::resolve(addr, j.default_port),
            Locator::File(path) => rendezvous::read(path)
                .ok_or_else(|| format!("{} does not exist yet", path.display())),
        };
        match addrs {
            Ok(addrs) => {
                for a in addrs {
                    match TcpStream::connect_timeout(&a, Duration::from_secs(2)) {
                        Ok(s) => return Ok(s),
                        Err(e) => last = format!("{a}: {e}"),
                    }
                }
            }
            Err(e) => last = e,
        }
        if Instant::now() >= until || crate::runner::stop::requested() {
            return Err(WorkerError::Unreachable(format!(
                "{} within {:?}; last: {last}; is rank 0 running, and its port open?",
                j.locator.describe(),
                j.timeout
            )));
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// What a rank measures when the coordinator says so; the application runs both.
pub trait RankWork {
    /// The node-local profile: its report and the jobs that failed, or why it could not run.
    fn local(&mut self) -> (Option<Report>, Vec<String>);
    /// One link test as its client (throughput, then latency, each if asked for): the records
    /// measured, and the error that ended the test early.
    fn link(&mut self, test: &LinkTest) -> (Vec<ResultRecord>, Option<String>);
}

/// Joins the coordinator as `hello` and obeys it until `Finish`; `deadline` bounds the whole
/// run. Returns the coordinator's closing message.
pub fn run(
    joining: &Joining,
    hello: NodeHello,
    token: Option<String>,
    deadline: Instant,
    work: &mut dyn RankWork,
) -> Result<String, WorkerError> {
    let stream = connect(joining)?;
    let _ = stream.set_nodelay(true);
    let _ = stream.set_write_timeout(Some(Duration::from_secs(60)));
    let joined_by = deadline.min(Instant::now() + Duration::from_secs(30));
    let mut ch = channel::join(stream, hello.clone(), token.as_deref(), joined_by)?;
    let send =
        |ch: &mut channel::Channel, m: &Msg| ch.send(m).map_err(|e| WorkerError::Frame(e.into()));
    loop {
        // Wait in short slices so that Ctrl-C and the deadline are noticed; then the whole
        // message must arrive within a minute.
        while !frame::readable(ch.stream(), Duration::from_millis(500)) {
            if crate::runner::stop::requested() {
                return Err(WorkerError::Interrupted);
            }
            if Instant::now() >= deadline {
                return Err(WorkerError::TimedOut);
            }
        }
        let msg = ch.recv(Instant::now() + Duration::from_secs(60))?;
        match msg {
            Msg::RunLocal => {
                let (report, failed_jobs) = work.local();
                send(
                    &mut ch,
                    &Msg::LocalDone {
                        report: report.map(Box::new),
                        failed_jobs,
                    },
                )?;
            }
            Msg::RunTest { test } => {
                let (records, error) = match check(&test) {
                    Ok(()) => {
                        let (mut records, error) = work.link(&test);
                        name_the_link(&mut records, &test, &hello);
                        (records, error)
                    }
                    Err(e) => (Vec::new(), Some(e)),
                };
                send(&mut ch, &Msg::TestDone { records, error })?;
            }
            Msg::Finish { ok: true, message } => return Ok(message),
            Msg::Finish { ok: false, message } => return Err(WorkerError::Failed(message)),
            other => return Err(WorkerError::Unexpected(other.name())),
        }
    }
}

/// The most repetitions of a link test a coordinator may ask for (as `--net-repeat`).
pub const MAX_REPEAT: u32 = 100;

/// Checks a link test from the coordinator before running it: its parameters within the
/// network benchmark's limits, its repetitions within [`MAX_REPEAT`].
fn check(t: &LinkTest) -> Result<(), String> {
    if t.repeat == 0 || t.repeat > MAX_REPEAT {
        return Err(format!(
            "refused a link test of {} repetitions: 1 to {MAX_REPEAT}",
            t.repeat
        ));
    }
    for p in [t.throughput, t.latency].into_iter().flatten() {
        p.validate()
            .map_err(|e| format!("refused a link test: {e}"))?;
    }
    Ok(())
}

/// Tags a link test's records with the pattern, both ends and this rank.
fn name_the_link(records: &mut [ResultRecord], t: &LinkTest, me: &NodeHello) {
    for r in records {
        // The server's ephemeral port changes every run; the nodes say which link it is.
        if let Some(p) = r.params.net_mut() {
            p.server = None;
            p.between = Some(Link {
                pattern: t.pattern,
                src_node: t.src,
                dst_node: t.dst,
            });
        }
        tag(r, me.rank, &me.hostname);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::params::Proto;
    use crate::wire::net_test::{TestKind, TestParams};

    #[test]
    fn link_tests_from_the_network_are_checked() {
        let p = TestParams {
            kind: TestKind::Throughput,
            proto: Proto::Tcp,
            streams: 1,
            message_bytes: 131072,
            duration_ms: 100,
            omit_ms: 0,
            reverse: false,
            rate_bps: 0,
            busy_poll_us: 0,
            bidir: false,
            socket: Default::default(),
            amount_per_stream: 0,
            mps: 0,
            load_streams: 0,
            sustain: false,
        };
        let t = |repeat: u32, message_bytes: u32| LinkTest {
            pattern: crate::results::params::LinkPattern::Pairs,
            src: 0,
            dst: 1,
            server: "127.0.0.1:1".parse().unwrap(),
            throughput: Some(TestParams { message_bytes, ..p }),
            latency: None,
            repeat,
            reference: false,
        };
        assert!(check(&t(3, 131072)).is_ok());
        assert!(check(&t(0, 131072)).unwrap_err().contains("repetitions"));
        assert!(
            check(&t(u32::MAX, 131072))
                .unwrap_err()
                .contains("repetitions")
        );
        assert!(check(&t(3, u32::MAX)).unwrap_err().contains("refused"));
    }
}
