//! The parts of a report that only a multi-node run has, formatted once for every exporter:
//! the nodes, the node-pair matrices and the outliers.

use crate::measure::stats::median;
use crate::results::ResultRecord;
use crate::results::fleet::{Fleet, Matrix, Outlier};
use crate::results::{Metric, Subsystem};
use crate::units::format_sig;

/// Header and rows of the node table.
pub fn node_table(f: &Fleet) -> (Vec<String>, Vec<Vec<String>>) {
    let head = [
        "Rank",
        "Host",
        "Machine id",
        "Address",
        "Launcher",
        "CPU",
        "Status",
    ]
    .map(String::from)
    .to_vec();
    let rows = f
        .nodes
        .iter()
        .map(|n| {
            vec![
                n.rank.to_string(),
                n.hostname.clone(),
                n.machine_id.chars().take(12).collect(),
                n.address.clone(),
                n.identity_source.clone(),
                n.system
                    .as_ref()
                    .map_or_else(|| "—".into(), |s| s.cpu.brand.display()),
                n.status.clone(),
            ]
        })
        .collect();
    (head, rows)
}

/// The title of [`totals_table`].
pub const TOTALS_TITLE: &str = "Fleet totals: each node's own throughput point, per node and summed over the machines (ranks sharing a machine take turns and count once, at their median)";

/// Header and rows of the fleet totals: every node-local throughput point (LINPACK's GFLOP/s,
/// memory bandwidth…) measured on two or more machines, with the spread over the nodes and the
/// sum over the machines; empty rows when there is none. `results` are in display units.
pub fn totals_table(f: &Fleet, results: &[ResultRecord]) -> (Vec<String>, Vec<Vec<String>>) {
    let head = [
        "Subsystem",
        "Workload",
        "Point",
        "Ranks",
        "Machines",
        "Per node min",
        "median",
        "max",
        "Sum",
    ]
    .map(String::from)
    .to_vec();
    let local = results.iter().filter(|r| {
        r.metric == Metric::Throughput
            && r.params.node().node.is_some()
            && r.params.net().is_none_or(|n| n.between.is_none())
    });
    // Points in first-seen order: (key, records).
    let groups = super::grouped(local, |r| {
        format!(
            "{}/{}/{} {}",
            r.subsystem,
            r.workload,
            r.unit,
            serde_json::Value::Object(crate::results::point::identity(&r.params, &["node"]))
        )
    });
    let machine = |r: &ResultRecord| {
        let rank = r.params.node().node.unwrap_or(0) as usize;
        f.nodes
            .get(rank)
            .map_or_else(|| format!("rank {rank}"), |n| n.machine_id.clone())
    };
    let typical = |r: &ResultRecord| {
        if r.summary.median.is_finite() {
            r.summary.median
        } else {
            r.summary.mean
        }
    };
    let mut rows = Vec::new();
    for (_, recs) in groups {
        let mut machines: Vec<(String, Vec<f64>)> = super::grouped(recs.iter(), |r| machine(r))
            .into_iter()
            .map(|(m, rs)| (m, rs.into_iter().map(|r| typical(r)).collect()))
            .collect();
        let mut per_node: Vec<f64> = recs.iter().map(|r| typical(r)).collect();
        if machines.len() < 2 || per_node.iter().any(|v| !v.is_finite()) {
            continue;
        }
        let sum: f64 = machines.iter_mut().map(|(_, v)| median(v)).sum();
        let first = recs[0];
        let variant = super::row(first).variant;
        let unit = &first.unit;
        let lo = per_node.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = per_node.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        rows.push(vec![
            first.subsystem.title().to_string(),
            first.workload.name().to_string(),
            format!("{variant} ×{}", first.params.threads()),
            recs.len().to_string(),
            machines.len().to_string(),
            format!("{} {unit}", format_sig(lo)),
            format!("{} {unit}", format_sig(median(&mut per_node))),
            format!("{} {unit}", format_sig(hi)),
            format!("{} {unit}", format_sig(sum)),
        ]);
    }
    if let Some(row) = f.hpl.as_ref().and_then(hpl_row) {
        rows.push(row);
    }
    (head, rows)
}

/// The multi-node HPL's row of the totals: one MPI job over the machines, its rate in the Sum
/// column, and its share of the machines' own LINPACK summed.
fn hpl_row(h: &crate::results::fleet::FleetHpl) -> Option<Vec<String>> {
    let gflops = h.gflops?;
    let share = h
        .nodes_linpack_gflops
        .filter(|s| *s > 0.0)
        .map(|s| format!(", {:.2}× the nodes' LINPACK summed", gflops / s))
        .unwrap_or_default();
    let residual = h
        .residual
        .map(|r| format!(", residual {r:.2e}"))
        .unwrap_or_default();
    Some(vec![
        Subsystem::Cpu.title().to_string(),
        "HPL (one MPI job, hpcc)".into(),
        format!(
            "N={} {}×{} by {}{residual}{share}",
            h.n, h.p, h.q, h.launcher
        ),
        h.processes.to_string(),
        h.machines.len().to_string(),
        String::new(),
        String::new(),
        String::new(),
        format!("{} GOPS", format_sig(gflops)),
    ])
}

/// "2 (node-b)": a rank and its host.
fn who(f: &Fleet, rank: usize) -> String {
    match f.nodes.get(rank) {
        Some(n) => format!("{rank} ({})", n.hostname),
        None => rank.to_string(),
    }
}

/// A matrix's title: "TCP throughput (Mbit/s), sender in the row".
pub fn matrix_title(m: &Matrix) -> String {
    let role = if m.metric == Metric::Latency {
        "round trip, the pinging node in the row; medians of the repetitions"
    } else {
        "receiver's goodput, the sender in the row; medians of the repetitions"
    };
    format!(
        "{} {} ({}) — {role}; the diagonal is a node to itself",
        m.protocol, m.metric, m.unit
    )
}

/// Header and rows of an N × N matrix, values formatted ("—" where not measured).
pub fn matrix_table(f: &Fleet, m: &Matrix) -> (Vec<String>, Vec<Vec<String>>) {
    let n = m.values.len();
    let mut head = vec!["from \\ to".to_string()];
    head.extend((0..n).map(|r| who(f, r)));
    let rows = m
        .values
        .iter()
        .enumerate()
        .map(|(src, row)| {
            let mut cells = vec![who(f, src)];
            cells.extend(row.iter().map(|v| v.map_or_else(|| "—".into(), format_sig)));
            cells
        })
        .collect();
    (head, rows)
}

/// One line per outlier.
pub fn outlier_line(o: &Outlier) -> String {
    let place = match o.dst_node {
        Some(d) => format!("link {}→{d}", o.node),
        None => format!("node {} ({})", o.node, o.hostname),
    };
    let point = o
        .point
        .split_once(' ')
        .map_or(o.point.as_str(), |(_, params)| params);
    format!(
        "{place}: {} {} {} = {} {u}, {:.1} % {} the median {} {u} of {} {} (MAD {}){}; point {point}",
        o.subsystem,
        o.workload,
        o.metric,
        format_sig(o.value),
        o.deviation.abs() * 100.0,
        if o.deviation < 0.0 { "below" } else { "above" },
        format_sig(o.median),
        o.peers,
        if o.kind == "link" { "links" } else { "nodes" },
        format_sig(o.mad),
        if o.worse {
            " — worse than its peers"
        } else {
            ""
        },
        u = o.unit,
    )
}

/// The headline: ranks, machines, outliers.
pub fn summary(f: &Fleet) -> String {
    let machines: std::collections::BTreeSet<&str> =
        f.nodes.iter().map(|n| n.machine_id.as_str()).collect();
    let worse = f.outliers.iter().filter(|o| o.worse).count();
    format!(
        "{} ranks on {} machine(s); {} outlier value(s), {} of them worse than their peers (rule: > {} scaled MADs and > {:.0} % from the median, {} peers at least)",
        f.world_size,
        machines.len(),
        f.outliers.len(),
        worse,
        f.outlier_rule.mad_factor,
        f.outlier_rule.min_deviation * 100.0,
        f.outlier_rule.min_peers
    )
}

/// The background of a heatmap's cells: green for the best value of the matrix, red for the
/// worst (for latency, lower is better); None where not measured or all equal.
pub fn heat(m: &Matrix) -> impl Fn(Option<f64>) -> Option<String> + '_ {
    shade(
        m.values.iter().flatten().flatten().copied(),
        m.metric == Metric::Latency,
    )
}

/// The background of a heatmap's cells among `values`: green for the best, red for the worst
/// (the lowest where `lower_is_better`); None where not measured or all equal.
pub fn shade(
    values: impl Iterator<Item = f64> + Clone,
    lower_is_better: bool,
) -> impl Fn(Option<f64>) -> Option<String> {
    let lo = values.clone().fold(f64::INFINITY, f64::min);
    let hi = values.fold(f64::NEG_INFINITY, f64::max);
    move |v| {
        let v = v?;
        if hi.partial_cmp(&lo) != Some(std::cmp::Ordering::Greater) {
            return None;
        }
        let mut good = (v - lo) / (hi - lo);
        if lower_is_better {
            good = 1.0 - good;
        }
        Some(format!("hsl({:.0}, 70%, 78%)", good * 120.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::Unit;
    use crate::results::fleet::{Node, OutlierRule};
    use crate::results::params::{CpuParams, LinalgParams, NodeTag, Params};

    fn linpack(rank: u32, gops: f64, metric: &str) -> ResultRecord {
        let metric: Metric = metric.parse().unwrap();
        let params = Params::Cpu(CpuParams {
            threads: 2,
            cpu_quota: None,
            cpus: vec![0, 1],
            cores: 2,
            oversubscribed: false,
            kernel: None,
            linalg: Some(LinalgParams {
                n: 8000,
                memory_fraction: None,
                engine: crate::results::params::LinalgEngine::BuiltIn,
                micro_kernel: "AVX-512 24x8".into(),
                micro_kernel_isa: None,
                library: None,
                library_threads: None,
                nb: Some(256),
                flops: 3.4e11,
                residual: Some(0.01),
                residual_passed: Some(true),
            }),
            node: NodeTag {
                node: Some(rank),
                host: Some(format!("node{rank}")),
            },
        });
        ResultRecord::new(
            crate::workload::linalg::LinalgWorkload::Linpack,
            params,
            metric,
            Unit::Gops,
            vec![gops],
            Err("unknown".into()),
        )
    }

    /// Three ranks on two machines: the sum counts each machine once (ranks 1 and 2 share one,
    /// at their median), the per-node spread all three; a point of one machine has no total.
    #[test]
    fn totals_sum_each_machine_once() {
        let node = |rank: u32, machine: &str| Node {
            rank,
            hostname: format!("node{rank}"),
            machine_id: machine.into(),
            identity_source: "flags".into(),
            address: String::new(),
            status: "complete".into(),
            failed_jobs: Vec::new(),
            system: None,
        };
        let fleet = Fleet {
            world_size: 3,
            nodes: vec![node(0, "m0"), node(1, "m1"), node(2, "m1")],
            outliers: Vec::new(),
            outlier_rule: OutlierRule::default(),
            matrices: Vec::new(),
            notes: Vec::new(),
            hpl: None,
            pairs_sampled: None,
        };
        // In display units, as the exporters see them.
        let display = crate::units::Display::default();
        let results = [
            linpack(0, 80.0, "throughput"),
            linpack(1, 70.0, "throughput"),
            linpack(2, 74.0, "throughput"),
            linpack(0, 1.0, "latency"),
        ]
        .map(|r| r.converted(&|sub, unit| display.conversion(sub, unit)));
        let (head, rows) = totals_table(&fleet, &results);
        assert_eq!(head.len(), rows[0].len());
        assert_eq!(rows.len(), 1, "{rows:?}");
        let row = &rows[0];
        assert_eq!(row[1], "LINPACK");
        assert!(
            row[2].contains("N=8000") && row[2].ends_with("×2"),
            "{row:?}"
        );
        assert_eq!(
            &row[3..],
            [
                "3",
                "2",
                "70.00 GOPS",
                "74.00 GOPS",
                "80.00 GOPS",
                "152.0 GOPS"
            ]
        );
        // Two ranks on one machine only: nothing summed.
        let (_, rows) = totals_table(&fleet, &results[1..3]);
        assert!(rows.is_empty(), "{rows:?}");
        // The multi-node HPL is a row of its own, with its share of the nodes' sum; one that
        // failed has no row (its error is a note).
        let mut fleet = fleet;
        let hpl = crate::results::fleet::FleetHpl {
            launcher: "mpirun".into(),
            command: vec!["mpirun".into()],
            machines: Vec::new(),
            processes: 4,
            n: 11264,
            nb: 256,
            p: 2,
            q: 2,
            gflops: Some(140.0),
            seconds: Some(6.8),
            residual: Some(0.004),
            blas: None,
            nodes_linpack_gflops: Some(152.0),
            error: None,
        };
        fleet.hpl = Some(hpl.clone());
        let (head, rows) = totals_table(&fleet, &results);
        let row = rows.last().unwrap();
        assert_eq!(row.len(), head.len());
        assert!(row[1].starts_with("HPL"), "{row:?}");
        assert!(
            row[2].contains("N=11264 2×2 by mpirun") && row[2].contains("0.92×"),
            "{row:?}"
        );
        assert_eq!(row[8], "140.0 GOPS");
        fleet.hpl = Some(crate::results::fleet::FleetHpl {
            gflops: None,
            error: Some("hpcc failed".into()),
            ..hpl
        });
        assert_eq!(totals_table(&fleet, &results).1.len(), 1);
    }
}
