//! `peakbench peak` on the terminal: the CPU's sheet and each other subsystem's section, a
//! table of peaks with their formulas, and the warnings physics gives against a figure the
//! user rated.

use crate::results::peak_sheet::{PeakDocument, Section};
use crate::sysinfo::peak::Peak;

/// The document as text `width` columns wide.
pub fn render(doc: &PeakDocument, width: usize) -> String {
    let mut out = String::new();
    if let Some(sheet) = &doc.cpu {
        let rows: Vec<(String, Result<Peak, String>)> = sheet
            .peaks
            .iter()
            .map(|p| {
                let label = format!("{} ({})", p.workload, p.operation);
                (label, known(&p.peak, &p.unknown_reason))
            })
            .collect();
        let head = format!(
            "{}: {} socket{} × {} cores at {} GHz (nothing measured; table: {})",
            sheet.microarchitecture,
            sheet.sockets,
            if sheet.sockets == 1 { "" } else { "s" },
            sheet.cores_per_socket,
            sheet.clock_ghz,
            sheet.table_source,
        );
        out.push_str(&format!(
            "{}\n{}",
            crate::text::wrap(&head, width, "  "),
            super::table::render_peaks("Workload", &rows, width)
        ));
    }
    for (title, section) in doc.others.all() {
        out.push_str(&render_section(section, width, title));
    }
    out
}

/// A figure's peak, or why it has none.
fn known(peak: &Option<Peak>, unknown_reason: &Option<String>) -> Result<Peak, String> {
    peak.clone()
        .ok_or_else(|| unknown_reason.clone().unwrap_or_default())
}

/// A section's table titled `title`, then its warnings.
pub fn render_section(section: &Section, width: usize, title: &str) -> String {
    let rows: Vec<(String, Result<Peak, String>)> = section
        .peaks
        .iter()
        .map(|f| (f.figure.clone(), known(&f.peak, &f.unknown_reason)))
        .collect();
    let head = format!("{title}: {} (nothing measured)", section.described);
    let mut out = format!(
        "\n{}\n{}",
        crate::text::wrap(&head, width, "  "),
        super::table::render_peaks("Figure", &rows, width)
    );
    for f in &section.peaks {
        for w in &f.warnings {
            let line = format!("warning: {}: {w}", f.figure);
            out.push_str(&format!("{}\n", crate::text::wrap(&line, width, "  ")));
        }
    }
    out
}
