//! Rank 0's coordinator: it waits for every rank to join, then drives the run step by step —
//! the node-local profile in turns, then the link tests pattern by pattern — sending each rank
//! of a step its command and waiting for every reply before the next step (the barrier).
//! A rank that fails or vanishes is noted and left out of later steps; the run goes on with
//! the others, and what they measured is kept.
//!
//! Joins are accepted concurrently, each connection on its own thread with its own deadline
//! (10 s, and not past the join deadline), so that silent connections cannot hold the join
//! up. With a token every rank proves it and every message is sealed; a message that fails
//! its check fails its rank, and the run (exit code 1).

use super::channel::{self, Candidate, Channel};
use super::merge::{self, NodeOutcome};
use super::messages::{LinkTest, Msg, NodeHello};
use super::schedule::{self, Link};
use crate::results::fleet::OutlierRule;
use crate::results::params::LinkPattern;
use crate::results::{Report, ResultRecord};
use crate::sysinfo::SystemInfo;
use crate::wire::frame::FrameError;
use crate::wire::net_test::TestParams;
use std::io;
use std::net::{IpAddr, SocketAddr, TcpListener};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Connections that may be joining at once; more are closed at once.
const MAX_JOINING: usize = 128;
/// The longest one connection may take to join.
const JOIN_READ: Duration = Duration::from_secs(10);

/// A pattern of link tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pattern {
    /// Every ordered pair, in rounds of disjoint pairs, and every node to itself.
    Pairs,
    Ring,
    Bisection,
}

impl Pattern {
    pub fn name(self) -> &'static str {
        match self {
            Pattern::Pairs => "pairs",
            Pattern::Ring => "ring",
            Pattern::Bisection => "bisection",
        }
    }
}

impl std::str::FromStr for Pattern {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "pairs" => Ok(Pattern::Pairs),
            "ring" => Ok(Pattern::Ring),
            "bisection" => Ok(Pattern::Bisection),
            _ => Err(format!(
                "unknown pattern '{s}': use pairs, ring or bisection"
            )),
        }
    }
}

/// `--pair-rounds`' default: every pair up to 64 ranks.
pub const DEFAULT_PAIR_ROUNDS: u32 = 63;

/// The longest any part of a run is waited for: ten years, far beyond any run, so that a
/// deadline made from an estimate that saturated still fits an `Instant`.
pub const LONGEST_WAIT: Duration = Duration::from_secs(10 * 366 * 86_400);

/// What the run does and how long each part may take.
#[derive(Debug, Clone)]
pub struct Plan {
    pub world_size: u32,
    /// Run the node-local profile.
    pub local: bool,
    pub patterns: Vec<Pattern>,
    /// The most rounds of the `pairs` pattern ([`schedule::sampled_rounds`]): a larger fleet
    /// measures this many, spread over its N − 1 (N), and says so.
    pub pair_rounds: u32,
    pub throughput: Option<TestParams>,
    pub latency: Option<TestParams>,
    pub repeat: u32,
    pub join_timeout: Duration,
    /// The longest one rank's node-local profile may take.
    pub local_timeout: Duration,
    pub rule: OutlierRule,
    /// Print a line per step on stderr.
    pub log: bool,
    /// Run the reference tools (iperf3, sockperf) on every link measured one at a time, against
    /// the servers the destination rank starts for them.
    pub reference: bool,
}

impl Plan {
    /// The longest one link step may take: its tests and their set-up, with room to spare.
    pub fn test_timeout(&self) -> Duration {
        let one = |p: &Option<TestParams>| {
            p.map_or(Duration::ZERO, |p| {
                Duration::from_millis(p.duration_ms.saturating_add(p.omit_ms))
                    .saturating_add(Duration::from_secs(3))
            })
        };
        // With references, each repetition of the tools as long as ours, and their start-up.
        let per_repeat = if self.reference { 4 } else { 2 };
        (one(&self.throughput).saturating_add(one(&self.latency)))
            .saturating_mul(self.repeat.max(1).saturating_mul(per_repeat))
            .saturating_add(Duration::from_secs(30))
    }

    /// The steps of the link tests, each with its pattern's name.
    pub fn link_steps(&self, machines: &[String]) -> Vec<(LinkPattern, Vec<Link>)> {
        let n = self.world_size;
        let mut steps = Vec::new();
        let tag = |p: LinkPattern| move |s: Vec<Link>| (p, s);
        for p in &self.patterns {
            match p {
                Pattern::Pairs => {
                    steps.extend(
                        schedule::pairs(n, self.pair_rounds)
                            .into_iter()
                            .map(tag(LinkPattern::Pairs)),
                    );
                    steps.extend(
                        schedule::selves(machines)
                            .into_iter()
                            .map(tag(LinkPattern::OwnStack)),
                    );
                }
                Pattern::Ring => {
                    steps.extend(schedule::ring(n).into_iter().map(tag(LinkPattern::Ring)))
                }
                Pattern::Bisection => steps.extend(
                    schedule::bisection(n)
                        .into_iter()
                        .map(tag(LinkPattern::Bisection)),
                ),
            }
        }
        steps
    }

    /// What the `pairs` pattern leaves out among `n` ranks, where [`Plan::pair_rounds`] keeps
    /// fewer rounds than there are.
    pub fn pairs_sampled(&self, n: u32) -> Option<crate::results::fleet::PairsSample> {
        let rounds = n - 1 + n % 2;
        (self.patterns.contains(&Pattern::Pairs) && n >= 2 && rounds > self.pair_rounds).then(
            || crate::results::fleet::PairsSample {
                ranks: n,
                rounds,
                measured_rounds: self.pair_rounds,
                ordered_pairs: u64::from(n) * u64::from(n - 1),
                // Each round kept, both ways: ⌊N/2⌋ pairs (one rank sits out with an odd N).
                measured_pairs: 2 * u64::from(self.pair_rounds) * u64::from(n / 2),
            },
        )
    }

    /// How many link steps there are at most (when every rank shares one machine), counted
    /// without building them.
    pub fn max_link_steps(&self) -> u32 {
        let n = self.world_size;
        self.patterns
            .iter()
            .map(|p| match p {
                // Both directions of each round kept, then one self step per rank.
                Pattern::Pairs if n >= 2 => 2 * (n - 1 + n % 2).min(self.pair_rounds) + n,
                Pattern::Pairs => n,
                Pattern::Ring => u32::from(n >= 3),
                Pattern::Bisection => 2 * u32::from(n >= 2),
            })
            .sum()
    }

    /// An upper bound of the whole run, for the ranks' own deadline: joining, every rank's
    /// profile one after the other (the worst case: all on one machine) and every link step.
    /// Saturating, and at most [`LONGEST_WAIT`] (a deadline an `Instant` can hold).
    pub fn total_timeout(&self) -> Duration {
        let steps = self.max_link_steps();
        let local = if self.local {
            self.local_timeout.saturating_mul(self.world_size)
        } else {
            Duration::ZERO
        };
        self.join_timeout
            .saturating_add(local)
            .saturating_add(self.test_timeout().saturating_mul(steps))
            .saturating_add(Duration::from_secs(60))
            .min(LONGEST_WAIT)
    }
}

/// One joined rank.
struct Member {
    ch: Channel,
    hello: NodeHello,
    /// The rank's address as the coordinator sees it, and the coordinator's own address on
    /// that connection (how this rank reaches rank 0's machine).
    peer: IpAddr,
    local: IpAddr,
    /// Set when the rank failed; it takes no further part.
    gone: Option<String>,
    report: Option<Report>,
    failed_jobs: Vec<String>,
}

impl Member {
    fn send(&mut self, m: &Msg) -> io::Result<()> {
        self.ch.send(m)
    }

    fn recv(&mut self, until: Instant) -> Result<Msg, FrameError> {
        self.ch.recv(until)
    }

    /// The address others reach this rank at.
    fn address(&self) -> IpAddr {
        self.hello.advertise.unwrap_or(self.peer)
    }
}

/// The bound coordinator.
pub struct Coordinator {
    listener: TcpListener,
    /// The run's shared secret: every rank must prove it, and every message is sealed.
    token: Option<String>,
}

impl Coordinator {
    pub fn bind(addr: SocketAddr, token: Option<String>) -> io::Result<Coordinator> {
        Ok(Coordinator {
            listener: TcpListener::bind(addr)?,
            token,
        })
    }

    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// Runs the whole plan; returns the merged report (built with `argv` and, when rank 0 has
    /// no report of its own, `fallback_system`), or why the run could not happen.
    pub fn run(
        self,
        plan: &Plan,
        argv: Vec<String>,
        fallback_system: impl FnOnce() -> SystemInfo,
    ) -> Result<Report, String> {
        let log = |s: String| {
            if plan.log {
                // Host names and errors in it come from the ranks.
                eprintln!("peakbench cluster: {}", crate::text::printable(&s));
            }
        };
        if self.token.is_none() {
            log(format!(
                "no --token: anyone who can reach {} can join this run as a rank and send it results; give every rank the same --token (or PEAKBENCH_TOKEN) to authenticate them",
                self.listener
                    .local_addr()
                    .map_or("the coordinator".into(), |a| a.to_string())
            ));
        }
        let mut members = self.join(plan, &log)?;
        let machines: Vec<String> = members.iter().map(|m| m.hello.machine_id.clone()).collect();
        let mut notes = Vec::new();
        // Ctrl-C: no further step starts; what was measured is merged and kept.
        let stopped = |notes: &mut Vec<String>| {
            let stop = crate::runner::stop::requested();
            if stop && !notes.iter().any(|n| n == INTERRUPTED) {
                notes.push(INTERRUPTED.to_string());
            }
            stop
        };
        if plan.local {
            let turns = schedule::turns(&machines);
            for (t, turn) in turns.iter().enumerate() {
                if stopped(&mut notes) {
                    break;
                }
                log(format!(
                    "node-local profile, turn {}/{}: rank {}",
                    t + 1,
                    turns.len(),
                    join_ranks(turn)
                ));
                self.local_turn(&mut members, turn, plan.local_timeout, &mut notes);
            }
        }
        let mut links = Vec::new();
        let sampled = plan.pairs_sampled(plan.world_size);
        if let Some(s) = &sampled {
            log(s.sentence());
        }
        let steps = plan.link_steps(&machines);
        for (i, (pattern, step)) in steps.iter().enumerate() {
            if stopped(&mut notes) {
                break;
            }
            log(format!(
                "network step {}/{}: {pattern} {}",
                i + 1,
                steps.len(),
                step.iter()
                    .map(|l| format!("{}→{}", l.src, l.dst))
                    .collect::<Vec<_>>()
                    .join(" ")
            ));
            links.extend(Self::link_step(
                &mut members,
                *pattern,
                step,
                plan,
                &mut notes,
            ));
        }
        let rank0_system = members
            .first()
            .and_then(|m| m.report.as_ref())
            .map(|r| r.system.clone())
            .unwrap_or_else(fallback_system);
        let outcomes: Vec<NodeOutcome> = members
            .iter_mut()
            .map(|m| NodeOutcome {
                hello: m.hello.clone(),
                address: m.address().to_string(),
                report: m.report.take(),
                failed_jobs: m.failed_jobs.clone(),
                status: m.gone.clone().unwrap_or_else(|| "complete".into()),
            })
            .collect();
        let mut report = merge::merge(
            argv,
            rank0_system,
            plan.world_size,
            outcomes,
            links,
            notes,
            plan.rule,
        );
        if let Some(f) = report.fleet.as_mut() {
            f.pairs_sampled = sampled;
        }
        let summary = format!(
            "{} points from {} ranks, {} outliers",
            report.results.len(),
            plan.world_size,
            report.fleet.as_ref().map_or(0, |f| f.outliers.len())
        );
        let interrupted = notes_of(&report).iter().any(|n| n == INTERRUPTED);
        for m in members.iter_mut().filter(|m| m.gone.is_none()) {
            let _ = m.send(&Msg::Finish {
                ok: !interrupted,
                message: if interrupted {
                    INTERRUPTED.to_string()
                } else {
                    summary.clone()
                },
            });
        }
        Ok(report)
    }

    /// Accepts ranks until all `world_size` have joined or the join timeout passes. Each
    /// connection joins on its own thread ([`channel::accept`]); one that is not a valid, new
    /// rank of this run is refused and closed.
    fn join(&self, plan: &Plan, log: &dyn Fn(String)) -> Result<Vec<Member>, String> {
        let n = plan.world_size as usize;
        let until = Instant::now() + plan.join_timeout;
        let mut members: Vec<Option<Member>> = (0..n).map(|_| None).collect();
        self.listener
            .set_nonblocking(true)
            .map_err(|e| format!("coordinator: {e}"))?;
        let (tx, rx) = mpsc::channel::<(SocketAddr, Result<Candidate, String>)>();
        let joining = Arc::new(AtomicUsize::new(0));
        while members.iter().any(Option::is_none) {
            if Instant::now() >= until || crate::runner::stop::requested() {
                let missing: Vec<String> = members
                    .iter()
                    .enumerate()
                    .filter(|(_, m)| m.is_none())
                    .map(|(r, _)| r.to_string())
                    .collect();
                let why = format!(
                    "rank {} of {n} did not join within {:?}; check that every rank runs `peakbench cluster run` with the same world size and can reach {}",
                    missing.join(", "),
                    plan.join_timeout,
                    self.listener
                        .local_addr()
                        .map_or("the coordinator".into(), |a| a.to_string())
                );
                for m in members.iter_mut().flatten() {
                    let _ = m.send(&Msg::Finish {
                        ok: false,
                        message: why.clone(),
                    });
                }
                return Err(why);
            }
            match self.listener.accept() {
                Ok((stream, peer)) => {
                    if joining.load(Ordering::Acquire) >= MAX_JOINING {
                        log(format!(
                            "closed a connection from {peer}: {MAX_JOINING} connections are joining already"
                        ));
                        continue;
                    }
                    let _ = stream.set_nonblocking(false);
                    // Not past the join deadline by more than a second.
                    let by = until
                        .max(Instant::now() + Duration::from_secs(1))
                        .min(Instant::now() + JOIN_READ);
                    let token = self.token.clone();
                    let (tx, count) = (tx.clone(), joining.clone());
                    count.fetch_add(1, Ordering::AcqRel);
                    let spawned = std::thread::Builder::new()
                        .name("cluster-join".into())
                        .spawn(move || {
                            let c = channel::accept(stream, peer, token.as_deref(), by);
                            count.fetch_sub(1, Ordering::AcqRel);
                            let _ = tx.send((peer, c));
                        });
                    if spawned.is_err() {
                        joining.fetch_sub(1, Ordering::AcqRel);
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) => {
                    // Out of descriptors, a connection reset before accept: try again.
                    log(format!("accept failed: {e}"));
                    std::thread::sleep(Duration::from_millis(100));
                }
            }
            match rx.recv_timeout(Duration::from_millis(20)) {
                Ok((peer, Ok(c))) => match Self::admit(c, plan, &members) {
                    Ok(m) => {
                        log(format!(
                            "rank {} joined from {} ({}, {}{})",
                            m.hello.rank,
                            m.peer,
                            m.hello.hostname,
                            m.hello.identity_source,
                            if m.ch.sealed() { ", authenticated" } else { "" }
                        ));
                        let r = m.hello.rank as usize;
                        members[r] = Some(m);
                    }
                    Err(e) => log(format!("refused a connection from {peer}: {e}")),
                },
                Ok((peer, Err(e))) => log(format!("refused a connection from {peer}: {e}")),
                Err(_) => {}
            }
        }
        Ok(members.into_iter().flatten().collect())
    }

    /// Checks that a joined connection is a new rank of this run, and welcomes it.
    fn admit(c: Candidate, plan: &Plan, members: &[Option<Member>]) -> Result<Member, String> {
        let hello = c.node.clone();
        if hello.world_size != plan.world_size || hello.rank >= plan.world_size {
            return Err(c.refuse(format!(
                "rank {} of {} does not fit this run of {} ranks",
                hello.rank, hello.world_size, plan.world_size
            )));
        }
        if members[hello.rank as usize].is_some() {
            return Err(c.refuse(format!("rank {} has already joined", hello.rank)));
        }
        let peer = c.peer.ip().to_canonical();
        let local =
            c.ch.stream()
                .local_addr()
                .map_err(|e| e.to_string())?
                .ip()
                .to_canonical();
        let ch = c.welcome().map_err(|e| e.to_string())?;
        let _ = ch.stream().set_write_timeout(Some(Duration::from_secs(60)));
        Ok(Member {
            ch,
            hello,
            peer,
            local,
            gone: None,
            report: None,
            failed_jobs: Vec::new(),
        })
    }

    /// One turn of the node-local profile.
    fn local_turn(
        &self,
        members: &mut [Member],
        turn: &[u32],
        timeout: Duration,
        notes: &mut Vec<String>,
    ) {
        let live: Vec<usize> = turn
            .iter()
            .map(|&r| r as usize)
            .filter(|&r| members[r].gone.is_none())
            .collect();
        for &r in &live {
            if let Err(e) = members[r].send(&Msg::RunLocal) {
                fail(
                    &mut members[r],
                    format!("could not be told to run: {e}"),
                    notes,
                );
            }
        }
        let until = Instant::now() + timeout.min(LONGEST_WAIT);
        for &r in &live {
            if members[r].gone.is_some() {
                continue;
            }
            match members[r].recv(until) {
                Ok(Msg::LocalDone {
                    report,
                    failed_jobs,
                }) => {
                    for j in &failed_jobs {
                        notes.push(format!("rank {r}: {j}"));
                    }
                    members[r].report = report.map(|b| *b);
                    members[r].failed_jobs = failed_jobs;
                }
                Ok(other) => fail(
                    &mut members[r],
                    format!("answered {} to run_local", other.name()),
                    notes,
                ),
                Err(e) => fail(
                    &mut members[r],
                    format!("left during its node-local profile: {e}"),
                    notes,
                ),
            }
        }
    }

    /// One step of link tests, all at once; returns their records.
    fn link_step(
        members: &mut [Member],
        pattern: LinkPattern,
        step: &[Link],
        plan: &Plan,
        notes: &mut Vec<String>,
    ) -> Vec<ResultRecord> {
        let mut running = Vec::new();
        for l in step {
            let (s, d) = (l.src as usize, l.dst as usize);
            if let Some(why) = members[s].gone.as_ref().or(members[d].gone.as_ref()) {
                notes.push(format!(
                    "{pattern} {}→{} not measured: a rank had failed ({why})",
                    l.src, l.dst
                ));
                continue;
            }
            // The server's address as the client reaches it: a rank on rank 0's machine
            // connected over loopback, so the client uses the address it reached rank 0 at.
            // A rank on rank 0's machine reached the coordinator through a local address (both
            // ends of its connection are the same address) that other machines may not reach:
            // the client then uses the address it reached rank 0's machine at.
            let ip = match members[d].hello.advertise {
                Some(ip) => ip,
                None if members[d].peer == members[d].local || members[d].peer.is_loopback() => {
                    members[s].local
                }
                None => members[d].peer,
            };
            let test = LinkTest {
                pattern,
                src: l.src,
                dst: l.dst,
                server: SocketAddr::new(ip, members[d].hello.net_port),
                throughput: plan.throughput,
                // Ring and bisection load every link at once: their figure is throughput.
                latency: if pattern.one_at_a_time() {
                    plan.latency
                } else {
                    None
                },
                repeat: plan.repeat,
                reference: plan.reference && pattern.one_at_a_time(),
            };
            match members[s].send(&Msg::RunTest { test }) {
                Ok(()) => running.push((s, *l)),
                Err(e) => fail(
                    &mut members[s],
                    format!("could not be told to test: {e}"),
                    notes,
                ),
            }
        }
        let until = Instant::now() + plan.test_timeout();
        let mut out = Vec::new();
        for (s, link) in running {
            match members[s].recv(until) {
                Ok(Msg::TestDone { records, error }) => {
                    // Only records of the link this rank was asked to measure.
                    let mine = records.into_iter().filter(|r: &ResultRecord| {
                        r.params
                            .net()
                            .and_then(|n| n.between.as_ref())
                            .is_some_and(|b| b.src_node == link.src && b.dst_node == link.dst)
                    });
                    out.extend(mine.map(|mut r| {
                        if plan.reference && !pattern.one_at_a_time() {
                            r.reference_unknown_reason = Some(format!(
                                "the reference tools run on links measured one at a time, and {pattern} loads every link at once"
                            ));
                        }
                        r
                    }));
                    if let Some(e) = error {
                        notes.push(format!("rank {s}: {e}"));
                    }
                }
                Ok(other) => fail(
                    &mut members[s],
                    format!("answered {} to run_test", other.name()),
                    notes,
                ),
                Err(e) => fail(
                    &mut members[s],
                    format!("left during a {pattern} test: {e}"),
                    notes,
                ),
            }
        }
        out
    }
}
/// Leaves a rank out of the rest of the run: noted, told (when it still listens) and
/// disconnected, so that it stops instead of waiting for its own deadline.
fn fail(m: &mut Member, why: String, notes: &mut Vec<String>) {
    notes.push(format!(
        "rank {} ({}) {why}",
        m.hello.rank, m.hello.hostname
    ));
    let _ = m.send(&Msg::Finish {
        ok: false,
        message: format!("the coordinator left this rank out: it {why}"),
    });
    let _ = m.ch.stream().shutdown(std::net::Shutdown::Both);
    m.gone = Some(why);
}

/// The note of a run stopped by Ctrl-C.
pub const INTERRUPTED: &str = "interrupted: the steps after it did not run";

fn notes_of(report: &Report) -> &[String] {
    report.fleet.as_ref().map_or(&[], |f| &f.notes)
}

fn join_ranks(r: &[u32]) -> String {
    r.iter().map(u32::to_string).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(world_size: u32, patterns: Vec<Pattern>, pair_rounds: u32) -> Plan {
        Plan {
            world_size,
            local: true,
            patterns,
            pair_rounds,
            throughput: None,
            latency: None,
            repeat: 1,
            join_timeout: Duration::from_secs(1),
            local_timeout: Duration::from_secs(1),
            rule: OutlierRule::default(),
            log: false,
            reference: false,
        }
    }

    #[test]
    fn the_step_count_matches_the_steps() {
        let all = vec![Pattern::Pairs, Pattern::Ring, Pattern::Bisection];
        for (n, pair_rounds) in (1..=9).map(|n| (n, 63)).chain([(9, 4), (10, 4), (256, 8)]) {
            let plan = plan(n, all.clone(), pair_rounds);
            let same = vec![String::new(); n as usize];
            assert_eq!(
                plan.link_steps(&same).len() as u32,
                plan.max_link_steps(),
                "n={n}"
            );
            // Said where rounds are left out, and only there.
            let sampled = plan.pairs_sampled(n);
            assert_eq!(sampled.is_some(), n - 1 + n % 2 > pair_rounds, "n={n}");
        }
        let sample = plan(256, vec![Pattern::Pairs], 8)
            .pairs_sampled(256)
            .unwrap();
        assert_eq!(
            (sample.rounds, sample.measured_pairs, sample.ordered_pairs),
            (255, 2048, 65280)
        );
        let note = sample.sentence();
        assert!(
            note.contains("255 rounds") && note.contains("2048 of the 65280 ordered pairs"),
            "{note}"
        );
        assert_eq!(plan(256, vec![Pattern::Ring], 8).pairs_sampled(256), None);
    }
}
