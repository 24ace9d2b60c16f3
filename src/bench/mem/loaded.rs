//! A LOADED point: the loaded-latency curve (Intel MLC's `--loaded_latency`). One thread chases
//! a DRAM-sized ring ([`ring_bytes`]) while the point's other threads run a mix's kernel over
//! arrays of their own, a burst of [`BURST`] bytes of each array at a time, pausing an injection
//! delay after each burst: from idle (no traffic at all) through long pauses to none (flat
//! out). Each delay gives two records that share their parameters: the chaser's latency per
//! load, and the bandwidth of all the threads over the chaser's rounds (the traffic's bytes as
//! STREAM counts them, plus the chaser's 64-byte lines).

use super::kernels::{self, Kernels};
use super::latency::{Chase, LINE};
use super::records::{latency_params, record};
use super::session::on_each;
use super::{MemError, MemPoint, MemSession, MemWorkload, array_bytes};
use crate::bench::buffer::{Buffer, HugePages};
use crate::results::params::{self as rp, Mix, Params};
use crate::results::{Metric, ResultRecord, Unit};
use crate::runner::{self, affinity};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// The traffic threads' pause after each burst, ns, from idle (`None`: no traffic) to none:
/// doublings from 102.4 µs, where a burst at DRAM speed takes about a fortieth of the pause.
pub const DELAYS_NS: [Option<u64>; 12] = [
    None,
    Some(102_400),
    Some(51_200),
    Some(25_600),
    Some(12_800),
    Some(6_400),
    Some(3_200),
    Some(1_600),
    Some(800),
    Some(400),
    Some(200),
    Some(0),
];

/// Bytes of each array a burst moves: 64 KiB. With 4 KiB bursts the calls and reductions
/// between them cost the traffic 5–13 % of its rate flat out (all reads, one thread on a Zen 4
/// guest: 21.4–24.3 against 24.5–24.9 GB/s for the same kernel over whole arrays; 64 KiB:
/// 25.7–27.0 against 24.6–26.9).
pub const BURST: u64 = 65536;

/// How long the chaser waits for the traffic threads to start before it measures.
const START_PATIENCE: Duration = Duration::from_secs(2);

/// The chaser's ring (LOADED's and NUMA's): `--array-size` (the largest), by default 4 × the
/// last-level cache and at least 64 MiB, on the staircase's memory plateau (a ring of 1 GiB
/// added page walks, TLB misses, to each load: 283 against 163 ns on a Zen 4 guest with huge
/// pages).
pub fn ring_bytes(opts: &super::MemOptions, sys: &crate::sysinfo::SystemInfo) -> u64 {
    array_bytes(opts, sys)
}

/// A counter on a line of its own: one traffic thread's bytes, read by the chaser.
#[repr(align(128))]
#[derive(Default)]
struct Counter(AtomicU64);

/// Spins `n` iterations of a loop the compiler must keep: the injection delay.
#[inline(never)]
fn spin(n: u64) {
    for i in 0..n {
        std::hint::black_box(i);
    }
}

/// Iterations of [`spin`] per ns on the calling thread: the faster of three 1-ms timings.
fn spins_per_ns() -> f64 {
    let n = 1_000_000u64;
    let best = (0..3)
        .map(|_| {
            let t = Instant::now();
            spin(n);
            t.elapsed().as_nanos().max(1) as f64
        })
        .fold(f64::INFINITY, f64::min);
    n as f64 / best
}

/// What one traffic thread runs: its mix's kernel over its arrays.
#[derive(Clone, Copy)]
struct Traffic {
    kernels: Kernels,
    streams: bool,
    mix: Mix,
    /// f64 elements of each array, whole bursts.
    elems: usize,
}

impl Traffic {
    /// One burst at element `off` of each array (reads first, the written array last).
    ///
    /// # Safety
    /// `arrays` holds the mix's arrays of `self.elems` elements each, and `off` + a burst fits.
    unsafe fn burst(&self, arrays: &[Buffer], off: usize) {
        let n = (BURST / 8) as usize;
        let k = &self.kernels;
        let p = |i: usize| (arrays[i].as_ptr() as *mut f64).wrapping_add(off);
        // SAFETY: the caller's contract: each array holds `off + n` elements.
        unsafe {
            match (self.mix.reads, self.mix.writes) {
                (0, _) => (k.fill)(p(0), 2.0, n),
                (1, 0) => {
                    std::hint::black_box((k.read)(p(0), n));
                }
                (1, _) => (k.copy)(p(1), p(0), n),
                (2, _) => (k.add)(p(2), p(0), p(1), n),
                _ => (k.add3)(p(3), p(0), p(1), p(2), n),
            }
        }
    }

    /// Bursts until `stop`, pausing `spins` after each, adding each burst's bytes to `moved`.
    fn run(&self, arrays: &[Buffer], spins: u64, moved: &Counter, stop: &AtomicBool) {
        let n = (BURST / 8) as usize;
        let bytes = BURST * self.mix.arrays();
        let mut done = 0u64;
        let mut off = 0;
        while !stop.load(Ordering::Relaxed) {
            // SAFETY: off + n ≤ elems (whole bursts), within each of the mix's arrays.
            unsafe { self.burst(arrays, off) };
            done += bytes;
            // Only this thread writes its counter: a store, no locked add.
            moved.0.store(done, Ordering::Relaxed);
            spin(spins);
            off += n;
            if off + n > self.elems {
                off = 0;
            }
        }
        if self.streams {
            kernels::fence();
        }
    }
}

/// One delay's timed rounds: per round, the chaser's time and the bytes all threads moved.
struct Rounds {
    times: Vec<Duration>,
    bytes: Vec<u64>,
}

impl MemSession<'_> {
    /// The loaded-latency curve of `point` for each page mode: a point per injection delay.
    pub(super) fn loaded_latency(
        &self,
        point: MemPoint,
        tick: &mut dyn FnMut(),
    ) -> Result<Vec<ResultRecord>, MemError> {
        let mix = point.mix.unwrap_or(Mix::ALL_READS);
        let placement = affinity::place(point.threads, &self.allowed, &self.sys.cpu.logical);
        if placement.oversubscribed {
            return Err(MemError::LoadedOversubscribed(
                point.threads,
                self.allowed.len(),
            ));
        }
        let cpus = placement.cpus;
        let Some((&chaser, traffic_cpus)) = cpus.split_first().filter(|(_, t)| !t.is_empty())
        else {
            return Err(MemError::LoadedNeedsTwo(cpus.len()));
        };
        let budget = crate::sysinfo::ClockBudget::default();
        let clock = runner::on_cpu(chaser, || {
            self.sys.measure_clock(&self.sys.clock_probes(), budget).ghz
        })
        .map_err(|e| MemError::Pin(e.to_string()))?;
        // Each traffic thread's arrays: its share of --array-size, whole bursts.
        let per_thread = (array_bytes(self.opts, self.sys) / traffic_cpus.len() as u64).max(BURST)
            / BURST
            * BURST;
        let in_cache = (self.sys.llc_total_bytes())
            .is_some_and(|llc| mix.arrays() * array_bytes(self.opts, self.sys) <= llc);
        let (kernels, streams) = self.kernels_for(per_thread, in_cache);
        let traffic = Traffic {
            kernels,
            streams: streams && mix.writes > 0,
            mix,
            elems: (per_thread / 8) as usize,
        };
        let arrays = on_each(traffic_cpus, mix.arrays() * per_thread, |_| {
            (0..mix.arrays())
                .map(|k| {
                    let b = Buffer::new(per_thread as usize, HugePages::On)?;
                    // SAFETY: the buffer holds `elems` f64.
                    unsafe {
                        (self.regular.fill)(b.as_ptr() as *mut f64, 1.0 + k as f64, traffic.elems)
                    };
                    Ok(b)
                })
                .collect::<std::io::Result<Vec<Buffer>>>()
        })?;
        let spins_per_ns = runner::on_cpu(traffic_cpus[0], spins_per_ns)
            .map_err(|e| MemError::Pin(e.to_string()))?;
        let mut out = Vec::new();
        for &huge in &self.opts.huge_pages {
            let (ring, loads) = self.dram_ring(chaser, huge, None)?;
            for delay in DELAYS_NS {
                let spins = delay.map(|ns| (ns as f64 * spins_per_ns).round() as u64);
                let on = match spins {
                    Some(_) => traffic_cpus,
                    None => &[],
                };
                let rounds = self.rounds(
                    chaser,
                    on,
                    &arrays,
                    traffic,
                    spins.unwrap_or(0),
                    |n| ring.run(n),
                    loads,
                )?;
                // Every round, warm-up included (the chaser's thread cannot tick).
                (0..self.reps.warmup + self.reps.repeat).for_each(|_| tick());
                let load = rp::Load {
                    injection_delay_ns: delay,
                    mix,
                    burst_bytes: BURST,
                    traffic_cpus: on.to_vec(),
                    isa: self.isa,
                    stores: match (mix.writes, traffic.streams) {
                        (0, _) => rp::StoreKind::None,
                        (_, true) => rp::StoreKind::Nt,
                        (_, false) => rp::StoreKind::Regular,
                    },
                    array_bytes_per_thread: per_thread,
                };
                out.extend(self.loaded_records(
                    point,
                    &rounds,
                    loads,
                    load,
                    (huge, &ring),
                    clock,
                    chaser,
                ));
            }
        }
        Ok(out)
    }

    /// A ring of [`ring_bytes`] built on `chaser` (its memory bound to `node` where given),
    /// and the loads of one sample (`--duration`), whole sixteens.
    pub(super) fn dram_ring(
        &self,
        chaser: usize,
        huge: HugePages,
        node: Option<u32>,
    ) -> Result<(Chase, u64), MemError> {
        let size = ring_bytes(self.opts, self.sys);
        let ring = runner::on_cpu(chaser, || Chase::on_node(size as usize, huge, size, node))
            .map_err(|e| MemError::Pin(e.to_string()))?
            .map_err(|e| MemError::Alloc {
                bytes: size,
                reason: e.to_string(),
            })?;
        let loads = runner::calibrate(self.opts.latency_sample, |n| {
            std::hint::black_box(ring.run(n));
        });
        Ok((ring, loads.div_ceil(16) * 16))
    }

    /// One delay's rounds: the traffic threads started on `traffic` (none: idle), then the
    /// chaser's warm-up and timed rounds of `loads` loads each on `chaser`, then the traffic
    /// stopped (also when the chaser fails).
    #[allow(clippy::too_many_arguments)]
    fn rounds(
        &self,
        chaser: usize,
        traffic: &[usize],
        arrays: &[Vec<Buffer>],
        kind: Traffic,
        spins: u64,
        chase: impl Fn(u64) -> usize + Sync,
        loads: u64,
    ) -> Result<Rounds, MemError> {
        let counters: Vec<Counter> = traffic.iter().map(|_| Counter::default()).collect();
        let stop = AtomicBool::new(false);
        let started = AtomicUsize::new(0);
        let reps = self.reps;
        let moved = || {
            counters
                .iter()
                .map(|c| c.0.load(Ordering::Relaxed))
                .sum::<u64>()
        };
        std::thread::scope(|s| {
            // Stops the traffic however the chaser ends.
            struct Stop<'a>(&'a AtomicBool);
            impl Drop for Stop<'_> {
                fn drop(&mut self) {
                    self.0.store(true, Ordering::Relaxed);
                }
            }
            let _stop = Stop(&stop);
            let workers: Vec<_> = (traffic.iter().zip(arrays).zip(&counters))
                .map(|((&cpu, a), c)| {
                    let (stop, started) = (&stop, &started);
                    s.spawn(move || {
                        let pinned = affinity::pin_current_thread(cpu);
                        started.fetch_add(1, Ordering::Relaxed);
                        pinned.map(|_| kind.run(a, spins, c, stop))
                    })
                })
                .collect();
            let measured = s
                .spawn(|| -> std::io::Result<Rounds> {
                    affinity::pin_current_thread(chaser)?;
                    let since = Instant::now();
                    while started.load(Ordering::Relaxed) < traffic.len()
                        && since.elapsed() < START_PATIENCE
                    {
                        std::thread::yield_now();
                    }
                    let mut rounds = Rounds {
                        times: Vec::new(),
                        bytes: Vec::new(),
                    };
                    for r in 0..reps.warmup + reps.repeat {
                        let (b0, t) = (moved(), Instant::now());
                        std::hint::black_box(chase(loads));
                        let (d, b1) = (t.elapsed(), moved());
                        if r >= reps.warmup {
                            rounds.times.push(d);
                            rounds.bytes.push(b1 - b0 + loads * LINE as u64);
                        }
                    }
                    Ok(rounds)
                })
                .join();
            stop.store(true, Ordering::Relaxed);
            for w in workers {
                match w.join() {
                    Ok(Ok(())) => {}
                    Ok(Err(e)) => return Err(MemError::Pin(e.to_string())),
                    Err(_) => return Err(MemError::Invalid("a traffic thread panicked".into())),
                }
            }
            match measured {
                Ok(r) => r.map_err(|e| MemError::Pin(e.to_string())),
                Err(_) => Err(MemError::Invalid("the chasing thread panicked".into())),
            }
        })
    }

    /// One delay's two records: the chaser's latency per load and all threads' bandwidth.
    #[allow(clippy::too_many_arguments)]
    fn loaded_records(
        &self,
        point: MemPoint,
        rounds: &Rounds,
        loads: u64,
        load: rp::Load,
        (huge, ring): (HugePages, &Chase),
        clock: Option<f64>,
        chaser: usize,
    ) -> Vec<ResultRecord> {
        let ns: Vec<f64> = (rounds.times.iter())
            .map(|t| t.as_secs_f64() * 1e9 / loads.max(1) as f64)
            .collect();
        let gbs: Vec<f64> = (rounds.times.iter().zip(&rounds.bytes))
            .map(|(t, b)| *b as f64 / t.as_secs_f64().max(1e-9) / 1e9)
            .collect();
        let mean = ns.iter().sum::<f64>() / ns.len().max(1) as f64;
        let size = ring_bytes(self.opts, self.sys);
        let chase = ring.params(size, huge, loads, clock, Some(mean));
        let mut params = latency_params(point.threads, rp::Probe::Loaded, Some(chase), None, None);
        if let Params::MemLatency(p) = &mut params {
            p.cpus = vec![chaser];
            p.thread_latency_ns = vec![mean];
            p.ops_per_s = Some(1e9 / mean.max(1e-9));
            p.load = Some(load);
        }
        vec![
            record(
                MemWorkload::Loaded,
                params.clone(),
                Metric::Latency,
                Unit::Nanos,
                ns,
                crate::sysinfo::peak::memory_latency(&self.opts.peak),
            ),
            record(
                MemWorkload::Loaded,
                params,
                Metric::Throughput,
                Unit::GBPerSec,
                gbs,
                self.peak.clone(),
            ),
        ]
    }
}
