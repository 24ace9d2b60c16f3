//! Why a point stays below its peak: every cause the run measures, each with the highest
//! efficiency it alone leaves within reach (its ceiling) and its share of the gap, and what no
//! cause explains (docs/diagnosis.md). The findings say it in words, the JSON document carries
//! it as each record's `diagnosis`.

use super::bandwidth_levels::{level_of, per_thread};
use crate::results::diagnosis::{Cause, Diagnosis};
use crate::results::kinds::Pages;
use crate::results::params::{DiskParams, IoMode, Params, Proto};
use crate::results::point::{Field, fields};
use crate::results::{Metric, Report, ResultRecord, Subsystem, Unit};
use crate::units::{format_bytes_binary, format_sig};
use std::collections::HashSet;

mod numa;
mod others;
mod rerun;
mod saturation;

pub(super) use others::Others;
pub(super) use rerun::confirm;

/// A point below this share of its peak is diagnosed, and one above the other: what lifted it
/// over its ceiling (a figure above its peak measured something else than the peak bounds).
pub const DIAGNOSED_BELOW: f64 = 0.90;
pub const DIAGNOSED_ABOVE: f64 = 1.10;

/// A cause whose ceiling is at least this leaves the point within noise of its peak: not
/// named.
const NEGLIGIBLE: f64 = 0.97;

/// A smaller working set whose point reached at most this share of the peak reached the peak
/// of its level (a cache level's rate surpasses a memory peak by far more).
const AT_PEAK: f64 = 1.10;

/// A sweep whose next step gains less than this has saturated.
pub(super) const FLAT: f64 = 1.10;

/// A dense solve or multiply of a smaller order than this is too small for the peak: its
/// 2/3·N³ (LU) or 2·N³ (multiply) operations on 8·N² bytes are too few to amortise the
/// matrices' memory traffic and the threads' start-up (HPL sizes N to fill most of memory;
/// the reports' smallest LINPACK was N = 1000).
const SMALL_N: usize = 1000;

/// A record's point in words without its worker count: "DP · avx512", "RR · 4 KiB blocks ·
/// QD 1 · psync · direct".
pub(super) fn what(r: &ResultRecord, without: &[&str]) -> String {
    let mut parts = vec![r.workload.name().to_string()];
    parts.extend(
        fields(&r.params)
            .iter()
            .filter(|f| f.role.names() && !without.contains(&f.key))
            .filter_map(Field::words),
    );
    parts.join(" · ")
}

/// The worker count of a point: its threads, or a network point's streams.
pub(super) fn workers(r: &ResultRecord) -> (usize, &'static str) {
    match r.params.net() {
        Some(n) => (n.streams as usize, "streams"),
        None => (r.params.threads(), "threads"),
    }
}

pub(super) const WORKERS: &[&str] = &["threads", "streams", "side"];

/// What tells a memory point on 4 KiB pages from its twin on huge pages.
const PAGES: &[&str] = &["pages", "huge_page_bytes"];

/// The pages a memory point's arrays (or a LATENCY record's ring) were on.
fn pages_of(r: &ResultRecord) -> Option<Pages> {
    match &r.params {
        Params::Mem(p) => p.kernel.as_ref().map(|k| k.pages),
        Params::MemLatency(p) => {
            (p.level.as_ref().map(|l| l.pages)).or(p.chase.as_ref().map(|c| c.pages))
        }
        _ => None,
    }
}

/// What tells a buffered disk point from its O_DIRECT twin.
const IO_MODE: &[&str] = &["io_mode", "io_mode_reason"];

/// Every point's diagnosis (None where it is not diagnosed), in the order of `report`'s
/// records: each point among its subsystem's others.
pub fn of_report(report: &Report) -> Vec<Option<Diagnosis>> {
    let mut out = vec![None; report.results.len()];
    for sub in Subsystem::ALL {
        let mine: Vec<(usize, &ResultRecord)> = report
            .results
            .iter()
            .enumerate()
            .filter(|(_, r)| r.subsystem == sub)
            .collect();
        let recs: Vec<&ResultRecord> = mine.iter().map(|(_, r)| *r).collect();
        let others = Others::of(&recs);
        for (i, r) in mine {
            out[i] = diagnose(r, &others, report).map(|(d, _)| d);
        }
    }
    for (at, d) in out.iter_mut().enumerate() {
        if let Some(d) = d {
            confirm(report, at, d);
        }
    }
    out
}

/// A cause found, before the shares are worked out: its name, its ceiling where measured, its
/// words and the figures they cite.
struct Found {
    cause: &'static str,
    ceiling: Option<f64>,
    text: String,
    cites: Vec<f64>,
}

/// The diagnosis of `r` (a point of `report`, `others` its subsystem's points) where it is
/// below [`DIAGNOSED_BELOW`] of its peak or above [`DIAGNOSED_ABOVE`], and the figures its
/// words cite; None for a point between, or without an efficiency.
pub(super) fn diagnose(
    r: &ResultRecord,
    others: &Others,
    report: &Report,
) -> Option<(Diagnosis, Vec<f64>)> {
    let e = r
        .efficiency
        .filter(|e| *e > 0.0 && (*e < DIAGNOSED_BELOW || *e > DIAGNOSED_ABOVE))?;
    let above = e > 1.0;
    let found = if above {
        lifts(r, e, others, report)
    } else {
        causes(r, e, others, report)
    };
    // A cause that leaves the point within noise of its peak is not one.
    let found: Vec<Found> = found
        .into_iter()
        .filter(|f| f.ceiling.is_none_or(|c| c.ln().abs() > -NEGLIGIBLE.ln()))
        .collect();
    let cites = found.iter().flat_map(|f| f.cites.iter().copied()).collect();
    let mut causes: Vec<Cause> = found
        .into_iter()
        .map(|f| Cause {
            cause: f.cause.to_string(),
            ceiling: f.ceiling,
            share: None,
            text: f.text,
            confirmation: None,
        })
        .collect();
    let unexplained = apportion(e, &mut causes);
    Some((
        Diagnosis {
            efficiency: e,
            causes,
            unexplained,
        },
        cites,
    ))
}

/// Each measured cause's share of the gap (or the excess) of a point of efficiency `e`, in
/// the log of the efficiency (effects multiply), scaled down together where they explain more
/// than all of it; the largest share first, those without one after in their order. A cause
/// on the other side of the peak than the point has none. Returns the share unexplained.
fn apportion(e: f64, causes: &mut [Cause]) -> f64 {
    let above = e > 1.0;
    let raw: Vec<Option<f64>> = causes
        .iter()
        .map(|c| {
            c.ceiling
                .filter(|c| *c > 0.0 && (*c > 1.0) == above)
                .map(|c| c.ln() / e.ln())
        })
        .collect();
    let total: f64 = raw.iter().flatten().sum();
    let scale = if total > 1.0 { 1.0 / total } else { 1.0 };
    for (c, share) in causes.iter_mut().zip(raw) {
        c.share = share.map(|s| s * scale);
    }
    causes.sort_by(|a, b| {
        b.share
            .unwrap_or(-1.0)
            .partial_cmp(&a.share.unwrap_or(-1.0))
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    (1.0 - total * scale).clamp(0.0, 1.0)
}

/// What lifted `r` above its peak (its efficiency `e`, above 1) that the run shows: each
/// cause's ceiling is the height it alone lifts the point to.
fn lifts(r: &ResultRecord, e: f64, others: &Others, report: &Report) -> Vec<Found> {
    let mut out = Vec::new();
    if let Some(d) = r.params.disk()
        && d.io_mode == IoMode::Buffered
        && d.read_percent > 0
    {
        // The same point with O_DIRECT in the run: what the device gave it.
        let direct = others.direct_twin(r);
        let text = match direct {
            Some(de) => format!(
                "its reads went through the page cache (buffered), which served what it held from memory: the same point with O_DIRECT reached {:.1} %",
                de * 100.0
            ),
            None => "its reads went through the page cache (buffered), which serves what it holds from memory, not the device".into(),
        };
        out.push(Found {
            cause: "page-cache",
            ceiling: direct.map(|de| e / de),
            text,
            cites: direct.map_or(vec![], |de| vec![de * 100.0]),
        });
    }
    // Arrays in a cache, beside the same line's in memory: a cache level's rate.
    if let Some(level) = level_of(r, &report.system.caches)
        && let Some((m, me)) = others.in_memory(r, &report.system.caches)
    {
        out.push(Found {
            cause: "working-set",
            ceiling: Some(e / me),
            text: format!(
                "its arrays, {} a thread, fit in L{level}, which moves them faster than memory: at {} a thread, in memory, it reached {:.1} %",
                format_bytes_binary(per_thread(r).unwrap_or(0)),
                format_bytes_binary(per_thread(m).unwrap_or(0)),
                me * 100.0
            ),
            cites: vec![f64::from(level), me * 100.0],
        });
    }
    out
}

/// Every cause of `r`'s gap (its efficiency `e`) that the run shows.
fn causes(r: &ResultRecord, e: f64, others: &Others, report: &Report) -> Vec<Found> {
    let mut out = Vec::new();
    let cpu = &report.system.cpu;
    let input = |name: &str| {
        r.peak
            .as_ref()
            .and_then(|p| p.inputs.get(name))
            .map(|i| i.value)
            .filter(|v| v.is_finite() && *v > 0.0)
    };
    let threads = r.params.threads().max(1);
    // The instruction set a kernel, or a built-in dense solve's or multiply's micro-kernel, ran.
    let ran = r.params.cpu().and_then(|c| {
        c.kernel
            .as_ref()
            .map(|k| k.isa)
            .or(c.linalg.as_ref().and_then(|l| l.micro_kernel_isa))
    });
    if let Some(isa) = ran {
        let widest = cpu.isas.iter().copied().max_by_key(|i| i.width_bits());
        if let Some(w) = widest.filter(|w| w.width_bits() > isa.width_bits()) {
            // The peak's own vector width where it gives one (a core whose datapath is narrower
            // than its widest instructions reaches the same peak with narrower ones).
            let datapath = input("vector_width").unwrap_or(w.width_bits() as f64);
            let ceiling = (isa.width_bits() as f64 / datapath).min(1.0);
            out.push(Found {
                cause: "isa",
                ceiling: Some(ceiling),
                text: format!(
                    "it runs {} ({} bits) on a CPU with {} ({} bits)",
                    isa.name(),
                    isa.width_bits(),
                    w.name(),
                    w.width_bits()
                ),
                cites: vec![isa.width_bits() as f64, w.width_bits() as f64],
            });
        }
    }
    if let Some(k) = r.params.cpu().and_then(|c| c.kernel.as_ref())
        && let (Some(ghz), Some(one)) = (k.clock_ghz, cpu.measured_clock_ghz.get().copied())
        && ghz < 0.9 * one
    {
        // Against the clock the peak counts where it says, else one thread's.
        let ceiling = (ghz / input("clock").unwrap_or(one)).min(1.0);
        out.push(Found {
            cause: "clock",
            ceiling: Some(ceiling),
            text: format!(
                "its clock was {} GHz, below the {} GHz one thread reached",
                format_sig(ghz),
                format_sig(one)
            ),
            cites: vec![ghz, one],
        });
    }
    noise_causes(r, threads, report, &mut out);
    // The quota the point ran under; or, in a document that does not say, the machine's, where
    // it is tighter than the CPUs the process may use.
    let quota = r.params.cpu_quota().or(cpu
        .cgroup_cpu_quota
        .map(|q| q.cpus())
        .filter(|q| *q < threads.min(cpu.allowed_count()) as f64));
    if let Some(q) = quota
        && matches!(r.subsystem, Subsystem::Cpu | Subsystem::Mem)
        && q < threads as f64
    {
        let reach = 100.0 * q / threads as f64;
        out.push(Found {
            cause: "cpu-quota",
            ceiling: Some(q / threads as f64),
            text: format!(
                "this process's cgroup allows {q:.2} CPUs' worth of time for {}: at most {reach:.1} % of the peak is within its reach",
                crate::results::its_threads(threads)
            ),
            cites: vec![q, reach],
        });
    }
    // Threads taking turns on fewer CPUs than they are: a latency's time per operation counts
    // the others' turns (a peak counts the cores a rate's threads run on: there they cost
    // only their switches, and no ceiling is measured).
    let distinct = r.params.cpus().iter().collect::<HashSet<_>>().len();
    if r.params.cpu().is_some_and(|c| c.oversubscribed) || (distinct > 0 && threads > distinct) {
        let t = threads as f64;
        out.push(if r.metric == Metric::Latency && distinct > 0 {
            let d = distinct as f64;
            Found {
                cause: "oversubscription",
                ceiling: Some(d / t),
                text: format!(
                    "{t} threads took turns on {d} CPU{}: each thread's time per operation counts the others' turns",
                    if distinct == 1 { "" } else { "s" }
                ),
                cites: vec![t, d],
            }
        } else {
            Found {
                cause: "oversubscription",
                ceiling: None,
                text: format!("{t} threads share fewer cores"),
                cites: vec![t],
            }
        });
    }
    // A system BLAS that ran fewer threads than the point has (a single-threaded build).
    if let Some(used) = (r.params.cpu().and_then(|c| c.linalg.as_ref()))
        .and_then(|l| l.library_threads)
        .filter(|u| *u > 0 && *u < threads)
    {
        out.push(Found {
            cause: "workers",
            ceiling: Some(used as f64 / threads as f64),
            text: format!("the system BLAS ran {used} of the {threads} threads asked"),
            cites: vec![used as f64, threads as f64],
        });
    }
    io_causes(r, others, &mut out);
    let flight = others
        .flight
        .get(&(r.metric, r.unit, what(r, saturation::IN_FLIGHT)));
    out.extend(saturation::device_limit(
        r,
        e,
        flight.map_or(&[], Vec::as_slice),
    ));
    out.extend(saturation::cpu_bound(r));
    size_causes(r, e, others, report, &mut out);
    out.extend(numa::numa(r, e, report));
    out
}

/// What the point's noise shows: another process or the hypervisor taking the machine while
/// it ran.
fn noise_causes(r: &ResultRecord, threads: usize, report: &Report, out: &mut Vec<Found>) {
    let cpu = &report.system.cpu;
    // Another process or the hypervisor took the machine while it ran (its noise).
    if let Some(n) = r.noise.as_ref() {
        let online = f64::from(cpu.allowed_count().max(1) as u32);
        if let Some(others_cpus) = n
            .others_cpus
            .filter(|_| n.interference.iter().any(|c| c == "co-runner"))
        {
            // A CPU point runs as much as its threads got of their CPUs (this process's CPU
            // time over the window, per thread: what the others left it); a memory point shares
            // the memory bus with them as with as many threads of its own.
            let t = threads as f64;
            let ceiling = if r.subsystem == Subsystem::Mem {
                t / (t + others_cpus)
            } else {
                (n.own_cpus / t).min(1.0)
            };
            out.push(Found {
                cause: "co-runner",
                ceiling: Some(ceiling),
                text: format!(
                    "other processes kept {} CPUs busy while it ran",
                    format_sig(others_cpus)
                ),
                cites: vec![others_cpus],
            });
        }
        if let Some(steal) = n
            .steal_cpus
            .filter(|_| n.interference.iter().any(|c| c == "steal"))
        {
            out.push(Found {
                cause: "steal",
                ceiling: Some(1.0 - (steal / online).min(1.0)),
                text: format!(
                    "the hypervisor took {} CPUs' worth of its time (steal)",
                    format_sig(steal)
                ),
                cites: vec![steal],
            });
        }
    }
}

/// A disk point's I/O path and queue, a UDP stream's loss.
fn io_causes(r: &ResultRecord, others: &Others, out: &mut Vec<Found>) {
    if let Some(d) = r.params.disk() {
        if d.io_mode == IoMode::Buffered {
            out.push(Found {
                cause: "page-cache",
                ceiling: None,
                text: "its I/O went through the page cache (buffered)".into(),
                cites: vec![],
            });
        }
        let outstanding = (d.threads * d.iodepth) as f64;
        if outstanding <= 1.0 && r.metric != Metric::Latency {
            // Little's law: one I/O in flight at the point's own mean latency allows 1 / latency
            // I/Os a second, whatever the disk could do with more in flight.
            let latency = others
                .latencies
                .iter()
                .find(|x| {
                    x.metric == Metric::Latency
                        && x.workload == r.workload
                        && x.params.disk().is_some_and(|xd| same_point(xd, d))
                })
                .map(|x| base(x.unit, x.summary.mean))
                .filter(|l| l.is_finite() && *l > 0.0);
            let per_op = if r.unit == Unit::Iops {
                1.0
            } else {
                d.block_size_bytes as f64
            };
            let peak = r.peak.as_ref().map(|p| base(r.unit, p.value));
            let ceiling = latency
                .zip(peak.filter(|p| *p > 0.0))
                .map(|(l, peak)| (outstanding / l * per_op / peak).min(1.0));
            let text = match latency {
                Some(l) => format!(
                    "one I/O at a time (1 thread at queue depth 1) at a mean latency of {} µs: at most 1 / latency",
                    format_sig(l * 1e6)
                ),
                None => {
                    "one I/O at a time (1 thread at queue depth 1): its rate is 1 / latency".into()
                }
            };
            out.push(Found {
                cause: "queue-depth",
                ceiling,
                text,
                cites: latency.map_or(vec![outstanding], |l| vec![l * 1e6]),
            });
        }
    }
    if let Some(n) = r.params.net().filter(|n| n.protocol == Proto::Tcp)
        && r.metric == Metric::Throughput
        && let Some(w) = window(r, n)
    {
        out.push(w);
    }
    if let Some(n) = r.params.net().filter(|n| n.protocol == Proto::Udp) {
        let loss = others.loss.get(&(n.streams, n.message_size_bytes));
        if let Some(l) = loss.filter(|l| l.summary.mean > 0.0) {
            out.push(Found {
                cause: "loss",
                ceiling: Some(1.0 - (l.summary.mean / 100.0).min(1.0)),
                text: format!(
                    "{} % of its datagrams were lost",
                    format_sig(l.summary.mean)
                ),
                cites: vec![l.summary.mean],
            });
        }
    }
}

/// A cause that the same point with one thing otherwise shows, at `ratio` of its rate (the two
/// efficiencies' ratio, at most 1: its ceiling).
fn twin(cause: &'static str, ratio: f64, text: String, cites: Vec<f64>) -> Found {
    Found {
        cause,
        ceiling: Some(ratio.min(1.0)),
        text,
        cites,
    }
}

/// Whether two disk records are of one point: their params but what a latency record adds
/// (what its latency is).
fn same_point(a: &DiskParams, b: &DiskParams) -> bool {
    let bare = |p: &DiskParams| DiskParams {
        latency_definition: None,
        ..p.clone()
    };
    bare(a) == bare(b)
}

/// A TCP stream held back by its window: each stream carries at most one window a round trip.
/// Named where a window was asked (`--window`) or where TCP says the window or the send buffer
/// held the client's sender back half of its busy time or more; the window is the one the
/// receiver advertised (TCP_INFO on the client's socket), else the one asked, and the round
/// trip TCP's own of the connection, else the streams' measured ones.
fn window(r: &ResultRecord, n: &crate::results::params::NetParams) -> Option<Found> {
    let state = n.client_socket.as_deref().copied().unwrap_or_default();
    let asked = n.socket_options.as_ref().and_then(|o| o.window_bytes);
    let held = (state.window_limited.into_iter())
        .chain(state.send_buffer_limited)
        .reduce(f64::max);
    if asked.is_none() && held.is_none_or(|h| h < 0.5) {
        return None;
    }
    let w = match (state.peer_window_bytes, asked) {
        (Some(p), _) => p as f64,
        (None, Some(a)) => f64::from(a),
        (None, None) => return None,
    };
    let rtts: Vec<f64> = match state.rtt_us {
        Some(r) => vec![r],
        None => n.stream_rtt_us.clone(),
    };
    let rtts: Vec<f64> = rtts
        .into_iter()
        .filter(|x| x.is_finite() && *x > 0.0)
        .collect();
    if rtts.is_empty() {
        return None;
    }
    let rtt = rtts.iter().sum::<f64>() / rtts.len() as f64 * 1e-6;
    let peak = Some(base(r.unit, r.peak.as_ref()?.value)).filter(|p| *p > 0.0)?;
    let streams = f64::from(n.streams.max(1));
    let carried = streams * w * 8.0 / rtt;
    let bdp = peak * rtt / 8.0;
    let whose = match (state.peer_window_bytes, asked) {
        (Some(_), Some(a)) => format!(
            "the receiver's window of {} (--window {} asked)",
            crate::units::format_size(w as u64),
            crate::units::format_size(u64::from(a))
        ),
        (Some(_), None) => format!(
            "the receiver's window of {}",
            crate::units::format_size(w as u64)
        ),
        _ => format!("a window of {}", crate::units::format_size(w as u64)),
    };
    let held_words = match (state.window_limited, state.send_buffer_limited) {
        (Some(wl), Some(sl)) if wl.max(sl) >= 0.005 => format!(
            " (TCP held the sender back {:.0} % of its busy time by the receiver's window, {:.0} % by its send buffer)",
            100.0 * wl,
            100.0 * sl
        ),
        _ => String::new(),
    };
    Some(Found {
        cause: "window",
        ceiling: Some((carried / peak).min(1.0)),
        text: format!(
            "{whose} over a {} ms round trip carries at most {} Mbit/s{}{held_words}: the bandwidth-delay product of its peak is {}",
            format_sig(rtt * 1e3),
            format_sig(carried / 1e6),
            if streams > 1.0 {
                format!(" for its {streams} streams")
            } else {
                String::new()
            },
            crate::units::format_bytes_binary(bdp as u64)
        ),
        cites: vec![rtt * 1e3, carried / 1e6],
    })
}

/// A dense solve or multiply too small for its peak; fewer workers than the run's best point
/// of the same kind.
fn size_causes(r: &ResultRecord, e: f64, others: &Others, report: &Report, out: &mut Vec<Found>) {
    // A dense solve or multiply too small for the peak.
    if let Some(n) = r.params.cpu().and_then(|c| c.linalg.as_ref()).map(|l| l.n) {
        let why =
            "its O(N³) work does not amortise the O(N²) memory traffic and the threads' start-up";
        let sizes = others.other_sizes(r, n);
        let best = |keep: &dyn Fn(usize) -> bool| {
            (sizes.iter().copied())
                .filter(|(xn, _)| keep(*xn))
                .max_by(|a, b| a.1.total_cmp(&b.1))
        };
        let larger = best(&|xn| xn > n);
        if let Some((bn, be)) = larger.filter(|(_, be)| *be > e * FLAT) {
            let pct = be * 100.0;
            out.push(twin(
                "problem-size",
                e / be,
                format!("N = {n} is too small for the peak: N = {bn} reached {pct:.1} % ({why})"),
                vec![n as f64, bn as f64, pct],
            ));
        } else if n < SMALL_N {
            out.push(Found {
                cause: "problem-size",
                ceiling: None,
                text: format!("N = {n} is too small for the peak: {why}"),
                cites: vec![n as f64],
            });
        } else if larger.is_none()
            // A smaller N that did about as well: growing N did not help.
            && best(&|xn| xn < n).is_none_or(|(_, se)| se * FLAT < e)
            && let crate::workload::Workload::Linalg(w) = r.workload
            && let Some(bn) = w.larger_n(n, report.system.memory.available_or_assumed())
        {
            // No larger N in the run to tell, nor a smaller one as good: the suspect that
            // `--diagnose` measures.
            out.push(Found {
                cause: "problem-size",
                ceiling: None,
                text: format!(
                    "N = {n} may be too small for the peak ({why}): the run has no larger N to tell, and `peakbench cpu --diagnose` measures N = {bn}"
                ),
                cites: vec![n as f64, bn as f64],
            });
        }
    }
    // 4 KiB pages where huge ones did better: the TLB's reach.
    if pages_of(r) == Some(Pages::Small)
        && let Some(be) = others.on_huge_pages(r, e)
    {
        let pct = be * 100.0;
        out.push(twin(
            "pages",
            e / be,
            format!(
                "it ran on 4 KiB pages: the same point on transparent huge pages reached {pct:.1} % (fewer TLB misses)"
            ),
            vec![pct],
        ));
    }
    // Arrays too large for the cache level whose rate the peak is.
    if let Some((b, level, be)) = others.smaller_set(r, e, &report.system.caches) {
        let size = |x: &ResultRecord| format_bytes_binary(per_thread(x).unwrap_or(0));
        let own =
            level_of(r, &report.system.caches).map_or("memory".to_string(), |l| format!("L{l}"));
        let pct = be * 100.0;
        out.push(twin(
            "working-set",
            e / be,
            format!(
                "its arrays, {} a thread, do not fit in L{level} (they are in {own}): at {} a thread, which fit, it reached {pct:.1} %",
                size(r),
                size(b)
            ),
            vec![f64::from(level), pct],
        ));
    }
    // More threads than do their share: each ran slower than fewer did (CPU and memory).
    // (A dense solve's threads lose to its size first: `problem-size`.)
    if matches!(r.subsystem, Subsystem::Cpu | Subsystem::Mem)
        && r.params.cpu().is_none_or(|c| c.linalg.is_none())
        && let Some((b, ratio)) = others.fewer_faster(r)
        && !smt_sharing(r, b, report, out)
    {
        let (w, noun) = workers(r);
        let (bw, _) = workers(b);
        let alone = if bw == 1 {
            format!("1 {} reached alone", noun.trim_end_matches('s'))
        } else {
            format!("{bw} {noun} reached each")
        };
        out.push(Found {
            cause: "contention",
            ceiling: Some(ratio.min(1.0)),
            text: format!(
                "each of its {w} {noun} ran at {ratio:.2} × the rate {alone}: they share what fewer had to themselves (a core's other hardware thread, the memory bus, a co-runner)"
            ),
            cites: vec![ratio],
        });
    }
    // Fewer workers than the best point of the same kind, which did better: where the peak is
    // the device's (a disk, a link, the memory), not a CPU point's, whose peak counts the cores
    // its own threads run on (more threads raise that peak with them: one thread's 47 % beside
    // four threads' 93 % is no sign that one thread leaves its core idle).
    if r.subsystem != Subsystem::Cpu
        && let Some(b) = others.better(r, e)
    {
        let (w, noun) = workers(r);
        let (bw, _) = workers(b);
        let be = b.efficiency.unwrap_or(0.0);
        let few = if w == 1 {
            format!("1 {} does not fill it", noun.trim_end_matches('s'))
        } else {
            format!("{w} {noun} do not fill it")
        };
        out.push(Found {
            cause: "workers",
            ceiling: Some((e / be).min(1.0)),
            text: format!("{few}: {bw} {noun} reached {:.1} %", be * 100.0),
            cites: vec![be * 100.0],
        });
    }
}

/// Whether `r`'s threads share cores (two of its CPUs hardware threads of one core, by the
/// machine's topology) where `b`, with fewer threads on as many cores, ran each faster: then
/// the slower threads are the core's execution units shared between its hardware threads, not
/// a contention of unknown kind. A peak counts cores, not hardware threads, so what is a gap is
/// a core's rate below `b`'s (by more than [`FLAT`]): named `smt-sharing`, its ceiling that
/// ratio. An oversubscribed point's slower threads are its `oversubscription` (named already):
/// true, nothing added.
fn smt_sharing(r: &ResultRecord, b: &ResultRecord, report: &Report, out: &mut Vec<Found>) -> bool {
    let cores = |x: &ResultRecord| -> Option<(usize, usize)> {
        let cpus = &x.params.cpu()?.cpus;
        let logical = &report.system.cpu.logical;
        let mut distinct: Vec<(i64, i64)> = Vec::new();
        for cpu in cpus {
            let l = logical.iter().find(|l| l.cpu == *cpu)?;
            if !distinct.contains(&(l.package, l.core)) {
                distinct.push((l.package, l.core));
            }
        }
        Some((cpus.len(), distinct.len()))
    };
    // Threads taking turns on fewer CPUs than they are: `oversubscription` says so, and a
    // thread's share of a CPU is no contention.
    if r.params.cpu().is_some_and(|c| c.oversubscribed) {
        return true;
    }
    let (Some((threads, shared)), Some((bt, bc))) = (cores(r), cores(b)) else {
        return false;
    };
    // Its threads share cores where the faster ones did not.
    if shared == 0 || shared >= threads || bc < bt {
        return false;
    }
    let per_core = r.summary.mean / shared as f64 / (b.summary.mean / bc as f64);
    if per_core.is_finite() && per_core * FLAT < 1.0 {
        let alone = if bt == 1 {
            "1 thread alone on one".to_string()
        } else {
            format!("{bt} threads on {bc} cores")
        };
        out.push(Found {
            cause: "smt-sharing",
            ceiling: Some(per_core),
            text: format!(
                "its {threads} threads run on {shared} cores, hardware threads of each sharing its execution units: each core ran at {per_core:.2} × the rate of {alone}"
            ),
            cites: vec![per_core],
        });
    }
    true
}

/// `value` in `unit` in its base unit (seconds, bytes a second…): the findings read a report in
/// display units, the JSON exporter in base units.
fn base(unit: Unit, value: f64) -> f64 {
    crate::units::Conversion::to_base(unit).map_or(value, |c| c.apply(value))
}
