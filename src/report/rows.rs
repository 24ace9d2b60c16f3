//! A record as a row of the tables (SPEC §4's columns, formatted once for the terminal, Markdown
//! and CSV): its variant, its figures, its efficiencies.

use crate::results::ResultRecord;
use crate::results::params::{Direction, LinalgEngine, Params};
use crate::results::{Metric, Subsystem};
use crate::units::{format_sig, format_size};

/// The columns of SPEC §4 for one record, already formatted; shared by the terminal table,
/// Markdown and the row order of CSV so that they cannot drift apart.
pub struct Row {
    pub workload: String,
    /// Network points: the transport, a column of its own as the reports have it.
    pub protocol: Option<String>,
    pub concurrency: String,
    pub variant: String,
    pub measured: String,
    pub reference: String,
    pub theoretical: String,
    pub efficiency: String,
    pub reference_efficiency: String,
    pub stddev: String,
}

pub(crate) fn percent(fraction: Option<f64>) -> String {
    fraction.map_or_else(|| "—".to_string(), |f| format!("{:.1}", f * 100.0))
}

/// The "variant" column, and where the point ran in a multi-node run: "node 2", or the link
/// "pairs 0→1".
pub(crate) fn variant(rec: &ResultRecord) -> String {
    variant_of(rec, true)
}

/// [`variant`], with a network point's protocol or without it (where a table gives it a
/// column).
pub(crate) fn variant_of(rec: &ResultRecord, with_protocol: bool) -> String {
    let mut v = base_variant(&rec.params, rec.metric, with_protocol);
    if let Some(q) = rec.params.cpu_quota() {
        v.push_str(&format!(" quota {q} CPUs"));
    }
    let link = rec.params.net().and_then(|n| n.between.as_ref());
    let place = match (link, rec.params.node().node) {
        (Some(l), _) => format!("{} {}→{}", l.pattern, l.src_node, l.dst_node),
        (None, Some(n)) => format!("node {n}"),
        _ => return v,
    };
    if v.is_empty() {
        place
    } else {
        format!("{v} {place}")
    }
}

/// The ISA for CPU points; for memory, the block size or the arrays' size, or for latency the
/// working set and page size, the probe, or the cache level found.
pub(crate) fn base_variant(params: &Params, metric: Metric, with_protocol: bool) -> String {
    match params {
        Params::Cpu(p) => match &p.kernel {
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
        },
        Params::Disk(p) => {
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
        Params::Net(p) => {
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
        // A whole-array kernel's arrays (each, all threads together, as --array-size gives
        // them), so that runs over several sizes tell their rows apart.
        Params::Mem(p) => p
            .kernel
            .as_ref()
            .map(|k| match (&k.blocks, k.mix) {
                (Some(b), _) => format_size(b.block_size_bytes),
                (None, mix) => format!(
                    "{}{} arrays",
                    mix.map_or_else(String::new, |m| format!("mix {m}, ")),
                    format_size(k.array_bytes_per_thread.saturating_mul(p.threads as u64))
                ),
            })
            .unwrap_or_default(),
        Params::MemLatency(p) => match (&p.chase, &p.level, &p.pair) {
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
        },
    }
}

/// Formats one record for a table.
pub fn row(rec: &ResultRecord) -> Row {
    let protocol = rec.params.net().map(|n| n.protocol.name().to_string());
    let variant = variant_of(rec, protocol.is_none());
    Row {
        workload: rec.workload.name().to_string(),
        protocol,
        concurrency: rec.params.threads().to_string(),
        variant: if variant.is_empty() {
            "—".into()
        } else {
            variant
        },
        measured: format_sig(rec.summary.mean),
        reference: rec
            .reference
            .as_ref()
            .map_or_else(|| "—".into(), |r| format_sig(r.mean)),
        theoretical: rec
            .peak
            .as_ref()
            .map_or_else(|| "unknown".into(), |p| format_sig(p.value)),
        efficiency: efficiency_cell(rec),
        reference_efficiency: percent(rec.reference.as_ref().and_then(|r| r.efficiency)),
        stddev: format!(
            "{}{}",
            format_sig(rec.summary.stddev),
            if rec.summary.noisy { " !" } else { "" }
        ),
    }
}

/// The efficiency, "unknown (clock)" where the peak needs a clock that is unknown, flagged
/// where a user-given input made it exceed 100 %, and marked `!` where the point has another
/// warning (printed under the table).
pub(crate) fn efficiency_cell(rec: &ResultRecord) -> String {
    let clock_unknown = rec
        .peak_unknown_reason
        .as_deref()
        .is_some_and(|r| r.starts_with(crate::sysinfo::peak::CLOCK_UNKNOWN));
    match rec.efficiency {
        None if clock_unknown => "unknown (clock)".into(),
        e if rec.warnings.is_empty() => percent(e),
        Some(e) if e > 1.0 => format!("{} (! above peak: user input)", percent(Some(e))),
        e => format!("{} !", percent(e)),
    }
}

/// Which reference columns a table shows: none when no point has a reference figure.
pub(crate) fn keep(column: usize, with_reference: bool) -> bool {
    with_reference || !matches!(column, 4 | 7)
}

/// A table's headers, with `unit` where values carry it; `reference` names the reference tools
/// of its rows ("fio", "STREAM, likwid-bench"), where any row has one; a network table has a
/// Protocol column after the workload.
pub fn headers(unit: &str, variant: &str, reference: Option<&str>, protocol: bool) -> Vec<String> {
    let tool = reference.unwrap_or("reference");
    let mut out: Vec<String> = [
        "Workload".into(),
        "Concurrency".into(),
        variant.into(),
        format!("peakbench measured ({unit})"),
        format!("{tool} measured ({unit})"),
        format!("theoretical ({unit})"),
        "peakbench efficiency %".into(),
        format!("{tool} efficiency %"),
        format!("std dev ({unit})"),
    ]
    .into_iter()
    .enumerate()
    .filter(|(i, _)| keep(*i, reference.is_some()))
    .map(|(_, h)| h)
    .collect();
    if protocol {
        out.insert(1, "Protocol".into());
    }
    out
}

impl Row {
    pub fn cells(self, with_reference: bool) -> Vec<String> {
        let protocol = self.protocol;
        let mut out: Vec<String> = [
            self.workload,
            self.concurrency,
            self.variant,
            self.measured,
            self.reference,
            self.theoretical,
            self.efficiency,
            self.reference_efficiency,
            self.stddev,
        ]
        .into_iter()
        .enumerate()
        .filter(|(i, _)| keep(*i, with_reference))
        .map(|(_, c)| c)
        .collect();
        if let Some(p) = protocol {
            out.insert(1, p);
        }
        out
    }
}

/// The name of the "variant" column for a subsystem.
pub fn variant_header(subsystem: Subsystem) -> &'static str {
    match subsystem {
        Subsystem::Cpu => "ISA",
        Subsystem::Net => "Message",
        Subsystem::Mem => "Size",
        Subsystem::Disk => "Block size",
    }
}
