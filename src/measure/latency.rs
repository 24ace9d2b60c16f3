//! Latency histograms: one constructor for every subsystem and the percentiles every latency
//! record reports.

use hdrhistogram::Histogram;
use std::collections::BTreeMap;

/// A latency histogram in nanoseconds: 1 ns to 100 s at 3 significant digits, so a recorded
/// value is within 0.1 % of the truth. Histograms of threads and repetitions merge with `add`.
pub fn histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 100_000_000_000, 3).expect("valid histogram bounds")
}

/// `p50`, `p99`, `p99.9` and `max` of a histogram of nanoseconds, in microseconds; None when
/// it is empty.
pub fn percentiles_us(h: &Histogram<u64>) -> Option<BTreeMap<String, f64>> {
    if h.is_empty() {
        return None;
    }
    let q = |p: f64| h.value_at_quantile(p) as f64 / 1000.0;
    Some(BTreeMap::from([
        ("p50".to_string(), q(0.5)),
        ("p99".to_string(), q(0.99)),
        ("p99.9".to_string(), q(0.999)),
        ("max".to_string(), h.max() as f64 / 1000.0),
    ]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_in_microseconds() {
        let mut h = histogram();
        assert!(percentiles_us(&h).is_none());
        for ns in 1..=1000u64 {
            h.record(ns * 1000).unwrap();
        }
        let p = percentiles_us(&h).unwrap();
        assert!((p["p50"] - 500.0).abs() <= 0.5, "{p:?}");
        assert!((p["p99"] - 990.0).abs() <= 1.0, "{p:?}");
        assert!((p["max"] - 1000.0).abs() <= 1.0, "{p:?}");
    }
}
