//! The terminal exporter: the report's model ([`Document`]) with comfy-table, and the system
//! information.

use super::model::{Document, NodesView};
pub use super::model::{machine_line, system_rows};
use crate::results::Report;
use crate::sysinfo::SystemInfo;
use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{CellAlignment, ContentArrangement, Table};

/// A table that keeps to `width` columns, wrapping its cells where it must.
pub fn new_table(width: usize) -> Table {
    let mut t = Table::new();
    t.load_style(UTF8_FULL_CONDENSED);
    t.set_content_arrangement(ContentArrangement::Dynamic);
    t.set_width(u16::try_from(width).unwrap_or(u16::MAX));
    t
}

/// The results as one table per subsystem and unit, then the peaks.
pub fn render(report: &Report, width: usize) -> String {
    let doc = Document::of(report);
    let mut out = String::new();
    for table in &doc.tables {
        let mut t = new_table(width);
        t.set_header(table.headers.clone());
        for r in &table.rows {
            t.add_row(r.clone());
        }
        for col in 3..t.column_count() {
            if let Some(c) = t.column_mut(col) {
                c.set_cell_alignment(CellAlignment::Right);
            }
        }
        out.push_str(&format!("{} ({})\n{t}\n", table.subsystem, table.unit));
        if table.noisy {
            out.push_str("! noisy: coefficient of variation above 5 %\n");
        }
    }
    for (title, notes) in doc.text_notes() {
        if !notes.is_empty() {
            out.push_str(&format!("{title}:\n"));
            for n in notes {
                out.push_str(&crate::text::wrap(&format!("  {n}"), width, "    "));
                out.push('\n');
            }
        }
    }
    if let Some(n) = &doc.nodes {
        out.push_str(&render_nodes(n, width));
    }
    out
}

/// A multi-node run's nodes, matrices, outliers and notes.
fn render_nodes(n: &NodesView, width: usize) -> String {
    let grid = |head: &[String], rows: &[Vec<String>]| {
        let mut t = new_table(width);
        t.set_header(head.to_vec());
        for r in rows {
            t.add_row(r.clone());
        }
        t
    };
    let mut out = format!("Nodes: {}\n{}\n", n.summary, grid(&n.headers, &n.rows));
    if !n.totals_rows.is_empty() {
        out.push_str(&format!(
            "{}\n{}\n",
            super::nodes::TOTALS_TITLE,
            grid(&n.totals_headers, &n.totals_rows)
        ));
    }
    for m in &n.matrices {
        out.push_str(&format!("{}\n{}\n", m.title, grid(&m.headers, &m.rows)));
    }
    for (title, lines) in n.line_sections() {
        out.push_str(&format!("{title}:\n"));
        for l in lines {
            out.push_str(&format!("  {l}\n"));
        }
    }
    out
}

/// Theoretical peaks, one row per workload (or figure: `first` names the column): value,
/// formula and inputs, or why there is none.
pub fn render_peaks(
    first: &str,
    rows: &[(String, Result<crate::sysinfo::peak::Peak, String>)],
    width: usize,
) -> String {
    let mut t = new_table(width);
    t.set_header([first, "theoretical", "unit", "formula and inputs"]);
    for (workload, peak) in rows {
        match peak {
            Ok(p) => t.add_row([
                workload.clone(),
                crate::units::format_sig(p.value),
                p.unit.to_string(),
                format!("{}; {}", p.formula, super::peak_inputs(p)),
            ]),
            Err(why) => t.add_row([
                workload.clone(),
                "unknown".into(),
                String::new(),
                why.clone(),
            ]),
        };
    }
    if let Some(c) = t.column_mut(1) {
        c.set_cell_alignment(CellAlignment::Right);
    }
    format!("{t}\n")
}

/// The system information as a two-column table.
pub fn render_system(sys: &SystemInfo, width: usize) -> String {
    let mut t = new_table(width);
    t.set_header(["Property", "Value [source]"]);
    for (k, v) in system_rows(sys) {
        t.add_row([k, v]);
    }
    format!("{t}\n")
}
