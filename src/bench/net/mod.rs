//! Network benchmarks: TCP and UDP throughput (goodput, and for UDP loss, reordering and
//! jitter) and ping-pong round-trip latency, between this client and a `peakbench net serve`
//! server (or one started in this process on 127.0.0.1 with `--loopback`).
//!
//! Every repetition is one test on its own control connection; both sides count and the
//! server returns its figures, so each throughput point is reported by the sender and by the
//! receiver, as iperf3 does. Goodput counts payload bytes only, in decimal units
//! (1 Mbit/s = 10^6 bit/s).

pub mod client;
pub mod connect;
mod records;
pub mod roles;
pub mod server;
pub mod sockopt;
pub mod streams;
pub mod transport;

use crate::results::ResultRecord;
pub use crate::results::params::Proto;
use crate::results::params::{CpuUse, NetParams, NodeTag, Route, Scaling, Side};
use crate::results::socket::SocketOptions;
use crate::results::{Metric, Unit};
use crate::sysinfo::fact::Source;
use crate::sysinfo::netif::{self, Link};
use crate::sysinfo::peak::Peak;
use crate::wire::client::{NetError, Target};
pub use crate::wire::net_test::{TestKind, TestParams};
use crate::wire::protocol;
use client::Outcome;
use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Default message sizes: iperf3's (128 KiB TCP writes, 1400-byte UDP datagrams that fit an
/// Ethernet MTU) and the assignment's 1-byte ping-pong (over UDP the smallest ping that carries
/// its sequence number and the test's cookie, as sockperf's smallest carries its header).
pub const DEFAULT_TCP_MESSAGE: u32 = 128 * 1024;
pub const DEFAULT_UDP_MESSAGE: u32 = 1400;
pub const DEFAULT_PING_MESSAGE: u32 = 1;
pub const DEFAULT_UDP_PING_MESSAGE: u32 = crate::wire::net_test::limits::MIN_UDP_PING;

pub use crate::workload::net::NetWorkload;

/// What to run.
#[derive(Debug, Clone)]
pub struct NetOptions {
    pub workloads: Vec<NetWorkload>,
    pub protocols: Vec<Proto>,
    pub streams: Vec<u32>,
    /// None: the defaults per protocol and workload.
    pub message_sizes: Option<Vec<u32>>,
    pub duration: Duration,
    pub omit: Duration,
    pub reverse: bool,
    /// UDP target rate per stream, bit/s; 0 = as fast as possible.
    pub rate_bps: u64,
    /// The receivers' busy-poll window (see [`TestParams::busy_poll_us`]).
    pub busy_poll: Duration,
    /// Whether the user chose it (`--busy-poll`); otherwise loopback UDP points whose threads
    /// outnumber the CPUs run without (see [`NetSession::as_run`]).
    pub busy_poll_asked: bool,
    pub repeat: usize,
    /// Link speed given by the user, Gbit/s.
    pub link_gbps: Option<f64>,
    /// One-way propagation delay of the path, µs (user): the round trips' floor needs it.
    pub propagation_us: Option<f64>,
    /// THROUGHPUT both ways at once (iperf3 `--bidir`).
    pub bidir: bool,
    /// What both ends ask of every data socket.
    pub socket: SocketOptions,
    /// Fixed work instead of a time (iperf3 `-n`, `-k`): THROUGHPUT's payload bytes (TCP), and
    /// LATENCY's round trips; with strong scaling the point's total, split among its streams,
    /// with weak scaling each stream's.
    pub total_bytes: Option<u64>,
    pub count: Option<u64>,
    pub scaling: Scaling,
    /// LATENCY: round trips per second per stream, paced (sockperf `--mps`); 0: back to back.
    pub mps: u32,
    /// LATENCY under load: a point per count of bulk streams beside the pings (0: idle); empty:
    /// no load.
    pub load: Vec<u32>,
    /// The most a point with a fixed amount may take (the user's `--duration`); None: the
    /// protocol's limit less the warm-up. Points by time take `duration`.
    pub amount_bound: Option<Duration>,
    /// `--sustain` (TCP THROUGHPUT): each repetition runs until the goodput is steady, this
    /// long at most (instead of `duration`, which LATENCY and CONNECT keep).
    pub sustain: Option<Duration>,
    /// The percentiles of LATENCY's round trips and CONNECT's connections (`--percentiles`).
    pub percentiles: crate::measure::latency::Percentiles,
    /// `--precision`: each point measured again until its interval is within the target.
    pub precision: Option<crate::measure::precision::Precision>,
}

impl NetOptions {
    /// The fixed work per stream of a point of `workload` with `streams` streams (0: by time).
    pub fn amount_per_stream(&self, workload: NetWorkload, streams: u32) -> u64 {
        let total = match workload {
            NetWorkload::Throughput => self.total_bytes,
            NetWorkload::Latency | NetWorkload::Connect => self.count,
        };
        total.map_or(0, |t| match self.scaling {
            Scaling::Strong => (t / u64::from(streams.max(1))).max(1),
            Scaling::Weak => t,
        })
    }
}

/// One point of the sweep.
#[derive(Debug, Clone, Copy)]
pub struct NetPoint {
    pub workload: NetWorkload,
    pub params: TestParams,
}

/// The sweep: workload × protocol × message size × streams (latency: a ping-pong per stream,
/// all at once).
pub fn points(opts: &NetOptions) -> Vec<NetPoint> {
    let mut out = Vec::new();
    for &workload in &opts.workloads {
        for &proto in &opts.protocols {
            // CONNECT opens TCP connections.
            if workload == NetWorkload::Connect && proto != Proto::Tcp {
                continue;
            }
            let sizes = opts.message_sizes.clone().unwrap_or_else(|| {
                vec![match (workload, proto) {
                    (NetWorkload::Latency | NetWorkload::Connect, Proto::Tcp) => {
                        DEFAULT_PING_MESSAGE
                    }
                    (NetWorkload::Latency, Proto::Udp) => DEFAULT_UDP_PING_MESSAGE,
                    (_, Proto::Tcp) => DEFAULT_TCP_MESSAGE,
                    (_, Proto::Udp) => DEFAULT_UDP_MESSAGE,
                }]
            });
            // LATENCY under load: a point per load.
            let loads = match workload {
                NetWorkload::Latency if !opts.load.is_empty() => opts.load.clone(),
                _ => vec![0],
            };
            for (&message_bytes, &n, &load_streams) in sizes
                .iter()
                .flat_map(|m| opts.streams.iter().map(move |n| (m, n)))
                .flat_map(|(m, n)| loads.iter().map(move |l| (m, n, l)))
            {
                out.push(NetPoint {
                    workload,
                    params: TestParams {
                        kind: match workload {
                            NetWorkload::Throughput => TestKind::Throughput,
                            NetWorkload::Latency => TestKind::Latency,
                            NetWorkload::Connect => TestKind::Connect,
                        },
                        proto,
                        streams: n,
                        message_bytes,
                        duration_ms: if opts.amount_per_stream(workload, n) > 0 {
                            let most =
                                Duration::from_millis(crate::wire::net_test::limits::MAX_TEST_MS);
                            opts.amount_bound
                                .unwrap_or_else(|| most.saturating_sub(opts.omit))
                                .as_millis() as u64
                        } else {
                            match (workload, opts.sustain) {
                                (NetWorkload::Throughput, Some(d)) => d,
                                _ => opts.duration,
                            }
                            .as_millis() as u64
                        },
                        // A stream's fixed amount is measured whole.
                        omit_ms: if workload == NetWorkload::Throughput
                            && opts.total_bytes.is_some()
                        {
                            0
                        } else {
                            opts.omit.as_millis() as u64
                        },
                        reverse: opts.reverse && workload == NetWorkload::Throughput,
                        rate_bps: if proto == Proto::Udp {
                            opts.rate_bps
                        } else {
                            0
                        },
                        busy_poll_us: opts.busy_poll.as_micros() as u32,
                        bidir: opts.bidir && workload == NetWorkload::Throughput,
                        // CONNECT's connections take the kernel's options.
                        socket: match workload {
                            NetWorkload::Connect => SocketOptions::default(),
                            // Zero-copy is a sender's: THROUGHPUT's.
                            NetWorkload::Latency => SocketOptions {
                                zerocopy: false,
                                ..opts.socket
                            },
                            NetWorkload::Throughput => opts.socket,
                        },
                        amount_per_stream: opts.amount_per_stream(workload, n),
                        mps: if workload == NetWorkload::Throughput {
                            0
                        } else {
                            opts.mps
                        },
                        load_streams,
                        sustain: opts.sustain.is_some() && workload == NetWorkload::Throughput,
                    },
                });
            }
        }
    }
    out
}

/// About how long the points of `opts` take (a plan, not a promise): per repetition of each
/// point its warm-up and duration (a fixed amount: at 10 Gbit/s, or 50 µs a round trip), the control conversation and the streams' set-up (about
/// 50 ms), and for UDP the grace the receiver waits for late datagrams.
pub fn estimate(opts: &NetOptions) -> Duration {
    let s: f64 = points(opts)
        .iter()
        .map(|p| {
            let grace = if p.params.proto == Proto::Udp {
                streams::UDP_GRACE.as_secs_f64()
            } else {
                0.0
            };
            // A fixed amount: at 10 Gbit/s, or 50 µs a round trip (a guess; the duration is
            // its bound).
            let amount = p.params.amount_per_stream as f64;
            let time = match (amount > 0.0, p.workload) {
                (false, _) => p.params.duration_ms as f64 / 1e3,
                (true, NetWorkload::Throughput) => amount * 8.0 / 10e9,
                (true, NetWorkload::Latency) => amount * 50e-6,
                (true, NetWorkload::Connect) => amount * 100e-6,
            }
            .min(p.params.duration_ms as f64 / 1e3);
            // Under --precision, the most repetitions a point may take.
            crate::measure::precision::worst_repeat(opts.repeat, opts.precision) as f64
                * (p.params.omit_ms as f64 / 1e3 + time + 0.05 + grace)
        })
        .sum();
    crate::units::estimate_secs(s)
}

/// Parses HOST, HOST:PORT, IPv6, [IPv6]:PORT into an address (the default port when none).
pub fn resolve(server: &str) -> Result<SocketAddr, NetError> {
    if let Ok(a) = server.parse::<SocketAddr>() {
        return Ok(a);
    }
    if let Ok(ip) = server.trim_matches(['[', ']']).parse::<IpAddr>() {
        return Ok(SocketAddr::new(ip, protocol::DEFAULT_PORT));
    }
    let (host, port) = match server.rsplit_once(':') {
        Some((h, p)) => (
            h,
            p.parse::<u16>().map_err(|_| {
                NetError::Usage(format!(
                    "--server {server}: '{p}' is not a port number (1-65535)"
                ))
            })?,
        ),
        None => (server, protocol::DEFAULT_PORT),
    };
    (host, port)
        .to_socket_addrs()
        .map_err(|e| NetError::Usage(format!("cannot resolve --server {host}: {e}")))?
        .next()
        .ok_or_else(|| NetError::Usage(format!("--server {host} has no address")))
}

/// A server running on a thread of this process (for `--loopback`, and each rank's server in
/// a cluster run), stopped when dropped.
pub struct BackgroundServer {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl BackgroundServer {
    /// Binds `addr` (port 0: any free port) and serves on a thread.
    pub fn start(addr: SocketAddr, cfg: server::ServerConfig) -> std::io::Result<BackgroundServer> {
        let server = server::Server::bind(addr, cfg)?;
        let addr = server.local_addr()?;
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::Builder::new()
            .name("net-server".into())
            .spawn(move || {
                let _ = server.serve(&flag);
            })?;
        Ok(BackgroundServer {
            addr,
            stop,
            thread: Some(thread),
        })
    }

    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }
}

impl Drop for BackgroundServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// A client session: where the server is, the link to it, and how to turn tests into records.
pub struct NetSession {
    opts: NetOptions,
    target: Target,
    link: Result<Link, String>,
    _local: Option<BackgroundServer>,
}

impl NetSession {
    /// Against a remote server.
    pub fn remote(opts: NetOptions, target: Target) -> NetSession {
        let link = netif::link_to(target.addr.ip());
        NetSession {
            opts,
            target,
            link,
            _local: None,
        }
    }

    /// Starts a server on 127.0.0.1 (an ephemeral port) in this process and measures against
    /// it; with a token, both sides prove it, as across a network.
    pub fn loopback(opts: NetOptions, token: Option<String>) -> std::io::Result<NetSession> {
        let server = BackgroundServer::start(
            "127.0.0.1:0".parse().expect("valid address"),
            server::ServerConfig {
                log: false,
                token: token.clone(),
                ..Default::default()
            },
        )?;
        let mut s = NetSession::remote(
            opts,
            Target {
                addr: server.addr(),
                token,
            },
        );
        s._local = Some(server);
        Ok(s)
    }

    pub fn target(&self) -> &Target {
        &self.target
    }

    pub fn link(&self) -> &Result<Link, String> {
        &self.link
    }

    /// The options it runs.
    pub fn opts(&self) -> &NetOptions {
        &self.opts
    }

    /// Sets the timed repetitions of the points measured from now on (`--precision`).
    pub fn set_repeat(&mut self, repeat: usize) {
        self.opts.repeat = repeat;
    }

    /// Runs one point's repetitions (`tick` after each) and returns its records.
    pub fn run(
        &self,
        point: NetPoint,
        tick: &mut dyn FnMut(),
    ) -> Result<Vec<ResultRecord>, NetError> {
        let point = self.as_run(point);
        let mut outcomes = Vec::with_capacity(self.opts.repeat);
        for _ in 0..self.opts.repeat {
            outcomes.push(client::run_test(&self.target, &point.params)?);
            tick();
        }
        Ok(self.records(point, &outcomes))
    }

    /// The point as this session runs it. Over loopback both ends' threads share this
    /// machine's CPUs: where they outnumber them, UDP receivers do not busy-poll unless
    /// `--busy-poll` was given, as spinning receivers took the CPU from the paced senders
    /// (2 streams at 1 Gbit/s each on 2 CPUs: 541 Mbit/s and 73 % loss, 1472 Mbit/s without).
    pub fn as_run(&self, mut point: NetPoint) -> NetPoint {
        let p = &mut point.params;
        let threads = 2 * p.channels() as usize;
        let cpus = crate::runner::affinity::allowed_cpus().len().max(1);
        if self._local.is_some()
            && !self.opts.busy_poll_asked
            && p.proto == Proto::Udp
            && threads > cpus
        {
            p.busy_poll_us = 0;
        }
        point
    }

    /// The parameters of `p`'s records before its figures: the point's own
    /// ([`point_params`]) against this session's server, over its link.
    fn base_params(&self, p: &TestParams) -> NetParams {
        NetParams {
            link: self.link.as_ref().ok().map(|link| Route {
                interface: link.interface.clone(),
                mtu_bytes: link.mtu,
            }),
            ..point_params(&self.opts, p, Some(self.target.addr.to_string()))
        }
    }

    fn records(&self, point: NetPoint, outcomes: &[Outcome]) -> Vec<ResultRecord> {
        let p = point.params;
        let name = point.workload;
        let mut base = self.base_params(&p);
        // The last repetition's sockets: what TCP grew the buffers to.
        if let Some(last) = outcomes.last() {
            base.client_socket = last.socket.map(Box::new);
            base.server_socket = last.server_socket.clone();
        }
        if let Some(st) = &base.client_socket {
            base.send_buffer_bytes = st.send_buffer_bytes;
            base.receive_buffer_bytes = st.receive_buffer_bytes;
        }
        let cpu: Vec<CpuUse> = outcomes.iter().map(|o| o.cpu.clone()).collect();
        base.cpu = CpuUse::mean(&cpu);
        // A server in this process shares the machine: its figures would be the same.
        if self._local.is_none() {
            let server: Option<Vec<CpuUse>> = outcomes
                .iter()
                .map(|o| o.server_cpu.as_deref().cloned())
                .collect();
            base.server_cpu = server.and_then(|s| CpuUse::mean(&s)).map(Box::new);
        }
        match point.workload {
            NetWorkload::Throughput => {
                let peak = self.peak(&p, records::GOODPUT_UNIT, records::GOODPUT_BITS);
                records::throughput(name, p, base, outcomes, peak)
            }
            NetWorkload::Latency => {
                let peak = self.rtt_peak(&p);
                latency_records(name, p, base, outcomes, peak, &self.opts.percentiles)
            }
            NetWorkload::Connect => {
                records::connect(name, p, base, outcomes, &self.opts.percentiles)
            }
        }
    }

    /// The link's speed (Mbit/s, from the user or sysfs) and MTU, or why they are unknown.
    fn link_speed_and_mtu(&self) -> Result<((f64, Source), u32), String> {
        let link = self.link.as_ref().map_err(Clone::clone)?;
        let speed = match (self.opts.link_gbps, &link.speed_mbps) {
            (Some(g), _) => (g * 1000.0, Source::User),
            (None, Ok(m)) => (*m, Source::Detected),
            (None, Err(why)) => return Err(why.clone()),
        };
        let mtu = link
            .mtu
            .ok_or_else(|| format!("{} reports no MTU", link.interface))?;
        Ok((speed, mtu))
    }

    /// The least round trip of a point's message over the link to the server, or why it is
    /// unknown.
    fn rtt_peak(&self, p: &TestParams) -> Result<Peak, String> {
        let (speed, mtu) = self.link_speed_and_mtu()?;
        crate::sysinfo::peak::round_trip(
            speed,
            mtu,
            p.proto == Proto::Tcp,
            self.target.addr.is_ipv6(),
            p.message_bytes,
            self.opts.propagation_us,
        )
    }

    /// The goodput ceiling of the link to the server, or why it is unknown.
    fn peak(&self, p: &TestParams, unit: Unit, unit_bits: f64) -> Result<Peak, String> {
        let (speed, mtu) = self.link_speed_and_mtu()?;
        Ok(crate::sysinfo::peak::goodput(
            speed,
            mtu,
            p.proto == Proto::Tcp,
            self.target.addr.is_ipv6(),
            p.message_bytes,
            unit,
            unit_bits,
        ))
    }
}

/// The parameters of test `p` of a run of `opts` against `server`, before it runs: what the
/// dry run plans, and what a session completes with its link and the test's figures.
pub fn point_params(opts: &NetOptions, p: &TestParams, server: Option<String>) -> NetParams {
    // Threads of this (sending) side: one per stream up to the CPUs it may use.
    let sender_threads = (p.kind == TestKind::Throughput && !p.reverse)
        .then(|| roles::sender_threads(p.streams as usize, p.proto == Proto::Tcp));
    NetParams {
        threads: p.streams as usize,
        streams: p.streams,
        protocol: p.proto,
        message_size_bytes: p.message_bytes,
        duration_s: p.duration_ms as f64 / 1000.0,
        omit_s: p.omit_ms as f64 / 1000.0,
        server,
        sender_threads,
        link: None,
        side: None,
        direction: None,
        target_rate_bps: None,
        busy_poll_us: None,
        datagrams_sent: None,
        datagrams_received: None,
        out_of_order: None,
        loss_definition: None,
        loss_note: None,
        jitter_definition: None,
        tcp_nodelay: None,
        send_buffer_bytes: None,
        receive_buffer_bytes: None,
        lost: None,
        latency_definition: None,
        stream_rtt_us: Vec::new(),
        cpu: None,
        server_cpu: None,
        socket_options: p.socket.any().then_some(p.socket),
        client_socket: None,
        server_socket: None,
        amount_per_stream: (p.amount_per_stream > 0).then_some(p.amount_per_stream),
        scaling: (p.amount_per_stream > 0).then_some(opts.scaling),
        mps: (p.mps > 0).then_some(p.mps),
        phase: None,
        load_streams: (p.kind == TestKind::Latency && !opts.load.is_empty())
            .then_some(p.load_streams),
        load_goodput_bps: None,
        between: None,
        node: NodeTag::default(),
    }
}

/// What every record of ping-pong point `p` says of it: measured at the client, and whether
/// its TCP messages go out at once.
fn pingpong_params(m: &mut NetParams, p: &TestParams) {
    m.side = Some(Side::Client);
    m.tcp_nodelay = Some(p.proto == Proto::Tcp);
}

/// `point`'s records before it runs against `server`, with the parameters its measured records
/// carry (a throughput point's each way at its receiver and sender, a ping-pong's at the
/// client), as
/// [`ResultRecord::planned`]: what the reference tools are asked before it runs, and what the
/// dry run plans.
pub fn planned(opts: &NetOptions, point: NetPoint, server: String) -> Vec<ResultRecord> {
    let p = point.params;
    let mut base = point_params(opts, &p, Some(server));
    let metrics: &[(Metric, Unit)] = match point.workload {
        NetWorkload::Throughput => {
            records::throughput_params(&mut base, &p);
            return records::planned_throughput(point.workload, &p, &base, opts.repeat);
        }
        NetWorkload::Latency => {
            pingpong_params(&mut base, &p);
            &[
                (Metric::Latency, Unit::Micros),
                (Metric::Rate, Unit::TransPerSec),
            ]
        }
        NetWorkload::Connect => {
            base.side = Some(Side::Client);
            &[
                (Metric::Rate, Unit::TransPerSec),
                (Metric::Latency, Unit::Micros),
            ]
        }
    };
    metrics
        .iter()
        .map(|&(metric, unit)| {
            ResultRecord::new(
                point.workload,
                base.clone(),
                metric,
                unit,
                vec![1.0; opts.repeat.max(1)],
                Err("planned: not measured yet".into()),
            )
        })
        .collect()
}

fn latency_records(
    name: NetWorkload,
    p: TestParams,
    base: NetParams,
    outcomes: &[Outcome],
    peak: Result<Peak, String>,
    chosen: &crate::measure::latency::Percentiles,
) -> Vec<ResultRecord> {
    let mut m = base;
    pingpong_params(&mut m, &p);
    m.lost = Some(outcomes.iter().map(|o| o.client.stats.lost).sum());
    m.latency_definition = Some("round-trip time of one message to the server and back, from before the send to after the whole reply is read (client clock); with several streams, each runs its own ping-pong at the same time and every round trip counts; stream i's pinger runs on the i-th CPU this process may use and, over loopback, a peakbench server's echo on the next one; samples are per-repetition means, percentiles over all repetitions".into());
    // Under load: the bulk streams' goodput at the server, bit/s.
    if p.load_streams > 0 {
        let rates: Vec<f64> = outcomes
            .iter()
            .filter_map(|o| o.server_second.as_ref())
            .map(|st| st.bytes_received as f64 * 8.0 / (st.window_ns.max(1) as f64 / 1e9))
            .collect();
        m.load_goodput_bps =
            (!rates.is_empty()).then(|| rates.iter().sum::<f64>() / rates.len() as f64);
    }
    let mut all = crate::measure::latency::histogram();
    let mut means = Vec::new();
    let mut rates = Vec::new();
    // Each stream's mean round trip over the repetitions (each repetition's mean weighted
    // alike, as the point's samples are).
    let mut per_stream = vec![0.0; p.streams as usize];
    for o in outcomes {
        if let Some(h) = &o.client.rtt {
            means.push(h.mean() / 1000.0);
            let _ = all.add(h);
        }
        for (sum, ns) in per_stream.iter_mut().zip(&o.client.stream_rtt_ns) {
            *sum += ns / 1000.0 / outcomes.len() as f64;
        }
        let st = &o.client.stats;
        rates.push(st.messages_received as f64 / (st.window_ns.max(1) as f64 / 1e9));
    }
    if outcomes
        .iter()
        .all(|o| o.client.stream_rtt_ns.len() == per_stream.len())
    {
        m.stream_rtt_us = per_stream;
    }
    let mut lat = ResultRecord::new(name, m.clone(), Metric::Latency, Unit::Micros, means, peak);
    lat.percentiles = crate::measure::latency::percentiles_s(&all, chosen);
    let rate = ResultRecord::new(
        name,
        m,
        Metric::Rate,
        Unit::TransPerSec,
        rates,
        Err("a transaction rate has no theoretical peak".into()),
    );
    vec![lat, rate]
}
