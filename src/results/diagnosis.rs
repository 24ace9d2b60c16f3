//! A point's diagnosis as a document holds it: why it stays below its peak (or went above
//! it), cause by cause, each with the share of the gap (the excess) it explains (computed by
//! `report::diagnosis`).

use serde::{Deserialize, Serialize};

/// Why a point stays below its peak, or what lifted it above.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Diagnosis {
    /// The point's efficiency (its figure over its peak): below 1, the gap is 1 − efficiency;
    /// above, the excess is efficiency − 1.
    pub efficiency: f64,
    /// The causes the run measured, the largest share first.
    pub causes: Vec<Cause>,
    /// The share of the gap or excess (0–1) that no cause's measured share explains.
    pub unexplained: f64,
}

/// One cause of a point's gap to its peak (or of its excess over it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cause {
    /// Its name (docs/diagnosis.md): `isa`, `clock`, `cpu-quota`, `oversubscription`,
    /// `co-runner`, `steal`, `problem-size`, `working-set`, `pages`, `workers`, `contention`,
    /// `smt-sharing`, `page-cache`, `queue-depth`, `window`, `loss`, `numa`, `device-limit`,
    /// `cpu-bound`.
    pub cause: String,
    /// The efficiency the point would have were this the only cause, where the run measures
    /// it: below the peak, the highest it could reach (0–1); above, the height this cause
    /// alone lifts it to (above 1); null where the run does not measure it.
    pub ceiling: Option<f64>,
    /// Its share of the gap or excess (0–1): ln(ceiling) / ln(efficiency), the causes'
    /// effects multiplying; scaled down with the others where together they explain more than
    /// the gap. Null where the ceiling is.
    pub share: Option<f64>,
    /// The cause in words, with the figures it rests on.
    pub text: String,
    /// `--diagnose`: what the point measured again without this cause read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confirmation: Option<Confirmation>,
}

/// A point measured again by `--diagnose` with one knob changed, to confirm or drop one cause
/// of another point's gap.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Rerun {
    /// The index in the document's `results` of the point it measures again.
    pub of: usize,
    /// The cause it tests.
    pub cause: String,
    /// The knob changed, as the option that changes it: `--isa avx512`, `--n 4000`.
    pub knob: String,
}

/// What measuring a point again without one cause read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Confirmation {
    /// The knob changed (the re-run's).
    pub knob: String,
    /// The efficiency the point measured again reached.
    pub efficiency: f64,
    /// The efficiency expected without this cause: the point's over the cause's ceiling, at
    /// most 1; where the run measured no ceiling (`least`), the least that tells (the point's
    /// × 1.1).
    pub expected: f64,
    /// The re-run gained half of the expected gain or more (in the log of the efficiency):
    /// the cause is confirmed; else it is dropped.
    pub confirmed: bool,
    /// The run had measured no ceiling for the cause: `expected` is the least gain that tells,
    /// and a confirming re-run's figure became the cause's ceiling (absent: false).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub least: bool,
}
