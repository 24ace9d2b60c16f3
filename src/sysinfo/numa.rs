//! NUMA nodes as sysfs lists them: each node's CPUs, memory and distances.
//!
//! Read from `/sys/devices/system/node/nodeN/{cpulist,meminfo,distance}`. Every file is treated as
//! hostile: it is read with a size bound, its numbers are parsed with checked arithmetic, and a
//! file that makes no sense leaves that part of the node unknown (no CPUs, no memory size, no
//! distances) instead of failing the whole topology.

use crate::sysinfo::sysfs::parse_cpu_list;
use serde::Serialize;
use std::path::Path;

/// The most nodes a topology may have: Linux's MAX_NUMNODES is at most 2^10 (NODES_SHIFT ≤ 10).
pub const MAX_NODES: usize = 1024;

/// The most CPUs of all nodes together (Linux's NR_CPUS is at most 8192 today; this leaves room).
const MAX_CPUS: usize = 1 << 16;

/// The most directory entries looked at under the node root, node or not.
const MAX_ENTRIES: usize = 1 << 16;

/// The largest file read; a real cpulist, distance or meminfo is a few KiB at most.
const MAX_FILE_BYTES: u64 = 64 << 10;

/// One NUMA node.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NumaNode {
    pub id: u32,
    /// Its logical CPUs, ascending; empty for a memory-only node (CXL expander, HBM) or when the
    /// cpulist could not be read.
    pub cpus: Vec<usize>,
    /// Its memory (MemTotal of the node's meminfo); None when unknown.
    pub memory_bytes: Option<u64>,
    /// Its distance to each node, in the order of the topology's node ids (the node's
    /// `distance` file); empty when the file was missing, unparsable, or did not have one entry
    /// per node.
    pub distances: Vec<u32>,
}

/// The NUMA nodes of a machine, sorted by id.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NumaTopology {
    pub nodes: Vec<NumaNode>,
}

impl NumaTopology {
    /// The distance from node `from` to node `to` (10 is local, as the ACPI SLIT writes it);
    /// None when either node is unknown or `from`'s distances are.
    pub fn distance(&self, from: u32, to: u32) -> Option<u32> {
        let to_pos = self.nodes.iter().position(|n| n.id == to)?;
        let from = self.nodes.iter().find(|n| n.id == from)?;
        from.distances.get(to_pos).copied()
    }
}

/// This machine's topology, from /sys/devices/system/node; None where it has no NUMA sysfs.
pub fn current() -> Option<NumaTopology> {
    read(Path::new("/sys/devices/system/node"))
}

/// The topology under `root` (a directory laid out as /sys/devices/system/node); None when it
/// holds no `nodeN` directory, or more than [`MAX_NODES`] of them.
pub fn read(root: &Path) -> Option<NumaTopology> {
    let ids = node_ids(root)?;
    let mut cpu_budget = MAX_CPUS;
    let mut nodes = Vec::with_capacity(ids.len());
    for &id in &ids {
        let dir = root.join(format!("node{id}"));
        let cpus = read_bounded(&dir.join("cpulist"))
            .and_then(|text| cpus(&text, cpu_budget))
            .unwrap_or_default();
        cpu_budget = cpu_budget.saturating_sub(cpus.len());
        let memory_bytes = read_bounded(&dir.join("meminfo")).and_then(|t| mem_total(&t));
        let distances = read_bounded(&dir.join("distance"))
            .and_then(|t| distances(&t, ids.len()))
            .unwrap_or_default();
        nodes.push(NumaNode {
            id,
            cpus,
            memory_bytes,
            distances,
        });
    }
    Some(NumaTopology { nodes })
}

/// The ids of the `nodeN` directories under `root`, ascending, without duplicates.
fn node_ids(root: &Path) -> Option<Vec<u32>> {
    let mut ids = Vec::new();
    for entry in std::fs::read_dir(root).ok()?.take(MAX_ENTRIES).flatten() {
        let name = entry.file_name();
        let Some(id) = name
            .to_str()
            .and_then(|n| n.strip_prefix("node"))
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        // "node01" or "node+1" would name node 1 twice: only the kernel's spelling counts.
        if name.to_str() != Some(format!("node{id}").as_str()) || !entry.path().is_dir() {
            continue;
        }
        if ids.len() == MAX_NODES {
            return None;
        }
        ids.push(id);
    }
    ids.sort_unstable();
    ids.dedup();
    (!ids.is_empty()).then_some(ids)
}

/// A file's text, or None when it is missing, unreadable, larger than [`MAX_FILE_BYTES`] or not
/// UTF-8.
fn read_bounded(path: &Path) -> Option<String> {
    super::sysfs::read_bounded(path, MAX_FILE_BYTES)
}

/// A cpulist's CPUs, ascending and distinct; None when it does not parse or names more than
/// `budget` CPUs (counted before anything is expanded, so "0-65535,0-65535,…" costs nothing).
fn cpus(text: &str, budget: usize) -> Option<Vec<usize>> {
    let mut count: usize = 0;
    for part in text.trim().split(',').filter(|p| !p.is_empty()) {
        let n = match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (usize, usize) = (a.parse().ok()?, b.parse().ok()?);
                b.checked_sub(a)?.checked_add(1)?
            }
            None => 1,
        };
        count = count.checked_add(n).filter(|&c| c <= budget)?;
    }
    let mut cpus = parse_cpu_list(text)?;
    cpus.sort_unstable();
    cpus.dedup();
    Some(cpus)
}

/// MemTotal of a node's meminfo (`Node 0 MemTotal:       24568448 kB`), in bytes.
fn mem_total(text: &str) -> Option<u64> {
    text.lines().find_map(|line| {
        let (_, value) = line.split_once("MemTotal:")?;
        let kib: u64 = value.trim().strip_suffix("kB")?.trim().parse().ok()?;
        kib.checked_mul(1024)
    })
}

/// A distance line (`10 21`) with exactly `nodes` entries.
fn distances(text: &str, nodes: usize) -> Option<Vec<u32>> {
    let mut out = Vec::with_capacity(nodes);
    for word in text.split_whitespace() {
        if out.len() == nodes {
            return None;
        }
        out.push(word.parse().ok()?);
    }
    (out.len() == nodes).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write_node(root: &Path, name: &str, files: &[(&str, &str)]) {
        let dir = root.join(name);
        std::fs::create_dir_all(&dir).unwrap();
        for (file, text) in files {
            std::fs::write(dir.join(file), text).unwrap();
        }
    }

    #[test]
    fn reads_a_written_tree() {
        let root = tempfile::tempdir().unwrap();
        let r = root.path();
        // Written out of order, with the other entries sysfs has next to the nodes.
        write_node(
            r,
            "node1",
            &[
                ("cpulist", "4-7\n"),
                ("distance", "21 10\n"),
                (
                    "meminfo",
                    "Node 1 MemTotal:       1024 kB\nNode 1 MemFree: 5 kB\n",
                ),
            ],
        );
        write_node(
            r,
            "node0",
            &[
                ("cpulist", "0-3\n"),
                ("distance", "10 21\n"),
                ("meminfo", "Node 0 MemTotal:       24568448 kB\n"),
            ],
        );
        std::fs::write(r.join("online"), "0-1\n").unwrap();
        std::fs::create_dir(r.join("power")).unwrap();
        let topo = read(r).unwrap();
        assert_eq!(topo.nodes.len(), 2);
        assert_eq!(
            topo.nodes[0],
            NumaNode {
                id: 0,
                cpus: vec![0, 1, 2, 3],
                memory_bytes: Some(24568448 * 1024),
                distances: vec![10, 21],
            }
        );
        assert_eq!(topo.nodes[1].id, 1);
        assert_eq!(topo.nodes[1].cpus, vec![4, 5, 6, 7]);
        assert_eq!(topo.nodes[1].memory_bytes, Some(1 << 20));
        assert_eq!(topo.distance(0, 1), Some(21));
        assert_eq!(topo.distance(1, 1), Some(10));
        assert_eq!(topo.distance(1, 0), Some(21));
        assert_eq!(topo.distance(0, 2), None);
        assert_eq!(topo.distance(2, 0), None);
    }

    #[test]
    fn distances_follow_the_listed_ids_not_their_values() {
        // Sparse ids (node 0 and node 4): the second distance is node 4's.
        let root = tempfile::tempdir().unwrap();
        write_node(root.path(), "node0", &[("distance", "10 32")]);
        write_node(root.path(), "node4", &[("distance", "32 10")]);
        let topo = read(root.path()).unwrap();
        assert_eq!(topo.distance(0, 4), Some(32));
        assert_eq!(topo.distance(4, 4), Some(10));
        assert_eq!(topo.nodes[0].cpus, Vec::<usize>::new());
        assert_eq!(topo.nodes[0].memory_bytes, None);
    }

    #[test]
    fn no_node_directory_is_none() {
        let root = tempfile::tempdir().unwrap();
        assert_eq!(read(root.path()), None);
        assert_eq!(read(&root.path().join("missing")), None);
        // A file named like a node, and misspelled node names, are not nodes.
        std::fs::write(root.path().join("node0"), "x").unwrap();
        std::fs::create_dir(root.path().join("node01")).unwrap();
        std::fs::create_dir(root.path().join("nodex")).unwrap();
        std::fs::create_dir(root.path().join("node99999999999")).unwrap();
        assert_eq!(read(root.path()), None);
    }

    #[test]
    fn hostile_content_does_not_panic() {
        let root = tempfile::tempdir().unwrap();
        let r = root.path();
        let huge_distance = vec!["4294967295"; 10_000].join(" ");
        let many_ranges = vec!["0-65535"; 4000].join(",");
        write_node(
            r,
            "node0",
            &[
                ("cpulist", "\u{0}garbage-\n"),
                ("distance", huge_distance.as_str()),
                (
                    "meminfo",
                    "Node 0 MemTotal: 99999999999999999999999 kB\nMemTotal:",
                ),
            ],
        );
        write_node(
            r,
            "node1",
            &[
                ("cpulist", many_ranges.as_str()),
                ("distance", "10 -1"),
                ("meminfo", "Node 1 MemTotal: 18446744073709551615 kB"),
            ],
        );
        write_node(
            r,
            "node2",
            &[
                ("cpulist", "18446744073709551615"),
                ("distance", "10 20 30"),
                ("meminfo", "MemTotal: 12 MB"),
            ],
        );
        write_node(r, "node3", &[("distance", "\u{ff}\u{fe}")]);
        std::fs::write(r.join("node3/cpulist"), [0xff, 0xfe, b'1']).unwrap();
        std::fs::write(r.join("node3/meminfo"), vec![b'7'; 1 << 20]).unwrap();
        let topo = read(r).unwrap();
        assert_eq!(topo.nodes.len(), 4);
        for node in &topo.nodes[..2] {
            assert!(node.cpus.is_empty());
            assert_eq!(node.memory_bytes, None);
        }
        assert_eq!(topo.nodes[2].cpus, vec![usize::MAX]);
        assert_eq!(topo.nodes[2].memory_bytes, None);
        assert!(topo.nodes[3].cpus.is_empty());
        assert_eq!(topo.nodes[3].memory_bytes, None);
        assert!(topo.nodes.iter().all(|n| n.distances.is_empty()));
        assert_eq!(topo.distance(0, 0), None);
    }

    #[test]
    fn counts_are_bounded() {
        assert_eq!(cpus("0-65535,0-65535", 1 << 16), None);
        assert_eq!(cpus("3,1,1,0-1", 10), Some(vec![0, 1, 3]));
        assert_eq!(cpus("", 0), Some(vec![]));
        assert_eq!(cpus("0-18446744073709551615", usize::MAX), None);
        assert_eq!(distances("10 20", 2), Some(vec![10, 20]));
        assert_eq!(distances("10 20", 1), None);
        assert_eq!(distances("10", 2), None);
        assert_eq!(mem_total("Node 0 MemTotal: 1 kB"), Some(1024));
        assert_eq!(mem_total("Node 0 MemTotal: 18014398509481984 kB"), None);
    }

    #[test]
    fn too_many_nodes_is_none() {
        let root = tempfile::tempdir().unwrap();
        for id in 0..=MAX_NODES {
            std::fs::create_dir(root.path().join(format!("node{id}"))).unwrap();
        }
        assert_eq!(read(root.path()), None);
        std::fs::remove_dir(root.path().join("node7")).unwrap();
        assert_eq!(read(root.path()).unwrap().nodes.len(), MAX_NODES);
    }

    #[test]
    fn this_machine() {
        let root = Path::new("/sys/devices/system/node");
        if !root.is_dir() {
            eprintln!("skipped: {} does not exist", root.display());
            return;
        }
        let topo = current().expect("a node directory under /sys/devices/system/node");
        assert!(!topo.nodes.is_empty());
        assert!(topo.nodes.windows(2).all(|w| w[0].id < w[1].id));
        assert!(topo.nodes.iter().any(|n| !n.cpus.is_empty()));
        for node in &topo.nodes {
            if !node.distances.is_empty() {
                assert_eq!(node.distances.len(), topo.nodes.len());
                assert_eq!(topo.distance(node.id, node.id), Some(10));
            }
        }
    }
}
