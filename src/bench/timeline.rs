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
    let series: Vec<f64> = rounds.into_iter().flatten().collect();
    rec.phases = crate::results::phases::of(&series, secs);
}
