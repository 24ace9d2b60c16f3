//! A point's series per interval from its threads' marks ([`crate::measure::timeline`]): the
//! record's intervals (its last timed round) and its phases (every timed round back to back),
//! for the benchmarks whose kernels run in calls (CPU kernels in slices, memory passes).

use crate::measure::timeline::{self, Marks, RoundMarks};
use crate::results::ResultRecord;
use crate::runner::Repetition;
use std::time::Duration;

/// Sets `rec`'s intervals and phases from `marks[thread][round]` (the warm-up rounds first),
/// each call's work in units of `per_unit` of the record's base unit a second (an iteration's
/// operations, a pass's bytes).
pub fn timed(
    rec: &mut ResultRecord,
    marks: &RoundMarks,
    reps: Repetition,
    interval: Duration,
    per_unit: f64,
) {
    let secs = interval.as_secs_f64();
    let rounds: Vec<Vec<f64>> = (reps.warmup..reps.warmup + reps.repeat)
        .filter_map(|round| {
            let threads: Vec<Marks> = marks.iter().filter_map(|t| t.get(round).cloned()).collect();
            let (start, count) = timeline::span(&threads, interval)?;
            Some(
                timeline::per_interval(&threads, start, interval, count)
                    .into_iter()
                    .map(|units| units * per_unit / secs)
                    .collect(),
            )
        })
        .collect();
    if let Some(last) = rounds.last().filter(|r| r.len() >= 2) {
        rec.intervals = Some(crate::results::Intervals {
            interval_s: secs,
            values: last.clone(),
        });
    }
    rec.phases = crate::results::phases::of_rounds(&rounds, secs);
}

/// `rounds` of a point whose rounds end once steady (`--sustain`), each time scaled to the
/// work asked of a thread (`asked`, in the marks' units) from the work its marks show: a round
/// that did half the work in half the time reads as the whole in the whole, its rates as they
/// were.
pub fn scaled_to(
    rounds: crate::runner::Rounds,
    marks: &RoundMarks,
    reps: Repetition,
    asked: f64,
) -> crate::runner::Rounds {
    let done = |thread: usize, round: usize| -> f64 {
        marks
            .get(thread)
            .and_then(|t| t.get(reps.warmup + round))
            .map_or(0.0, |m| m.iter().map(|(_, w)| w).sum())
    };
    let scale = |t: Duration, done: f64, asked: f64| match done > 0.0 && done.is_finite() {
        true => t.mul_f64((asked / done).clamp(1e-9, 1e9)),
        false => t,
    };
    let threads = marks.len();
    crate::runner::Rounds {
        wall: (rounds.wall.iter().enumerate())
            .map(|(r, &t)| {
                let all: f64 = (0..threads).map(|i| done(i, r)).sum();
                scale(t, all, asked * threads as f64)
            })
            .collect(),
        threads: (rounds.threads.iter().enumerate())
            .map(|(i, ts)| {
                (ts.iter().enumerate())
                    .map(|(r, &t)| scale(t, done(i, r), asked))
                    .collect()
            })
            .collect(),
    }
}
