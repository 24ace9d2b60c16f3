//! Latency histograms: one constructor for every subsystem and the percentiles every latency
//! record reports.

use hdrhistogram::Histogram;
use std::collections::BTreeMap;

/// A latency histogram in nanoseconds: 1 ns to 100 s at 3 significant digits, so a recorded
/// value is within 0.1 % of the truth. Histograms of threads and repetitions merge with `add`.
pub fn histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 100_000_000_000, 3).expect("valid histogram bounds")
}

/// The percentiles a latency record reports beside `min` and `max` (`--percentiles`): each
/// above 0 and below 100, in order, at most [`Percentiles::MOST`]; by default 50, 90, 99, 99.9
/// and 99.99.
#[derive(Debug, Clone, PartialEq)]
pub struct Percentiles(Vec<f64>);

impl Default for Percentiles {
    fn default() -> Percentiles {
        Percentiles(vec![50.0, 90.0, 99.0, 99.9, 99.99])
    }
}

impl Percentiles {
    /// The most percentiles a list may name.
    pub const MOST: usize = 16;
    /// The finest a percentile may be: 4 decimals (99.9999), beyond which a histogram of
    /// fewer than a million operations has nothing to tell.
    const DECIMALS: i32 = 4;

    /// A list such as `50,90,99,99.9`: numbers above 0 and below 100 with 4 decimals at most,
    /// [`Self::MOST`] of them at most; sorted, each once.
    pub fn parse(text: &str) -> Result<Percentiles, String> {
        let mut out = Vec::new();
        for part in text.split(',').map(str::trim) {
            let bad = || {
                format!(
                    "'{part}' is no percentile: give numbers above 0 and below 100 with {} decimals at most, e.g. 50,99,99.9",
                    Self::DECIMALS
                )
            };
            let p: f64 = part.parse().map_err(|_| bad())?;
            let scaled = p * 10f64.powi(Self::DECIMALS);
            if !(p > 0.0 && p < 100.0) || (scaled - scaled.round()).abs() > 1e-6 {
                return Err(bad());
            }
            out.push(p);
        }
        out.sort_by(f64::total_cmp);
        out.dedup();
        if out.len() > Self::MOST {
            return Err(format!(
                "{} percentiles: give {} at most",
                out.len(),
                Self::MOST
            ));
        }
        Ok(Percentiles(out))
    }

    /// Its percentiles, in order.
    pub fn list(&self) -> &[f64] {
        &self.0
    }

    /// How a record names percentile `p`: `p50`, `p99.9`.
    pub fn key(p: f64) -> String {
        let fixed = format!("{p:.*}", Self::DECIMALS as usize);
        format!("p{}", fixed.trim_end_matches('0').trim_end_matches('.'))
    }

    /// The percentile a record's key names (`p99.9` → 99.9); None for `min`, `max` and others.
    pub fn of_key(key: &str) -> Option<f64> {
        key.strip_prefix('p')?
            .parse::<f64>()
            .ok()
            .filter(|p| *p > 0.0 && *p < 100.0)
    }
}

/// The percentiles a record's `percentiles` hold (its `pNN` keys, not `min` and `max`), in
/// order, each with its figure.
pub fn chosen(p: &BTreeMap<String, f64>) -> Vec<(f64, f64)> {
    let mut out: Vec<(f64, f64)> = (p.iter())
        .filter_map(|(k, v)| Some((Percentiles::of_key(k)?, *v)))
        .collect();
    out.sort_by(|a, b| a.0.total_cmp(&b.0));
    out
}

/// `min`, each percentile of `chosen` and `max` of a histogram of nanoseconds, in seconds (the
/// unit records store latencies in); None when it is empty.
pub fn percentiles_s(h: &Histogram<u64>, chosen: &Percentiles) -> Option<BTreeMap<String, f64>> {
    if h.is_empty() {
        return None;
    }
    let q = |p: f64| h.value_at_quantile(p / 100.0) as f64 / 1e9;
    let mut out = BTreeMap::from([
        ("min".to_string(), h.min() as f64 / 1e9),
        ("max".to_string(), h.max() as f64 / 1e9),
    ]);
    out.extend(chosen.list().iter().map(|&p| (Percentiles::key(p), q(p))));
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_in_seconds() {
        let mut h = histogram();
        assert!(percentiles_s(&h, &Percentiles::default()).is_none());
        for us in 1..=1000u64 {
            h.record(us * 1000).unwrap();
        }
        let p = percentiles_s(&h, &Percentiles::default()).unwrap();
        assert!((p["p50"] - 500e-6).abs() <= 0.5e-6, "{p:?}");
        assert!((p["p99"] - 990e-6).abs() <= 1e-6, "{p:?}");
        assert!((p["max"] - 1000e-6).abs() <= 1e-6, "{p:?}");
        let keys: Vec<&String> = p.keys().collect();
        assert_eq!(keys, ["max", "min", "p50", "p90", "p99", "p99.9", "p99.99"]);
        // Chosen ones, and only those.
        let chosen = Percentiles::parse("99.5, 25,99.5").unwrap();
        let p = percentiles_s(&h, &chosen).unwrap();
        assert_eq!(p.keys().collect::<Vec<_>>(), ["max", "min", "p25", "p99.5"]);
        assert!((p["p25"] - 250e-6).abs() <= 0.5e-6, "{p:?}");
    }

    /// A list of percentiles is bounded: each above 0, below 100, 4 decimals at most, 16 at
    /// most; a key reads back as its percentile.
    #[test]
    fn chosen_percentiles_are_bounded() {
        for bad in [
            "0", "100", "-1", "50,", "x", "NaN", "inf", "99.99999", "1e3",
        ] {
            assert!(Percentiles::parse(bad).is_err(), "{bad}");
        }
        let many: Vec<String> = (1..=17).map(|i| i.to_string()).collect();
        assert!(
            Percentiles::parse(&many.join(","))
                .unwrap_err()
                .contains("16 at most")
        );
        assert_eq!(
            Percentiles::parse("99.9999,0.0001").unwrap().list(),
            [0.0001, 99.9999]
        );
        for p in [50.0, 99.9, 99.99, 0.5] {
            assert_eq!(Percentiles::of_key(&Percentiles::key(p)), Some(p));
        }
        assert_eq!(Percentiles::key(99.9), "p99.9");
        assert_eq!(Percentiles::of_key("max"), None);
    }
}
