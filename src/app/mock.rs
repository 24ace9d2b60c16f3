//! The mock session, a test double as hyperfine's mock executor is: with
//! `PEAKBENCH_MOCK_SESSION=1` in the environment, [`Recorder::drive`](super::Recorder::drive)
//! measures nothing. Each point still goes through its session's rounds, label and planned
//! records (the parameters its run starts from), and its records are the planned ones with
//! samples made from the point's key: the same on every run, different between points, with a
//! spread of a few percent. Tests of everything after the measurement (tables, exports,
//! history, compare, options) use it so that they stop measuring; it is not in `--help`, and
//! every record it makes says in its warnings that it was not measured.
//!
//! Its records are as faithful as the planned ones: a point without planned records (C2C,
//! LOADED, NUMA) gives none, LATENCY's staircase is one record (its steps are known only as it
//! runs), a network point talks to no server (a wrong token is not found out), and disk and
//! network latencies get percentiles in a fixed ratio to their mean. Tests of those things
//! measure.

use super::session::Session;
use crate::results::{Metric, ResultRecord, Subsystem};

/// The environment variable that selects the mock session.
pub const MOCK_ENV: &str = "PEAKBENCH_MOCK_SESSION";

/// What every record the mock session makes says.
pub const MOCK_WARNING: &str =
    "mock session (PEAKBENCH_MOCK_SESSION): these figures were not measured";

/// Whether the environment selects the mock session (`1`).
pub fn selected() -> bool {
    std::env::var(MOCK_ENV).is_ok_and(|v| v.trim() == "1")
}

/// The environment variable that gives the mock session's points a noise: `co-runner` or
/// `steal` (what `--strict` acts on), the same on every point.
pub const MOCK_NOISE_ENV: &str = "PEAKBENCH_MOCK_NOISE";

/// The noise the environment gives the mock session's points, where it names an interference:
/// a second's window in which other processes kept one CPU busy (`co-runner`) or the
/// hypervisor took a tenth of one (`steal`).
pub fn noise() -> Option<crate::results::Noise> {
    let cause = std::env::var(MOCK_NOISE_ENV).ok()?;
    let (others, steal) = match cause.trim() {
        "co-runner" => (1.0, 0.0),
        "steal" => (0.0, 0.1),
        _ => return None,
    };
    Some(crate::results::Noise {
        window_s: 1.0,
        steal_cpus: Some(steal),
        others_cpus: Some(others),
        own_cpus: 1.0,
        cpu_pressure: Some(0.0),
        voluntary_switches_per_s: 0.0,
        involuntary_switches_per_s: 0.0,
        minor_faults: 0,
        major_faults: 0,
        interference: vec![cause.trim().to_string()],
    })
}

/// `S` with its measurement replaced by [`mocked`] records.
pub struct Mock<'a, S>(pub &'a mut S);

impl<S: Session> Session for Mock<'_, S> {
    type Point = S::Point;

    fn rounds(&self, point: &S::Point) -> u64 {
        self.0.rounds(point)
    }

    fn label(&self, point: &S::Point) -> String {
        self.0.label(point)
    }

    fn repeat(&self) -> usize {
        self.0.repeat()
    }

    fn set_repeat(&mut self, repeat: usize) {
        self.0.set_repeat(repeat);
    }

    fn precision(&self) -> Option<crate::measure::precision::Precision> {
        self.0.precision()
    }

    fn planned(&self, point: &S::Point) -> Vec<ResultRecord> {
        self.0.planned(point)
    }

    fn run(
        &mut self,
        point: S::Point,
        tick: &mut dyn FnMut(),
    ) -> anyhow::Result<Vec<ResultRecord>> {
        for _ in 0..self.0.rounds(&point) {
            tick();
        }
        // The environment's interference, where it gives one (`--strict` acts on it).
        let noise = noise();
        Ok(self
            .0
            .planned(&point)
            .into_iter()
            .map(|p| ResultRecord {
                noise: noise.clone(),
                ..mocked(p)
            })
            .collect())
    }
}

/// A planned record with figures: as many samples as it planned, of a value in its metric's
/// usual range chosen by its point's key and metric, each a little apart.
pub fn mocked(planned: ResultRecord) -> ResultRecord {
    use std::hash::{Hash, Hasher};
    let key = crate::results::point::point_key(&planned);
    let mut h = std::collections::hash_map::DefaultHasher::new();
    (key, planned.metric.name()).hash(&mut h);
    // A fraction in [0, 1) from the key, and a base value of the metric's order (base units).
    let f = (h.finish() % 1000) as f64 / 1000.0;
    let base = match planned.metric {
        Metric::Throughput => 1e9,
        Metric::Iops => 1e5,
        Metric::Latency | Metric::Jitter => 1e-6,
        Metric::Rate => 1e4,
        Metric::Loss => 0.1,
    };
    let value = base * (1.0 + 9.0 * f);
    let samples: Vec<f64> = (0..planned.samples.len())
        .map(|i| value * (1.0 + 0.02 * ((i % 3) as f64 - 1.0)))
        .collect();
    let mut rec = ResultRecord::new(
        planned.workload,
        planned.params,
        planned.metric,
        planned.unit,
        samples,
        Err("a mock session's figures have no peak".into()),
    );
    rec.warmup_rounds = planned.warmup_rounds;
    // Disk and network latencies come with the percentiles of every I/O or round trip.
    if rec.metric == Metric::Latency && matches!(rec.subsystem, Subsystem::Disk | Subsystem::Net) {
        let at = |name: &str, times: f64| (name.to_string(), value * times);
        rec.percentiles = Some(
            [
                at("min", 0.5),
                at("p50", 1.0),
                at("p90", 1.5),
                at("p99", 3.0),
                at("p99.9", 5.0),
                at("p99.99", 8.0),
                at("max", 10.0),
            ]
            .into(),
        );
    }
    rec.warnings.push(MOCK_WARNING.into());
    rec
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::params::Params;
    use crate::workload::mem::MemWorkload;

    #[test]
    fn a_mocked_record_is_the_same_each_time_and_says_it_was_not_measured() {
        let params = Params::with_defaults(
            MemWorkload::Copy.into(),
            serde_json::json!({"threads": 2, "array_bytes_per_thread": 1 << 20}),
        )
        .unwrap();
        let planned =
            || ResultRecord::planned(MemWorkload::Copy, params.clone(), Metric::Throughput, 3);
        let (a, b) = (mocked(planned()), mocked(planned()));
        assert_eq!(a.samples, b.samples);
        assert_eq!(a.samples.len(), 3);
        assert!(
            a.summary.mean >= 1e9 && a.summary.mean < 1e10,
            "{}",
            a.summary.mean
        );
        assert!(
            a.summary.cv > 0.0 && a.summary.cv < 0.05,
            "{}",
            a.summary.cv
        );
        assert!(a.warnings.iter().any(|w| w == MOCK_WARNING));
        assert!(a.peak.is_none());
    }
}
