//! The run's other points that a point's causes are measured against (its twins: the same
//! point with one thing otherwise), indexed once per subsystem.

use super::{AT_PEAK, FLAT, IO_MODE, PAGES, WORKERS, pages_of, saturation, what, workers};
use crate::report::bandwidth_levels::{ALONG, level_of, per_thread};
use crate::results::kinds::Pages;
use crate::results::params::IoMode;
use crate::results::{Metric, ResultRecord, Unit};
use std::collections::HashMap;

/// What [`diagnose`](super::diagnose) looks up among a subsystem's other points, indexed once: each UDP loss
/// figure by streams and message size, and the points of each kind with their workers and
/// efficiencies.
pub(in crate::report) struct Others<'a> {
    /// The first loss record of each (streams, message size).
    pub(super) loss: HashMap<(u32, u32), &'a ResultRecord>,
    /// Per (metric, unit, point without its workers): its points with an efficiency, by
    /// workers from the most; with each, the best of them and those before it.
    kinds: HashMap<OfKind, Vec<Ranked<'a>>>,
    /// The dense solves and multiplies (points with an N).
    solves: Vec<&'a ResultRecord>,
    /// Per kind, its rates' points with their workers and rate per worker (all of them, an
    /// efficiency or not).
    rates: HashMap<OfKind, Vec<(usize, f64, &'a ResultRecord)>>,
    /// The latency records (a disk point's, for Little's law).
    pub(super) latencies: Vec<&'a ResultRecord>,
    /// Per (metric, unit, point without its working set), the memory bandwidth points with
    /// an efficiency: a staircase's line.
    sets: HashMap<OfKind, Vec<&'a ResultRecord>>,
    /// Per (metric, unit, point without its I/O mode), the efficiencies of the disk points
    /// with O_DIRECT.
    direct: HashMap<OfKind, Vec<f64>>,
    /// Per (metric, unit, point without its pages), the efficiencies of the memory points on
    /// transparent huge pages.
    huge: HashMap<OfKind, Vec<f64>>,
    /// Per (metric, unit, point without what it keeps in flight), the disk and network rates
    /// with an efficiency: their I/Os or streams in flight and efficiency.
    pub(super) flight: HashMap<OfKind, Vec<(usize, f64)>>,
}

/// The kind of a point: its metric, unit and the point in words without its workers.
type OfKind = (Metric, Unit, String);

/// A point of a kind with an efficiency: its workers, its efficiency, its place in the run's
/// order and its record.
type Candidate<'a> = (usize, f64, usize, &'a ResultRecord);

/// A point of [`Others::kinds`]: its workers, and the point of best efficiency among those
/// with as many workers or more (ties go to the last in the run's order, as
/// [`Iterator::max_by`] takes them).
struct Ranked<'a> {
    workers: usize,
    best: (f64, usize, &'a ResultRecord),
}

impl<'a> Others<'a> {
    /// The index of `recs`, less the points `--diagnose` measured again: a cause's ceiling is
    /// what the run measured before, which a re-run then confirms or not ([`confirm`](super::confirm)).
    pub(in crate::report) fn of(recs: &[&'a ResultRecord]) -> Others<'a> {
        let recs: Vec<&'a ResultRecord> = (recs.iter().copied())
            .filter(|x| x.rerun.is_none())
            .collect();
        let mut loss = HashMap::new();
        for x in recs.iter().filter(|x| x.metric == Metric::Loss) {
            if let Some(m) = x.params.net() {
                loss.entry((m.streams, m.message_size_bytes)).or_insert(*x);
            }
        }
        let mut kinds: HashMap<OfKind, Vec<Candidate>> = HashMap::new();
        for (i, x) in recs.iter().enumerate() {
            // A NaN efficiency is above no other: its point is never the better one.
            if let Some(e) = x.efficiency.filter(|e| !e.is_nan()) {
                kinds
                    .entry((x.metric, x.unit, what(x, WORKERS)))
                    .or_default()
                    .push((workers(x).0, e, i, x));
            }
        }
        let kinds = kinds
            .into_iter()
            .map(|(k, mut points)| {
                points.sort_by_key(|p| std::cmp::Reverse(p.0));
                let mut best: Option<(f64, usize, &ResultRecord)> = None;
                let ranked = points
                    .into_iter()
                    .map(|(workers, e, i, x)| {
                        let better = best.is_none_or(|(be, bi, _)| {
                            e.total_cmp(&be).then(i.cmp(&bi)) == std::cmp::Ordering::Greater
                        });
                        if better {
                            best = Some((e, i, x));
                        }
                        Ranked {
                            workers,
                            best: best.unwrap_or((e, i, x)),
                        }
                    })
                    .collect();
                (k, ranked)
            })
            .collect();
        let solves = (recs.iter().copied())
            .filter(|x| x.params.cpu().is_some_and(|c| c.linalg.is_some()))
            .collect();
        let mut rates: HashMap<OfKind, Vec<(usize, f64, &ResultRecord)>> = HashMap::new();
        for x in recs.iter().filter(|x| !x.metric.lower_is_better()) {
            let w = workers(x).0.max(1);
            if x.summary.mean > 0.0 {
                rates
                    .entry((x.metric, x.unit, what(x, WORKERS)))
                    .or_default()
                    .push((w, x.summary.mean / w as f64, *x));
            }
        }
        let latencies = (recs.iter().copied())
            .filter(|x| x.metric == Metric::Latency)
            .collect();
        let mut sets: HashMap<OfKind, Vec<&ResultRecord>> = HashMap::new();
        for x in recs.iter().filter(|x| per_thread(x).is_some()) {
            if x.efficiency.is_some_and(|e| e > 0.0) {
                sets.entry((x.metric, x.unit, what(x, ALONG)))
                    .or_default()
                    .push(*x);
            }
        }
        let mut huge: HashMap<OfKind, Vec<f64>> = HashMap::new();
        for x in recs.iter() {
            if let (Some(Pages::Thp), Some(e)) = (pages_of(x), x.efficiency.filter(|e| *e > 0.0)) {
                huge.entry((x.metric, x.unit, what(x, PAGES)))
                    .or_default()
                    .push(e);
            }
        }
        let mut direct: HashMap<OfKind, Vec<f64>> = HashMap::new();
        for x in recs.iter() {
            if let (Some(d), Some(e)) = (x.params.disk(), x.efficiency)
                && d.io_mode == IoMode::Direct
                && e > 0.0
            {
                direct
                    .entry((x.metric, x.unit, what(x, IO_MODE)))
                    .or_default()
                    .push(e);
            }
        }
        let mut flight: HashMap<OfKind, Vec<(usize, f64)>> = HashMap::new();
        for x in recs.iter() {
            if let (Some(n), Some(e)) =
                (saturation::in_flight(x), x.efficiency.filter(|e| *e > 0.0))
            {
                flight
                    .entry((x.metric, x.unit, what(x, saturation::IN_FLIGHT)))
                    .or_default()
                    .push((n, e));
            }
        }
        Others {
            loss,
            kinds,
            solves,
            rates,
            latencies,
            sets,
            direct,
            huge,
            flight,
        }
    }

    /// The dense solves or multiplies of `r`'s kind (the same workload, threads and engine)
    /// at another N than `n` (`r`'s): each one's N and efficiency.
    pub(super) fn other_sizes(&self, r: &ResultRecord, n: usize) -> Vec<(usize, f64)> {
        let kind = what(r, &["n"]);
        self.solves
            .iter()
            .filter(|x| x.metric == r.metric && x.unit == r.unit && what(x, &["n"]) == kind)
            .filter_map(|x| {
                let xn = x.params.cpu()?.linalg.as_ref()?.n;
                let xe = x.efficiency.filter(|xe| !xe.is_nan())?;
                (xn != n).then_some((xn, xe))
            })
            .collect()
    }

    /// The point of `r`'s kind with fewer workers whose rate per worker is the highest, where
    /// `r`'s own per worker is below it by more than [`FLAT`]: that point and `r`'s per-worker
    /// rate over its (a rate's points only).
    pub(super) fn fewer_faster(&self, r: &ResultRecord) -> Option<(&'a ResultRecord, f64)> {
        let w = workers(r).0;
        if r.metric.lower_is_better() || r.summary.mean.is_nan() || r.summary.mean <= 0.0 || w < 2 {
            return None;
        }
        let (_, rate, best) = self
            .rates
            .get(&(r.metric, r.unit, what(r, WORKERS)))?
            .iter()
            .filter(|(xw, _, _)| *xw < w)
            .max_by(|a, b| a.1.total_cmp(&b.1))?;
        let ratio = r.summary.mean / w as f64 / rate;
        (ratio * FLAT < 1.0).then_some((*best, ratio))
    }

    /// The bandwidth point of `r`'s line with a smaller working set that fit in a faster
    /// level of `caches` than `r`'s arrays do and reached the peak where `r` does not (above
    /// `e` × [`FLAT`], at most [`AT_PEAK`]: the peak is then that level's, not the memory's
    /// that caches surpass), the best of them: it, its level and its efficiency.
    pub(super) fn smaller_set(
        &self,
        r: &ResultRecord,
        e: f64,
        caches: &[crate::sysinfo::Cache],
    ) -> Option<(&'a ResultRecord, u32, f64)> {
        let ws = per_thread(r)?;
        // Memory is below every cache level.
        let own = level_of(r, caches).unwrap_or(u32::MAX);
        self.sets
            .get(&(r.metric, r.unit, what(r, ALONG)))?
            .iter()
            .filter(|x| per_thread(x).is_some_and(|xw| xw < ws))
            .filter_map(|x| {
                let level = level_of(x, caches).filter(|l| *l < own)?;
                let xe = x.efficiency.filter(|xe| *xe > e * FLAT && *xe <= AT_PEAK)?;
                Some((*x, level, xe))
            })
            .max_by(|a, b| a.2.total_cmp(&b.2))
    }

    /// The best efficiency of `r`'s point on transparent huge pages, where it is above `e` ×
    /// [`FLAT`].
    pub(super) fn on_huge_pages(&self, r: &ResultRecord, e: f64) -> Option<f64> {
        (self.huge.get(&(r.metric, r.unit, what(r, PAGES)))?.iter())
            .copied()
            .reduce(f64::max)
            .filter(|be| *be > e * FLAT)
    }

    /// The mean efficiency of `r`'s point with O_DIRECT (the same point but its I/O mode).
    pub(super) fn direct_twin(&self, r: &ResultRecord) -> Option<f64> {
        let twins = self.direct.get(&(r.metric, r.unit, what(r, IO_MODE)))?;
        (!twins.is_empty()).then(|| twins.iter().sum::<f64>() / twins.len() as f64)
    }

    /// The bandwidth point of `r`'s line whose arrays are in memory (they fit in no cache
    /// level), the largest working set: it and its efficiency.
    pub(super) fn in_memory(
        &self,
        r: &ResultRecord,
        caches: &[crate::sysinfo::Cache],
    ) -> Option<(&'a ResultRecord, f64)> {
        self.sets
            .get(&(r.metric, r.unit, what(r, ALONG)))?
            .iter()
            .filter(|x| level_of(x, caches).is_none())
            .max_by_key(|x| per_thread(x))
            .and_then(|x| Some((*x, x.efficiency.filter(|e| *e > 0.0)?)))
    }

    /// The point of `r`'s kind with more workers than `r` and the best efficiency, where it is
    /// above `e` × [`FLAT`].
    pub(super) fn better(&self, r: &ResultRecord, e: f64) -> Option<&'a ResultRecord> {
        let ranked = self.kinds.get(&(r.metric, r.unit, what(r, WORKERS)))?;
        let w = workers(r).0;
        // Those with more workers come first.
        let more = ranked.partition_point(|p| p.workers > w);
        let (be, _, b) = ranked[..more].last()?.best;
        (be > e * FLAT).then_some(b)
    }
}
