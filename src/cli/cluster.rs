//! `peakbench cluster`: the multi-node run. `cluster run` is started once per node by the
//! cluster's launcher (mpirun, srun, an SSH loop, a Kubernetes indexed Job); `cluster identity`
//! shows the rank each process gets from its launcher.

use super::common::{OutputArgs, UsageError, count_in, parse_duration};
use super::recorder::Recorder;
use super::run::{self, format_duration};
use crate::bench::net::{Proto, TestKind, TestParams};
use crate::cluster::coordinator::{Coordinator, Pattern, Plan};
use crate::cluster::identity::{self, Flags, Identity};
use crate::cluster::messages::NodeHello;
use crate::cluster::rendezvous::{self, Locator};
use crate::cluster::worker::{self, Joining};
use crate::results::fleet::OutlierRule;
use crate::sysinfo::sysfs::read_trimmed;
use crate::sysinfo::{ClockBudget, collect};
use clap::{Args, Subcommand};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::path::PathBuf;
use std::time::{Duration, Instant};

#[derive(Debug, Args)]
pub struct ClusterArgs {
    #[command(subcommand)]
    pub command: ClusterCommand,
}

#[derive(Debug, Subcommand)]
pub enum ClusterCommand {
    /// Show this process's rank, world size and local rank, and the launcher they came from
    /// (flags, Open MPI, PMI, PMIx, a Slurm step, a Kubernetes indexed Job), as JSON.
    Identity(IdentityArgs),
    /// Run once per node under the launcher: every node runs the profile (ranks sharing a
    /// machine take turns), then the network between nodes is measured in rounds of disjoint
    /// pairs, a ring and a bisection; rank 0 merges everything into one report.
    Run(Box<RunArgs>),
}

#[derive(Debug, Args)]
pub struct IdentityArgs {
    /// This process's rank (overrides the launcher's).
    #[arg(long)]
    pub rank: Option<u32>,
    /// The number of processes in the run.
    #[arg(long)]
    pub world_size: Option<u32>,
    /// This process's rank among those on its node.
    #[arg(long)]
    pub local_rank: Option<u32>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum NetProto {
    Tcp,
    Udp,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub id: IdentityArgs,
    /// The profile every node runs (its `net` jobs are left out: the tests between nodes
    /// measure the network).
    #[arg(long, default_value = "quick")]
    pub profile: String,
    /// Where rank 0's coordinator listens, HOST[:PORT] (default port 5302). Else
    /// PEAKBENCH_COORDINATOR, --rendezvous, or the first host of the Slurm node list.
    #[arg(long, value_name = "HOST[:PORT]")]
    pub coordinator: Option<String>,
    /// A directory every rank sees (a shared file system): rank 0 writes its address there and
    /// the others read it.
    #[arg(long, value_name = "DIR", env = "PEAKBENCH_RENDEZVOUS")]
    pub rendezvous: Option<PathBuf>,
    /// Names this run in the rendezvous directory (default: the Slurm job and step, or the
    /// PMIx namespace of mpirun).
    #[arg(long)]
    pub run_id: Option<String>,
    /// Rank 0: the coordinator's port (default 5302; with --rendezvous any free port).
    #[arg(long)]
    pub port: Option<u16>,
    /// Rank 0: the address the coordinator listens on.
    #[arg(long, default_value = "0.0.0.0")]
    pub bind: IpAddr,
    /// The address the other ranks should use for this one (default: the one its connection
    /// to the coordinator comes from).
    #[arg(long)]
    pub advertise: Option<IpAddr>,
    /// Shared secret for the network tests between ranks (as `net serve --token`).
    #[arg(long, env = "PEAKBENCH_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
    /// Patterns of network tests between nodes: pairs (every ordered pair in rounds of
    /// disjoint pairs, and every node to itself), ring, bisection.
    #[arg(long, value_delimiter = ',', default_value = "pairs,ring,bisection")]
    pub patterns: Vec<Pattern>,
    /// Only the network tests between nodes (no node-local profile).
    #[arg(long, conflicts_with = "no_net")]
    pub net_only: bool,
    /// Only the node-local profile (no network tests between nodes).
    #[arg(long)]
    pub no_net: bool,
    /// Transport of the tests between nodes.
    #[arg(long, value_enum, default_value = "tcp")]
    pub net_protocol: NetProto,
    /// Measured time of one network test.
    #[arg(long, value_parser = parse_duration, default_value = "2s")]
    pub net_duration: Duration,
    /// Repetitions of each network test.
    #[arg(long, default_value = "3", value_parser = parse_net_repeat)]
    pub net_repeat: u32,
    /// Bytes per message of the throughput tests (128K for TCP, 1400 for UDP by default).
    #[arg(long, value_parser = super::net::parse_message)]
    pub net_message_size: Option<u32>,
    /// Bytes per ping of the latency tests.
    #[arg(long, value_parser = super::net::parse_message, default_value = "64")]
    pub ping_size: u32,
    /// How long the ranks wait for each other to join.
    #[arg(long, value_parser = parse_join_timeout, default_value = "60s")]
    pub join_timeout: Duration,
    /// A node's value is an outlier when it is more than this many scaled median absolute
    /// deviations from its peers' median ...
    #[arg(long, default_value = "3.5", value_parser = super::common::parse_positive)]
    pub outlier_mad: f64,
    /// ... and more than this many percent away from it.
    #[arg(long, default_value = "10", value_parser = super::common::parse_positive)]
    pub outlier_percent: f64,
    /// List the steps and the estimated time; measure nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Rank 0's outputs (the other ranks write none).
    #[command(flatten)]
    pub output: OutputArgs,
}

fn parse_net_repeat(s: &str) -> Result<u32, String> {
    count_in(s, 1, worker::MAX_REPEAT as u64)
}

/// Up to an hour: ranks may wait for nodes to boot or container images to be pulled.
fn parse_join_timeout(s: &str) -> Result<Duration, String> {
    let d = humantime::parse_duration(s.trim())
        .map_err(|_| format!("'{s}' is not a duration: use e.g. 60s or 10min"))?;
    if d < Duration::from_secs(1) || d > Duration::from_secs(3600) {
        return Err(format!("'{s}' is out of range: 1s to 1h"));
    }
    Ok(d)
}

pub fn run(args: ClusterArgs, argv: Vec<String>) -> anyhow::Result<()> {
    match args.command {
        ClusterCommand::Identity(a) => {
            let id = detect(&a)?;
            println!("{}", serde_json::to_string(&id)?);
            Ok(())
        }
        ClusterCommand::Run(a) => run_cluster(*a, argv),
    }
}

fn detect(a: &IdentityArgs) -> anyhow::Result<Identity> {
    let flags = Flags {
        rank: a.rank,
        world_size: a.world_size,
        local_rank: a.local_rank,
    };
    Ok(identity::detect(flags, |k| std::env::var(k).ok()).map_err(UsageError)?)
}

/// The tests between nodes, from the options.
fn net_params(a: &RunArgs) -> anyhow::Result<(Option<TestParams>, Option<TestParams>)> {
    if a.no_net {
        return Ok((None, None));
    }
    let proto = match a.net_protocol {
        NetProto::Tcp => Proto::Tcp,
        NetProto::Udp => Proto::Udp,
    };
    let base = TestParams {
        kind: TestKind::Throughput,
        proto,
        streams: 1,
        message_bytes: a.net_message_size.unwrap_or(match proto {
            Proto::Tcp => crate::bench::net::DEFAULT_TCP_MESSAGE,
            Proto::Udp => crate::bench::net::DEFAULT_UDP_MESSAGE,
        }),
        duration_ms: a.net_duration.as_millis() as u64,
        omit_ms: (a.net_duration.as_millis() as u64 / 4).min(1000),
        reverse: false,
        rate_bps: 0,
        busy_poll_us: 50,
    };
    let ping = TestParams {
        kind: TestKind::Latency,
        message_bytes: a.ping_size,
        ..base
    };
    for p in [&base, &ping] {
        p.validate()
            .map_err(|e| UsageError(format!("the tests between nodes: {e}")))?;
    }
    Ok((Some(base), Some(ping)))
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

fn run_cluster(a: RunArgs, argv: Vec<String>) -> anyhow::Result<()> {
    let id = detect(&a.id)?;
    let rank0 = id.rank == 0;
    if rank0 {
        a.output.validate()?;
    }
    let (profile, jobs) = run::plan(&a.profile)?;
    let jobs: Vec<run::Job> = jobs
        .into_iter()
        .filter(|j| j.line.first().map(String::as_str) != Some("net"))
        .collect();
    let (throughput, latency) = net_params(&a)?;
    let plan = Plan {
        world_size: id.world_size,
        local: !a.net_only,
        patterns: if a.no_net {
            Vec::new()
        } else {
            a.patterns.clone()
        },
        throughput,
        latency,
        repeat: a.net_repeat,
        join_timeout: a.join_timeout,
        local_timeout: run::total(&jobs) * 3 + Duration::from_secs(120),
        rule: OutlierRule {
            mad_factor: a.outlier_mad,
            min_deviation: a.outlier_percent / 100.0,
            ..Default::default()
        },
        log: rank0 && !a.output.quiet,
    };
    let log = rank0 && !a.output.quiet;
    if log || a.dry_run {
        eprintln!(
            "peakbench cluster run: rank {} of {} ({}); profile {} without its net jobs: {} jobs, about {} per node; at most {} network steps; at most {}",
            id.rank,
            id.world_size,
            serde_json::to_value(id.source)?.as_str().unwrap_or("?"),
            profile.name,
            jobs.len(),
            format_duration(run::total(&jobs)),
            plan.max_link_steps(),
            format_duration(plan.total_timeout())
        );
        if a.dry_run {
            let same_machine = vec![String::new(); id.world_size as usize];
            for (pattern, step) in plan.link_steps(&same_machine) {
                let links: Vec<String> = step
                    .iter()
                    .map(|l| format!("{}→{}", l.src, l.dst))
                    .collect();
                println!("{pattern}: {}", links.join(" "));
            }
            return Ok(());
        }
    }
    crate::runner::stop::install();
    let env = |k: &str| std::env::var(k).ok();
    let run_id = rendezvous::run_id(a.run_id.as_deref(), env);
    let net = worker::net_server(matches!(a.advertise, Some(IpAddr::V6(_))), a.token.clone())
        .map_err(|e| anyhow::anyhow!("cannot start this rank's network server: {e}"))?;
    let hello = NodeHello {
        rank: id.rank,
        world_size: id.world_size,
        local_rank: id.local_rank,
        identity_source: serde_json::to_value(id.source)?
            .as_str()
            .unwrap_or("unknown")
            .to_string(),
        hostname: hostname(),
        machine_id: machine_id(),
        net_port: net.addr().port(),
        advertise: a.advertise,
    };
    let deadline = Instant::now() + plan.total_timeout();
    let mut jobs = Some(jobs);
    let local_argv = argv.clone();
    let mut local = move || {
        let Some(jobs) = jobs.take() else {
            return (None, vec!["the profile was asked for twice".to_string()]);
        };
        let mut rec = Recorder::new(local_argv.clone(), &OutputArgs::silent());
        let failed = match run::run_jobs(jobs, &mut rec) {
            Ok(f) => f
                .into_iter()
                .map(|(job, e)| format!("job {job} failed: {e}"))
                .collect(),
            Err(e) => vec![format!("{e:#}")],
        };
        (rec.into_report(), failed)
    };
    if !rank0 {
        let locator = rendezvous::locate(
            a.coordinator.as_deref(),
            a.rendezvous.as_deref(),
            &run_id,
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
            timeout: a.join_timeout,
        };
        let done = worker::run(&joining, hello, a.token.clone(), deadline, &mut local)
            .map_err(|e| worker_error(e, id.rank))?;
        if !a.output.quiet {
            eprintln!("peakbench cluster: rank {} done: {done}", id.rank);
        }
        return Ok(());
    }
    // Rank 0: the coordinator in a thread, and a rank like the others.
    let port = a.port.unwrap_or(if a.rendezvous.is_some() {
        0
    } else {
        rendezvous::DEFAULT_PORT
    });
    let coordinator = Coordinator::bind(SocketAddr::new(a.bind, port)).map_err(|e| {
        UsageError(format!(
            "cannot listen on {}:{port} for the coordinator: {e}; choose another --port or --bind",
            a.bind
        ))
    })?;
    let listening = coordinator.local_addr()?;
    let file = a
        .rendezvous
        .as_ref()
        .map(|d| rendezvous::file_in(d, &run_id));
    if let Some(path) = &file {
        let ips = match a.advertise {
            Some(ip) => vec![ip],
            None if !a.bind.is_unspecified() => vec![a.bind],
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
    let thread_plan = plan.clone();
    let thread_argv = argv.clone();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .name("cluster-coordinator".into())
        .spawn(move || {
            let merged =
                coordinator.run(
                    &thread_plan,
                    thread_argv,
                    || collect(ClockBudget::default()),
                );
            let _ = tx.send(merged);
        })?;
    let own = Locator::Address {
        addr: SocketAddr::new(
            match a.bind {
                IpAddr::V4(ip) if ip.is_unspecified() => IpAddr::V4(Ipv4Addr::LOCALHOST),
                IpAddr::V6(ip) if ip.is_unspecified() => IpAddr::V6(Ipv6Addr::LOCALHOST),
                ip => ip,
            },
            listening.port(),
        )
        .to_string(),
        source: "rank 0",
    };
    let joining = Joining {
        locator: &own,
        default_port: listening.port(),
        timeout: a.join_timeout,
    };
    let mine = worker::run(&joining, hello, a.token.clone(), deadline, &mut local);
    let interrupted = crate::runner::stop::requested();
    if let Err(e) = &mine
        && !interrupted
        && log
    {
        eprintln!("peakbench cluster: rank 0's own part ended early: {e}");
    }
    // After Ctrl-C the coordinator ends the step it is in and merges what was measured; it is
    // waited for a little only.
    let merged = if interrupted {
        rx.recv_timeout(Duration::from_secs(15)).ok()
    } else {
        rx.recv().ok()
    };
    remove(&file);
    drop(net);
    let Some(merged) = merged else {
        return Err(if interrupted {
            super::Interrupted.into()
        } else {
            anyhow::anyhow!("the coordinator stopped unexpectedly")
        });
    };
    let report = merged.map_err(|e| anyhow::anyhow!("the cluster run failed: {e}"))?;
    if interrupted {
        let mut rec = Recorder::new(argv, &a.output);
        let outcome = rec.adopt(report).and(Err(super::Interrupted.into()));
        return rec.finish(outcome);
    }
    // A rank that failed, a profile job or a link test that failed: exit code 1 (as a failed
    // job of `peakbench run`), with what was measured kept.
    let notes: Vec<String> = report.fleet.iter().flat_map(|f| f.notes.clone()).collect();
    let mut rec = Recorder::new(argv, &a.output);
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

fn remove(file: &Option<PathBuf>) {
    if let Some(p) = file {
        let _ = std::fs::remove_file(p);
    }
}

fn worker_error(e: worker::WorkerError, rank: u32) -> anyhow::Error {
    match e {
        worker::WorkerError::Interrupted => super::Interrupted.into(),
        e => anyhow::anyhow!("rank {rank}: {e}"),
    }
}
