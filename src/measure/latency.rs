//! Latency histograms: one constructor for every subsystem and the percentiles every latency
//! record reports.

use hdrhistogram::Histogram;
use std::collections::BTreeMap;

/// A latency histogram in nanoseconds: 1 ns to 100 s at 3 significant digits, so a recorded
/// value is within 0.1 % of the truth. Histograms of threads and repetitions merge with `add`.
pub fn histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 100_000_000_000, 3).expect("valid histogram bounds")
}

/// `min`, `p50`, `p90`, `p99`, `p99.9`, `p99.99` and `max` of a histogram of nanoseconds, in
/// seconds (the unit records store latencies in); None when it is empty.
pub fn percentiles_s(h: &Histogram<u64>) -> Option<BTreeMap<String, f64>> {
    if h.is_empty() {
        return None;
    }
    let q = |p: f64| h.value_at_quantile(p) as f64 / 1e9;
    Some(BTreeMap::from([
        ("min".to_string(), h.min() as f64 / 1e9),
        ("p50".to_string(), q(0.5)),
        ("p90".to_string(), q(0.9)),
        ("p99".to_string(), q(0.99)),
        ("p99.9".to_string(), q(0.999)),
        ("p99.99".to_string(), q(0.9999)),
        ("max".to_string(), h.max() as f64 / 1e9),
    ]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_in_seconds() {
        let mut h = histogram();
        assert!(percentiles_s(&h).is_none());
        for us in 1..=1000u64 {
            h.record(us * 1000).unwrap();
        }
        let p = percentiles_s(&h).unwrap();
        assert!((p["p50"] - 500e-6).abs() <= 0.5e-6, "{p:?}");
        assert!((p["p99"] - 990e-6).abs() <= 1e-6, "{p:?}");
        assert!((p["max"] - 1000e-6).abs() <= 1e-6, "{p:?}");
    }
}
