//! A NUMA point: the node matrices (Intel MLC's `--latency_matrix` and `--bandwidth_matrix`).
//! For each cell — a node whose CPUs this process may use, and a node that has memory — a
//! pointer chase on the node's first CPU through a ring bound to the memory's node (mbind before
//! the first touch), and a read of arrays bound there on every CPU of the node at once. A
//! machine with one node has a one-cell matrix; a kernel without NUMA, one cell whose memory is
//! not bound (the record says so).

use super::loaded::ring_bytes;
use super::numa::{self, NumaCell};
use super::records::{latency_params, record};
use super::session::on_each;
use super::{MemError, MemSession, MemWorkload, array_bytes};
use crate::bench::buffer::{Buffer, HugePages};
use crate::results::params::{self as rp, Params};
use crate::results::{Metric, ResultRecord, Unit};
use crate::runner;
use std::time::Duration;

/// The cells of this machine's matrices and its node count: sysfs's nodes (the columns those
/// this process may allocate on, its cpuset's `Mems_allowed`), or one cell of node 0 over every
/// allowed CPU where the kernel lists no nodes; and whether memory can be bound.
pub fn matrix_cells(allowed: &[usize]) -> (Vec<NumaCell>, u32, bool) {
    match crate::sysinfo::numa::current() {
        Some(t) if !t.nodes.is_empty() => {
            let mut cells = numa::cells(&t, allowed);
            if let Some(mems) = mems_allowed() {
                cells.retain(|c| mems.contains(&(c.mem_node as usize)));
            }
            (cells, t.nodes.len() as u32, true)
        }
        _ => (
            vec![NumaCell {
                cpu_node: 0,
                mem_node: 0,
                cpus: allowed.to_vec(),
                distance: None,
            }],
            1,
            false,
        ),
    }
}

/// The memory nodes this process may allocate on (`Mems_allowed_list` of /proc/self/status);
/// None where it is not there.
fn mems_allowed() -> Option<Vec<usize>> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let list = crate::sysinfo::sysfs::proc_field(&status, "Mems_allowed_list")?;
    crate::sysinfo::sysfs::parse_cpu_list(&list)
}

/// Whether memory can be bound to `node` here: a seccomp filter (a container's default one)
/// refuses mbind with EPERM, a kernel without NUMA with ENOSYS.
fn binding_refused(node: u32) -> Option<std::io::Error> {
    match Buffer::new_with(4096, HugePages::Off, |p, len| numa::bind(p, len, node)) {
        Err(e) if matches!(e.raw_os_error(), Some(libc::EPERM | libc::ENOSYS)) => Some(e),
        _ => None,
    }
}

impl MemSession<'_> {
    /// Every cell's latency and bandwidth records.
    pub(super) fn numa(&self, tick: &mut dyn FnMut()) -> Result<Vec<ResultRecord>, MemError> {
        let (cells, nodes, mut bound) = matrix_cells(&self.allowed);
        if let Some(first) = cells.first()
            && bound
            && let Some(e) = binding_refused(first.mem_node)
        {
            // One node: first touch places everything there anyway.
            if nodes > 1 {
                return Err(MemError::NoBinding(e.to_string()));
            }
            bound = false;
        }
        let budget = crate::sysinfo::ClockBudget::default();
        let mut out = Vec::new();
        for cell in cells.iter().filter(|c| !c.cpus.is_empty()) {
            let place = bound.then_some(cell.mem_node);
            let chaser = cell.cpus[0];
            let clock = runner::on_cpu(chaser, || {
                self.sys.measure_clock(&self.sys.clock_probes(), budget).ghz
            })
            .map_err(|e| MemError::Pin(e.to_string()))?;
            let (ns, chase) = self.cell_latency(chaser, place, clock, tick)?;
            let (gbs, per_thread) = self.cell_bandwidth(&cell.cpus, place, tick)?;
            let mut params =
                latency_params(cell.cpus.len(), rp::Probe::Numa, Some(chase), None, None);
            if let Params::MemLatency(p) = &mut params {
                p.cpus = vec![chaser];
                p.cell = Some(rp::NodeCell {
                    cpu_node: cell.cpu_node,
                    mem_node: cell.mem_node,
                    distance: cell.distance,
                    nodes,
                    bound,
                    bandwidth_cpus: cell.cpus.clone(),
                    isa: self.isa,
                    array_bytes_per_thread: per_thread,
                });
            }
            let floor = crate::sysinfo::peak::memory_latency(&self.opts.peak);
            out.push(record(
                MemWorkload::Numa,
                params.clone(),
                Metric::Latency,
                Unit::Nanos,
                ns,
                floor,
            ));
            let peak = self.peak.clone();
            out.push(record(
                MemWorkload::Numa,
                params,
                Metric::Throughput,
                Unit::GBPerSec,
                gbs,
                peak,
            ));
        }
        Ok(out)
    }

    /// A cell's latency: per round, ns per load of a chase on `chaser` through a DRAM-sized
    /// ring on `node` (huge pages), and the chase's parameters.
    fn cell_latency(
        &self,
        chaser: usize,
        node: Option<u32>,
        clock: Option<f64>,
        tick: &mut dyn FnMut(),
    ) -> Result<(Vec<f64>, rp::Chase), MemError> {
        let huge = HugePages::On;
        let (ring, loads) = self.dram_ring(chaser, huge, node)?;
        let times = runner::run_rounds(
            &[chaser],
            self.reps,
            |_| {
                std::hint::black_box(ring.run(loads));
            },
            |_| {},
            |_| tick(),
        )
        .map_err(|e| MemError::Pin(e.to_string()))?;
        let ns: Vec<f64> = times.iter().map(|t| per_load(*t, loads)).collect();
        let mean = ns.iter().sum::<f64>() / ns.len().max(1) as f64;
        let size = ring_bytes(self.opts, self.sys);
        let chase = ring.params(size, huge, loads, clock, Some(mean));
        Ok((ns, chase))
    }

    /// A cell's bandwidth: per round, GB/s of every CPU of `cpus` summing arrays of its own on
    /// `node` (`--array-size` split between them), and each thread's array size.
    fn cell_bandwidth(
        &self,
        cpus: &[usize],
        node: Option<u32>,
        tick: &mut dyn FnMut(),
    ) -> Result<(Vec<f64>, u64), MemError> {
        let threads = cpus.len().max(1);
        let per_thread = (array_bytes(self.opts, self.sys) / threads as u64).max(4096) / 64 * 64;
        let elems = (per_thread / 8) as usize;
        let arrays = on_each(cpus, per_thread * threads as u64, |_| {
            let b = Buffer::new_with(per_thread as usize, HugePages::On, |p, len| match node {
                Some(n) => numa::bind(p, len, n),
                None => Ok(()),
            })?;
            // SAFETY: the buffer holds `elems` f64.
            unsafe { (self.regular.fill)(b.as_ptr() as *mut f64, 1.0, elems) };
            Ok(b)
        })?;
        let read = self.regular.read;
        let pass = |i: usize, _: u64| {
            // SAFETY: thread i's array holds `elems` f64.
            std::hint::black_box(unsafe { read(arrays[i].as_ptr() as *const f64, elems) });
        };
        let t = self.timed_passes(cpus, per_thread, &pass, tick, None)?;
        let bytes = per_thread as f64 * t.passes as f64 * threads as f64;
        let gbs = t
            .times
            .iter()
            .map(|t| bytes / t.as_secs_f64().max(1e-9) / 1e9)
            .collect();
        Ok((gbs, per_thread))
    }
}

/// ns per load of a round of `loads` loads.
fn per_load(t: Duration, loads: u64) -> f64 {
    t.as_secs_f64() * 1e9 / loads.max(1) as f64
}
