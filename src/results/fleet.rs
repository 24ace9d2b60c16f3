//! The part of a document that only a multi-node run has (`peakbench cluster run`): the nodes
//! and their system information, the outliers among them, and the node-pair network matrices.
//! Every node's points are ordinary records in `results`, told apart by their `node` parameter
//! (and `src_node`, `dst_node`, `pattern` for the network between nodes).

use crate::ids::{Metric, Subsystem, Unit};
use crate::measure::stats::nan_as_null;
use crate::sysinfo::SystemInfo;
use crate::workload::Workload;
use serde::{Deserialize, Serialize};

/// A merged run of `world_size` processes.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Fleet {
    pub world_size: u32,
    /// One entry per rank, in rank order.
    pub nodes: Vec<Node>,
    /// Points where a node (or a link) deviates from its peers.
    pub outliers: Vec<Outlier>,
    /// How outliers were decided.
    pub outlier_rule: OutlierRule,
    /// The node-pair network: one matrix per metric of the all-pairs pattern.
    pub matrices: Vec<Matrix>,
    /// What did not go to plan (a node that left, a test that failed), one line each.
    pub notes: Vec<String>,
    /// `cluster run --hpl`: one HPL over the machines after the nodes' own points.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hpl: Option<FleetHpl>,
    /// The `pairs` pattern measured some of its rounds (`--pair-rounds`); absent where it
    /// measured all, or did not run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pairs_sampled: Option<PairsSample>,
}

/// Which part of the `pairs` pattern a large fleet measured: `measured_rounds` of its
/// `rounds` rounds of disjoint pairs, spread evenly over them.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PairsSample {
    pub ranks: u32,
    pub rounds: u32,
    pub measured_rounds: u32,
    /// Ordered pairs of the fleet, N · (N − 1), and how many of them were measured.
    pub ordered_pairs: u64,
    pub measured_pairs: u64,
}

impl PairsSample {
    /// What it says to a reader (rank 0's line, the report's notes).
    pub fn sentence(&self) -> String {
        format!(
            "pairs sampled: {} ranks have {} rounds of disjoint pairs, of which --pair-rounds measured {}, spread evenly over the circle (each rank against at most {} others): {} of the {} ordered pairs",
            self.ranks,
            self.rounds,
            self.measured_rounds,
            self.measured_rounds,
            self.measured_pairs,
            self.ordered_pairs
        )
    }
}

/// One HPL job (Debian's hpcc) over the machines of the run, launched as clusters run it: by
/// `mpirun --host` over the machines' addresses or by `srun` in the Slurm allocation, one
/// process per physical core.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FleetHpl {
    /// "mpirun" or "srun".
    pub launcher: String,
    /// The command that ran (hpcc reads `hpccinf.txt` from its working directory).
    pub command: Vec<String>,
    /// The machines, in the order the processes were placed (rank 0's first).
    pub machines: Vec<HplMachine>,
    pub processes: usize,
    /// HPL's N and NB, and its P × Q process grid.
    pub n: usize,
    pub nb: usize,
    pub p: usize,
    pub q: usize,
    /// HPL's rate in GFLOP/s (10⁹ op/s), its time in s, and its scaled residual (below 16
    /// passes); null where it did not run or failed (`error` says why).
    pub gflops: Option<f64>,
    pub seconds: Option<f64>,
    pub residual: Option<f64>,
    /// The BLAS hpcc loads on rank 0's machine.
    pub blas: Option<String>,
    /// The sum over the machines of each one's best LINPACK point (GFLOP/s): what HPL over the
    /// network is compared with; null where a machine has no LINPACK point.
    pub nodes_linpack_gflops: Option<f64>,
    /// Why there is no figure.
    pub error: Option<String>,
}

/// A machine of the multi-node HPL.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HplMachine {
    pub hostname: String,
    /// The address mpirun reaches it at (its lowest rank's).
    pub address: String,
    /// Its processes: its physical cores.
    pub processes: usize,
}

impl Fleet {
    /// Converts the figures of the outliers and matrices (see [`crate::results::UnitMap`]).
    pub fn convert(&mut self, map: super::UnitMap) {
        for o in self.outliers.iter_mut() {
            if let Some(c) = map(o.subsystem, o.unit) {
                o.value = c.apply(o.value);
                o.median = c.apply(o.median);
                o.mad = c.apply(o.mad);
                o.unit = c.unit;
            }
        }
        for m in self.matrices.iter_mut() {
            if let Some(c) = map(Subsystem::Net, m.unit) {
                for v in m.values.iter_mut().flatten().flatten() {
                    *v = c.apply(*v);
                }
                m.unit = c.unit;
            }
        }
    }
}

/// One rank of the run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Node {
    pub rank: u32,
    pub hostname: String,
    /// /etc/machine-id (ranks with the same one share a machine and take turns).
    pub machine_id: String,
    /// Where the rank came from ("open_mpi", "slurm", "flags", …).
    pub identity_source: String,
    /// The address the other ranks reach this one at.
    pub address: String,
    /// "complete", or why this node's points are missing.
    pub status: String,
    /// Jobs of the profile that failed on this node.
    pub failed_jobs: Vec<String>,
    /// Null when the node never reported.
    pub system: Option<SystemInfo>,
}

/// The rule: a value is an outlier when it is more than `mad_factor` scaled median absolute
/// deviations (1.4826 × MAD, which estimates the standard deviation of normal data) from the
/// median of its peers AND more than `min_deviation` (a fraction of the median) away from it;
/// groups of fewer than `min_peers` values are not judged.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct OutlierRule {
    pub mad_factor: f64,
    pub min_deviation: f64,
    pub min_peers: u32,
}

impl Default for OutlierRule {
    /// 3.5 scaled MADs is Iglewicz and Hoaglin's cut-off for the modified z-score; 10 % keeps
    /// nodes that agree to within noise (where the MAD is nearly zero) from being flagged.
    fn default() -> Self {
        OutlierRule {
            mad_factor: 3.5,
            min_deviation: 0.10,
            min_peers: 3,
        }
    }
}

/// One deviating value (its workload written as its name and read back with its subsystem,
/// as a record's is).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(try_from = "WireOutlier")]
pub struct Outlier {
    /// "node" (a node's own point) or "link" (a node pair's network figure).
    pub kind: String,
    /// The node, or the link's source (sender, pinging side).
    pub node: u32,
    /// The link's destination.
    pub dst_node: Option<u32>,
    pub hostname: String,
    pub subsystem: Subsystem,
    pub workload: Workload,
    pub metric: Metric,
    pub unit: Unit,
    /// What identifies the point (the record's identity parameters).
    pub point: String,
    /// The point's median over its repetitions. These four figures, where not finite (a
    /// median of 0, a conversion that overflowed), are written as `null` and read back as NaN.
    pub value: f64,
    /// The median of the peers' values (this one included) and their MAD.
    pub median: f64,
    pub mad: f64,
    /// (value − median) / median.
    pub deviation: f64,
    /// True when the deviation is in the bad direction (lower throughput, higher latency).
    pub worse: bool,
    /// How many values were compared.
    pub peers: u32,
}

impl OutlierRule {
    /// The values of `values` this rule calls outliers: (index, median, MAD, deviation).
    pub fn judge(self, values: &[f64]) -> Vec<(usize, f64, f64, f64)> {
        use crate::measure::stats::median;
        if values.len() < self.min_peers as usize || values.iter().any(|v| !v.is_finite()) {
            return Vec::new();
        }
        let med = median(&mut values.to_vec());
        let mad = median(&mut values.iter().map(|v| (v - med).abs()).collect::<Vec<_>>());
        if med == 0.0 {
            return Vec::new();
        }
        values
            .iter()
            .enumerate()
            .filter_map(|(i, &v)| {
                let d = (v - med).abs();
                let dev = (v - med) / med.abs();
                (d > self.mad_factor * 1.4826 * mad && dev.abs() > self.min_deviation)
                    .then_some((i, med, mad, dev))
            })
            .collect()
    }
}

/// An outlier as a document holds it: its workload a name.
#[derive(Deserialize)]
struct WireOutlier {
    kind: String,
    node: u32,
    dst_node: Option<u32>,
    hostname: String,
    subsystem: Subsystem,
    workload: String,
    metric: Metric,
    unit: Unit,
    point: String,
    #[serde(deserialize_with = "nan_as_null::number")]
    value: f64,
    #[serde(deserialize_with = "nan_as_null::number")]
    median: f64,
    #[serde(deserialize_with = "nan_as_null::number")]
    mad: f64,
    #[serde(deserialize_with = "nan_as_null::number")]
    deviation: f64,
    worse: bool,
    peers: u32,
}

impl TryFrom<WireOutlier> for Outlier {
    type Error = String;

    fn try_from(w: WireOutlier) -> Result<Outlier, String> {
        Ok(Outlier {
            workload: Workload::named(w.subsystem, &w.workload)?,
            kind: w.kind,
            node: w.node,
            dst_node: w.dst_node,
            hostname: w.hostname,
            subsystem: w.subsystem,
            metric: w.metric,
            unit: w.unit,
            point: w.point,
            value: w.value,
            median: w.median,
            mad: w.mad,
            deviation: w.deviation,
            worse: w.worse,
            peers: w.peers,
        })
    }
}

/// An N × N matrix of a node-pair figure: `values[src][dst]`, the sender (or the pinging side)
/// in the row; the diagonal is the node's own stack (it measures itself through its address).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Matrix {
    /// `pairs` (all pairs, in rounds of disjoint pairs).
    pub pattern: crate::results::params::LinkPattern,
    /// "throughput" (receiver's goodput) or "latency" (round trip); each cell is the median
    /// of the test's repetitions, as the outliers use.
    pub metric: Metric,
    pub unit: Unit,
    /// "TCP" or "UDP".
    pub protocol: String,
    /// Null where the link was not measured.
    pub values: Vec<Vec<Option<f64>>>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An outlier's workload is read back with its subsystem, as a record's is: a name that no
    /// workload of that subsystem has is refused, saying so, and never passes as text.
    #[test]
    fn an_outliers_workload_is_read_with_its_subsystem() {
        let doc = |subsystem: &str, workload: &str| {
            serde_json::json!({
                "kind": "node", "node": 2, "dst_node": null, "hostname": "n2",
                "subsystem": subsystem, "workload": workload, "metric": "throughput",
                "unit": "GOPS", "point": "cpu/DP/throughput", "value": 28.0, "median": 112.0,
                "mad": null, "deviation": -0.75, "worse": true, "peers": 3
            })
        };
        let o: Outlier = serde_json::from_value(doc("cpu", "DP")).unwrap();
        assert_eq!(o.workload.name(), "DP");
        assert!(o.mad.is_nan());
        assert_eq!(serde_json::to_value(&o).unwrap()["workload"], "DP");
        for (subsystem, workload) in [("cpu", "TRIAD"), ("mem", "DP"), ("cpu", "\u{1b}[2J")] {
            let e = serde_json::from_value::<Outlier>(doc(subsystem, workload)).unwrap_err();
            assert!(!e.to_string().contains('\u{1b}'), "{e}");
        }
    }
}
