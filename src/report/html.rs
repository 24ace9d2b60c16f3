//! The HTML exporter: the report's model ([`Document`]) as one self-contained page — inline CSS
//! and inline SVG charts, no script, nothing fetched — with where the run came from, the
//! machine, per subsystem its charts and tables, every peak's formula and inputs, and the
//! latency and Little's-law notes.

use super::model::{Document, MatrixView, NodesView};
use super::plot::{self, Chart};
use crate::results::Report;

/// The page's style sheet, shared with the comparison page.
pub(super) const STYLE: &str = r#"
:root { color-scheme: light; }
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", "DejaVu Sans", sans-serif;
  color: #1d2329; background: #fff; margin: 0 auto; max-width: 1500px; padding: 24px 32px 48px; }
h1 { font-size: 26px; margin: 0 0 6px; }
h2 { font-size: 21px; margin: 36px 0 12px; padding-bottom: 4px; border-bottom: 2px solid #e3e6ea; }
h3 { font-size: 16px; margin: 22px 0 6px; }
.meta { color: #4a5561; margin: 2px 0; }
pre.cmd { background: #f4f6f8; padding: 8px 12px; border-radius: 4px; white-space: pre-wrap;
  overflow-wrap: anywhere; margin: 8px 0; }
nav { margin: 12px 0; }
nav a { margin-right: 16px; color: #1f5fa8; }
.charts { display: grid; grid-template-columns: repeat(auto-fill, minmax(520px, 1fr)); gap: 16px; }
figure.chart { margin: 0; border: 1px solid #e3e6ea; border-radius: 6px; padding: 8px; }
figure.chart svg { display: block; width: 100%; height: auto; }
figcaption { font-size: 13px; color: #4a5561; margin: 4px 4px 0; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; margin: 6px 0 4px; font-size: 14px; }
th, td { border: 1px solid #d5dae0; padding: 4px 8px; text-align: left; vertical-align: top; }
th { background: #f4f6f8; font-weight: 600; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
table.system td:first-child { white-space: nowrap; color: #4a5561; }
.note { color: #4a5561; font-size: 13px; margin: 4px 0 12px; }
ul.notes li { margin: 3px 0; }
/* An option or a command in a note is not broken at its hyphens. */
ul.notes code { font-size: 13px; background: #f4f6f8; padding: 0 3px; border-radius: 3px; white-space: nowrap; }
.error { color: #b00020; }
footer { margin-top: 40px; color: #6b7682; font-size: 13px; }
@media print { .charts { grid-template-columns: 1fr 1fr; } figure.chart { break-inside: avoid; } }
"#;

/// Escapes text for HTML content and attribute values.
pub(super) fn esc(text: &str) -> String {
    crate::text::xml_escape(text)
}

/// Escaped `text` with its spans between backticks (a command, an option) as code; text whose
/// backticks do not pair stays as it is.
pub(super) fn code_spans(text: &str) -> String {
    let parts: Vec<&str> = text.split('`').collect();
    if parts.len().is_multiple_of(2) {
        return text.to_string();
    }
    let mut out = String::new();
    for (i, part) in parts.iter().enumerate() {
        if i % 2 == 1 {
            out.push_str(&format!("<code>{part}</code>"));
        } else {
            out.push_str(part);
        }
    }
    out
}

/// The command line as a shell would take it back: arguments with spaces or quotes quoted.
pub(super) fn shell_line(argv: &[String]) -> String {
    argv.iter()
        .map(|a| {
            if !a.is_empty()
                && a.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_=.,:/@%+".contains(c))
            {
                a.clone()
            } else {
                format!("'{}'", a.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// A chart as a figure with its inline SVG, nothing when it has no data, or the reason it
/// could not be drawn.
pub(super) fn figure(chart: &Chart) -> String {
    match plot::svg(chart) {
        Ok(Some(svg)) => {
            let svg = svg.replacen(
                "<svg ",
                &format!("<svg role=\"img\" aria-label=\"{}\" ", esc(&chart.title)),
                1,
            );
            let caption = if chart.note.is_empty() {
                String::new()
            } else {
                format!("<figcaption>{}</figcaption>", esc(&chart.note))
            };
            format!(
                "<figure class=\"chart\" id=\"chart-{}\">\n{svg}{caption}</figure>\n",
                esc(&chart.slug)
            )
        }
        Ok(None) => String::new(),
        Err(e) => format!(
            "<figure class=\"chart\"><p class=\"error\">{}: {}</p></figure>\n",
            esc(&chart.title),
            esc(&e.to_string())
        ),
    }
}

/// A table from a header row and body rows; columns from `numeric_from` on are right-aligned.
/// `cell` with each number held to the unit after it ("1 KiB", "4 KiB QD1"): the space
/// after a word that is a number, before a word that starts with a letter, becomes a no-break
/// space, so that a narrow column never puts the number on one line and its unit on the next.
fn units_kept(cell: &str) -> String {
    let words: Vec<&str> = cell.split(' ').collect();
    let mut out = String::with_capacity(cell.len());
    for (i, w) in words.iter().enumerate() {
        if i > 0 {
            let number = {
                let prev = words[i - 1];
                !prev.is_empty() && prev.chars().all(|c| c.is_ascii_digit() || c == '.')
            };
            let unit = w.chars().next().is_some_and(char::is_alphabetic);
            out.push(if number && unit { '\u{a0}' } else { ' ' });
        }
        out.push_str(w);
    }
    out
}

pub(super) fn table(
    class: &str,
    head: &[String],
    body: Vec<Vec<String>>,
    numeric_from: usize,
) -> String {
    let mut out = format!("<div class=\"scroll\"><table class=\"{class}\">\n<thead><tr>");
    for h in head {
        out.push_str(&format!("<th>{}</th>", esc(h)));
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    for cells in body {
        out.push_str("<tr>");
        for (i, c) in cells.iter().enumerate() {
            if i >= numeric_from {
                out.push_str(&format!("<td class=\"num\">{}</td>", esc(c)));
            } else {
                out.push_str(&format!("<td>{}</td>", esc(&units_kept(c))));
            }
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody></table></div>\n");
    out
}

fn notes(title: &str, lines: &[String]) -> String {
    if lines.is_empty() {
        return String::new();
    }
    let mut out = format!("<h3>{}</h3>\n<ul class=\"notes\">\n", esc(title));
    for l in lines {
        out.push_str(&format!("<li>{}</li>\n", code_spans(&esc(l))));
    }
    out.push_str("</ul>\n");
    out
}

/// A node-pair matrix as a heatmap: a table whose cells are coloured from red (the worst link)
/// to green (the best).
fn heatmap(m: &MatrixView) -> String {
    let mut out = format!(
        "<h3>{}</h3>\n<div class=\"scroll\"><table class=\"heatmap\">\n<thead><tr>",
        esc(&m.title)
    );
    for h in &m.headers {
        out.push_str(&format!("<th>{}</th>", esc(h)));
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    for (src, cells) in m.rows.iter().enumerate() {
        out.push_str(&format!("<tr><th>{}</th>", esc(&cells[0])));
        for (dst, c) in cells[1..].iter().enumerate() {
            let style = m
                .heat
                .get(src)
                .and_then(|r| r.get(dst))
                .cloned()
                .flatten()
                .map(|bg| format!(" style=\"background:{bg}\""))
                .unwrap_or_default();
            out.push_str(&format!("<td class=\"num\"{style}>{}</td>", esc(c)));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody></table></div>\n");
    out
}

/// The system's properties as a table.
pub(super) fn system_table(rows: &[(String, String)]) -> String {
    table(
        "system",
        &["Property".to_string(), "Value [source]".to_string()],
        rows.iter()
            .map(|(k, v)| vec![k.clone(), v.clone()])
            .collect(),
        usize::MAX,
    )
}

/// A multi-node run: the nodes (each one's system information folded), the heatmaps and the
/// outliers.
fn nodes_section(n: &NodesView) -> String {
    let mut out = String::from("<section id=\"nodes\">\n<h2>Nodes</h2>\n");
    out.push_str(&format!("<p>{}</p>\n", esc(&n.summary)));
    out.push_str(&table("nodes", &n.headers, n.rows.clone(), usize::MAX));
    if !n.totals_rows.is_empty() {
        out.push_str(&format!("<h3>{}</h3>\n", esc(super::nodes::TOTALS_TITLE)));
        out.push_str(&table(
            "totals",
            &n.totals_headers,
            n.totals_rows.clone(),
            3,
        ));
    }
    out.push_str(&notes("Outliers", &n.outliers));
    for m in &n.matrices {
        out.push_str(&heatmap(m));
    }
    out.push_str(&notes("Notes", &n.notes));
    for (rank, host, rows) in &n.systems {
        out.push_str(&format!(
            "<details><summary>System of rank {rank} ({})</summary>\n{}</details>\n",
            esc(host),
            system_table(rows)
        ));
    }
    out.push_str("</section>\n");
    out
}

/// The report as one self-contained HTML page.
pub fn render(report: &Report) -> Vec<u8> {
    render_doc(&Document::of(report))
}

/// The reference tools' runs of subsystem `id`, folded: what was run for which points and
/// what it printed.
fn reference_runs(doc: &Document, id: crate::results::Subsystem) -> String {
    let runs: Vec<_> = doc
        .reference_runs
        .iter()
        .filter(|r| r.subsystem == id)
        .collect();
    if runs.is_empty() {
        return String::new();
    }
    let mut out = format!(
        "<details class=\"evidence\"><summary>The reference tools' runs ({}): command lines and output</summary>\n",
        runs.len()
    );
    for r in runs {
        out.push_str(&format!(
            "<p class=\"meta\">{} — for {}</p>\n<pre class=\"cmd\"><code>{}</code></pre>\n",
            esc(&r.summary),
            esc(&r.points.join("; ")),
            esc(&r.output)
        ));
    }
    out.push_str("</details>\n");
    out
}

/// A report's document (its tables, maybe pivoted) as one self-contained HTML page.
pub fn render_doc(doc: &Document) -> Vec<u8> {
    let command = shell_line(&doc.command_line);
    let mut out = String::with_capacity(256 * 1024);
    out.push_str(&format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta name=\"generator\" content=\"peakbench {}\">\n\
         <title>peakbench report — {}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n",
        esc(&doc.version),
        esc(&doc.started_at)
    ));
    out.push_str(&format!(
        "<header>\n<h1>peakbench report</h1>\n\
         <p class=\"meta\">{} {} · started {} · JSON schema version {}</p>\n\
         <pre class=\"cmd\"><code>{}</code></pre>\n<p class=\"meta\">{}</p>\n</header>\n",
        esc(&doc.tool),
        esc(&doc.version),
        esc(&doc.started_at),
        doc.schema_version,
        esc(&command),
        esc(&doc.machine),
    ));
    out.push_str("<nav>");
    if doc.verification.is_some() {
        out.push_str("<a href=\"#verification\">Verification</a>");
    }
    if doc.nodes.is_some() {
        out.push_str("<a href=\"#nodes\">Nodes</a>");
    }
    for id in &doc.subsystems {
        out.push_str(&format!("<a href=\"#{}\">{}</a>", id.name(), id.title()));
    }
    if doc.has_results {
        out.push_str("<a href=\"#peaks\">Theoretical peaks</a>");
    }
    out.push_str("<a href=\"#system\">System</a></nav>\n");

    if !doc.has_results {
        out.push_str("<p>This report has no results.</p>\n");
    }
    if let Some(v) = &doc.verification {
        out.push_str(&format!(
            "<section id=\"verification\">\n<h2>{}</h2>\n",
            esc(&v.title)
        ));
        out.push_str(&table("verification", &v.headers, v.rows.clone(), 2));
        out.push_str(&notes("How each figure is expected", &v.notes));
        out.push_str("</section>\n");
    }
    if let Some(n) = &doc.nodes {
        out.push_str(&nodes_section(n));
    }
    for id in &doc.subsystems {
        let name = id.title();
        out.push_str(&format!(
            "<section id=\"{}\">\n<h2>{}</h2>\n",
            id.name(),
            esc(name)
        ));
        if let Some((_, setup)) = doc.setups.iter().find(|(s, _)| s == id) {
            out.push_str(&format!("<p class=\"meta setup\">{}</p>\n", esc(setup)));
        }
        let found: Vec<String> = doc
            .findings_by
            .iter()
            .filter(|(s, _)| s == id)
            .map(|(_, f)| f.clone())
            .collect();
        out.push_str(&notes("Findings", &found));
        let figures: String = doc
            .charts
            .iter()
            .filter(|c| c.subsystem == *id)
            .map(figure)
            .collect();
        if !figures.is_empty() {
            out.push_str(&format!("<div class=\"charts\">\n{figures}</div>\n"));
        }
        for t in doc.tables.iter().filter(|t| t.subsystem == *id) {
            let heading = match &t.title {
                Some(title) => title.clone(),
                None => match t.unit {
                    Some(u) => format!("{name} ({})", u.name()),
                    None => name.to_string(),
                },
            };
            out.push_str(&format!("<h3>{}</h3>\n", esc(&heading)));
            out.push_str(&table(
                "results",
                &t.headers,
                t.rows.clone(),
                t.first_figure,
            ));
            if t.noisy {
                out.push_str(
                    "<p class=\"note\">! noisy: coefficient of variation above 5 %.</p>\n",
                );
            }
            if t.burst {
                out.push_str(&format!(
                    "<p class=\"note\">{}.</p>\n",
                    code_spans(&esc(super::rows::BURST_NOTE))
                ));
            }
        }
        if *id == crate::results::Subsystem::Mem {
            for m in &doc.mem_matrices {
                out.push_str(&heatmap(m));
            }
        }
        let gaps: Vec<String> = doc
            .reference_gaps_by
            .iter()
            .filter(|(s, _)| s == id)
            .map(|(_, g)| g.clone())
            .collect();
        out.push_str(&notes("References", &gaps));
        out.push_str(&reference_runs(doc, *id));
        out.push_str("</section>\n");
    }
    if doc.has_results {
        out.push_str("<section id=\"peaks\">\n<h2>Theoretical peaks</h2>\n");
        out.push_str(&notes("Notices", &doc.notices));
        out.push_str(&notes(
            "Every peak: its value, formula and inputs (with their sources), or why it is unknown",
            &doc.peak_notes,
        ));
        out.push_str(&notes("Solves and multiplies", &doc.solve_notes));
        out.push_str(&notes("Per thread and stream", &doc.concurrency_notes));
        out.push_str(&notes("Little's law", &doc.littles_law_notes));
        out.push_str("</section>\n");
    }
    out.push_str("<section id=\"system\">\n<h2>System</h2>\n");
    out.push_str(&system_table(&doc.system));
    out.push_str("</section>\n");
    out.push_str(&format!(
        "<footer>Written by {} {}. The charts are inline SVG; the page needs no network and no \
         script.</footer>\n</body>\n</html>\n",
        esc(&doc.tool),
        esc(&doc.version)
    ));
    out.into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A number keeps its unit on its line; other spaces still break.
    #[test]
    fn numbers_keep_their_units() {
        assert_eq!(units_kept("1 KiB"), "1\u{a0}KiB");
        assert_eq!(units_kept("4 KiB QD1 buffered"), "4\u{a0}KiB QD1 buffered");
        assert_eq!(units_kept("avx512 fp64 FMA"), "avx512 fp64 FMA");
        assert_eq!(units_kept("N=2000 AVX-512 24x8"), "N=2000 AVX-512 24x8");
        assert_eq!(units_kept("TCP 1.5 ms"), "TCP 1.5\u{a0}ms");
        let cell = table("t", &["Size".into()], vec![vec!["1 KiB".into()]], 1);
        assert!(cell.contains("<td>1\u{a0}KiB</td>"), "{cell}");
    }

    /// A note's commands between backticks are code; text whose backticks do not pair, and
    /// markup in the note, stay text.
    #[test]
    fn notes_show_commands_as_code() {
        let html = notes(
            "Notes",
            &["measured by `peakbench net --server 10.0.0.1`, then `<b>`".into()],
        );
        assert!(
            html.contains("<code>peakbench net --server 10.0.0.1</code>")
                && html.contains("<code>&lt;b&gt;</code>"),
            "{html}"
        );
        assert!(!html.contains('`'), "{html}");
        let odd = notes("Notes", &["one ` alone".into()]);
        assert!(
            odd.contains("one ` alone") && !odd.contains("<code>"),
            "{odd}"
        );
    }
}
