//! The network's checks, between two namespaces of the run's own (a server in the first, in
//! this process, and the client in the second): a rate (tc tbf on both ends of the veth pair)
//! for TCP and UDP, a delay (a TUN delay line: no netem needed), and a loss rate (iptables'
//! statistic match on the server's end).

use super::checks::{
    Checks, Group, Judge, failed, interrupted, judged, ratio_read, skipped, twice,
};
use super::delay_line::{DelayLine, open_tun};
use super::sandbox::{Inside, NetPair, SERVER_ADDR, run};
use crate::app::setting::{Benchmark, Setting};
use crate::bench::net::server::{Server, ServerConfig};
use crate::results::params::Proto;
use crate::results::params::Side;
use crate::results::verify::Check;
use crate::results::{Metric, Subsystem, Unit};
use crate::workload::{Workload, net::NetWorkload};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// The link's rate, each way.
pub(super) const RATE_BPS: u64 = 200_000_000;
/// The delay added each way.
pub(super) const DELAY: Duration = Duration::from_millis(5);
/// The share of datagrams dropped, and the rate they are sent at.
pub(super) const LOSS: f64 = 0.01;
pub(super) const LOSS_SEND_BPS: u64 = 100_000_000;
/// The datagrams a loss figure needs to be within ±0.5 points (its standard error at 1 % is
/// 0.07 points).
const MIN_DATAGRAMS: u64 = 20_000;
/// A datagram's payload that fills a 1500-byte MTU (less 20 bytes of IP, 8 of UDP).
pub(super) const UDP_PAYLOAD: u64 = 1472;
/// Ethernet's header, which tbf counts with each packet on a veth.
const ETHERNET: u64 = 14;
/// The delay line's addresses.
pub(super) const TUN_SERVER: &str = "10.233.1.1";
const TUN_CLIENT: &str = "10.233.1.2";

/// The four checks, none run yet.
fn bases() -> [Check; 4] {
    let rate = format!("tbf {} Mbit/s", RATE_BPS / 1_000_000);
    let goodput = (Subsystem::Net, Unit::BitsPerSec);
    [
        skipped("rate tcp", Group::Net, &rate, goodput, ""),
        skipped("rate udp", Group::Net, &rate, goodput, ""),
        skipped(
            "delay",
            Group::Net,
            &format!("+{} ms each way", DELAY.as_millis()),
            (Subsystem::Net, Unit::Seconds),
            "",
        ),
        skipped(
            "loss",
            Group::Net,
            &format!("{} % UDP dropped", LOSS * 100.0),
            (Subsystem::Net, Unit::Percent),
            "",
        ),
    ]
}

/// Skips the checks of `bases` from `from` on, for `why`.
fn skip_rest(c: &mut Checks, from: usize, why: &str) -> anyhow::Result<()> {
    c.skip_all(bases().into_iter().skip(from), why)
}

/// Runs the network's checks (or skips them with the reason where the namespaces, the server
/// or the shaping cannot be had).
pub(super) fn checks(c: &mut Checks) -> anyhow::Result<()> {
    in_pair(c, measure_all, |c, why| skip_rest(c, 0, &why))
}

/// Runs `body` from the client's namespace of a namespace pair of the run's, a server of this
/// process listening in the other; `skip` where the pair or the server cannot be had (with
/// the reason). The pair and the server are gone after it.
pub(super) fn in_pair<T>(
    c: &mut Checks,
    body: impl FnOnce(&mut Checks, &NetPair, &OwnedFd) -> anyhow::Result<T>,
    skip: impl FnOnce(&mut Checks, String) -> anyhow::Result<T>,
) -> anyhow::Result<T> {
    let pair = match NetPair::new(std::process::id()) {
        Ok(p) => p,
        Err(why) => return skip(c, format!("no network namespace pair: {why}")),
    };
    let (server_ns, client_ns) = match (pair.handle(0), pair.handle(1)) {
        (Ok(s), Ok(c)) => (s, c),
        (Err(why), _) | (_, Err(why)) => return skip(c, why),
    };
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        // The server stops however this scope ends (a panic too): the scope waits for it.
        let _stop = StopOnDrop(&stop);
        let (tx, rx) = std::sync::mpsc::channel::<Result<(), String>>();
        let (stop, server_ns) = (&stop, &server_ns);
        s.spawn(move || {
            let _inside = match Inside::new(server_ns) {
                Ok(i) => i,
                Err(why) => {
                    let _ = tx.send(Err(why));
                    return;
                }
            };
            let cfg = ServerConfig {
                log: false,
                ..Default::default()
            };
            let any = SocketAddr::new(
                IpAddr::V4(Ipv4Addr::UNSPECIFIED),
                crate::app::net::DEFAULT_PORT,
            );
            match Server::bind(any, cfg) {
                Ok(server) => {
                    let _ = tx.send(Ok(()));
                    let _ = server.serve(stop);
                }
                Err(e) => {
                    let _ = tx.send(Err(format!("the server cannot listen: {e}")));
                }
            }
        });
        let ready = rx
            .recv_timeout(Duration::from_secs(10))
            .unwrap_or_else(|_| Err("the server did not start".into()));
        match ready.and_then(|()| Inside::new(&client_ns)) {
            Ok(inside) => {
                let outcome = body(c, &pair, server_ns);
                drop(inside);
                outcome
            }
            Err(why) => skip(c, why),
        }
    })
}

/// Raises its flag when dropped.
struct StopOnDrop<'a>(&'a AtomicBool);

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// The checks, from the client's namespace.
fn measure_all(c: &mut Checks, pair: &NetPair, server_ns: &OwnedFd) -> anyhow::Result<()> {
    match pair.limit_rate(RATE_BPS) {
        Ok(()) => {
            let outcome = rate(c, Proto::Tcp).and_then(|()| rate(c, Proto::Udp));
            let _ = pair.unlimit_rate();
            outcome?;
        }
        Err(why) => {
            // One end may be shaped already.
            let _ = pair.unlimit_rate();
            c.skip_all(
                bases().into_iter().take(2),
                &format!("cannot shape the veth pair: {why}"),
            )?;
        }
    }
    delay(c, pair, server_ns)?;
    loss(c, pair)
}

/// A THROUGHPUT point of one `proto` stream to the server's end of the veth pair.
pub(super) fn throughput(proto: Proto) -> Benchmark {
    stream_to(SERVER_ADDR, proto)
}

/// A THROUGHPUT point of one `proto` stream to `server`.
pub(super) fn stream_to(server: &str, proto: Proto) -> Benchmark {
    Benchmark::new(Subsystem::Net).with_all([
        Setting::Server(server.into()),
        Setting::Workload(Workload::Net(NetWorkload::Throughput)),
        Setting::Protocol(proto),
        Setting::Count("streams", 1),
    ])
}

/// The rate check of `proto`: the receiver's goodput against the rate times the payload's
/// share of each packet tbf counts (tried twice where off its mark: [`twice`]).
fn rate(c: &mut Checks, proto: Proto) -> anyhow::Result<()> {
    let tried = twice(c, ratio_read, |c| rate_try(c, proto));
    c.push_tried(tried)
}

/// One try of [`rate`].
fn rate_try(c: &mut Checks, proto: Proto) -> anyhow::Result<Check> {
    let base = bases()[if proto == Proto::Tcp { 0 } else { 1 }].clone();
    let mut bench = throughput(proto);
    if proto == Proto::Udp {
        // Sent at twice the link's rate: the bucket passes its rate and drops the rest.
        bench = bench.with_all([
            Setting::Bytes("message-size", UDP_PAYLOAD),
            Setting::Rate(2 * RATE_BPS),
        ]);
    }
    let bench = bench.with_all(c.timing("duration"));
    let points = match c.measure(&bench) {
        Ok(p) => p,
        Err(e) if interrupted(&e) => return Err(e),
        Err(e) => return Ok(failed(base, &bench, &e)),
    };
    let at = c.find(&points, |r| {
        r.metric == Metric::Throughput
            && r.params
                .net()
                .is_some_and(|n| n.side == Some(Side::Receiver))
    });
    let rec = at.and_then(|i| c.record(i));
    let (payload, packet, what) = payload_of(rec, proto);
    let expected = RATE_BPS as f64 * payload as f64 / packet as f64;
    let measured = rec.map(|r| r.summary.mean);
    let check = judged(
        base,
        &bench,
        points,
        measured,
        Judge {
            expected,
            tolerance: 0.03 * expected,
            tolerance_text: "±3 %".into(),
            reason: format!(
                "tc tbf shapes both ends' egress of a veth pair between two namespaces of the run's to {} Mbit/s; expected: the rate × the payload's share of each packet, {payload} B ({what}) of {packet} B (with {ETHERNET} B of Ethernet header)",
                RATE_BPS / 1_000_000
            ),
        },
    );
    Ok(check)
}

/// The payload of each packet tbf counts, the packet's bytes (with its Ethernet header) and
/// what the payload is, for a point of `proto` measured as `rec` (its link's MTU, its MSS).
pub(super) fn payload_of(
    rec: Option<&crate::results::ResultRecord>,
    proto: Proto,
) -> (u64, u64, &'static str) {
    let net = rec.and_then(|r| r.params.net());
    let mtu = net
        .and_then(|n| n.link.as_ref())
        .and_then(|l| l.mtu_bytes)
        .map_or(1500, u64::from);
    if proto == Proto::Tcp {
        // A full segment fills the MTU; its payload is the MSS the kernel used (timestamps
        // take 12 bytes of the 40 of headers beyond it).
        let mss = net
            .and_then(|n| n.client_socket.as_ref())
            .and_then(|s| s.mss_bytes)
            .map_or(mtu - 52, u64::from);
        (mss, mtu + ETHERNET, "MSS")
    } else {
        (UDP_PAYLOAD, UDP_PAYLOAD + 28 + ETHERNET, "datagram payload")
    }
}

/// The delay check: round trips through the delay line without and with the delay; the added
/// time against twice the delay.
fn delay(c: &mut Checks, pair: &NetPair, server_ns: &OwnedFd) -> anyhow::Result<()> {
    let base = bases()[2].clone();
    let line = match delay_line(pair, server_ns) {
        Ok(line) => line,
        Err(why) => {
            return c.push(Check {
                reason: why,
                ..base
            });
        }
    };
    let tried = twice(c, ratio_read, |c| delay_try(c, &line, &base));
    drop(line);
    c.push_tried(tried)
}

/// One try of [`delay`], through `line`.
fn delay_try(c: &mut Checks, line: &DelayLine, base: &Check) -> anyhow::Result<Check> {
    let base = base.clone();
    // The line's count of packets dropped runs over both tries.
    let dropped_before = line.dropped();
    let args = Benchmark::new(Subsystem::Net)
        .with_all([
            Setting::Server(TUN_SERVER.into()),
            Setting::Workload(Workload::Net(NetWorkload::Latency)),
            Setting::Protocol(Proto::Tcp),
            Setting::Bytes("message-size", 64),
        ])
        .with_all(c.timing("duration"));
    let mut rtts = Vec::new();
    let mut all = Vec::new();
    for d in [Duration::ZERO, DELAY] {
        line.set_delay(d);
        match c.measure(&args) {
            Ok(points) => {
                let at = c.find(&points, |r| r.metric == Metric::Latency);
                // The median round trip: a host that takes the CPUs away for a few ms adds to
                // a few round trips, never to the line's delay (a shared host's CI read a mean
                // 0.55 ms over the expected 10.06 ms once in nine runs).
                rtts.push(at.and_then(|i| c.record(i)).map(|r| {
                    r.percentiles
                        .as_ref()
                        .and_then(|p| p.get("p50").copied())
                        .unwrap_or(r.summary.mean)
                }));
                all.extend(points);
            }
            Err(e) if interrupted(&e) => return Err(e),
            Err(e) => return Ok(failed(base, &args, &e)),
        }
    }
    let dropped = line.dropped().saturating_sub(dropped_before);
    let added = 2.0 * DELAY.as_secs_f64();
    let (Some(plain), measured) = (rtts[0], rtts[1]) else {
        return Ok(Check {
            status: crate::results::verify::Status::Fail,
            reason: "the round trip without the delay was not measured".into(),
            ..base
        });
    };
    let check = judged(
        base,
        &args,
        all,
        measured,
        Judge {
            expected: plain + added,
            tolerance: 0.05 * added,
            tolerance_text: format!("±5 % of {} ms", added * 1e3),
            reason: format!(
                "a TUN device in each namespace, peakbench carrying every packet between them after the delay (no netem needed); measured: the median round trip; expected: the median round trip through the same line without the delay ({} µs) + 2 × {} ms{}",
                crate::units::format_sig(plain * 1e6),
                DELAY.as_millis(),
                if dropped > 0 {
                    format!("; the line dropped {dropped} packets (its queue was full)")
                } else {
                    String::new()
                }
            ),
        },
    );
    Ok(check)
}

/// The delay line between the pair's namespaces (a TUN device in each, [`TUN_SERVER`] and
/// [`TUN_CLIENT`], without a delay until one is set), or why it cannot be had.
pub(super) fn delay_line(pair: &NetPair, server_ns: &OwnedFd) -> Result<DelayLine, String> {
    let names = super::names::tuns(std::process::id());
    let (s, cl) = Inside::new(server_ns)
        .and_then(|inside| {
            let t = open_tun(&names[0]).map_err(|e| format!("no TUN device: {e}"));
            drop(inside);
            t
        })
        .and_then(|s| {
            Ok((
                s,
                open_tun(&names[1]).map_err(|e| format!("no TUN device: {e}"))?,
            ))
        })?;
    for (ns, dev, addr) in [
        (&pair.names[0], &names[0], TUN_SERVER),
        (&pair.names[1], &names[1], TUN_CLIENT),
    ] {
        run(
            "ip",
            &["-n", ns, "addr", "add", &format!("{addr}/24"), "dev", dev],
        )?;
        run("ip", &["-n", ns, "link", "set", dev, "up"])?;
    }
    DelayLine::start(s, cl).map_err(|e| format!("cannot start the delay line: {e}"))
}

/// The loss check: UDP datagrams at a rate the path carries whole, a share of them dropped
/// (tried twice where off its mark: [`twice`]).
fn loss(c: &mut Checks, pair: &NetPair) -> anyhow::Result<()> {
    let mut sent = 0;
    let (mut checks, outcome) = twice(c, ratio_read, |c| loss_try(c, pair, &mut sent));
    // Too few datagrams is no figure off its mark: another try sends as few.
    if let Some(check) = checks.last_mut().filter(|c| c.measured.is_some())
        && sent < MIN_DATAGRAMS
    {
        check.status = crate::results::verify::Status::Fail;
        check.reason = format!(
            "only {sent} datagrams were sent: the check needs {MIN_DATAGRAMS} (give a longer --duration or more --repeat)"
        );
    }
    c.push_tried((checks, outcome))
}

/// One try of [`loss`].
/// `sent`: the datagrams it sent inside the measured windows.
fn loss_try(c: &mut Checks, pair: &NetPair, sent: &mut u64) -> anyhow::Result<Check> {
    let base = bases()[3].clone();
    if let Err(why) = pair.add_loss(LOSS) {
        return Ok(Check {
            reason: format!("cannot drop datagrams: {why}"),
            ..base
        });
    }
    let bench = throughput(Proto::Udp)
        .with_all([
            Setting::Bytes("message-size", UDP_PAYLOAD),
            Setting::Rate(LOSS_SEND_BPS),
        ])
        .with_all(c.timing("duration"));
    let measured = c.measure(&bench);
    let _ = pair.remove_loss(LOSS);
    let points = match measured {
        Ok(p) => p,
        Err(e) if interrupted(&e) => return Err(e),
        Err(e) => return Ok(failed(base, &bench, &e)),
    };
    let at = c.find(&points, |r| r.metric == Metric::Loss);
    let rec = at.and_then(|i| c.record(i));
    // Sent inside the measured windows of all the repetitions.
    *sent = rec
        .and_then(|r| r.params.net())
        .and_then(|n| n.datagrams_sent)
        .unwrap_or(0);
    let check = judged(
        base,
        &bench,
        points,
        rec.map(|r| r.summary.mean),
        Judge {
            expected: LOSS * 100.0,
            tolerance: 0.5,
            tolerance_text: "±0.5 points".into(),
            reason: format!(
                "iptables' statistic match drops each UDP datagram arriving at the server's end with probability {LOSS}; expected: that share, of {sent} datagrams sent"
            ),
        },
    );
    Ok(check)
}
