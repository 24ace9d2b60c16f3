//! Exporters: pure functions from a [`Report`](crate::results::Report) to text, one file per
//! format, and the atomic file writing that lets a run be interrupted without losing a point.

pub mod csv;
pub mod json;
pub mod markdown;
pub mod table;

use crate::results::ResultRecord;
use crate::units::format_sig;
use std::io::Write;
use std::path::Path;

/// The columns of SPEC §4 for one record, already formatted; shared by the terminal table,
/// Markdown and the row order of CSV so that they cannot drift apart.
pub struct Row {
    pub workload: String,
    pub concurrency: String,
    pub variant: String,
    pub measured: String,
    pub reference: String,
    pub theoretical: String,
    pub efficiency: String,
    pub reference_efficiency: String,
    pub stddev: String,
}

fn percent(fraction: Option<f64>) -> String {
    fraction.map_or_else(|| "—".to_string(), |f| format!("{:.1}", f * 100.0))
}

/// Formats one record for a table.
pub fn row(rec: &ResultRecord) -> Row {
    let variant = [rec.param("isa"), rec.param("block_size")]
        .into_iter()
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    Row {
        workload: rec.workload.clone(),
        concurrency: rec.param("threads"),
        variant: if variant.is_empty() {
            "—".into()
        } else {
            variant
        },
        measured: format_sig(rec.summary.mean),
        reference: rec
            .reference
            .as_ref()
            .map_or_else(|| "—".into(), |r| format_sig(r.mean)),
        theoretical: rec
            .peak
            .as_ref()
            .map_or_else(|| "unknown".into(), |p| format_sig(p.value)),
        efficiency: percent(rec.efficiency),
        reference_efficiency: percent(rec.reference.as_ref().and_then(|r| r.efficiency)),
        stddev: format!(
            "{}{}",
            format_sig(rec.summary.stddev),
            if rec.summary.noisy { " !" } else { "" }
        ),
    }
}

/// Which reference columns a table shows: none when no point has a reference figure.
fn keep(column: usize, with_reference: bool) -> bool {
    with_reference || !matches!(column, 4 | 7)
}

/// The column headers, with `unit` where values carry it.
pub fn headers(unit: &str, variant: &str, with_reference: bool) -> Vec<String> {
    [
        "Workload".into(),
        "Concurrency".into(),
        variant.into(),
        format!("peakbench measured ({unit})"),
        format!("reference measured ({unit})"),
        format!("theoretical ({unit})"),
        "peakbench efficiency %".into(),
        "reference efficiency %".into(),
        format!("std dev ({unit})"),
    ]
    .into_iter()
    .enumerate()
    .filter(|(i, _)| keep(*i, with_reference))
    .map(|(_, h)| h)
    .collect()
}

impl Row {
    pub fn cells(self, with_reference: bool) -> Vec<String> {
        [
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
        .collect()
    }
}

/// True when some record of the group has a reference figure.
pub fn has_reference(records: &[&ResultRecord]) -> bool {
    records.iter().any(|r| r.reference.is_some())
}

/// Records grouped by (subsystem, unit), in first-seen order: one table each.
pub fn groups(results: &[ResultRecord]) -> Vec<((String, String), Vec<&ResultRecord>)> {
    let mut out: Vec<((String, String), Vec<&ResultRecord>)> = Vec::new();
    for rec in results {
        let key = (rec.subsystem.clone(), rec.unit.clone());
        match out.iter_mut().find(|(k, _)| *k == key) {
            Some((_, v)) => v.push(rec),
            None => out.push((key, vec![rec])),
        }
    }
    out
}

/// The name of the "variant" column for a subsystem.
pub fn variant_header(subsystem: &str) -> &'static str {
    match subsystem {
        "cpu" => "ISA",
        _ => "Block size",
    }
}

/// One line per record explaining its peak: the formula with every input and its source, or
/// why it is unknown.
pub fn peak_notes(results: &[ResultRecord]) -> Vec<String> {
    results
        .iter()
        .map(|rec| {
            let what = format!("{} ×{}", rec.workload, rec.param("threads"));
            match (&rec.peak, &rec.peak_unknown_reason) {
                (Some(p), _) => {
                    let inputs = p
                        .inputs
                        .iter()
                        .map(|(k, i)| {
                            // Whole inputs (cores, widths, rates) print as whole numbers; a
                            // unit that repeats the input's name is left out.
                            let value = if i.value.fract() == 0.0 && i.value.abs() < 1e15 {
                                format!("{}", i.value)
                            } else {
                                format_sig(i.value)
                            };
                            let unit = if i.unit == *k {
                                String::new()
                            } else {
                                format!(" {}", i.unit)
                            };
                            format!("{k} = {value}{unit} ({})", source_name(i.source))
                        })
                        .collect::<Vec<_>>()
                        .join(", ");
                    format!(
                        "{what}: {} {} = {}; {inputs}",
                        format_sig(p.value),
                        p.unit,
                        p.formula
                    )
                }
                (None, Some(reason)) => format!("{what}: peak unknown: {reason}"),
                (None, None) => format!("{what}: peak unknown"),
            }
        })
        .collect()
}

fn source_name(s: crate::sysinfo::Source) -> &'static str {
    use crate::sysinfo::Source;
    match s {
        Source::Detected => "detected",
        Source::Table => "table",
        Source::Measured => "measured",
        Source::User => "user",
    }
}

/// Writes `bytes` to `path` atomically (a temporary file in the same directory, then rename),
/// or to standard output for `-`.
pub fn write_output(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    if path == Path::new("-") {
        let mut out = std::io::stdout().lock();
        out.write_all(bytes)?;
        return out.flush();
    }
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map_or_else(|| "output".into(), |n| n.to_string_lossy().into_owned());
    let tmp = dir.join(format!(".{name}.peakbench-tmp-{}", std::process::id()));
    let result = std::fs::write(&tmp, bytes).and_then(|_| std::fs::rename(&tmp, path));
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}
