//! Two runs side by side: every point they have in common, the change of its mean, and whether
//! the change is significant (Welch's t-test on the repetitions) and a regression.

use super::point_key;
use crate::measure::welch;
use crate::results::ResultRecord;
use std::collections::BTreeMap;

/// Which way is better for a metric.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Better {
    Higher,
    Lower,
}

/// Throughput, IOPS and transaction rates are better higher; latency, loss and jitter lower.
pub fn better(metric: &str) -> Better {
    match metric {
        "latency" | "loss" | "jitter" => Better::Lower,
        _ => Better::Higher,
    }
}

/// How a test decides.
#[derive(Debug, Clone, Copy)]
pub struct Criteria {
    /// Significance level of the two-sided Welch test (e.g. 0.05).
    pub alpha: f64,
    /// A significant change counts as a regression only beyond this fraction (e.g. 0.05).
    pub threshold: f64,
}

/// One common point.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Change {
    pub subsystem: String,
    pub workload: String,
    pub metric: String,
    pub unit: String,
    /// The point's identity parameters, as text.
    pub point: String,
    pub mean_a: f64,
    pub mean_b: f64,
    pub n_a: usize,
    pub n_b: usize,
    /// mean_b / mean_a − 1.
    pub change: f64,
    /// Two-sided p-value; None with fewer than two repetitions on a side.
    pub p: Option<f64>,
    pub significant: bool,
    /// Significant, worse, and beyond the threshold.
    pub regression: bool,
    /// Significant, better, and beyond the threshold.
    pub improvement: bool,
}

/// The common points of `a` and `b` (matched by [`point_key`]), in `a`'s order.
pub fn compare(a: &[ResultRecord], b: &[ResultRecord], c: Criteria) -> Vec<Change> {
    let by_key: BTreeMap<String, &ResultRecord> = b.iter().map(|r| (point_key(r), r)).collect();
    a.iter()
        .filter_map(|ra| {
            let key = point_key(ra);
            let rb = by_key.get(&key)?;
            let (ma, mb) = (ra.summary.mean, rb.summary.mean);
            let change = if ma != 0.0 { mb / ma - 1.0 } else { f64::NAN };
            let p = welch::test(&ra.samples, &rb.samples).map(|w| w.p);
            let significant = p.is_some_and(|p| p < c.alpha);
            let worse = match better(&ra.metric) {
                Better::Higher => change < 0.0,
                Better::Lower => change > 0.0,
            };
            let beyond = change.abs() > c.threshold;
            Some(Change {
                subsystem: ra.subsystem.clone(),
                workload: ra.workload.clone(),
                metric: ra.metric.clone(),
                unit: ra.unit.clone(),
                point: key
                    .split_once(' ')
                    .map(|(_, p)| p.to_string())
                    .unwrap_or_default(),
                mean_a: ma,
                mean_b: mb,
                n_a: ra.samples.len(),
                n_b: rb.samples.len(),
                change,
                p,
                significant,
                regression: significant && beyond && worse,
                improvement: significant && beyond && !worse,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(metric: &str, samples: Vec<f64>) -> ResultRecord {
        let params = crate::results::params::Params::with_defaults(
            "net",
            "THROUGHPUT",
            serde_json::json!({}),
        )
        .unwrap();
        ResultRecord::new(
            "net",
            "THROUGHPUT",
            params,
            metric,
            "Mbit/s",
            samples,
            Err("none".into()),
        )
    }

    const C: Criteria = Criteria {
        alpha: 0.05,
        threshold: 0.05,
    };

    #[test]
    fn a_20_percent_drop_is_a_significant_regression() {
        let a = [rec("throughput", vec![100.0, 101.0, 99.0, 100.5, 99.5])];
        let b = [rec("throughput", vec![80.0, 81.0, 79.0, 80.5, 79.5])];
        let ch = compare(&a, &b, C);
        assert_eq!(ch.len(), 1);
        assert!((ch[0].change + 0.2).abs() < 1e-9);
        assert!(ch[0].significant && ch[0].regression && !ch[0].improvement);
        // The same drop in latency is an improvement.
        let a = [rec("latency", vec![100.0, 101.0, 99.0])];
        let b = [rec("latency", vec![80.0, 81.0, 79.0])];
        let ch = compare(&a, &b, C);
        assert!(ch[0].improvement && !ch[0].regression);
    }

    #[test]
    fn noise_and_small_changes_are_not_regressions() {
        let a = [rec("throughput", vec![100.0, 110.0, 90.0])];
        let b = [rec("throughput", vec![95.0, 108.0, 88.0])];
        let ch = compare(&a, &b, C);
        assert!(!ch[0].significant && !ch[0].regression);
        // Significant but within the threshold.
        let a = [rec("throughput", vec![100.0, 100.1, 99.9])];
        let b = [rec("throughput", vec![98.0, 98.1, 97.9])];
        let ch = compare(&a, &b, C);
        assert!(ch[0].significant && !ch[0].regression);
        // One repetition: no test, never a regression.
        let ch = compare(
            &[rec("throughput", vec![100.0])],
            &[rec("throughput", vec![50.0])],
            C,
        );
        assert!(ch[0].p.is_none() && !ch[0].regression);
    }

    #[test]
    fn only_common_points_are_compared() {
        let a = [
            rec("throughput", vec![1.0, 2.0]),
            rec("loss", vec![0.0, 0.1]),
        ];
        let b = [rec("throughput", vec![1.0, 2.0])];
        assert_eq!(compare(&a, &b, C).len(), 1);
        assert_eq!(compare(&b, &a, C).len(), 1);
    }
}
