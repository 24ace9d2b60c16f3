//! The parts of a report that only a multi-node run has, formatted once for every exporter:
//! the nodes, the node-pair matrices and the outliers.

use crate::results::fleet::{Fleet, Matrix, Outlier};
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

/// "2 (node-b)": a rank and its host.
fn who(f: &Fleet, rank: usize) -> String {
    match f.nodes.get(rank) {
        Some(n) => format!("{rank} ({})", n.hostname),
        None => rank.to_string(),
    }
}

/// A matrix's title: "TCP throughput (Mbit/s), sender in the row".
pub fn matrix_title(m: &Matrix) -> String {
    let role = if m.metric == "latency" {
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
    let all = m.values.iter().flatten().flatten().copied();
    let lo = all.clone().fold(f64::INFINITY, f64::min);
    let hi = all.fold(f64::NEG_INFINITY, f64::max);
    move |v| {
        let v = v?;
        if hi.partial_cmp(&lo) != Some(std::cmp::Ordering::Greater) {
            return None;
        }
        let mut good = (v - lo) / (hi - lo);
        if m.metric == "latency" {
            good = 1.0 - good;
        }
        Some(format!("hsl({:.0}, 70%, 78%)", good * 120.0))
    }
}
