//! What a report says, built once from a [`Report`]: its header, one table per subsystem and
//! unit, the charts, the notes (peaks, percentiles, Little's law), a multi-node run's nodes
//! and the system, with the machine's description (its one line and the rows of its table).
//! The terminal, Markdown and HTML exporters only lay it out.

use super::charts::for_report;
use super::nodes;
use super::plot::Chart;
use super::{
    concurrency_notes, groups, headers, littles_law_notes, notice_notes, peak_notes,
    percentile_notes, reference_tools, row, solve_notes, variant_header,
};
use crate::results::{Report, ResultRecord, Subsystem, Unit};
use crate::sysinfo::{Fact, SystemInfo};
use crate::units::format_bytes_binary;

/// One table of results: a subsystem's records of one unit.
#[derive(Debug, Clone)]
pub struct ResultTable {
    pub subsystem: Subsystem,
    /// None where its figures are of several units (a pivot with the workloads' figures side
    /// by side): each row's or column's label names its unit.
    pub unit: Option<Unit>,
    /// What the table holds, where it is more than its subsystem and unit (a pivot's
    /// workload, figure and fixed parameters).
    pub title: Option<String>,
    /// The first column of figures (aligned right).
    pub first_figure: usize,
    pub headers: Vec<String>,
    pub rows: Vec<Vec<String>>,
    /// Some row is flagged noisy (its note is due).
    pub noisy: bool,
    /// Some figure is the rate a point kept after a burst (`↓`: its note is due).
    pub burst: bool,
}

pub use super::matrix::MatrixView;

/// A system's properties: (name, value with its source).
pub type SystemRows = Vec<(String, String)>;

/// A multi-node run's part.
#[derive(Debug, Clone)]
pub struct NodesView {
    pub summary: String,
    pub headers: Vec<String>,
    pub rows: Vec<Vec<String>>,
    pub matrices: Vec<MatrixView>,
    /// [`nodes::totals_table`]: no rows where no point was measured on two machines.
    pub totals_headers: Vec<String>,
    pub totals_rows: Vec<Vec<String>>,
    pub outliers: Vec<String>,
    pub notes: Vec<String>,
    /// Each node's system: rank, host name, its rows.
    pub systems: Vec<(u32, String, SystemRows)>,
}

/// The whole report's content.
#[derive(Debug, Clone)]
pub struct Document {
    pub tool: String,
    pub version: String,
    pub started_at: String,
    pub schema_version: u32,
    pub command_line: Vec<String>,
    /// One line: CPU, cores, clocks, virtualization.
    pub machine: String,
    /// Subsystems in the order of their first record: (id, name).
    pub subsystems: Vec<Subsystem>,
    /// What each subsystem's points ran on, in one line, where there is something to say
    /// (disk: engine, I/O and sync mode, device, file system; network: server, protocol,
    /// socket buffers).
    pub setups: Vec<(Subsystem, String)>,
    /// The same, a line per subsystem, for the text exporters.
    pub setup_notes: Vec<String>,
    /// In the order of their first record.
    pub tables: Vec<ResultTable>,
    pub charts: Vec<Chart>,
    pub peak_notes: Vec<String>,
    /// What the figures say, each statement with the figures it cites ([`super::findings`]),
    /// by subsystem: "Memory: …".
    pub findings: Vec<String>,
    /// The same, per subsystem (the HTML page shows them in its section).
    pub findings_by: Vec<(Subsystem, String)>,
    /// The points' warnings (oversubscribed, a disk target in memory, above 100 %).
    pub notices: Vec<String>,
    pub percentile_notes: Vec<String>,
    pub littles_law_notes: Vec<String>,
    pub solve_notes: Vec<String>,
    pub concurrency_notes: Vec<String>,
    pub nodes: Option<NodesView>,
    /// `verify`'s checks (absent for other runs).
    pub verification: Option<super::verify::VerifyView>,
    /// The memory's matrices: C2C's and NUMA's, [`super::mem_matrices`].
    pub mem_matrices: Vec<MatrixView>,
    pub system: SystemRows,
    pub has_results: bool,
    /// The reference tools' runs, by subsystem: what was run for which points and what it
    /// printed (the HTML page shows them on demand).
    pub reference_runs: Vec<ReferenceRun>,
    /// Why points have no reference figure, one line per reason ([`super::reference_gap_notes`]),
    /// "Memory: …"; and per subsystem.
    pub reference_gaps: Vec<String>,
    pub reference_gaps_by: Vec<(Subsystem, String)>,
}

/// One reference measurement's evidence: the points it gave a figure for, the tool and its
/// figure, the command lines and the output (already printable: escaped when recorded).
#[derive(Debug, Clone)]
pub struct ReferenceRun {
    pub subsystem: Subsystem,
    pub points: Vec<String>,
    pub summary: String,
    /// Every command line run for the figure (servers included), as typed in a shell.
    pub commands: Vec<String>,
    pub output: String,
}

/// The reference runs of `results`, one per run (the records of one point share theirs).
fn reference_runs(results: &[crate::results::ResultRecord]) -> Vec<ReferenceRun> {
    let mut out: Vec<ReferenceRun> = Vec::new();
    // Where each subsystem's run of each output is in `out`.
    let mut at: std::collections::HashMap<(Subsystem, &str), usize> = Default::default();
    for r in results {
        let Some(reference) = r.reference.as_ref().filter(|x| !x.output.is_empty()) else {
            continue;
        };
        let point = format!(
            "{} {} ({} {})",
            crate::results::point::label(r),
            r.metric,
            crate::units::format_sig(reference.mean),
            r.unit
        );
        match at.get(&(r.subsystem, reference.output.as_str())) {
            Some(&i) => out[i].points.push(point),
            None => {
                at.insert((r.subsystem, &reference.output), out.len());
                out.push(ReferenceRun {
                    subsystem: r.subsystem,
                    points: vec![point],
                    summary: format!(
                        "{} {}: {} run{}{}",
                        reference.tool,
                        reference.version,
                        reference.samples.len().max(1),
                        if reference.samples.len() > 1 { "s" } else { "" },
                        if reference.interleaved {
                            ", each after one of peakbench's repetitions"
                        } else {
                            ", after peakbench's repetitions"
                        }
                    ),
                    commands: reference.commands.clone(),
                    output: reference.output.clone(),
                });
            }
        }
    }
    out
}

/// The full tables' column of the CPUs a point kept busy.
pub const CPU_COLUMN: &str = "CPUs busy";

/// Where a table's points measured what they cost in CPU: a column of the machine's CPUs they
/// kept busy, before the last (the spread).
fn with_cpu_column(records: &[&ResultRecord], headers: &mut Vec<String>, rows: &mut [Vec<String>]) {
    let busy = |r: &ResultRecord| r.params.cpu_use().and_then(|c| c.busy_cpus());
    if !records.iter().any(|r| busy(r).is_some()) {
        return;
    }
    headers.insert(headers.len() - 1, CPU_COLUMN.into());
    for (r, cells) in records.iter().zip(rows.iter_mut()) {
        let cell = busy(r).map_or_else(|| "—".into(), |b| format!("{b:.2}"));
        cells.insert(cells.len() - 1, cell);
    }
}

/// The header of the column of each point's 95 % confidence interval.
pub const INTERVAL_COLUMN: &str = "95 % CI ±%";

/// Adds the column of each point's 95 % confidence interval of its mean, as a share of the
/// mean (last: after the standard deviation it comes from); "—" with one repetition.
fn with_interval_column(
    records: &[&ResultRecord],
    headers: &mut Vec<String>,
    rows: &mut [Vec<String>],
) {
    headers.push(INTERVAL_COLUMN.into());
    for (r, cells) in records.iter().zip(rows.iter_mut()) {
        cells.push(
            r.summary
                .ci95_relative()
                .map_or_else(|| "—".into(), |c| format!("±{:.1}", c * 100.0)),
        );
    }
}

impl ResultTable {
    /// Its heading: the title, or the subsystem and unit.
    pub fn heading(&self) -> String {
        match &self.title {
            Some(t) => t.clone(),
            None => match self.unit {
                Some(u) => format!("{} ({u})", self.subsystem),
                None => self.subsystem.to_string(),
            },
        }
    }
}

impl Document {
    pub fn of(report: &Report) -> Document {
        let tables: Vec<ResultTable> = groups(&report.results)
            .into_iter()
            .map(|((subsystem, unit), records)| {
                let tools = reference_tools(&records);
                let with_reference = tools.is_some();
                let protocol = records.iter().any(|r| r.params.net().is_some());
                let mut headers = headers(
                    unit.name(),
                    variant_header(subsystem),
                    tools.as_deref(),
                    protocol,
                );
                let mut rows: Vec<Vec<String>> = records
                    .iter()
                    .map(|r| row(r).cells(with_reference))
                    .collect();
                with_cpu_column(&records, &mut headers, &mut rows);
                with_interval_column(&records, &mut headers, &mut rows);
                ResultTable {
                    title: None,
                    first_figure: if protocol { 4 } else { 3 },
                    headers,
                    rows,
                    noisy: records.iter().any(|r| r.summary.noisy),
                    burst: records.iter().any(|r| r.burst().is_some()),
                    subsystem,
                    unit: Some(unit),
                }
            })
            .collect();
        let setups: Vec<(Subsystem, String)> = [Subsystem::Disk, Subsystem::Net]
            .into_iter()
            .filter_map(|s| Some((s, super::setup_line(s, &report.results)?)))
            .collect();
        let found = super::findings::of(report);
        let gaps: Vec<(Subsystem, String)> =
            super::group_by(&report.results.iter().collect::<Vec<_>>(), |r| r.subsystem)
                .into_iter()
                .flat_map(|(s, recs)| {
                    super::reference_gap_notes(&recs)
                        .into_iter()
                        .map(move |g| (s, g))
                })
                .collect();
        let mut subsystems: Vec<Subsystem> = Vec::new();
        for t in &tables {
            if !subsystems.contains(&t.subsystem) {
                subsystems.push(t.subsystem);
            }
        }
        Document {
            tool: report.tool.name.clone(),
            version: report.tool.version.clone(),
            started_at: report.started_at.clone(),
            schema_version: report.schema_version,
            command_line: report.command_line.clone(),
            machine: machine_line(&report.system),
            subsystems,
            tables,
            charts: for_report(report),
            peak_notes: peak_notes(&report.results),
            findings: found
                .iter()
                .map(|f| format!("{}: {}", f.subsystem.title(), f.text))
                .collect(),
            findings_by: found.into_iter().map(|f| (f.subsystem, f.text)).collect(),
            notices: notice_notes(&report.results),
            percentile_notes: percentile_notes(&report.results),
            setups: setups.clone(),
            setup_notes: setups
                .iter()
                .map(|(s, line)| format!("{}: {line}", s.title()))
                .collect(),
            littles_law_notes: littles_law_notes(&report.results),
            solve_notes: solve_notes(&report.results),
            concurrency_notes: concurrency_notes(&report.results),
            mem_matrices: super::mem_matrices(&report.results),
            nodes: report.fleet.as_ref().map(|f| {
                let (headers, rows) = nodes::node_table(f);
                let (totals_headers, totals_rows) = nodes::totals_table(f, &report.results);
                NodesView {
                    summary: nodes::summary(f),
                    headers,
                    rows,
                    matrices: f
                        .matrices
                        .iter()
                        .map(|m| {
                            let (headers, rows) = nodes::matrix_table(f, m);
                            let heat = nodes::heat(m);
                            MatrixView {
                                title: nodes::matrix_title(m),
                                headers,
                                rows,
                                heat: m
                                    .values
                                    .iter()
                                    .map(|r| r.iter().map(|v| heat(*v)).collect())
                                    .collect(),
                            }
                        })
                        .collect(),
                    totals_headers,
                    totals_rows,
                    outliers: f.outliers.iter().map(nodes::outlier_line).collect(),
                    // How the pairs were sampled (by plan), then what did not go to plan.
                    notes: f
                        .pairs_sampled
                        .iter()
                        .map(|s| s.sentence())
                        .chain(f.notes.iter().cloned())
                        .collect(),
                    systems: f
                        .nodes
                        .iter()
                        .filter_map(|n| {
                            let sys = n.system.as_ref()?;
                            Some((n.rank, n.hostname.clone(), system_rows(sys)))
                        })
                        .collect(),
                }
            }),
            system: system_rows(&report.system),
            has_results: !report.results.is_empty(),
            verification: report.verification.as_ref().map(super::verify::view),
            reference_runs: reference_runs(&report.results),
            reference_gaps: gaps
                .iter()
                .map(|(s, g)| format!("{}: {g}", s.title()))
                .collect(),
            reference_gaps_by: gaps,
        }
        .printable()
    }

    /// Every text with its control characters escaped: host names, messages and notes come
    /// from other machines and from files, and are printed on terminals.
    fn printable(mut self) -> Document {
        let p = |s: &mut String| *s = crate::text::printable(s);
        let rows = |r: &mut Vec<Vec<String>>| r.iter_mut().flatten().for_each(p);
        let pairs = |r: &mut Vec<(String, String)>| {
            r.iter_mut().for_each(|(k, v)| {
                p(k);
                p(v);
            })
        };
        for s in [
            &mut self.tool,
            &mut self.version,
            &mut self.started_at,
            &mut self.machine,
        ] {
            p(s);
        }
        self.command_line.iter_mut().for_each(p);
        // A run's output keeps its lines; anything else in it is escaped (a document read
        // from a file holds what anyone wrote there).
        for r in &mut self.reference_runs {
            r.points.iter_mut().for_each(p);
            r.commands.iter_mut().for_each(p);
            p(&mut r.summary);
            r.output = crate::text::printable_lines(&r.output);
        }
        for t in &mut self.tables {
            t.headers.iter_mut().for_each(p);
            rows(&mut t.rows);
        }
        for (_, g) in &mut self.reference_gaps_by {
            p(g);
        }
        for notes in [
            &mut self.reference_gaps,
            &mut self.peak_notes,
            &mut self.notices,
            &mut self.percentile_notes,
            &mut self.littles_law_notes,
            &mut self.solve_notes,
            &mut self.concurrency_notes,
        ] {
            notes.iter_mut().for_each(p);
        }
        if let Some(n) = &mut self.nodes {
            p(&mut n.summary);
            n.headers.iter_mut().for_each(p);
            rows(&mut n.rows);
            n.totals_headers.iter_mut().for_each(p);
            rows(&mut n.totals_rows);
            for m in &mut n.matrices {
                p(&mut m.title);
                m.headers.iter_mut().for_each(p);
                rows(&mut m.rows);
            }
            n.outliers.iter_mut().for_each(p);
            n.notes.iter_mut().for_each(p);
            for (_, host, sys) in &mut n.systems {
                p(host);
                pairs(sys);
            }
        }
        pairs(&mut self.system);
        for c in &mut self.charts {
            c.map_text(p);
        }
        self
    }

    /// The notes after the tables, titled, in the order the text exporters print them (empty
    /// ones included: each exporter leaves them out).
    pub fn text_notes(&self) -> [(&'static str, &[String]); 9] {
        [
            ("Set-up", &self.setup_notes),
            ("Findings", &self.findings),
            ("Notices", &self.notices),
            ("References", &self.reference_gaps),
            ("Solves and multiplies", &self.solve_notes),
            ("Per thread and stream", &self.concurrency_notes),
            ("Latency percentiles", &self.percentile_notes),
            ("Little's law", &self.littles_law_notes),
            ("Theoretical peaks", &self.peak_notes),
        ]
    }
}

impl NodesView {
    /// The titled lists after the tables: the outliers and the notes (empty ones left out).
    pub fn line_sections(&self) -> Vec<(&'static str, &[String])> {
        [
            ("Outliers", self.outliers.as_slice()),
            ("Notes", self.notes.as_slice()),
        ]
        .into_iter()
        .filter(|(_, lines)| !lines.is_empty())
        .collect()
    }
}

/// The machine's host name, made printable ("unknown host" where it was not recorded).
pub fn host_name(sys: &SystemInfo) -> String {
    sys.os
        .hostname
        .value
        .as_deref()
        .map_or_else(|| "unknown host".into(), crate::text::printable)
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
    let share = sys
        .cpu
        .share_line()
        .map_or_else(String::new, |l| format!("; this process: {l}"));
    format!(
        "{uarch} ({brand}), {cores} cores / {} threads, {clock}, {}{share}",
        sys.cpu.threads,
        sys.os.virtualization.display()
    )
}

/// A fact's value with its source in brackets, or why it is unknown.
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

/// The system information as (property, value [source]) pairs: the rows of the terminal's
/// system table ([`super::table::render_system`]) and of the HTML report's.
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
        (
            "CPU quota (cgroup)".into(),
            c.cgroup_cpu_quota.map_or_else(
                || "none".into(),
                |q| {
                    format!(
                        "{:.2} CPUs of time ({} µs every {} µs): this process's share of the machine",
                        q.cpus(),
                        q.quota_us,
                        q.period_us
                    )
                },
            ),
        ),
        (
            "CPUs this process may use".into(),
            if c.allowed_cpus.is_empty() {
                "not recorded (a document written before peakbench recorded them)".into()
            } else {
                format!(
                    "{} ({} of {}); effective {:.2} CPUs{}",
                    crate::sysinfo::sysfs::cpu_list(&c.allowed_cpus),
                    c.allowed_count(),
                    c.threads,
                    c.effective_cpus(),
                    if c.cgroup_cpu_quota.is_some() {
                        " with the CPU quota"
                    } else {
                        ""
                    }
                )
            },
        ),
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
