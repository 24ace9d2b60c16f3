//! A point's diagnosis as a document holds it: why it stays below its peak, cause by cause,
//! each with the share of the gap it explains (computed by `report::diagnosis`).

use serde::{Deserialize, Serialize};

/// Why a point stays below its peak.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Diagnosis {
    /// The point's efficiency (its figure over its peak, 0–1); the gap is 1 − efficiency.
    pub efficiency: f64,
    /// The causes the run measured, the largest share first.
    pub causes: Vec<Cause>,
    /// The share of the gap (0–1) that no cause's measured share explains.
    pub unexplained: f64,
}

/// One cause of a point's gap to its peak.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cause {
    /// Its name (docs/diagnosis.md): `isa`, `clock`, `cpu-quota`, `oversubscription`,
    /// `co-runner`, `steal`, `problem-size`, `workers`, `contention`, `page-cache`,
    /// `queue-depth`, `loss`.
    pub cause: String,
    /// The highest efficiency the point could reach were this the only cause (0–1), where the
    /// run measures it; null where it does not.
    pub ceiling: Option<f64>,
    /// Its share of the gap (0–1): ln(ceiling) / ln(efficiency), the causes' effects
    /// multiplying; scaled down with the others where together they explain more than the gap.
    /// Null where the ceiling is.
    pub share: Option<f64>,
    /// The cause in words, with the figures it rests on.
    pub text: String,
}
