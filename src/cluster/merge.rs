//! Rank 0's merge: every node's records in one report, tagged with their node, the node-pair
//! matrices, and the values that deviate from their peers (median absolute deviation).

use super::messages::NodeHello;
use crate::results::Metric;
use crate::results::fleet::{Fleet, Matrix, Node, Outlier, OutlierRule};
use crate::results::params::Link;
use crate::results::params::Side;
use crate::results::point::point_key_except;
use crate::results::{Report, ResultRecord};
use crate::sysinfo::SystemInfo;
use std::collections::HashMap;

/// What rank 0 knows of one node at the end.
#[derive(Debug, Clone)]
pub struct NodeOutcome {
    pub hello: NodeHello,
    /// The address the others reached it at.
    pub address: String,
    /// Its node-local run, when it reported one.
    pub report: Option<Report>,
    pub failed_jobs: Vec<String>,
    /// "complete" or what went wrong.
    pub status: String,
}

/// Adds the node's identity to a record's parameters.
pub fn tag(rec: &mut ResultRecord, rank: u32, hostname: &str) {
    let node = rec.params.node_mut();
    node.node = Some(rank);
    node.host = Some(hostname.into());
}

/// The merged report: `system` is rank 0's machine (every node's is in `fleet.nodes`); node
/// records first, in rank order, then the link records.
pub fn merge(
    argv: Vec<String>,
    rank0_system: SystemInfo,
    world_size: u32,
    nodes: Vec<NodeOutcome>,
    links: Vec<ResultRecord>,
    notes: Vec<String>,
    rule: OutlierRule,
) -> Report {
    let mut report = Report::new(rank0_system, argv);
    // Every record's place at once: a list grown as they come holds its old copy and its new
    // one at each step (a record is over a kilobyte before its samples).
    let records = nodes
        .iter()
        .map(|n| n.report.as_ref().map_or(0, |r| r.results.len()))
        .sum::<usize>();
    report
        .results
        .reserve_exact(records.saturating_add(links.len()));
    let mut fleet_nodes = Vec::new();
    for n in nodes {
        let system = n.report.as_ref().map(|r| r.system.clone());
        if let Some(r) = n.report {
            for mut rec in r.results {
                tag(&mut rec, n.hello.rank, &n.hello.hostname);
                report.results.push(rec);
            }
        }
        fleet_nodes.push(Node {
            rank: n.hello.rank,
            hostname: n.hello.hostname,
            machine_id: n.hello.machine_id,
            identity_source: n.hello.identity_source,
            address: n.address,
            status: n.status,
            failed_jobs: n.failed_jobs,
            system,
        });
    }
    report.results.extend(links);
    let hosts: Vec<String> = fleet_nodes.iter().map(|n| n.hostname.clone()).collect();
    let mut outliers = node_outliers(&report.results, &hosts, rule);
    outliers.extend(link_outliers(&report.results, &hosts, rule));
    let matrices = matrices(&report.results, world_size);
    report.fleet = Some(Fleet {
        world_size,
        nodes: fleet_nodes,
        outliers,
        outlier_rule: rule,
        matrices,
        notes,
        hpl: None,
        pairs_sampled: None,
    });
    report
}

/// A point's typical value: the median of its repetitions (one disturbed repetition does not
/// make a node look slow), the mean when there is no median.
fn typical(r: &ResultRecord) -> f64 {
    if r.summary.median.is_finite() {
        r.summary.median
    } else {
        r.summary.mean
    }
}

/// Groups records by `key` (None: not judged) and flags each group's outliers.
fn flag(
    results: &[ResultRecord],
    kind: &str,
    hosts: &[String],
    rule: OutlierRule,
    key: impl Fn(&ResultRecord) -> Option<String>,
) -> Vec<Outlier> {
    // In the order each point is first met; found by its key (a fleet has many points).
    let mut groups: Vec<(String, Vec<&ResultRecord>)> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    for rec in results {
        let Some(k) = key(rec) else { continue };
        match index.get(&k) {
            Some(&i) => groups[i].1.push(rec),
            None => {
                index.insert(k.clone(), groups.len());
                groups.push((k, vec![rec]));
            }
        }
    }
    let mut out = Vec::new();
    for (point, recs) in groups {
        let values: Vec<f64> = recs.iter().map(|r| typical(r)).collect();
        for (i, median, mad, deviation) in rule.judge(&values) {
            let r = recs[i];
            let link = link_of(r);
            let node = link
                .map(|l| l.src_node)
                .or(r.params.node().node)
                .unwrap_or(0);
            out.push(Outlier {
                kind: kind.into(),
                node,
                dst_node: link.map(|l| l.dst_node),
                hostname: hosts.get(node as usize).cloned().unwrap_or_default(),
                subsystem: r.subsystem,
                workload: r.workload,
                metric: r.metric,
                unit: r.unit,
                point: point.clone(),
                value: values[i],
                median,
                mad,
                deviation,
                worse: (deviation < 0.0) != r.metric.lower_is_better(),
                peers: values.len() as u32,
            });
        }
    }
    out
}

/// The nodes of a test between two nodes.
fn link_of(r: &ResultRecord) -> Option<&Link> {
    r.params.net().and_then(|n| n.between.as_ref())
}

/// A record's point without the parameters that say where it ran.
fn peer_key(rec: &ResultRecord) -> String {
    point_key_except(rec, &["node", "src_node", "dst_node", "server"])
}

/// Node-local points compared across nodes.
fn node_outliers(results: &[ResultRecord], hosts: &[String], rule: OutlierRule) -> Vec<Outlier> {
    flag(results, "node", hosts, rule, |r| {
        (r.params.node().node.is_some() && link_of(r).is_none()).then(|| peer_key(r))
    })
}

/// The all-pairs links compared with each other (the diagonal, a node measuring itself, is
/// not a link).
fn link_outliers(results: &[ResultRecord], hosts: &[String], rule: OutlierRule) -> Vec<Outlier> {
    flag(results, "link", hosts, rule, |r| {
        (matrix_cell(r).is_some_and(|(s, d)| s != d)).then(|| peer_key(r))
    })
}

/// (src, dst) of a record that goes in a matrix: an all-pairs or self test's receiver goodput
/// or round-trip time.
fn matrix_cell(r: &ResultRecord) -> Option<(u32, u32)> {
    let net = r.params.net()?;
    let link = net.between.as_ref()?;
    if !link.pattern.one_at_a_time() {
        return None;
    }
    let wanted = (r.metric == Metric::Throughput && net.side == Some(Side::Receiver))
        || r.metric == Metric::Latency;
    wanted.then_some((link.src_node, link.dst_node))
}

/// One N × N matrix per (metric, protocol) of the all-pairs and self tests.
pub fn matrices(results: &[ResultRecord], n: u32) -> Vec<Matrix> {
    let mut out: Vec<Matrix> = Vec::new();
    for r in results {
        let Some((src, dst)) = matrix_cell(r) else {
            continue;
        };
        if src >= n || dst >= n {
            continue;
        }
        let protocol = r
            .params
            .net()
            .map_or(String::new(), |n| n.protocol.name().to_string());
        let m = match out
            .iter_mut()
            .position(|m| m.metric == r.metric && m.protocol == protocol && m.unit == r.unit)
        {
            Some(i) => &mut out[i],
            None => {
                out.push(Matrix {
                    pattern: crate::results::params::LinkPattern::Pairs,
                    metric: r.metric,
                    unit: r.unit,
                    protocol,
                    values: vec![vec![None; n as usize]; n as usize],
                });
                out.last_mut().expect("just pushed")
            }
        };
        let v = typical(r);
        if v.is_finite() {
            m.values[src as usize][dst as usize] = Some(v);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::params::Params;
    use crate::results::{Subsystem, Unit};
    use serde_json::json;

    /// A CPU DP record.
    fn rec(metric: &str, mean: f64, params: &[(&str, serde_json::Value)]) -> ResultRecord {
        record("cpu", "DP", metric, mean, params)
    }

    /// A network record of a link between nodes.
    fn link(metric: &str, mean: f64, params: &[(&str, serde_json::Value)]) -> ResultRecord {
        record("net", "THROUGHPUT", metric, mean, params)
    }

    fn record(
        subsystem: &str,
        workload: &str,
        metric: &str,
        mean: f64,
        params: &[(&str, serde_json::Value)],
    ) -> ResultRecord {
        let subsystem: Subsystem = subsystem.parse().unwrap();
        let metric: Metric = metric.parse().unwrap();
        let p: serde_json::Map<String, serde_json::Value> = params
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect();
        ResultRecord::new(
            crate::results::Workload::named(subsystem, workload).unwrap(),
            Params::with_defaults(
                crate::results::Workload::named(subsystem, workload).unwrap(),
                p.into(),
            )
            .unwrap(),
            metric,
            Unit::Gops,
            vec![mean, mean],
            Err("x".into()),
        )
    }

    #[test]
    fn the_slow_node_is_flagged_and_noise_is_not() {
        let rule = OutlierRule::default();
        let hits = rule.judge(&[114.2, 112.0, 28.3]);
        assert_eq!(hits.len(), 1);
        assert_eq!(hits[0].0, 2);
        assert!((hits[0].1 - 112.0).abs() < 1e-9);
        assert!(hits[0].3 < -0.7);
        // Two identical nodes (MAD 0) and a third 3 % away: within the 10 % floor.
        assert!(rule.judge(&[100.0, 100.0, 97.0]).is_empty());
        // Too few peers, or a value that is not a number: not judged.
        assert!(rule.judge(&[100.0, 10.0]).is_empty());
        assert!(rule.judge(&[100.0, 100.0, f64::NAN]).is_empty());
        // Spread-out peers: a value inside their spread is not an outlier.
        assert!(rule.judge(&[50.0, 100.0, 150.0, 75.0, 125.0]).is_empty());
    }

    #[test]
    fn node_outliers_compare_the_same_point_on_every_node() {
        let mut results = Vec::new();
        for (node, dp, lat) in [(0, 114.0, 100.0), (1, 113.0, 101.0), (2, 30.0, 180.0)] {
            results.push(rec(
                "throughput",
                dp,
                &[
                    ("threads", json!(2)),
                    ("node", json!(node)),
                    ("iterations", json!(node * 7)),
                ],
            ));
            results.push(rec(
                "latency",
                lat,
                &[("threads", json!(1)), ("node", json!(node))],
            ));
        }
        // One disturbed repetition on node 1 (the median is used): node 2 is still the one.
        // Records store op/s.
        results[2].samples = vec![113.9e9, 110.3e9, 63.8e9];
        results[2].summary = crate::measure::Summary::of(&results[2].samples).unwrap();
        // A different point on one node only: not compared with anything.
        results.push(rec(
            "throughput",
            1.0,
            &[("threads", json!(1)), ("node", json!(0))],
        ));
        let hosts = vec!["a".to_string(), "b".into(), "c".into()];
        let out = node_outliers(&results, &hosts, OutlierRule::default());
        assert_eq!(out.len(), 2, "{out:?}");
        assert!(
            out.iter()
                .all(|o| o.node == 2 && o.hostname == "c" && o.worse && o.peers == 3)
        );
        assert!(
            out.iter()
                .any(|o| o.metric == Metric::Latency && o.deviation > 0.7)
        );
    }

    #[test]
    fn matrices_and_link_outliers() {
        let mut results = Vec::new();
        for src in 0..3u32 {
            for dst in 0..3u32 {
                let pattern = if src == dst { "self" } else { "pairs" };
                let gbit = if (src, dst) == (1, 2) {
                    2000.0
                } else {
                    20000.0
                };
                let common = [
                    ("pattern", json!(pattern)),
                    ("src_node", json!(src)),
                    ("dst_node", json!(dst)),
                    ("node", json!(src)),
                    ("protocol", json!("TCP")),
                ];
                let mut t = common.to_vec();
                t.push(("side", json!("receiver")));
                results.push(link("throughput", gbit, &t));
                let mut s = common.to_vec();
                s.push(("side", json!("sender")));
                results.push(link("throughput", gbit, &s));
                results.push(link("latency", 60.0, &common));
            }
        }
        let m = matrices(&results, 3);
        assert_eq!(m.len(), 2);
        let t = m.iter().find(|m| m.metric == Metric::Throughput).unwrap();
        assert!(t.values.iter().flatten().all(|v| v.is_some()));
        assert_eq!(t.values[1][2], Some(2000e9));
        let hosts = vec!["a".to_string(), "b".into(), "c".into()];
        let out = link_outliers(&results, &hosts, OutlierRule::default());
        assert_eq!(out.len(), 1, "{out:?}");
        assert_eq!((out[0].node, out[0].dst_node), (1, Some(2)));
        assert_eq!(out[0].peers, 6);
    }
}
