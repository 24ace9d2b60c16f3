//! `peakbench net` (the client) and `peakbench net serve`.

use super::common::{
    Counts, OutputArgs, PrecisionArgs, UsageError, bounds, parse_duration, parse_propagation,
    parse_repeat, workload_help,
};
use crate::app::net::{self, DEFAULT_PORT, NetOptions, NetWorkload, Proto, limits};
use crate::app::setting::Setting;
use crate::app::workloads::Workload;
use crate::app::{Recorder, Request};
use crate::results::Subsystem;
use crate::units::format_bytes_binary;
use clap::{Args, Subcommand};
use std::net::{IpAddr, SocketAddr};

#[derive(Debug, Clone, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct NetArgs {
    #[command(subcommand)]
    pub command: Option<NetCommand>,
    #[command(flatten)]
    pub client: ClientArgs,
}

#[derive(Debug, Clone, Subcommand)]
pub enum NetCommand {
    /// Serve clients until Ctrl-C: one test at a time, bounded in every way.
    Serve(ServeArgs),
}

#[derive(Debug, Clone, Args)]
pub struct ClientArgs {
    /// The server, HOST[:PORT] (default port 5301); without it, --loopback.
    #[arg(long, value_name = "HOST[:PORT]", conflicts_with = "loopback")]
    pub server: Option<String>,
    /// Start a server in this process on 127.0.0.1 and measure the local stack (the default).
    #[arg(long)]
    pub loopback: bool,
    #[command(flatten)]
    pub token: super::token::TokenArgs,
    #[arg(long, value_delimiter = ',', value_parser = parse_workload, help = workload_help(Subsystem::Net, false), default_values_t = NetWorkload::defaults())]
    pub workload: Vec<NetWorkload>,
    /// Transports.
    #[arg(long, value_enum, value_delimiter = ',', default_value = "tcp,udp")]
    pub protocol: Vec<Proto>,
    /// Parallel streams, each on its own thread on both sides; a list sweeps.
    #[arg(short = 'P', long, value_parser = parse_streams, default_value = "1")]
    pub streams: Counts,
    /// Bytes per write or datagram (as iperf3: 128K = 128KiB = 131072, 128KB = 128000). Default: 128K for TCP,
    /// 1400 for UDP, 1 for LATENCY.
    #[arg(long, value_delimiter = ',', value_parser = parse_message)]
    pub message_size: Option<Vec<u32>>,
    /// Measured time of one repetition (the defaults measure their four points in about a
    /// minute).
    #[arg(long, value_parser = parse_duration, default_value = "4s")]
    pub duration: std::time::Duration,
    /// Warm-up at the start of each repetition that is not counted (iperf3 --omit).
    #[arg(long, value_parser = parse_omit, default_value = "1s")]
    pub omit: std::time::Duration,
    /// The server sends, the client receives (throughput).
    #[arg(long, conflicts_with = "bidir")]
    pub reverse: bool,
    /// THROUGHPUT both ways at once (iperf3 --bidir): --streams streams each way; each way's
    /// goodput (and UDP loss and jitter) and their sum.
    #[arg(long)]
    pub bidir: bool,
    /// Socket buffers of every data socket on both ends, SO_SNDBUF and SO_RCVBUF (iperf3 -w;
    /// 256K = 256 KiB). Linux doubles it and caps it at net.core.[rw]mem_max; the buffers the
    /// kernel gave are recorded.
    #[arg(long, value_name = "BYTES", value_parser = parse_window)]
    pub window: Option<u32>,
    /// TCP congestion control on both ends (iperf3 -C), e.g. cubic, bbr, reno; refused with the
    /// kernel's list when it has no such one.
    #[arg(long, value_name = "NAME", value_parser = parse_congestion)]
    pub congestion: Option<crate::results::socket::CcName>,
    /// TCP maximum segment size on both ends (iperf3 -M), bytes, 88 to 32767.
    #[arg(long, value_name = "BYTES", value_parser = parse_mss)]
    pub mss: Option<u32>,
    /// TCP_NODELAY: on sends every write at once, off lets Nagle's algorithm gather small
    /// writes. Default: on for LATENCY, off for THROUGHPUT.
    #[arg(long, value_name = "on|off", value_parser = parse_on_off)]
    pub no_delay: Option<bool>,
    /// THROUGHPUT's TCP senders send with MSG_ZEROCOPY (the kernel pins the pages instead of
    /// copying them; over loopback and veth it copies them after all, and says so).
    #[arg(long)]
    pub zerocopy: bool,
    /// Fixed work instead of a time (iperf3 -n): the payload bytes THROUGHPUT's TCP senders
    /// send, without a warm-up (10G = 10 GiB, 10GB = 10^10 B), split between the streams with
    /// --scaling strong (the default) or each stream's with weak. --duration, given, bounds it;
    /// otherwise the bound is 10 minutes.
    #[arg(long, value_name = "BYTES", value_parser = parse_total_bytes)]
    pub total_bytes: Option<u64>,
    /// Instead of --duration for THROUGHPUT (LATENCY and CONNECT keep its default): its TCP
    /// senders send until their goodput is steady, this long at most (fio's steadystate: over the last 5 intervals of a twentieth of it,
    /// every interval within 10 % of their mean and their trend under 5 %; docs/net.md).
    #[arg(long, value_name = "DURATION", value_parser = parse_sustain, conflicts_with_all = ["duration", "total_bytes"])]
    pub sustain: Option<std::time::Duration>,
    /// The percentiles of LATENCY's round trips and CONNECT's connections each point reports
    /// beside min and max (sockperf's --percentile), e.g. 50,99,99.9,99.999: above 0 and below
    /// 100, 4 decimals and 16 at most. Default: 50,90,99,99.9,99.99.
    #[arg(long, value_name = "LIST", value_parser = crate::measure::latency::Percentiles::parse)]
    pub percentiles: Option<crate::measure::latency::Percentiles>,
    /// Fixed work for LATENCY (iperf3 -k): round trips after the warm-up, split between the
    /// streams with --scaling strong or each stream's with weak; bounded as --total-bytes.
    #[arg(long, value_name = "N", value_parser = parse_count)]
    pub count: Option<u64>,
    /// With --total-bytes or --count: strong (the total split between the streams) or weak
    /// (each stream's).
    #[arg(long, value_enum, default_value = "strong")]
    pub scaling: crate::results::params::Scaling,
    /// LATENCY's round trips per second per stream, paced (sockperf --mps; under load when
    /// THROUGHPUT streams run beside it); default: back to back.
    #[arg(long, value_name = "N", value_parser = parse_mps)]
    pub mps: Option<u32>,
    /// LATENCY under load: bulk streams from the client to the server beside the pings, on the
    /// same link (TCP 128K writes, UDP 1400-byte datagrams); a list sweeps, 0 is idle, e.g.
    /// 0,1,2: the round trips' percentiles against idle show the queue.
    #[arg(long, value_name = "N[,N...]", value_parser = parse_load)]
    pub load: Option<Counts>,
    /// UDP target rate per stream, bit/s with k, M, G (decimal, as iperf3 -b); 0 = unlimited.
    #[arg(long, value_parser = parse_rate, default_value = "0")]
    pub rate: u64,
    /// How long a receiver keeps polling an empty socket before it sleeps (e.g. 50us); 0 sleeps
    /// at once, as iperf3 does. A sleeping receiver must be woken for every burst of data, which
    /// on a VM costs the sender's CPU an interrupt.
    #[arg(long, value_parser = parse_busy_poll, default_value = "50us")]
    pub busy_poll: std::time::Duration,
    /// Repetitions of every point (each its own test).
    #[arg(long, default_value = "3", value_parser = parse_repeat)]
    pub repeat: usize,
    #[command(flatten)]
    pub precision: PrecisionArgs,
    /// Measure each point below 90 % of its peak once more with the knob of its first cause
    /// changed (the kernel's own window for a `window` asked with --window), to confirm or drop
    /// that cause (docs/diagnosis.md).
    #[arg(long)]
    pub diagnose: bool,
    /// The link speed in Gbit/s, when sysfs cannot tell (virtio, veth) or is wrong (0.001 to
    /// 100000).
    #[arg(long, value_name = "GBPS", value_parser = bounds::LINK_GBPS.parser())]
    pub link_gbps: Option<f64>,
    /// The path's one-way propagation delay in µs (cables, switches; 0 on loopback): with the
    /// link speed, the floor of LATENCY's round trip (the message serialised both ways plus
    /// twice this; 0 to 10000000).
    #[arg(long, value_name = "US", value_parser = parse_propagation)]
    pub propagation_us: Option<f64>,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// The defaults the command line gives (a test of `cli` holds them equal to a parse of the
/// bare subcommand): a job made in code ([`Setting`]) starts from them.
impl Default for ClientArgs {
    fn default() -> ClientArgs {
        ClientArgs {
            server: None,
            loopback: false,
            token: super::token::TokenArgs::default(),
            workload: NetWorkload::defaults(),
            protocol: vec![Proto::Tcp, Proto::Udp],
            streams: Counts(vec![1]),
            message_size: None,
            duration: std::time::Duration::from_secs(4),
            omit: std::time::Duration::from_secs(1),
            reverse: false,
            bidir: false,
            window: None,
            congestion: None,
            mss: None,
            no_delay: None,
            zerocopy: false,
            total_bytes: None,
            sustain: None,
            percentiles: None,
            count: None,
            scaling: crate::results::params::Scaling::Strong,
            mps: None,
            load: None,
            rate: 0,
            busy_poll: std::time::Duration::from_micros(50),
            repeat: 3,
            precision: PrecisionArgs::default(),
            diagnose: false,
            link_gbps: None,
            propagation_us: None,
            output: OutputArgs::default(),
        }
    }
}

#[derive(Debug, Clone, Args)]
pub struct ServeArgs {
    /// Address to listen on (:: for every IPv4 and IPv6 address). Default: with a token (or
    /// --no-token) 0.0.0.0, every address; without one 127.0.0.1, this host only. Another
    /// address without a token needs --no-token.
    #[arg(long, value_name = "ADDRESS")]
    pub bind: Option<IpAddr>,
    /// TCP port of the control connection; data use ephemeral ports announced over it.
    #[arg(long, default_value_t = DEFAULT_PORT)]
    pub port: u16,
    #[command(flatten)]
    pub token: super::token::TokenArgs,
    /// Serve anyone who reaches the port, without a token: on a --bind other hosts reach
    /// (default 0.0.0.0), with a warning at start. Refused with a token, and on a loopback
    /// --bind (where it would change nothing).
    #[arg(long)]
    pub no_token: bool,
    /// Seconds a client may stay silent before it is dropped.
    #[arg(long, value_parser = parse_duration, default_value = "10s")]
    pub idle_timeout: std::time::Duration,
    /// Tests that may run at once; other clients are told the server is busy.
    #[arg(long, default_value = "1", value_parser = parse_max_tests)]
    pub max_tests: usize,
    /// Start iperf3's and sockperf's servers for a client's `--reference` run, bound to the
    /// address it reached, for that test only (authenticated as a test: same --token, which it
    /// requires unless --bind is a loopback address), at most 128 at once.
    #[arg(long)]
    pub references: bool,
}

fn parse_workload(s: &str) -> Result<NetWorkload, String> {
    s.parse()
}

fn parse_streams(s: &str) -> Result<Counts, String> {
    super::common::parse_counts(s, 1, limits::MAX_STREAMS as u64)
}

fn parse_max_tests(s: &str) -> Result<usize, String> {
    super::common::count_in(s, 1, 64)
}

pub(super) fn parse_message(s: &str) -> Result<u32, String> {
    let n = crate::units::parse_size(s).map_err(|e| e.to_string())?;
    if n == 0 || n > limits::MAX_TCP_MESSAGE as u64 {
        return Err(format!(
            "'{s}' is out of range: 1 byte to {}",
            format_bytes_binary(limits::MAX_TCP_MESSAGE as u64)
        ));
    }
    Ok(n as u32)
}

fn parse_window(s: &str) -> Result<u32, String> {
    let n = crate::units::parse_size(s).map_err(|e| e.to_string())?;
    if n < limits::MIN_WINDOW as u64 || n > limits::MAX_WINDOW as u64 {
        return Err(format!(
            "'{s}' is out of range: {} to {}",
            format_bytes_binary(limits::MIN_WINDOW as u64),
            format_bytes_binary(limits::MAX_WINDOW as u64)
        ));
    }
    Ok(n as u32)
}

fn parse_congestion(s: &str) -> Result<crate::results::socket::CcName, String> {
    crate::results::socket::CcName::new(s)
}

fn parse_mss(s: &str) -> Result<u32, String> {
    super::common::count_in(s, limits::MIN_MSS as u64, limits::MAX_MSS as u64)
}

fn parse_on_off(s: &str) -> Result<bool, String> {
    match s {
        "on" => Ok(true),
        "off" => Ok(false),
        _ => Err(format!(
            "'{}' is neither on nor off",
            crate::text::printable(s)
        )),
    }
}

fn parse_total_bytes(s: &str) -> Result<u64, String> {
    let n = crate::units::parse_size(s).map_err(|e| e.to_string())?;
    if n == 0 || n > limits::MAX_AMOUNT_BYTES {
        return Err(format!(
            "'{s}' is out of range: 1 byte to {}",
            format_bytes_binary(limits::MAX_AMOUNT_BYTES)
        ));
    }
    Ok(n)
}

fn parse_count(s: &str) -> Result<u64, String> {
    super::common::count_in(s, 1, limits::MAX_AMOUNT_ROUND_TRIPS)
}

fn parse_load(s: &str) -> Result<Counts, String> {
    super::common::parse_counts(s, 0, limits::MAX_STREAMS as u64 - 1)
}

fn parse_mps(s: &str) -> Result<u32, String> {
    super::common::count_in(s, 1, limits::MAX_MPS as u64)
}

/// `--sustain`: 1 s to a test's longest ([`limits::MAX_TEST_MS`], with its warm-up).
fn parse_sustain(s: &str) -> Result<std::time::Duration, String> {
    let d = super::common::parse_sustain(s)?;
    if d.as_millis() > u128::from(limits::MAX_TEST_MS) {
        return Err(format!(
            "'{s}' is out of range: a test lasts {} s at most, with its --omit",
            limits::MAX_TEST_MS / 1000
        ));
    }
    Ok(d)
}

fn parse_omit(s: &str) -> Result<std::time::Duration, String> {
    if s.trim().trim_end_matches(|c: char| c.is_ascii_alphabetic()) == "0" {
        return Ok(std::time::Duration::ZERO);
    }
    parse_duration(s)
}

fn parse_busy_poll(s: &str) -> Result<std::time::Duration, String> {
    let d = parse_omit(s)?;
    if d > std::time::Duration::from_micros(limits::MAX_BUSY_POLL_US as u64) {
        return Err(format!(
            "'{s}' is out of range: at most {} ms",
            limits::MAX_BUSY_POLL_US / 1000
        ));
    }
    Ok(d)
}

/// Bits per second with decimal k, M, G (iperf3's -b), e.g. 100M; 0 = unlimited.
fn parse_rate(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let (num, mult) = match t.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => (
            &t[..i],
            match c.to_ascii_uppercase() {
                'K' => 1e3,
                'M' => 1e6,
                'G' => 1e9,
                _ => return Err(format!("'{s}' is not a rate: use e.g. 100M or 1G (bit/s)")),
            },
        ),
        _ => (t, 1.0),
    };
    match num.parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 && v * mult <= 1e12 => Ok((v * mult) as u64),
        _ => Err(format!(
            "'{s}' is not a rate between 0 and 1000G bit/s: use e.g. 100M"
        )),
    }
}

/// Refuses every option given that no point of the run would use (an option accepted is used
/// or refused, never ignored).
fn refuse_unused(args: &ClientArgs) -> Result<(), UsageError> {
    let given = &args.output.given;
    let throughput = args.workload.contains(&NetWorkload::Throughput);
    args.output.refuse_display(false, throughput)?;
    let chosen: Vec<Workload> = args.workload.iter().map(|w| Workload::from(*w)).collect();
    given.refuse_unused_by(Subsystem::Net, &chosen)?;
    given.refuse_unless(
        throughput || args.propagation_us.is_some(),
        &["link_gbps"],
        "enters the goodput peak of THROUGHPUT and, with --propagation-us, the floor of LATENCY's round trips; this run has neither",
        "add THROUGHPUT or --propagation-us, or drop --link-gbps",
    )?;
    given.refuse_unless(
        throughput && args.protocol.contains(&Proto::Udp),
        &["rate"],
        "paces UDP THROUGHPUT streams, and this run has none (a ping-pong sends one message at a time)",
        "add --workload THROUGHPUT --protocol udp or drop --rate",
    )?;
    given.refuse_unless(
        args.total_bytes.is_none() || args.omit.is_zero(),
        &["omit"],
        "is a warm-up, and --total-bytes measures each stream's bytes whole, from the first (the receiver cannot tell warm-up bytes queued in its buffers from the others)",
        "drop --omit (with --total-bytes THROUGHPUT has none)",
    )?;
    given.refuse_unless(
        args.total_bytes.is_some() || args.count.is_some(),
        &["scaling"],
        "splits --total-bytes or --count between the streams, and neither is given",
        "give --total-bytes or --count, or drop --scaling",
    )?;
    let tcp_only = args.protocol == [Proto::Tcp];
    given.refuse_unless(
        !args.workload.contains(&NetWorkload::Connect) || args.protocol.contains(&Proto::Tcp),
        &["protocol"],
        "has no tcp, and CONNECT opens TCP connections",
        "add tcp to --protocol or drop CONNECT",
    )?;
    given.refuse_unless(
        tcp_only || !args.workload.contains(&NetWorkload::Throughput),
        &["total_bytes", "zerocopy"],
        "applies to TCP streams (a UDP receiver cannot tell the end of a fixed amount from a loss; MSG_ZEROCOPY is TCP's here), and --protocol includes udp",
        "add --protocol tcp",
    )?;
    given.refuse_unless(
        tcp_only,
        &["sustain"],
        "ends TCP streams once their goodput is steady (a UDP receiver cannot tell the end of a stream from a loss), and --protocol includes udp",
        "add --protocol tcp",
    )?;
    given.refuse_unless(
        tcp_only,
        &["congestion", "mss", "no_delay"],
        "is a TCP option, and --protocol includes udp",
        "add --protocol tcp",
    )
}

/// The shortest a repetition is made by `run --budget`.
const MIN_DURATION: std::time::Duration = std::time::Duration::from_millis(200);

pub fn run(args: NetArgs, argv: Vec<String>) -> anyhow::Result<()> {
    match args.command {
        Some(NetCommand::Serve(s)) => serve(s),
        None => {
            args.client.output.validate()?;
            let mut rec = Recorder::new(argv, args.client.output.outputs());
            let outcome = client(&args.client).and_then(|job| job.run(&mut rec));
            rec.finish(outcome)
        }
    }
}

/// Sets each of `settings` on `args` (a budget's fit, from [`fitted`], or a job made in code:
/// [`Setting`]), each counted as given; an option this command does not take is an internal
/// error.
pub fn apply(args: &mut NetArgs, settings: &[Setting]) -> Result<(), String> {
    let args = &mut args.client;
    for f in settings {
        match f {
            Setting::Time("duration", d) => args.duration = *d,
            Setting::Time("sustain", d) => args.sustain = Some(*d),
            Setting::Time("omit", d) => args.omit = *d,
            Setting::Repeat(r) => args.repeat = *r,
            Setting::MaxRepeat(r) => args.precision.max_repeat = Some(*r),
            Setting::Server(s) => args.server = Some(s.clone()),
            Setting::Workload(Workload::Net(w)) => args.workload = vec![*w],
            Setting::Protocol(p) => args.protocol = vec![*p],
            Setting::Count("streams", n) => args.streams = Counts(vec![*n]),
            Setting::Bytes("message-size", n) => {
                args.message_size = Some(vec![u32::try_from(*n).map_err(|e| e.to_string())?])
            }
            Setting::Bytes("window", n) => {
                args.window = Some(u32::try_from(*n).map_err(|e| e.to_string())?)
            }
            Setting::Rate(r) => args.rate = *r,
            Setting::Flag("reverse") => args.reverse = true,
            Setting::Number("link-gbps", g) => args.link_gbps = Some(*g),
            _ => return Err(super::fit::unknown_setting(f)),
        }
        args.output.given.note(f.key());
    }
    Ok(())
}

/// The options of a suite's job that `fit` changes, at their fitted values: --duration (not
/// with --total-bytes, whose bound it would become), --omit and --repeat.
pub fn fitted(args: &NetArgs, fit: &super::fit::Fit) -> Vec<crate::app::setting::Setting> {
    let args = &args.client;
    let duration = match (args.total_bytes, args.sustain) {
        (Some(_), _) => None,
        (None, Some(d)) => fit.time_option("sustain", d, super::common::MIN_SUSTAIN),
        (None, None) => fit.time_option("duration", args.duration, MIN_DURATION),
    };
    duration
        .into_iter()
        .chain(fit.time_above_option("omit", args.omit, std::time::Duration::ZERO))
        .chain(fit.repeat_options(args.repeat, &args.precision))
        .collect()
}

/// The request of `args`: one command, or one job of a suite (a client's: `net serve` runs
/// on the server host).
pub fn job(args: &NetArgs) -> anyhow::Result<Box<dyn Request>> {
    match &args.command {
        Some(NetCommand::Serve(_)) => Err(UsageError(
            "`net serve` cannot be a job of a suite; run it on the server host".into(),
        )
        .into()),
        None => client(&args.client),
    }
}

/// Where `net serve` listens without `--bind`: every address with a token (or `--no-token`),
/// this host only without one.
fn default_bind(token: bool, no_token: bool) -> IpAddr {
    if token || no_token {
        IpAddr::from([0, 0, 0, 0])
    } else {
        IpAddr::from([127, 0, 0, 1])
    }
}

/// A server listens on loopback or asks for a token: without one, an address other hosts
/// reach needs `--no-token`, said aloud; `--no-token` with a token, or on loopback (where it
/// would change nothing), is refused.
fn serve(args: ServeArgs) -> anyhow::Result<()> {
    let token = args.token.token()?;
    if args.no_token && token.is_some() {
        return Err(UsageError(
            "--no-token contradicts the token given (--token, --token-file or PEAKBENCH_TOKEN): drop one of them".into(),
        )
        .into());
    }
    let bind = args
        .bind
        .unwrap_or_else(|| default_bind(token.is_some(), args.no_token));
    if args.no_token && bind.is_loopback() {
        return Err(UsageError(format!(
            "--no-token is unused on {bind}: only this host's users reach a loopback address, token or not; drop --no-token, or give --bind an address other hosts reach"
        ))
        .into());
    }
    if args.references && token.is_none() {
        // The tools' servers check no token: only a client that proved one may start them,
        // unless nobody but this host's users can reach the server (--no-token aside).
        if !bind.is_loopback() {
            return Err(UsageError(format!(
                "--references on {bind} needs --token or --token-file: without one anybody who reaches the port could start iperf3's and sockperf's servers; give the clients the same token, or --bind 127.0.0.1"
            ))
            .into());
        }
        eprintln!(
            "peakbench net serve: warning: --references without a token: any user of this host can start iperf3's and sockperf's servers through it; give --token or --token-file"
        );
    }
    if token.is_none() {
        if args.no_token {
            eprintln!(
                "peakbench net serve: warning: --no-token: serving anyone who reaches the port on {bind}, without a token; where others can reach it, give --token or --token-file (the same to the clients)"
            );
        } else if !bind.is_loopback() {
            return Err(UsageError(format!(
                "net serve on {bind} without a token would serve anyone who reaches the port: give --token or --token-file (the same token to the clients), or --bind 127.0.0.1 for this host only, or --no-token to serve anyone who reaches the port"
            ))
            .into());
        } else if args.bind.is_none() {
            eprintln!(
                "peakbench net serve: no token, so it listens on {bind} only (this host's clients); to serve other hosts give --token or --token-file (the same to the clients), or --no-token"
            );
        }
    }
    net::serve(
        SocketAddr::new(bind, args.port),
        net::ServerConfig {
            token,
            idle_timeout: args.idle_timeout,
            max_tests: args.max_tests,
            tools: args.references.then(|| {
                std::sync::Arc::new(crate::reference::remote::Launcher::from_env())
                    as std::sync::Arc<dyn net::ToolServers>
            }),
            ..Default::default()
        },
    )
}

/// The benchmark's options from the command line's, every point checked against the
/// protocol's limits (nothing is sent).
fn options(args: &ClientArgs) -> anyhow::Result<NetOptions> {
    let protocols: Vec<Proto> = args.protocol.clone();
    if let Some(sizes) = &args.message_size
        && protocols.contains(&Proto::Udp)
        && let Some(big) = sizes.iter().find(|&&s| s > limits::MAX_UDP_MESSAGE)
    {
        return Err(UsageError(format!(
            "--message-size {big} is too large for UDP (at most {} bytes); use --protocol tcp or a smaller size",
            limits::MAX_UDP_MESSAGE
        ))
        .into());
    }
    if args.rate > 0 && !protocols.contains(&Proto::Udp) {
        return Err(UsageError("--rate applies to UDP only; add --protocol udp".into()).into());
    }
    refuse_unused(args)?;
    let opts = NetOptions {
        workloads: args.workload.clone(),
        protocols,
        streams: args.streams.iter().map(|&n| n as u32).collect(),
        message_sizes: args.message_size.clone(),
        duration: args.duration,
        sustain: args.sustain,
        percentiles: args.percentiles.clone().unwrap_or_default(),
        omit: args.omit,
        reverse: args.reverse,
        rate_bps: args.rate,
        busy_poll: args.busy_poll,
        busy_poll_asked: args.output.given.has("busy_poll"),
        repeat: args.repeat,
        link_gbps: args.link_gbps,
        propagation_us: args.propagation_us,
        bidir: args.bidir,
        socket: net::SocketOptions {
            window_bytes: args.window,
            congestion: args.congestion,
            mss_bytes: args.mss,
            nodelay: args.no_delay,
            zerocopy: args.zerocopy,
        },
        total_bytes: args.total_bytes,
        count: args.count,
        scaling: args.scaling,
        mps: args.mps.unwrap_or(0),
        load: args
            .load
            .as_ref()
            .map(|c| c.iter().map(|&n| n as u32).collect())
            .unwrap_or_default(),
        // A fixed amount's bound: the duration given (10 minutes in all otherwise).
        amount_bound: args.output.given.has("duration").then_some(args.duration),
        precision: args.precision.precision(args.repeat)?,
    };
    net::validate(&opts, args.server.as_deref())?;
    if let Some(cc) = args.congestion {
        net::check_congestion(cc).map_err(|e| UsageError(format!("--congestion {cc}: {e}")))?;
    }
    Ok(opts)
}

/// The client's request: its points checked against the protocol's limits and the server's
/// address resolved (not contacted).
fn client(args: &ClientArgs) -> anyhow::Result<Box<dyn Request>> {
    Ok(Box::new(net::NetRequest {
        token: args.token.token()?,
        opts: options(args)?,
        server: args.server.clone(),
        diagnose: args.diagnose,
    }))
}
