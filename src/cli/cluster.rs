//! `peakbench cluster`: the multi-node run. `cluster run` is started once per node by the
//! cluster's launcher (mpirun, srun, an SSH loop, a Kubernetes indexed Job); `cluster identity`
//! shows the rank each process gets from its launcher.

use super::common::{OutputArgs, UsageError, count_in, parse_duration};
use super::run as suite_run;
use crate::app::cluster::{
    ClusterRun, DEFAULT_TCP_MESSAGE, DEFAULT_UDP_MESSAGE, HplRequest, Proto, TestKind, TestParams,
};
use crate::app::suite::{self, Job};
use crate::cluster::coordinator::{Pattern, Plan};
use crate::cluster::identity::{self, Flags, Identity};
use crate::cluster::worker;
use crate::results::fleet::OutlierRule;
use clap::{Args, Subcommand};
use std::net::IpAddr;
use std::path::PathBuf;
use std::time::Duration;

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
    // Every rank proves the same token to the coordinator and to the others' network servers,
    // and every cluster message is sealed with it.
    #[command(flatten)]
    pub token: super::token::TokenArgs,
    /// Patterns of network tests between nodes: pairs (every ordered pair in rounds of
    /// disjoint pairs, and every node to itself), ring, bisection.
    #[arg(long, value_delimiter = ',', default_value = "pairs,ring,bisection")]
    pub patterns: Vec<Pattern>,
    /// The most rounds of disjoint pairs the pairs pattern measures (each rank against one other
    /// a round, both ways): 63 by default, every pair up to 64 ranks; a larger fleet measures
    /// this many rounds spread evenly over its N − 1 and says so (each rank against that many
    /// others).
    #[arg(long, value_name = "ROUNDS", value_parser = parse_pair_rounds)]
    pub pair_rounds: Option<u32>,
    /// Only the network tests between nodes (no node-local profile).
    #[arg(long, conflicts_with = "no_net")]
    pub net_only: bool,
    /// Only the node-local profile (no network tests between nodes).
    #[arg(long)]
    pub no_net: bool,
    /// Transport of the tests between nodes.
    #[arg(long, value_enum, default_value = "tcp")]
    pub net_protocol: Proto,
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
    /// After the nodes' own points, rank 0 runs one HPL (Debian's hpcc) over the machines, as
    /// the ranks were launched: `mpirun --host` over their addresses, or `srun` in the Slurm
    /// allocation; one process per physical core. hpcc must be installed on every machine.
    #[arg(long)]
    pub hpl: bool,
    /// HPL's N for --hpl (default: the nodes' largest LINPACK N × √machines, a multiple of 64).
    #[arg(long, requires = "hpl", value_name = "N", value_parser = parse_hpl_n)]
    pub hpl_n: Option<usize>,
    /// List the steps and the estimated time; measure nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Rank 0's outputs (the other ranks write none).
    #[command(flatten)]
    pub output: OutputArgs,
}

fn parse_hpl_n(s: &str) -> Result<usize, String> {
    count_in::<usize>(s, 1, 4_000_000)
}

fn parse_pair_rounds(s: &str) -> Result<u32, String> {
    count_in(s, 1, 100_000)
}

fn parse_net_repeat(s: &str) -> Result<u32, String> {
    count_in(s, 1, worker::MAX_REPEAT as u64)
}

/// Up to an hour: ranks may wait for nodes to boot or container images to be pulled.
fn parse_join_timeout(s: &str) -> Result<Duration, String> {
    let d = crate::units::parse_duration_within(s, Duration::from_secs(3600), "1h")
        .map_err(|e| e.to_string())?;
    if d < Duration::from_secs(1) {
        return Err(format!("'{s}' is out of range: 1s to 1h"));
    }
    Ok(d)
}

pub fn run(args: ClusterArgs, argv: Vec<String>) -> anyhow::Result<()> {
    match args.command {
        ClusterCommand::Identity(a) => {
            let id = detect(&a)?;
            crate::files::write_stdout(format!("{}\n", serde_json::to_string(&id)?).as_bytes())?;
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
    let proto = a.net_protocol;
    let base = TestParams {
        kind: TestKind::Throughput,
        proto,
        streams: 1,
        message_bytes: a.net_message_size.unwrap_or(match proto {
            Proto::Tcp => DEFAULT_TCP_MESSAGE,
            Proto::Udp => DEFAULT_UDP_MESSAGE,
        }),
        duration_ms: a.net_duration.as_millis() as u64,
        omit_ms: (a.net_duration.as_millis() as u64 / 4).min(1000),
        reverse: false,
        rate_bps: 0,
        busy_poll_us: 50,
        bidir: false,
        socket: Default::default(),
        amount_per_stream: 0,
        mps: 0,
        load_streams: 0,
        sustain: false,
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

fn run_cluster(a: RunArgs, argv: Vec<String>) -> anyhow::Result<()> {
    let token = a.token.token()?;
    // Every rank's network server listens on every address and, with --reference, starts
    // iperf3's and sockperf's servers for the others: only for a rank that proved the token.
    if a.output.reference && !a.no_net && token.is_none() {
        return Err(UsageError(
            "--reference needs --token or --token-file (or PEAKBENCH_TOKEN): every rank's network server listens on every address and would start iperf3's and sockperf's servers for anybody; give every rank the same token, or add --no-net".into(),
        )
        .into());
    }
    let id = detect(&a.id)?;
    let rank0 = id.rank == 0;
    if rank0 {
        a.output.validate()?;
    }
    // Rank 0 runs the multi-node HPL: checked before anything is measured.
    let hpl = match (a.hpl, rank0) {
        (true, true) => Some(hpl_request(&id, a.hpl_n)?),
        _ => None,
    };
    // Every job checked on this node as it would run, before any node measures.
    let sys = crate::sysinfo::collect(crate::sysinfo::ClockBudget::default());
    // Nothing destructive on every node at once: a profile's disk jobs may not overwrite a
    // file or a device in a cluster run (run `peakbench run` on a node for that).
    let profile = suite_run::load(&a.profile)?;
    suite_run::refuse_destructive(&profile, &[])?;
    let (profile, jobs) = suite_run::plan(
        &suite_run::Read::of(profile)?,
        &sys,
        Default::default(),
        None,
        &Default::default(),
    )?;
    let jobs: Vec<Job> = jobs
        .into_iter()
        .filter(|j| j.line.first().map(String::as_str) != Some("net"))
        .collect();
    let (throughput, latency) = net_params(&a)?;
    if a.pair_rounds.is_some() && (a.no_net || !a.patterns.contains(&Pattern::Pairs)) {
        return Err(UsageError(
            "--pair-rounds bounds the pairs pattern, which this run does not measure: add pairs to --patterns, or drop --pair-rounds".into(),
        )
        .into());
    }
    let plan = Plan {
        world_size: id.world_size,
        local: !a.net_only,
        patterns: if a.no_net {
            Vec::new()
        } else {
            a.patterns.clone()
        },
        pair_rounds: a
            .pair_rounds
            .unwrap_or(crate::cluster::coordinator::DEFAULT_PAIR_ROUNDS),
        throughput,
        latency,
        repeat: a.net_repeat,
        join_timeout: a.join_timeout,
        local_timeout: suite::total(&jobs)
            .saturating_mul(3)
            .saturating_add(Duration::from_secs(120)),
        rule: OutlierRule {
            mad_factor: a.outlier_mad,
            min_deviation: a.outlier_percent / 100.0,
            ..Default::default()
        },
        log: rank0 && !a.output.quiet,
        reference: a.output.reference,
    };
    crate::app::cluster::run(
        ClusterRun {
            identity: id,
            profile: profile.name,
            jobs,
            plan,
            coordinator: a.coordinator,
            rendezvous: a.rendezvous,
            run_id: a.run_id,
            port: a.port,
            bind: a.bind,
            advertise: a.advertise,
            token,
            join_timeout: a.join_timeout,
            dry_run: a.dry_run,
            hpl,
            outputs: a.output.outputs(),
        },
        argv,
    )
}

/// Rank 0's multi-node HPL: hpcc found and usable here, ranks from a launcher it can use.
fn hpl_request(id: &Identity, n: Option<usize>) -> anyhow::Result<HplRequest> {
    use crate::reference::{Availability, Locator, Tool};
    let source = serde_json::to_value(id.source)?
        .as_str()
        .unwrap_or("unknown")
        .to_string();
    crate::cluster::hpl::launcher(&source)
        .map_err(|e| UsageError(format!("--hpl: {e}; start the ranks with mpirun or srun")))?;
    let program = match Locator::from_env().availability(Tool::Hpcc) {
        Availability::Found(f) => f.path,
        Availability::Missing => {
            return Err(UsageError(format!(
                "--hpl: hpcc is not installed on rank 0's machine: {}",
                Tool::Hpcc.install()
            ))
            .into());
        }
        Availability::Unusable { reason, .. } => {
            return Err(UsageError(format!("--hpl: hpcc cannot be used: {reason}")).into());
        }
    };
    Ok(HplRequest {
        program,
        n,
        identity_source: source,
    })
}
