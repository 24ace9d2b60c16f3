//! A record as a row of the tables (SPEC §4's columns, formatted once for the terminal, Markdown
//! and CSV): its variant, its figures, its efficiencies.

use crate::results::ResultRecord;
use crate::results::Subsystem;
use crate::results::point::Fields;
use crate::units::format_sig;

/// The mark of a figure that is the rate a point kept after a burst ([`ResultRecord::headline`]).
pub const BURST_MARK: &str = " ↓";

/// What [`BURST_MARK`] means, under a table that has one.
pub const BURST_NOTE: &str = "↓ the rate the point kept after a burst (the findings say how high and how long the burst was); the mean over the whole run, which counts the burst, is in the JSON document";

/// A figure of `rec` for a table: its [`ResultRecord::headline`], marked where it is the rate
/// after a burst.
pub fn headline_cell(rec: &ResultRecord) -> String {
    let mark = if rec.burst().is_some() {
        BURST_MARK
    } else {
        ""
    };
    format!("{}{mark}", format_sig(rec.headline()))
}

/// The columns of SPEC §4 for one record, already formatted; shared by the terminal table,
/// Markdown and the row order of CSV so that they cannot drift apart.
pub struct Row {
    pub workload: String,
    /// Network points: the transport, a column of its own as the reports have it.
    pub protocol: Option<String>,
    pub concurrency: String,
    pub variant: String,
    pub measured: String,
    pub reference: String,
    pub theoretical: String,
    pub efficiency: String,
    pub reference_efficiency: String,
    pub stddev: String,
}

pub(crate) fn percent(fraction: Option<f64>) -> String {
    fraction.map_or_else(|| "—".to_string(), |f| format!("{:.1}", f * 100.0))
}

/// The "variant" column, and where the point ran in a multi-node run: "node 2", or the link
/// "pairs 0→1".
pub(crate) fn variant(rec: &ResultRecord) -> String {
    variant_of(rec, true)
}

/// [`variant`], with a network point's protocol or without it (where a table gives it a
/// column); a point `--diagnose` measured again with a knob turned says so.
pub(crate) fn variant_of(rec: &ResultRecord, with_protocol: bool) -> String {
    let v = placed_variant(rec, with_protocol);
    match (&rec.rerun, v.is_empty()) {
        (None, _) => v,
        (Some(_), true) => "(--diagnose)".into(),
        (Some(_), false) => format!("{v} (--diagnose)"),
    }
}

/// [`variant_of`] but a re-run's mark.
fn placed_variant(rec: &ResultRecord, with_protocol: bool) -> String {
    let mut v = rec.params.variant(rec.metric, with_protocol);
    if let Some(q) = rec.params.cpu_quota() {
        v.push_str(&format!(" quota {q} CPUs"));
    }
    let link = rec.params.net().and_then(|n| n.between.as_ref());
    let place = match (link, rec.params.node().node) {
        (Some(l), _) => format!("{} {}→{}", l.pattern, l.src_node, l.dst_node),
        (None, Some(n)) => format!("node {n}"),
        _ => return v,
    };
    if v.is_empty() {
        place
    } else {
        format!("{v} {place}")
    }
}

/// Formats one record for a table.
pub fn row(rec: &ResultRecord) -> Row {
    let protocol = rec.params.net().map(|n| n.protocol.name().to_string());
    let variant = variant_of(rec, protocol.is_none());
    Row {
        workload: rec.workload.name().to_string(),
        protocol,
        concurrency: rec.params.threads().to_string(),
        variant: if variant.is_empty() {
            "—".into()
        } else {
            variant
        },
        measured: headline_cell(rec),
        reference: rec
            .reference
            .as_ref()
            .map_or_else(|| "—".into(), |r| format_sig(r.mean)),
        theoretical: rec
            .peak
            .as_ref()
            .map_or_else(|| "unknown".into(), |p| format_sig(p.value)),
        efficiency: efficiency_cell(rec),
        reference_efficiency: percent(rec.reference.as_ref().and_then(|r| r.efficiency)),
        stddev: format!(
            "{}{}",
            format_sig(rec.summary.stddev),
            if rec.summary.noisy { " !" } else { "" }
        ),
    }
}

/// The efficiency, "unknown (clock)" where the peak needs a clock that is unknown, flagged
/// where a user-given input made it exceed 100 %, and marked `!` where the point has another
/// warning (printed under the table).
pub(crate) fn efficiency_cell(rec: &ResultRecord) -> String {
    let clock_unknown = rec
        .peak_unknown_reason
        .as_deref()
        .is_some_and(|r| r.starts_with(crate::sysinfo::peak::CLOCK_UNKNOWN));
    match rec.headline_efficiency() {
        None if clock_unknown => "unknown (clock)".into(),
        e if rec.warnings.is_empty() => percent(e),
        Some(e) if e > 1.0 => format!("{} (! above peak: user input)", percent(Some(e))),
        e => format!("{} !", percent(e)),
    }
}

/// Which reference columns a table shows: none when no point has a reference figure.
pub(crate) fn keep(column: usize, with_reference: bool) -> bool {
    with_reference || !matches!(column, 4 | 7)
}

/// A table's headers, with `unit` where values carry it; `reference` names the reference tools
/// of its rows ("fio", "STREAM, likwid-bench"), where any row has one; a network table has a
/// Protocol column after the workload.
pub fn headers(unit: &str, variant: &str, reference: Option<&str>, protocol: bool) -> Vec<String> {
    let tool = reference.unwrap_or("reference");
    let mut out: Vec<String> = [
        "Workload".into(),
        "Concurrency".into(),
        variant.into(),
        format!("peakbench measured ({unit})"),
        format!("{tool} measured ({unit})"),
        format!("theoretical ({unit})"),
        "peakbench efficiency %".into(),
        format!("{tool} efficiency %"),
        format!("std dev ({unit})"),
    ]
    .into_iter()
    .enumerate()
    .filter(|(i, _)| keep(*i, reference.is_some()))
    .map(|(_, h)| h)
    .collect();
    if protocol {
        out.insert(1, "Protocol".into());
    }
    out
}

impl Row {
    pub fn cells(self, with_reference: bool) -> Vec<String> {
        let protocol = self.protocol;
        let mut out: Vec<String> = [
            self.workload,
            self.concurrency,
            self.variant,
            self.measured,
            self.reference,
            self.theoretical,
            self.efficiency,
            self.reference_efficiency,
            self.stddev,
        ]
        .into_iter()
        .enumerate()
        .filter(|(i, _)| keep(*i, with_reference))
        .map(|(_, c)| c)
        .collect();
        if let Some(p) = protocol {
            out.insert(1, p);
        }
        out
    }
}

/// The name of the "variant" column for a subsystem.
pub fn variant_header(subsystem: Subsystem) -> &'static str {
    match subsystem {
        Subsystem::Cpu => "ISA",
        Subsystem::Net => "Message",
        Subsystem::Mem => "Size",
        Subsystem::Disk => "Block size",
    }
}
