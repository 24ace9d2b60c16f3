//! `report RUN --pivot rows=A,cols=B`: the run's figures as the reports tabulate them — parameter
//! A down the rows and B across the columns (threads × block size, block size × queue depth…),
//! each cell a mean, one table per figure and value of the other parameters. A side may name
//! several parameters (`rows=threads+block_size`), and the workload, the figure (`metric`) and
//! the protocol are parameters too: `cols=workload` puts the workloads side by side, each with
//! its figures (latency beside throughput), `cols=protocol` TCP beside UDP.
//!
//! A parameter that is not on a side splits the tables where it takes several values, except
//! where its value follows from a side's value (UDP's rate, which TCP has not; a workload's
//! access order): then it goes with that value, in its label, or in the title where it is the
//! same across the table.

use super::model::{Document, ResultTable};
use crate::results::ResultRecord;
use crate::results::point::{Drawn, Field, Role, fields, shown_value};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

/// Which parameters go down the rows and which across the columns, by the names the JSON
/// document gives them (`threads`, `block_size_bytes`, `iodepth`, `protocol`, …;
/// `block_size` for `block_size_bytes` will do), and `workload` and `metric`.
#[derive(Debug, Clone, PartialEq)]
pub struct Pivot {
    pub rows: Vec<String>,
    pub cols: Vec<String>,
}

const FORM: &str = "give --pivot rows=PARAMETER,cols=PARAMETER (e.g. rows=threads,cols=block_size; several joined by +, as rows=threads+block_size)";

/// The sides' names that are not parameters of a point's `params`.
const WORKLOAD: &str = "workload";
const METRIC: &str = "metric";

impl std::str::FromStr for Pivot {
    type Err = String;

    fn from_str(s: &str) -> Result<Pivot, String> {
        let (mut rows, mut cols) = (None, None);
        for part in s.split(',') {
            let (side, keys) = part.split_once('=').ok_or_else(|| FORM.to_string())?;
            let mut names: Vec<String> = Vec::new();
            for key in keys.split('+').map(str::trim) {
                let ok = !key.is_empty()
                    && key.len() <= 64
                    && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
                if !ok {
                    return Err(format!(
                        "'{}' is not a parameter's name; {FORM}",
                        crate::text::printable(key)
                    ));
                }
                names.push(key.to_string());
            }
            match side.trim() {
                "rows" if rows.is_none() => rows = Some(names),
                "cols" if cols.is_none() => cols = Some(names),
                _ => return Err(FORM.to_string()),
            }
        }
        let (Some(rows), Some(cols)) = (rows, cols) else {
            return Err(FORM.to_string());
        };
        let bare = |k: &String| k.strip_suffix("_bytes").unwrap_or(k).to_string();
        let mut seen = HashSet::new();
        if let Some(k) = rows.iter().chain(&cols).find(|k| !seen.insert(bare(k))) {
            return Err(format!(
                "{} is named twice; each side names different parameters; {FORM}",
                crate::text::printable(k)
            ));
        }
        Ok(Pivot { rows, cols })
    }
}

/// Whether a field is parameter `name` (its JSON key, or the key without `_bytes`).
fn is(f: &Field, name: &str) -> bool {
    f.key == name || f.key.strip_suffix("_bytes") == Some(name)
}

/// Whether a field follows from the point's other parameters (a thread per stream, a
/// workload's access order, a working set from the threads): it never splits a table.
fn follows(f: &Field) -> bool {
    f.role == Role::Axis && f.drawn == Drawn::Not
}

/// A metric's words: "throughput (MB/s)", or the unit alone where it names the figure
/// ("IOPS").
fn figure_words(r: &ResultRecord) -> String {
    if r.metric.name().eq_ignore_ascii_case(r.unit.name()) {
        r.unit.to_string()
    } else {
        format!("{} ({})", r.metric, r.unit)
    }
}

/// One value of a side's parameter: its text as a key, how it sorts and how it reads.
#[derive(Debug, Clone)]
struct Part {
    key: String,
    number: Option<f64>,
    shown: String,
}

/// A point of the pivot: its record, its sides' values, the class it is pivoted in (subsystem,
/// and workload and figure where no side has them) and its other parameters, by key.
struct Item<'a> {
    rec: &'a ResultRecord,
    row: Vec<Part>,
    col: Vec<Part>,
    class: String,
    /// Parameters that may split the tables: (value as text, words in a label, where any).
    others: BTreeMap<&'static str, (String, Option<String>)>,
    /// Parameters that follow from others: shown in a title where the same across it.
    implied: Vec<(&'static str, String, Option<String>)>,
}

/// What a parameter that is on no side is to a class of points.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Place {
    /// It splits the tables.
    Split,
    /// Its value follows from the row's.
    Row,
    /// Its value follows from the column's.
    Col,
}

/// A row's or column's label: its text, and what sorts it (each part's number, where it
/// first comes in the run, its key), which is also what tells it apart.
struct Label {
    text: String,
    sort: Vec<(f64, usize, String)>,
}

impl Label {
    /// Labels in the order of their parts: numbers ascending, then first seen, then by name.
    fn order(a: &Label, c: &Label) -> std::cmp::Ordering {
        for (x, y) in a.sort.iter().zip(&c.sort) {
            let o = x.0.total_cmp(&y.0).then(x.1.cmp(&y.1)).then(x.2.cmp(&y.2));
            if o.is_ne() {
                return o;
            }
        }
        a.sort.len().cmp(&c.sort.len())
    }
}

/// One pivot table's points.
struct Block<'a> {
    items: Vec<&'a Item<'a>>,
}

/// The parameters that label a side of table `b` (`true`: its rows): placed on it (`place`),
/// differing across the table and one value per side's value. Worked out once per table, not
/// per label: each test reads every point.
fn labelling(b: &Block, place: impl Fn(&str) -> Place) -> HashSet<(&'static str, bool)> {
    // The values each parameter takes in the table.
    let values = |k: &str| -> HashSet<Option<&String>> {
        b.items
            .iter()
            .map(|i| i.others.get(k).map(|x| &x.0))
            .collect()
    };
    // Whether a parameter is one value per row's (column's) value in this table: else it
    // differs from cell to cell (a condition of some points) and labels neither side.
    let of_side = |k: &str, row: bool| {
        let mut seen: HashMap<String, Option<&String>> = HashMap::new();
        b.items.iter().all(|i| {
            let parts = if row { &i.row } else { &i.col };
            let at: Vec<&str> = parts.iter().map(|p| p.key.as_str()).collect();
            let v = i.others.get(k).map(|x| &x.0);
            *seen.entry(at.join("\u{0}")).or_insert(v) == v
        })
    };
    let keys: BTreeSet<&'static str> = b
        .items
        .iter()
        .flat_map(|i| i.others.keys().copied())
        .collect();
    keys.iter()
        .flat_map(|&k| [(k, true), (k, false)])
        .filter(|&(k, row)| {
            place(k) == if row { Place::Row } else { Place::Col }
                && values(k).len() > 1
                && of_side(k, row)
        })
        .collect()
}

impl Pivot {
    /// The document of `report` with its tables pivoted.
    pub fn document(&self, report: &crate::results::Report) -> Result<Document, String> {
        let mut doc = Document::of(report);
        doc.tables = self.tables(&report.results)?;
        Ok(doc)
    }

    /// The names on the sides, with the figure beside the workload where the workload is on a
    /// side and the figure on none (latency beside throughput).
    fn sides(&self) -> (Vec<&str>, Vec<&str>, bool) {
        let mut rows: Vec<&str> = self.rows.iter().map(String::as_str).collect();
        let mut cols: Vec<&str> = self.cols.iter().map(String::as_str).collect();
        let named = |n: &str| rows.contains(&n) || cols.contains(&n);
        let rides = !named(METRIC) && named(WORKLOAD);
        if rides {
            if rows.contains(&WORKLOAD) {
                rows.push(METRIC);
            } else {
                cols.push(METRIC);
            }
        }
        (rows, cols, rides)
    }

    /// A record as a point of the pivot, or None where it lacks a side's parameter.
    fn item<'a>(&self, r: &'a ResultRecord) -> Option<Item<'a>> {
        let (rows, cols, _) = self.sides();
        let fs = fields(&r.params);
        let part = |name: &str| -> Option<Part> {
            match name {
                WORKLOAD => Some(Part {
                    key: format!("w:{}", r.workload),
                    number: None,
                    shown: r.workload.name().to_string(),
                }),
                METRIC => Some(Part {
                    key: format!("m:{}/{}", r.metric, r.unit),
                    number: None,
                    shown: figure_words(r),
                }),
                _ => fs
                    .iter()
                    .find(|f| f.role.names() && is(f, name))
                    .map(|f| Part {
                        key: format!("{}={}", f.key, f.value),
                        number: f.value.as_f64(),
                        shown: shown_value(f.key, &f.value),
                    }),
            }
        };
        let row: Vec<Part> = rows.iter().map(|n| part(n)).collect::<Option<_>>()?;
        let col: Vec<Part> = cols.iter().map(|n| part(n)).collect::<Option<_>>()?;
        let on_side = |f: &Field| rows.iter().chain(&cols).any(|n| is(f, n));
        let mut class = r.subsystem.to_string();
        if !rows.contains(&WORKLOAD) && !cols.contains(&WORKLOAD) {
            class.push_str(&format!("/{}", r.workload));
        }
        if !rows.contains(&METRIC) && !cols.contains(&METRIC) {
            class.push_str(&format!("/{}/{}", r.metric, r.unit));
        }
        let mut others = BTreeMap::new();
        let mut implied = Vec::new();
        for f in fs.iter().filter(|f| !on_side(f)) {
            let words = f.words();
            if follows(f) {
                implied.push((f.key, f.value.to_string(), words));
            } else if f.role.names() || f.role == Role::Condition {
                others.insert(f.key, (f.value.to_string(), words));
            }
        }
        Some(Item {
            rec: r,
            row,
            col,
            class,
            others,
            implied,
        })
    }

    /// The pivot tables of `results`: every point that has the sides' parameters, one table
    /// per subsystem, figure (unless a side has it), workload (likewise) and value of the
    /// parameters that split them.
    pub fn tables(&self, results: &[ResultRecord]) -> Result<Vec<ResultTable>, String> {
        let items: Vec<Item> = results.iter().filter_map(|r| self.item(r)).collect();
        if items.is_empty() {
            return Err(self.nothing_to_pivot(results));
        }
        // Each class's parameters' places.
        let mut classes: Vec<&str> = Vec::new();
        for i in &items {
            if !classes.contains(&i.class.as_str()) {
                classes.push(&i.class);
            }
        }
        let mut places: HashMap<(&str, &str), Place> = HashMap::new();
        for class in &classes {
            let mine: Vec<&Item> = items.iter().filter(|i| i.class == *class).collect();
            for (key, place) in places_of(&mine) {
                places.insert((class, key), place);
            }
        }
        // The tables: a class's points with the same values of the parameters that split.
        let mut blocks: Vec<Block> = Vec::new();
        let mut at: HashMap<String, usize> = HashMap::new();
        for i in &items {
            let split: Vec<String> = (i.others.iter())
                .filter(|(k, _)| places.get(&(i.class.as_str(), **k)) == Some(&Place::Split))
                .map(|(k, (v, _))| format!("{k}={v}"))
                .collect();
            let key = format!("{} {}", i.class, split.join(" "));
            match at.get(&key) {
                Some(&b) => blocks[b].items.push(i),
                None => {
                    at.insert(key, blocks.len());
                    blocks.push(Block { items: vec![i] });
                }
            }
        }
        // Where each part's value first comes: text sorts by it.
        let mut first: HashMap<&str, usize> = HashMap::new();
        for p in items.iter().flat_map(|i| i.row.iter().chain(&i.col)) {
            let n = first.len();
            first.entry(p.key.as_str()).or_insert(n);
        }
        let mut tables: Vec<ResultTable> = blocks
            .iter()
            .map(|b| self.table(b, &places, &first))
            .collect();
        // Tables whose titles are alike differ in a condition: it says which.
        let titles: Vec<String> = tables.iter().map(|t| t.heading()).collect();
        for (k, t) in tables.iter_mut().enumerate() {
            let twins: Vec<usize> = (0..titles.len())
                .filter(|&j| titles[j] == titles[k])
                .collect();
            if twins.len() < 2 {
                continue;
            }
            let mine = &blocks[k].items[0].others;
            let mut extra = String::new();
            for (key, (v, words)) in mine {
                let differs = twins
                    .iter()
                    .any(|&j| blocks[j].items[0].others.get(key).map(|x| &x.0) != Some(v));
                if differs && words.is_none() {
                    let value: Value = serde_json::from_str(v).unwrap_or(Value::Null);
                    extra.push_str(&format!(
                        " · {} {}",
                        key_words(key),
                        shown_value(key, &value)
                    ));
                }
            }
            if let Some(title) = t.title.as_mut() {
                title.push_str(&extra);
            }
        }
        Ok(tables)
    }

    fn table(
        &self,
        b: &Block,
        places: &HashMap<(&str, &str), Place>,
        first: &HashMap<&str, usize>,
    ) -> ResultTable {
        let (rows_named, cols_named, rides) = self.sides();
        let head = b.items[0];
        let class = head.class.as_str();
        let place = |k: &str| places.get(&(class, k)).copied().unwrap_or(Place::Split);
        // The figure beside the workload reads in the title where the table has one.
        let figures = Self::figures(b, (&rows_named, &cols_named));
        let figure_in_title = !rides || figures.len() == 1;
        let units: HashSet<_> = b.items.iter().map(|i| i.rec.unit).collect();
        let one_unit = (units.len() == 1).then_some(head.rec.unit);
        let labelling = labelling(b, place);
        // A side's label: its parts, then the parameters that go with its value and differ
        // across the table.
        let label = |i: &Item, row: bool| -> Label {
            let (parts, names) = if row {
                (&i.row, &rows_named)
            } else {
                (&i.col, &cols_named)
            };
            let mut words: Vec<String> = Vec::new();
            let mut sort = Vec::new();
            for (p, name) in parts.iter().zip(names.iter()) {
                if *name == METRIC && rides && figure_in_title {
                    continue;
                }
                sort.push((
                    p.number.unwrap_or(f64::INFINITY),
                    first.get(p.key.as_str()).copied().unwrap_or(usize::MAX),
                    p.key.clone(),
                ));
                match words.last_mut() {
                    // "RS throughput (MB/s)": the figure of the workload before it.
                    Some(w) if *name == METRIC && rides => *w = format!("{w} {}", p.shown),
                    _ => words.push(p.shown.clone()),
                }
            }
            // The parameters that go with the side's value and differ across the table; one
            // without words (a condition) follows from the value and only keeps it apart.
            for (k, (v, w)) in &i.others {
                if !labelling.contains(&(*k, row)) {
                    continue;
                }
                sort.push((f64::INFINITY, usize::MAX, format!("{k}={v}")));
                words.extend(w.clone());
            }
            Label {
                text: words.join(" · "),
                sort,
            }
        };
        let distinct = |row: bool| {
            let mut seen: HashSet<String> = HashSet::new();
            let mut vs: Vec<Label> = Vec::new();
            for i in &b.items {
                let l = label(i, row);
                if seen.insert(format!("{:?}", l.sort)) {
                    vs.push(l);
                }
            }
            vs.sort_by(Label::order);
            vs
        };
        let (rows, cols) = (distinct(true), distinct(false));
        // The first record of each cell.
        let mut cell: HashMap<(String, String), &ResultRecord> = HashMap::new();
        let id = |l: &Label| format!("{:?}", l.sort);
        for i in &b.items {
            cell.entry((id(&label(i, true)), id(&label(i, false))))
                .or_insert(i.rec);
        }
        let side_words = |names: &[&str]| {
            names
                .iter()
                .filter(|n| !(rides && **n == METRIC))
                .map(|n| key_words(n))
                .collect::<Vec<_>>()
                .join(" · ")
        };
        let mut headers = vec![format!(
            "{} \\ {}",
            side_words(&rows_named),
            side_words(&cols_named)
        )];
        headers.extend(cols.iter().map(|c| c.text.clone()));
        let cells = rows
            .iter()
            .map(|rv| {
                let mut line = vec![rv.text.clone()];
                line.extend(cols.iter().map(|cv| {
                    cell.get(&(id(rv), id(cv))).map_or_else(
                        || "—".to_string(),
                        |r| {
                            let noisy = if r.summary.noisy { " !" } else { "" };
                            format!("{}{noisy}", super::rows::headline_cell(r))
                        },
                    )
                }));
                line
            })
            .collect();
        let r = head.rec;
        let title = Self::title(
            b,
            (&rows_named, &cols_named),
            rides && figure_in_title,
            one_unit,
        );
        ResultTable {
            subsystem: r.subsystem,
            unit: one_unit,
            title: Some(title),
            first_figure: 1,
            headers,
            rows: cells,
            noisy: b.items.iter().any(|i| i.rec.summary.noisy),
            burst: b.items.iter().any(|i| i.rec.burst().is_some()),
        }
    }

    /// The figures (metrics) a table's points have on the side that names them.
    fn figures<'b>(b: &'b Block, (rows_named, cols_named): (&[&str], &[&str])) -> HashSet<&'b str> {
        let (named, on_rows) = if rows_named.contains(&METRIC) {
            (rows_named, true)
        } else {
            (cols_named, false)
        };
        let m = named.iter().position(|n| *n == METRIC);
        b.items
            .iter()
            .map(|i| {
                let at = if on_rows { &i.row } else { &i.col };
                m.and_then(|m| at.get(m)).map_or("", |p| p.key.as_str())
            })
            .collect()
    }

    /// A table's title: subsystem, workload and figure where no side has them, then the
    /// parameters the same across the table, in the order a label has them (`figure_in_title`:
    /// the figure rides with the workload and is one across the table).
    fn title(
        b: &Block,
        (rows_named, cols_named): (&[&str], &[&str]),
        figure_in_title: bool,
        one_unit: Option<crate::ids::Unit>,
    ) -> String {
        let head = b.items[0];
        let r = head.rec;
        let same_across = |k: &str| {
            let values: HashSet<Option<&String>> = b
                .items
                .iter()
                .map(|i| i.others.get(k).map(|x| &x.0))
                .collect();
            values.len() == 1
        };
        let mut title = r.subsystem.title().to_string();
        let workload_named = rows_named.contains(&WORKLOAD) || cols_named.contains(&WORKLOAD);
        if !workload_named {
            title.push_str(&format!(" {}", r.workload));
        }
        let metric_named = rows_named.contains(&METRIC) || cols_named.contains(&METRIC);
        if !metric_named || figure_in_title {
            // "Disk RS throughput (MB/s)", "Disk RS (IOPS)": a figure its unit names is not
            // named twice.
            if !r.metric.name().eq_ignore_ascii_case(r.unit.name()) {
                title.push_str(&format!(" {}", r.metric));
            }
        }
        if let Some(u) = one_unit.filter(|_| !metric_named || figure_in_title) {
            title.push_str(&format!(" ({u})"));
        }
        for f in fields(&r.params) {
            let value = f.value.to_string();
            let shown = match head.others.get(f.key) {
                Some((_, w)) => w.clone().filter(|_| same_across(f.key)),
                None => head
                    .implied
                    .iter()
                    .find(|x| x.0 == f.key)
                    .and_then(|x| x.2.clone())
                    .filter(|_| {
                        b.items
                            .iter()
                            .all(|i| i.implied.iter().any(|y| y.0 == f.key && y.1 == value))
                    }),
            };
            if let Some(w) = shown {
                title.push_str(&format!(" · {w}"));
            }
        }
        title
    }

    /// Why no table: the parameters the run's points do have.
    fn nothing_to_pivot(&self, results: &[ResultRecord]) -> String {
        let names = super::distinct(
            results
                .iter()
                .flat_map(|r| fields(&r.params))
                .filter(|f| f.role.names())
                .map(|f| f.key),
        );
        let wanted: Vec<&String> = (self.rows.iter().chain(&self.cols))
            .filter(|n| n.as_str() != WORKLOAD && n.as_str() != METRIC)
            .collect();
        let wanted: Vec<String> = wanted.iter().map(|n| crate::text::printable(n)).collect();
        format!(
            "no point of the run has {}{}; its points have workload, metric, {}",
            if wanted.len() == 2 { "both " } else { "" },
            wanted.join(" and "),
            if names.is_empty() {
                "no other parameters".to_string()
            } else {
                names.join(", ")
            }
        )
    }
}

/// Where each parameter that is on no side goes, for one class's points: with the column's
/// value where it follows from it (over the class, or among the points equal in every other
/// such parameter), else with the row's, else it splits the tables.
fn places_of<'a>(items: &[&Item<'a>]) -> Vec<(&'static str, Place)> {
    let keys: Vec<&'static str> =
        super::distinct(items.iter().flat_map(|i| i.others.keys().copied()));
    let value = |i: &Item, k: &str| i.others.get(k).map(|x| x.0.clone());
    let side = |i: &Item, row: bool| -> String {
        let parts = if row { &i.row } else { &i.col };
        parts
            .iter()
            .map(|p| p.key.as_str())
            .collect::<Vec<_>>()
            .join("\u{0}")
    };
    // Whether `k` is one value per side's value within each group, and more than one in some.
    let follows_side = |k: &str, row: bool, group: &dyn Fn(&Item) -> String| {
        let mut of: HashMap<(String, String), Option<String>> = HashMap::new();
        let mut seen: HashMap<String, HashSet<Option<String>>> = HashMap::new();
        for i in items {
            let g = group(i);
            let v = value(i, k);
            match of.entry((g.clone(), side(i, row))) {
                std::collections::hash_map::Entry::Occupied(e) if *e.get() != v => return false,
                std::collections::hash_map::Entry::Occupied(_) => {}
                std::collections::hash_map::Entry::Vacant(e) => {
                    e.insert(v.clone());
                }
            }
            seen.entry(g).or_default().insert(v);
        }
        seen.values().any(|s| s.len() > 1)
    };
    keys.iter()
        .map(|&k| {
            let whole = |_: &Item| String::new();
            let rest = |i: &Item| {
                keys.iter()
                    .filter(|&&o| o != k)
                    .map(|o| format!("{o}={:?}", value(i, o)))
                    .collect::<Vec<_>>()
                    .join(" ")
            };
            let place = if follows_side(k, false, &whole) || follows_side(k, false, &rest) {
                Place::Col
            } else if follows_side(k, true, &whole) || follows_side(k, true, &rest) {
                Place::Row
            } else {
                Place::Split
            };
            (k, place)
        })
        .collect()
}

/// A parameter's name for a header: `block_size_bytes` → "block size".
fn key_words(key: &str) -> String {
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
            let mut line = vec![
                field(&t.heading()),
                field(t.unit.map_or("", |u| u.name())),
                field(&r[0]),
            ];
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
            crate::results::Workload::named(Subsystem::Disk, workload).unwrap(),
            serde_json::json!({"threads": threads, "iodepth": iodepth, "block_size_bytes": block}),
        )
        .unwrap();
        ResultRecord::new(
            crate::results::Workload::named(Subsystem::Disk, workload).unwrap(),
            params,
            Metric::Throughput,
            Unit::BytesPerSec,
            vec![mbps, mbps],
            Err("none".into()),
        )
    }

    fn s(names: &[&str]) -> Vec<String> {
        names.iter().map(|n| n.to_string()).collect()
    }

    #[test]
    fn the_form_is_rows_and_cols() {
        let p: Pivot = "rows=threads,cols=block_size".parse().unwrap();
        assert_eq!((p.rows, p.cols), (s(&["threads"]), s(&["block_size"])));
        let p: Pivot = "cols=iodepth, rows=block_size_bytes".parse().unwrap();
        assert_eq!(
            (p.rows, p.cols),
            (s(&["block_size_bytes"]), s(&["iodepth"]))
        );
        let p: Pivot = "rows=threads+block_size,cols=workload".parse().unwrap();
        assert_eq!(
            (p.rows, p.cols),
            (s(&["threads", "block_size"]), s(&["workload"]))
        );
        for bad in [
            "",
            "rows=threads",
            "rows=threads,cols=threads",
            "rows=threads,rows=iodepth",
            "x=threads,cols=iodepth",
            "rows=thr\u{1b}[2J,cols=iodepth",
            "rows=,cols=iodepth",
            "rows=threads+,cols=iodepth",
            "rows=block_size,cols=threads+block_size_bytes",
            "rows=workload+workload,cols=threads",
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
        assert!(
            e.starts_with("no point of the run has both threads and streams"),
            "{e}"
        );
        assert!(
            e.contains("threads, block_size_bytes, iodepth, engine"),
            "{e}"
        );
    }

    /// tests/fixtures/history/assignment.json (a recorded `run --profile assignment`, 9 MB) in
    /// display units, read once for the tests that pivot it.
    fn assignment() -> &'static crate::results::Report {
        static REPORT: std::sync::OnceLock<crate::results::Report> = std::sync::OnceLock::new();
        REPORT.get_or_init(|| {
            let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/fixtures/history/assignment.json");
            crate::results::Report::from_json(&std::fs::read(path).unwrap())
                .unwrap()
                .displayed(&Default::default())
        })
    }

    /// The recorded assignment run's pivot tables (in display units).
    fn recorded(pivot: &str) -> Vec<ResultTable> {
        pivot
            .parse::<Pivot>()
            .unwrap()
            .tables(&assignment().results)
            .unwrap()
    }

    /// The table of `tables` titled `title`.
    fn titled<'t>(tables: &'t [ResultTable], title: &str) -> &'t ResultTable {
        let titles: Vec<String> = tables.iter().map(|t| t.heading()).collect();
        let at = titles.iter().position(|t| t == title);
        &tables[at.unwrap_or_else(|| panic!("no table {title}: {titles:#?}"))]
    }

    /// Every cell a figure (a noisy one marked), none missing.
    fn full(t: &ResultTable) {
        for r in &t.rows {
            for c in &r[1..] {
                assert!(
                    c.trim_end_matches(" !").parse::<f64>().is_ok(),
                    "{c} in {r:?}"
                );
            }
        }
    }

    const DISK: &str = "Disk · 1 MiB blocks · QD 1 · psync · direct";
    const CPU: &str = "CPU throughput (GOPS) · avx512 · strong scaling · total ops 1000000";
    const NET: &str = "Network THROUGHPUT throughput (Mbit/s) · 1 KiB messages · receiver · client to server · server 127.0.0.1";

    /// The reports' three wide tables from the recorded assignment run: disk workloads across
    /// with latency beside throughput, the CPU's GFLOPS and GIOPS workloads side by side, TCP
    /// beside UDP (UDP's rate goes with its column, it does not split the table).
    #[test]
    fn the_reports_wide_tables_from_a_recorded_run() {
        let tables = recorded("rows=threads,cols=workload");
        let disk = titled(&tables, DISK);
        assert_eq!(disk.unit, None);
        assert_eq!(
            disk.headers[..7],
            [
                "threads \\ workload",
                "RS throughput (MB/s)",
                "RS IOPS",
                "RS latency (ms)",
                "RR throughput (MB/s)",
                "RR IOPS",
                "RR latency (ms)"
            ]
        );
        assert_eq!(disk.headers.len(), 13);
        let threads: Vec<&str> = disk.rows.iter().map(|r| r[0].as_str()).collect();
        assert_eq!(threads, ["1", "2", "4", "8", "12", "24", "48"]);
        full(disk);
        let cpu = titled(&tables, CPU);
        assert_eq!(cpu.unit, Some(crate::ids::Unit::Gops));
        assert_eq!(
            cpu.headers,
            ["threads \\ workload", "SP", "DP", "INT32", "INT64"]
        );
        let threads: Vec<&str> = cpu.rows.iter().map(|r| r[0].as_str()).collect();
        assert_eq!(threads, ["1", "2", "4", "8"]);
        full(cpu);
        // The other CPU job's points (10¹² operations scaled down) are a table of their own.
        let c1 = "CPU throughput (GOPS) · avx512 · strong scaling · total ops 999450683";
        assert_eq!(
            titled(&tables, c1).headers,
            ["threads \\ workload", "QP", "HP", "SP", "DP"]
        );
        let tables = recorded("rows=streams,cols=protocol");
        let net = titled(&tables, NET);
        assert_eq!(
            net.headers,
            ["streams \\ protocol", "TCP", "UDP · rate unlimited"]
        );
        let streams: Vec<&str> = net.rows.iter().map(|r| r[0].as_str()).collect();
        assert_eq!(streams, ["1", "2", "4", "8"]);
        full(net);
        // Block size down the rows too: one disk table per queue depth and engine.
        let tables = recorded("rows=threads+block_size,cols=workload");
        let t = titled(&tables, "Disk · QD 1 · psync");
        assert_eq!(t.headers[0], "threads · block size \\ workload");
        assert!(
            t.rows.iter().any(|r| r[0] == "2 · 1 MiB · direct"),
            "{:?}",
            t.rows
        );
        // Workloads down, figures across.
        let tables = recorded("rows=workload,cols=threads");
        let t = titled(&tables, DISK);
        assert_eq!(t.rows[0][0], "RS throughput (MB/s)");
        assert_eq!(t.headers[1..], ["1", "2", "4", "8", "12", "24", "48"]);
    }

    /// The wide tables in every format a pivot has: the terminal (in parts that fit 100
    /// columns), Markdown, HTML and CSV (a mixed table's unit column empty, its units in the
    /// column names).
    #[test]
    fn the_wide_tables_in_every_format() {
        let r = assignment();
        for (pivot, title, head) in [
            ("rows=threads,cols=workload", DISK, "RS latency (ms)"),
            ("rows=threads,cols=workload", CPU, "INT32"),
            ("rows=streams,cols=protocol", NET, "UDP · rate unlimited"),
        ] {
            let doc = pivot.parse::<Pivot>().unwrap().document(r).unwrap();
            let text = super::super::table::render_doc(&doc, 100);
            assert!(text.lines().all(|l| l.chars().count() <= 100), "{text}");
            // A title wider than the terminal wraps.
            let words = title.split(' ').take(6).collect::<Vec<_>>().join(" ");
            // A header in a narrow column wraps too.
            let head_words = head.split(' ').all(|w| text.contains(w));
            assert!(text.contains(&words) && head_words, "{title}");
            let md = String::from_utf8(super::super::markdown::render_doc(&doc)).unwrap();
            assert!(md.contains(&format!("## {title}\n")), "{title}");
            assert!(md.contains(&format!("| {head} |")), "{title}");
            // The page without the report's charts (drawn and tested elsewhere: 3 s of SVG
            // each in a test build).
            let tables_only = Document {
                charts: Vec::new(),
                ..doc.clone()
            };
            let html = String::from_utf8(super::super::html::render_doc(&tables_only)).unwrap();
            assert!(html.contains(&format!("<th>{head}</th>")), "{title}");
            let csv = String::from_utf8(csv(&doc.tables)).unwrap();
            let line = csv.lines().find(|l| l.starts_with(title)).unwrap();
            assert!(
                csv.lines().next().unwrap().contains(&format!(",{head},"))
                    || csv.lines().next().unwrap().ends_with(&format!(",{head}")),
                "{title}"
            );
            assert!(line[title.len()..].starts_with(','), "{line}");
        }
        let doc = "rows=threads,cols=workload"
            .parse::<Pivot>()
            .unwrap()
            .document(r)
            .unwrap();
        let csv = String::from_utf8(csv(&doc.tables)).unwrap();
        assert!(csv.contains(&format!("{DISK},,1,")), "mixed units: no unit");
        assert!(csv.contains(&format!("{CPU},GOPS,1,")), "one unit");
        let text = super::super::table::render_doc(&doc, 100);
        assert!(
            text.contains(&format!("{DISK} (columns 1–")),
            "the disk table in parts"
        );
    }
}
