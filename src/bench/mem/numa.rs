//! NUMA placement for the memory benchmark: which CPUs run and which node holds the memory of
//! each cell of the node matrices, and binding a buffer to a node (mbind) before its first touch.
//!
//! A node matrix (Intel MLC's `--latency_matrix` / `--bandwidth_matrix`) has one row per node
//! whose CPUs this process may use and one column per node that has memory, CPU-less memory
//! nodes (CXL expanders, HBM) included: cell (i, j) runs threads on node i's CPUs over memory
//! bound to node j.

use crate::sysinfo::numa::{MAX_NODES, NumaTopology};
use std::collections::BTreeSet;
use std::io;

/// `MPOL_MF_STRICT` (linux/mempolicy.h): fail when a page of the range is not on the node.
const MPOL_MF_STRICT: libc::c_ulong = 1;
/// `MPOL_MF_MOVE` (linux/mempolicy.h): move the range's pages already touched to the node.
const MPOL_MF_MOVE: libc::c_ulong = 2;
/// `MPOL_F_NODE` (linux/mempolicy.h): with `MPOL_F_ADDR`, get_mempolicy returns a page's node.
const MPOL_F_NODE: libc::c_ulong = 1;
/// `MPOL_F_ADDR` (linux/mempolicy.h): ask about the page at an address.
const MPOL_F_ADDR: libc::c_ulong = 2;

/// One cell of a node matrix.
#[derive(Debug, Clone, PartialEq)]
pub struct NumaCell {
    /// The node whose CPUs run the threads.
    pub cpu_node: u32,
    /// The node that holds the memory.
    pub mem_node: u32,
    /// The CPUs of `cpu_node` this process may run on, ascending.
    pub cpus: Vec<usize>,
    /// The topology's distance from `cpu_node` to `mem_node` (10 is local); None when unknown.
    pub distance: Option<u32>,
}

/// The cells of the node matrix, row-major: rows are the nodes with at least one CPU in
/// `allowed` (the CPUs this process may run on), columns the nodes with memory (a node whose
/// memory size is unknown counts as having some), both in id order.
pub fn cells(topology: &NumaTopology, allowed: &[usize]) -> Vec<NumaCell> {
    let allowed: BTreeSet<usize> = allowed.iter().copied().collect();
    let mut nodes: Vec<_> = topology.nodes.iter().collect();
    nodes.sort_by_key(|n| n.id);
    let rows: Vec<(u32, Vec<usize>)> = nodes
        .iter()
        .filter_map(|n| {
            let cpus: Vec<usize> = n
                .cpus
                .iter()
                .copied()
                .filter(|c| allowed.contains(c))
                .collect();
            (!cpus.is_empty()).then_some((n.id, cpus))
        })
        .collect();
    let columns: Vec<u32> = nodes
        .iter()
        .filter(|n| n.memory_bytes != Some(0))
        .map(|n| n.id)
        .collect();
    rows.iter()
        .flat_map(|(cpu_node, cpus)| {
            columns.iter().map(move |&mem_node| NumaCell {
                cpu_node: *cpu_node,
                mem_node,
                cpus: cpus.clone(),
                distance: topology.distance(*cpu_node, mem_node),
            })
        })
        .collect()
}

/// The page size (sysconf(_SC_PAGESIZE)).
fn page_size() -> io::Result<usize> {
    // SAFETY: sysconf only reads a system constant.
    let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(size)
        .ok()
        .filter(|&s| s > 0)
        .ok_or_else(io::Error::last_os_error)
}

/// Binds the pages of `ptr..ptr + len` to NUMA node `node` (mbind, MPOL_BIND with
/// MPOL_MF_STRICT | MPOL_MF_MOVE): pages touched from now on are allocated there, pages
/// already touched are moved there, and the call fails when one cannot be. Bind a buffer
/// before its first touch, so that nothing has to move.
///
/// `ptr` must be page-aligned (a [`crate::bench::buffer::Buffer`] is); the kernel rounds `len`
/// up to whole pages. Nodes at or above 1024 (Linux's largest MAX_NUMNODES) are refused with
/// `InvalidInput`; a node the machine does not have, or that this process's cpuset excludes,
/// fails with the kernel's error (EINVAL).
pub fn bind(ptr: *mut u8, len: usize, node: u32) -> io::Result<()> {
    let bits = libc::c_ulong::BITS as usize;
    let node = node as usize;
    if node >= MAX_NODES {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("NUMA node {node} does not exist: Linux numbers nodes below {MAX_NODES}"),
        ));
    }
    let page = page_size()?;
    if !(ptr as usize).is_multiple_of(page) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{ptr:p} is not aligned to the {page}-byte page: mbind binds whole pages"),
        ));
    }
    let mut mask: Vec<libc::c_ulong> = vec![0; node / bits + 1];
    mask[node / bits] |= 1 << (node % bits);
    // The kernel reads maxnode - 1 bits of the mask (mm/mempolicy.c, get_nodes): one more than
    // the mask holds.
    let maxnode = (mask.len() * bits + 1) as libc::c_ulong;
    // SAFETY: mbind(start, len, mode, nodemask, maxnode, flags) reads `mask`, which lives for
    // the call and holds maxnode - 1 bits; it changes the placement of the pages of the range,
    // never their contents, and fails (EFAULT/ENOMEM) on addresses that are not mapped.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_mbind,
            ptr as libc::c_ulong,
            len as libc::c_ulong,
            libc::MPOL_BIND as libc::c_ulong,
            mask.as_ptr(),
            maxnode,
            MPOL_MF_STRICT | MPOL_MF_MOVE,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// The NUMA node that holds the page at `ptr` (get_mempolicy with MPOL_F_NODE | MPOL_F_ADDR).
/// Touch the page first: an untouched page has no node yet.
pub fn node_of(ptr: *const u8) -> io::Result<u32> {
    let mut node: libc::c_int = -1;
    // SAFETY: get_mempolicy(mode, nodemask, maxnode, addr, flags) writes one int to `node`,
    // which lives for the call; with a null nodemask and maxnode 0 it writes nothing else, and
    // it fails (EFAULT) on an address that is not mapped.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_get_mempolicy,
            &mut node as *mut libc::c_int,
            std::ptr::null_mut::<libc::c_ulong>(),
            0 as libc::c_ulong,
            ptr as libc::c_ulong,
            MPOL_F_NODE | MPOL_F_ADDR,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    u32::try_from(node).map_err(|_| io::Error::other(format!("get_mempolicy gave node {node}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::buffer::{Buffer, HugePages};
    use crate::sysinfo::numa::{self, NumaNode};
    use std::path::Path;

    fn fixture(name: &str) -> NumaTopology {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/numa");
        numa::read(&dir.join(name)).unwrap()
    }

    fn cell(cpu_node: u32, mem_node: u32, cpus: &[usize], distance: u32) -> NumaCell {
        NumaCell {
            cpu_node,
            mem_node,
            cpus: cpus.to_vec(),
            distance: Some(distance),
        }
    }

    #[test]
    fn two_sockets_all_cpus() {
        let topo = fixture("two-socket");
        let node0: Vec<usize> = (0..20).chain(40..60).collect();
        let node1: Vec<usize> = (20..40).chain(60..80).collect();
        assert_eq!(topo.nodes[0].cpus, node0);
        assert!(topo.nodes.iter().all(|n| n.memory_bytes > Some(180 << 30)));
        let allowed: Vec<usize> = (0..80).collect();
        assert_eq!(
            cells(&topo, &allowed),
            vec![
                cell(0, 0, &node0, 10),
                cell(0, 1, &node0, 21),
                cell(1, 0, &node1, 21),
                cell(1, 1, &node1, 10),
            ]
        );
    }

    #[test]
    fn two_sockets_in_a_cpuset_of_node_1() {
        let topo = fixture("two-socket");
        // Unsorted, with a CPU no node lists.
        let allowed: Vec<usize> = (20..40).rev().chain([500]).collect();
        let node1: Vec<usize> = (20..40).collect();
        assert_eq!(
            cells(&topo, &allowed),
            vec![cell(1, 0, &node1, 21), cell(1, 1, &node1, 10)]
        );
        assert_eq!(cells(&topo, &[]), vec![]);
    }

    #[test]
    fn cxl_expander_is_a_column_only() {
        let topo = fixture("cxl-expander");
        assert!(topo.nodes[1].cpus.is_empty());
        assert!(topo.nodes[1].memory_bytes.is_some_and(|m| m > 0));
        let cpus: Vec<usize> = (0..8).collect();
        assert_eq!(
            cells(&topo, &cpus),
            vec![cell(0, 0, &cpus, 10), cell(0, 1, &cpus, 20)]
        );
    }

    #[test]
    fn memoryless_nodes_are_rows_only() {
        let node = |id, cpus: Vec<usize>, memory_bytes| NumaNode {
            id,
            cpus,
            memory_bytes,
            distances: vec![],
        };
        // Out of id order; node 1 has CPUs but no memory, node 2 an unknown amount.
        let topo = NumaTopology {
            nodes: vec![
                node(2, vec![], None),
                node(0, vec![0], Some(1 << 30)),
                node(1, vec![1], Some(0)),
            ],
        };
        let got: Vec<(u32, u32, Option<u32>)> = cells(&topo, &[0, 1])
            .iter()
            .map(|c| (c.cpu_node, c.mem_node, c.distance))
            .collect();
        assert_eq!(
            got,
            vec![(0, 0, None), (0, 2, None), (1, 0, None), (1, 2, None)]
        );
    }

    #[test]
    fn this_machine_has_a_cell_per_pair() {
        let Some(topo) = numa::current() else {
            eprintln!("skipped: no /sys/devices/system/node");
            return;
        };
        let allowed = crate::sysinfo::cpuset::allowed_cpus();
        let got = cells(&topo, &allowed);
        assert!(!got.is_empty());
        assert!(got.iter().all(|c| !c.cpus.is_empty()));
        assert!(
            got.iter()
                .flat_map(|c| &c.cpus)
                .all(|c| allowed.contains(c))
        );
        if let [only] = topo.nodes.as_slice() {
            let cpus: Vec<usize> = only
                .cpus
                .iter()
                .copied()
                .filter(|c| allowed.contains(c))
                .collect();
            assert_eq!(
                got,
                vec![NumaCell {
                    cpu_node: only.id,
                    mem_node: only.id,
                    cpus,
                    distance: topo.distance(only.id, only.id),
                }]
            );
        }
    }

    #[test]
    fn binds_touches_and_finds_the_node() {
        let node = numa::current()
            .and_then(|t| {
                t.nodes
                    .iter()
                    .find(|n| n.memory_bytes != Some(0))
                    .map(|n| n.id)
            })
            .unwrap_or(0);
        // Bound before its first touch, as the NUMA points bind theirs.
        let buf = match Buffer::new_with(4 << 20, HugePages::Off, |p, len| bind(p, len, node)) {
            Err(e) if matches!(e.raw_os_error(), Some(libc::ENOSYS | libc::EPERM)) => {
                eprintln!(
                    "skipped: mbind is not allowed here ({e}); the kernel lacks NUMA or a seccomp filter refuses it"
                );
                return;
            }
            made => made.unwrap(),
        };
        assert_eq!(node_of(buf.as_ptr()).unwrap(), node);
        assert_eq!(
            node_of(buf.as_ptr().wrapping_add(buf.len() - 1)).unwrap(),
            node
        );
    }

    #[test]
    fn bad_nodes_and_addresses_are_errors() {
        // A buffer whose binding fails is not made (and its mapping not leaked).
        let failed = Buffer::new_with(1 << 20, HugePages::Off, |p, len| bind(p, len, 5000));
        assert_eq!(
            failed.err().map(|e| e.kind()),
            Some(io::ErrorKind::InvalidInput)
        );
        let buf = Buffer::new(1 << 20, HugePages::Off).unwrap();
        assert!(bind(buf.as_ptr(), buf.len(), 1000).is_err());
        for node in [5000, u32::MAX] {
            let err = bind(buf.as_ptr(), buf.len(), node).unwrap_err();
            assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
            assert_eq!(err.raw_os_error(), None);
        }
        let err = bind(buf.as_ptr().wrapping_add(1), 4096, 0).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
        assert!(err.to_string().contains("aligned"), "{err}");
    }
}
