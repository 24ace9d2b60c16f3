//! A point's work per interval from the calls its threads made: each thread's calls as the
//! instant each ended and the work it did, spread over whole intervals of the repetition (each
//! call's work evenly over its span, so that calls as long as an interval do not make a saw).
//! The CPU's kernels run in slices ([`crate::bench::cpu`]); their ends are the marks.

use std::time::{Duration, Instant};

/// One thread's calls in a repetition: the instant it began (work 0), then each call's end and
/// its work.
pub type Marks = Vec<(Instant, f64)>;

/// Each thread's marks of each round: `[thread][round]`.
pub type RoundMarks = Vec<Vec<Marks>>;

/// The work of `threads` per interval of `interval` from `start`, `count` intervals: a call
/// from `a` to `b` adds to each interval the share of its work that falls in it.
pub fn per_interval(
    threads: &[Marks],
    start: Instant,
    interval: Duration,
    count: usize,
) -> Vec<f64> {
    let mut out = vec![0.0; count];
    let width = interval.as_secs_f64();
    if width <= 0.0 || count == 0 {
        return out;
    }
    let at = |t: Instant| t.saturating_duration_since(start).as_secs_f64() / width;
    for marks in threads {
        for pair in marks.windows(2) {
            let ((a, _), (b, work)) = (pair[0], pair[1]);
            let (from, to) = (at(a), at(b));
            if !work.is_finite() || to <= from {
                continue;
            }
            let per = work / (to - from);
            let first = from.floor() as usize;
            for (k, slot) in out.iter_mut().enumerate().skip(first) {
                let (lo, hi) = (from.max(k as f64), to.min(k as f64 + 1.0));
                if hi <= lo {
                    break;
                }
                *slot += per * (hi - lo);
            }
        }
    }
    out
}

/// The most intervals a repetition's series holds (10 hours of 1 s intervals).
pub const MAX_INTERVALS: usize = 36_000;

/// The length of the intervals of a repetition of `duration`: a twentieth of it, 10 ms to 1 s
/// (as a disk point's).
pub fn interval_of(duration: Duration) -> Duration {
    (duration / 20).clamp(Duration::from_millis(10), Duration::from_secs(1))
}

/// The whole intervals of `interval` in the span of `threads`' marks (earliest beginning to
/// latest end), and where it begins.
pub fn span(threads: &[Marks], interval: Duration) -> Option<(Instant, usize)> {
    let start = threads
        .iter()
        .filter_map(|m| m.first())
        .map(|m| m.0)
        .min()?;
    let end = threads.iter().filter_map(|m| m.last()).map(|m| m.0).max()?;
    let whole = end.saturating_duration_since(start).as_nanos() / interval.as_nanos().max(1);
    Some((
        start,
        usize::try_from(whole)
            .unwrap_or(usize::MAX)
            .min(MAX_INTERVALS),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_is_spread_over_the_intervals_it_spans() {
        let t0 = Instant::now();
        let ms = |n: u64| t0 + Duration::from_millis(n);
        // One thread: 30 units from 0 to 30 ms, 10 from 30 to 35 ms; another: 20 from 5 to 25.
        let threads = vec![
            vec![(t0, 0.0), (ms(30), 30.0), (ms(35), 10.0)],
            vec![(ms(5), 0.0), (ms(25), 20.0)],
        ];
        let (start, whole) = span(&threads, Duration::from_millis(10)).unwrap();
        assert_eq!((start, whole), (t0, 3));
        let v = per_interval(&threads, start, Duration::from_millis(10), whole);
        let want = [10.0 + 5.0, 10.0 + 10.0, 10.0 + 5.0];
        for (got, want) in v.iter().zip(want) {
            assert!((got - want).abs() < 1e-6, "{v:?}");
        }
        assert!(
            per_interval(&threads, start, Duration::ZERO, 3)
                .iter()
                .all(|x| *x == 0.0)
        );
        assert_eq!(span(&[], Duration::from_millis(10)), None);
    }
}
