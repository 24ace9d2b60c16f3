//! The result data every benchmark produces and every exporter reads: the JSON contract of
//! SPEC §6, documented in docs/json-schema.md and checked against docs/results.schema.json.

pub mod diagnosis;
pub mod fleet;
pub mod integrity;
pub mod kinds;
pub mod latency_params;
pub mod levels;
pub mod node_tag;
pub mod params;
pub mod peak_sheet;
pub mod phases;
mod planned;
pub mod point;
mod reading;
#[cfg(test)]
mod summary_bounds;
pub use reading::ReadError;
pub(crate) mod point_fields;
pub mod socket;
pub mod verify;

pub use crate::ids::{Metric, Subsystem, Unit};
use crate::measure::Summary;
pub use crate::measure::noise::Noise;
use crate::measure::stats::nan_as_null;
use crate::sysinfo::SystemInfo;
use crate::sysinfo::peak::Peak;
use crate::units;
pub use crate::workload::Workload;
use params::Params;
use serde::{Deserialize, Deserializer, Serialize};
use std::collections::BTreeMap;

/// Bumped whenever a field changes meaning or disappears. Version 4 stores every figure in a
/// base unit (op/s, B/s, bit/s, s); earlier versions stored the unit the benchmark or the
/// display options chose, and are converted when read.
pub const SCHEMA_VERSION: u32 = 4;

/// The first schema version whose figures are in base units.
pub const BASE_UNITS_SINCE: u32 = 4;

/// Which unit a figure of `subsystem` in `unit` goes to, and how (`None`: it stays).
pub type UnitMap<'a> = &'a dyn Fn(Subsystem, Unit) -> Option<units::Conversion>;

/// The tool that produced a document.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Tool {
    pub name: String,
    pub version: String,
}

impl Default for Tool {
    fn default() -> Self {
        Tool {
            name: "peakbench".into(),
            version: env!("CARGO_PKG_VERSION").into(),
        }
    }
}

/// The reference tool's figure for the same point.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Reference {
    pub tool: String,
    pub version: String,
    #[serde(deserialize_with = "nan_as_null::number")]
    pub mean: f64,
    pub efficiency: Option<f64>,
    /// The tool's figure of each of its runs (it runs as many times as the point was
    /// repeated), in the record's unit; `mean` is theirs. Empty in documents written before
    /// references were repeated. A figure that is not finite is written as `null` and read
    /// back as NaN.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "nan_as_null::numbers"
    )]
    pub samples: Vec<f64>,
    /// The spread of `samples` (as a record's own): standard deviation, least, greatest, and
    /// whether the coefficient of variation passes 5 %.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stddev: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<f64>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub noisy: bool,
    /// Every command line run for the figure (servers included), as typed in a shell.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub commands: Vec<String>,
    /// What the tool printed: each command (`$ …`) and the end of its output (8 KiB at most a
    /// run), control characters escaped.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub output: String,
    /// What the tool measured where it is not exactly the point ("sysbench takes the same
    /// blocks in sequence, not at random …"); absent where it is the point.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub differs: Option<String>,
    /// Whether the tool's runs alternated with the point's repetitions (one after each), so
    /// that both saw the machine at the same time; absent where they followed the point.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub interleaved: bool,
}

impl Reference {
    /// A reference figure from the tool's `samples` (one per run), with the evidence of its
    /// runs; its efficiency against `peak` where the record has one.
    pub fn measured(
        tool: &str,
        version: &str,
        samples: Vec<f64>,
        efficiency: impl Fn(f64) -> Option<f64>,
        (commands, output): (Vec<String>, String),
    ) -> Reference {
        let s = crate::measure::stats::Summary::of(&samples);
        let mean = s.as_ref().map_or(f64::NAN, |s| s.mean);
        Reference {
            tool: tool.into(),
            version: version.into(),
            mean,
            efficiency: efficiency(mean).filter(|e| e.is_finite()),
            stddev: s.as_ref().map(|s| s.stddev),
            min: s.as_ref().map(|s| s.min),
            max: s.as_ref().map(|s| s.max),
            noisy: s.as_ref().is_some_and(|s| s.noisy),
            samples,
            commands,
            output,
            differs: None,
            interleaved: false,
        }
    }
}

/// One measured point. A non-finite statistic or sample is written as `null` and read back as
/// NaN.
#[derive(Debug, Clone, Serialize)]
pub struct ResultRecord {
    pub subsystem: Subsystem,
    pub workload: Workload,
    /// The point's parameters (threads, isa, scaling, …) and what the harness chose (iterations).
    pub params: Params,
    pub metric: Metric,
    pub unit: Unit,
    #[serde(flatten)]
    pub summary: Summary,
    #[serde(deserialize_with = "nan_as_null::numbers")]
    pub samples: Vec<f64>,
    /// Untimed rounds run before the samples (cpu and mem; disk and net state their own ramp
    /// and omit in their parameters).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warmup_rounds: Option<usize>,
    #[serde(default, deserialize_with = "nan_as_null::number_map")]
    pub percentiles: Option<BTreeMap<String, f64>>,
    pub peak: Option<Peak>,
    /// Why `peak` is null.
    pub peak_unknown_reason: Option<String>,
    /// mean / peak, 0–1 (may exceed 1 when a peak input is wrong).
    pub efficiency: Option<f64>,
    pub reference: Option<Reference>,
    /// The other tools' figures for the same point, where more than one measures it (sysbench
    /// fileio beside fio); `reference` is the preferred tool's, which the tables show.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub other_references: Vec<Reference>,
    /// Why `reference` is null when a reference was asked for (`--reference`): no tool
    /// measures the point, its tool is missing, or refused it or failed — with the reason.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference_unknown_reason: Option<String>,
    /// What a reader must not miss about this point (an efficiency above 100 % under a
    /// user-given peak input); absent when there is nothing.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// The figure per interval of the last repetition (as fio's and iperf3's per-second
    /// lines), where the benchmark keeps one: stalls and warm-up show there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intervals: Option<Intervals>,
    /// The levels the figure went through interval by interval, over every repetition (a burst
    /// that ended, a throttle, a slow start: [`phases`]); absent where it kept one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phases: Option<Vec<phases::Phase>>,
    /// `--sustain`: the longest a repetition could run and when each was steady; absent
    /// without it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sustain: Option<phases::Sustain>,
    /// What else the machine did while the point was measured, and the interference that
    /// shows ([`Noise`]); absent for points not measured here (a mock session's, an earlier
    /// version's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub noise: Option<Noise>,
    /// Why the point stays below 90 % of its peak (or went above 110 %), cause by cause
    /// (written by the JSON exporter from the whole run; absent between or without a peak).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diagnosis: Option<diagnosis::Diagnosis>,
    /// `--diagnose`: this point is another measured again with one knob changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rerun: Option<diagnosis::Rerun>,
    /// `--precision`: the half width asked for and reached, over how many measurements and
    /// repetitions of the point; absent without it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub precision: Option<crate::measure::precision::Reached>,
}

/// A point's figure per interval of its last repetition, in the record's unit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Intervals {
    /// The length of each interval, from the end of the ramp.
    pub interval_s: f64,
    #[serde(deserialize_with = "nan_as_null::numbers")]
    pub values: Vec<f64>,
}

impl ResultRecord {
    /// A point from its raw samples: statistics, and efficiency against `peak` (or the reason
    /// there is no peak). Samples that cannot be summarised (none, or not finite) give NaN
    /// statistics flagged noisy. `unit` is the benchmark's own (GOPS, MB/s, µs, …); the record
    /// stores its figures, and the peak's, in the base unit ([`Unit::to_base`]).
    pub fn new(
        workload: impl Into<Workload>,
        params: impl Into<Params>,
        metric: Metric,
        unit: Unit,
        samples: Vec<f64>,
        peak: Result<Peak, String>,
    ) -> ResultRecord {
        let summary = Summary::of(&samples).unwrap_or(Summary {
            mean: f64::NAN,
            stddev: f64::NAN,
            min: f64::NAN,
            max: f64::NAN,
            median: f64::NAN,
            cv: f64::NAN,
            noisy: true,
            ci95: None,
        });
        let (peak, peak_unknown_reason) = match peak {
            Ok(p) => (Some(p), None),
            Err(r) => (None, Some(r)),
        };
        let efficiency = peak
            .as_ref()
            .map(|p| metric.efficiency(summary.mean, p.value));
        let mut warnings = Vec::new();
        if let (Some(p), Some(e)) = (&peak, efficiency)
            && e > 1.0
            && e.is_finite()
        {
            let user: Vec<&str> = p
                .inputs
                .iter()
                .filter(|(_, i)| i.source == crate::sysinfo::Source::User)
                .map(|(k, _)| k.as_str())
                .collect();
            if !user.is_empty() {
                warnings.push(format!(
                    "efficiency {:.1} % is above 100 % with user-given {}: that input is too low for this machine",
                    e * 100.0,
                    user.join(", ")
                ));
            }
        }
        let workload = workload.into();
        ResultRecord {
            subsystem: workload.subsystem(),
            workload,
            params: params.into(),
            metric,
            unit,
            summary,
            samples,
            warmup_rounds: None,
            percentiles: None,
            peak,
            peak_unknown_reason,
            efficiency,
            reference: None,
            other_references: Vec::new(),
            reference_unknown_reason: None,
            warnings,
            intervals: None,
            phases: None,
            sustain: None,
            noise: None,
            diagnosis: None,
            rerun: None,
            precision: None,
        }
        .converted(&|_, unit| units::Conversion::to_base(unit))
    }

    /// Adds the warnings a reader of this point must not miss that the point itself shows, for a
    /// point measured here by a process that may use `cpus` CPUs: more compute threads than
    /// CPUs (oversubscribed: its efficiency is of a share of the cores), or a disk target in
    /// memory (tmpfs, ramfs: RAM measured, not a disk, and O_DIRECT has no effect there).
    /// `quota` is the CPUs' worth of time its control group allows (cgroup CPU quota), if any:
    /// a CPU or memory point with more threads than that can reach only that share of its peak.
    pub fn add_notices(&mut self, cpus: usize, quota: Option<f64>) {
        let threads = self.params.threads();
        let computes = matches!(self.subsystem, Subsystem::Cpu | Subsystem::Mem);
        if computes && cpus > 0 && threads > cpus {
            self.warnings.push(format!(
                "oversubscribed: {threads} threads on the {cpus} CPUs this process may use, so each thread has a share of a core"
            ));
        }
        if let Some(q) = quota.filter(|q| computes && *q < threads.min(cpus.max(1)) as f64) {
            self.params.set_cpu_quota(q);
            self.warnings.push(format!(
                "CPU quota: this process may use {q:.2} CPUs' worth of time (its cgroup's quota), so {} can reach at most {:.1} % of the peak",
                its_threads(threads),
                100.0 * q / threads as f64
            ));
        }
        if let Some(fs) = self
            .params
            .disk()
            .and_then(|d| d.file_system.as_deref())
            .filter(|fs| matches!(*fs, "tmpfs" | "ramfs"))
        {
            self.warnings.push(format!(
                "the target is on {fs}: this measured memory, not a disk (O_DIRECT has no effect there); give --dir on the disk to measure"
            ));
        }
    }

    /// The point's noise between two snapshots around its measurement (its interference is
    /// said in the notes, never among the warnings: a test machine's parallel tests are a
    /// co-runner that no record's warnings should depend on).
    pub fn add_noise(
        &mut self,
        before: &crate::measure::noise::NoiseSnapshot,
        after: &crate::measure::noise::NoiseSnapshot,
    ) {
        let cpu_bound = matches!(self.subsystem, Subsystem::Cpu | Subsystem::Mem);
        self.noise = Some(before.until(after, cpu_bound));
    }

    /// Adds a warning for each user-given input of its peak that the machine or physics
    /// contradicts ([`plausible::check`]), naming the value expected; `op`: a CPU point's
    /// operation (its `--ops-per-cycle` is checked against the table's for it).
    ///
    /// [`plausible::check`]: crate::sysinfo::peak::plausible::check
    pub fn check_inputs(
        &mut self,
        machine: &crate::sysinfo::peak::plausible::Machine,
        op: Option<crate::sysinfo::peak::OpClass>,
    ) {
        use crate::sysinfo::peak::plausible::{Point, check};
        let Some(peak) = &self.peak else { return };
        let point = Point {
            workers: self.params.threads(),
            op,
        };
        for w in check(peak, machine, point) {
            if !self.warnings.contains(&w) {
                self.warnings.push(w);
            }
        }
    }

    /// What [`units::Display::fitted`] fits a unit to: its subsystem, unit and mean.
    pub fn figure(&self) -> (Subsystem, Unit, f64) {
        (self.subsystem, self.unit, self.summary.mean)
    }

    /// The record with its derived figures finite, as the JSON document and the database must
    /// hold them (JSON has no NaN or infinity: serde writes them as `null`, where a reader of
    /// `peak.value` expects a number). A peak that is not a finite number, or has an
    /// input that is not finite ([`Peak::not_finite`]: an input beyond any machine overflowed
    /// it, a conversion to base units did, or a stored document holds `null` there), becomes
    /// unknown with the reason, and its efficiency with it. An efficiency that is not finite
    /// is unknown: where the mean and the peak are numbers (a latency of 0 against its floor)
    /// a warning says why. An efficiency without a peak or a mean (a conversion to base units
    /// overflowed the mean) is unknown. A reference's efficiency likewise.
    pub fn with_finite_figures(mut self) -> ResultRecord {
        if let Some(why) = self.peak.as_ref().and_then(Peak::not_finite) {
            self.peak = None;
            self.peak_unknown_reason = Some(why);
            self.efficiency = None;
        }
        // mean ÷ peak: unknown with either.
        if self.peak.is_none() || !self.summary.mean.is_finite() {
            self.efficiency = None;
        }
        if let Some(e) = self.efficiency.filter(|e| !e.is_finite()) {
            self.efficiency = None;
            if let Some(p) = self.peak.as_ref().filter(|_| self.summary.mean.is_finite()) {
                self.warnings.push(format!(
                    "the efficiency is not a finite number ({e:?} from a mean of {:?} {} and a peak of {:?} {}): it is left unknown",
                    self.summary.mean, self.unit, p.value, p.unit
                ));
            }
        }
        for r in self
            .reference
            .iter_mut()
            .chain(self.other_references.iter_mut())
        {
            r.efficiency = r.efficiency.filter(|e| e.is_finite());
        }
        // Percentiles as a run names them: min, max and canonical `pNN` keys, no more than
        // a list may name (a document's own keys would make a column each in the CSV).
        if let Some(p) = self.percentiles.as_mut() {
            use crate::measure::latency::Percentiles;
            p.retain(|k, _| {
                k == "min"
                    || k == "max"
                    || Percentiles::of_key(k).is_some_and(|q| Percentiles::key(q) == *k)
            });
            while p.len() > Percentiles::MOST + 2 {
                p.pop_last();
            }
        }
        // A confidence interval around the mean, or none.
        let s = &self.summary;
        self.summary.ci95 = s
            .ci95
            .filter(|[lo, hi]| lo.is_finite() && hi.is_finite() && lo <= &s.mean && &s.mean <= hi);
        // Phases as a measurement makes them, or none (a document's hostile or broken list).
        self.phases = self.phases.take().filter(|p| phases::plausible(p));
        // `--sustain`'s steady times likewise (a disk's, in its parameters, from the builds of
        // 2026-11-29).
        if let Params::Disk(d) = &mut self.params
            && let Some(steady_s) = d.steady_s.take()
        {
            self.sustain.get_or_insert(phases::Sustain {
                max_s: d.runtime_s,
                steady_s,
            });
        }
        let reps = self.samples.len();
        self.sustain = self.sustain.take().filter(|s| s.plausible(reps));
        self
    }

    /// The measured time of its last repetition as its intervals cover it (whole intervals).
    pub fn intervals_s(&self) -> Option<f64> {
        (self.intervals.as_ref()).map(|i| i.values.len() as f64 * i.interval_s)
    }

    /// `--sustain`: when its last repetition was steady (None: never, or no `--sustain`).
    pub fn last_steady_s(&self) -> Option<f64> {
        (self.sustain.as_ref()).and_then(|s| s.steady_s.last().copied().flatten())
    }

    /// The burst this point's phases show, on a figure where more is better
    /// ([`phases::burst`]): (the burst, the phase it settled to).
    pub fn burst(&self) -> Option<(&phases::Phase, &phases::Phase)> {
        if self.metric.lower_is_better() {
            return None;
        }
        phases::burst(self.phases.as_deref()?)
    }

    /// The figure the tables lead with: the rate the point kept after a burst (its last
    /// phase), else the mean of its repetitions. A burst the machine cannot keep is no figure
    /// to size by; the mean, which counts it, stays in `summary`.
    pub fn headline(&self) -> f64 {
        self.burst()
            .map_or(self.summary.mean, |(_, then)| then.value)
    }

    /// The efficiency of [`Self::headline`]: `efficiency` where the point kept one level.
    pub fn headline_efficiency(&self) -> Option<f64> {
        match self.burst() {
            None => self.efficiency,
            Some(_) => self
                .peak
                .as_ref()
                .map(|p| self.metric.efficiency(self.headline(), p.value))
                .filter(|e| e.is_finite()),
        }
    }

    /// The record with its figures, and its peak's, converted by `map` (given the subsystem
    /// and the unit). Efficiencies, coefficients of variation and parameters do not change; a
    /// peak that the conversion overflows becomes unknown ([`Self::with_finite_figures`]).
    pub fn converted(mut self, map: UnitMap) -> ResultRecord {
        if let Some(c) = map(self.subsystem, self.unit) {
            let s = &mut self.summary;
            for v in [
                &mut s.mean,
                &mut s.stddev,
                &mut s.min,
                &mut s.max,
                &mut s.median,
            ] {
                *v = c.apply(*v);
            }
            for v in self.samples.iter_mut() {
                *v = c.apply(*v);
            }
            if let Some([lo, hi]) = s.ci95 {
                let (a, b) = (c.apply(lo), c.apply(hi));
                s.ci95 = Some([a.min(b), a.max(b)]);
            }
            for v in self.percentiles.iter_mut().flat_map(|p| p.values_mut()) {
                *v = c.apply(*v);
            }
            if let Some(r) = self.reference.as_mut() {
                r.mean = c.apply(r.mean);
                for v in r.samples.iter_mut().chain(
                    [&mut r.stddev, &mut r.min, &mut r.max]
                        .into_iter()
                        .flatten(),
                ) {
                    *v = c.apply(*v);
                }
            }
            for v in self.intervals.iter_mut().flat_map(|i| i.values.iter_mut()) {
                *v = c.apply(*v);
            }
            for p in self.phases.iter_mut().flatten() {
                p.value = c.apply(p.value);
            }
            self.unit = c.unit;
        }
        if let Some(p) = self.peak.as_mut()
            && let Some(c) = map(self.subsystem, p.unit)
        {
            p.value = c.apply(p.value);
            p.unit = c.unit;
        }
        self.with_finite_figures()
    }
}

/// A record as the JSON document holds it: its parameters are decoded once the subsystem and
/// workload are known.
#[derive(Deserialize)]
struct WireRecord {
    subsystem: Subsystem,
    workload: String,
    params: serde_json::Value,
    metric: Metric,
    unit: Unit,
    #[serde(flatten)]
    summary: Summary,
    #[serde(deserialize_with = "nan_as_null::numbers")]
    samples: Vec<f64>,
    #[serde(default)]
    warmup_rounds: Option<usize>,
    #[serde(default, deserialize_with = "nan_as_null::number_map")]
    percentiles: Option<BTreeMap<String, f64>>,
    peak: Option<Peak>,
    peak_unknown_reason: Option<String>,
    efficiency: Option<f64>,
    reference: Option<Reference>,
    #[serde(default)]
    other_references: Vec<Reference>,
    #[serde(default)]
    reference_unknown_reason: Option<String>,
    #[serde(default)]
    warnings: Vec<String>,
    #[serde(default)]
    intervals: Option<Intervals>,
    #[serde(default)]
    phases: Option<Vec<phases::Phase>>,
    #[serde(default)]
    sustain: Option<phases::Sustain>,
    #[serde(default)]
    noise: Option<Noise>,
    #[serde(default)]
    diagnosis: Option<diagnosis::Diagnosis>,
    #[serde(default)]
    rerun: Option<diagnosis::Rerun>,
    #[serde(default)]
    precision: Option<crate::measure::precision::Reached>,
}

impl<'de> Deserialize<'de> for ResultRecord {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let w = WireRecord::deserialize(d)?;
        let workload =
            Workload::named(w.subsystem, &w.workload).map_err(serde::de::Error::custom)?;
        let params = Params::decode(workload, w.params).map_err(serde::de::Error::custom)?;
        Ok(ResultRecord {
            subsystem: w.subsystem,
            workload,
            params,
            metric: w.metric,
            unit: w.unit,
            summary: w.summary,
            samples: w.samples,
            warmup_rounds: w.warmup_rounds,
            percentiles: w.percentiles,
            peak: w.peak,
            peak_unknown_reason: w.peak_unknown_reason,
            efficiency: w.efficiency,
            reference: w.reference,
            other_references: w.other_references,
            reference_unknown_reason: w.reference_unknown_reason,
            warnings: w.warnings,
            intervals: w.intervals,
            phases: w.phases,
            sustain: w.sustain,
            noise: w.noise,
            diagnosis: w.diagnosis,
            rerun: w.rerun,
            precision: w.precision,
        }
        .with_finite_figures())
    }
}

/// A whole run: where it came from and every point measured so far. It reads back from the
/// JSON document that `--json` writes.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Report {
    pub schema_version: u32,
    pub tool: Tool,
    pub started_at: String,
    pub command_line: Vec<String>,
    pub system: SystemInfo,
    pub results: Vec<ResultRecord>,
    /// A multi-node run's nodes, outliers and network matrices (since version 3; absent for
    /// one machine).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fleet: Option<fleet::Fleet>,
    /// `peakbench verify`'s checks: each imposed ceiling against what was measured (absent for
    /// other runs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verification: Option<verify::Verification>,
    /// The hex SHA-256 of the document's content ([`Report::content_sha256`], `integrity.rs`),
    /// set by the JSON exporter; absent in documents written before it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
}

/// The command line as it is recorded: the value of `--token` (a shared secret) replaced by
/// `***`, whether it follows the option or is joined to it by `=`.
pub fn redacted(mut argv: Vec<String>) -> Vec<String> {
    let mut hide_next = false;
    for a in argv.iter_mut() {
        if hide_next {
            *a = "***".into();
            hide_next = false;
        } else if a == "--token" {
            hide_next = true;
        } else if a.starts_with("--token=") {
            *a = "--token=***".into();
        }
    }
    argv
}

impl Report {
    /// A report read back from an earlier schema version in this version's form: figures in
    /// base units.
    pub fn upgraded(self) -> Report {
        if self.schema_version >= BASE_UNITS_SINCE {
            return self;
        }
        let mut r = self.converted(&|_, unit| units::Conversion::to_base(unit));
        r.schema_version = SCHEMA_VERSION;
        r
    }

    /// The report with its figures in the units `display` shows (for the exporters that
    /// print; the JSON document keeps base units).
    /// Times are shown in the unit that suits this report's figures, unless `display` has
    /// one for them already ([`units::Display::fitted`]).
    pub fn displayed(&self, display: &units::Display) -> Report {
        self.clone().into_displayed(display)
    }

    /// [`Report::displayed`] of a report no longer needed as it is (no copy of it).
    pub fn into_displayed(self, display: &units::Display) -> Report {
        let display = display.fitted(self.results.iter().map(ResultRecord::figure));
        self.converted(&|subsystem, unit| display.conversion(subsystem, unit))
    }

    fn converted(mut self, map: UnitMap) -> Report {
        self.results = std::mem::take(&mut self.results)
            .into_iter()
            .map(|r| r.converted(map))
            .collect();
        if let Some(f) = self.fleet.as_mut() {
            f.convert(map);
        }
        for c in self
            .verification
            .iter_mut()
            .flat_map(|v| v.checks.iter_mut())
        {
            if c.unit == Unit::Seconds {
                // A check's time in the unit that suits its own figures (a delay in ms, a
                // switch in s), not the points' latencies.
                let own = units::Display::default().fitted(
                    [c.expected, c.measured]
                        .into_iter()
                        .flatten()
                        .map(|v| (c.subsystem, c.unit, v)),
                );
                c.convert(&|subsystem, unit| own.conversion(subsystem, unit));
            } else {
                c.convert(map);
            }
        }
        self
    }

    /// A report of `command_line` (its secrets hidden: see [`redacted`]) on `system`.
    pub fn new(system: SystemInfo, command_line: Vec<String>) -> Report {
        Report {
            schema_version: SCHEMA_VERSION,
            tool: Tool::default(),
            started_at: humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
            command_line: redacted(command_line),
            system,
            results: Vec::new(),
            fleet: None,
            verification: None,
            sha256: None,
        }
    }
}

/// A point's threads in a sentence: "its thread", "its 4 threads".
pub fn its_threads(threads: usize) -> String {
    if threads == 1 {
        "its thread".into()
    } else {
        format!("its {threads} threads")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sysinfo::Source;
    use crate::sysinfo::peak::PeakInput;

    /// A CPU point of `samples` in GOPS against a user's peak of `gops` per core.
    pub(super) fn cpu_point(samples: Vec<f64>, gops: f64) -> ResultRecord {
        let params = Params::with_defaults(
            crate::results::Workload::Cpu(crate::workload::cpu::CpuWorkload::Dp),
            serde_json::json!({"threads": 1, "isa": "avx2", "iterations_per_thread": 1}),
        )
        .unwrap();
        let input = PeakInput {
            value: gops,
            unit: "GOPS".into(),
            source: Source::User,
        };
        let peak = Peak {
            value: gops,
            unit: Unit::Gops,
            formula: "cores × peak_per_core".into(),
            inputs: BTreeMap::from([("peak_per_core".to_string(), input)]),
        };
        ResultRecord::new(
            crate::results::Workload::Cpu(crate::workload::cpu::CpuWorkload::Dp),
            params,
            Metric::Throughput,
            Unit::Gops,
            samples,
            Ok(peak),
        )
    }

    /// A peak of 10³⁰⁸ GOPS is infinite in op/s: the point has no peak and says why, and its
    /// document has a number or a reason everywhere, never `null` where a number is read.
    #[test]
    fn a_peak_that_overflows_is_unknown_with_the_reason() {
        let rec = cpu_point(vec![40.0, 42.0], 1e308);
        assert!(rec.peak.is_none() && rec.efficiency.is_none(), "{rec:?}");
        let why = rec.peak_unknown_reason.as_deref().unwrap();
        assert!(why.contains("not a finite number"), "{why}");
        assert!(
            why.contains("peak_per_core 1e308 GOPS") && !why.contains('\n'),
            "{why}"
        );
        let doc = serde_json::to_value(&rec).unwrap();
        assert!(
            doc["peak"].is_null() && doc["efficiency"].is_null(),
            "{doc}"
        );
        let back: ResultRecord = serde_json::from_value(doc).unwrap();
        assert_eq!(back.peak_unknown_reason.as_deref(), Some(why));
        // A peak within bounds is kept.
        let ok = cpu_point(vec![40.0, 42.0], 50.0);
        assert_eq!(ok.peak.as_ref().map(|p| p.value), Some(50e9));
        assert_eq!(ok.efficiency, Some(0.82));
    }

    /// A record stored by a peakbench that let its peak overflow holds `null` (or nothing)
    /// where the peak's value or an input's is: it reads back with the peak unknown and why.
    #[test]
    fn a_stored_null_peak_reads_as_unknown() {
        let good = serde_json::to_value(cpu_point(vec![40.0, 42.0], 50.0)).unwrap();
        let mut null_value = good.clone();
        null_value["peak"]["value"] = serde_json::Value::Null;
        let mut no_value = good.clone();
        no_value["peak"].as_object_mut().unwrap().remove("value");
        let mut null_input = good.clone();
        null_input["peak"]["inputs"]["peak_per_core"]["value"] = serde_json::Value::Null;
        for doc in [null_value, no_value, null_input] {
            let rec: ResultRecord = serde_json::from_value(doc.clone()).unwrap();
            assert!(rec.peak.is_none() && rec.efficiency.is_none(), "{doc}");
            let why = rec.peak_unknown_reason.unwrap();
            assert!(why.contains("not a finite number"), "{why}");
        }
        // A mean that is not a number (`null`) has no efficiency, whatever the document says.
        let mut null_mean = good.clone();
        null_mean["mean"] = serde_json::Value::Null;
        let rec: ResultRecord = serde_json::from_value(null_mean).unwrap();
        assert_eq!((rec.peak.is_some(), rec.efficiency), (true, None));
        let rec: ResultRecord = serde_json::from_value(good).unwrap();
        assert_eq!(rec.peak.map(|p| p.value), Some(50e9));
        assert_eq!(rec.efficiency, Some(0.82));
    }

    /// An efficiency that is not finite (a latency of 0 against its floor) is unknown, with a
    /// warning; a reference's likewise; the peak stays.
    #[test]
    fn an_infinite_efficiency_is_unknown_with_a_warning() {
        let params = Params::with_defaults(
            crate::results::Workload::Mem(crate::workload::mem::MemWorkload::Latency),
            serde_json::json!({"threads": 1}),
        )
        .unwrap();
        let floor = Peak {
            value: 80.0,
            unit: Unit::Nanos,
            formula: "rated".into(),
            inputs: BTreeMap::from([(
                "rated".to_string(),
                PeakInput {
                    value: 80.0,
                    unit: "ns".into(),
                    source: Source::User,
                },
            )]),
        };
        let rec = ResultRecord::new(
            crate::results::Workload::Mem(crate::workload::mem::MemWorkload::Latency),
            params,
            Metric::Latency,
            Unit::Nanos,
            vec![0.0, 0.0],
            Ok(floor),
        );
        assert!(rec.peak.is_some() && rec.efficiency.is_none(), "{rec:?}");
        assert_eq!(rec.warnings.len(), 1, "{:?}", rec.warnings);
        assert!(rec.warnings[0].contains("not a finite number"));
        let reference = Reference::measured(
            "t",
            "1",
            vec![0.0],
            |_| Some(f64::INFINITY),
            Default::default(),
        );
        assert_eq!(reference.efficiency, None);
    }

    /// A token given on the command line is never written to a result or the database.
    #[test]
    fn the_token_is_not_recorded() {
        let argv = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            redacted(argv(&[
                "peakbench",
                "net",
                "--token",
                "s3cret",
                "--streams",
                "2"
            ])),
            argv(&["peakbench", "net", "--token", "***", "--streams", "2"])
        );
        assert_eq!(
            redacted(argv(&[
                "peakbench",
                "net",
                "--token=s3cret",
                "--token-file",
                "f"
            ])),
            argv(&["peakbench", "net", "--token=***", "--token-file", "f"])
        );
        assert_eq!(redacted(argv(&["x", "--token"])), argv(&["x", "--token"]));
    }
}

#[cfg(test)]
mod input_checks {
    use super::*;
    use crate::sysinfo::peak::plausible::Machine;
    use crate::sysinfo::smbios::MemoryDevice;

    /// The recorded quick and assignment profiles' own peaks (no user input) draw no
    /// warning, even on a machine whose DIMMs SMBIOS lists; a memory point with a user-given
    /// peak of 940.653 GB/s on four DDR4-2133 channels draws one naming 68.26 GB/s, once.
    #[test]
    fn only_user_given_inputs_are_questioned() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/history");
        let dimms: Vec<MemoryDevice> = (0..4)
            .map(|i| MemoryDevice {
                locator: format!("DIMM_{i}"),
                size_bytes: 8 << 30,
                data_width_bits: 64,
                speed_mts: Some(2133),
                configured_mts: Some(2133),
            })
            .collect();
        let mut checked = 0;
        for name in ["quick.json", "assignment.json"] {
            let r = Report::from_json(&std::fs::read(dir.join(name)).unwrap()).unwrap();
            let machine = Machine {
                dimms: Some(&dimms),
                ..Machine::of(&r.system)
            };
            for rec in &r.results {
                let mut checked_rec = rec.clone();
                let op = (rec.subsystem == Subsystem::Cpu)
                    .then_some(crate::sysinfo::peak::OpClass::Fma { element_bits: 64 });
                checked_rec.check_inputs(&machine, op);
                assert_eq!(checked_rec.warnings, rec.warnings, "{name}: {rec:?}");
                checked += usize::from(rec.peak.is_some());
            }
        }
        assert!(checked >= 40, "{checked} peaks");
        let machine = Machine {
            dimms: Some(&dimms),
            ..Default::default()
        };
        let user = crate::sysinfo::peak::MemPeakOverrides {
            gbs: Some(940.653),
            ..Default::default()
        };
        let peak = crate::sysinfo::peak::mem_peak(&crate::sysinfo::Fact::unknown("x"), &user);
        let params = Params::with_defaults(
            crate::results::Workload::Mem(crate::workload::mem::MemWorkload::Rws),
            serde_json::json!({"threads": 1}),
        )
        .unwrap();
        let mut rec = ResultRecord::new(
            crate::results::Workload::Mem(crate::workload::mem::MemWorkload::Rws),
            params,
            Metric::Throughput,
            Unit::GBPerSec,
            vec![20.0, 20.0],
            peak,
        );
        rec.check_inputs(&machine, None);
        rec.check_inputs(&machine, None);
        assert_eq!(rec.warnings.len(), 1, "{:?}", rec.warnings);
        assert!(
            rec.warnings[0].contains("give 68.26 GB/s") || rec.warnings[0].contains("68.26 GB/s")
        );
    }
}
