//! The HTML exporter: one self-contained page — inline CSS and inline SVG charts, no script,
//! nothing fetched — with where the run came from, the machine, per subsystem its charts and
//! the SPEC §4 tables, every peak's formula and inputs, and the latency and Little's-law notes.

use super::charts;
use super::nodes;
use super::plot::{self, Chart};
use super::{
    groups, has_reference, headers, littles_law_notes, peak_notes, percentile_notes, row,
    subsystem_name, variant_header,
};
use crate::results::Report;
use crate::results::fleet::{Fleet, Matrix};

const STYLE: &str = r#"
:root { color-scheme: light; }
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", "DejaVu Sans", sans-serif;
  color: #1d2329; background: #fff; margin: 0 auto; max-width: 1500px; padding: 24px 32px 48px; }
h1 { font-size: 26px; margin: 0 0 6px; }
h2 { font-size: 21px; margin: 36px 0 12px; padding-bottom: 4px; border-bottom: 2px solid #e3e6ea; }
h3 { font-size: 16px; margin: 22px 0 6px; }
.meta { color: #4a5561; margin: 2px 0; }
pre.cmd { background: #f4f6f8; padding: 8px 12px; border-radius: 4px; white-space: pre-wrap;
  word-break: break-all; margin: 8px 0; }
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
.error { color: #b00020; }
footer { margin-top: 40px; color: #6b7682; font-size: 13px; }
@media print { .charts { grid-template-columns: 1fr 1fr; } figure.chart { break-inside: avoid; } }
"#;

/// Escapes text for HTML content and attribute values.
fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The command line as a shell would take it back: arguments with spaces or quotes quoted.
fn shell_line(argv: &[String]) -> String {
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
fn figure(chart: &Chart) -> String {
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
fn table(class: &str, head: &[String], body: Vec<Vec<String>>, numeric_from: usize) -> String {
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
                out.push_str(&format!("<td>{}</td>", esc(c)));
            }
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody></table></div>\n");
    out
}

fn notes(title: &str, lines: Vec<String>) -> String {
    if lines.is_empty() {
        return String::new();
    }
    let mut out = format!("<h3>{}</h3>\n<ul class=\"notes\">\n", esc(title));
    for l in lines {
        out.push_str(&format!("<li>{}</li>\n", esc(&l)));
    }
    out.push_str("</ul>\n");
    out
}

/// A node-pair matrix as a heatmap: a table whose cells are coloured from red (the worst link)
/// to green (the best).
fn heatmap(f: &Fleet, m: &Matrix) -> String {
    let (head, rows) = nodes::matrix_table(f, m);
    let mut out = format!(
        "<h3>{}</h3>\n<div class=\"scroll\"><table class=\"heatmap\">\n<thead><tr>",
        esc(&nodes::matrix_title(m))
    );
    for h in &head {
        out.push_str(&format!("<th>{}</th>", esc(h)));
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    let heat = nodes::heat(m);
    for (src, cells) in rows.iter().enumerate() {
        out.push_str(&format!("<tr><th>{}</th>", esc(&cells[0])));
        for (dst, c) in cells[1..].iter().enumerate() {
            let style = heat(m.values[src][dst])
                .map(|bg| format!(" style=\"background:{bg}\""))
                .unwrap_or_default();
            out.push_str(&format!("<td class=\"num\"{style}>{}</td>", esc(c)));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody></table></div>\n");
    out
}

/// A multi-node run: the nodes (each one's system information folded), the heatmaps and the
/// outliers.
fn fleet_section(f: &Fleet) -> String {
    let mut out = String::from("<section id=\"nodes\">\n<h2>Nodes</h2>\n");
    out.push_str(&format!("<p>{}</p>\n", esc(&nodes::summary(f))));
    let (head, rows) = nodes::node_table(f);
    out.push_str(&table("nodes", &head, rows, usize::MAX));
    out.push_str(&notes(
        "Outliers",
        f.outliers.iter().map(nodes::outlier_line).collect(),
    ));
    for m in &f.matrices {
        out.push_str(&heatmap(f, m));
    }
    out.push_str(&notes("Notes", f.notes.clone()));
    for n in &f.nodes {
        if let Some(sys) = &n.system {
            out.push_str(&format!(
                "<details><summary>System of rank {} ({})</summary>\n{}</details>\n",
                n.rank,
                esc(&n.hostname),
                table(
                    "system",
                    &["Property".to_string(), "Value [source]".to_string()],
                    super::table::system_rows(sys)
                        .into_iter()
                        .map(|(k, v)| vec![k, v])
                        .collect(),
                    usize::MAX,
                )
            ));
        }
    }
    out.push_str("</section>\n");
    out
}

/// The report as one self-contained HTML page.
pub fn render(report: &Report) -> Vec<u8> {
    let charts = charts::for_report(report);
    let table_groups = groups(&report.results);
    let mut subsystems: Vec<&str> = Vec::new();
    for ((subsystem, _), _) in &table_groups {
        if !subsystems.contains(&subsystem.as_str()) {
            subsystems.push(subsystem);
        }
    }
    let command = shell_line(&report.command_line);
    let mut out = String::with_capacity(256 * 1024);
    out.push_str(&format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta name=\"generator\" content=\"peakbench {}\">\n\
         <title>peakbench report — {}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n",
        esc(&report.tool.version),
        esc(&report.started_at)
    ));
    out.push_str(&format!(
        "<header>\n<h1>peakbench report</h1>\n\
         <p class=\"meta\">{} {} · started {} · JSON schema version {}</p>\n\
         <pre class=\"cmd\"><code>{}</code></pre>\n<p class=\"meta\">{}</p>\n</header>\n",
        esc(&report.tool.name),
        esc(&report.tool.version),
        esc(&report.started_at),
        report.schema_version,
        esc(&command),
        esc(&super::table::machine_line(&report.system)),
    ));
    out.push_str("<nav>");
    if report.fleet.is_some() {
        out.push_str("<a href=\"#nodes\">Nodes</a>");
    }
    for s in &subsystems {
        out.push_str(&format!(
            "<a href=\"#{}\">{}</a>",
            esc(s),
            esc(&subsystem_name(s))
        ));
    }
    if !report.results.is_empty() {
        out.push_str("<a href=\"#peaks\">Theoretical peaks</a>");
    }
    out.push_str("<a href=\"#system\">System</a></nav>\n");

    if report.results.is_empty() {
        out.push_str("<p>This report has no results.</p>\n");
    }
    if let Some(f) = &report.fleet {
        out.push_str(&fleet_section(f));
    }
    for subsystem in &subsystems {
        out.push_str(&format!(
            "<section id=\"{}\">\n<h2>{}</h2>\n",
            esc(subsystem),
            esc(&subsystem_name(subsystem))
        ));
        let figures: String = charts
            .iter()
            .filter(|c| c.subsystem == *subsystem)
            .map(figure)
            .collect();
        if !figures.is_empty() {
            out.push_str(&format!("<div class=\"charts\">\n{figures}</div>\n"));
        }
        for ((_, unit), records) in table_groups.iter().filter(|((s, _), _)| s == subsystem) {
            let with_reference = has_reference(records);
            out.push_str(&format!(
                "<h3>{} ({})</h3>\n",
                esc(&subsystem_name(subsystem)),
                esc(unit)
            ));
            out.push_str(&table(
                "results",
                &headers(unit, variant_header(subsystem), with_reference),
                records
                    .iter()
                    .map(|r| row(r).cells(with_reference))
                    .collect(),
                3,
            ));
            if records.iter().any(|r| r.summary.noisy) {
                out.push_str(
                    "<p class=\"note\">! noisy: coefficient of variation above 5 %.</p>\n",
                );
            }
        }
        out.push_str("</section>\n");
    }
    if !report.results.is_empty() {
        out.push_str("<section id=\"peaks\">\n<h2>Theoretical peaks</h2>\n");
        out.push_str(&notes(
            "Every peak: its value, formula and inputs (with their sources), or why it is unknown",
            peak_notes(&report.results),
        ));
        out.push_str(&notes(
            "Latency percentiles",
            percentile_notes(&report.results),
        ));
        out.push_str(&notes("Little's law", littles_law_notes(&report.results)));
        out.push_str("</section>\n");
    }
    out.push_str("<section id=\"system\">\n<h2>System</h2>\n");
    out.push_str(&table(
        "system",
        &["Property".to_string(), "Value [source]".to_string()],
        super::table::system_rows(&report.system)
            .into_iter()
            .map(|(k, v)| vec![k, v])
            .collect(),
        usize::MAX,
    ));
    out.push_str("</section>\n");
    out.push_str(&format!(
        "<footer>Written by {} {}. The charts are inline SVG; the page needs no network and no \
         script.</footer>\n</body>\n</html>\n",
        esc(&report.tool.name),
        esc(&report.tool.version)
    ));
    out.into_bytes()
}
