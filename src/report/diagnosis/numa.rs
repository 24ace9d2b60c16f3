//! The `numa` cause, read from a NUMA matrix's cells (`mem --workload NUMA`): a cell whose
//! memory is on another node than its threads, against the same row's local cell; and a
//! bandwidth cell that reads one node's memory of several against the machine's peak, where
//! every node's local cell is in the run (their sum is then the machine's measured rate).

use super::{AT_PEAK, Found};
use crate::results::params::NodeCell;
use crate::results::{Metric, Report, ResultRecord};

/// `r`'s NUMA cell, where its memory was bound to the cell's node.
fn bound_cell(r: &ResultRecord) -> Option<&NodeCell> {
    r.params.latency()?.cell.as_ref().filter(|c| c.bound)
}

/// What the placement of `r`'s cell (its efficiency `e`) cost it, among `report`'s cells of
/// its metric: the remote memory's ratio to the row's local cell, times, for a bandwidth, the
/// node's share of every node's local rate together. None for a point that is not a bound
/// cell of a machine of two nodes or more.
pub(super) fn numa(r: &ResultRecord, e: f64, report: &Report) -> Option<Found> {
    let c = bound_cell(r)?;
    if c.nodes < 2 {
        return None;
    }
    let cells: Vec<(&NodeCell, &ResultRecord)> = (report.results.iter())
        .filter(|x| x.subsystem == r.subsystem && x.metric == r.metric && x.unit == r.unit)
        .filter_map(|x| Some((bound_cell(x)?, x)))
        .collect();
    let local = |node: u32| {
        cells
            .iter()
            .find(|(x, _)| x.cpu_node == node && x.mem_node == node)
            .map(|(_, x)| *x)
    };
    let mut ceiling = Some(1.0);
    let mut words = Vec::new();
    let mut cites = Vec::new();
    if c.mem_node != c.cpu_node {
        let distance = c.distance.map_or_else(
            || "distance unknown".to_string(),
            |d| {
                cites.push(f64::from(d));
                format!("distance {d}, 10 being local")
            },
        );
        let own = local(c.cpu_node).and_then(|l| l.efficiency.filter(|le| *le > 0.0));
        words.push(match own {
            Some(le) => {
                cites.push(le * 100.0);
                ceiling = ceiling.map(|x| x * (e / le).min(1.0));
                format!(
                    "its memory was on node {}, its threads on node {} ({distance}): with the memory on their own node they reached {:.1} %",
                    c.mem_node,
                    c.cpu_node,
                    le * 100.0
                )
            }
            None => {
                ceiling = None;
                format!(
                    "its memory was on node {}, its threads on node {} ({distance})",
                    c.mem_node, c.cpu_node
                )
            }
        });
    }
    if r.metric == Metric::Throughput
        && let Some(share) = node_share(c, &cells, &local)
    {
        let pct = share * 100.0;
        cites.extend([f64::from(c.nodes), pct]);
        ceiling = ceiling.map(|x| x * share);
        words.push(format!(
            "its threads ran on one node of {}, whose local reads were {pct:.1} % of every node's together (the machine's peak counts every node's memory)",
            c.nodes
        ));
    }
    (!words.is_empty()).then(|| Found {
        cause: "numa",
        ceiling,
        text: words.join("; "),
        cites,
    })
}

/// The share of `c`'s row's local rate in the sum of every row's, where each row of `cells`
/// has its local cell in the run, there are two or more, and their sum is within the peak
/// (a peak of one node's memory is not the machine's: then the node's share costs nothing).
fn node_share<'a>(
    c: &NodeCell,
    cells: &[(&NodeCell, &'a ResultRecord)],
    local: &dyn Fn(u32) -> Option<&'a ResultRecord>,
) -> Option<f64> {
    let mut rows: Vec<u32> = cells.iter().map(|(x, _)| x.cpu_node).collect();
    rows.sort_unstable();
    rows.dedup();
    if rows.len() < 2 {
        return None;
    }
    let locals: Vec<&ResultRecord> = rows.iter().map(|n| local(*n)).collect::<Option<_>>()?;
    let sum: f64 = locals.iter().map(|x| x.summary.mean).sum();
    let own = local(c.cpu_node)?;
    let (le, mean) = (own.efficiency?, own.summary.mean);
    if !(sum > 0.0 && mean > 0.0 && le > 0.0) {
        return None;
    }
    let share = mean / sum;
    // The nodes together against the peak: le / share is their sum's efficiency.
    (le / share <= AT_PEAK).then_some(share)
}

#[cfg(test)]
mod tests {
    use crate::results::params::Params;
    use crate::results::{Metric, Report, ResultRecord, Unit};
    use crate::sysinfo::peak::Peak;
    use crate::workload::mem::MemWorkload;

    /// The two-socket topology of tests/fixtures/numa (two Xeon Gold 6248: 40 CPUs and a
    /// distance of 21 between the nodes): each cell's record, with the figures given per cell.
    fn two_sockets(latency_ns: [[f64; 2]; 2], gbs: [[f64; 2]; 2], peak_gbs: f64) -> Report {
        let root =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/numa/two-socket");
        let topology = crate::sysinfo::numa::read(&root).unwrap();
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/history");
        let mut report =
            Report::from_json(&std::fs::read(dir.join("quick.json")).unwrap()).unwrap();
        report.results.clear();
        let nodes = topology.nodes.len() as u32;
        for row in &topology.nodes {
            for col in &topology.nodes {
                let (i, j) = (row.id as usize, col.id as usize);
                let params = serde_json::json!({
                    "threads": row.cpus.len(), "probe": "numa", "cpus": [row.cpus[0]],
                    "working_set_bytes": 1u64 << 30, "pages": "thp", "huge_page_bytes": null,
                    "loads": 1000, "clock_ghz": null,
                    "cpu_node": row.id, "mem_node": col.id,
                    "distance": topology.distance(row.id, col.id),
                    "nodes": nodes, "bound": true, "bandwidth_cpus": row.cpus, "isa": "avx512",
                    "array_bytes_per_thread": 1u64 << 24
                });
                let params = Params::decode(MemWorkload::Numa.into(), params).unwrap();
                for (metric, unit, value, peak) in [
                    (Metric::Latency, Unit::Nanos, latency_ns[i][j] * 1e-9, 80e-9),
                    (
                        Metric::Throughput,
                        Unit::GBPerSec,
                        gbs[i][j] * 1e9,
                        peak_gbs * 1e9,
                    ),
                ] {
                    let peak = Peak {
                        value: peak,
                        unit,
                        formula: "test".into(),
                        inputs: Default::default(),
                    };
                    report.results.push(ResultRecord::new(
                        MemWorkload::Numa,
                        params.clone(),
                        metric,
                        unit,
                        vec![value, value],
                        Ok(peak),
                    ));
                }
            }
        }
        report
    }

    /// Each cell's `numa` cause: its share of the gap and its words.
    fn numa_causes(report: &Report) -> Vec<Option<(f64, String)>> {
        super::super::of_report(report)
            .into_iter()
            .map(|d| {
                let d = d?;
                let c = d.causes.iter().find(|c| c.cause == "numa")?;
                Some((c.share?, c.text.clone()))
            })
            .collect()
    }

    /// Remote memory costs what the row's local cell shows (latency 90 → 140 ns, bandwidth
    /// 100 → 60 GB/s), and a node's local reads are half of the machine's peak: both named
    /// `numa` with the share the figures give.
    #[test]
    fn memory_on_the_other_socket_is_named_numa() {
        let r = two_sockets(
            [[90.0, 140.0], [140.0, 90.0]],
            [[100.0, 60.0], [60.0, 100.0]],
            250.0,
        );
        let causes = numa_causes(&r);
        // Records: per cell (0→0, 0→1, 1→0, 1→1) its latency then its bandwidth.
        let at = |cell: usize, bandwidth: bool| causes[2 * cell + usize::from(bandwidth)].clone();
        // A local latency: nothing of NUMA.
        assert_eq!(at(0, false), None);
        // A remote latency: e = 80/140, its local 80/90: ln(90/140) / ln(80/140).
        let (share, text) = at(1, false).unwrap();
        let expected = (90.0f64 / 140.0).ln() / (80.0f64 / 140.0).ln();
        assert!((share - expected).abs() < 1e-9, "{share} vs {expected}");
        // One chase beside the cell's 40 bandwidth threads is no oversubscription.
        let remote = super::super::of_report(&r)[2].clone().unwrap();
        assert!(
            remote.causes.iter().all(|c| c.cause == "numa"),
            "{remote:?}"
        );
        assert!(text.contains("its memory was on node 1, its threads on node 0 (distance 21, 10 being local): with the memory on their own node they reached 88.9 %"), "{text}");
        // A local bandwidth: 100 of the nodes' 200 GB/s, against a peak of 250: ln(0.5) / ln(0.4).
        let (share, text) = at(3, true).unwrap();
        assert!((share - 0.5f64.ln() / 0.4f64.ln()).abs() < 1e-9, "{share}");
        assert!(
            text.contains("one node of 2, whose local reads were 50.0 % of every node's together"),
            "{text}"
        );
        // A remote bandwidth: both, 60/100 × 0.5 of an efficiency of 0.24.
        let (share, text) = at(1, true).unwrap();
        assert!((share - 0.3f64.ln() / 0.24f64.ln()).abs() < 1e-9, "{share}");
        assert!(
            text.contains("reached 40.0 %; its threads ran on one node of 2"),
            "{text}"
        );
    }

    /// A peak of one node's memory (the nodes together read twice it): the node's share is
    /// no cause; remote memory still is. One node: nothing.
    #[test]
    fn a_nodes_own_peak_and_one_node_name_no_share() {
        let r = two_sockets(
            [[90.0, 140.0], [140.0, 90.0]],
            [[100.0, 60.0], [60.0, 100.0]],
            110.0,
        );
        let causes = numa_causes(&r);
        assert!(causes[1].is_none() && causes[7].is_none(), "{causes:?}");
        let (share, text) = causes[3].clone().unwrap();
        assert!(
            (share - 0.6f64.ln() / (60.0f64 / 110.0).ln()).abs() < 1e-9,
            "{share}"
        );
        assert!(!text.contains("one node of"), "{text}");
        let mut one = r.clone();
        one.results.retain(|x| {
            x.params
                .latency()
                .and_then(|p| p.cell.as_ref())
                .is_some_and(|c| c.mem_node == 0)
        });
        for x in &mut one.results {
            if let Params::MemLatency(p) = &mut x.params
                && let Some(c) = p.cell.as_mut()
            {
                c.nodes = 1;
            }
        }
        assert!(numa_causes(&one).iter().all(Option::is_none));
    }
}
