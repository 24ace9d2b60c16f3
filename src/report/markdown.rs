//! The Markdown exporter: the report's model ([`Document`]) as Markdown — its tables, one per
//! subsystem and unit, the notes and the nodes.

use super::model::Document;
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
    render_doc(&Document::of(report))
}

/// A report's document (its tables, maybe pivoted) as Markdown.
pub fn render_doc(doc: &Document) -> Vec<u8> {
    let mut out = format!(
        "# peakbench {} — {}\n\nStarted {} on {}.\n",
        doc.version,
        doc.command_line.join(" "),
        doc.started_at,
        doc.machine,
    );
    let grid = |head: &[String], rows: &[Vec<String>]| {
        let mut g = line(head) + &line(&vec!["---".to_string(); head.len()]);
        for r in rows {
            g.push_str(&line(r));
        }
        g
    };
    if let Some(v) = &doc.verification {
        out.push_str(&format!("\n## {}\n\n", v.title));
        out.push_str(&grid(&v.headers, &v.rows));
        out.push('\n');
        for n in &v.notes {
            out.push_str(&format!("- {n}\n"));
        }
    }
    for t in &doc.tables {
        out.push_str(&format!("\n## {}\n\n", t.heading()));
        out.push_str(&grid(&t.headers, &t.rows));
        if t.noisy {
            out.push_str("\n`!` noisy: coefficient of variation above 5 %.\n");
        }
    }
    for m in &doc.mem_matrices {
        out.push_str(&format!("\n## {}\n\n", m.title));
        out.push_str(&grid(&m.headers, &m.rows));
    }
    for (title, notes) in doc.text_notes() {
        if !notes.is_empty() {
            out.push_str(&format!("\n## {title}\n\n"));
            for n in notes {
                out.push_str(&format!("- {n}\n"));
            }
        }
    }
    if let Some(n) = &doc.nodes {
        out.push_str(&format!("\n## Nodes\n\n{}\n\n", n.summary));
        out.push_str(&grid(&n.headers, &n.rows));
        if !n.totals_rows.is_empty() {
            out.push_str(&format!("\n### {}\n\n", super::nodes::TOTALS_TITLE));
            out.push_str(&grid(&n.totals_headers, &n.totals_rows));
        }
        for m in &n.matrices {
            out.push_str(&format!("\n### {}\n\n", m.title));
            out.push_str(&grid(&m.headers, &m.rows));
        }
        for (title, lines) in n.line_sections() {
            out.push_str(&format!("\n### {title}\n\n"));
            for l in lines {
                out.push_str(&format!("- {l}\n"));
            }
        }
    }
    out.into_bytes()
}
