//! Summary statistics of repeated samples.
//!
//! The standard deviation is the sample standard deviation (n − 1 in the denominator), as a
//! reader comparing repetitions of one experiment expects; with one sample it is 0. The
//! coefficient of variation is stddev / mean. The median is the middle sample, or the mean of the
//! two middle samples for an even count. The 95 % confidence interval of the mean is Student's:
//! mean ± t(0.975, n − 1) · stddev / √n, as hyperfine and criterion state it; none with one
//! sample.

use serde::{Deserialize, Serialize};

/// A point is flagged noisy when its coefficient of variation exceeds this (5 %).
pub const NOISY_CV: f64 = 0.05;

/// Statistics of one point's repetitions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    #[serde(deserialize_with = "nan_as_null::number")]
    pub mean: f64,
    #[serde(deserialize_with = "nan_as_null::number")]
    pub stddev: f64,
    #[serde(deserialize_with = "nan_as_null::number")]
    pub min: f64,
    #[serde(deserialize_with = "nan_as_null::number")]
    pub max: f64,
    #[serde(deserialize_with = "nan_as_null::number")]
    pub median: f64,
    /// Coefficient of variation, stddev / mean (0 when the mean is 0).
    #[serde(deserialize_with = "nan_as_null::number")]
    pub cv: f64,
    /// True when `cv` exceeds [`NOISY_CV`].
    pub noisy: bool,
    /// The 95 % confidence interval of the mean, [low, high]; absent with one sample (and in
    /// documents from before it was computed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ci95: Option<[f64; 2]>,
}

impl Summary {
    /// Summarises `samples`; `None` when there are none or one is not finite.
    pub fn of(samples: &[f64]) -> Option<Summary> {
        if samples.is_empty() || samples.iter().any(|s| !s.is_finite()) {
            return None;
        }
        let n = samples.len() as f64;
        let mean = samples.iter().sum::<f64>() / n;
        let var = if samples.len() > 1 {
            samples.iter().map(|s| (s - mean).powi(2)).sum::<f64>() / (n - 1.0)
        } else {
            0.0
        };
        let stddev = var.sqrt();
        let mut sorted = samples.to_vec();
        let median = median(&mut sorted);
        let cv = if mean != 0.0 {
            stddev / mean.abs()
        } else {
            0.0
        };
        let half =
            (samples.len() > 1).then(|| super::welch::t95(samples.len() - 1) * stddev / n.sqrt());
        Some(Summary {
            mean,
            stddev,
            min: sorted[0],
            max: sorted[sorted.len() - 1],
            median,
            cv,
            noisy: cv > NOISY_CV,
            ci95: half.filter(|h| h.is_finite()).map(|h| [mean - h, mean + h]),
        })
    }

    /// The half-width of the 95 % interval as a share of the mean ("±1.2 %" is 0.012); None
    /// without an interval or with a mean of 0.
    pub fn ci95_relative(&self) -> Option<f64> {
        let [lo, hi] = self.ci95?;
        let r = (hi - lo) / 2.0 / self.mean.abs();
        r.is_finite().then_some(r)
    }
}

/// Reading back numbers that were not finite. serde_json writes NaN and ±∞ as `null` (JSON has
/// no such numbers), so a document read back has `null` where a statistic could not be
/// computed; these read `null` as NaN, so that writing the value again gives `null` again.
pub mod nan_as_null {
    use serde::{Deserialize, Deserializer};
    use std::collections::BTreeMap;

    /// NaN: the default of a number a document leaves out, read as one it holds as `null`.
    pub fn nan() -> f64 {
        f64::NAN
    }

    /// A number, `null` read as NaN.
    pub fn number<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
        Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
    }

    /// A list of numbers, each `null` read as NaN.
    pub fn numbers<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<f64>, D::Error> {
        Ok(Vec::<Option<f64>>::deserialize(d)?
            .into_iter()
            .map(|v| v.unwrap_or(f64::NAN))
            .collect())
    }

    /// An optional map of numbers (percentiles), each `null` value read as NaN.
    pub fn number_map<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<BTreeMap<String, f64>>, D::Error> {
        Ok(
            Option::<BTreeMap<String, Option<f64>>>::deserialize(d)?.map(|m| {
                m.into_iter()
                    .map(|(k, v)| (k, v.unwrap_or(f64::NAN)))
                    .collect()
            }),
        )
    }
}

/// The middle value of `v` (the mean of the two middle ones for an even count), sorting `v`;
/// NaN for an empty slice.
pub fn median(v: &mut [f64]) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    let mid = v.len() / 2;
    if v.len().is_multiple_of(2) {
        (v[mid - 1] + v[mid]) / 2.0
    } else {
        v[mid]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_values() {
        let s = Summary::of(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]).unwrap();
        assert_eq!(s.mean, 5.0);
        assert!((s.stddev - 2.138_089_935).abs() < 1e-6);
        assert_eq!(s.min, 2.0);
        assert_eq!(s.max, 9.0);
        assert_eq!(s.median, 4.5);
        assert!(s.noisy);
    }

    #[test]
    fn single_and_steady() {
        let s = Summary::of(&[3.0]).unwrap();
        assert_eq!((s.stddev, s.median, s.noisy), (0.0, 3.0, false));
        let s = Summary::of(&[100.0, 101.0, 99.0]).unwrap();
        assert!(!s.noisy);
        assert!((s.cv - 0.01).abs() < 1e-9);
    }

    /// The interval of the mean: Student's t at n − 1 degrees of freedom (t(0.975, 2) = 4.303,
    /// t(0.975, 9) = 2.262), none with one sample.
    #[test]
    fn the_95_percent_interval_of_the_mean() {
        let s = Summary::of(&[9.0, 10.0, 11.0]).unwrap();
        let [lo, hi] = s.ci95.unwrap();
        let half = 4.302653 * 1.0 / 3f64.sqrt();
        assert!(
            (lo - (10.0 - half)).abs() < 1e-5 && (hi - (10.0 + half)).abs() < 1e-5,
            "{s:?}"
        );
        assert!((s.ci95_relative().unwrap() - half / 10.0).abs() < 1e-6);
        let ten: Vec<f64> = (0..10).map(|i| 100.0 + i as f64).collect();
        let s = Summary::of(&ten).unwrap();
        let half = 2.262157 * s.stddev / 10f64.sqrt();
        assert!((s.ci95.unwrap()[1] - (s.mean + half)).abs() < 1e-4);
        assert_eq!(Summary::of(&[5.0]).unwrap().ci95, None);
        assert_eq!(Summary::of(&[5.0, 5.0]).unwrap().ci95, Some([5.0, 5.0]));
    }

    #[test]
    fn empty_or_nan() {
        assert!(Summary::of(&[]).is_none());
        assert!(Summary::of(&[1.0, f64::NAN]).is_none());
    }

    #[test]
    fn nan_statistics_read_back_as_nan() {
        let s = Summary {
            mean: f64::NAN,
            stddev: f64::INFINITY,
            min: 1.0,
            max: 2.0,
            median: 1.5,
            cv: f64::NAN,
            noisy: true,
            ci95: None,
        };
        let json = serde_json::to_string(&s).unwrap();
        assert!(json.contains("\"mean\":null"), "{json}");
        let back: Summary = serde_json::from_str(&json).unwrap();
        assert!(back.mean.is_nan() && back.stddev.is_nan() && back.cv.is_nan());
        assert_eq!((back.min, back.max, back.median), (1.0, 2.0, 1.5));
        assert_eq!(serde_json::to_string(&back).unwrap(), json);
    }
}
