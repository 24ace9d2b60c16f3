//! The NUMA node matrices: each cell's latency and read bandwidth, a row per node whose CPUs
//! ran, a column per node whose memory they used, as tables and heatmaps (green the best cell,
//! red the worst). A machine with one node gets a one-cell matrix that says so.

use super::matrix::MatrixView;
use crate::results::params::{NodeCell, Params, Probe};
use crate::results::{Metric, ResultRecord, Subsystem};

/// A NUMA record's cell.
fn cell(r: &ResultRecord) -> Option<&NodeCell> {
    match &r.params {
        Params::MemLatency(p) if p.probe == Probe::Numa && r.subsystem == Subsystem::Mem => {
            p.cell.as_ref()
        }
        _ => None,
    }
}

/// The latency and bandwidth matrices of a run's NUMA records (in display units), per node
/// of a multi-node run; none without NUMA records.
pub fn matrices(records: &[ResultRecord]) -> Vec<MatrixView> {
    let cells = records.iter().filter_map(|r| Some((r, cell(r)?)));
    let mut out = Vec::new();
    for (host, recs) in super::grouping::grouped(cells, |(r, _)| r.params.node().node) {
        for metric in [Metric::Latency, Metric::Throughput] {
            let recs: Vec<(&ResultRecord, &NodeCell)> = recs
                .iter()
                .copied()
                .filter(|(r, _)| r.metric == metric)
                .collect();
            if !recs.is_empty() {
                out.push(matrix(&recs, metric, host));
            }
        }
    }
    out
}

fn matrix(recs: &[(&ResultRecord, &NodeCell)], metric: Metric, host: Option<u32>) -> MatrixView {
    let mut rows: Vec<u32> = recs.iter().map(|(_, c)| c.cpu_node).collect();
    let mut cols: Vec<u32> = recs.iter().map(|(_, c)| c.mem_node).collect();
    rows.sort_unstable();
    rows.dedup();
    cols.sort_unstable();
    cols.dedup();
    let unit = recs
        .first()
        .map(|(r, _)| r.unit.to_string())
        .unwrap_or_default();
    // The first record of each cell.
    let mut of_cell = std::collections::HashMap::new();
    for (r, c) in recs {
        of_cell
            .entry((c.cpu_node, c.mem_node))
            .or_insert(r.summary.mean);
    }
    let value = |i: u32, j: u32| of_cell.get(&(i, j)).copied();
    let what = match metric {
        Metric::Latency => "one thread of the row's node chases pointers through",
        _ => "every CPU of the row's node reads",
    };
    let host = host
        .map(|n| format!(", node {n} of the run"))
        .unwrap_or_default();
    let nodes = recs.first().map_or(1, |(_, c)| c.nodes);
    let shape = match (nodes, recs.first().is_some_and(|(_, c)| c.bound)) {
        (1, true) => "; this machine has one NUMA node, so the matrix is one cell".to_string(),
        (1, false) => {
            "; the kernel lists no NUMA nodes: one cell, memory placed by first touch".to_string()
        }
        (n, _) => {
            format!("; {n} nodes: a row per node whose CPUs ran, a column per node with memory")
        }
    };
    let title = format!(
        "NUMA {} ({unit}){host}: {what} memory bound to the column's node{shape}",
        if metric == Metric::Latency {
            "latency"
        } else {
            "read bandwidth"
        }
    );
    let lower_is_better = metric == Metric::Latency;
    MatrixView::grid(
        title,
        "CPUs \\ memory",
        (&rows, &cols),
        |n| format!("node {n}"),
        value,
        lower_is_better,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::Unit;

    /// A NUMA record of a cell on a machine of `nodes` nodes.
    fn rec(cpu: u32, mem: u32, nodes: u32, metric: Metric, value: f64) -> ResultRecord {
        let params = serde_json::json!({
            "threads": 16, "probe": "numa", "cpus": [0],
            "working_set_bytes": 134217728, "pages": "thp", "huge_page_bytes": null,
            "loads": 1000, "clock_ghz": null,
            "cpu_node": cpu, "mem_node": mem, "distance": if cpu == mem { 10 } else { 21 },
            "nodes": nodes, "bound": true, "bandwidth_cpus": [0, 1], "isa": "avx512",
            "array_bytes_per_thread": 1048576
        });
        let params = Params::decode(
            crate::results::Workload::Mem(crate::workload::mem::MemWorkload::Numa),
            params,
        )
        .unwrap();
        let unit = if metric == Metric::Latency {
            Unit::Nanos
        } else {
            Unit::GBPerSec
        };
        ResultRecord::new(
            crate::workload::mem::MemWorkload::Numa,
            params,
            metric,
            unit,
            vec![value],
            Err(String::new()),
        )
    }

    /// Two sockets: a 2×2 latency matrix and a 2×2 bandwidth matrix, rows the CPUs' node,
    /// columns the memory's; the remote cells are the slow ones. One node: one cell, said so.
    #[test]
    fn two_sockets_give_two_by_two_matrices_and_one_node_one_cell() {
        let mut recs = Vec::new();
        for (cpu, mem) in [(0, 0), (0, 1), (1, 0), (1, 1)] {
            let local = cpu == mem;
            recs.push(rec(
                cpu,
                mem,
                2,
                Metric::Latency,
                if local { 90e-9 } else { 140e-9 },
            ));
            recs.push(rec(
                cpu,
                mem,
                2,
                Metric::Throughput,
                if local { 100e9 } else { 60e9 },
            ));
        }
        let m = matrices(&recs);
        assert_eq!(m.len(), 2);
        assert!(m[0].title.starts_with("NUMA latency"), "{}", m[0].title);
        assert!(m[0].title.contains("2 nodes"), "{}", m[0].title);
        assert!(
            m[1].title.starts_with("NUMA read bandwidth"),
            "{}",
            m[1].title
        );
        assert_eq!(m[0].headers, ["CPUs \\ memory", "node 0", "node 1"]);
        assert_eq!(m[0].rows.len(), 2);
        assert_eq!(m[0].rows[0][0], "node 0");
        // Local cells share one colour, remote cells another, in both matrices.
        for v in &m {
            assert_eq!(v.heat[0][0], v.heat[1][1]);
            assert_eq!(v.heat[0][1], v.heat[1][0]);
            assert_ne!(v.heat[0][0], v.heat[0][1]);
        }
        let one = [rec(0, 0, 1, Metric::Latency, 100e-9)];
        let m = matrices(&one);
        assert_eq!(m.len(), 1);
        assert_eq!(m[0].rows.len(), 1);
        assert!(m[0].title.contains("one NUMA node"), "{}", m[0].title);
        assert!(matrices(&[]).is_empty());
    }
}
