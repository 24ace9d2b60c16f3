//! C2C: core-to-core latency, as Intel MLC's `--c2c_latency` and the published core-to-core
//! matrices measure it — one cache line bounced between two pinned threads, for every ordered
//! pair of CPUs. The first thread writes a sequence number into the line and spins until the
//! second has written the next one back: a round trip is two transfers of the line, each a
//! miss that the other core's cache answers. What the two CPUs share (one core, one
//! last-level cache, one socket) comes from sysfs.

use super::records::record;
use super::{MemError, MemSession, MemWorkload};
use crate::results::params::{self as rp, Params};
use crate::results::{Metric, ResultRecord, Unit};
use crate::runner::{self, Repetition};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Where a CPU sits: its socket, its core, and the CPUs its last-level cache serves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    pub cpu: usize,
    pub package: i64,
    pub core: i64,
    /// The lowest CPU sharing its last-level cache (an id for the cache); None if unknown.
    pub llc: Option<usize>,
}

/// What two CPUs share, closest first: one core (SMT siblings), one last-level cache, one
/// socket, or only the system.
pub fn shared(a: &Place, b: &Place) -> &'static str {
    if a.package != b.package {
        "system"
    } else if a.core == b.core {
        "smt"
    } else if a.llc.is_some() && a.llc == b.llc {
        "l3"
    } else {
        "package"
    }
}

/// The place of each of `cpus` from the topology (`sys`) and sysfs's last-level cache lists
/// (`root`: /sys/devices/system/cpu, or a recorded copy).
pub fn places(
    cpus: &[usize],
    logical: &[crate::sysinfo::LogicalCpu],
    root: &std::path::Path,
) -> Vec<Place> {
    cpus.iter()
        .map(|&cpu| {
            let l = logical.iter().find(|l| l.cpu == cpu);
            Place {
                cpu,
                package: l.map_or(0, |l| l.package),
                core: l.map_or(cpu as i64, |l| l.core),
                llc: last_level_sharers(root, cpu),
            }
        })
        .collect()
}

/// The lowest CPU in the list of the highest cache level of `cpu` under `root`.
fn last_level_sharers(root: &std::path::Path, cpu: usize) -> Option<usize> {
    let dir = root.join(format!("cpu{cpu}/cache"));
    let mut best: Option<(u32, usize)> = None;
    for entry in std::fs::read_dir(dir).ok()?.flatten() {
        let read = |f: &str| std::fs::read_to_string(entry.path().join(f)).ok();
        let (Some(level), Some(list)) = (read("level"), read("shared_cpu_list")) else {
            continue;
        };
        let Ok(level) = level.trim().parse::<u32>() else {
            continue;
        };
        // "0-7,64-71": its first number is the lowest CPU.
        let first = list
            .trim()
            .split(|c: char| !c.is_ascii_digit())
            .next()
            .and_then(|n| n.parse().ok());
        if let Some(first) = first
            && best.is_none_or(|(l, _)| level > l)
        {
            best = Some((level, first));
        }
    }
    best.map(|b| b.1)
}

/// The CPUs C2C pairs: `--cpus` (each once, in the order given), else every CPU of `allowed`.
pub fn cpus_of(opts: &super::MemOptions, allowed: &[usize]) -> Vec<usize> {
    let asked = if opts.c2c_cpus.is_empty() {
        allowed
    } else {
        &opts.c2c_cpus[..]
    };
    let mut out: Vec<usize> = Vec::new();
    for &c in asked {
        if !out.contains(&c) {
            out.push(c);
        }
    }
    out
}

/// Every ordered pair of distinct CPUs of `cpus`.
pub fn pairs(cpus: &[usize]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    for &a in cpus {
        for &b in cpus {
            if a != b {
                out.push((a, b));
            }
        }
    }
    out
}

/// The longest one side waits for the other before the point fails (a CPU taken away, a
/// thread that could not start).
const PATIENCE: Duration = Duration::from_secs(2);

/// A cache line of its own for the ping-pong (no neighbour shares it, nor the next line,
/// which the adjacent-line prefetcher would pull along).
#[repr(align(128))]
struct Line(AtomicU64);

/// One side of `trips` round trips on `line`: the first (`ping`) waits for an even number and
/// writes the next odd one, the other waits for an odd one and writes the next even one; the
/// first then waits for the last answer. Each side keeps its own count, so that rounds need no
/// reset. Returns false if the other side stopped answering (`stop` is then set for both).
fn bounce(line: &AtomicU64, trips: u64, ping: bool, stop: &AtomicBool) -> bool {
    let parity = u64::from(!ping);
    for _ in 0..trips {
        let Some(v) = wait(line, parity, stop) else {
            return false;
        };
        line.store(v + 1, Ordering::Release);
    }
    !ping || wait(line, 0, stop).is_some()
}

/// Spins until `line` holds a number of `parity` (0 even, 1 odd) and returns it; None once the
/// other side has waited longer than [`PATIENCE`] or gave up.
fn wait(line: &AtomicU64, parity: u64, stop: &AtomicBool) -> Option<u64> {
    let mut spins = 0u32;
    let mut since: Option<Instant> = None;
    loop {
        let v = line.load(Ordering::Acquire);
        if v & 1 == parity {
            return Some(v);
        }
        std::hint::spin_loop();
        spins = spins.wrapping_add(1);
        if spins.is_multiple_of(1 << 16) {
            if stop.load(Ordering::Relaxed) {
                return None;
            }
            let first = *since.get_or_insert_with(Instant::now);
            if first.elapsed() > PATIENCE {
                stop.store(true, Ordering::Relaxed);
                return None;
            }
        }
    }
}

impl MemSession<'_> {
    /// Every ordered pair's round trip: a record each (ns per round trip), calibrated to the
    /// LATENCY sample time, repeated as every point is.
    pub(super) fn c2c(&self, tick: &mut dyn FnMut()) -> Result<Vec<ResultRecord>, MemError> {
        let cpus = cpus_of(self.opts, &self.allowed);
        let places = places(
            &cpus,
            &self.sys.cpu.logical,
            std::path::Path::new("/sys/devices/system/cpu"),
        );
        let mut out = Vec::new();
        let mut failed = Vec::new();
        for (a, b) in pairs(&cpus) {
            let (pa, pb) = (
                places.iter().find(|p| p.cpu == a),
                places.iter().find(|p| p.cpu == b),
            );
            let shared = match (pa, pb) {
                (Some(pa), Some(pb)) => shared(pa, pb),
                _ => "system",
            };
            // A pair that fails is left out with its reason; the others are measured.
            let measured = self.c2c_calibrate(a, b).and_then(|trips| {
                let times = self.c2c_rounds(a, b, trips, self.reps, tick)?;
                Ok((trips, times))
            });
            let (trips, times) = match measured {
                Ok(m) => m,
                Err(e) => {
                    failed.push(format!("C2C CPU {a} → {b} was not measured: {e}"));
                    continue;
                }
            };
            let ns: Vec<f64> = times
                .iter()
                .map(|t| t.as_secs_f64() * 1e9 / trips as f64)
                .collect();
            let params = Params::MemLatency(rp::LatencyParams {
                threads: 2,
                cpu_quota: None,
                probe: rp::Probe::C2c,
                cpus: vec![a, b],
                thread_latency_ns: Vec::new(),
                ops_per_s: None,
                chase: None,
                level: None,
                op: None,
                pair: Some(rp::CpuPair {
                    from_cpu: a,
                    to_cpu: b,
                    shared: shared.to_string(),
                    round_trips: trips,
                }),
                load: None,
                cell: None,
                node: rp::NodeTag::default(),
            });
            out.push(record(
                MemWorkload::C2c,
                params,
                Metric::Latency,
                Unit::Nanos,
                ns,
                Err("a cache line's transfer between cores has no rated floor".into()),
            ));
        }
        keep_measured(out, failed)
    }

    /// Round trips that take about one LATENCY sample: 1000, timed, scaled. The time is the
    /// first side's own, inside its thread: `runner::calibrate` times from the calling thread,
    /// which here would count starting the two threads of each try.
    fn c2c_calibrate(&self, a: usize, b: usize) -> Result<u64, MemError> {
        let once = Repetition {
            warmup: 1,
            repeat: 1,
        };
        let probe = 1000;
        let t = self.c2c_rounds(a, b, probe, once, &mut || {})?[0];
        let per = t.as_secs_f64().max(1e-9) / probe as f64;
        Ok(((self.opts.latency_sample.as_secs_f64() / per) as u64).clamp(1000, 1 << 32))
    }

    /// `reps` rounds of `trips` round trips between CPUs `a` and `b`: the first side's time
    /// in each timed round.
    fn c2c_rounds(
        &self,
        a: usize,
        b: usize,
        trips: u64,
        reps: Repetition,
        tick: &mut dyn FnMut(),
    ) -> Result<Vec<Duration>, MemError> {
        let line = Line(AtomicU64::new(0));
        let stop = AtomicBool::new(false);
        let answered = AtomicBool::new(true);
        let rounds = runner::run_rounds_per_thread(
            &[a, b],
            reps,
            |i| {
                if !bounce(&line.0, trips, i == 0, &stop) {
                    answered.store(false, Ordering::Relaxed);
                }
            },
            |_| {},
            |_| tick(),
        )
        .map_err(|e| MemError::Pin(e.to_string()))?;
        if !answered.load(Ordering::Relaxed) {
            return Err(MemError::Pin(format!(
                "CPU {b} did not answer CPU {a} within {} s (is it offline, or taken by the host?)",
                PATIENCE.as_secs()
            )));
        }
        Ok(rounds.threads[0].clone())
    }
}

/// The pairs measured, each carrying the reasons of those that failed (the matrix shows them
/// as not measured); an error if none was measured.
fn keep_measured(
    mut out: Vec<ResultRecord>,
    failed: Vec<String>,
) -> Result<Vec<ResultRecord>, MemError> {
    if out.is_empty()
        && let Some(first) = failed.first()
    {
        return Err(MemError::Pin(first.clone()));
    }
    for r in &mut out {
        r.warnings.extend(failed.iter().cloned());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn place(cpu: usize, package: i64, core: i64, llc: Option<usize>) -> Place {
        Place {
            cpu,
            package,
            core,
            llc,
        }
    }

    /// A two-socket machine with SMT and two last-level caches per socket (a recorded EPYC
    /// layout): each pair is named by the closest thing its CPUs share.
    #[test]
    fn pairs_are_named_by_what_they_share() {
        let smt = (place(0, 0, 0, Some(0)), place(64, 0, 0, Some(0)));
        let ccx = (place(0, 0, 0, Some(0)), place(3, 0, 3, Some(0)));
        let other_ccx = (place(0, 0, 0, Some(0)), place(8, 0, 8, Some(8)));
        let socket = (place(0, 0, 0, Some(0)), place(32, 1, 0, Some(32)));
        assert_eq!(shared(&smt.0, &smt.1), "smt");
        assert_eq!(shared(&ccx.0, &ccx.1), "l3");
        assert_eq!(shared(&other_ccx.0, &other_ccx.1), "package");
        // Core ids repeat on each socket: the socket decides first.
        assert_eq!(shared(&socket.0, &socket.1), "system");
        // Without sysfs's cache lists, two cores of one socket share the socket only.
        assert_eq!(
            shared(&place(0, 0, 0, None), &place(1, 0, 1, None)),
            "package"
        );
    }

    /// A failed pair leaves the measured ones standing, each with the reason; with none
    /// measured, the point fails with it.
    #[test]
    fn a_failed_pair_keeps_the_others() {
        let rec = || {
            record(
                MemWorkload::C2c,
                Params::MemLatency(rp::LatencyParams {
                    threads: 2,
                    cpu_quota: None,
                    probe: rp::Probe::C2c,
                    cpus: vec![0, 1],
                    thread_latency_ns: Vec::new(),
                    ops_per_s: None,
                    chase: None,
                    level: None,
                    op: None,
                    pair: None,
                    load: None,
                    cell: None,
                    node: rp::NodeTag::default(),
                }),
                Metric::Latency,
                Unit::Nanos,
                vec![60.0],
                Err("none".into()),
            )
        };
        let why = "C2C CPU 1 → 0 was not measured: no answer".to_string();
        let kept = keep_measured(vec![rec()], vec![why.clone()]).unwrap();
        assert_eq!(kept[0].warnings, std::slice::from_ref(&why));
        assert_eq!(
            keep_measured(vec![rec()], vec![]).unwrap()[0]
                .warnings
                .len(),
            0
        );
        let e = keep_measured(Vec::new(), vec![why.clone()]).unwrap_err();
        assert_eq!(e, MemError::Pin(why));
        assert!(keep_measured(Vec::new(), Vec::new()).unwrap().is_empty());
    }

    #[test]
    fn every_ordered_pair_once() {
        assert_eq!(pairs(&[0, 1]), [(0, 1), (1, 0)]);
        assert_eq!(pairs(&[0, 2, 5]).len(), 6);
        assert!(pairs(&[3]).is_empty());
    }

    /// The last level's sharers are read from a sysfs tree: the highest level's list.
    #[test]
    fn the_last_level_cache_is_read_from_sysfs() {
        let dir = tempfile::tempdir().unwrap();
        for (cpu, l2, l3) in [(0, "0", "0-3"), (5, "5", "4-7")] {
            for (index, level, list) in [("index2", "2", l2), ("index3", "3", l3)] {
                let d = dir.path().join(format!("cpu{cpu}/cache/{index}"));
                std::fs::create_dir_all(&d).unwrap();
                std::fs::write(d.join("level"), level).unwrap();
                std::fs::write(d.join("shared_cpu_list"), list).unwrap();
            }
        }
        let p = places(&[0, 5, 9], &[], dir.path());
        assert_eq!(
            p.iter().map(|p| p.llc).collect::<Vec<_>>(),
            [Some(0), Some(4), None]
        );
    }

    /// Two threads bounce the line the number of times asked, and a side whose partner never
    /// comes gives up after its patience instead of spinning for ever.
    #[test]
    fn the_line_goes_back_and_forth() {
        let line = AtomicU64::new(0);
        let stop = AtomicBool::new(false);
        std::thread::scope(|s| {
            let other = s.spawn(|| bounce(&line, 500, false, &stop));
            assert!(bounce(&line, 500, true, &stop));
            assert!(other.join().unwrap());
        });
        assert_eq!(line.load(Ordering::Relaxed), 1000);
        let started = Instant::now();
        // The first side's first write needs no answer; its wait for the answer does.
        assert!(!bounce(
            &AtomicU64::new(0),
            1,
            true,
            &AtomicBool::new(false)
        ));
        // It gives up after its patience, not before (the upper bound only catches a hang).
        assert!(started.elapsed() >= PATIENCE && started.elapsed() < PATIENCE * 10);
    }
}
