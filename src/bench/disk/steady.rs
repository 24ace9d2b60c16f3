//! `--sustain`: a repetition runs until its rate is steady (or for the time given at most), as
//! fio's `steadystate` with both of its criteria at once: over the last [`WINDOW`] intervals,
//! every interval within [`RANGE`] of their mean (fio's `iops:10%`) and the least-squares line
//! through them moving by [`SLOPE`] of the mean at most from the first to the last (fio's
//! `iops_slope`). A burst shorter than the window is seen through: the window cannot be steady
//! while it holds the burst's end.
//!
//! The repetition's threads share one [`Steady`]: each adds its bytes of an interval once it has
//! passed it, and the thread that completes an interval judges the window that ends there. Once
//! it is steady, each thread ends its repetition at the end of the interval it is in.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

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
    pub(super) fn report(&self, at: usize, bytes: u64) {
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
}
