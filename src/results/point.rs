//! What names a point, in one place: each parameter type says, through [`Fields`], which of its
//! parameters name the point (its identity), which change what it measures without being swept
//! (its conditions), which a chart's line must not join across, and how a person reads each.
//! The point's key (how two runs' records are paired) and its label are formed from that. The
//! history, the report, the charts and the multi-node merge all read them from here.

use super::ResultRecord;
use serde_json::{Map, Value};

/// What a parameter is to its point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Names the point, and a chart's line joins points that differ in it (threads, a block
    /// size, a queue depth…).
    Axis,
    /// Names the point, and a line never joins across it (an ISA, an engine, a protocol…).
    Variant,
    /// Not swept, but changes what the point measures: two runs' points that differ in it are
    /// not compared, and a line never joins across it (a sync mode, an access order…).
    Condition,
    /// As [`Role::Condition`], but a line may join across it (the file or array it ran on).
    Extent,
}

impl Role {
    /// Whether the parameter names the point.
    pub fn names(self) -> bool {
        matches!(self, Role::Axis | Role::Variant)
    }

    /// Whether points that differ in it are compared only with care (not at all).
    pub fn conditions(self) -> bool {
        matches!(self, Role::Condition | Role::Extent)
    }

    /// Whether a chart's line must not join points that differ in it.
    pub fn splits_series(self) -> bool {
        matches!(self, Role::Variant | Role::Condition)
    }
}

/// How a person reads a parameter in a point's label.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Words {
    /// The value alone ("avx512", "io_uring").
    Bare,
    /// The value between two texts ("QD 32", "4 KiB blocks").
    Around(&'static str, &'static str),
    /// A count and its noun, singular or plural ("1 thread", "8 streams").
    Count(&'static str, &'static str),
    /// Not in the label (the workload's name says it already).
    Hidden,
}

/// What a chart does with a parameter that names the point ([`Role::Axis`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Drawn {
    /// A sweep can put it on a chart's x axis, titled so ("threads", "block size").
    Along(&'static str),
    /// Its values are a chart's lines (a probe, a cache level, a node).
    Apart,
    /// Neither: it follows from the others (a bandwidth point's working set from its threads
    /// and arrays), or it is not an axis.
    Not,
}

/// One parameter of a point: its JSON key (which the schema fixes), its value as the record
/// writes it, what it is to the point, how a person reads it and how a chart draws it.
#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    pub key: &'static str,
    pub value: Value,
    pub role: Role,
    pub words: Words,
    pub drawn: Drawn,
}

impl Field {
    /// The parameter in a label, or `None` where it is not shown.
    pub fn words(&self) -> Option<String> {
        let shown = shown_value(self.key, &self.value);
        match self.words {
            Words::Bare => Some(shown),
            Words::Around(before, after) => Some(format!("{before}{shown}{after}")),
            Words::Count(one, many) => {
                let word = if self.value.as_u64() == Some(1) {
                    one
                } else {
                    many
                };
                Some(format!("{shown} {word}"))
            }
            Words::Hidden => None,
        }
    }
}

/// A parameter type's fields, in the order a label shows them.
pub trait Fields {
    fn fields(&self, out: &mut FieldList);

    /// The words of the tables' variant column (SPEC §4) for its `metric`: what tells the
    /// point's row from its neighbours' beside the columns of their own (workload, threads,
    /// and the network's protocol where `with_protocol` is false).
    fn variant(&self, _metric: crate::ids::Metric, _with_protocol: bool) -> String {
        String::new()
    }
}

/// The fields a parameter type gives, gathered in order.
#[derive(Debug, Default)]
pub struct FieldList(pub Vec<Field>);

impl FieldList {
    fn push(&mut self, key: &'static str, value: impl serde::Serialize, role: Role, words: Words) {
        let value = serde_json::to_value(value).unwrap_or(Value::Null);
        self.0.push(Field {
            key,
            value,
            role,
            words,
            drawn: Drawn::Not,
        });
    }

    /// A parameter that names the point, that a sweep puts on a chart's x axis titled
    /// `title`, and that a line joins across.
    pub fn swept(
        &mut self,
        key: &'static str,
        value: impl serde::Serialize,
        words: Words,
        title: &'static str,
    ) {
        self.push(key, value, Role::Axis, words);
        self.drawn(Drawn::Along(title));
    }

    /// A parameter that names the point, whose values are a chart's lines.
    pub fn axis(&mut self, key: &'static str, value: impl serde::Serialize, words: Words) {
        self.push(key, value, Role::Axis, words);
        self.drawn(Drawn::Apart);
    }

    /// A parameter that names the point but follows from the others (no chart draws it).
    pub fn follows(&mut self, key: &'static str, value: impl serde::Serialize, words: Words) {
        self.push(key, value, Role::Axis, words);
    }

    /// A parameter that names the point and that a line never joins across.
    pub fn variant(&mut self, key: &'static str, value: impl serde::Serialize, words: Words) {
        self.push(key, value, Role::Variant, words);
    }

    /// A condition of the measurement (see [`Role::Condition`]).
    pub fn condition(&mut self, key: &'static str, value: impl serde::Serialize) {
        self.push(key, value, Role::Condition, Words::Hidden);
    }

    /// The extent the point ran on (see [`Role::Extent`]).
    pub fn extent(&mut self, key: &'static str, value: impl serde::Serialize) {
        self.push(key, value, Role::Extent, Words::Hidden);
    }

    fn drawn(&mut self, drawn: Drawn) {
        if let Some(last) = self.0.last_mut() {
            last.drawn = drawn;
        }
    }
}

/// The fields of a record's parameters, in label order.
pub fn fields(params: &impl Fields) -> Vec<Field> {
    let mut out = FieldList::default();
    params.fields(&mut out);
    out.0
}

/// The parameters that name a record's point, as a JSON object, without those in `except`.
pub fn identity(params: &impl Fields, except: &[&str]) -> Map<String, Value> {
    fields(params)
        .into_iter()
        .filter(|f| f.role.names() && !except.contains(&f.key))
        .map(|f| (f.key.to_string(), f.value))
        .collect()
}

/// A record's conditions ([`Role::conditions`]), by key.
pub fn conditions(params: &impl Fields) -> Map<String, Value> {
    fields(params)
        .into_iter()
        .filter(|f| f.role.conditions())
        .map(|f| (f.key.to_string(), f.value))
        .collect()
}

/// The parameters a chart's line must not join across ([`Role::splits_series`]), in order.
pub fn series_conditions(params: &impl Fields) -> Vec<(&'static str, Value)> {
    fields(params)
        .into_iter()
        .filter(|f| f.role.splits_series())
        .map(|f| (f.key, f.value))
        .collect()
}

/// The identity of a record's point: subsystem, workload, metric and the parameters that name
/// it ([`Role::names`]).
pub fn point_key(rec: &ResultRecord) -> String {
    point_key_except(rec, &[])
}

/// [`point_key`] without the identity parameters in `except` (a multi-node run compares the
/// same point across nodes: without `node`).
pub fn point_key_except(rec: &ResultRecord, except: &[&str]) -> String {
    let ident = identity(&rec.params, except);
    format!(
        "{}/{}/{} {}",
        rec.subsystem,
        rec.workload,
        rec.metric,
        Value::Object(ident)
    )
}

/// A parameter's value for a person: a size in bytes as a size, text made printable.
pub fn shown_value(key: &str, v: &Value) -> String {
    match v {
        Value::Number(n) if key.ends_with("_bytes") => n
            .as_u64()
            .map_or_else(|| n.to_string(), crate::units::format_size),
        // A read/write mix as MLC names it ("3:1 reads-writes", "all reads").
        Value::String(s) if key == "mix" => super::params::Mix::parse(s)
            .map_or_else(|_| crate::text::printable(s), super::params::Mix::words),
        Value::Number(n) if key == "target_rate_bps" => n
            .as_u64()
            .map_or_else(|| n.to_string(), crate::units::format_bit_rate),
        Value::String(s) => crate::text::printable(s),
        // LOADED's traffic: none at all, or a pause after each burst.
        Value::Null if key == "injection_delay_ns" => "idle".into(),
        Value::Number(n) if key == "injection_delay_ns" => format!("delay {n} ns"),
        Value::Null => "none".into(),
        other => crate::text::printable(&other.to_string()),
    }
}

/// The point for a person: the workload, then each parameter that names it in words, e.g.
/// "DP · 2 threads · avx512", "RR · 4 KB blocks · 8 threads · QD 1 · io_uring · direct".
pub fn label(rec: &ResultRecord) -> String {
    label_except(rec, &[])
}

/// [`label`] without the identity parameters in `except`.
pub fn label_except(rec: &ResultRecord, except: &[&str]) -> String {
    let mut parts = vec![rec.workload.name().to_string()];
    parts.extend(
        fields(&rec.params)
            .iter()
            .filter(|f| f.role.names() && !except.contains(&f.key))
            .filter_map(Field::words),
    );
    parts.join(" · ")
}
