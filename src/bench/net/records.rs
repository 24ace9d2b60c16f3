//! A throughput point's records from its repetitions' outcomes: each way's goodput at the
//! receiver and at the sender (and for UDP its loss and jitter), and with `--bidir` both ways'
//! and their sum.

use super::Proto;
use super::client::Outcome;
use super::roles::SideResult;
use crate::results::kinds::ConnectPhase;
use crate::results::params::{Direction, NetParams, Side};
use crate::results::{Intervals, Metric, ResultRecord, Unit};
use crate::sysinfo::peak::Peak;
use crate::wire::net_test::{SideStats, TestParams};
use crate::workload::net::NetWorkload;
use hdrhistogram::Histogram;

/// Benchmarks state goodput in Mbit/s; the record stores bit/s.
pub const GOODPUT_UNIT: Unit = Unit::MbitPerSec;
pub const GOODPUT_BITS: f64 = 1e6;

/// (sender, receiver) figures of one way, one pair per repetition.
type Way<'a> = Vec<(&'a SideStats, &'a SideStats)>;

/// Goodput of `bytes` over `ns`, in [`GOODPUT_UNIT`].
fn rate(bytes: u64, ns: u64) -> f64 {
    bytes as f64 * 8.0 / (ns.max(1) as f64 / 1e9) / GOODPUT_BITS
}

/// The receiver's goodput of each repetition of a way, bytes per second.
fn received_per_s(way: &Way) -> Vec<f64> {
    way.iter()
        .map(|(_, r)| r.bytes_received as f64 / (r.window_ns.max(1) as f64 / 1e9))
        .collect()
}

/// What every record of throughput point `p` says of it: its pacing, its receivers' polling
/// and (one way) its direction.
pub fn throughput_params(base: &mut NetParams, p: &TestParams) {
    if p.proto == Proto::Udp {
        base.target_rate_bps = Some(p.rate_bps);
    }
    base.busy_poll_us = Some(p.busy_poll_us as u64);
    base.direction = Some(match (p.bidir, p.reverse) {
        (true, _) => Direction::BidirClientToServer,
        (false, true) => Direction::ServerToClient,
        (false, false) => Direction::ClientToServer,
    });
}

/// A throughput point's records before it runs (`base` from [`throughput_params`]), those
/// [`throughput`] makes of its outcomes: each way's goodput at its receiver and its sender (and
/// for UDP its loss and jitter), and with `--bidir` both ways' sum; each with `samples` planned
/// repetitions and no peak ([`ResultRecord::planned`] sets what a plan's record says).
pub fn planned_throughput(
    name: NetWorkload,
    p: &TestParams,
    base: &NetParams,
    samples: usize,
) -> Vec<ResultRecord> {
    let record = |params: NetParams, metric: Metric, unit: Unit| {
        ResultRecord::new(
            name,
            params,
            metric,
            unit,
            vec![1.0; samples.max(1)],
            Err("planned: not measured yet".into()),
        )
    };
    let mut metrics = vec![
        (Side::Receiver, Metric::Throughput, GOODPUT_UNIT),
        (Side::Sender, Metric::Throughput, GOODPUT_UNIT),
    ];
    if p.proto == Proto::Udp {
        metrics.push((Side::Receiver, Metric::Loss, Unit::Percent));
        metrics.push((Side::Receiver, Metric::Jitter, Unit::Micros));
    }
    // Each way of the point: its one way (from `throughput_params`), or both at once.
    let ways = if p.bidir {
        vec![
            Some(Direction::BidirClientToServer),
            Some(Direction::BidirServerToClient),
        ]
    } else {
        vec![base.direction]
    };
    let along = |direction: Option<Direction>, side: Side| NetParams {
        direction,
        side: Some(side),
        ..base.clone()
    };
    let mut out: Vec<ResultRecord> = ways
        .into_iter()
        .flat_map(|d| {
            metrics
                .iter()
                .map(move |&(side, metric, unit)| (along(d, side), metric, unit))
        })
        .map(|(params, metric, unit)| record(params, metric, unit))
        .collect();
    if p.bidir {
        out.push(record(
            along(Some(Direction::BidirSum), Side::Receiver),
            Metric::Throughput,
            GOODPUT_UNIT,
        ));
    }
    out
}

/// Every record of a throughput point.
pub fn throughput(
    name: NetWorkload,
    p: TestParams,
    mut base: NetParams,
    outcomes: &[Outcome],
    peak: Result<Peak, String>,
) -> Vec<ResultRecord> {
    throughput_params(&mut base, &p);
    let last = outcomes.last();
    if !p.bidir {
        let way: Way = outcomes
            .iter()
            .map(|o| {
                if p.reverse {
                    (&o.server, &o.client.stats)
                } else {
                    (&o.client.stats, &o.server)
                }
            })
            .collect();
        with_demand(&mut base, &[received_per_s(&way)]);
        let mut out = one_way(name, &p, &base, &way, &peak);
        let senders = way.iter().map(|(sender, _)| *sender);
        sustained(&mut out, &p, senders);
        // The client's side, interval by interval, on the record of its side: the sender's,
        // or with --reverse the receiver's.
        let side = usize::from(!p.reverse);
        set_intervals(&mut out[side], last.map(|o| &o.client));
        set_phases(&mut out[side], outcomes.iter().map(|o| &o.client));
        return out;
    }
    let there: Way = outcomes
        .iter()
        .map(|o| (&o.client.stats, &o.server))
        .collect();
    let back: Way = outcomes
        .iter()
        .filter_map(|o| Some((o.server_second.as_ref()?, &o.client_second.as_ref()?.stats)))
        .collect();
    let (there_rates, back_rates) = (received_per_s(&there), received_per_s(&back));
    with_demand(&mut base, &[there_rates.clone(), back_rates.clone()]);
    let along = |d: Direction| NetParams {
        direction: Some(d),
        ..base.clone()
    };
    let mut out = one_way(
        name,
        &p,
        &along(Direction::BidirClientToServer),
        &there,
        &peak,
    );
    sustained(&mut out, &p, there.iter().map(|(sender, _)| *sender));
    set_intervals(&mut out[1], last.map(|o| &o.client));
    set_phases(&mut out[1], outcomes.iter().map(|o| &o.client));
    let mut from_server = one_way(
        name,
        &p,
        &along(Direction::BidirServerToClient),
        &back,
        &peak,
    );
    sustained(&mut from_server, &p, back.iter().map(|(sender, _)| *sender));
    set_intervals(
        &mut from_server[0],
        last.and_then(|o| o.client_second.as_ref()),
    );
    set_phases(
        &mut from_server[0],
        outcomes.iter().filter_map(|o| o.client_second.as_ref()),
    );
    out.extend(from_server);
    // Both ways' goodput at their receivers, repetition by repetition; the ceiling is twice
    // one way's (a full-duplex link).
    let sum: Vec<f64> = there_rates
        .iter()
        .zip(&back_rates)
        .map(|(a, b)| (a + b) * 8.0 / GOODPUT_BITS)
        .collect();
    let sum_peak = peak.map(|pk| Peak {
        value: 2.0 * pk.value,
        formula: format!("2 × {} (full duplex: both ways)", pk.formula),
        ..pk
    });
    out.push(ResultRecord::new(
        name,
        NetParams {
            side: Some(Side::Receiver),
            ..along(Direction::BidirSum)
        },
        Metric::Throughput,
        GOODPUT_UNIT,
        sum,
        sum_peak,
    ));
    out
}

/// `--sustain`: each record of one way gets its longest time and when its senders found each
/// repetition steady.
fn sustained<'a>(
    out: &mut [ResultRecord],
    p: &TestParams,
    senders: impl Iterator<Item = &'a SideStats>,
) {
    if !p.sustain {
        return;
    }
    let sustain = crate::results::phases::Sustain {
        max_s: p.duration_ms as f64 / 1e3,
        steady_s: senders
            .map(|s| s.steady_ns.map(|ns| ns as f64 / 1e9))
            .collect(),
    };
    for r in out {
        r.sustain = Some(sustain.clone());
    }
}

/// The service demand: the machine's busy CPU per KB of goodput at the receivers, all ways
/// together, the mean over the repetitions (its server's too, where it reported its CPU).
fn with_demand(base: &mut NetParams, ways: &[Vec<f64>]) {
    let reps = ways.iter().map(Vec::len).min().unwrap_or(0);
    let received = (0..reps)
        .map(|i| ways.iter().map(|w| w[i]).sum::<f64>())
        .sum::<f64>()
        / reps.max(1) as f64;
    base.cpu = base.cpu.take().map(|c| c.with_demand(received));
    base.server_cpu = base
        .server_cpu
        .take()
        .map(|c| Box::new(c.with_demand(received)));
}

/// One way's records: goodput at its receiver and its sender, and for UDP loss and jitter.
fn one_way(
    name: NetWorkload,
    p: &TestParams,
    base: &NetParams,
    way: &Way,
    peak: &Result<Peak, String>,
) -> Vec<ResultRecord> {
    let with_side = |side: Side| NetParams {
        side: Some(side),
        ..base.clone()
    };
    let mut out = vec![
        ResultRecord::new(
            name,
            with_side(Side::Receiver),
            Metric::Throughput,
            GOODPUT_UNIT,
            way.iter()
                .map(|(_, r)| rate(r.bytes_received, r.window_ns))
                .collect(),
            peak.clone(),
        ),
        ResultRecord::new(
            name,
            with_side(Side::Sender),
            Metric::Throughput,
            GOODPUT_UNIT,
            way.iter()
                .map(|(s, _)| rate(s.bytes_sent, s.window_ns))
                .collect(),
            peak.clone(),
        ),
    ];
    if p.proto == Proto::Udp {
        let sent: u64 = way.iter().map(|(s, _)| s.messages_sent).sum();
        let received: u64 = way.iter().map(|(_, r)| r.messages_received).sum();
        let ooo: u64 = way.iter().map(|(_, r)| r.out_of_order).sum();
        let mut m = with_side(Side::Receiver);
        m.datagrams_sent = Some(sent);
        m.datagrams_received = Some(received);
        m.out_of_order = Some(ooo);
        m.loss_definition = Some("datagrams the sender sent inside its measured window that the receiver never got, % of those sent".into());
        out.push(ResultRecord::new(
            name,
            m.clone(),
            Metric::Loss,
            Unit::Percent,
            way.iter()
                .map(|(s, r)| {
                    100.0 * s.messages_sent.saturating_sub(r.messages_received) as f64
                        / s.messages_sent.max(1) as f64
                })
                .collect(),
            Err("loss has no theoretical peak".into()),
        ));
        m.jitter_definition = Some(
            "RFC 3550 interarrival jitter of the measured datagrams, mean over streams".into(),
        );
        out.push(ResultRecord::new(
            name,
            m,
            Metric::Jitter,
            Unit::Micros,
            way.iter().map(|(_, r)| r.jitter_ns / 1000.0).collect(),
            Err("jitter has no theoretical peak".into()),
        ));
    }
    out
}

/// A side's goodput per whole interval of its window, in bit/s, and the interval in seconds.
fn per_interval(side: &SideResult) -> (Vec<f64>, f64) {
    let tl = &side.timeline;
    let interval = tl.interval.as_secs_f64();
    let whole = (side.stats.window_ns as u128 / tl.interval.as_nanos().max(1)) as usize;
    let values = tl
        .bytes
        .iter()
        .take(whole)
        .map(|b| *b as f64 * 8.0 / interval)
        .collect();
    (values, interval)
}

/// The phases of one side's goodput over every repetition (`sides`, in order) on `rec`.
fn set_phases<'a>(rec: &mut ResultRecord, sides: impl Iterator<Item = &'a SideResult>) {
    let mut rounds = Vec::new();
    let mut interval = 0.0;
    for side in sides {
        let (values, i) = per_interval(side);
        rounds.push(values);
        interval = i;
    }
    rec.phases = crate::results::phases::of_rounds(&rounds, interval);
}

/// The last repetition's figures of one side, interval by interval (whole intervals of its
/// window only), on `rec`.
fn set_intervals(rec: &mut ResultRecord, side: Option<&SideResult>) {
    let Some(side) = side else { return };
    let (values, interval) = per_interval(side);
    if values.len() >= 2 && interval > 0.0 {
        rec.intervals = Some(Intervals {
            interval_s: interval,
            values,
        });
    }
}

/// Where a side's times of one kind are.
type TimesOf = fn(&SideResult) -> Option<&Histogram<u64>>;

/// CONNECT's records: the rate of whole connections (all streams together), the time of a
/// whole connection and of its connect (per-repetition means; percentiles over all).
pub fn connect(
    name: NetWorkload,
    p: TestParams,
    base: NetParams,
    outcomes: &[Outcome],
    chosen: &crate::measure::latency::Percentiles,
) -> Vec<ResultRecord> {
    let mut m = base;
    m.side = Some(Side::Client);
    m.lost = Some(outcomes.iter().map(|o| o.client.stats.lost).sum());
    m.latency_definition = Some("from before connect() to the server's close after the response (whole connection), or to connect()'s return (connect); each stream's connections one after the other, every stream at once".into());
    let rates = outcomes
        .iter()
        .map(|o| {
            let st = &o.client.stats;
            st.messages_received as f64 / (st.window_ns.max(1) as f64 / 1e9)
        })
        .collect();
    let mut per_stream = vec![0.0; p.streams as usize];
    for o in outcomes {
        for (sum, ns) in per_stream.iter_mut().zip(&o.client.stream_rtt_ns) {
            *sum += ns / 1000.0 / outcomes.len() as f64;
        }
    }
    m.stream_rtt_us = per_stream;
    let mut out = vec![ResultRecord::new(
        name,
        m.clone(),
        Metric::Rate,
        Unit::TransPerSec,
        rates,
        Err("a connection rate has no theoretical peak".into()),
    )];
    let phases: [(ConnectPhase, TimesOf); 2] = [
        (ConnectPhase::Whole, |s| s.rtt.as_ref()),
        (ConnectPhase::Connect, |s| s.connect.as_ref()),
    ];
    for (phase, hist_of) in phases {
        let mut all = crate::measure::latency::histogram();
        let mut means = Vec::new();
        for h in outcomes.iter().filter_map(|o| hist_of(&o.client)) {
            means.push(h.mean() / 1000.0);
            let _ = all.add(h);
        }
        let mut rec = ResultRecord::new(
            name,
            NetParams {
                phase: Some(phase),
                ..m.clone()
            },
            Metric::Latency,
            Unit::Micros,
            means,
            Err("a connection's time has no theoretical peak".into()),
        );
        rec.percentiles = crate::measure::latency::percentiles_s(&all, chosen);
        out.push(rec);
    }
    out
}
