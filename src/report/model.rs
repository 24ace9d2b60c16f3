//! What a report says, built once from a [`Report`]: its header, one table per subsystem and
//! unit, the charts, the notes (peaks, percentiles, Little's law), a multi-node run's nodes
//! and the system. The terminal, Markdown and HTML exporters only lay it out.

use super::charts::for_report;
use super::nodes;
use super::plot::Chart;
use super::{
    concurrency_notes, groups, headers, littles_law_notes, notice_notes, peak_notes,
    percentile_notes, reference_tools, row, solve_notes, variant_header,
};
use crate::results::{Report, Subsystem, Unit};

/// One table of results: a subsystem's records of one unit.
#[derive(Debug, Clone)]
pub struct ResultTable {
    pub subsystem: Subsystem,
    pub unit: Unit,
    pub headers: Vec<String>,
    pub rows: Vec<Vec<String>>,
    /// Some row is flagged noisy (its note is due).
    pub noisy: bool,
}

/// A node-pair matrix: its title, its table and each cell's heat colour.
#[derive(Debug, Clone)]
pub struct MatrixView {
    pub title: String,
    pub headers: Vec<String>,
    pub rows: Vec<Vec<String>>,
    /// `heat[src][dst]`: the cell's background, where it has one.
    pub heat: Vec<Vec<Option<String>>>,
}

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
    /// In the order of their first record.
    pub tables: Vec<ResultTable>,
    pub charts: Vec<Chart>,
    pub peak_notes: Vec<String>,
    /// The points' warnings (oversubscribed, a disk target in memory, above 100 %).
    pub notices: Vec<String>,
    pub percentile_notes: Vec<String>,
    pub littles_law_notes: Vec<String>,
    pub solve_notes: Vec<String>,
    pub concurrency_notes: Vec<String>,
    pub nodes: Option<NodesView>,
    pub system: SystemRows,
    pub has_results: bool,
}

impl Document {
    pub fn of(report: &Report) -> Document {
        let tables: Vec<ResultTable> = groups(&report.results)
            .into_iter()
            .map(|((subsystem, unit), records)| {
                let tools = reference_tools(&records);
                let with_reference = tools.is_some();
                ResultTable {
                    headers: headers(unit.name(), variant_header(subsystem), tools.as_deref()),
                    rows: records
                        .iter()
                        .map(|r| row(r).cells(with_reference))
                        .collect(),
                    noisy: records.iter().any(|r| r.summary.noisy),
                    subsystem,
                    unit,
                }
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
            machine: super::table::machine_line(&report.system),
            subsystems,
            tables,
            charts: for_report(report),
            peak_notes: peak_notes(&report.results),
            notices: notice_notes(&report.results),
            percentile_notes: percentile_notes(&report.results),
            setups: [Subsystem::Disk, Subsystem::Net]
                .into_iter()
                .filter_map(|s| Some((s, super::setup_line(s, &report.results)?)))
                .collect(),
            littles_law_notes: littles_law_notes(&report.results),
            solve_notes: solve_notes(&report.results),
            concurrency_notes: concurrency_notes(&report.results),
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
                    notes: f.notes.clone(),
                    systems: f
                        .nodes
                        .iter()
                        .filter_map(|n| {
                            let sys = n.system.as_ref()?;
                            Some((n.rank, n.hostname.clone(), super::table::system_rows(sys)))
                        })
                        .collect(),
                }
            }),
            system: super::table::system_rows(&report.system),
            has_results: !report.results.is_empty(),
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
        for t in &mut self.tables {
            t.headers.iter_mut().for_each(p);
            rows(&mut t.rows);
        }
        for notes in [
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
    pub fn text_notes(&self) -> [(&'static str, &[String]); 6] {
        [
            ("Notices", &self.notices),
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
