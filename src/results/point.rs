//! What names a point, in one place: the parameters that say which point a record is
//! ([`IDENTITY`]), those that change what it measures without being swept ([`CONDITIONS`]),
//! those a chart's line must not join across ([`SERIES_CONDITIONS`]), the point's key (how
//! two runs' records are paired) and its label for a person. The history, the report, the
//! charts and the multi-node merge all read them from here.

use super::ResultRecord;

/// The parameters that say which point a record is (not what the harness chose or measured
/// along the way): two runs' records with the same subsystem, workload, metric and these are
/// the same point. Named by their JSON keys, which the schema fixes.
pub const IDENTITY: &[&str] = &[
    "threads",
    "n",
    "isa",
    "scaling",
    "block_size_bytes",
    "working_set_bytes",
    "pages",
    "probe",
    "op_bytes",
    "stores",
    "level",
    "iodepth",
    "engine",
    "io_mode",
    "read_percent",
    "protocol",
    "streams",
    "message_size_bytes",
    "side",
    "direction",
    "target_rate_bps",
    "server",
    "node",
    "pattern",
    "src_node",
    "dst_node",
];

/// Parameters that are not swept but change what a point measures: a point whose value differs
/// between the runs is not compared.
pub const CONDITIONS: &[&str] = &[
    "sync",
    "file_per_thread",
    "file_size_bytes",
    "total_bytes",
    "total_ops",
    "order",
    "array_bytes_per_thread",
    "byte_counting",
    "busy_poll_us",
    "tcp_nodelay",
    "nb",
    "library",
    "micro_kernel",
];

/// The parameters under which points are measured that a line must not join across: an engine,
/// an I/O or sync mode, an ISA, a page size… (a psync QD1 point and an io_uring QD32 point are
/// two series, never one line).
pub const SERIES_CONDITIONS: &[&str] = &[
    "engine",
    "io_mode",
    "sync",
    "file_per_thread",
    "isa",
    "scaling",
    "pages",
    "stores",
    "order",
    "protocol",
    "direction",
    "side",
    "byte_counting",
    "tcp_nodelay",
    "busy_poll_us",
    "library",
    "micro_kernel",
    "total_bytes",
    "total_ops",
];

/// The identity of a record's point: subsystem, workload, metric and the identity parameters
/// ([`IDENTITY`]).
pub fn point_key(rec: &ResultRecord) -> String {
    point_key_except(rec, &[])
}

/// [`point_key`] without the identity parameters in `except` (a multi-node run compares the
/// same point across nodes: without `node`).
pub fn point_key_except(rec: &ResultRecord, except: &[&str]) -> String {
    let ident = rec.params.identity(except);
    format!(
        "{}/{}/{} {}",
        rec.subsystem,
        rec.workload,
        rec.metric,
        serde_json::Value::Object(ident)
    )
}

/// A parameter's value for a person: a size in bytes as a size, text made printable.
pub fn shown_value(key: &str, v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::Number(n) if key.ends_with("_bytes") => n
            .as_u64()
            .map_or_else(|| n.to_string(), crate::units::format_size),
        serde_json::Value::String(s) => crate::text::printable(s),
        serde_json::Value::Null => "none".into(),
        other => crate::text::printable(&other.to_string()),
    }
}

/// The point for a person: the workload, then each sweep parameter in words, e.g.
/// "DP · 2 threads · avx512", "RR · 4 KB blocks · 8 threads · QD 1 · io_uring · direct".
pub fn label(rec: &ResultRecord) -> String {
    let ident = rec.params.identity(&[]);
    let mut parts = vec![crate::text::printable(&rec.workload)];
    for key in IDENTITY {
        let Some(v) = ident.get(*key) else { continue };
        // A pure read or write workload's name says it already.
        if *key == "read_percent" && matches!(v.as_u64(), Some(0 | 100)) {
            continue;
        }
        // A staircase's level record: its level says it ("L2 level").
        if *key == "probe" && v == "level" && ident.contains_key("level") {
            continue;
        }
        let shown = shown_value(key, v);
        let plural = |one: &str, many: &str| {
            let word = if v.as_u64() == Some(1) { one } else { many };
            format!("{shown} {word}")
        };
        parts.push(match *key {
            "threads" => plural("thread", "threads"),
            "streams" => plural("stream", "streams"),
            "n" => format!("N = {shown}"),
            "scaling" => format!("{shown} scaling"),
            "block_size_bytes" => format!("{shown} blocks"),
            "working_set_bytes" => format!("{shown} working set"),
            "op_bytes" => format!("{shown} ops"),
            "message_size_bytes" => format!("{shown} messages"),
            "pages" => format!("{shown} pages"),
            "level" => format!("{shown} level"),
            "stores" => format!("{shown} stores"),
            "iodepth" => format!("QD {shown}"),
            "read_percent" => format!("{shown} % reads"),
            "target_rate_bps" => format!("rate {shown} bit/s"),
            "server" => format!("server {shown}"),
            "node" => format!("node {shown}"),
            "src_node" => format!("from node {shown}"),
            "dst_node" => format!("to node {shown}"),
            _ => shown,
        });
    }
    parts.join(" · ")
}
