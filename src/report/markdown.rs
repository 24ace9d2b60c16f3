//! The Markdown exporter: the tables of SPEC §4, one per subsystem and unit, and the peaks.

use super::{
    groups, has_reference, headers, littles_law_notes, peak_notes, percentile_notes, row,
    variant_header,
};
use crate::results::Report;

fn line(cells: &[String]) -> String {
    format!(
        "| {} |\n",
        cells
            .iter()
            .map(|c| c.replace('|', "\\|"))
            .collect::<Vec<_>>()
            .join(" | ")
    )
}

/// The report as Markdown.
pub fn render(report: &Report) -> Vec<u8> {
    let mut out = format!(
        "# peakbench {} — {}\n\nStarted {} on {}.\n",
        report.tool.version,
        report.command_line.join(" "),
        report.started_at,
        super::table::machine_line(&report.system),
    );
    for ((subsystem, unit), records) in groups(&report.results) {
        out.push_str(&format!("\n## {subsystem} ({unit})\n\n"));
        let head = headers(&unit, variant_header(&subsystem), has_reference(&records));
        out.push_str(&line(&head));
        out.push_str(&line(&vec!["---".to_string(); head.len()]));
        for rec in &records {
            out.push_str(&line(&row(rec).cells(has_reference(&records))));
        }
        if records.iter().any(|r| r.summary.noisy) {
            out.push_str("\n`!` noisy: coefficient of variation above 5 %.\n");
        }
    }
    for (title, notes) in [
        ("Latency percentiles", percentile_notes(&report.results)),
        ("Little's law", littles_law_notes(&report.results)),
        ("Theoretical peaks", peak_notes(&report.results)),
    ] {
        if !notes.is_empty() {
            out.push_str(&format!("\n## {title}\n\n"));
            for n in notes {
                out.push_str(&format!("- {n}\n"));
            }
        }
    }
    if let Some(f) = &report.fleet {
        use super::nodes::{line_sections, matrix_table, matrix_title, node_table, summary};
        out.push_str(&format!("\n## Nodes\n\n{}\n\n", summary(f)));
        let grid = |(head, rows): (Vec<String>, Vec<Vec<String>>)| {
            let mut g = line(&head) + &line(&vec!["---".to_string(); head.len()]);
            for r in rows {
                g.push_str(&line(&r));
            }
            g
        };
        out.push_str(&grid(node_table(f)));
        for m in &f.matrices {
            out.push_str(&format!("\n### {}\n\n", matrix_title(m)));
            out.push_str(&grid(matrix_table(f, m)));
        }
        for (title, lines) in line_sections(f) {
            out.push_str(&format!("\n### {title}\n\n"));
            for l in lines {
                out.push_str(&format!("- {l}\n"));
            }
        }
    }
    out.into_bytes()
}
