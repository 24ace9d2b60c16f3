//! A point's phases: the levels its figure went through interval by interval, over all its
//! repetitions back to back (docs/json-schema.md, `phases`): a disk's or a link's burst that
//! ends, a throttle that starts, a slow start. A steady point has none.
//!
//! The levels are found by [`crate::measure::levels`] with [`SETTINGS`]: a phase is 3 intervals
//! and a second ([`MIN_PHASE_S`]) at least and differs from its neighbours by 25 % at least, 5
//! times the series' noise apart. A
//! **burst** is a first phase 1.5 times as fast as every later one or more (a token bucket's
//! credit spent) that ends inside a repetition, not where the next one begins
//! ([`Phase::between_repetitions`]): what the machine keeps is the last phase.

use crate::measure::levels::{Settings, levels};
use crate::measure::stats::nan_as_null;
use serde::{Deserialize, Serialize};

/// How a point's series is cut into phases (`min_len` the least: a phase also lasts
/// [`MIN_PHASE_S`]).
pub const SETTINGS: Settings = Settings {
    min_len: 3,
    z: 5.0,
    min_shift: 0.25,
    max_levels: 4,
};

/// The shortest phase, in seconds: a credit or a throttle worth naming lasts seconds; what
/// changes within a second (a write-back cache filling, the first I/Os' ramp) is no phase.
pub const MIN_PHASE_S: f64 = 1.0;

/// How much faster than every later phase a first phase is to be a burst.
pub const BURST_RATIO: f64 = 1.5;

/// One phase of a point: from `start_s` to `end_s` seconds of its measured time (the
/// repetitions' measured windows back to back, their warm-ups left out), at `value` (the median
/// of its intervals, in the record's unit).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Phase {
    pub start_s: f64,
    pub end_s: f64,
    #[serde(deserialize_with = "nan_as_null::number")]
    pub value: f64,
    /// It began where a repetition did (within an interval): the figure changed from one
    /// repetition to the next, which a repetition's new start does by itself (its threads placed
    /// again, its connection opened again, a neighbour on the host come or gone). No burst ends
    /// there; absent (false) otherwise.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub between_repetitions: bool,
}

impl Phase {
    /// A phase from `start_s` to `end_s` at `value`, within a repetition.
    pub fn new(start_s: f64, end_s: f64, value: f64) -> Phase {
        Phase {
            start_s,
            end_s,
            value,
            between_repetitions: false,
        }
    }
}

/// `--sustain`: each repetition ran until its figure was steady ([`crate::measure::steady`]),
/// `max_s` at most (docs/json-schema.md, `sustain`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Sustain {
    /// The longest a repetition could run, in seconds.
    pub max_s: f64,
    /// When each timed repetition was steady, in seconds of its measured time (the end of its
    /// first steady window, where it ended); `null` for one that never was.
    pub steady_s: Vec<Option<f64>>,
}

impl Sustain {
    /// Whether it is as a run of `reps` repetitions makes it: a finite positive longest time,
    /// one steady time a repetition at most, each within the longest (what a document read from
    /// elsewhere must be to be kept).
    pub fn plausible(&self, reps: usize) -> bool {
        self.max_s.is_finite()
            && self.max_s > 0.0
            && self.steady_s.len() <= reps
            && self
                .steady_s
                .iter()
                .flatten()
                .all(|t| t.is_finite() && *t >= 0.0 && *t <= self.max_s)
    }

    /// The repetitions that ran to the longest time without being steady.
    pub fn never(&self) -> usize {
        self.steady_s.iter().filter(|s| s.is_none()).count()
    }
}

/// The phases of `series` (a figure per interval of `interval_s` seconds), None where it keeps
/// one level (or is too short to tell).
pub fn of(series: &[f64], interval_s: f64) -> Option<Vec<Phase>> {
    if interval_s.is_nan() || interval_s <= 0.0 || series.iter().any(|v| !v.is_finite()) {
        return None;
    }
    let settings = Settings {
        min_len: SETTINGS
            .min_len
            .max((MIN_PHASE_S / interval_s).ceil().min(1e6) as usize),
        ..SETTINGS
    };
    let found = levels(series, &settings);
    (found.len() >= 2).then(|| timed(&found, interval_s))
}

/// The phases of a point's repetitions back to back (`rounds`, each a figure per interval of
/// `interval_s` seconds), each that began within an interval of where a repetition began
/// marked [`Phase::between_repetitions`].
pub fn of_rounds(rounds: &[Vec<f64>], interval_s: f64) -> Option<Vec<Phase>> {
    let series: Vec<f64> = rounds.iter().flatten().copied().collect();
    let mut phases = of(&series, interval_s)?;
    let starts: Vec<usize> = rounds
        .iter()
        .scan(0, |at, r| {
            *at += r.len();
            Some(*at)
        })
        .collect();
    for p in phases.iter_mut().skip(1) {
        let at = (p.start_s / interval_s).round() as usize;
        p.between_repetitions = starts[..starts.len().saturating_sub(1)]
            .iter()
            .any(|&s| s.abs_diff(at) <= 1);
    }
    Some(phases)
}

/// `levels` of a series of `interval_s`-second intervals as phases.
fn timed(levels: &[crate::measure::levels::Level], interval_s: f64) -> Vec<Phase> {
    levels
        .iter()
        .map(|l| {
            Phase::new(
                l.start as f64 * interval_s,
                l.end as f64 * interval_s,
                l.median,
            )
        })
        .collect()
}

/// Whether `phases` are as [`of`] makes them: 2 to [`SETTINGS`]' most, one after the other in
/// time, every figure finite (what a document read from elsewhere must be to be kept).
pub fn plausible(phases: &[Phase]) -> bool {
    (2..=SETTINGS.max_levels).contains(&phases.len())
        && phases
            .iter()
            .all(|p| p.value.is_finite() && p.start_s.is_finite() && p.start_s <= p.end_s)
        && phases.windows(2).all(|w| w[0].end_s <= w[1].start_s)
}

/// The burst of `phases`, where the first is [`BURST_RATIO`] times as fast as every later one
/// and ends within a repetition (one that ends where the next repetition begins is no burst:
/// [`Phase::between_repetitions`]): (the burst, the phase the point settled to, its last).
pub fn burst(phases: &[Phase]) -> Option<(&Phase, &Phase)> {
    let (first, rest) = phases.split_first()?;
    let last = rest.last()?;
    (!rest[0].between_repetitions && rest.iter().all(|p| first.value >= BURST_RATIO * p.value))
        .then_some((first, last))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A level that changes where a repetition begins is no burst (a new start moves a figure by
    /// itself: the loopback's threads placed apart, then together, read 42 then 21.5 Gbit/s);
    /// one that changes inside a repetition is, whichever repetition it is in.
    #[test]
    fn a_level_that_changes_between_repetitions_is_no_burst() {
        let round = |parts: &[(usize, f64)]| series(parts);
        let between = [
            round(&[(20, 4e10)]),
            round(&[(20, 4e10)]),
            round(&[(20, 2e10)]),
        ];
        let p = of_rounds(&between, 0.2).unwrap();
        assert_eq!(p.len(), 2, "{p:?}");
        assert!(p[1].between_repetitions && !p[0].between_repetitions);
        assert_eq!(burst(&p), None);
        let within = [
            round(&[(20, 4e10)]),
            round(&[(7, 4e10), (13, 2e10)]),
            round(&[(20, 2e10)]),
        ];
        let p = of_rounds(&within, 0.2).unwrap();
        assert!(!p[1].between_repetitions, "{p:?}");
        assert!(burst(&p).is_some());
        // One repetition: no boundary inside it.
        let one = [round(&[(10, 4e10), (30, 2e10)])];
        assert!(burst(&of_rounds(&one, 0.2).unwrap()).is_some());
    }

    fn series(parts: &[(usize, f64)]) -> Vec<f64> {
        // ±1 % of wobble, in a fixed pattern.
        let wobble = [1.0, 1.01, 0.99, 1.005, 0.995];
        parts
            .iter()
            .flat_map(|&(n, v)| std::iter::repeat_n(v, n))
            .enumerate()
            .map(|(i, v)| v * wobble[i % wobble.len()])
            .collect()
    }

    #[test]
    fn a_burst_is_its_volume_and_the_rate_that_follows() {
        // 3,000 IOPS for 31 s of 1 s intervals, then 100.
        let p = of(&series(&[(31, 3000.0), (40, 100.0)]), 1.0).unwrap();
        assert_eq!(p.len(), 2);
        let (b, then) = burst(&p).unwrap();
        assert_eq!((b.start_s, b.end_s, then.start_s), (0.0, 31.0, 31.0));
        assert!((b.value - 3000.0).abs() < 30.0 && (then.value - 100.0).abs() < 1.0);
    }

    #[test]
    fn a_steady_point_and_a_small_wobble_have_no_phases() {
        assert_eq!(of(&series(&[(60, 500.0)]), 0.1), None);
        // Faster for 0.7 s of 1 s: under a second, no phase (a cache filling).
        assert_eq!(of(&series(&[(7, 3000.0), (3, 1000.0)]), 0.1), None);
        // 15 % lower for a while: under the 25 % a phase needs.
        assert_eq!(of(&series(&[(20, 500.0), (20, 425.0)]), 0.1), None);
        assert_eq!(of(&[], 0.1), None);
        assert_eq!(of(&[1.0, f64::NAN, 1.0], 0.1), None);
    }

    #[test]
    fn a_slow_start_and_a_dip_are_phases_but_not_bursts() {
        let start = of(&series(&[(5, 100.0), (40, 500.0)]), 0.5).unwrap();
        assert!(burst(&start).is_none(), "{start:?}");
        // Fast, slow, fast again: the first is not faster than the last.
        let dip = of(&series(&[(10, 500.0), (10, 200.0), (10, 500.0)]), 0.5).unwrap();
        assert_eq!(dip.len(), 3);
        assert!(burst(&dip).is_none(), "{dip:?}");
        // Only 30 % faster at first: a phase, not a burst.
        let mild = of(&series(&[(10, 700.0), (20, 500.0)]), 0.5).unwrap();
        assert!(burst(&mild).is_none(), "{mild:?}");
    }
}

#[cfg(test)]
mod attacks {
    /// A document's phases are kept only as a measurement makes them: 100,000 of them, a
    /// figure that is not a number, or phases out of order are dropped as the record is read.
    #[test]
    fn a_documents_phases_are_kept_only_when_plausible() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/history");
        let mut doc: serde_json::Value =
            serde_json::from_slice(&std::fs::read(dir.join("quick.json")).unwrap()).unwrap();
        doc.as_object_mut().unwrap().remove("sha256");
        let phase = |a: f64, b: f64, v: serde_json::Value| serde_json::json!({"start_s": a, "end_s": b, "value": v});
        let cases = [
            (
                vec![phase(0.0, 3.0, 9e8.into()), phase(3.0, 8.0, 2e8.into())],
                true,
            ),
            (
                (0..100_000)
                    .map(|i| phase(i as f64, i as f64 + 1.0, 1.0.into()))
                    .collect(),
                false,
            ),
            (
                vec![
                    phase(0.0, 3.0, serde_json::Value::Null),
                    phase(3.0, 8.0, 2e8.into()),
                ],
                false,
            ),
            (
                vec![phase(3.0, 8.0, 9e8.into()), phase(0.0, 3.0, 2e8.into())],
                false,
            ),
            (vec![phase(0.0, 8.0, 9e8.into())], false),
        ];
        for (phases, kept) in cases {
            doc["results"][0]["phases"] = serde_json::Value::Array(phases);
            let r = crate::results::Report::from_json(&serde_json::to_vec(&doc).unwrap()).unwrap();
            assert_eq!(r.results[0].phases.is_some(), kept);
        }
    }
    /// A document's `--sustain` steady times are kept only as a run makes them: no more than
    /// its repetitions, each a finite time within the repetition's longest, the longest finite
    /// and above 0; those of the builds of 2026-11-29 (in a disk point's parameters) likewise.
    #[test]
    fn a_documents_steady_times_are_kept_only_when_plausible() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/history");
        let mut doc: serde_json::Value =
            serde_json::from_slice(&std::fs::read(dir.join("quick.json")).unwrap()).unwrap();
        doc.as_object_mut().unwrap().remove("sha256");
        let at = doc["results"]
            .as_array()
            .unwrap()
            .iter()
            .position(|r| r["subsystem"] == "disk")
            .unwrap();
        let reps = doc["results"][at]["samples"].as_array().unwrap().len();
        let runtime = doc["results"][at]["params"]["runtime_s"].as_f64().unwrap();
        let cases = [
            (runtime, serde_json::json!([runtime / 2.0, null]), reps >= 2),
            (
                runtime,
                serde_json::json!(vec![runtime / 2.0; 100_000]),
                false,
            ),
            (runtime, serde_json::json!([runtime * 10.0]), false),
            (runtime, serde_json::json!([-1.0]), false),
            (runtime, serde_json::json!(["x"]), false),
            (-1.0, serde_json::json!([]), false),
            (1e308 * 10.0, serde_json::json!([1.0]), false),
        ];
        for legacy in [false, true] {
            for (max, steady, kept) in &cases {
                let mut doc = doc.clone();
                let rec = &mut doc["results"][at];
                if legacy {
                    if *max != runtime {
                        continue;
                    }
                    rec["params"]["steady_s"] = steady.clone();
                } else {
                    rec["sustain"] = serde_json::json!({"max_s": max, "steady_s": steady});
                }
                match crate::results::Report::from_json(&serde_json::to_vec(&doc).unwrap()) {
                    Ok(r) => {
                        let rec = &r.results[at];
                        assert_eq!(rec.sustain.is_some(), *kept, "{legacy} {max} {steady}");
                        assert!(rec.params.disk().unwrap().steady_s.is_none());
                        if legacy && *kept {
                            // Written back where a run writes it.
                            let out = serde_json::to_value(rec).unwrap();
                            assert!(out["params"].get("steady_s").is_none());
                            assert_eq!(out["sustain"]["max_s"], runtime);
                        }
                    }
                    // Not a number: the document is refused, as any field of the wrong type.
                    Err(_) => assert!(!kept && (steady[0].is_string() || max.is_infinite())),
                }
            }
        }
    }
}

#[cfg(test)]
mod recorded {
    use super::*;

    /// Every per-interval series of the recorded runs (disk and network points of real
    /// machines, no burst imposed; each a repetition of 0.1 to 6.7 s): none is a burst, though
    /// a shared host moves some by a third within a fraction of a second (a copy of 0.1 s ran 3
    /// times as fast for 70 ms as after: a cache, not a credit).
    #[test]
    fn no_recorded_steady_point_is_a_burst() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
        let mut series = 0;
        let mut phased = 0;
        let mut subsecond = 0;
        for file in [
            "history/quick.json",
            "history/assignment.json",
            "machines/zen5-kvm-2cpu.json",
            "machines/sapphire-rapids-kvm-2cpu.json",
        ] {
            let r = crate::results::Report::from_json(&std::fs::read(root.join(file)).unwrap())
                .unwrap();
            for rec in &r.results {
                let Some(i) = &rec.intervals else { continue };
                series += 1;
                if let Some(p) = of(&i.values, i.interval_s) {
                    phased += 1;
                    assert!(burst(&p).is_none(), "{file}: {}: {p:?}", rec.workload);
                }
                // Cut as if a phase needed 3 intervals only: what the burst rule alone would
                // call a burst lasts under a second, which is why a phase lasts one at least.
                let phases = timed(&levels(&i.values, &SETTINGS), i.interval_s);
                if let Some((b, _)) = burst(&phases) {
                    subsecond += 1;
                    assert!(b.end_s - b.start_s < MIN_PHASE_S, "{file}: {phases:?}");
                }
            }
        }
        assert!(series >= 250, "{series} series");
        eprintln!(
            "{phased} of {series} recorded series have phases, none a burst; {subsecond} would be under a second"
        );
    }
}
