//! The roofline: where a run has CPU floating-point peaks and memory bandwidths, the ceiling a
//! kernel of a given arithmetic intensity (FLOP per byte of memory traffic) can reach —
//! min(peak, bandwidth × intensity) — with the run's dense solves and multiplies and STREAM
//! kernels placed at their intensities.

use super::super::plot::{Axis, Chart, Detail, Plot, Scale, Series, Ticks};
use crate::results::{Metric, Report, ResultRecord, Subsystem, Unit};
use crate::sysinfo::Cache;
use crate::units::format_sig;
use crate::workload::cpu::CpuWorkload;
use crate::workload::linalg::LinalgWorkload;
use crate::workload::mem::MemWorkload;
use crate::workload::spec::Work;

/// A CPU ceiling: the workload (DP, SP) and its peak, GFLOP/s.
struct Ceiling {
    name: String,
    gflops: f64,
}

/// A memory bandwidth: what gave it, GB/s, and whether it is a cache level's (drawn under the
/// first ceiling only, so that the guides stay few).
struct Bandwidth {
    name: String,
    gbs: f64,
    cache: bool,
}

/// The roofline of `report` (in display units), or None where it lacks a floating-point peak
/// or a memory bandwidth, or has no point to place on it.
pub(super) fn roofline(report: &Report) -> Option<Chart> {
    let ceilings = ceilings(&report.results);
    let bandwidths = bandwidths(&report.results, &report.system.caches);
    let points = points(&report.results);
    if ceilings.is_empty() || bandwidths.is_empty() || points.is_empty() {
        return None;
    }
    // The roofs over the points' intensities (the axis spans the points), bent at each ridge.
    let x_lo = points
        .iter()
        .map(|p| p.points[0].0)
        .fold(f64::INFINITY, f64::min);
    let x_hi = points.iter().map(|p| p.points[0].0).fold(0.0, f64::max);
    let mut guides = Vec::new();
    for (k, c) in ceilings.iter().enumerate() {
        for b in bandwidths.iter().filter(|b| k == 0 || !b.cache) {
            let mut xs = intensities(x_lo, x_hi);
            let ridge = c.gflops / b.gbs;
            if ridge > x_lo && ridge < x_hi {
                xs.push(ridge);
                xs.sort_by(f64::total_cmp);
            }
            guides.push(Series {
                name: format!(
                    "{}: {} GFLOP/s, {}: {} GB/s",
                    c.name,
                    format_sig(c.gflops),
                    b.name,
                    format_sig(b.gbs)
                ),
                points: xs.iter().map(|&x| (x, (b.gbs * x).min(c.gflops))).collect(),
                details: Vec::new(),
            });
        }
    }
    Some(Chart {
        slug: "cpu-mem-roofline".into(),
        subsystem: Subsystem::Mem,
        title: "Roofline: GFLOP/s vs FLOP/byte".into(),
        note: "Dashed: the roof, min(peak, bandwidth × intensity), for each floating-point peak \
               and memory bandwidth of the run (measured bandwidth where the run has one). \
               Points: the run's kernels at their intensity — LINPACK 2/3·N³ FLOP over the \
               8·N² bytes of its matrix, DGEMM 2·N³ over 3 × 8·N², STREAM's kernels their \
               FLOP per byte moved."
            .into(),
        plot: Plot::Lines {
            x: Axis::new(
                "arithmetic intensity (FLOP/byte)",
                Scale::Log,
                Ticks::Number,
            ),
            y: Axis::new("GFLOP/s", Scale::Log, Ticks::Number),
            series: points,
            guides,
            markers: Vec::new(),
        },
    })
}

/// Intensities at steps of ×√2 from `lo` to `hi`, both included.
fn intensities(lo: f64, hi: f64) -> Vec<f64> {
    let mut out = Vec::new();
    let mut x = lo;
    while x < hi && out.len() < 200 {
        out.push(x);
        x *= std::f64::consts::SQRT_2;
    }
    out.push(hi);
    out
}

/// The run's FMA peaks of DP and SP at the most threads it measured, GFLOP/s.
fn ceilings(results: &[ResultRecord]) -> Vec<Ceiling> {
    let mut out: Vec<Ceiling> = Vec::new();
    for name in [CpuWorkload::Dp, CpuWorkload::Sp] {
        let best = results
            .iter()
            .filter(|r| r.workload == name)
            .filter(|r| r.metric == Metric::Throughput && r.unit == Unit::Gops)
            .filter_map(|r| Some((r.params.threads(), r.peak.as_ref()?.value)))
            .max_by_key(|(t, _)| *t);
        if let Some((threads, gflops)) = best {
            let s = if threads == 1 { "" } else { "s" };
            out.push(Ceiling {
                name: format!("{name} peak ({threads} thread{s})"),
                gflops,
            });
        }
    }
    out
}

/// The run's best measured bandwidth (a whole-array kernel's, at any thread count) in each
/// level its working sets fit — a cache level where the run swept the array size into it,
/// else memory — and the memory's theoretical peak where known, GB/s.
fn bandwidths(results: &[ResultRecord], caches: &[Cache]) -> Vec<Bandwidth> {
    let arrays: Vec<&ResultRecord> = results
        .iter()
        .filter(|r| {
            r.subsystem == Subsystem::Mem
                && r.metric == Metric::Throughput
                && r.unit == Unit::GBPerSec
                && matches!(r.workload.spec().work, Work::Arrays { .. })
        })
        .collect();
    let mut out = Vec::new();
    for (level, recs) in crate::report::group_by(&arrays, |r| {
        crate::report::bandwidth_levels::level_of(r, caches)
    }) {
        let best = recs
            .iter()
            .max_by(|a, b| a.summary.mean.total_cmp(&b.summary.mean))
            .expect("a group has a record");
        let threads = best.params.threads();
        let s = if threads == 1 { "" } else { "s" };
        out.push(Bandwidth {
            name: match level {
                Some(l) => format!("L{l} measured ({}, {threads} thread{s})", best.workload),
                None => format!("{} measured", best.workload),
            },
            gbs: best.summary.mean,
            cache: level.is_some(),
        });
    }
    // Memory first, then the caches from the slowest: the order of the roofs from the ground.
    out.sort_by(|a, b| a.cache.cmp(&b.cache).then(a.gbs.total_cmp(&b.gbs)));
    if let Some(peak) = arrays
        .iter()
        .filter_map(|r| r.peak.as_ref())
        .map(|p| p.value)
        .reduce(f64::max)
    {
        out.insert(
            out.iter().take_while(|b| !b.cache).count(),
            Bandwidth {
                name: "memory peak".into(),
                gbs: peak,
                cache: false,
            },
        );
    }
    out
}

/// The run's kernels at their arithmetic intensity: dense solves and multiplies (at their
/// order N), STREAM's SCALE, ADD, TRIAD and SUM; each a point of its own.
fn points(results: &[ResultRecord]) -> Vec<Series> {
    let mut out = Vec::new();
    for r in results.iter().filter(|r| r.metric == Metric::Throughput) {
        let Some((intensity, gflops)) = place(r) else {
            continue;
        };
        let name = crate::results::point::label(r);
        let tip = format!(
            "{name}\n{} FLOP/byte, {} GFLOP/s",
            format_sig(intensity),
            format_sig(gflops)
        );
        out.push(Series {
            name,
            points: vec![(intensity, gflops)],
            details: vec![Detail::at(intensity, gflops, tip)],
        });
    }
    out
}

/// A record's (intensity, GFLOP/s): LINPACK and DGEMM from their order N (SGEMM's single
/// precision is left to its own peak), STREAM kernels from their FLOP per byte.
fn place(r: &ResultRecord) -> Option<(f64, f64)> {
    let mean = r.summary.mean;
    match r.subsystem {
        Subsystem::Cpu if r.unit == Unit::Gops => {
            let l = r.params.cpu()?.linalg.as_ref()?;
            let n = l.n as f64;
            // The matrices each read once: the least traffic a solve or multiply can have.
            let matrices = match r.workload.linalg()? {
                LinalgWorkload::Linpack => 1.0,
                LinalgWorkload::Dgemm => 3.0,
                LinalgWorkload::Sgemm => return None,
            };
            Some((l.flops / (matrices * 8.0 * n * n), mean))
        }
        Subsystem::Mem if r.unit == Unit::GBPerSec => {
            // FLOP per element over the bytes per element STREAM counts.
            let w = r.workload.mem()?;
            let flops = match w {
                MemWorkload::Scale | MemWorkload::Add | MemWorkload::Sum => 1.0,
                MemWorkload::Triad => 2.0,
                _ => return None,
            };
            let (read, written) = w.traffic();
            let bytes = 8.0 * (read + written) as f64;
            Some((flops / bytes, mean * flops / bytes))
        }
        _ => None,
    }
}
