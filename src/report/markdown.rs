//! The Markdown exporter: the report's model ([`Document`]) as Markdown — its tables, one per
//! subsystem and unit, the notes and the nodes.

use super::model::Document;
use crate::results::Report;

/// Text from the report (names, commands, notes: from a file or a peer) as Markdown text:
/// control and format characters escaped, and `&`, `<`, `>` as entities, so that it is shown
/// as written and never read as HTML (`<script>`, `<img onerror=…>`) by a renderer.
pub(super) fn text(s: &str) -> String {
    crate::text::printable(s)
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

pub(super) fn line(cells: &[String]) -> String {
    format!(
        "| {} |\n",
        cells
            .iter()
            .map(|c| text(c).replace('|', "\\|"))
            .collect::<Vec<_>>()
            .join(" | ")
    )
}

/// A table: its header row, the rule under it and its rows.
pub(super) fn grid(head: &[String], rows: &[Vec<String>]) -> String {
    let mut g = line(head) + &line(&vec!["---".to_string(); head.len()]);
    for r in rows {
        g.push_str(&line(r));
    }
    g
}

/// The report as Markdown.
pub fn render(report: &Report) -> Vec<u8> {
    render_doc(&Document::of(report))
}

/// A report's document (its tables, maybe pivoted) as Markdown.
pub fn render_doc(doc: &Document) -> Vec<u8> {
    let mut out = format!(
        "# peakbench {} — {}\n\nStarted {} on {}.\n",
        text(&doc.version),
        text(&doc.command_line.join(" ")),
        text(&doc.started_at),
        text(&doc.machine),
    );
    if let Some(v) = &doc.verification {
        out.push_str(&format!("\n## {}\n\n", text(&v.title)));
        out.push_str(&grid(&v.headers, &v.rows));
        out.push('\n');
        for n in &v.notes {
            out.push_str(&format!("- {}\n", text(n)));
        }
    }
    for t in &doc.tables {
        out.push_str(&format!("\n## {}\n\n", text(&t.heading())));
        out.push_str(&grid(&t.headers, &t.rows));
        if t.noisy {
            out.push_str("\n`!` noisy: coefficient of variation above 5 %.\n");
        }
        if t.burst {
            out.push_str(&format!("\n{}.\n", text(super::rows::BURST_NOTE)));
        }
    }
    for m in &doc.mem_matrices {
        out.push_str(&format!("\n## {}\n\n", text(&m.title)));
        out.push_str(&grid(&m.headers, &m.rows));
    }
    for (title, notes) in doc.text_notes() {
        if !notes.is_empty() {
            out.push_str(&format!("\n## {}\n\n", text(title)));
            for n in notes {
                out.push_str(&format!("- {}\n", text(n)));
            }
        }
    }
    if let Some(n) = &doc.nodes {
        out.push_str(&format!("\n## Nodes\n\n{}\n\n", text(&n.summary)));
        out.push_str(&grid(&n.headers, &n.rows));
        if !n.totals_rows.is_empty() {
            out.push_str(&format!("\n### {}\n\n", super::nodes::TOTALS_TITLE));
            out.push_str(&grid(&n.totals_headers, &n.totals_rows));
        }
        for m in &n.matrices {
            out.push_str(&format!("\n### {}\n\n", text(&m.title)));
            out.push_str(&grid(&m.headers, &m.rows));
        }
        for (title, lines) in n.line_sections() {
            out.push_str(&format!("\n### {}\n\n", text(title)));
            for l in lines {
                out.push_str(&format!("- {}\n", text(l)));
            }
        }
    }
    out.into_bytes()
}

#[cfg(test)]
mod tests {
    use super::{line, text};

    /// Markup from a file is shown as written, never read as HTML.
    #[test]
    fn html_in_text_is_escaped() {
        assert_eq!(
            text("<script>alert(1)</script> & <img onerror=x>"),
            "&lt;script&gt;alert(1)&lt;/script&gt; &amp; &lt;img onerror=x&gt;"
        );
        assert_eq!(
            line(&["a|b".into(), "<b>".into()]),
            "| a\\|b | &lt;b&gt; |\n"
        );
    }
}
