//! Memory latency points' parameters: a staircase step, a level found on it, a probe, a C2C
//! pair, LOADED's traffic or a NUMA cell, and the parts they share.

use super::kinds::*;
use super::node_tag::NodeTag;
use crate::sysinfo::Isa;
use serde::{Deserialize, Serialize};

/// A field that may be absent, present and null, or present with a value:
/// `Option<Option<T>>` with `#[serde(default, skip_serializing_if = "Option::is_none")]`.
mod present {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<S: Serializer, T: Serialize>(
        v: &Option<Option<T>>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        match v {
            Some(inner) => inner.serialize(s),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
        d: D,
    ) -> Result<Option<Option<T>>, D::Error> {
        Option::<T>::deserialize(d).map(Some)
    }
}

/// Memory latency points: one staircase step (`chase`), a level found on it (`level`), or a
/// per-operation probe (`seq-1B`, `random-8B`, …).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LatencyParams {
    pub threads: usize,
    /// As [`super::params::CpuParams::cpu_quota`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_quota: Option<f64>,
    pub probe: Probe,
    /// Chase and probe points: the CPUs of the threads, each running its own chain (or probe)
    /// at the same time.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cpus: Vec<usize>,
    /// Chase and probe points: each thread's own latency per load, ns (mean over the timed
    /// rounds), in the order of `cpus`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub thread_latency_ns: Vec<f64>,
    /// Chase and probe points: loads per second of all threads together (mean over the timed
    /// rounds of the sum of each thread's rate).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ops_per_s: Option<f64>,
    #[serde(flatten)]
    pub chase: Option<Chase>,
    #[serde(flatten)]
    pub level: Option<Level>,
    #[serde(flatten)]
    pub op: Option<OpProbe>,
    #[serde(flatten)]
    pub pair: Option<CpuPair>,
    #[serde(flatten)]
    pub load: Option<Load>,
    #[serde(flatten)]
    pub cell: Option<NodeCell>,
    #[serde(flatten)]
    pub node: NodeTag,
}

impl LatencyParams {
    /// Whether it is a step of the pointer-chasing staircase (a LOADED or NUMA point chases
    /// too, beside traffic or on a node's memory).
    pub fn is_step(&self) -> bool {
        self.chase.is_some() && self.load.is_none() && self.cell.is_none()
    }
}

/// The parts share keys (`pages`, `working_set_bytes`), which serde's flattening cannot read
/// back (the first part takes the keys it knows): each part is read from the whole object.
impl<'de> Deserialize<'de> for LatencyParams {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        struct Head {
            threads: usize,
            #[serde(default)]
            cpu_quota: Option<f64>,
            probe: Probe,
            #[serde(default)]
            cpus: Vec<usize>,
            #[serde(default)]
            thread_latency_ns: Vec<f64>,
            #[serde(default)]
            ops_per_s: Option<f64>,
            #[serde(flatten)]
            node: NodeTag,
        }
        let v = serde_json::Value::deserialize(d)?;
        let head: Head = serde_json::from_value(v.clone()).map_err(serde::de::Error::custom)?;
        Ok(LatencyParams {
            threads: head.threads,
            cpu_quota: head.cpu_quota,
            probe: head.probe,
            cpus: head.cpus,
            thread_latency_ns: head.thread_latency_ns,
            ops_per_s: head.ops_per_s,
            chase: serde_json::from_value(v.clone()).ok(),
            level: serde_json::from_value(v.clone()).ok(),
            op: serde_json::from_value(v.clone()).ok(),
            pair: serde_json::from_value(v.clone()).ok(),
            load: serde_json::from_value(v.clone()).ok(),
            cell: serde_json::from_value(v).ok(),
            node: head.node,
        })
    }
}

/// One step of the pointer-chasing staircase.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Chase {
    pub working_set_bytes: u64,
    pub pages: Pages,
    /// Null when the kernel gave no huge pages.
    pub huge_page_bytes: Option<u64>,
    pub loads: u64,
    /// Null when the clock is unknown.
    pub clock_ghz: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_cycles: Option<f64>,
}

/// A plateau of the staircase.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Level {
    /// `L1`…, `memory`, `memory-2`…
    pub level: LevelKind,
    pub pages: Pages,
    pub plateau_from_bytes: u64,
    pub plateau_to_bytes: u64,
    /// Cache levels only: the detected capacity (null when the staircase does not show it)
    /// and the size sysfs gives (null when it gives none).
    #[serde(default, skip_serializing_if = "Option::is_none", with = "present")]
    pub capacity_bytes: Option<Option<u64>>,
    #[serde(default, skip_serializing_if = "Option::is_none", with = "present")]
    pub sysfs_size_bytes: Option<Option<u64>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_cycles: Option<f64>,
}

/// The two CPUs of a C2C point: the line's round trip starts and ends on `from_cpu`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CpuPair {
    pub from_cpu: usize,
    pub to_cpu: usize,
    /// What the two share, from the topology: `smt` (one core), `l3` (one last-level cache),
    /// `package` (one socket, other caches), `system` (other sockets).
    pub shared: String,
    /// Round trips in one repetition.
    pub round_trips: u64,
}

/// LOADED: the traffic that ran beside the chase (its `cpus`) at one injection delay.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Load {
    /// The traffic threads' pause after each burst, ns; null: idle (no traffic threads).
    pub injection_delay_ns: Option<u64>,
    pub mix: Mix,
    /// Bytes of each array one burst moves.
    pub burst_bytes: u64,
    pub traffic_cpus: Vec<usize>,
    pub isa: Isa,
    pub stores: StoreKind,
    pub array_bytes_per_thread: u64,
}

/// NUMA: one cell of the node matrices. The latency chases on the first of `bandwidth_cpus`
/// (`cpus`), the bandwidth reads on all of them, over memory bound to `mem_node`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodeCell {
    pub cpu_node: u32,
    pub mem_node: u32,
    /// The topology's distance from `cpu_node` to `mem_node` (10 is local); null where sysfs
    /// gives none.
    pub distance: Option<u32>,
    /// NUMA nodes the machine has (1: the matrix is one cell).
    pub nodes: u32,
    /// Whether the memory was bound to `mem_node` (mbind); false where the kernel has no NUMA.
    pub bound: bool,
    pub bandwidth_cpus: Vec<usize>,
    pub isa: Isa,
    pub array_bytes_per_thread: u64,
}

/// Independent loads of one size over a DRAM-sized span.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OpProbe {
    pub op_bytes: u64,
    pub order: Order,
    pub working_set_bytes: u64,
    pub ops: u64,
}
