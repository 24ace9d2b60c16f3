//! `--sustain`: a repetition runs until its rate is steady (or for the time given at most), as
//! fio's `steadystate` with both of its criteria at once: over the last [`WINDOW`] intervals,
//! every interval within [`RANGE`] of their mean (fio's `iops:10%`) and the least-squares line
//! through them moving by [`SLOPE`] of the mean at most from the first to the last (fio's
//! `iops_slope`). A burst shorter than the window is seen through: the window cannot be steady
//! while it holds the burst's end.
//!
//! The repetition's threads share one [`Steady`]: each adds its work of an interval once it has
//! passed it, and the thread that completes an interval judges the window that ends there. Once
//! it is steady, each thread ends its repetition: a disk's at the end of the interval it is in,
//! a CPU kernel's or a memory pass's at the end of its call ([`Feeder`]).
//!
//! Used by disk, CPU, memory and network points alike; the intervals are
//! [`crate::measure::timeline::interval_of`] the longest time.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The intervals the rate must be steady over.
pub const WINDOW: usize = 5;

/// How far from the window's mean an interval may be.
pub const RANGE: f64 = 0.10;

/// How far the window's least-squares line may move, first interval to last, as a share of
/// its mean.
pub const SLOPE: f64 = 0.05;

/// Not steady yet.
const NOT_YET: u64 = u64::MAX;

/// The steady-state watch of one repetition's threads.
#[derive(Debug)]
pub struct Steady {
    threads: u32,
    bytes: Vec<AtomicU64>,
    reported: Vec<AtomicU32>,
    /// The last interval of the first steady window, [`NOT_YET`] before.
    steady_at: AtomicU64,
}

impl Steady {
    /// A watch of `intervals` intervals at most for `threads` threads.
    pub fn new(intervals: usize, threads: usize) -> Steady {
        Steady {
            threads: u32::try_from(threads.max(1)).unwrap_or(u32::MAX),
            bytes: (0..intervals).map(|_| AtomicU64::new(0)).collect(),
            reported: (0..intervals).map(|_| AtomicU32::new(0)).collect(),
            steady_at: AtomicU64::new(NOT_YET),
        }
    }

    /// A watch of repetitions of `longest` at most, in intervals of `interval`, for `threads`
    /// threads ([`crate::measure::timeline::MAX_INTERVALS`] at most).
    pub fn over(longest: Duration, interval: Duration, threads: usize) -> Steady {
        // The whole intervals of `longest` and a last partial one: a steady time is never
        // beyond `longest`.
        let intervals = longest.as_nanos().div_ceil(interval.as_nanos().max(1));
        Steady::new(
            usize::try_from(intervals)
                .unwrap_or(usize::MAX)
                .clamp(1, crate::measure::timeline::MAX_INTERVALS),
            threads,
        )
    }

    /// A round of the repetitions has ended (the watch's threads wait for the next): when it
    /// was steady, in seconds of intervals of `interval_s` (the end of its first steady window),
    /// goes to `times` if the round was `timed` (not a warm-up), and the watch is ready for the
    /// next round.
    pub fn round_ended(&self, timed: bool, interval_s: f64, times: &mut Vec<Option<f64>>) {
        if timed {
            times.push(self.steady_at().map(|at| (at + 1) as f64 * interval_s));
        }
        self.reset();
    }

    /// Ready for the next repetition.
    pub fn reset(&self) {
        for (b, r) in self.bytes.iter().zip(&self.reported) {
            b.store(0, Ordering::Relaxed);
            r.store(0, Ordering::Relaxed);
        }
        self.steady_at.store(NOT_YET, Ordering::Release);
    }

    /// A thread's `bytes` of interval `at`, which it has passed; the thread that reports it
    /// last judges the window that ends there.
    pub fn report(&self, at: usize, bytes: u64) {
        let (Some(b), Some(r)) = (self.bytes.get(at), self.reported.get(at)) else {
            return;
        };
        b.fetch_add(bytes, Ordering::Relaxed);
        if r.fetch_add(1, Ordering::AcqRel) + 1 == self.threads {
            self.judge(at);
        }
    }

    /// Marks the repetition steady at `at` where the window that ends there is steady (every
    /// thread has reported each of its intervals: a thread reports them in order).
    fn judge(&self, at: usize) {
        if at + 1 < WINDOW || self.steady_at().is_some() {
            return;
        }
        let window: Vec<f64> = self.bytes[at + 1 - WINDOW..=at]
            .iter()
            .map(|b| b.load(Ordering::Relaxed) as f64)
            .collect();
        if steady(&window) {
            let _ = self.steady_at.compare_exchange(
                NOT_YET,
                at as u64,
                Ordering::AcqRel,
                Ordering::Relaxed,
            );
        }
    }

    /// The last interval of the first steady window, if there was one.
    pub fn steady_at(&self) -> Option<usize> {
        match self.steady_at.load(Ordering::Acquire) {
            NOT_YET => None,
            at => usize::try_from(at).ok(),
        }
    }
}

/// Feeds one thread's calls (a CPU kernel's slices, a memory kernel's passes) to a [`Steady`]
/// watch: each call's work spread evenly over the intervals it spans (as
/// [`crate::measure::timeline::per_interval`] spreads it: calls as long as an interval make no
/// saw), each interval reported once a call ends past it.
pub struct Feeder<'a> {
    steady: &'a Steady,
    start: Instant,
    width: f64,
    /// Units of work the watch counts per unit of a call's work (bytes per pass, operations
    /// per iteration): the watch counts whole units.
    scale: f64,
    /// The interval not yet reported, and the work in it so far.
    at: usize,
    pending: f64,
}

impl<'a> Feeder<'a> {
    /// A thread's feeder of `steady`, its intervals of `interval` from `start`.
    pub fn new(steady: &'a Steady, start: Instant, interval: Duration, scale: f64) -> Feeder<'a> {
        Feeder {
            steady,
            start,
            width: interval.as_secs_f64().max(1e-9),
            scale: if scale.is_finite() && scale > 0.0 {
                scale
            } else {
                1.0
            },
            at: 0,
            pending: 0.0,
        }
    }

    /// A call from `a` to `b` that did `work`; whether the repetition is steady now.
    pub fn call(&mut self, a: Instant, b: Instant, work: f64) -> bool {
        let pos = |t: Instant| t.saturating_duration_since(self.start).as_secs_f64() / self.width;
        let (from, to) = (pos(a), pos(b));
        if work.is_finite() && work > 0.0 && to > from {
            let per = work * self.scale / (to - from);
            let mut k = from.floor() as usize;
            while (k as f64) < to {
                let share = per * (to.min(k as f64 + 1.0) - from.max(k as f64));
                self.pass(k);
                self.pending += share;
                k += 1;
            }
        }
        self.pass(to.floor() as usize);
        self.steady.steady_at().is_some()
    }

    /// Reports every interval before `upto`.
    fn pass(&mut self, upto: usize) {
        while self.at < upto && self.at < self.steady.bytes.len() {
            self.steady.report(
                self.at,
                self.pending.round().clamp(0.0, u64::MAX as f64) as u64,
            );
            self.pending = 0.0;
            self.at += 1;
        }
    }
}

/// The calls (a CPU kernel's slices, a memory point's marks) a repetition of `longest` in
/// intervals of `interval` is made in under a watch: `at_least`, and five an interval, so that a
/// thread ends within a fifth of an interval of its window being found steady.
pub fn calls(longest: Duration, interval: Duration, at_least: u64) -> u64 {
    let intervals = longest.as_nanos() / interval.as_nanos().max(1);
    let intervals = u64::try_from(intervals)
        .unwrap_or(u64::MAX)
        .min(crate::measure::timeline::MAX_INTERVALS as u64);
    at_least.max(5 * intervals)
}

/// Whether `window` (a figure per interval) is steady: each within [`RANGE`] of the mean, and
/// the least-squares line moving by [`SLOPE`] of the mean at most across it.
pub fn steady(window: &[f64]) -> bool {
    let n = window.len();
    if n < 2 || window.iter().any(|v| !v.is_finite()) {
        return false;
    }
    let mean = window.iter().sum::<f64>() / n as f64;
    if mean <= 0.0 {
        return false;
    }
    let within = window.iter().all(|v| (v - mean).abs() <= RANGE * mean);
    // The least-squares slope over x = 0..n.
    let xm = (n - 1) as f64 / 2.0;
    let (mut sxy, mut sxx) = (0.0, 0.0);
    for (i, v) in window.iter().enumerate() {
        let dx = i as f64 - xm;
        sxy += dx * (v - mean);
        sxx += dx * dx;
    }
    let moved = (sxy / sxx * (n - 1) as f64).abs();
    within && moved <= SLOPE * mean
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flat_window_is_steady_a_step_or_a_ramp_is_not() {
        assert!(steady(&[100.0, 104.0, 97.0, 101.0, 99.0]));
        // A burst's end in the window.
        assert!(!steady(&[1600.0, 50.0, 50.0, 50.0, 50.0]));
        // Each within 10 % of the mean, but climbing 12 % across it.
        assert!(!steady(&[94.0, 97.0, 100.0, 103.0, 106.0]));
        assert!(!steady(&[0.0; 5]));
        assert!(!steady(&[1.0, f64::NAN, 1.0, 1.0, 1.0]));
    }

    #[test]
    fn the_last_thread_to_pass_an_interval_judges_its_window() {
        let s = Steady::new(20, 2);
        // A burst for 3 intervals, then steady: the first window wholly after it ends at 7.
        let rate = |at: usize| if at < 3 { 1600 } else { 50 };
        for at in 0..12 {
            s.report(at, rate(at));
            if at <= 7 {
                assert_eq!(s.steady_at(), None, "one thread of two reported {at}");
            }
            s.report(at, rate(at));
            if at < 7 {
                assert_eq!(s.steady_at(), None, "{at}");
            }
        }
        assert_eq!(s.steady_at(), Some(7));
        s.reset();
        assert_eq!(s.steady_at(), None);
        // Beyond its intervals, nothing.
        s.report(20, 1);
        s.report(20, 1);
        assert_eq!(s.steady_at(), None);
    }

    /// Under a watch, five calls an interval at least: a thread ends within a fifth of an
    /// interval of the window being found steady, whatever the longest time.
    #[test]
    fn a_watched_repetition_is_made_in_five_calls_an_interval() {
        let s = |secs| Duration::from_secs(secs);
        assert_eq!(calls(s(10), Duration::from_millis(500), 100), 100);
        assert_eq!(calls(s(1000), s(1), 100), 5000);
        assert_eq!(calls(s(86_400), s(1), 100), 5 * 36_000);
        assert_eq!(calls(s(1), Duration::ZERO, 100), 5 * 36_000);
    }

    /// A thread's calls, each spread over the intervals it spans: calls of 0.4 interval at a
    /// steady rate make every interval the same (no saw of 2 and 3 calls), and a burst of
    /// 3 intervals is seen through as the disk's is.
    #[test]
    fn a_feeder_spreads_calls_over_intervals_and_stops_when_steady() {
        let t0 = Instant::now();
        let ms = |n: u64| t0 + Duration::from_millis(n);
        let s = Steady::new(40, 1);
        let mut f = Feeder::new(&s, t0, Duration::from_millis(100), 10.0);
        // 40 ms calls: 40 units each until 280 ms (a burst), 4 after.
        let mut steady_at = None;
        for c in 0..100u64 {
            let (a, b) = (ms(40 * c), ms(40 * (c + 1)));
            let work = if 40 * (c + 1) <= 280 { 40.0 } else { 4.0 };
            if f.call(a, b, work) {
                steady_at = Some(40 * (c + 1));
                break;
            }
        }
        // Intervals 3.. are wholly after the burst; the first steady window is 3..=7, judged
        // once a call ends at 800 ms.
        assert_eq!(s.steady_at(), Some(7));
        assert_eq!(steady_at, Some(800));
        assert_eq!(s.bytes[5].load(Ordering::Relaxed), 100, "4 × 10 per 40 ms");
        // Beyond its intervals, nothing happens.
        let mut g = Feeder::new(&s, t0, Duration::from_millis(100), f64::NAN);
        assert!(g.call(ms(0), ms(10_000), 1.0));
        // The round's end: its steady time (a timed round's only), and a watch anew.
        let mut times = Vec::new();
        s.round_ended(true, 0.1, &mut times);
        s.round_ended(false, 0.1, &mut times);
        assert_eq!(times, [Some(0.8)]);
        assert_eq!(s.steady_at(), None);
    }
}
