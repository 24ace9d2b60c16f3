//! `peakbench verify`'s outcome: for each ceiling imposed on purpose (a link's rate, a delay, a
//! loss rate, a disk's caps, a CPU quota), what was imposed, the figure it implies, the figure
//! measured by the normal benchmarks, and whether it holds within the check's tolerance.

use crate::ids::{Subsystem, Unit};
use serde::{Deserialize, Serialize};

/// Every check of one `verify` run, in the order they ran.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Verification {
    pub checks: Vec<Check>,
}

/// A check's outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Measured within its tolerance of the expected figure.
    Pass,
    /// Measured outside it (or the benchmark failed).
    Fail,
    /// Not run: the kernel or the machine cannot impose it here (`reason` says why).
    Skip,
}

impl Status {
    pub fn name(self) -> &'static str {
        match self {
            Status::Pass => "PASS",
            Status::Fail => "FAIL",
            Status::Skip => "SKIP",
        }
    }
}

/// One imposed ceiling and what the benchmarks found. Figures are in `unit`, a base unit
/// (bit/s, B/s, op/s, s, %), as the records'.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Check {
    /// "rate tcp", "delay", "loss", "disk iops", "disk bandwidth", "cpu quota".
    pub name: String,
    /// The `--only` group it belongs to: net, disk or cpu.
    pub group: String,
    /// What was imposed, and how: "tc tbf rate 200 Mbit/s on both ends of a veth pair".
    pub imposed: String,
    pub status: Status,
    /// Why it was skipped or failed without a figure; how the expected figure follows from
    /// what was imposed otherwise.
    pub reason: String,
    pub subsystem: Subsystem,
    pub unit: Unit,
    /// The figure the imposed ceiling implies.
    #[serde(default)]
    pub expected: Option<f64>,
    /// The benchmarks' figure (the mean of the point's repetitions).
    #[serde(default)]
    pub measured: Option<f64>,
    /// How far `measured` may be from `expected`, in `unit`.
    #[serde(default)]
    pub tolerance: Option<f64>,
    /// The tolerance as the check states it: "±3 %", "±5 % of the added 10 ms",
    /// "±0.5 percentage points".
    pub tolerance_text: String,
    /// The benchmark command lines that measured it, as a user would type them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub commands: Vec<String>,
    /// The indexes, in the report's `results`, of the records it read.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub points: Vec<usize>,
}

impl Check {
    /// measured / expected.
    pub fn ratio(&self) -> Option<f64> {
        match (self.measured, self.expected) {
            (Some(m), Some(e)) if e != 0.0 => Some(m / e),
            _ => None,
        }
    }

    /// The status its figures give: within the tolerance of the expected figure or not.
    pub fn judged(expected: f64, measured: f64, tolerance: f64) -> Status {
        if (measured - expected).abs() <= tolerance && measured.is_finite() {
            Status::Pass
        } else {
            Status::Fail
        }
    }

    /// Its figures converted by `map` (the report's display units).
    pub fn convert(&mut self, map: super::UnitMap) {
        if let Some(c) = map(self.subsystem, self.unit) {
            for v in [&mut self.expected, &mut self.measured, &mut self.tolerance]
                .into_iter()
                .flatten()
            {
                *v = c.apply(*v);
            }
            self.unit = c.unit;
        }
    }
}

impl Verification {
    /// The checks that ran and failed.
    pub fn failed(&self) -> usize {
        self.checks
            .iter()
            .filter(|c| c.status == Status::Fail)
            .count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_check_passes_within_its_tolerance_only() {
        assert_eq!(Check::judged(100.0, 102.9, 3.0), Status::Pass);
        assert_eq!(Check::judged(100.0, 97.0, 3.0), Status::Pass);
        assert_eq!(Check::judged(100.0, 103.1, 3.0), Status::Fail);
        assert_eq!(Check::judged(100.0, f64::NAN, 3.0), Status::Fail);
    }
}
