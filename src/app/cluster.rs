//! A multi-node run (`peakbench cluster run`), once its options are read: this rank joins the
//! others (rank 0 also runs the coordinator), runs its share of the profile and of the network
//! tests, and rank 0 records the merged report.

use super::outputs::Outputs;
use super::recorder::Recorder;
use super::suite::{self, Job};
use crate::bench::net::server::ServerConfig;
use crate::bench::net::{BackgroundServer, NetOptions, NetPoint, NetSession, NetWorkload};
use crate::cluster::coordinator::{Coordinator, Plan};
use crate::cluster::identity::Identity;
use crate::cluster::messages::LinkTest;
use crate::cluster::messages::NodeHello;
use crate::cluster::rendezvous::{self, Locator};
use crate::cluster::worker::{self, Joining, RankWork};
use crate::error::{Interrupted, UsageError};
use crate::results::fleet::Fleet;
use crate::wire::client::Target;

/// The tests between the nodes, as the command line states them.
pub use crate::bench::net::{
    DEFAULT_TCP_MESSAGE, DEFAULT_UDP_MESSAGE, Proto, TestKind, TestParams,
};
use crate::results::{Report, ResultRecord};
use crate::sysinfo::sysfs::read_trimmed;
use crate::sysinfo::{ClockBudget, collect};
use crate::units::format_duration;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::path::PathBuf;
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

/// What one rank of a multi-node run does.
pub struct ClusterRun {
    /// This process's rank, world size and local rank.
    pub identity: Identity,
    /// The profile's name (for messages).
    pub profile: String,
    /// The profile's node-local jobs.
    pub jobs: Vec<Job>,
    /// The network tests between nodes, the time limits and the outlier rule.
    pub plan: Plan,
    /// Where rank 0's coordinator is (HOST[:PORT]), when given.
    pub coordinator: Option<String>,
    /// A directory every rank sees, for rank 0's address.
    pub rendezvous: Option<PathBuf>,
    /// Names the run in the rendezvous directory.
    pub run_id: Option<String>,
    /// Rank 0: the coordinator's port and address.
    pub port: Option<u16>,
    pub bind: IpAddr,
    /// The address the other ranks use for this one.
    pub advertise: Option<IpAddr>,
    /// Shared secret of the network tests between ranks.
    pub token: Option<String>,
    pub join_timeout: Duration,
    /// List the steps and the estimated time; measure nothing.
    pub dry_run: bool,
    /// Rank 0: one HPL over the machines after the rest (`--hpl`).
    pub hpl: Option<HplRequest>,
    /// Rank 0's outputs (the other ranks write none).
    pub outputs: Outputs,
}

/// `--hpl` on rank 0, checked: hpcc's path, the N asked for, and where the ranks came from.
#[derive(Debug, Clone)]
pub struct HplRequest {
    pub program: PathBuf,
    pub n: Option<usize>,
    pub identity_source: String,
}

/// Runs this rank's part; on rank 0 the merged report is recorded to `c.outputs`.
pub fn run(mut c: ClusterRun, argv: Vec<String>) -> anyhow::Result<()> {
    let id = c.identity;
    let rank0 = id.rank == 0;
    let log = rank0 && !c.outputs.quiet;
    if rank0 && !c.dry_run {
        crate::cluster::open_files::make_room(id.world_size).map_err(UsageError)?;
    }
    if log || c.dry_run {
        announce(&c)?;
        if c.dry_run {
            return list_link_steps(&c.plan, id.world_size);
        }
    }
    crate::runner::stop::graceful();
    let env = |k: &str| std::env::var(k).ok();
    let run_id = rendezvous::run_id(c.run_id.as_deref(), env);
    let net = net_server(
        matches!(c.advertise, Some(IpAddr::V6(_))),
        c.token.clone(),
        // The tools' servers serve the links' tests: none without them.
        c.outputs.reference && !c.plan.patterns.is_empty(),
    )
    .map_err(|e| anyhow::anyhow!("cannot start this rank's network server: {e}"))?;
    let hello = hello(&c, net.addr().port())?;
    let deadline = Instant::now() + c.plan.total_timeout();
    let mut rank = Rank {
        jobs: Some(std::mem::take(&mut c.jobs)),
        argv: argv.clone(),
        token: c.token.clone(),
    };
    if !rank0 {
        return join(&c, &run_id, hello, deadline, &mut rank);
    }
    // Rank 0: the coordinator in a thread, and a rank like the others.
    let (coordinator, listening, file) = bind_coordinator(&c, &run_id, log)?;
    let rx = spawn_coordinator(coordinator, c.plan.clone(), argv.clone())?;
    let own = own_locator(c.bind, listening.port());
    let joining = Joining {
        locator: &own,
        default_port: listening.port(),
        timeout: c.join_timeout,
    };
    let mine = worker::run(&joining, hello, c.token.clone(), deadline, &mut rank);
    let interrupted = crate::runner::stop::requested();
    if let Err(e) = &mine
        && !interrupted
        && log
    {
        let e = crate::text::printable(&e.to_string());
        eprintln!("peakbench cluster: rank 0's own part ended early: {e}");
    }
    let merged = merged_report(&rx, interrupted);
    remove(&file);
    drop(net);
    let Some(merged) = merged else {
        return Err(if interrupted {
            Interrupted.into()
        } else {
            anyhow::anyhow!("the coordinator stopped unexpectedly")
        });
    };
    let mut report = merged.map_err(|e| anyhow::anyhow!("the cluster run failed: {e}"))?;
    if let (Some(h), Some(fleet), false) = (&c.hpl, report.fleet.as_mut(), interrupted) {
        multi_node_hpl(h, fleet, &report.results, log);
    }
    record(report, argv, &c.outputs, interrupted)
}

/// What this rank is about to do, on standard error (rank 0, or every rank with --dry-run).
fn announce(c: &ClusterRun) -> anyhow::Result<()> {
    let id = c.identity;
    eprintln!(
        "peakbench cluster run: rank {} of {} ({}); profile {} without its net jobs: {} jobs, about {} per node; at most {} network steps; at most {}",
        id.rank,
        id.world_size,
        serde_json::to_value(id.source)?.as_str().unwrap_or("?"),
        c.profile,
        c.jobs.len(),
        format_duration(suite::total(&c.jobs)),
        c.plan.max_link_steps(),
        format_duration(c.plan.total_timeout())
    );
    if let Some(h) = &c.hpl {
        eprintln!(
            "then one HPL over the machines ({}, {}), one process per core, N = {}",
            crate::cluster::hpl::launcher(&h.identity_source).unwrap_or("?"),
            h.program.display(),
            h.n.map_or_else(
                || "the largest LINPACK N × √machines".to_string(),
                |n| n.to_string()
            )
        );
    }
    Ok(())
}

/// --dry-run: the network steps between `world_size` ranks, each with its links, on standard
/// output.
fn list_link_steps(plan: &Plan, world_size: u32) -> anyhow::Result<()> {
    let same_machine = vec![String::new(); world_size as usize];
    for (pattern, step) in plan.link_steps(&same_machine) {
        let links: Vec<String> = step
            .iter()
            .map(|l| format!("{}→{}", l.src, l.dst))
            .collect();
        crate::files::print(&format!("{pattern}: {}\n", links.join(" ")))?;
    }
    Ok(())
}

/// How this rank introduces itself to the coordinator: its identity, its machine and the port
/// of its network server.
fn hello(c: &ClusterRun, net_port: u16) -> anyhow::Result<NodeHello> {
    let id = c.identity;
    Ok(NodeHello {
        rank: id.rank,
        world_size: id.world_size,
        local_rank: id.local_rank,
        identity_source: serde_json::to_value(id.source)?
            .as_str()
            .unwrap_or("unknown")
            .to_string(),
        hostname: hostname(),
        machine_id: machine_id(),
        net_port,
        advertise: c.advertise,
    })
}

/// This rank's duties: the node-local profile (run once, silently, into its own report) and
/// the link tests it is the client of.
struct Rank {
    jobs: Option<Vec<Job>>,
    argv: Vec<String>,
    token: Option<String>,
}

impl RankWork for Rank {
    fn local(&mut self) -> (Option<Report>, Vec<String>) {
        let Some(jobs) = self.jobs.take() else {
            return (None, vec!["the profile was asked for twice".to_string()]);
        };
        let mut rec = Recorder::new(self.argv.clone(), Outputs::silent());
        let failed = match suite::run_jobs(jobs, &mut rec) {
            Ok(f) => f
                .into_iter()
                .map(|(job, e)| format!("job {job} failed: {e}"))
                .collect(),
            Err(e) => vec![format!("{e:#}")],
        };
        (rec.into_report(), failed)
    }

    fn link(&mut self, test: &LinkTest) -> (Vec<ResultRecord>, Option<String>) {
        link_test(test, self.token.clone())
    }
}

/// This rank's network server on an ephemeral port of every IPv4 (or, with `ipv6`, IPv6)
/// address, stopped when dropped; with `references`, it starts the reference tools' servers
/// for the link tests of other ranks (as `net serve --references`).
fn net_server(
    ipv6: bool,
    token: Option<String>,
    references: bool,
) -> std::io::Result<BackgroundServer> {
    let any: IpAddr = if ipv6 {
        IpAddr::V6(std::net::Ipv6Addr::UNSPECIFIED)
    } else {
        IpAddr::V4(Ipv4Addr::UNSPECIFIED)
    };
    BackgroundServer::start(
        SocketAddr::new(any, 0),
        ServerConfig {
            token,
            log: false,
            tools: references.then(|| {
                std::sync::Arc::new(crate::reference::remote::Launcher::from_env())
                    as std::sync::Arc<dyn crate::wire::tools::ToolServers>
            }),
            ..Default::default()
        },
    )
}

/// Runs one link test as its client: throughput (this rank sends) and latency (this rank
/// pings). A test that fails gives its error and the records measured before it.
fn link_test(t: &LinkTest, token: Option<String>) -> (Vec<ResultRecord>, Option<String>) {
    let proto = t.throughput.or(t.latency).map_or(Proto::Tcp, |p| p.proto);
    let opts = NetOptions {
        workloads: Vec::new(),
        protocols: vec![proto],
        streams: vec![1],
        message_sizes: None,
        duration: Duration::ZERO,
        omit: Duration::ZERO,
        reverse: false,
        rate_bps: 0,
        busy_poll: Duration::ZERO,
        busy_poll_asked: true,
        repeat: t.repeat.max(1) as usize,
        precision: None,
        link_gbps: None,
        propagation_us: None,
        bidir: false,
        socket: Default::default(),
        total_bytes: None,
        count: None,
        scaling: crate::results::params::Scaling::Strong,
        mps: 0,
        load: Vec::new(),
        amount_bound: None,
        sustain: None,
        percentiles: Default::default(),
    };
    let session = NetSession::remote(
        opts,
        Target {
            addr: t.server,
            token: token.clone(),
        },
    );
    let mut records = Vec::new();
    let mut error = None;
    for (workload, params) in [
        (NetWorkload::Throughput, t.throughput),
        (NetWorkload::Latency, t.latency),
    ] {
        let Some(params) = params else { continue };
        match session.run(NetPoint { workload, params }, &mut || {}) {
            Ok(recs) => records.extend(recs),
            Err(e) => {
                error = Some(format!(
                    "{} {}→{} {}: {e}",
                    t.pattern,
                    t.src,
                    t.dst,
                    workload.name()
                ));
                break;
            }
        }
    }
    if t.reference {
        add_references(&mut records, token);
    }
    (records, error)
}

/// The reference tools' figures for a link's records, measured against the servers the
/// destination rank's peakbench starts for them (or why there is none).
fn add_references(records: &mut [ResultRecord], token: Option<String>) {
    let mut ctx = super::recorder::references();
    ctx.net_token = token;
    for r in records.iter_mut() {
        match crate::reference::measure(r, &ctx) {
            Some(Ok(reference)) => r.reference = Some(reference),
            Some(Err(e)) => r.reference_unknown_reason = Some(e),
            None => {}
        }
    }
}

/// A rank other than 0: finds where rank 0 is (--coordinator, the environment or the
/// rendezvous directory), joins it and obeys it until it finishes.
fn join(
    c: &ClusterRun,
    run_id: &str,
    hello: NodeHello,
    deadline: Instant,
    rank: &mut Rank,
) -> anyhow::Result<()> {
    let id = c.identity;
    let env = |k: &str| std::env::var(k).ok();
    let locator = rendezvous::locate(
        c.coordinator.as_deref(),
        c.rendezvous.as_deref(),
        run_id,
        id.world_size,
        env,
    )
    .ok_or_else(|| {
        UsageError(format!(
            "rank {} of {} cannot tell where rank 0 is: give --coordinator HOST[:PORT], set PEAKBENCH_COORDINATOR, or give every rank the same --rendezvous DIR",
            id.rank, id.world_size
        ))
    })?;
    let joining = Joining {
        locator: &locator,
        default_port: rendezvous::DEFAULT_PORT,
        timeout: c.join_timeout,
    };
    let done = worker::run(&joining, hello, c.token.clone(), deadline, rank)
        .map_err(|e| worker_error(e, id.rank))?;
    if !c.outputs.quiet {
        let done = crate::text::printable(&done.to_string());
        eprintln!("peakbench cluster: rank {} done: {done}", id.rank);
    }
    Ok(())
}

/// Rank 0's coordinator, listening on --bind and --port (any free port where the ranks find
/// it in the rendezvous directory), with its addresses written there: the coordinator, where
/// it listens and the rendezvous file.
fn bind_coordinator(
    c: &ClusterRun,
    run_id: &str,
    log: bool,
) -> anyhow::Result<(Coordinator, SocketAddr, Option<PathBuf>)> {
    let port = c.port.unwrap_or(if c.rendezvous.is_some() {
        0
    } else {
        rendezvous::DEFAULT_PORT
    });
    let coordinator = Coordinator::bind(SocketAddr::new(c.bind, port), c.token.clone()).map_err(|e| {
        UsageError(format!(
            "cannot listen on {}:{port} for the coordinator: {e}; choose another --port or --bind",
            c.bind
        ))
    })?;
    let listening = coordinator.local_addr()?;
    let file = c
        .rendezvous
        .as_ref()
        .map(|d| rendezvous::file_in(d, run_id));
    if let Some(path) = &file {
        let ips = match c.advertise {
            Some(ip) => vec![ip],
            None if !c.bind.is_unspecified() => vec![c.bind],
            None => rendezvous::local_addresses(),
        };
        let addrs: Vec<SocketAddr> = ips
            .into_iter()
            .map(|ip| SocketAddr::new(ip, listening.port()))
            .collect();
        rendezvous::write(path, &addrs).map_err(|e| {
            UsageError(format!(
                "cannot write the rendezvous file {}: {e}; give a directory every rank can write and read",
                path.display()
            ))
        })?;
    }
    if log {
        eprintln!(
            "peakbench cluster: coordinator listening on {listening}{}",
            file.as_ref()
                .map(|p| format!(", address in {}", p.display()))
                .unwrap_or_default()
        );
    }
    Ok((coordinator, listening, file))
}

/// Runs the coordinator in a thread of its own; its merged report comes through the channel.
fn spawn_coordinator(
    coordinator: Coordinator,
    plan: Plan,
    argv: Vec<String>,
) -> anyhow::Result<Receiver<Result<Report, String>>> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .name("cluster-coordinator".into())
        .spawn(move || {
            let merged = coordinator.run(&plan, argv, || collect(ClockBudget::default()));
            let _ = tx.send(merged);
        })?;
    Ok(rx)
}

/// Where rank 0's own part finds its coordinator: the address it is bound to, loopback where
/// that is any address.
fn own_locator(bind: IpAddr, port: u16) -> Locator {
    Locator::Address {
        addr: SocketAddr::new(
            match bind {
                IpAddr::V4(ip) if ip.is_unspecified() => IpAddr::V4(Ipv4Addr::LOCALHOST),
                IpAddr::V6(ip) if ip.is_unspecified() => IpAddr::V6(Ipv6Addr::LOCALHOST),
                ip => ip,
            },
            port,
        )
        .to_string(),
        source: "rank 0",
    }
}

/// The coordinator's merged report, or None where it stopped without one. After Ctrl-C the
/// coordinator ends the step it is in and merges what was measured; it is waited for a little
/// only.
fn merged_report(
    rx: &Receiver<Result<Report, String>>,
    interrupted: bool,
) -> Option<Result<Report, String>> {
    if interrupted {
        rx.recv_timeout(Duration::from_secs(15)).ok()
    } else {
        rx.recv().ok()
    }
}

/// `--hpl`: one HPL over the machines of `fleet`, its result (or why it failed) added to the
/// fleet.
fn multi_node_hpl(h: &HplRequest, fleet: &mut Fleet, results: &[ResultRecord], log: bool) {
    if log {
        eprintln!(
            "peakbench cluster: HPL over {} machine(s) with {}",
            crate::cluster::hpl::machines(fleet).len(),
            crate::cluster::hpl::launcher(&h.identity_source).unwrap_or("?")
        );
    }
    let blas_core = crate::bench::linalg::system_blas::SystemBlas::detected_core();
    let hpl = crate::cluster::hpl::run(
        &h.program,
        &h.identity_source,
        fleet,
        results,
        h.n,
        blas_core.as_deref(),
    );
    if let Some(e) = &hpl.error {
        fleet.notes.push(format!("the multi-node HPL: {e}"));
    }
    fleet.hpl = Some(hpl);
}

/// Records the merged report to `outputs`; after Ctrl-C it is kept and the run ends as
/// interrupted.
fn record(
    report: Report,
    argv: Vec<String>,
    outputs: &Outputs,
    interrupted: bool,
) -> anyhow::Result<()> {
    if interrupted {
        let mut rec = Recorder::new(argv, outputs.clone());
        let outcome = rec.adopt(report).and(Err(Interrupted.into()));
        return rec.finish(outcome);
    }
    // A rank that failed, a profile job or a link test that failed: exit code 1 (as a failed
    // job of `peakbench run`), with what was measured kept.
    let notes: Vec<String> = report.fleet.iter().flat_map(|f| f.notes.clone()).collect();
    let mut rec = Recorder::new(argv, outputs.clone());
    let outcome = rec.adopt(report).and_then(|()| {
        if notes.is_empty() {
            return Ok(());
        }
        let shown: Vec<&str> = notes.iter().take(3).map(String::as_str).collect();
        let more = notes.len().saturating_sub(shown.len());
        Err(anyhow::anyhow!(
            "the run is incomplete: {}{}; the points measured are kept",
            shown.join("; "),
            if more > 0 {
                format!(" (and {more} more in the report's notes)")
            } else {
                String::new()
            }
        ))
    });
    rec.finish(outcome)
}

/// This machine's id: ranks with the same one share the machine and take turns.
fn machine_id() -> String {
    ["/etc/machine-id", "/var/lib/dbus/machine-id"]
        .iter()
        .find_map(|p| read_trimmed(p).filter(|s| !s.is_empty()))
        .unwrap_or_else(|| format!("host:{}", hostname()))
}

fn hostname() -> String {
    read_trimmed("/proc/sys/kernel/hostname").unwrap_or_else(|| "unknown".into())
}

fn remove(file: &Option<PathBuf>) {
    if let Some(p) = file {
        let _ = std::fs::remove_file(p);
    }
}

fn worker_error(e: worker::WorkerError, rank: u32) -> anyhow::Error {
    match e {
        worker::WorkerError::Interrupted => Interrupted.into(),
        e => anyhow::anyhow!("rank {rank}: {e}"),
    }
}
