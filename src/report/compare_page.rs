//! The comparison's page (`peakbench report A B [C…] --html`): the runs, what differs between
//! their machines, the machines side by side as bars, the merged line charts and the table of
//! every common point.

use super::compare::Comparison;
use super::html::{STYLE, figure, table};
use crate::text::xml_escape;

impl Comparison {
    /// The comparison as one self-contained HTML page, in the report page's style: the runs,
    /// how the verdicts are reached, the merged line charts and the table of every common
    /// point.
    pub fn html(&self) -> Vec<u8> {
        let mut out = String::with_capacity(128 * 1024);
        let letters: Vec<&str> = self.runs.iter().map(|r| r.letter.as_str()).collect();
        out.push_str(&format!(
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
             <title>peakbench comparison — {}</title>\n<style>{STYLE}\
             td.worse {{ background: #fde2e1; }} td.better {{ background: #dcf5e3; }}{}</style>\n\
             </head>\n<body>\n<header>\n<h1>peakbench comparison</h1>\n",
            xml_escape(&letters.join(" vs ")),
            super::side_by_side::BARS_STYLE
        ));
        out.push_str(&table(
            "runs",
            &["Run", "Given as", "Started", "Host", "Machine"].map(String::from),
            self.runs
                .iter()
                .map(|r| {
                    vec![
                        r.letter.clone(),
                        r.name.clone(),
                        r.started_at.clone(),
                        r.host.clone(),
                        r.machine.clone(),
                    ]
                })
                .collect(),
            usize::MAX,
        ));
        if let Some((header, rows)) = self.machine_table() {
            out.push_str(&table("machines", &header, rows, usize::MAX));
        }
        out.push_str(&format!(
            "<p class=\"meta\">{}</p>\n<p class=\"meta\">{}</p>\n</header>\n",
            xml_escape(&self.method()),
            xml_escape(&self.worse_line())
        ));
        // Machines side by side: three runs or more, or another machine's.
        if self.runs.len() >= 3 || !self.machines.hardware_differences().is_empty() {
            out.push_str(&super::side_by_side::bars_html(self));
        }
        let figures: String = self.charts.iter().map(figure).collect();
        if !figures.is_empty() {
            out.push_str(&format!(
                "<section id=\"charts\">\n<h2>Charts</h2>\n<div class=\"charts\">\n{figures}</div>\n</section>\n"
            ));
        }
        out.push_str("<section id=\"points\">\n<h2>Every common point</h2>\n<div class=\"scroll\"><table class=\"comparison\">\n<thead><tr>");
        for h in self.headers() {
            out.push_str(&format!("<th>{}</th>", xml_escape(&h)));
        }
        out.push_str("</tr></thead>\n<tbody>\n");
        let runs = self.runs.len();
        for (row, cells) in self.rows.iter().zip(self.cells()) {
            out.push_str("<tr>");
            for (i, c) in cells.iter().enumerate() {
                // The verdict columns: 3 + runs + 2k + 1 for later run k (from 0).
                // (The reference columns come after them all.)
                let verdict_of =
                    (i >= 3 + runs && i < 3 + runs + 2 * (runs - 1) && (i - 3 - runs) % 2 == 1)
                        .then(|| (i - 3 - runs) / 2 + 1);
                let class = match verdict_of.and_then(|k| row.changes[k].as_ref()) {
                    Some(ch) if ch.slower => " class=\"worse\"",
                    Some(ch) if ch.faster => " class=\"better\"",
                    _ if i >= 3 && verdict_of.is_none() => " class=\"num\"",
                    _ => "",
                };
                out.push_str(&format!("<td{class}>{}</td>", xml_escape(c)));
            }
            out.push_str("</tr>\n");
        }
        out.push_str("</tbody></table></div>\n</section>\n");
        let lists = self.unpaired_lists();
        if !lists.is_empty() {
            out.push_str("<section id=\"unpaired\">\n<h2>Points not in every run</h2>\n");
            for (heading, points) in lists {
                out.push_str(&format!("<h3>{}</h3>\n<ul>\n", xml_escape(&heading)));
                for p in points {
                    out.push_str(&format!("<li>{}</li>\n", xml_escape(&p)));
                }
                out.push_str("</ul>\n");
            }
            out.push_str("</section>\n");
        }
        out.push_str(
            "<footer>Written by peakbench. The charts are inline SVG; the page needs no network and \
             no script.</footer>\n</body>\n</html>\n",
        );
        out.into_bytes()
    }
}
