//! The diagnosis's faults of the processor: a busy process beside the point, a CPU quota,
//! more threads than CPUs (on a memory latency), a narrower ISA, LINPACK too small.

use super::*;
use crate::sysinfo::Isa;
use crate::verify::hog::Hog;
use crate::workload::{Workload, linalg::LinalgWorkload, mem::MemWorkload};

/// LINPACK's small and large orders: 200 is the issue's, and an order whose O(N³) work
/// amortises the O(N²) traffic on any machine that runs the checks at all (on 2 threads of a
/// Zen 5 guest LINPACK reached 62 % of its peak at N = 3000, 67 % at 4000, 73 % at 6000,
/// 74–77 % at 8000: the larger order, the less of the small one's gap is left unexplained).
const SMALL_N: usize = 200;
pub(super) const LARGE_N: usize = 6000;

/// The least large order: five times the small one's, whose work is 125 times as much.
pub(super) const LEAST_LARGE_N: usize = 1000;

/// How much faster than N = 200 the large order is assumed to run when it is sized (measured
/// on a Zen 5 guest: 19 GOPS at N = 200 and 160–195 from N = 4000 on, on 2 threads).
const LARGE_GAIN: f64 = 8.0;

/// A busy process of the run's on the point's CPU while it runs.
struct Busy {
    cpu: usize,
    hog: Option<Hog>,
}

impl Fault for Busy {
    fn on(&mut self) -> Result<(), String> {
        self.hog = Some(
            Hog::start(self.cpu).map_err(|why| format!("cannot start a busy process: {why}"))?,
        );
        Ok(())
    }
    fn off(&mut self) -> anyhow::Result<()> {
        self.hog = None;
        Ok(())
    }
}

/// A point busy beside a process of this run's that spins on its CPU.
pub(super) fn co_runner(c: &mut Checks, base: Check) -> anyhow::Result<Check> {
    let sys = c.rec.system();
    let placed = crate::runner::affinity::place(
        1,
        &crate::runner::affinity::allowed_cpus(),
        &sys.cpu.logical,
    );
    let Some(&cpu) = placed.cpus.first() else {
        return Ok(Check {
            reason: "this process may use no CPU it can name".into(),
            ..base
        });
    };
    let bench = one_thread(c, &[], Duration::ZERO);
    interleaved(
        c,
        base,
        (&bench, &bench),
        &mut Busy { cpu, hog: None },
        &format!(
            "a shell loop of the run's spinning on CPU {cpu}, the point's, while the faulted point ran"
        ),
    )
}

/// The process in a control group of the run's, under a quota, while the point runs.
struct Quota(crate::verify::cgroups::Group);

impl Fault for Quota {
    fn on(&mut self) -> Result<(), String> {
        self.0
            .join()
            .map_err(|why| format!("cannot impose the quota: {why}"))
    }
    fn off(&mut self) -> anyhow::Result<()> {
        self.0.leave().map_err(|e| anyhow::anyhow!(e))
    }
}

/// A point under a CPU quota of half a CPU (a control group of the run's).
pub(super) fn quota(c: &mut Checks, base: Check) -> anyhow::Result<Check> {
    let group = match crate::verify::cpu::quota_group() {
        Ok(g) => g,
        Err(why) => {
            return Ok(Check {
                reason: why,
                ..base
            });
        }
    };
    let (quota, period) = (crate::verify::cpu::QUOTA_US, crate::verify::cpu::PERIOD_US);
    // Ten periods a repetition at least (see the CPU check).
    let bench = one_thread(c, &[], Duration::from_micros(10 * period));
    interleaved(
        c,
        base,
        (&bench, &bench),
        &mut Quota(group),
        &format!(
            "a control group of the run's allows {quota} µs of CPU time every {period} µs while the faulted point runs"
        ),
    )
}

/// This thread (and the benchmark it runs, which reads the CPUs it may use from it) narrowed
/// to one CPU while the point runs, and given back its own after.
struct Narrowed {
    cpu: usize,
    saved: Vec<usize>,
}

impl Fault for Narrowed {
    fn on(&mut self) -> Result<(), String> {
        self.saved = crate::runner::affinity::allowed_cpus();
        crate::runner::affinity::restrict_current_thread(&[self.cpu])
            .map_err(|e| format!("cannot narrow this thread to CPU {}: {e}", self.cpu))
    }
    fn off(&mut self) -> anyhow::Result<()> {
        crate::runner::affinity::restrict_current_thread(&self.saved)
            .map_err(|e| anyhow::anyhow!("cannot give this thread its CPUs back: {e}"))
    }
}

/// Two threads each chasing pointers in L1 and L2 (a LATENCY staircase to 128 KiB, huge pages)
/// on two CPUs, against the same two threads taking turns on one (the run's thread narrowed to
/// it, where the benchmark reads the CPUs it may use): each load's time then counts the other
/// thread's turns.
pub(super) fn oversubscription(c: &mut Checks, base: Check) -> anyhow::Result<Check> {
    let allowed = crate::runner::affinity::allowed_cpus();
    let [first, _, ..] = allowed[..] else {
        return Ok(Check {
            reason: "this process may use one CPU: no two threads of a point have one each".into(),
            ..base
        });
    };
    let bench = Benchmark::new(Subsystem::Mem).with_all([
        Setting::Workload(Workload::Mem(MemWorkload::Latency)),
        Setting::Count("threads", 2),
        Setting::Bytes("latency-max", 128 << 10),
        Setting::HugePages(true),
        Setting::Repeat(c.opts.repeat),
    ]);
    interleaved(
        c,
        base,
        (&bench, &bench),
        &mut Narrowed {
            cpu: first,
            saved: Vec::new(),
        },
        &format!(
            "the run's thread narrowed to CPU {first} while the faulted point ran: its 2 threads took turns on it"
        ),
    )
}

/// A point on the next narrower instruction set than the widest this CPU has.
pub(super) fn isa(c: &mut Checks, base: Check) -> anyhow::Result<Check> {
    let sys = c.rec.system();
    let mut isas: Vec<Isa> = sys.cpu.isas.clone();
    isas.sort_by_key(|i| std::cmp::Reverse(i.width_bits()));
    let (Some(widest), Some(narrower)) = (
        isas.first().copied(),
        isas.iter()
            .copied()
            .find(|i| i.width_bits() < isas[0].width_bits()),
    ) else {
        return Ok(Check {
            reason: "this CPU has one instruction set's width only".into(),
            ..base
        });
    };
    let clean_bench = one_thread(c, &[Setting::Isa(widest)], Duration::ZERO);
    let faulted_bench = one_thread(c, &[Setting::Isa(narrower)], Duration::ZERO);
    interleaved(
        c,
        base,
        (&clean_bench, &faulted_bench),
        &mut InTheLine,
        &format!(
            "the same kernel on {} ({} bits) instead of {} ({} bits)",
            narrower.name(),
            narrower.width_bits(),
            widest.name(),
            widest.width_bits()
        ),
    )
}

/// LINPACK at a small order beside a large one, on every CPU: the small one first, then the
/// largest order (from [`LEAST_LARGE_N`] to [`LARGE_N`]) whose 2/3·N³ operations take about
/// `--duration` at [`LARGE_GAIN`] × the small one's rate (a build without optimisations runs
/// LINPACK some 40 times slower, and its checks stay short).
pub(super) fn problem_size(c: &mut Checks, base: Check) -> anyhow::Result<Check> {
    let threads = crate::runner::affinity::allowed_cpus().len().max(1);
    let clock = clock(c);
    let bench = |c: &Checks, n: usize| {
        Benchmark::new(Subsystem::Cpu)
            .with_all([
                Setting::Workload(Workload::Linalg(LinalgWorkload::Linpack)),
                Setting::Count("threads", threads),
                Setting::Count("n", n),
                Setting::Repeat(c.opts.repeat),
            ])
            .with_all(clock.clone())
    };
    let faulted_bench = bench(c, SMALL_N);
    let faulted = match measure(c, &faulted_bench, &base)? {
        Measured::Points(p) => p,
        Measured::Ended(check) => return Ok(check),
    };
    let Some(gops) = rated(c, &faulted)
        .and_then(|i| c.record(i))
        .map(|r| in_base(r) / 1e9)
        .filter(|g| *g > 0.0)
    else {
        return Ok(no_figure(base, &[&faulted_bench], faulted));
    };
    let n = large_n(gops, c.opts.duration);
    let clean_bench = bench(c, n);
    let clean = match measure(c, &clean_bench, &base)? {
        Measured::Points(p) => p,
        Measured::Ended(check) => return Ok(check),
    };
    Ok(judge(
        c,
        base,
        (&clean_bench, &[&clean]),
        (&faulted_bench, &faulted),
        &format!("LINPACK at N = {SMALL_N} instead of N = {n}"),
    ))
}

/// The larger LINPACK's order for a small one's rate of `gops` GOPS: about `duration` of work
/// at [`LARGE_GAIN`] × that rate, from [`LEAST_LARGE_N`] to [`LARGE_N`], a multiple of 100.
pub(super) fn large_n(gops: f64, duration: Duration) -> usize {
    let ops = duration.as_secs_f64() * gops * 1e9 * LARGE_GAIN;
    let n = (1.5 * ops).cbrt();
    let n = if n.is_finite() { n as usize } else { LARGE_N };
    (n / 100 * 100).clamp(LEAST_LARGE_N, LARGE_N)
}
