//! The hand-in ([`HandIn`]) as one self-contained HTML page, in the reports' order: the machine,
//! the theoretical values, then per subsystem its tables, pivots, charts, the reference tools'
//! command lines and output, and the analysis. Inline CSS and SVG, no script, nothing fetched;
//! every text from the run escaped.

use super::{HandIn, PivotBlock, Section, Table};
use crate::report::html::{STYLE, code_spans, esc, figure, shell_line, system_table, table};
use crate::results::Report;

/// What the hand-in adds to the report's style sheet.
const MORE_STYLE: &str = r#"
h4 { font-size: 15px; margin: 18px 0 4px; }
table.results td:nth-child(-n+4) { white-space: nowrap; }
p.left-out { color: #4a5561; font-size: 13px; margin: 4px 0 10px; }
details.output summary { cursor: pointer; color: #1f5fa8; margin: 2px 0 8px; }
.run { margin: 10px 0 16px; }
"#;

/// The run laid out as the assignment's hand-in.
pub fn render(report: &Report) -> Vec<u8> {
    render_hand_in(&HandIn::of(report))
}

/// A list of statements, their commands (between backticks) as code.
fn list(lines: &[String]) -> String {
    if lines.is_empty() {
        return String::new();
    }
    let mut out = String::from("<ul class=\"notes\">\n");
    for l in lines {
        out.push_str(&format!("<li>{}</li>\n", code_spans(&esc(l))));
    }
    out.push_str("</ul>\n");
    out
}

/// A numbered table: its heading, the table and the noisy note where due.
fn numbered(number: &str, t: &Table) -> String {
    let mut out = format!(
        "<h4>Table {number} — {}</h4>\n{}",
        esc(&t.title),
        table("results", &t.headers, t.rows.clone(), t.first_figure)
    );
    if t.noisy {
        out.push_str("<p class=\"note\">! noisy: coefficient of variation above 5 %.</p>\n");
    }
    if t.burst {
        out.push_str(&format!(
            "<p class=\"note\">{}.</p>\n",
            code_spans(&esc(crate::report::rows::BURST_NOTE))
        ));
    }
    out
}

/// A pivot: what it lays out and which report's table it mirrors, then its tables, or the line
/// saying why it is left out.
fn pivot(n: usize, count: &mut usize, p: &PivotBlock) -> String {
    let what = p.spec.describe();
    if let Some(why) = &p.left_out {
        return format!(
            "<p class=\"left-out\">Left out: {} ({}).</p>\n",
            esc(&what),
            esc(why)
        );
    }
    let mut out = format!("<p class=\"meta\">{}</p>\n", esc(&what));
    for t in &p.tables {
        *count += 1;
        out.push_str(&numbered(&format!("{n}.{count}"), t));
    }
    out
}

fn section(n: usize, s: &Section, doc: &crate::report::model::Document) -> String {
    let id = s.subsystem.name();
    let mut out = format!(
        "<section id=\"{id}\">\n<h2>{n}. {}</h2>\n",
        esc(s.subsystem.title())
    );
    if let Some(setup) = &s.setup {
        out.push_str(&format!("<p class=\"meta setup\">{}</p>\n", esc(setup)));
    }
    // Tables and pivots share one numbering, as the reports number theirs.
    let mut count = 0;
    out.push_str(&format!(
        "<h3 id=\"{id}-tables\">{n}.1 Results: measured, reference and theoretical</h3>\n"
    ));
    for t in &s.tables {
        count += 1;
        out.push_str(&numbered(&format!("{n}.{count}"), t));
    }
    if !s.pivots.is_empty() {
        out.push_str(&format!(
            "<h3 id=\"{id}-pivots\">{n}.2 Pivot tables (means)</h3>\n"
        ));
        for p in &s.pivots {
            out.push_str(&pivot(n, &mut count, p));
        }
    }
    out.push_str(&format!("<h3 id=\"{id}-charts\">{n}.3 Charts</h3>\n"));
    let figures: String = s.charts.iter().map(|&i| figure(&doc.charts[i])).collect();
    if figures.is_empty() {
        out.push_str("<p class=\"note\">No chart: no figure was swept over two points or more, and no point has a reference figure or a peak.</p>\n");
    } else {
        out.push_str(&format!("<div class=\"charts\">\n{figures}</div>\n"));
    }
    out.push_str(&format!(
        "<h3 id=\"{id}-references\">{n}.4 Reference tools: command lines and output</h3>\n"
    ));
    if s.references.is_empty() {
        out.push_str("<p class=\"note\">No reference tool's run is recorded for these points (the run was made without --reference, or no tool applies).</p>\n");
    }
    for r in &s.references {
        out.push_str(&format!(
            "<div class=\"run\">\n<p class=\"meta\">{} — for {}</p>\n",
            esc(&r.summary),
            esc(&r.points.join("; "))
        ));
        if !r.commands.is_empty() {
            out.push_str(&format!(
                "<pre class=\"cmd\"><code>{}</code></pre>\n",
                esc(&r.commands.join("\n"))
            ));
        }
        out.push_str(&format!(
            "<details class=\"output\"><summary>Its output</summary>\n<pre class=\"cmd\"><code>{}</code></pre>\n</details>\n</div>\n",
            esc(&r.output)
        ));
    }
    out.push_str(&format!("<h3 id=\"{id}-analysis\">{n}.5 Analysis</h3>\n"));
    if s.findings.is_empty() && s.reference_gaps.is_empty() {
        out.push_str("<p class=\"note\">The figures give no finding.</p>\n");
    }
    out.push_str(&list(&s.findings));
    if !s.reference_gaps.is_empty() {
        out.push_str("<p class=\"meta\">Points without a reference figure, and what the tools measured where it is not exactly the point:</p>\n");
        out.push_str(&list(&s.reference_gaps));
    }
    out.push_str("</section>\n");
    out
}

/// The hand-in as one self-contained HTML page.
pub fn render_hand_in(h: &HandIn) -> Vec<u8> {
    let doc = &h.doc;
    let mut out = String::with_capacity(512 * 1024);
    out.push_str(&format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta name=\"generator\" content=\"peakbench {}\">\n\
         <title>Benchmarking report — {}</title>\n<style>{STYLE}{MORE_STYLE}</style>\n</head>\n<body>\n",
        esc(&doc.version),
        esc(&doc.started_at)
    ));
    out.push_str(&format!(
        "<header>\n<h1>Benchmarking report: CPU, memory, disk and network</h1>\n\
         <p class=\"meta\">Measured by {} {} on {}; each figure beside the reference tool's and \
         the hardware's theoretical peak. The run:</p>\n\
         <pre class=\"cmd\"><code>{}</code></pre>\n<p class=\"meta\">{}</p>\n</header>\n",
        esc(&doc.tool),
        esc(&doc.version),
        esc(&doc.started_at),
        esc(&shell_line(&doc.command_line)),
        esc(&doc.machine),
    ));
    out.push_str(
        "<nav><a href=\"#machine\">1. The machine</a><a href=\"#peaks\">2. Theoretical peaks</a>",
    );
    for (i, s) in h.sections.iter().enumerate() {
        out.push_str(&format!(
            "<a href=\"#{}\">{}. {}</a>",
            s.subsystem.name(),
            i + 3,
            esc(s.subsystem.title())
        ));
    }
    out.push_str(&format!(
        "<a href=\"#notes\">{}. Notes</a></nav>\n",
        h.sections.len() + 3
    ));
    if !doc.has_results {
        out.push_str("<p>This run has no results.</p>\n");
    }
    out.push_str("<section id=\"machine\">\n<h2>1. The machine</h2>\n");
    out.push_str(&system_table(&doc.system));
    out.push_str("</section>\n<section id=\"peaks\">\n<h2>2. Theoretical peaks</h2>\n");
    out.push_str(
        "<p class=\"meta\">Each peak with its formula and inputs (and where each input came \
         from), and the points it is the peak of; efficiency % = measured ÷ theoretical.</p>\n",
    );
    out.push_str(&table(
        "peaks",
        &h.peaks.headers,
        h.peaks.rows.clone(),
        h.peaks.first_figure,
    ));
    out.push_str("</section>\n");
    for (i, s) in h.sections.iter().enumerate() {
        out.push_str(&section(i + 3, s, doc));
    }
    out.push_str(&format!(
        "<section id=\"notes\">\n<h2>{}. Notes</h2>\n",
        h.sections.len() + 3
    ));
    for (title, lines) in [
        ("Notices", &doc.notices),
        ("Solves and multiplies", &doc.solve_notes),
        ("Per thread and stream", &doc.concurrency_notes),
        ("Latency percentiles", &doc.percentile_notes),
        ("Little's law", &doc.littles_law_notes),
    ] {
        if !lines.is_empty() {
            out.push_str(&format!("<h3>{}</h3>\n{}", esc(title), list(lines)));
        }
    }
    out.push_str("</section>\n");
    out.push_str(&format!(
        "<footer>Written by {} {} (peakbench report RUN --as assignment). The charts are inline \
         SVG; the page needs no network and no script.</footer>\n</body>\n</html>\n",
        esc(&doc.tool),
        esc(&doc.version)
    ));
    out.into_bytes()
}
