//! The C2C matrix: each ordered pair's cache-line round trip, the line starting in the row's
//! CPU, as a table and a heatmap (green the fastest pair, red the slowest), with what each
//! pair shares (one core, one last-level cache, one socket) in a legend line.

use super::matrix::MatrixView;
use crate::results::params::{CpuPair, Params, Probe};
use crate::results::{ResultRecord, Subsystem};

/// A C2C record's pair.
fn pair(r: &ResultRecord) -> Option<&CpuPair> {
    match &r.params {
        Params::MemLatency(p) if p.probe == Probe::C2c && r.subsystem == Subsystem::Mem => {
            p.pair.as_ref()
        }
        _ => None,
    }
}

/// The matrix of a run's C2C records (in display units), one per node of a multi-node run;
/// none without C2C records.
pub fn matrices(records: &[ResultRecord]) -> Vec<MatrixView> {
    let pairs = records.iter().filter_map(|r| Some((r, pair(r)?)));
    super::grouping::grouped(pairs, |(r, _)| r.params.node().node)
        .into_iter()
        .map(|(node, recs)| matrix(&recs, node))
        .collect()
}

fn matrix(recs: &[(&ResultRecord, &CpuPair)], node: Option<u32>) -> MatrixView {
    let mut cpus: Vec<usize> = recs
        .iter()
        .flat_map(|(_, p)| [p.from_cpu, p.to_cpu])
        .collect();
    cpus.sort_unstable();
    cpus.dedup();
    let unit = recs
        .first()
        .map(|(r, _)| r.unit.to_string())
        .unwrap_or_default();
    // The first record of each pair.
    let mut of_pair = std::collections::HashMap::new();
    for (r, p) in recs {
        of_pair
            .entry((p.from_cpu, p.to_cpu))
            .or_insert(r.summary.mean);
    }
    let value = |a: usize, b: usize| of_pair.get(&(a, b)).copied();
    // Closest first.
    let rank = |k: &str| ["smt", "l3", "package"].iter().position(|x| *x == k);
    let mut kinds: Vec<&str> = recs.iter().map(|(_, p)| p.shared.as_str()).collect();
    kinds.sort_by_key(|k| rank(k).unwrap_or(usize::MAX));
    kinds.dedup();
    let node = node.map(|n| format!(", node {n}")).unwrap_or_default();
    let title = format!(
        "Core-to-core round trip ({unit}){node}: a cache line from the row's CPU to the column's and back; the pairs share {}",
        kinds
            .iter()
            .map(|k| shared_words(k))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let cpus = cpus.as_slice();
    MatrixView::grid(
        title,
        "from \\ to",
        (cpus, cpus),
        |c| format!("CPU {c}"),
        value,
        true,
    )
}

/// What a pair's `shared` says, in words.
fn shared_words(shared: &str) -> &'static str {
    match shared {
        "smt" => "a core (SMT siblings)",
        "l3" => "a last-level cache",
        "package" => "a socket, not its cache",
        _ => "the system only (other sockets)",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::params::{LatencyParams, NodeTag};
    use crate::results::{Metric, Unit};

    fn c2c(from: usize, to: usize, shared: &str, ns: f64) -> ResultRecord {
        let params = Params::MemLatency(LatencyParams {
            threads: 2,
            cpu_quota: None,
            probe: Probe::C2c,
            cpus: vec![from, to],
            thread_latency_ns: Vec::new(),
            ops_per_s: None,
            chase: None,
            level: None,
            op: None,
            pair: Some(CpuPair {
                from_cpu: from,
                to_cpu: to,
                shared: shared.into(),
                round_trips: 1000,
            }),
            load: None,
            cell: None,
            node: NodeTag::default(),
        });
        let mut r = ResultRecord::new(
            crate::workload::mem::MemWorkload::C2c,
            params,
            Metric::Latency,
            Unit::Nanos,
            vec![ns],
            Err("none".into()),
        );
        // As a report shows it (display units).
        r.summary.mean = ns;
        r.unit = Unit::Nanos;
        r
    }

    /// Three CPUs, two of them SMT siblings: a row per CPU the line starts in, no diagonal,
    /// the fastest pair green and the slowest red, and what the pairs share in the title.
    #[test]
    fn the_matrix_has_a_cell_per_ordered_pair() {
        let recs = vec![
            c2c(0, 1, "smt", 20.0),
            c2c(1, 0, "smt", 21.0),
            c2c(0, 4, "l3", 60.0),
            c2c(4, 0, "l3", 62.0),
            c2c(1, 4, "l3", 61.0),
            c2c(4, 1, "l3", 63.0),
        ];
        let m = matrices(&recs);
        assert_eq!(m.len(), 1);
        let m = &m[0];
        assert_eq!(m.headers, ["from \\ to", "CPU 0", "CPU 1", "CPU 4"]);
        assert_eq!(m.rows[0], ["CPU 0", "—", "20.00", "60.00"]);
        assert_eq!(m.rows[2], ["CPU 4", "62.00", "63.00", "—"]);
        assert_eq!(m.heat[0][0], None);
        assert_eq!(m.heat[0][1].as_deref(), Some("hsl(120, 70%, 78%)"));
        assert_eq!(m.heat[2][1].as_deref(), Some("hsl(0, 70%, 78%)"));
        assert!(
            m.title
                .contains("a core (SMT siblings), a last-level cache"),
            "{}",
            m.title
        );
        assert!(matrices(&[]).is_empty());
        // Two pairs 1 % apart are not coloured.
        let even = matrices(&[c2c(0, 1, "l3", 61.0), c2c(1, 0, "l3", 61.6)]);
        assert!(even[0].heat.iter().flatten().all(|h| h.is_none()));
    }
}
