//! Findings: what a run's figures say, written out and citing them — how each sweep over
//! threads or streams scales and where it saturates, random against sequential and writes
//! against reads, UDP against TCP, how close the points come to their peaks, and for every
//! point below 70 % of its peak the likeliest cause the run itself shows. Nothing is said
//! without the figures it rests on.

use super::diagnosis::{DIAGNOSED_ABOVE, FLAT, Others, WORKERS, diagnose, what, workers};
use crate::results::params::{Order, Proto, Side};
use crate::results::point::fields;
use crate::results::{Metric, Report, ResultRecord, Subsystem, Unit};
use crate::units::format_sig;
use crate::workload::spec::Work;
use std::collections::{HashMap, HashSet};

/// One statement and the figures it cites (each appears in the text as `format_sig` writes
/// it, ratios with two decimals).
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    pub subsystem: Subsystem,
    pub kind: Kind,
    pub text: String,
    pub cites: Vec<f64>,
}

/// What a finding is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A sweep over threads or streams: its gain and where it saturates.
    Scaling,
    /// Two kinds of point against each other: random and sequential, writes and reads, UDP
    /// and TCP.
    Ratio,
    /// How close the points come to their peaks.
    Efficiency,
    /// Why a point stays below 70 % of its peak.
    Cause,
    /// The levels a bandwidth staircase shows (L1, L2…, memory) and their rates.
    Levels,
    /// A point's figure that went through phases while it ran: a burst that ended, a throttle,
    /// a slow start.
    Phases,
}

/// An efficiency below this is explained.
pub const LOW: f64 = 0.70;

/// The findings of `report` (in display units), by subsystem in the order of its records.
pub fn of(report: &Report) -> Vec<Finding> {
    let recs: Vec<&ResultRecord> = report
        .results
        .iter()
        .filter(|r| r.params.net().and_then(|n| n.side) != Some(Side::Sender))
        .collect();
    let mut out = Vec::new();
    let mut subsystems: Vec<Subsystem> = Vec::new();
    for r in &recs {
        if !subsystems.contains(&r.subsystem) {
            subsystems.push(r.subsystem);
        }
    }
    for sub in subsystems {
        let mine: Vec<&ResultRecord> = recs
            .iter()
            .copied()
            .filter(|r| r.subsystem == sub)
            .collect();
        // A staircase's points scale over threads at each of its working sets: its levels,
        // per thread count, say that in one line each.
        let stairs = super::bandwidth_levels::staircases(&mine, &report.system.caches);
        let on_stairs = super::bandwidth_levels::on_stairs(&stairs);
        let sweeps: Vec<&ResultRecord> = (mine.iter().copied())
            .filter(|r| !on_stairs(r) && !harness_only(r))
            .collect();
        out.extend(scaling(&sweeps));
        out.extend(levels(&mine, report));
        out.extend(pairs(&mine));
        out.extend(bands(sub, &mine));
        out.extend(queued_seeks(sub, &mine));
        // Every side of a link has its own series (a sender's too).
        out.extend(phases::of(
            report
                .results
                .iter()
                .filter(|r| r.subsystem == sub && r.rerun.is_none()),
        ));
        let others = Others::of(&mine);
        // A point's records of one efficiency (a disk point's throughput and IOPS) say the
        // same: once.
        let mut said = HashSet::new();
        out.extend(
            mine.iter()
                .filter_map(|r| cause(r, &others, report))
                .filter(|f| said.insert(f.text.clone())),
        );
    }
    out
}

/// Whether a record's workload measures the harness alone (a `null` workload): its figure is
/// the harness's overhead, so no scaling, ratio or efficiency is said of it.
pub fn harness_only(r: &ResultRecord) -> bool {
    matches!(r.workload.spec().work, Work::Nothing)
}

/// Each bandwidth staircase's levels: "SUM · 1 thread over 33 working sets per thread: L1
/// 178 GB/s at 16 KiB, ends near 41 KiB (sysfs 32 KiB); L2 106 GB/s at 128–256 KiB, …".
fn levels(recs: &[&ResultRecord], report: &Report) -> Vec<Finding> {
    use crate::units::format_bytes_binary as size;
    super::bandwidth_levels::staircases(recs, &report.system.caches)
        .into_iter()
        .filter(|l| !l.levels.is_empty())
        .map(|l| {
            let unit = l.records[0].unit;
            let parts: Vec<String> = (l.levels.iter())
                .map(|v| {
                    let span = if v.from_bytes == v.to_bytes {
                        size(v.from_bytes)
                    } else {
                        format!("{}–{}", size(v.from_bytes), size(v.to_bytes))
                    };
                    let end = match (v.capacity_bytes, v.sysfs_bytes) {
                        (Some(c), Some(s)) => {
                            format!(", ends near {} (sysfs {})", size(c), size(s))
                        }
                        (Some(c), None) => format!(", ends near {}", size(c)),
                        _ => String::new(),
                    };
                    format!("{} {} {unit} at {span}{end}", v.kind, format_sig(v.gbps))
                })
                .collect();
            Finding {
                subsystem: Subsystem::Mem,
                kind: Kind::Levels,
                text: format!(
                    "{} over {} working sets per thread: {}",
                    l.name,
                    l.points.len(),
                    parts.join("; ")
                ),
                cites: l.levels.iter().map(|v| v.gbps).collect(),
            }
        })
        .collect()
}

/// Each sweep over threads (streams) of a rate: from the fewest to the most, its gain, and
/// where it stops gaining ("flat from 4: saturated"), or that it is still gaining.
fn scaling(recs: &[&ResultRecord]) -> Vec<Finding> {
    // A disk point's IOPS scale as its MB/s (one block each): said once, of the MB/s.
    let with_throughput: HashSet<String> = recs
        .iter()
        .filter(|x| x.metric == Metric::Throughput)
        .map(|x| what(x, &[]))
        .collect();
    let has_throughput = |r: &ResultRecord| with_throughput.contains(&what(r, &[]));
    let rates: Vec<&ResultRecord> = recs
        .iter()
        .copied()
        .filter(|r| !r.metric.lower_is_better() && r.summary.mean > 0.0)
        .filter(|r| !(r.metric == Metric::Iops && has_throughput(r)))
        .collect();
    let mut out = Vec::new();
    for ((_, metric, unit), mut sweep) in
        super::group_by(&rates, |r| (what(r, WORKERS), r.metric, r.unit))
    {
        sweep.sort_by_key(|r| workers(r).0);
        sweep.dedup_by_key(|r| workers(r).0);
        if sweep.len() < 2 {
            continue;
        }
        let (first, last) = (sweep[0], sweep[sweep.len() - 1]);
        let (w1, noun) = workers(first);
        let wn = workers(last).0;
        let (v1, vn) = (first.summary.mean, last.summary.mean);
        let gain = vn / v1;
        // The knee: the first count after which no later one gains 10 % over it, that is
        // whose later counts' greatest figure (a NaN counted as the greatest) is below it.
        let mut later = vec![f64::NEG_INFINITY; sweep.len()];
        for k in (0..sweep.len() - 1).rev() {
            let next = sweep[k + 1].summary.mean;
            later[k] = if next.is_nan() {
                f64::INFINITY
            } else {
                later[k + 1].max(next)
            };
        }
        let knee = (0..sweep.len())
            .find(|&k| k + 1 == sweep.len() || later[k] < sweep[k].summary.mean * FLAT);
        // The best count (a NaN is never the best): a sweep whose last count ends more than
        // 10 % below it falls, which is neither flat nor saturated.
        let (best, vb) = (sweep.iter().enumerate())
            .map(|(k, r)| (k, r.summary.mean))
            .fold((0, v1), |b, x| if x.1 > b.1 { x } else { b });
        let mut cites = vec![v1, vn, gain];
        let tail = match knee {
            _ if vn * FLAT < vb => {
                let lost = 100.0 * (1.0 - vn / vb);
                cites.push(lost);
                if best == 0 {
                    format!("falls with more {noun}: {lost:.1} % lower at {wn} than at {w1}")
                } else {
                    cites.push(vb);
                    format!(
                        "peaks at {} {noun} ({} {unit}), then falls: {lost:.1} % lower at {wn}",
                        workers(sweep[best]).0,
                        format_sig(vb)
                    )
                }
            }
            Some(k) if k + 1 == sweep.len() => format!("still gaining at {wn} {noun}"),
            Some(0) => format!("flat from {w1}: more {noun} add less than 10 %"),
            Some(k) => format!(
                "saturated from {} {noun} (more add less than 10 %)",
                workers(sweep[k]).0
            ),
            None => String::new(),
        };
        let metric_words = if metric == Metric::Throughput {
            String::new()
        } else {
            format!(" ({})", words(metric))
        };
        out.push(Finding {
            subsystem: first.subsystem,
            kind: Kind::Scaling,
            text: format!(
                "{}{metric_words}: {} → {} {unit} from {w1} to {wn} {noun} (×{gain:.2}); {tail}",
                what(first, WORKERS),
                format_sig(v1),
                format_sig(vn),
            ),
            cites,
        });
    }
    out
}

/// The order (sequential or random) and direction (read, write or both) of a point whose
/// workload comes in such pairs, else None.
fn kind(r: &ResultRecord) -> Option<(Order, Work)> {
    let spec = r.workload.spec();
    let order = fields(&r.params)
        .into_iter()
        .find(|f| f.key == "pattern" || f.key == "order")
        .and_then(|f| serde_json::from_value::<Order>(f.value).ok())?;
    spec.work.ordered().then_some((order, spec.work))
}

/// What sets two otherwise equal points apart: random against sequential (the same work), or
/// writes against reads (the same order).
fn pairs(recs: &[&ResultRecord]) -> Vec<Finding> {
    let mut out = Vec::new();
    let same = |r: &ResultRecord| what(r, &["pattern", "order", "read_percent"]);
    let strip = |r: &ResultRecord| {
        let w = same(r);
        // The point without its workload's name: what two workloads' points share.
        w.split_once(" · ")
            .map_or(String::new(), |(_, rest)| rest.to_string())
    };
    // The points that come in pairs, each with its kind, by what two of a pair share.
    let paired: Vec<(&ResultRecord, (Order, Work))> =
        recs.iter().filter_map(|&r| Some((r, kind(r)?))).collect();
    let mut alike: HashMap<(String, Metric, Unit), Vec<usize>> = HashMap::new();
    for (i, (r, _)) in paired.iter().enumerate() {
        alike
            .entry((strip(r), r.metric, r.unit))
            .or_default()
            .push(i);
    }
    let mut ratios: Vec<(String, String, Metric, Vec<f64>, Subsystem)> = Vec::new();
    for &(a, (oa, wa)) in &paired {
        if a.summary.mean <= 0.0 {
            continue;
        }
        for &(b, (ob, wb)) in alike[&(strip(a), a.metric, a.unit)]
            .iter()
            .map(|&i| &paired[i])
        {
            let (random, writes) = (
                oa == Order::Sequential && ob == Order::Random && wa == wb,
                oa == ob && reads(wa) && writes_only(wb),
            );
            if !(random || writes) {
                continue;
            }
            let ratio = b.summary.mean / a.summary.mean;
            let label = format!("{}\u{0}{}", b.workload, a.workload);
            match ratios
                .iter_mut()
                .find(|(l, _, m, _, _)| *l == label && *m == a.metric)
            {
                Some((_, _, _, v, _)) => v.push(ratio),
                None => ratios.push((
                    label,
                    if random {
                        "random against sequential"
                    } else {
                        "writes against reads"
                    }
                    .into(),
                    a.metric,
                    vec![ratio],
                    a.subsystem,
                )),
            }
        }
    }
    // Figures with the same ratios (a disk point's MB/s and IOPS) are said once.
    let mut said: Vec<(String, String, String, Vec<f64>, Subsystem)> = Vec::new();
    for (label, kind, metric, mut v, subsystem) in ratios {
        v.sort_by(f64::total_cmp);
        let same = |w: &Vec<f64>| {
            w.len() == v.len()
                && w.iter()
                    .zip(&v)
                    .all(|(a, b)| (a - b).abs() <= 1e-9 * a.abs())
        };
        match said
            .iter_mut()
            .find(|x| x.0 == label && x.1 == kind && same(&x.3))
        {
            Some(x) => x.2 = format!("{} and {}", x.2, words(metric)),
            None => said.push((label, kind, words(metric).to_string(), v, subsystem)),
        }
    }
    for (label, kind, metric, v, subsystem) in said {
        let (lo, hi, mid) = (v[0], v[v.len() - 1], v[v.len() / 2]);
        let (b, a) = label.split_once('\u{0}').unwrap_or((&label, ""));
        let range = if v.len() == 1 {
            format!("×{lo:.2}")
        } else {
            format!(
                "×{lo:.2} to ×{hi:.2} (median ×{mid:.2} over {} points)",
                v.len()
            )
        };
        out.push(Finding {
            subsystem,
            kind: Kind::Ratio,
            text: format!("{kind}: {b}'s {metric} over {a}'s: {range}"),
            cites: vec![lo, hi, mid],
        });
    }
    out.extend(protocols(recs));
    out
}

/// A figure in words: "IOPS", "latency".
fn words(metric: Metric) -> &'static str {
    match metric {
        Metric::Iops => "IOPS",
        m => m.name(),
    }
}

fn reads(w: Work) -> bool {
    matches!(
        w,
        Work::Io {
            read_percent: Some(100),
            ..
        } | Work::Blocks {
            read: true,
            write: false
        }
    )
}

fn writes_only(w: Work) -> bool {
    matches!(
        w,
        Work::Io {
            read_percent: Some(0),
            ..
        } | Work::Blocks {
            read: false,
            write: true
        }
    )
}

/// UDP's goodput against TCP's at the same streams and message size.
fn protocols(recs: &[&ResultRecord]) -> Vec<Finding> {
    let goodput: Vec<&ResultRecord> = recs
        .iter()
        .copied()
        .filter(|r| r.metric == Metric::Throughput && r.params.net().is_some())
        .collect();
    // The first UDP point of each streams, message size, direction and unit.
    let mut udp_of = HashMap::new();
    for u in &goodput {
        if let Some(n) = u.params.net().filter(|n| n.protocol == Proto::Udp) {
            let at = (n.streams, n.message_size_bytes, n.direction, u.unit);
            udp_of.entry(at).or_insert(*u);
        }
    }
    let mut out = Vec::new();
    for tcp in &goodput {
        let Some(t) = tcp.params.net().filter(|n| n.protocol == Proto::Tcp) else {
            continue;
        };
        let at = (t.streams, t.message_size_bytes, t.direction, tcp.unit);
        let Some(udp) = udp_of.get(&at) else { continue };
        let ratio = udp.summary.mean / tcp.summary.mean;
        out.push(Finding {
            subsystem: tcp.subsystem,
            kind: Kind::Ratio,
            text: format!(
                "UDP against TCP at {} × {} messages: {} against {} {} (×{ratio:.2})",
                t.streams,
                crate::units::format_bytes_binary(t.message_size_bytes as u64),
                format_sig(udp.summary.mean),
                format_sig(tcp.summary.mean),
                tcp.unit
            ),
            cites: vec![udp.summary.mean, tcp.summary.mean, ratio],
        });
    }
    out
}

/// How many points reach 90 % of their peak, 70–90 %, and below 70 %; and, in a class of
/// their own, those above 100 %: a measured figure above the ceiling says that a peak input
/// is wrong or that the peak is not the ceiling, never that the point is efficient.
fn bands(sub: Subsystem, recs: &[&ResultRecord]) -> Option<Finding> {
    let e: Vec<f64> = recs.iter().filter_map(|r| r.efficiency).collect();
    if e.is_empty() {
        return None;
    }
    let span = |lo: f64, hi: f64| {
        let (lo, hi) = (lo * 100.0, hi * 100.0);
        if format!("{lo:.1}") == format!("{hi:.1}") {
            format!("{hi:.1} %")
        } else {
            format!("{lo:.1}–{hi:.1} %")
        }
    };
    let least = |v: &mut dyn Iterator<Item = f64>| v.fold(f64::MAX, f64::min);
    let most = |v: &mut dyn Iterator<Item = f64>| v.fold(f64::MIN, f64::max);
    let over: Vec<f64> = e.iter().copied().filter(|&x| x > 1.0).collect();
    let high = e.iter().filter(|&&x| (0.9..=1.0).contains(&x)).count();
    let low = e.iter().filter(|&&x| x < LOW).count();
    let mid = e.len() - over.len() - high - low;
    let (worst, best) = (least(&mut e.iter().copied()), most(&mut e.iter().copied()));
    let mut cites = vec![worst * 100.0, best * 100.0];
    let above = if over.is_empty() {
        String::new()
    } else {
        let (lo, hi) = (
            least(&mut over.iter().copied()),
            most(&mut over.iter().copied()),
        );
        cites.extend([lo * 100.0, hi * 100.0]);
        format!(
            "; {} above 100 % ({}): above the peak, so a peak input is wrong or the peak is not the ceiling",
            over.len(),
            span(lo, hi)
        )
    };
    Some(Finding {
        subsystem: sub,
        kind: Kind::Efficiency,
        text: format!(
            "{} points with a known peak: {high} at 90–100 % of it, {mid} at 70–90 %, {low} below 70 % ({}){above}",
            e.len(),
            span(worst, best),
        ),
        cites,
    })
}

/// The random points of a rotating disk that beat their bound n / (seek + ½ rotation) with
/// more than one I/O in flight, and why they can: with command queueing (NCQ, TCQ) the drive
/// reorders the requests queued to shorten its seeks and rotational waits, so an access takes
/// less than the average seek and half a rotation. Little's law bounds the IOPS by n / access
/// only while the access time does not shrink with the queue. Said once, with the range.
fn queued_seeks(sub: Subsystem, recs: &[&ResultRecord]) -> Option<Finding> {
    let over: Vec<(f64, f64, f64)> = recs
        .iter()
        .filter(|r| r.metric == Metric::Iops)
        .filter_map(|r| {
            let p = r.peak.as_ref()?;
            let e = r.efficiency.filter(|e| *e > 1.0)?;
            let n = p.inputs.get("n")?.value;
            let (rpm, seek) = (p.inputs.get("rpm")?.value, p.inputs.get("seek")?.value);
            let access_ms = seek + 30e3 / rpm;
            // Above the queue's bound itself, not the rated figure or the bandwidth's.
            let bound = n * 1e3 / access_ms;
            (n > 1.0 && (p.value - bound).abs() <= 1e-9 * bound).then_some((e, n, access_ms))
        })
        .collect();
    let &(_, _, access) = over.first()?;
    let fold = |f: fn(&(f64, f64, f64)) -> f64, lo: bool| {
        let it = over.iter().map(f);
        if lo {
            it.fold(f64::MAX, f64::min)
        } else {
            it.fold(f64::MIN, f64::max)
        }
    };
    let (lo, hi) = (fold(|o| o.0 * 100.0, true), fold(|o| o.0 * 100.0, false));
    let (n_lo, n_hi) = (fold(|o| o.1, true), fold(|o| o.1, false));
    let range = |a: String, b: String| if a == b { a } else { format!("{a}–{b}") };
    let count = match over.len() {
        1 => "1 random point on a rotating disk reaches".to_string(),
        k => format!("{k} random points on a rotating disk reach"),
    };
    Some(Finding {
        subsystem: sub,
        kind: Kind::Efficiency,
        text: format!(
            "{count} {} % of n / (seek + ½ rotation), {} ms, with {} I/Os in flight: with command queueing (NCQ/TCQ) the drive reorders the queued requests to shorten its seeks and rotational waits, so an access takes less than a seek and half a rotation — n / access bounds the IOPS only while the access time does not shrink with the queue",
            range(format!("{lo:.1}"), format!("{hi:.1}")),
            format_sig(access),
            range(format!("{n_lo}"), format!("{n_hi}")),
        ),
        cites: vec![lo, hi, access, n_lo, n_hi],
    })
}

/// What `--diagnose` found measuring the point again without the cause, in words.
fn confirmed(c: &crate::results::diagnosis::Cause) -> Option<String> {
    c.confirmation.as_ref().map(|k| {
        format!(
            "measured again with {}: {:.1} % of its peak, {}{:.1} % expected without it: {}",
            k.knob,
            k.efficiency * 100.0,
            // Without a ceiling measured before, the least gain that tells.
            if k.least { "at least " } else { "" },
            k.expected * 100.0,
            if k.confirmed { "confirmed" } else { "dropped" }
        )
    })
}

/// Why a point reaches less than 70 % of its peak, in words: its diagnosis's causes, the
/// largest share of the gap first, each with its share where the run measures it, and the
/// share no cause explains; or that the run shows no cause. And what lifted a point above
/// 110 % of its peak, where the run shows it (the efficiency's class says it is above).
fn cause(r: &ResultRecord, others: &Others, report: &Report) -> Option<Finding> {
    let e = r.efficiency.filter(|e| *e < LOW || *e > DIAGNOSED_ABOVE)?;
    let point = crate::results::point::label(r);
    let (mut d, mut cites) = diagnose(r, others, report)?;
    if let Some(at) = report.results.iter().position(|x| std::ptr::eq(x, r)) {
        super::diagnosis::confirm(report, at, &mut d);
    }
    // Above the peak, the class statement says it already where the run shows no cause.
    let (gap, above) = if e > 1.0 {
        if d.causes.is_empty() {
            return None;
        }
        ("excess", ", above it")
    } else {
        ("gap", "")
    };
    cites.insert(0, e * 100.0);
    // Its share and what measuring it again without the cause read, in brackets.
    let share = |c: &crate::results::diagnosis::Cause| {
        let said: Vec<String> = (c.share.map(|s| format!("{:.0} % of the {gap}", 100.0 * s)))
            .into_iter()
            .chain(confirmed(c))
            .collect();
        if said.is_empty() {
            String::new()
        } else {
            format!(" ({})", said.join("; "))
        }
    };
    let why = if d.causes.is_empty() {
        "no cause this run can show".to_string()
    } else {
        let mut parts: Vec<String> = d
            .causes
            .iter()
            .map(|c| format!("{}{}", c.text, share(c)))
            .collect();
        if d.causes.iter().any(|c| c.share.is_some()) && d.unexplained >= 0.005 {
            parts.push(format!(
                "{:.0} % of the {gap} unexplained",
                100.0 * d.unexplained
            ));
        }
        parts.join("; ")
    };
    Some(Finding {
        subsystem: r.subsystem,
        kind: Kind::Cause,
        text: format!("{point}: {:.1} % of its peak{above} — {why}", e * 100.0),
        cites,
    })
}

mod phases;
#[cfg(test)]
mod tests;
