//! A LATENCY point: the pointer-chasing staircase for each page mode and the cache levels
//! found on it, then the per-operation probes, on one or more pinned threads at once.

use super::latency::{Chase, Probe, staircase_sizes};
use super::records::{latency_params, latency_record, record};
use super::session::on_each;
use super::{MemError, MemSession, MemWorkload, array_bytes};
use crate::bench::buffer::{Buffer, HugePages};
use crate::results::levels::{self, LevelKind, detect_levels};
use crate::results::params::{self as rp, Params};
use crate::results::{Metric, ResultRecord, Unit};
use crate::runner::{self, affinity};
use std::time::Duration;

impl MemSession<'_> {
    /// The staircase for each page mode, the levels found on it, and the per-operation probes,
    /// on `threads` pinned threads at once: each chases its own ring of the working set's size
    /// (runs its own probe), all started together, so that more than one thread shows the
    /// latency under load. A point's samples are the threads' mean latency per load.
    pub(super) fn latency(
        &self,
        threads: usize,
        tick: &mut dyn FnMut(),
    ) -> Result<Vec<ResultRecord>, MemError> {
        let cpus = affinity::place(threads, &self.allowed, &self.sys.cpu.logical).cpus;
        // Each sample chases for about this long.
        let sample = self.opts.latency_sample;
        let budget = crate::sysinfo::ClockBudget::default();
        let clock = runner::on_cpu(cpus[0], || {
            self.sys.measure_clock(&self.sys.clock_probes(), budget).ghz
        })
        .map_err(|e| MemError::Pin(e.to_string()))?;
        let mut out = Vec::new();
        for &huge in &self.opts.huge_pages {
            let mut stair = Vec::new();
            for size in staircase_sizes(4096, self.opts.latency_max_bytes) {
                let rings = on_each(&cpus, size * threads as u64, |i| {
                    Chase::new(size as usize, huge, size ^ (i as u64) << 40)
                })?;
                let loads = runner::calibrate(sample, |n| {
                    std::hint::black_box(rings[0].run(n));
                });
                let loaded = self.loaded(&cpus, loads.div_ceil(16) * 16, tick, |i| {
                    std::hint::black_box(rings[i].run(loads));
                })?;
                // In ns, as measured (the record stores seconds).
                let ns = crate::measure::Summary::of(&loaded.samples_ns);
                let mean = ns.as_ref().map(|s| s.mean);
                let chase = rings[0].params(size, huge, loaded.ops, clock, mean);
                stair.push((size, ns.map_or(f64::NAN, |s| s.median)));
                let params = latency_params(threads, rp::Probe::Chase, Some(chase), None, None);
                out.push(latency_record(loaded.params(params), loaded.samples_ns));
            }
            out.extend(self.levels(&stair, huge, clock, &cpus));
        }
        out.extend(self.probes(&cpus, sample, tick)?);
        Ok(out)
    }

    /// Runs `work(thread)` (`ops` loads each) on every CPU of `cpus` at once for the point's
    /// repetitions, `tick` after each.
    fn loaded(
        &self,
        cpus: &[usize],
        ops: u64,
        tick: &mut dyn FnMut(),
        work: impl Fn(usize) + Sync,
    ) -> Result<Loaded, MemError> {
        let rounds = runner::run_rounds_per_thread(cpus, self.reps, work, |_| {}, |_| tick())
            .map_err(|e| MemError::Pin(e.to_string()))?;
        Ok(Loaded::of(cpus, ops, &rounds))
    }
    /// One record per level found on a staircase, next to sysfs's size for that level, named
    /// by [`levels::name_levels`].
    pub(super) fn levels(
        &self,
        stair: &[(u64, f64)],
        huge: HugePages,
        clock: Option<f64>,
        cpus: &[usize],
    ) -> Vec<ResultRecord> {
        let found = detect_levels(stair);
        let caches: Vec<(u32, u64)> = self
            .sys
            .caches
            .iter()
            .filter(|c| c.kind != "Instruction")
            .map(|c| (c.level, c.size_bytes))
            .collect();
        let kinds = levels::name_levels(&found, &caches);
        found
            .iter()
            .zip(kinds)
            .map(|(l, kind)| {
                let cache = match kind {
                    LevelKind::Cache(level) => Some(level),
                    LevelKind::Memory(_) => None,
                };
                let level = rp::Level {
                    level: kind,
                    pages: huge.pages(),
                    plateau_from_bytes: l.from_bytes,
                    plateau_to_bytes: l.to_bytes,
                    capacity_bytes: cache.map(|_| l.capacity_bytes),
                    sysfs_size_bytes: cache.map(|level| {
                        caches
                            .iter()
                            .find(|c| c.0 == level)
                            .map(|c| c.1)
                    }),
                    latency_cycles: clock.map(|c| l.latency_ns * c),
                };
                // The level's floor: a cache's load-to-use cycles ÷ the clock, memory's the
                // modules' rated latency; a rise past memory is page walks, with no floor.
                let peak = match kind {
                    LevelKind::Cache(level) => crate::sysinfo::peak::cache_latency(
                        level,
                        self.sys.uarch(),
                        clock.ok_or_else(|| "the clock probes did not agree".to_string()),
                    ),
                    LevelKind::Memory(1) => {
                        crate::sysinfo::peak::memory_latency(&self.opts.peak)
                    }
                    LevelKind::Memory(_) => Err("a rise past memory comes from page walks (TLB reach), which have no floor here".into()),
                };
                let mut params =
                    latency_params(cpus.len(), rp::Probe::Level, None, Some(level), None);
                if let Params::MemLatency(p) = &mut params {
                    p.cpus = cpus.to_vec();
                }
                record(
                    MemWorkload::Latency,
                    params,
                    Metric::Latency,
                    Unit::Nanos,
                    vec![l.latency_ns],
                    peak,
                )
            })
            .collect()
    }

    /// Time per operation of independent 1- and 8-byte loads, sequential and random, over a
    /// DRAM-sized span per thread (the largest power of two within its share of one array).
    fn probes(
        &self,
        cpus: &[usize],
        sample: Duration,
        tick: &mut dyn FnMut(),
    ) -> Result<Vec<ResultRecord>, MemError> {
        let threads = cpus.len().max(1);
        let span = probe_span(self.opts, self.sys, threads) as usize;
        let bufs = on_each(cpus, (span * threads) as u64, |_| {
            Buffer::new(span, HugePages::On)
        })?;
        let mut out = Vec::new();
        for probe in Probe::ALL {
            let ops = runner::calibrate(sample, |n| {
                std::hint::black_box(probe.run(&bufs[0], span, n));
            });
            let loaded = self.loaded(cpus, ops, tick, |i| {
                std::hint::black_box(probe.run(&bufs[i], span, ops));
            })?;
            let op = op_probe(&probe, span as u64, ops);
            let params = latency_params(threads, probe.name(), None, None, Some(op));
            out.push(latency_record(loaded.params(params), loaded.samples_ns));
        }
        Ok(out)
    }
}

/// What a per-operation probe runs: its operations of `ops` a thread over `span` bytes.
fn op_probe(probe: &Probe, span: u64, ops: u64) -> rp::OpProbe {
    rp::OpProbe {
        op_bytes: probe.op_bytes as u64,
        order: if probe.random {
            rp::Order::Random
        } else {
            rp::Order::Sequential
        },
        working_set_bytes: span,
        ops,
    }
}

/// A LATENCY point's records before it runs on `threads` threads ([`ResultRecord::planned`]): its staircase (one record for all its steps, whose working sets are known only
/// as it runs) and its per-operation probes with the span they will run over.
pub fn planned(
    opts: &super::MemOptions,
    sys: &crate::sysinfo::SystemInfo,
    threads: usize,
) -> Vec<ResultRecord> {
    let span = probe_span(opts, sys, threads);
    let planned = |params| {
        ResultRecord::planned(
            MemWorkload::Latency,
            params,
            Metric::Latency,
            opts.reps.repeat,
        )
    };
    std::iter::once(latency_params(threads, rp::Probe::Chase, None, None, None))
        .chain(Probe::ALL.iter().map(|probe| {
            let op = op_probe(probe, span, 0);
            latency_params(threads, probe.name(), None, None, Some(op))
        }))
        .map(planned)
        .collect()
}

/// The bytes each thread's per-operation probes run over at `threads` threads: the largest
/// power of two within its share of the array (at least a page).
pub fn probe_span(
    opts: &super::MemOptions,
    sys: &crate::sysinfo::SystemInfo,
    threads: usize,
) -> u64 {
    let share = (array_bytes(opts, sys) / threads.max(1) as u64).max(4096);
    1u64 << (63 - share.leading_zeros())
}

/// The timed rounds of a latency point on one or more threads at once.
struct Loaded {
    /// Per round: the threads' mean time per operation, ns.
    samples_ns: Vec<f64>,
    /// Operations per thread per round.
    ops: u64,
    cpus: Vec<usize>,
    /// Per thread: its mean time per operation over the rounds, ns.
    thread_ns: Vec<f64>,
    /// Operations per second of all threads together, mean over the rounds.
    ops_per_s: f64,
}

impl Loaded {
    fn of(cpus: &[usize], ops: u64, rounds: &runner::Rounds) -> Loaded {
        let per_op = |d: &Duration| d.as_secs_f64().max(1e-12) * 1e9 / ops.max(1) as f64;
        let threads = rounds.threads.len().max(1) as f64;
        let n = rounds.wall.len();
        let samples_ns = (0..n)
            .map(|r| rounds.threads.iter().map(|t| per_op(&t[r])).sum::<f64>() / threads)
            .collect();
        let thread_ns = rounds
            .threads
            .iter()
            .map(|t| t.iter().map(per_op).sum::<f64>() / t.len().max(1) as f64)
            .collect();
        let ops_per_s = (0..n)
            .map(|r| {
                rounds
                    .threads
                    .iter()
                    .map(|t| 1e9 / per_op(&t[r]))
                    .sum::<f64>()
            })
            .sum::<f64>()
            / n.max(1) as f64;
        Loaded {
            samples_ns,
            ops,
            cpus: cpus.to_vec(),
            thread_ns,
            ops_per_s,
        }
    }

    /// `params` with the threads' CPUs, their own latencies and the rate of all of them.
    fn params(&self, mut params: Params) -> Params {
        if let Params::MemLatency(p) = &mut params {
            p.cpus = self.cpus.clone();
            p.thread_latency_ns = self.thread_ns.clone();
            p.ops_per_s = Some(self.ops_per_s);
        }
        params
    }
}
