//! `--precision`: a point measured until its mean's 95 % interval is within a share of the
//! mean, as hyperfine and criterion choose their run counts from the spread they see.
//!
//! As a pilot study sizes an experiment: the point's first measurement (its `--repeat`
//! repetitions) is the pilot; where its interval's half width (Student's) is wider than the
//! target d, the point is measured again with the least n repetitions whose interval would be
//! within it at the spread seen so far, t(0.975, n − 1) · s / √n ≤ d, where s / mean is pooled
//! over the point's measurements (each one's from its half width and repetitions, weighted by
//! its degrees of freedom: a pilot of 3 alone says little of the spread). The new measurement
//! replaces the last (the record is one measurement of the point: its warm-up, its repetitions
//! and everything else from the same run); where its own interval is still wider, the point is
//! sized and measured again, at most [`MAX_MEASUREMENTS`] measurements in all. `--max-repeat`
//! bounds the repetitions of all of them together (what a budget estimates): a point whose
//! next measurement could not have more repetitions than its last stops there, and says so.

use serde::{Deserialize, Serialize};

/// The most measurements of one point: the pilot and three more.
pub const MAX_MEASUREMENTS: usize = 4;

/// `--max-repeat`'s default: the repetitions of a point's measurements together.
pub const DEFAULT_MAX_REPEAT: usize = 50;

/// What `--precision` asks of every point.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Precision {
    /// The 95 % interval's half width as a share of the mean (0.02: ±2 %).
    pub target: f64,
    /// The most timed repetitions of a point, all its measurements together.
    pub max_repeat: usize,
}

/// The spread s / mean pooled over measurements of (repetitions, half width as a share of
/// the mean): each one's from its half width, t(0.975, n − 1) · cv / √n, weighted by n − 1.
/// None where one is unknown or has fewer than 2 repetitions.
fn pooled_cv(made: &[(usize, Option<f64>)]) -> Option<f64> {
    let (mut sum, mut df) = (0.0, 0.0);
    for &(n, h) in made {
        let h = h.filter(|h| h.is_finite())?;
        if n < 2 {
            return None;
        }
        let cv = h * (n as f64).sqrt() / super::welch::t95(n - 1);
        sum += (n - 1) as f64 * cv * cv;
        df += (n - 1) as f64;
    }
    (df > 0.0).then(|| (sum / df).sqrt())
}

/// The repetitions an estimate counts for a point of `repeat` repetitions: under
/// `--precision` the most all its measurements may take (`--max-repeat`), else `repeat`.
pub fn worst_repeat(repeat: usize, precision: Option<Precision>) -> usize {
    precision.map_or(repeat, |p| p.max_repeat.max(repeat))
}

/// How close a point came to `--precision`, in its record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Reached {
    /// The half width asked for, a share of the mean.
    pub target: f64,
    /// The widest half width of the point's figures, a share of the mean (null where none
    /// has an interval).
    pub reached: Option<f64>,
    /// Whether `reached` is within `target`.
    pub met: bool,
    /// Measurements of the point (the pilot included); the record is the last.
    pub measurements: usize,
    /// Timed repetitions of all its measurements together.
    pub repetitions: usize,
    /// `--max-repeat`.
    pub max_repeat: usize,
}

impl Precision {
    /// The repetitions of the point's next measurement after `made` (each measurement's
    /// repetitions and widest half width, the last one's the point's record), with `spent`
    /// repetitions in all: None where the last met the target, a half width is unknown, no
    /// more measurements are allowed, or none could have more repetitions than the last within
    /// `max_repeat`.
    pub fn next(&self, made: &[(usize, Option<f64>)], spent: usize) -> Option<usize> {
        let &(last, h) = made.last()?;
        let h = h?;
        if h <= self.target || made.len() >= MAX_MEASUREMENTS || !h.is_finite() {
            return None;
        }
        let cv = pooled_cv(made)?;
        let left = self.max_repeat.saturating_sub(spent);
        let n = (last + 1..=left)
            .find(|&n| super::welch::t95(n - 1) * cv / (n as f64).sqrt() <= self.target)
            .unwrap_or(left);
        (n > last).then_some(n)
    }

    /// The outcome after `measurements` measurements of `repetitions` repetitions in all, the
    /// last one's widest half width `reached`.
    pub fn reached(
        &self,
        reached: Option<f64>,
        measurements: usize,
        repetitions: usize,
    ) -> Reached {
        Reached {
            target: self.target,
            reached,
            met: reached.is_some_and(|h| h <= self.target),
            measurements,
            repetitions,
            max_repeat: self.max_repeat,
        }
    }
}

impl Reached {
    /// Why a point stayed wider than asked, for its record's warnings; None where it met it.
    pub fn shortfall(&self, last: usize) -> Option<String> {
        if self.met {
            return None;
        }
        Some(match self.reached {
            Some(h) => format!(
                "--precision ±{} % not reached: ±{} % with {last} repetitions, {} in {} measurement{} (--max-repeat {}: raise it, or quiet the machine)",
                pct(self.target),
                pct(h),
                self.repetitions,
                self.measurements,
                if self.measurements == 1 { "" } else { "s" },
                self.max_repeat
            ),
            None => format!(
                "--precision ±{} % not judged: the point's figures have no interval ({last} repetition{})",
                pct(self.target),
                if last == 1 { "" } else { "s" }
            ),
        })
    }
}

/// A share as the options write it, in percent to two decimals without trailing zeros
/// (0.02 → "2", 0.0497 → "4.97").
pub fn pct(share: f64) -> String {
    let s = format!("{:.2}", share * 100.0);
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// The widest 95 % half width, as a share of the mean, of `summaries` (None where none has
/// an interval).
pub fn widest<'a>(summaries: impl IntoIterator<Item = &'a super::Summary>) -> Option<f64> {
    summaries
        .into_iter()
        .filter_map(super::Summary::ci95_relative)
        .fold(None, |w: Option<f64>, h| Some(w.map_or(h, |w| w.max(h))))
}

/// Parses `--precision`: a share of the mean in percent, `2%` or `2`, from 0.1 to 50 %.
pub fn parse_target(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let number = t.strip_suffix('%').unwrap_or(t).trim();
    let v: f64 = number.parse().map_err(|_| {
        format!("'{s}' is not a share of the mean: give a percentage such as 2% (0.1% to 50%)")
    })?;
    if !(0.1..=50.0).contains(&v) {
        return Err(format!(
            "'{s}' is out of range: the interval's half width is 0.1% to 50% of the mean"
        ));
    }
    Ok(v / 100.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::Summary;

    fn p(target: f64, max_repeat: usize) -> Precision {
        Precision { target, max_repeat }
    }

    /// The least n whose interval at the spread seen so far is within the target.
    #[test]
    fn the_next_measurement_is_what_the_spread_says_the_target_takes() {
        // ±5 % from 3 repetitions is s = 5 % · √3 / 4.303 = 2.01 %; ±2 % wanted: n = 7
        // (2.447 · 2.01 % / √7 = 1.86 %; at 6, 2.571 · 2.01 % / √6 = 2.11 %).
        assert_eq!(p(0.02, 50).next(&[(3, Some(0.05))], 3), Some(7));
        // Met, or no interval: no more.
        assert_eq!(p(0.02, 50).next(&[(3, Some(0.02))], 3), None);
        assert_eq!(p(0.02, 50).next(&[(1, None)], 1), None);
        assert_eq!(p(0.02, 50).next(&[(3, Some(f64::NAN))], 3), None);
        assert_eq!(p(0.02, 50).next(&[], 0), None);
        // Bounded by what --max-repeat leaves: 8 − 3 = 5.
        assert_eq!(p(0.02, 8).next(&[(3, Some(0.05))], 3), Some(5));
        // Not more than the last measurement's: it stops.
        assert_eq!(p(0.02, 5).next(&[(3, Some(0.05))], 3), None);
        // At most four measurements.
        let four = [
            (3, Some(0.05)),
            (7, Some(0.03)),
            (12, Some(0.03)),
            (20, Some(0.03)),
        ];
        assert_eq!(p(0.02, 500).next(&four, 42), None);
        // A huge ratio does not overflow: everything left.
        assert_eq!(p(0.001, 1000).next(&[(3, Some(1e300))], 3), Some(997));
        // The spread is pooled: a second measurement of 7 at ±3.7 % (s = 4 %) beside the
        // pilot's 2.01 % (weights 6 and 2) gives s = √((6 · 16 + 2 · 4.05) / 8) = 3.61 %,
        // which ±2 % needs 15 repetitions for (2.145 · 3.61 / √15 = 2.0 %); from the second
        // alone (s = 4 %) it would be 18.
        let s7 = 0.04 * crate::measure::welch::t95(6) / 7f64.sqrt();
        assert_eq!(
            p(0.02, 50).next(&[(3, Some(0.05)), (7, Some(s7))], 10),
            Some(15)
        );
        assert_eq!(p(0.02, 50).next(&[(7, Some(s7))], 10), Some(18));
    }

    #[test]
    fn the_widest_interval_of_a_points_figures_is_judged() {
        let a = Summary::of(&[100.0, 102.0, 98.0]).unwrap();
        let b = Summary::of(&[100.0, 110.0, 90.0]).unwrap();
        let one = Summary::of(&[5.0]).unwrap();
        let w = widest([&a, &b, &one]).unwrap();
        assert!((w - b.ci95_relative().unwrap()).abs() < 1e-12);
        assert_eq!(widest([&one]), None);
    }

    #[test]
    fn a_shortfall_says_what_was_reached_and_what_bounds_it() {
        let r = p(0.02, 5).reached(Some(0.05), 1, 3);
        assert!(!r.met);
        let why = r.shortfall(3).unwrap();
        assert!(
            why.contains("±2 %") && why.contains("±5 %") && why.contains("--max-repeat 5"),
            "{why}"
        );
        assert_eq!(p(0.02, 5).reached(Some(0.01), 2, 20).shortfall(17), None);
        assert!(
            p(0.02, 5)
                .reached(None, 1, 1)
                .shortfall(1)
                .unwrap()
                .contains("no interval")
        );
    }

    #[test]
    fn the_target_is_a_percentage_within_bounds() {
        assert_eq!(parse_target("2%"), Ok(0.02));
        assert_eq!(parse_target(" 0.5 "), Ok(0.005));
        for bad in ["0%", "0.05", "51%", "-2%", "two", "", "nan", "inf%"] {
            assert!(parse_target(bad).is_err(), "{bad}");
        }
    }
}
