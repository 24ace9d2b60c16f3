//! Each parameter type's [`Fields`]: which of its parameters name the point, which are its
//! conditions, and how a person reads them, in the order a label shows them.

use super::params::{CpuParams, DiskParams, LatencyParams, MemParams, NetParams, NodeTag, Params};
use super::params::{Direction, LinalgEngine};
use super::params::{Probe, StoreKind};
use super::point::{FieldList, Fields, Words};
use crate::ids::Metric;
use crate::units::format_size;

const THREADS: Words = Words::Count("thread", "threads");

impl Fields for Params {
    fn fields(&self, out: &mut FieldList) {
        match self {
            Params::Cpu(p) => p.fields(out),
            Params::Mem(p) => p.fields(out),
            Params::MemLatency(p) => p.fields(out),
            Params::Disk(p) => p.fields(out),
            Params::Net(p) => p.fields(out),
        }
    }

    fn variant(&self, metric: Metric, with_protocol: bool) -> String {
        match self {
            Params::Cpu(p) => p.variant(metric, with_protocol),
            Params::Mem(p) => p.variant(metric, with_protocol),
            Params::MemLatency(p) => p.variant(metric, with_protocol),
            Params::Disk(p) => p.variant(metric, with_protocol),
            Params::Net(p) => p.variant(metric, with_protocol),
        }
    }
}

impl Fields for NodeTag {
    fn fields(&self, out: &mut FieldList) {
        if let Some(node) = self.node {
            out.axis("node", node, Words::Around("node ", ""));
        }
    }
}

const QUOTA: Words = Words::Around("quota ", " CPUs");

impl Fields for CpuParams {
    fn fields(&self, out: &mut FieldList) {
        out.swept("threads", self.threads, THREADS, "threads");
        if let Some(q) = self.cpu_quota {
            out.variant("cpu_quota", q, QUOTA);
        }
        if let Some(l) = &self.linalg {
            out.swept(
                "n",
                l.n,
                Words::Around("N = ", ""),
                "N (order of the matrices)",
            );
        }
        if let Some(k) = &self.kernel {
            out.variant("isa", k.isa, Words::Bare);
            out.variant("scaling", k.scaling, Words::Around("", " scaling"));
        }
        if let Some(l) = &self.linalg {
            out.variant("engine", l.engine, Words::Bare);
        }
        self.node.fields(out);
        if let Some(total) = self.kernel.as_ref().and_then(|k| k.total_ops) {
            out.condition("total_ops", total);
        }
        if let Some(l) = &self.linalg {
            if let Some(nb) = l.nb {
                out.extent("nb", nb);
            }
            if let Some(library) = &l.library {
                out.condition("library", library);
            }
            out.condition("micro_kernel", &l.micro_kernel);
        }
    }

    /// The ISA and the operation ("avx512 fp64 FMA"), or LINPACK's order, engine and kernel.
    fn variant(&self, _metric: Metric, _with_protocol: bool) -> String {
        let p = self;
        match &p.kernel {
            // The data type and operation beside the ISA: "QP" is 8-bit integers ("avx512
            // int8 add"), never quad precision; HP on a core with native fp16 is an fp16 FMA.
            Some(k) if k.operation.is_empty() => k.isa.name().into(),
            Some(k) => format!("{} {}", k.isa.name(), k.operation),
            None => p
                .linalg
                .as_ref()
                .map(|l| match l.engine {
                    LinalgEngine::BuiltIn => format!("N={} {}", l.n, l.micro_kernel),
                    engine => format!("N={} {engine} {}", l.n, l.micro_kernel),
                })
                .unwrap_or_default(),
        }
    }
}

impl Fields for MemParams {
    fn fields(&self, out: &mut FieldList) {
        out.swept("threads", self.threads, THREADS, "threads");
        if let Some(q) = self.cpu_quota {
            out.variant("cpu_quota", q, QUOTA);
        }
        if let Some(k) = &self.kernel {
            out.variant("isa", k.isa, Words::Bare);
            if let Some(scaling) = k.scaling {
                out.variant("scaling", scaling, Words::Around("", " scaling"));
            }
            if let Some(b) = &k.blocks {
                out.swept("block_size_bytes", b.block_size_bytes, BLOCKS, "block size");
            }
            if let Some(mix) = k.mix {
                out.axis("mix", mix, Words::Bare);
            }
            // All arrays of all threads: it follows from the threads and the array size.
            out.follows("working_set_bytes", k.working_set_bytes, WORKING_SET);
            out.variant("pages", k.pages, PAGES);
            out.variant("stores", k.stores, stores(k.stores));
        }
        self.node.fields(out);
        if let Some(k) = &self.kernel {
            if let Some(total) = k.total_bytes {
                out.condition("total_bytes", total);
            }
            if let Some(b) = &k.blocks {
                out.condition("order", b.order);
            }
            out.extent("array_bytes_per_thread", k.array_bytes_per_thread);
            out.condition("byte_counting", k.byte_counting);
        }
    }

    // A whole-array kernel's arrays (each, all threads together, as --array-size gives them),
    // so that runs over several sizes tell their rows apart.
    fn variant(&self, _metric: Metric, _with_protocol: bool) -> String {
        let p = self;
        p.kernel
            .as_ref()
            .map(|k| match (&k.blocks, k.mix) {
                (Some(b), _) => format_size(b.block_size_bytes),
                (None, mix) => format!(
                    "{}{} arrays",
                    mix.map_or_else(String::new, |m| format!("mix {m}, ")),
                    format_size(k.array_bytes_per_thread.saturating_mul(p.threads as u64))
                ),
            })
            .unwrap_or_default()
    }
}

/// A kernel's stores in words ("nt stores"); a kernel without stores reads only, which its
/// workload's name says ("none stores" would mean nothing).
fn stores(kind: StoreKind) -> Words {
    match kind {
        StoreKind::None => Words::Hidden,
        _ => Words::Around("", " stores"),
    }
}

const BLOCKS: Words = Words::Around("", " blocks");
const WORKING_SET: Words = Words::Around("", " working set");
const PAGES: Words = Words::Around("", " pages");

impl Fields for LatencyParams {
    fn fields(&self, out: &mut FieldList) {
        out.swept("threads", self.threads, THREADS, "threads");
        if let Some(q) = self.cpu_quota {
            out.variant("cpu_quota", q, QUOTA);
        }
        // The parts share keys; as in the JSON object, the last part's value is the one.
        let working_set = self
            .op
            .as_ref()
            .map(|o| o.working_set_bytes)
            .or(self.chase.as_ref().map(|c| c.working_set_bytes));
        if let Some(ws) = working_set {
            out.swept("working_set_bytes", ws, WORKING_SET, "working set");
        }
        let pages = (self.level.as_ref().map(|l| l.pages)).or(self.chase.as_ref().map(|c| c.pages));
        if let Some(pages) = pages {
            out.variant("pages", pages, PAGES);
        }
        // A staircase's level record: its level says it ("L2 level").
        let words = if (self.probe == Probe::Level && self.level.is_some())
            || matches!(self.probe, Probe::C2c | Probe::Loaded | Probe::Numa)
        {
            Words::Hidden
        } else {
            Words::Bare
        };
        out.axis("probe", self.probe, words);
        if let Some(op) = &self.op {
            // The probe's name says its size.
            out.follows("op_bytes", op.op_bytes, Words::Around("", " ops"));
        }
        if let Some(level) = &self.level {
            out.axis("level", level.level, Words::Around("", " level"));
        }
        if let Some(pair) = &self.pair {
            out.axis("from_cpu", pair.from_cpu, Words::Around("from CPU ", ""));
            out.axis("to_cpu", pair.to_cpu, Words::Around("to CPU ", ""));
            out.follows("shared", &pair.shared, Words::Around("shared: ", ""));
        }
        if let Some(cell) = &self.cell {
            out.axis(
                "cpu_node",
                cell.cpu_node,
                Words::Around("CPUs of node ", ""),
            );
            out.axis(
                "mem_node",
                cell.mem_node,
                Words::Around("memory of node ", ""),
            );
            out.follows("distance", cell.distance, Words::Around("distance ", ""));
            out.variant("isa", cell.isa, Words::Bare);
        }
        if let Some(load) = &self.load {
            out.axis("mix", load.mix, Words::Bare);
            out.swept(
                "injection_delay_ns",
                load.injection_delay_ns,
                Words::Bare,
                "injection delay",
            );
            out.variant("isa", load.isa, Words::Bare);
            out.variant("stores", load.stores, stores(load.stores));
        }
        self.node.fields(out);
        if let Some(op) = &self.op {
            out.condition("order", op.order);
        }
        if let Some(cell) = &self.cell {
            out.condition("bound", cell.bound);
            out.extent("array_bytes_per_thread", cell.array_bytes_per_thread);
        }
        if let Some(load) = &self.load {
            out.condition("burst_bytes", load.burst_bytes);
            out.extent("array_bytes_per_thread", load.array_bytes_per_thread);
        }
    }

    /// The working set and pages, the loaded traffic, the NUMA cell, the pair of CPUs, the
    /// probe, or the cache level found.
    fn variant(&self, _metric: Metric, _with_protocol: bool) -> String {
        let p = self;
        match (&p.chase, &p.level, &p.pair) {
            // NUMA: the row's CPUs and the column's memory.
            (Some(_), _, _) if p.cell.is_some() => p.cell.as_ref().map_or_else(String::new, |c| {
                format!("CPUs node {} → mem node {}", c.cpu_node, c.mem_node)
            }),
            // LOADED: the traffic's mix and delay ("1:0 400 ns thp", "1:0 idle thp").
            (Some(c), _, _) if p.load.is_some() => {
                let load = p.load.as_ref();
                let delay = load
                    .and_then(|l| l.injection_delay_ns)
                    .map_or_else(|| "idle".to_string(), |ns| format!("{ns} ns"));
                let mix = load.map(|l| l.mix.to_string()).unwrap_or_default();
                format!("{mix} {delay} {}", c.pages)
            }
            (Some(c), _, _) => format!("{} {}", format_size(c.working_set_bytes), c.pages),
            (None, Some(l), _) => format!("{} ({})", l.level, l.pages),
            (None, None, Some(c)) => format!("CPU {} → {}", c.from_cpu, c.to_cpu),
            (None, None, None) => p.probe.to_string(),
        }
    }
}

impl Fields for DiskParams {
    fn fields(&self, out: &mut FieldList) {
        out.swept("threads", self.threads, THREADS, "threads");
        if let Some(scaling) = self.scaling {
            out.variant("scaling", scaling, Words::Around("", " scaling"));
        }
        out.swept(
            "block_size_bytes",
            self.block_size_bytes,
            BLOCKS,
            "block size",
        );
        out.swept(
            "iodepth",
            self.iodepth,
            Words::Around("QD ", ""),
            "queue depth (per thread)",
        );
        out.variant("engine", self.engine, Words::Bare);
        out.variant("io_mode", self.io_mode, Words::Bare);
        // A pure read or write workload's name says it already.
        let words = match self.read_percent {
            0 | 100 => Words::Hidden,
            _ => Words::Around("", " % reads"),
        };
        out.axis("read_percent", self.read_percent, words);
        self.node.fields(out);
        // The workload's name says it.
        out.follows("pattern", self.pattern, Words::Bare);
        out.condition("sync", self.sync);
        if self.file_per_thread {
            out.condition("file_per_thread", true);
        }
        out.extent("file_size_bytes", self.file_size_bytes);
        if let Some(total) = self.total_bytes {
            out.condition("total_bytes", total);
        }
    }

    /// The block size and queue depth, and what differs from the default I/O (buffered, a
    /// sync mode, a file per thread).
    fn variant(&self, _metric: Metric, _with_protocol: bool) -> String {
        let p = self;
        let mut v = format!(
            "{} QD{}",
            crate::units::format_bytes_binary(p.block_size_bytes),
            p.iodepth
        );
        if p.io_mode == crate::results::params::IoMode::Buffered {
            v.push_str(" buffered");
        }
        // Writes made durable otherwise than the default (fdatasync at the end).
        if p.read_percent < 100 && p.sync != crate::results::params::SyncMode::FdatasyncEnd {
            v.push_str(&format!(" sync {}", p.sync.name()));
        }
        if p.file_per_thread {
            v.push_str(" file/thread");
        }
        v
    }
}

impl Fields for NetParams {
    fn fields(&self, out: &mut FieldList) {
        // A thread per stream.
        out.follows("threads", self.threads, THREADS);
        out.variant("protocol", self.protocol.name(), Words::Bare);
        let streams = Words::Count("stream", "streams");
        out.swept("streams", self.streams, streams, "streams");
        let messages = Words::Around("", " messages");
        out.swept(
            "message_size_bytes",
            self.message_size_bytes,
            messages,
            "message size",
        );
        if let Some(side) = self.side {
            out.variant("side", side, Words::Bare);
        }
        if let Some(direction) = self.direction {
            out.variant("direction", direction, Words::Bare);
        }
        if let Some(rate) = self.target_rate_bps {
            out.axis("target_rate_bps", rate, Words::Around("rate ", ""));
        }
        if let Some(mps) = self.mps {
            out.axis("mps", mps, Words::Around("", " round trips/s"));
        }
        if let Some(o) = &self.socket_options {
            if let Some(w) = o.window_bytes {
                out.variant("window_bytes", w, Words::Around("window ", ""));
            }
            if let Some(cc) = o.congestion {
                out.variant("congestion", cc, Words::Bare);
            }
            if let Some(m) = o.mss_bytes {
                out.variant("mss_bytes", m, Words::Around("MSS ", ""));
            }
            if let Some(nodelay) = o.nodelay {
                let on = if nodelay { "on" } else { "off" };
                out.variant("nodelay", on, Words::Around("nodelay ", ""));
            }
            if o.zerocopy {
                out.variant("zerocopy", "zero-copy", Words::Bare);
            }
        }
        if let Some(scaling) = self.scaling {
            out.variant("scaling", scaling, Words::Around("", " scaling"));
        }
        if let Some(load) = self.load_streams {
            let words = Words::Count("bulk stream beside", "bulk streams beside");
            out.axis("load_streams", load, words);
        }
        if let Some(phase) = self.phase {
            out.variant("phase", phase, Words::Bare);
        }
        // Only what was measured names the point: the server is its host, not the port it
        // listened on (an in-process loopback server's port is ephemeral, new every run).
        if let Some(server) = &self.server {
            out.axis("server", host_of(server), Words::Around("server ", ""));
        }
        self.node.fields(out);
        if let Some(link) = &self.between {
            out.axis("pattern", link.pattern, Words::Bare);
            out.axis("src_node", link.src_node, Words::Around("from node ", ""));
            out.axis("dst_node", link.dst_node, Words::Around("to node ", ""));
        }
        if let Some(us) = self.busy_poll_us {
            out.condition("busy_poll_us", us);
        }
        if let Some(nodelay) = self.tcp_nodelay {
            out.condition("tcp_nodelay", nodelay);
        }
        if let Some(amount) = self.amount_per_stream {
            out.condition("amount_per_stream", amount);
        }
    }

    /// The message size (and protocol), the side or the figure, the direction, the phase and
    /// the load.
    fn variant(&self, metric: Metric, with_protocol: bool) -> String {
        let p = self;
        let mut v = crate::units::format_bytes_binary(p.message_size_bytes as u64);
        if with_protocol {
            v = format!("{} {v}", p.protocol.name());
        }
        match metric {
            Metric::Throughput => v.push_str(&format!(" {}", p.side.map_or("", |s| s.name()))),
            Metric::Loss | Metric::Jitter => v.push_str(&format!(" {metric}")),
            Metric::Iops | Metric::Latency | Metric::Rate => {}
        }
        v.push_str(match p.direction {
            Some(Direction::ServerToClient) => " reverse",
            Some(Direction::BidirClientToServer) => " bidir c→s",
            Some(Direction::BidirServerToClient) => " bidir s→c",
            Some(Direction::BidirSum) => " bidir sum",
            Some(Direction::ClientToServer) | None => "",
        });
        if let Some(phase) = p.phase {
            v.push_str(&format!(" {phase}"));
        }
        if let Some(n) = p.load_streams {
            v.push_str(&format!(" load {n}"));
        }
        v
    }
}

/// The host of a server address without its port: "127.0.0.1:40123" → "127.0.0.1",
/// "[::1]:5201" → "::1", "node7:5201" → "node7"; anything else as it is.
pub fn host_of(addr: &str) -> &str {
    if let Some(rest) = addr.strip_prefix('[') {
        if let Some((host, port)) = rest.split_once("]:")
            && port.parse::<u16>().is_ok()
        {
            return host;
        }
        return addr;
    }
    match addr.rsplit_once(':') {
        Some((host, port)) if !host.contains(':') && port.parse::<u16>().is_ok() => host,
        _ => addr,
    }
}

#[cfg(test)]
mod tests {
    //! The key lists the fields replaced, kept as the oracle the fields must agree with: two
    //! runs' records are paired by their key, so it must stay the same byte for byte.
    use super::host_of;
    use crate::results::ResultRecord;
    use crate::results::params::Params;
    use crate::results::point::*;
    use serde_json::json;
    use serde_json::{Map, Value};

    const IDENTITY: &[&str] = &[
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

    const CONDITIONS: &[&str] = &[
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

    const SERIES_CONDITIONS: &[&str] = &[
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

    /// The identity as it was formed: the record's JSON object filtered by [`IDENTITY`], a
    /// server without its port.
    fn old_identity(p: &Params, except: &[&str]) -> Map<String, Value> {
        let Ok(Value::Object(m)) = serde_json::to_value(p) else {
            return Map::new();
        };
        m.into_iter()
            .filter(|(k, _)| IDENTITY.contains(&k.as_str()) && !except.contains(&k.as_str()))
            .map(|(k, v)| match (k.as_str(), v) {
                ("server", Value::String(s)) => {
                    let host = host_of(&s).to_string();
                    (k, Value::String(host))
                }
                (_, v) => (k, v),
            })
            .collect()
    }

    fn old_keyed(p: &Params, keys: &[&str]) -> Map<String, Value> {
        let Ok(Value::Object(m)) = serde_json::to_value(p) else {
            return Map::new();
        };
        m.into_iter()
            .filter(|(k, _)| keys.contains(&k.as_str()))
            .collect()
    }

    fn old_label(rec: &ResultRecord) -> String {
        let ident = old_identity(&rec.params, &[]);
        let mut parts = vec![rec.workload.name().to_string()];
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
            // A read-only kernel has no stores to name (issue 49: "none stores" said nothing).
            if *key == "stores" && v == "none" {
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
                "target_rate_bps" => format!("rate {shown}"),
                "server" => format!("server {shown}"),
                "node" => format!("node {shown}"),
                "src_node" => format!("from node {shown}"),
                "dst_node" => format!("to node {shown}"),
                _ => shown,
            });
        }
        parts.join(" · ")
    }

    /// Every record of the stored runs and of each kind's cases: the same identity, label,
    /// conditions and series conditions as the key lists gave.
    #[test]
    fn the_fields_agree_with_the_key_lists_they_replaced() {
        let records = oracle_records();
        assert!(records.len() > 100, "{} records", records.len());
        for rec in &records {
            let p = &rec.params;
            for except in [
                &[][..],
                &["node"],
                &["node", "src_node", "dst_node", "server"],
            ] {
                assert_eq!(
                    identity(p, except),
                    old_identity(p, except),
                    "{}",
                    rec.workload
                );
            }
            assert_eq!(label(rec), old_label(rec));
            assert_eq!(conditions(p), old_keyed(p, CONDITIONS), "{}", label(rec));
            let series: Map<String, Value> = series_conditions(p)
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect();
            assert_eq!(series, old_keyed(p, SERIES_CONDITIONS), "{}", label(rec));
        }
    }

    fn oracle_records() -> Vec<ResultRecord> {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/history");
        let mut out = Vec::new();
        for name in ["points.json", "quick.json", "base.json"] {
            let Ok(bytes) = std::fs::read(dir.join(name)) else {
                continue;
            };
            let doc = crate::results::Report::from_json(&bytes).unwrap();
            out.extend(doc.results);
        }
        out
    }

    #[test]
    fn identity_keeps_what_names_the_point() {
        let p = Params::decode(
            crate::results::Workload::Cpu(crate::workload::cpu::CpuWorkload::Dp),
            json!({"threads": 2, "cpus": [0, 1], "cores": 2, "scaling": "weak", "isa": "avx2",
                   "instruction": "x", "operation": "fp64 FMA", "ops_per_iteration": 1,
                   "iterations_per_thread": 7, "clock_ghz": 3.0, "node": 4}),
        )
        .unwrap();
        let id = identity(&p, &["node"]);
        assert_eq!(
            serde_json::Value::Object(id),
            json!({"threads": 2, "scaling": "weak", "isa": "avx2"})
        );
    }

    /// An ephemeral port is no part of what was measured: two loopback runs are the same point.
    #[test]
    fn a_servers_port_is_not_its_identity() {
        for (addr, host) in [
            ("127.0.0.1:40123", "127.0.0.1"),
            ("[::1]:5201", "::1"),
            ("node7:5201", "node7"),
            ("::1", "::1"),
            ("fe80::1", "fe80::1"),
            ("host", "host"),
            ("[::1]", "[::1]"),
        ] {
            assert_eq!(host_of(addr), host, "{addr}");
        }
        let net = |server: &str| {
            let p = Params::decode(
                crate::results::Workload::Net(crate::workload::net::NetWorkload::Throughput),
                json!({"threads": 1, "streams": 1, "protocol": "tcp", "message_size_bytes": 1024,
                       "duration_s": 1.0, "omit_s": 0.0, "server": server}),
            )
            .unwrap();
            identity(&p, &[])
        };
        assert_eq!(net("127.0.0.1:40123"), net("127.0.0.1:39001"));
        assert_ne!(net("127.0.0.1:40123"), net("127.0.0.2:40123"));
    }
}
