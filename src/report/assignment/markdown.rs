//! The hand-in ([`HandIn`]) as Markdown, in the same order and numbering as the HTML page. A
//! chart is its title and how to read it, and with `--png DIR` an image of its PNG file; the
//! reference tools' command lines and output are code blocks. Every text from the run is
//! escaped so that a renderer shows it as written.

use super::{HandIn, PivotBlock, Section, Table};
use crate::report::markdown::{grid, text};
use crate::results::Report;
use std::path::Path;

/// The run laid out as the assignment's hand-in; `charts`: the folder `--png` writes the
/// charts' PNG files to, linked from the document (as given).
pub fn render(report: &Report, charts: Option<&Path>) -> Vec<u8> {
    render_hand_in(&HandIn::of(report), charts)
}

/// `body` as a fenced code block whose fence no run of backticks in it can close.
fn code_block(info: &str, body: &str) -> String {
    let longest = body.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat((longest + 1).max(3));
    format!("{fence}{info}\n{}\n{fence}\n", body.trim_end_matches('\n'))
}

fn list(lines: &[String]) -> String {
    lines.iter().map(|l| format!("- {}\n", text(l))).collect()
}

fn numbered(number: &str, t: &Table) -> String {
    let mut out = format!(
        "\n#### Table {number} — {}\n\n{}",
        text(&t.title),
        grid(&t.headers, &t.rows)
    );
    if t.noisy {
        out.push_str("\n`!` noisy: coefficient of variation above 5 %.\n");
    }
    if t.burst {
        out.push_str(&format!("\n{}.\n", text(crate::report::rows::BURST_NOTE)));
    }
    out
}

fn pivot(n: usize, count: &mut usize, p: &PivotBlock) -> String {
    let what = p.spec.describe();
    if let Some(why) = &p.left_out {
        return format!("\nLeft out: {} ({}).\n", text(&what), text(why));
    }
    let mut out = format!("\n{}\n", text(&what));
    for t in &p.tables {
        *count += 1;
        out.push_str(&numbered(&format!("{n}.{count}"), t));
    }
    out
}

/// An image's text and address, escaped for a Markdown link.
fn image(alt: &str, path: &Path) -> String {
    let alt = text(alt).replace('[', "\\[").replace(']', "\\]");
    let at = crate::text::printable(&path.display().to_string())
        .replace('<', "%3C")
        .replace('>', "%3E");
    format!("![{alt}](<{at}>)\n")
}

fn section(n: usize, s: &Section, h: &HandIn, charts: Option<&Path>) -> String {
    let doc = &h.doc;
    let mut out = format!("\n## {n}. {}\n", s.subsystem.title());
    if let Some(setup) = &s.setup {
        out.push_str(&format!("\n{}\n", text(setup)));
    }
    let mut count = 0;
    out.push_str(&format!(
        "\n### {n}.1 Results: measured, reference and theoretical\n"
    ));
    for t in &s.tables {
        count += 1;
        out.push_str(&numbered(&format!("{n}.{count}"), t));
    }
    if !s.pivots.is_empty() {
        out.push_str(&format!("\n### {n}.2 Pivot tables (means)\n"));
        for p in &s.pivots {
            out.push_str(&pivot(n, &mut count, p));
        }
    }
    out.push_str(&format!("\n### {n}.3 Charts\n\n"));
    if s.charts.is_empty() {
        out.push_str("No chart: no figure was swept over two points or more, and no point has a reference figure or a peak.\n");
    }
    for (k, &i) in s.charts.iter().enumerate() {
        let c = &doc.charts[i];
        out.push_str(&format!("**Figure {n}.{}: {}.**", k + 1, text(&c.title)));
        if !c.note.is_empty() {
            out.push_str(&format!(" {}", text(&c.note)));
        }
        out.push('\n');
        if let Some(dir) = charts {
            let name = crate::report::charts::png_name(i, c);
            out.push('\n');
            out.push_str(&image(&c.title, &dir.join(name)));
        }
        out.push('\n');
    }
    if charts.is_none() && !s.charts.is_empty() {
        out.push_str("(The charts themselves: `--png DIR` writes each as a PNG file and links it here; `--html FILE` draws them in the page.)\n");
    }
    out.push_str(&format!(
        "\n### {n}.4 Reference tools: command lines and output\n"
    ));
    if s.references.is_empty() {
        out.push_str("\nNo reference tool's run is recorded for these points (the run was made without --reference, or no tool applies).\n");
    }
    for r in &s.references {
        out.push_str(&format!(
            "\n{} — for {}\n\n",
            text(&r.summary),
            text(&r.points.join("; "))
        ));
        if !r.commands.is_empty() {
            out.push_str(&code_block("sh", &r.commands.join("\n")));
            out.push('\n');
        }
        out.push_str(&code_block("text", &r.output));
    }
    out.push_str(&format!("\n### {n}.5 Analysis\n\n"));
    if s.findings.is_empty() && s.reference_gaps.is_empty() {
        out.push_str("The figures give no finding.\n");
    }
    out.push_str(&list(&s.findings));
    if !s.reference_gaps.is_empty() {
        out.push_str("\nPoints without a reference figure, and what the tools measured where it is not exactly the point:\n\n");
        out.push_str(&list(&s.reference_gaps));
    }
    out
}

/// The hand-in as Markdown.
pub fn render_hand_in(h: &HandIn, charts: Option<&Path>) -> Vec<u8> {
    let doc = &h.doc;
    let mut out = format!(
        "# Benchmarking report: CPU, memory, disk and network\n\nMeasured by {} {} on {}; each \
         figure beside the reference tool's and the hardware's theoretical peak. The run:\n\n{}\n{}\n",
        text(&doc.tool),
        text(&doc.version),
        text(&doc.started_at),
        code_block("sh", &doc.command_line.join(" ")),
        text(&doc.machine),
    );
    if !doc.has_results {
        out.push_str("\nThis run has no results.\n");
    }
    out.push_str("\n## 1. The machine\n\n");
    let system: Vec<Vec<String>> = doc
        .system
        .iter()
        .map(|(k, v)| vec![k.clone(), v.clone()])
        .collect();
    out.push_str(&grid(
        &["Property".to_string(), "Value [source]".to_string()],
        &system,
    ));
    out.push_str("\n## 2. Theoretical peaks\n\nEach peak with its formula and inputs (and where each input came from), and the points it is the peak of; efficiency % = measured ÷ theoretical.\n\n");
    out.push_str(&grid(&h.peaks.headers, &h.peaks.rows));
    for (i, s) in h.sections.iter().enumerate() {
        out.push_str(&section(i + 3, s, h, charts));
    }
    out.push_str(&format!("\n## {}. Notes\n", h.sections.len() + 3));
    for (title, lines) in [
        ("Notices", &doc.notices),
        ("Solves and multiplies", &doc.solve_notes),
        ("Per thread and stream", &doc.concurrency_notes),
        ("Latency percentiles", &doc.percentile_notes),
        ("Little's law", &doc.littles_law_notes),
    ] {
        if !lines.is_empty() {
            out.push_str(&format!("\n### {title}\n\n{}", list(lines)));
        }
    }
    out.into_bytes()
}
