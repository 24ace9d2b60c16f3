//! One side of a test: its streams, each on its own thread (TCP senders beyond the CPUs share
//! one thread per CPU), in one role (send, receive, ping or echo), and what they counted merged
//! into the side's figures.

use super::connect;
use super::streams::{self, Plan, Window};
use super::transport::{Attached, Channel};
use crate::measure::steady::Steady;
use crate::wire::net_test::{SideStats, TestKind, TestParams};
use hdrhistogram::Histogram;
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// What this side's streams do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Send,
    Receive,
    Ping,
    Echo,
    /// CONNECT: the client opens connections, the server accepts them.
    Connect,
    Accept,
}

impl Role {
    /// The role of the client (`server == false`) or the server in a test.
    pub fn of(params: &TestParams, server: bool) -> Role {
        match (params.kind, params.reverse != server) {
            (TestKind::Latency, _) if server => Role::Echo,
            (TestKind::Latency, _) => Role::Ping,
            (TestKind::Connect, _) if server => Role::Accept,
            (TestKind::Connect, _) => Role::Connect,
            (TestKind::Throughput, true) => Role::Receive,
            (TestKind::Throughput, false) => Role::Send,
        }
    }
}

/// One side's merged figures.
#[derive(Debug, Clone)]
pub struct SideResult {
    pub stats: SideStats,
    /// Round-trip times (ns) of a pinging side; a connecting side's whole connections.
    pub rtt: Option<Histogram<u64>>,
    /// A connecting side's connects (ns).
    pub connect: Option<Histogram<u64>>,
    /// A pinging side: each stream's mean round-trip time (ns), in the order of its streams.
    pub stream_rtt_ns: Vec<f64>,
    /// Payload bytes per interval of the window, all streams of this side together.
    pub timeline: streams::Timeline,
}

/// One end's figures of a test: with `bidir`, `first` are those of the streams the client
/// sends on, `second` those of the streams the server sends on; under load, `first` are the
/// ping-pong's and `second` the bulk streams'.
#[derive(Debug, Clone)]
pub struct Sides {
    pub first: SideResult,
    pub second: Option<SideResult>,
}

/// Runs this end's streams of a test (`server`: the server's end): each stream in its role,
/// and with `bidir` both halves at once, each in its own role (under load: the pings, and the
/// bulk streams from the client to the server). A stream that fails stops the
/// others and its error is returned.
pub fn run_end(
    mut attached: Attached,
    params: &TestParams,
    server: bool,
    w: Window,
    cookie: u64,
    stop: &AtomicBool,
) -> io::Result<Sides> {
    let role = Role::of(params, server);
    if !params.bidir && params.load_streams == 0 {
        return Ok(Sides {
            first: run(attached, params, role, w, cookie, stop)?,
            second: None,
        });
    }
    let back = attached.split_off(params.streams as usize);
    let (other, other_params) = match (params.bidir, role) {
        (true, Role::Send) => (Role::Receive, *params),
        (true, _) => (Role::Send, *params),
        (false, _) => (Role::of(&params.load(), server), params.load()),
    };
    let (a, b) = std::thread::scope(|s| {
        let b = s.spawn(|| run(back, &other_params, other, w, cookie, stop));
        let a = run(attached, params, role, w, cookie, stop);
        let b = b
            .join()
            .unwrap_or_else(|_| Err(io::Error::other("a stream thread panicked")));
        (a, b)
    });
    Ok(Sides {
        first: a?,
        second: Some(b?),
    })
}

/// Runs every stream of `attached` (of the test with `cookie`) in `role` for the window; a
/// stream that fails stops the others and its error is returned.
pub fn run(
    attached: Attached,
    params: &TestParams,
    role: Role,
    w: Window,
    cookie: u64,
    stop: &AtomicBool,
) -> io::Result<SideResult> {
    match attached {
        Attached::Tcp(v) => run_on(v, params, role, w, cookie, stop),
        Attached::Udp(v) => run_on(v, params, role, w, cookie, stop),
        Attached::Accept { listener, peer } => accept_all(&listener, peer, params, w, cookie, stop),
        Attached::Connect(to) => connect_all(to, params, w, cookie, stop),
    }
}

/// CONNECT's server: an acceptor per stream on the test's listener, sharing its rate cap.
fn accept_all(
    listener: &std::net::TcpListener,
    peer: std::net::IpAddr,
    params: &TestParams,
    w: Window,
    cookie: u64,
    stop: &AtomicBool,
) -> io::Result<SideResult> {
    let bounds = connect::Bounds::of(params.streams);
    let deadline = w.end() + streams::STUCK;
    let size = params.message_bytes as usize;
    let outcomes: Vec<io::Result<SideStats>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..params.streams)
            .map(|_| {
                s.spawn(|| {
                    connect::accept_loop(listener, peer, size, deadline, cookie, stop, &bounds)
                })
            })
            .collect();
        handles.into_iter().map(joined).collect()
    });
    let mut merged = empty_side();
    for o in outcomes {
        add_stats(&mut merged.stats, &o?, 1.0);
    }
    Ok(merged)
}

/// CONNECT's client: each stream its own connections, one after the other.
fn connect_all(
    to: std::net::SocketAddr,
    params: &TestParams,
    w: Window,
    cookie: u64,
    stop: &AtomicBool,
) -> io::Result<SideResult> {
    let plan = Plan::of(params);
    let size = params.message_bytes as usize;
    let outcomes: Vec<io::Result<connect::Connections>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..params.streams)
            .map(|i| {
                s.spawn(move || {
                    let out = connect::connect_loop(to, size, i, w, plan, cookie, stop);
                    if out.is_err() {
                        stop.store(true, Ordering::Relaxed);
                    }
                    out
                })
            })
            .collect();
        handles.into_iter().map(joined).collect()
    });
    let mut merged = empty_side();
    for o in outcomes {
        let c = o?;
        add_stats(&mut merged.stats, &c.stats, 1.0);
        merged.stream_rtt_ns.push(c.whole.mean());
        merge_hist(&mut merged.rtt, c.whole);
        merge_hist(&mut merged.connect, c.connect);
    }
    Ok(merged)
}

/// A stream thread's result; a panic is an error.
fn joined<T>(h: std::thread::ScopedJoinHandle<'_, io::Result<T>>) -> io::Result<T> {
    h.join()
        .unwrap_or_else(|_| Err(io::Error::other("a stream thread panicked")))
}

fn empty_side() -> SideResult {
    SideResult {
        stats: SideStats::default(),
        rtt: None,
        connect: None,
        stream_rtt_ns: Vec::new(),
        timeline: streams::Timeline::default(),
    }
}

fn merge_hist(into: &mut Option<Histogram<u64>>, h: Histogram<u64>) {
    match into {
        Some(all) => {
            let _ = all.add(&h);
        }
        None => *into = Some(h),
    }
}

/// Adds a stream's figures to the side's (`n` streams: jitter is their mean).
fn add_stats(m: &mut SideStats, st: &SideStats, n: f64) {
    m.bytes_sent += st.bytes_sent;
    m.bytes_received += st.bytes_received;
    m.messages_sent += st.messages_sent;
    m.messages_received += st.messages_received;
    m.window_ns = m.window_ns.max(st.window_ns);
    m.out_of_order += st.out_of_order;
    // Jitter: the mean of the streams' (iperf3 reports the same for its sum).
    m.jitter_ns += st.jitter_ns / n;
    m.lost += st.lost;
    m.zerocopy_sends += st.zerocopy_sends;
    m.zerocopy_copied += st.zerocopy_copied;
}

/// How many threads send `streams` streams: one per stream while there are CPUs for them
/// (those this process may run on), one per CPU beyond that, each serving several streams
/// ([`streams::send_many`]). Datagram streams keep one thread each (their pacing is per
/// stream).
pub fn sender_threads(streams: usize, reliable: bool) -> usize {
    if !reliable {
        return streams;
    }
    let cpus = crate::runner::affinity::allowed_cpus().len().max(1);
    streams.min(cpus).max(1)
}

fn run_on<C: Channel>(
    channels: Vec<C>,
    params: &TestParams,
    role: Role,
    w: Window,
    cookie: u64,
    stop: &AtomicBool,
) -> io::Result<SideResult> {
    let size = params.message_bytes as usize;
    let plan = Plan::of(params);
    let deadline = w.end() + streams::UDP_GRACE + Duration::from_secs(10);
    // The streams each thread serves: one each, except senders beyond the CPUs.
    let workers = if role == Role::Send {
        sender_threads(channels.len(), C::CAPS.reliable)
    } else {
        channels.len()
    };
    let mut groups: Vec<Vec<C>> = (0..workers).map(|_| Vec::new()).collect();
    for (i, ch) in channels.into_iter().enumerate() {
        groups[i % workers.max(1)].push(ch);
    }
    // A pinging side's streams run pinned, one per CPU this process may use in turn, so that
    // several ping-pongs at once are spread over the cores as the memory's chains are. Over
    // loopback the echoing side's stream i runs on the CPU after stream i's pinger's, so that
    // the two ends of a round trip never share a CPU by chance (a pinger that slept before its
    // ping found its echo woken on its own CPU: 14.5 µs against 60 µs apart on a 2-CPU VM).
    // From another host the echo is left where the scheduler wakes it, as sockperf's and
    // netperf's servers are.
    let local = groups.iter().flatten().all(Channel::peer_is_loopback);
    let (cpus, offset) = match role {
        Role::Ping => (crate::runner::affinity::allowed_cpus(), 0),
        Role::Echo if local => (crate::runner::affinity::allowed_cpus(), 1),
        _ => (Vec::new(), 0),
    };
    // --sustain: the watch the sending threads share (they end once it is steady).
    let interval = crate::measure::timeline::interval_of(w.duration);
    let steady = (plan.sustain && role == Role::Send)
        .then(|| std::sync::Arc::new(Steady::over(w.duration, interval, workers)));
    type Outcome = (SideStats, Option<Histogram<u64>>, streams::Timeline);
    let outcomes: Vec<io::Result<Outcome>> = std::thread::scope(|s| {
        let handles: Vec<_> = groups
            .into_iter()
            .enumerate()
            .map(|(i, mut group)| {
                let cpu = (!cpus.is_empty()).then(|| cpus[(i + offset) % cpus.len()]);
                let steady = steady.clone();
                s.spawn(move || {
                    if let Some(cpu) = cpu {
                        // Unpinned if that fails: the figures stay right, only less even.
                        let _ = crate::runner::affinity::pin_current_thread(cpu);
                    }
                    // Incompressible-looking, non-zero payload (a NIC offload or a
                    // compressing tunnel would flatter zeros).
                    let mut buf: Vec<u8> = (0..size).map(|i| (i * 131 + 7) as u8).collect();
                    let mut tl = streams::Timeline::for_window(&w).watched(steady);
                    let out = if group.len() > 1 {
                        streams::send_many(&mut group, &buf, w, plan, stop, &mut tl)
                            .map(|st| (st, None))
                    } else if let Some(ch) = group.first_mut() {
                        match role {
                            Role::Send => {
                                streams::send_loop(ch, &mut buf, w, plan, cookie, stop, &mut tl)
                                    .map(|st| (st, None))
                            }
                            Role::Receive => {
                                let poll = Duration::from_micros(params.busy_poll_us as u64);
                                let fixed = plan.amount > 0 || plan.sustain;
                                streams::recv_loop(
                                    ch, &mut buf, w, poll, fixed, cookie, stop, &mut tl,
                                )
                                .map(|st| (st, None))
                            }
                            Role::Ping => {
                                let mut reply = vec![0u8; size];
                                let mut hist = crate::measure::latency::histogram();
                                let (rtt, reply) = (&mut hist, &mut reply);
                                streams::ping_loop(ch, &mut buf, reply, w, plan, rtt, cookie, stop)
                                    .map(|st| (st, Some(hist)))
                            }
                            Role::Echo => streams::echo_loop(ch, &mut buf, deadline, cookie, stop)
                                .map(|st| (st, None)),
                            Role::Connect | Role::Accept => {
                                Err(io::Error::other("a CONNECT test has no data streams"))
                            }
                        }
                    } else {
                        Ok((SideStats::default(), None))
                    };
                    if out.is_err() {
                        stop.store(true, Ordering::Relaxed);
                    }
                    out.map(|(st, hist)| (st, hist, tl))
                })
            })
            .collect();
        handles.into_iter().map(joined).collect()
    });
    let mut merged = empty_side();
    let n = outcomes.len().max(1) as f64;
    for o in outcomes {
        let (st, hist, tl) = o?;
        merged.timeline.merge(&tl);
        add_stats(&mut merged.stats, &st, n);
        if let Some(h) = hist {
            merged.stream_rtt_ns.push(h.mean());
            merge_hist(&mut merged.rtt, h);
        }
    }
    merged.stats.steady_ns = steady.and_then(|s| s.steady_at()).map(|at| {
        (interval.saturating_mul(u32::try_from(at + 1).unwrap_or(u32::MAX))).as_nanos() as u64
    });
    Ok(merged)
}
