//! What `peakbench peak` writes: the theoretical peaks of a machine described rather than
//! measured — its CPU's per workload, its memory's, disk's and network's per figure — each
//! with its formula or why it has none (`peak --json`; computed by `app::peak`, shown by
//! `report::peaks`).

use crate::sysinfo::peak::{Peak, plausible};
use serde::Serialize;

/// One workload's peak, or why it has none on this core.
#[derive(Debug, Serialize)]
pub struct WorkloadPeak {
    pub workload: super::Workload,
    /// What the peak counts ("fp64 FMA", "int8 dot product").
    pub operation: String,
    pub peak: Option<Peak>,
    pub unknown_reason: Option<String>,
}

/// The CPU's peaks (the top level of `peak --json`).
#[derive(Debug, Serialize)]
pub struct PeakSheet {
    pub microarchitecture: &'static str,
    pub table_source: &'static str,
    pub note: &'static str,
    pub sockets: u32,
    pub cores_per_socket: u32,
    pub clock_ghz: f64,
    pub peaks: Vec<WorkloadPeak>,
}

/// One figure of a subsystem: its peak, or why it has none.
#[derive(Debug, Serialize)]
pub struct Figure {
    /// What it is ("bandwidth", "random read IOPS (4 KiB, QD 1)").
    pub figure: String,
    pub peak: Option<Peak>,
    pub unknown_reason: Option<String>,
    /// What physics says against a figure the user gave for it ([`plausible::check`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

impl Figure {
    pub fn of(figure: impl Into<String>, peak: Result<Peak, String>) -> Figure {
        Figure::at(figure, peak, 1)
    }

    /// A figure at a point of `workers` threads, its user-given inputs checked.
    pub fn at(figure: impl Into<String>, peak: Result<Peak, String>, workers: usize) -> Figure {
        let point = plausible::Point { workers, op: None };
        let warnings = peak.as_ref().map_or(Vec::new(), |p| {
            plausible::check(p, &plausible::Machine::default(), point)
        });
        Figure {
            figure: figure.into(),
            unknown_reason: peak.as_ref().err().cloned(),
            peak: peak.ok(),
            warnings,
        }
    }
}

/// A subsystem's figures as described.
#[derive(Debug, Serialize)]
pub struct Section {
    /// The machine part described, e.g. "4 channels × 2133 MT/s".
    pub described: String,
    pub peaks: Vec<Figure>,
}

/// The sections described (`memory`, `disk`, `network` in `peak --json`).
#[derive(Debug, Default, Serialize)]
pub struct Sections {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory: Option<Section>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub disk: Option<Section>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub network: Option<Section>,
}

impl Sections {
    pub fn is_empty(&self) -> bool {
        self.memory.is_none() && self.disk.is_none() && self.network.is_none()
    }

    /// Each section described with its title, in order.
    pub fn all(&self) -> impl Iterator<Item = (&'static str, &Section)> {
        [
            ("Memory", &self.memory),
            ("Disk", &self.disk),
            ("Network", &self.network),
        ]
        .into_iter()
        .filter_map(|(t, s)| Some((t, s.as_ref()?)))
    }
}

/// What `peak --json` writes: the CPU's sheet (its fields at the top level, as before the
/// other subsystems were added), then a section per other subsystem described.
#[derive(Debug, Serialize)]
pub struct PeakDocument {
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<PeakSheet>,
    #[serde(flatten)]
    pub others: Sections,
}

impl PeakDocument {
    pub fn is_empty(&self) -> bool {
        self.cpu.is_none() && self.others.is_empty()
    }
}
