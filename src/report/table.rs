//! The terminal exporter: the report's model ([`Document`]) with comfy-table, and the system
//! information.

use super::model::{Document, NodesView};
use crate::results::Report;
use crate::sysinfo::{Fact, SystemInfo};
use crate::units::format_bytes_binary;
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

/// A one-line description of the machine.
pub fn machine_line(sys: &SystemInfo) -> String {
    let uarch = sys
        .cpu
        .microarchitecture
        .get()
        .cloned()
        .unwrap_or_else(|| "unknown microarchitecture".into());
    let brand = sys
        .cpu
        .brand
        .get()
        .cloned()
        .unwrap_or_else(|| "unknown CPU".into());
    let clock = match (
        sys.cpu.measured_clock_ghz.get(),
        sys.cpu.all_core_clock_ghz.get(),
    ) {
        (Some(one), Some(all)) => {
            format!("measured clock {one:.2} GHz (1 thread), {all:.2} GHz (all)")
        }
        (Some(one), None) => format!("measured clock {one:.2} GHz (1 thread)"),
        _ => "clock unknown".into(),
    };
    let cores = sys
        .cpu
        .cores
        .get()
        .map_or_else(|| "?".into(), |c| c.to_string());
    format!(
        "{uarch} ({brand}), {cores} cores / {} threads, {clock}, {}",
        sys.cpu.threads,
        sys.os.virtualization.display()
    )
}

/// The results as one table per subsystem and unit, then the peaks.
pub fn render(report: &Report, width: usize) -> String {
    let doc = Document::of(report);
    let mut out = String::new();
    for table in &doc.tables {
        let mut t = new_table(width);
        t.set_header(table.headers.clone());
        for r in &table.rows {
            t.add_row(r.clone());
        }
        for col in 3..t.column_count() {
            if let Some(c) = t.column_mut(col) {
                c.set_cell_alignment(CellAlignment::Right);
            }
        }
        out.push_str(&format!("{} ({})\n{t}\n", table.subsystem, table.unit));
        if table.noisy {
            out.push_str("! noisy: coefficient of variation above 5 %\n");
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

/// A multi-node run's nodes, matrices, outliers and notes.
fn render_nodes(n: &NodesView, width: usize) -> String {
    let grid = |head: &[String], rows: &[Vec<String>]| {
        let mut t = new_table(width);
        t.set_header(head.to_vec());
        for r in rows {
            t.add_row(r.clone());
        }
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
            out.push_str(&format!("  {l}\n"));
        }
    }
    out
}

fn fact<T: std::fmt::Display>(f: &Fact<T>) -> String {
    match f.source {
        Some(s) => format!(
            "{} [{}]",
            f.display(),
            serde_json::to_value(s)
                .ok()
                .and_then(|v| v.as_str().map(String::from))
                .unwrap_or_default()
        ),
        None => f.display(),
    }
}

/// The system information as (property, value [source]) pairs: the rows of
/// [`render_system`] and of the HTML report's system table.
pub fn system_rows(sys: &SystemInfo) -> Vec<(String, String)> {
    let c = &sys.cpu;
    let ghz = |f: &Fact<f64>| Fact {
        value: f.value.map(|v| format!("{v:.3} GHz")),
        source: f.source,
        unknown_reason: f.unknown_reason.clone(),
    };
    let hex = |f: &Fact<u32>| Fact {
        value: f.value.map(|v| format!("{v:#x} ({v})")),
        source: f.source,
        unknown_reason: f.unknown_reason.clone(),
    };
    let bytes = |f: &Fact<u64>| Fact {
        value: f.value.map(format_bytes_binary),
        source: f.source,
        unknown_reason: f.unknown_reason.clone(),
    };
    let mut rows: Vec<(String, String)> = vec![
        ("Architecture".into(), c.arch.clone()),
        ("Vendor".into(), fact(&c.vendor)),
        ("Brand string".into(), fact(&c.brand)),
        ("Family".into(), fact(&hex(&c.family))),
        ("Model".into(), fact(&hex(&c.model))),
        ("Stepping".into(), fact(&c.stepping)),
        ("Microarchitecture".into(), fact(&c.microarchitecture)),
        ("Sockets".into(), fact(&c.sockets)),
        ("Cores".into(), fact(&c.cores)),
        ("Hardware threads".into(), c.threads.to_string()),
        ("Threads per core".into(), fact(&c.threads_per_core)),
        (
            "Instruction sets".into(),
            c.isas
                .iter()
                .map(|i| i.name())
                .collect::<Vec<_>>()
                .join(", "),
        ),
        ("Features".into(), c.features.join(" ")),
        ("XCR0".into(), fact(&c.xcr0)),
        (
            "Core clock, 1 thread".into(),
            fact(&ghz(&c.measured_clock_ghz)),
        ),
        (
            "Clock probes, 1 thread".into(),
            c.clock_probes
                .iter()
                .map(|r| {
                    format!(
                        "{} chain × {} cycles: {:.3} GHz",
                        r.probe, r.latency_cycles, r.ghz
                    )
                })
                .collect::<Vec<_>>()
                .join("; "),
        ),
        (
            format!("Core clock, all {} threads", c.threads),
            fact(&ghz(&c.all_core_clock_ghz)),
        ),
        ("TSC rate".into(), fact(&ghz(&c.tsc_ghz))),
        ("512-bit FMA units per core".into(), fact(&c.fma512_units)),
        ("/proc/cpuinfo cpu MHz".into(), fact(&c.cpuinfo_mhz)),
        ("cpufreq maximum".into(), fact(&ghz(&c.max_freq_ghz))),
    ];
    for cache in &sys.caches {
        rows.push((
            format!("L{} {} cache", cache.level, cache.kind.to_lowercase()),
            format!(
                "{} × {} (shared by {} CPU{})",
                cache.instances,
                format_bytes_binary(cache.size_bytes),
                cache.shared_by_cpus,
                if cache.shared_by_cpus == 1 { "" } else { "s" }
            ),
        ));
    }
    rows.extend([
        ("Memory".into(), fact(&bytes(&sys.memory.total_bytes))),
        (
            "Memory available".into(),
            fact(&bytes(&sys.memory.available_bytes)),
        ),
        ("NUMA nodes".into(), fact(&sys.memory.numa_nodes)),
        (
            "Memory devices (SMBIOS)".into(),
            fact(&Fact {
                value: sys.memory.devices.value.as_ref().map(|d| {
                    d.iter()
                        .map(|m| {
                            format!(
                                "{} {} @ {} MT/s",
                                m.locator,
                                format_bytes_binary(m.size_bytes),
                                m.rate_mts().map_or_else(|| "?".into(), |r| r.to_string())
                            )
                        })
                        .collect::<Vec<_>>()
                        .join(", ")
                }),
                source: sys.memory.devices.source,
                unknown_reason: sys.memory.devices.unknown_reason.clone(),
            }),
        ),
        ("Hostname".into(), fact(&sys.os.hostname)),
        ("Kernel".into(), fact(&sys.os.kernel)),
        ("Distribution".into(), fact(&sys.os.distribution)),
        ("Virtualization".into(), fact(&sys.os.virtualization)),
    ]);
    rows
}

/// Theoretical peaks, one row per workload: value, formula and inputs, or why there is none.
pub fn render_peaks(
    rows: &[(String, Result<crate::sysinfo::peak::Peak, String>)],
    width: usize,
) -> String {
    let mut t = new_table(width);
    t.set_header(["Workload", "theoretical", "unit", "formula and inputs"]);
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
