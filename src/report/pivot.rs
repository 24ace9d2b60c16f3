//! `report RUN --pivot rows=A,cols=B`: the run's figures as the reports tabulate them — one
//! table per workload, figure and value of the other parameters, parameter A down the rows and
//! B across the columns (threads × block size, block size × queue depth…), each cell a mean.

use super::model::{Document, ResultTable};
use crate::results::ResultRecord;
use crate::results::point::{Field, Role, fields, shown_value};
use crate::units::format_sig;
use serde_json::Value;
use std::collections::{HashMap, HashSet};

/// Which parameter goes down the rows and which across the columns, by the name the JSON
/// document gives it (`threads`, `block_size_bytes`, `iodepth`, …; `block_size` for
/// `block_size_bytes` will do).
#[derive(Debug, Clone, PartialEq)]
pub struct Pivot {
    pub rows: String,
    pub cols: String,
}

const FORM: &str = "give --pivot rows=PARAMETER,cols=PARAMETER (e.g. rows=threads,cols=block_size)";

impl std::str::FromStr for Pivot {
    type Err = String;

    fn from_str(s: &str) -> Result<Pivot, String> {
        let (mut rows, mut cols) = (None, None);
        for part in s.split(',') {
            let (side, key) = part.split_once('=').ok_or_else(|| FORM.to_string())?;
            let key = key.trim();
            let ok = !key.is_empty()
                && key.len() <= 64
                && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            if !ok {
                return Err(format!(
                    "'{}' is not a parameter's name; {FORM}",
                    crate::text::printable(key)
                ));
            }
            match side.trim() {
                "rows" if rows.is_none() => rows = Some(key.to_string()),
                "cols" if cols.is_none() => cols = Some(key.to_string()),
                _ => return Err(FORM.to_string()),
            }
        }
        match (rows, cols) {
            (Some(rows), Some(cols)) if rows != cols => Ok(Pivot { rows, cols }),
            (Some(_), Some(_)) => Err(format!("rows and cols name the same parameter; {FORM}")),
            _ => Err(FORM.to_string()),
        }
    }
}

/// Whether a field is parameter `name` (its JSON key, or the key without `_bytes`).
fn is(f: &Field, name: &str) -> bool {
    f.key == name || f.key.strip_suffix("_bytes") == Some(name)
}

/// A value for sorting: numbers by value, anything else after them by text.
fn order(v: &Value) -> (f64, String) {
    (v.as_f64().unwrap_or(f64::INFINITY), v.to_string())
}

/// One pivot table's records: the workload, figure and the other parameters in words.
struct Block<'a> {
    title: String,
    /// The JSON keys of the row and column parameters.
    keys: (&'static str, &'static str),
    recs: Vec<(&'a ResultRecord, Value, Value)>,
}

impl Pivot {
    /// The document of `report` with its tables pivoted.
    pub fn document(&self, report: &crate::results::Report) -> Result<Document, String> {
        let mut doc = Document::of(report);
        doc.tables = self.tables(&report.results)?;
        Ok(doc)
    }

    /// The pivot tables of `results`: every point that has both parameters, one table per
    /// subsystem, workload, figure, unit and value of the point's other parameters.
    pub fn tables(&self, results: &[ResultRecord]) -> Result<Vec<ResultTable>, String> {
        let mut blocks: Vec<Block> = Vec::new();
        let mut at: HashMap<(String, String), usize> = HashMap::new();
        for r in results {
            let fs = fields(&r.params);
            let named = |name: &str| fs.iter().find(|f| f.role.names() && is(f, name));
            let (Some(row), Some(col)) = (named(&self.rows), named(&self.cols)) else {
                continue;
            };
            let rest: Vec<String> = fs
                .iter()
                .filter(|f| f.role.names() && !is(f, &self.rows) && !is(f, &self.cols))
                .filter_map(Field::words)
                .collect();
            // "Disk RS throughput (MB/s)", "Disk RS (IOPS)": a figure its unit names is not
            // named twice.
            let metric = if r.metric.name().eq_ignore_ascii_case(r.unit.name()) {
                String::new()
            } else {
                format!(" {}", r.metric)
            };
            let title = format!(
                "{} {}{metric} ({}){}",
                r.subsystem.title(),
                crate::text::printable(&r.workload),
                r.unit,
                rest.iter().map(|w| format!(" · {w}")).collect::<String>()
            );
            let key = (
                format!("{}/{}/{}", r.subsystem, r.workload, r.metric),
                title.clone(),
            );
            let entry = (r, row.value.clone(), col.value.clone());
            match at.get(&key) {
                Some(&i) => blocks[i].recs.push(entry),
                None => {
                    at.insert(key, blocks.len());
                    blocks.push(Block {
                        title,
                        keys: (row.key, col.key),
                        recs: vec![entry],
                    });
                }
            }
        }
        if blocks.is_empty() {
            return Err(self.nothing_to_pivot(results));
        }
        Ok(blocks.into_iter().map(|b| self.table(b)).collect())
    }

    fn table(&self, b: Block) -> ResultTable {
        // A value as a key: its JSON text (equal values write the same text, 0 and -0 aside:
        // the values come from the points' fields, numbers and strings).
        let text = |v: &Value| v.to_string();
        let distinct = |row: bool| {
            let mut seen: HashSet<String> = HashSet::new();
            let mut vs: Vec<Value> = Vec::new();
            for e in &b.recs {
                let v = if row { &e.1 } else { &e.2 };
                if seen.insert(text(v)) {
                    vs.push(v.clone());
                }
            }
            vs.sort_by(|a, c| {
                let (a, c) = (order(a), order(c));
                a.0.total_cmp(&c.0).then(a.1.cmp(&c.1))
            });
            vs
        };
        let (rows, cols) = (distinct(true), distinct(false));
        let (row_key, col_key) = b.keys;
        // The first record of each cell.
        let mut cell: HashMap<(String, String), &ResultRecord> = HashMap::new();
        for e in &b.recs {
            cell.entry((text(&e.1), text(&e.2))).or_insert(e.0);
        }
        let mut headers = vec![format!("{} \\ {}", words(row_key), words(col_key))];
        headers.extend(cols.iter().map(|c| shown_value(col_key, c)));
        let cells = rows
            .iter()
            .map(|rv| {
                let mut line = vec![shown_value(row_key, rv)];
                line.extend(cols.iter().map(|cv| {
                    cell.get(&(text(rv), text(cv))).map_or_else(
                        || "—".to_string(),
                        |r| {
                            let s = &r.summary;
                            format!("{}{}", format_sig(s.mean), if s.noisy { " !" } else { "" })
                        },
                    )
                }));
                line
            })
            .collect();
        let first = &b.recs[0].0;
        ResultTable {
            subsystem: first.subsystem,
            unit: first.unit,
            title: Some(b.title),
            first_figure: 1,
            headers,
            rows: cells,
            noisy: b.recs.iter().any(|e| e.0.summary.noisy),
        }
    }

    /// Why no table: the parameters the run's points do have.
    fn nothing_to_pivot(&self, results: &[ResultRecord]) -> String {
        let names = super::distinct(
            results
                .iter()
                .flat_map(|r| fields(&r.params))
                .filter(|f| f.role == Role::Axis)
                .map(|f| f.key),
        );
        format!(
            "no point of the run has both {} and {}; its points have {}",
            crate::text::printable(&self.rows),
            crate::text::printable(&self.cols),
            if names.is_empty() {
                "no such parameters".to_string()
            } else {
                names.join(", ")
            }
        )
    }
}

/// A parameter's name for a header: `block_size_bytes` → "block size".
fn words(key: &str) -> String {
    key.strip_suffix("_bytes").unwrap_or(key).replace('_', " ")
}

/// The pivot tables as CSV: one row per table row, the table's workload, figure, unit and
/// other parameters first, then a column per value of the column parameter (the union over
/// the tables; a table without a value leaves it empty).
pub fn csv(tables: &[ResultTable]) -> Vec<u8> {
    let field = |t: &str| {
        let t = crate::text::printable(t);
        if t.contains([',', '"', '\n']) {
            format!("\"{}\"", t.replace('"', "\"\""))
        } else {
            t
        }
    };
    let cols: Vec<&String> = super::distinct(tables.iter().flat_map(|t| t.headers.iter().skip(1)));
    let corner = tables
        .first()
        .map_or(String::new(), |t| t.headers[0].clone());
    let mut head = vec!["table".to_string(), "unit".into(), corner];
    head.extend(cols.iter().map(|c| c.to_string()));
    let mut out = head.iter().map(|h| field(h)).collect::<Vec<_>>().join(",");
    out.push('\n');
    for t in tables {
        // Where each of the table's columns is (the first of a name).
        let mut at_of: HashMap<&String, usize> = HashMap::new();
        for (i, h) in t.headers.iter().skip(1).enumerate() {
            at_of.entry(h).or_insert(i);
        }
        for r in &t.rows {
            let mut line = vec![field(&t.heading()), field(t.unit.name()), field(&r[0])];
            for c in &cols {
                let at = at_of.get(c).copied();
                let cell = at.and_then(|i| r.get(i + 1)).map_or("", |v| v.as_str());
                // Figures only: no dash for a missing one, no noisy mark.
                let cell = cell.trim_end_matches(" !");
                line.push(field(if cell == "—" { "" } else { cell }));
            }
            out.push_str(&line.join(","));
            out.push('\n');
        }
    }
    out.into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::{Metric, Subsystem, Unit};
    use crate::results::params::Params;

    fn disk(workload: &str, threads: u32, block: u64, iodepth: u32, mbps: f64) -> ResultRecord {
        let params = Params::with_defaults(
            Subsystem::Disk,
            workload,
            serde_json::json!({"threads": threads, "iodepth": iodepth, "block_size_bytes": block}),
        )
        .unwrap();
        ResultRecord::new(
            Subsystem::Disk,
            workload,
            params,
            Metric::Throughput,
            Unit::BytesPerSec,
            vec![mbps, mbps],
            Err("none".into()),
        )
    }

    #[test]
    fn the_form_is_rows_and_cols() {
        let p: Pivot = "rows=threads,cols=block_size".parse().unwrap();
        assert_eq!(
            (p.rows.as_str(), p.cols.as_str()),
            ("threads", "block_size")
        );
        let p: Pivot = "cols=iodepth, rows=block_size_bytes".parse().unwrap();
        assert_eq!(
            (p.rows.as_str(), p.cols.as_str()),
            ("block_size_bytes", "iodepth")
        );
        for bad in [
            "",
            "rows=threads",
            "rows=threads,cols=threads",
            "rows=threads,rows=iodepth",
            "x=threads,cols=iodepth",
            "rows=thr\u{1b}[2J,cols=iodepth",
            "rows=,cols=iodepth",
        ] {
            let e = bad.parse::<Pivot>().unwrap_err();
            assert!(e.contains("rows=") && !e.contains('\u{1b}'), "{bad}: {e}");
        }
    }

    /// Threads down, block sizes across, one table per workload and queue depth; a point not
    /// measured is a dash, and the CSV leaves it empty.
    #[test]
    fn a_sweep_becomes_one_table_per_workload_and_fixed_parameters() {
        let recs = [
            disk("RS", 1, 4096, 1, 100.0),
            disk("RS", 2, 4096, 1, 190.0),
            disk("RS", 1, 1 << 20, 1, 500.0),
            disk("RS", 2, 1 << 20, 1, 900.0),
            disk("RR", 1, 4096, 1, 10.0),
            disk("RR", 1, 4096, 32, 80.0),
        ];
        let p: Pivot = "rows=threads,cols=block_size".parse().unwrap();
        let tables = p.tables(&recs).unwrap();
        let titles: Vec<String> = tables.iter().map(|t| t.heading()).collect();
        assert_eq!(
            titles,
            [
                "Disk RS throughput (B/s) · QD 1 · psync · direct · random",
                "Disk RR throughput (B/s) · QD 1 · psync · direct · random",
                "Disk RR throughput (B/s) · QD 32 · psync · direct · random",
            ]
        );
        assert_eq!(
            tables[0].headers,
            ["threads \\ block size", "4 KiB", "1 MiB"]
        );
        assert_eq!(
            tables[0].rows,
            [["1", "100.0", "500.0"], ["2", "190.0", "900.0"]]
        );
        let p: Pivot = "rows=block_size,cols=threads".parse().unwrap();
        let mut partial = recs[..3].to_vec();
        partial.swap(0, 2);
        let t = &p.tables(&partial).unwrap()[0];
        assert_eq!(
            t.rows,
            [["4 KiB", "100.0", "190.0"], ["1 MiB", "500.0", "—"]]
        );
        let csv = String::from_utf8(csv(std::slice::from_ref(t))).unwrap();
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines[0], "table,unit,block size \\ threads,1,2");
        assert!(lines[2].ends_with(",B/s,1 MiB,500.0,"), "{csv}");
        let p: Pivot = "rows=threads,cols=streams".parse().unwrap();
        let e = p.tables(&recs).unwrap_err();
        assert!(e.contains("threads, block_size_bytes, iodepth"), "{e}");
    }
}
