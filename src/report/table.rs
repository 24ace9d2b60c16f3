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

/// Sets a table's header and rows so that no column is narrower than its longest word, in the
/// header or a cell: a narrow terminal wraps text between words, never inside one
/// ("theoretica / l", "0.53 / 9"). Where the table fits the width with every cell whole, only
/// the headers wrap (a row stays one line: "128 MiB arrays", not "128 MiB / arrays").
pub fn set_whole_words(t: &mut Table, headers: &[String], rows: &[Vec<String>]) {
    t.set_header(headers.to_vec());
    for r in rows {
        t.add_row(r.clone());
    }
    let chars = crate::text::width;
    let longest = |text: &str| text.split_whitespace().map(chars).max();
    let bound = |i: usize, cell: &dyn Fn(&str) -> Option<usize>| {
        let cells = rows.iter().filter_map(|r| r.get(i)).filter_map(|c| cell(c));
        cells.chain(longest(&headers[i])).max().unwrap_or(0)
    };
    let whole: Vec<usize> = (0..headers.len())
        .map(|i| bound(i, &|c| c.lines().map(chars).max()))
        .collect();
    // Each column's padding (a space each side) and border.
    let fits = whole.iter().map(|w| w + 3).sum::<usize>() < usize::from(t.width().unwrap_or(0));
    for (i, whole) in whole.iter().enumerate() {
        let least = if fits { *whole } else { bound(i, &longest) };
        if let (Some(c), Ok(least)) = (t.column_mut(i), u16::try_from(least)) {
            // The constraint counts the cell's padding (one space each side).
            c.set_constraint(comfy_table::ColumnConstraint::LowerBoundary(
                comfy_table::Width::Fixed(least.saturating_add(2)),
            ));
        }
    }
}

use super::model::CPU_COLUMN;

/// One result table's grid, its figures aligned right.
fn grid(
    table: &super::model::ResultTable,
    headers: &[String],
    rows: &[Vec<String>],
    width: usize,
) -> Table {
    let mut t = new_table(width);
    set_whole_words(&mut t, headers, rows);
    for col in table.first_figure..t.column_count() {
        if let Some(c) = t.column_mut(col) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
    t
}

/// The results as one table per subsystem and unit, then the peaks.
pub fn render(report: &Report, width: usize) -> String {
    render_doc(&Document::of(report), width)
}

/// A report's document (its tables, maybe pivoted) as text.
pub fn render_doc(doc: &Document, width: usize) -> String {
    let mut out = doc.verification.as_ref().map_or(String::new(), |v| {
        format!("{}\n", render_verification(v, width))
    });
    for table in &doc.tables {
        let mut t = grid(table, &table.headers, &table.rows, width);
        // The CPU column where the terminal has room for it (the summary table has it too).
        let cpu = table.headers.iter().position(|h| h == CPU_COLUMN);
        let wide = t.lines().any(|l| l.chars().count() > width);
        if let (Some(i), true) = (cpu, wide) {
            let mut headers = table.headers.clone();
            headers.remove(i);
            let rows: Vec<Vec<String>> = table
                .rows
                .iter()
                .map(|r| {
                    r.iter()
                        .enumerate()
                        .filter(|(j, _)| *j != i)
                        .map(|(_, c)| c.clone())
                        .collect()
                })
                .collect();
            t = grid(table, &headers, &rows, width);
        }
        if t.lines().any(|l| l.chars().count() > width) {
            // Still too wide (a pivot with many columns): its figures in parts that fit, each
            // with the row labels.
            out.push_str(&in_parts(table, width));
        } else {
            let heading = crate::text::wrap(&table.heading(), width, "  ");
            out.push_str(&format!("{heading}\n{t}\n"));
        }
        if table.noisy {
            out.push_str("! noisy: coefficient of variation above 5 %\n");
        }
        if table.burst {
            out.push_str(&crate::text::wrap(super::rows::BURST_NOTE, width, "  "));
            out.push('\n');
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

/// A table too wide for `width` columns as several, each with the columns before its figures
/// and as many figure columns as fit (one at least), headed "(columns 3–5 of 12)".
fn in_parts(table: &super::model::ResultTable, width: usize) -> String {
    let keep = table.first_figure.min(table.headers.len());
    let n = table.headers.len();
    let part = |a: usize, b: usize| {
        let pick = |cells: &[String]| -> Vec<String> {
            (cells.iter().enumerate())
                .filter(|(j, _)| *j < keep || (a..b).contains(j))
                .map(|(_, c)| c.clone())
                .collect()
        };
        let rows: Vec<Vec<String>> = table.rows.iter().map(|r| pick(r)).collect();
        grid(table, &pick(&table.headers), &rows, width)
    };
    let fits = |t: &Table| t.lines().all(|l| l.chars().count() <= width);
    let figures = n - keep;
    let mut out = String::new();
    let mut a = keep;
    while a < n {
        let mut b = a + 1;
        let mut t = part(a, b);
        while b < n {
            let wider = part(a, b + 1);
            if !fits(&wider) {
                break;
            }
            (t, b) = (wider, b + 1);
        }
        let heading = format!(
            "{} (columns {}–{} of {figures})",
            table.heading(),
            a - keep + 1,
            b - keep
        );
        let heading = crate::text::wrap(&heading, width, "  ");
        out.push_str(&format!("{heading}\n{t}\n"));
        a = b;
    }
    out
}

/// `verify`'s checks as a table `width` columns wide, with their notes.
pub fn render_verification(v: &super::verify::VerifyView, width: usize) -> String {
    let mut t = new_table(width);
    set_whole_words(&mut t, &v.headers, &v.rows);
    let mut out = format!("{}\n{t}\n", v.title);
    for n in &v.notes {
        out.push_str(&crate::text::wrap(&format!("  {n}"), width, "    "));
        out.push('\n');
    }
    out
}

/// A multi-node run's nodes, matrices, outliers and notes.
fn render_nodes(n: &NodesView, width: usize) -> String {
    let grid = |head: &[String], rows: &[Vec<String>]| {
        let mut t = new_table(width);
        set_whole_words(&mut t, head, rows);
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
            out.push_str(&crate::text::wrap(&format!("  {l}"), width, "    "));
            out.push('\n');
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Where the table fits with every cell whole, only its headers wrap; where it does not,
    /// text wraps between words, never inside one.
    #[test]
    fn rows_stay_whole_where_they_fit() {
        let headers: Vec<String> = ["Workload", "Size", "peakbench measured (GB/s)"]
            .map(String::from)
            .to_vec();
        let rows = vec![vec![
            "COPY".to_string(),
            "128 MiB arrays".into(),
            "49.66".into(),
        ]];
        let mut t = new_table(42);
        set_whole_words(&mut t, &headers, &rows);
        let text = t.to_string();
        assert!(text.contains("128 MiB arrays"), "{text}");
        assert!(text.lines().all(|l| l.chars().count() <= 42), "{text}");
        let mut t = new_table(34);
        set_whole_words(&mut t, &headers, &rows);
        let text = t.to_string();
        assert!(
            !text.contains("128 MiB arrays") && text.contains("arrays"),
            "{text}"
        );
        assert!(!text.contains("measure "), "{text}");
    }
}
