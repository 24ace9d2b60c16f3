//! The diagnosis's checks: a fault imposed on purpose on a point that runs without it, both
//! measured in the same run, and the faulted point's diagnosis judged against the fault: the
//! cause named first must be the fault's, and its share of the gap within ±20 % of the share
//! the fault took (ln(faulted / clean) / ln(faulted): the effect measured with and without
//! it). docs/diagnosis.md lists the faults and what each proves.

use super::checks::{Checks, Group, interrupted, skipped, strings};
use super::hog::Hog;
use crate::results::params::Side;
use crate::results::verify::{Check, Status};
use crate::results::{Metric, ResultRecord, Subsystem, Unit};
use crate::sysinfo::Isa;
use crate::units::{format_bytes_binary, format_sig};
use std::time::Duration;

/// A cause's share may differ from the fault's effect by this much of the effect.
const SHARE_TOLERANCE: f64 = 0.20;

/// A faulted point this much below its clean one at least: a fault with less effect leaves
/// nothing to diagnose (the point stays within the host's noise of the clean one).
const LEAST_EFFECT: f64 = 0.85;

/// LINPACK's small and large orders: 200 is the issue's, and an order whose O(N³) work
/// amortises the O(N²) traffic on any machine that runs the checks at all.
const SMALL_N: usize = 200;
const LARGE_N: usize = 3000;

/// The least large order: five times the small one's, whose work is 125 times as much.
const LEAST_LARGE_N: usize = 1000;

/// How much faster than N = 200 the large order is assumed to run when it is sized.
const LARGE_GAIN: f64 = 5.0;

/// The faults, by the cause each must be diagnosed as, and what is imposed. More threads than
/// CPUs is none of them: a peak counts the cores a point's threads run on, so threads taking
/// turns on them cost the point only their switches (4 DP threads on 2 CPUs read 93.5 % of the
/// peak against 91.9 % at 2 here), and a check of it would judge the host's noise (a CI run
/// read 60.8 % then 84.1 % for the same 2 threads).
const FAULTS: [(&str, &str, Subsystem); 7] = [
    ("co-runner", "a busy process on its CPU", Subsystem::Cpu),
    ("cpu-quota", "a quota of half a CPU", Subsystem::Cpu),
    ("isa", "a narrower ISA (--isa)", Subsystem::Cpu),
    (
        "problem-size",
        "LINPACK N = 200 vs a large N",
        Subsystem::Cpu,
    ),
    (
        "working-set",
        "TRIAD arrays in memory vs in L2",
        Subsystem::Mem,
    ),
    (
        "queue-depth",
        "4 KiB reads at QD 1 vs QD 32",
        Subsystem::Disk,
    ),
    ("window", "a 64 KiB window, 10 ms RTT", Subsystem::Net),
];

/// The queue-depth fault's deep queue, and the size of its file.
const DEEP_QUEUE: u32 = 32;
const DISK_FILE: &str = "256M";

/// The TCP window of the window's fault: a quarter of the bandwidth-delay product of the delay
/// line's 200 Mbit/s and 10 ms round trip (250 KB).
const WINDOW: &str = "64KiB";

/// A fault's check not run yet: its figures are shares of a gap, %.
fn base(cause: &str, imposed: &str, sub: Subsystem) -> Check {
    skipped(
        &format!("diagnose {cause}"),
        Group::Diagnose,
        imposed,
        (sub, Unit::Percent),
        "",
    )
}

/// The diagnosis's checks, one per fault (or its reason for being skipped).
pub(super) fn diagnose(c: &mut Checks) -> anyhow::Result<()> {
    for (cause, imposed, sub) in FAULTS {
        if crate::runner::stop::requested() {
            return Err(crate::error::Interrupted.into());
        }
        let base = base(cause, imposed, sub);
        let check = match cause {
            "co-runner" => co_runner(c, base)?,
            "cpu-quota" => quota(c, base)?,
            "isa" => isa(c, base)?,
            "window" => window(c, base)?,
            "queue-depth" => queue_depth(c, base)?,
            "working-set" => working_set(c, base)?,
            _ => problem_size(c, base)?,
        };
        c.push(check)?;
    }
    Ok(())
}

/// One DP thread's line, with the run's timing (each repetition `least` long at least).
fn one_thread(c: &mut Checks, extra: &[&str], least: Duration) -> Vec<String> {
    let mut line = strings(&["cpu", "--workload", "DP", "--threads", "1"]);
    line.extend(strings(extra));
    line.extend(clock(c));
    line.extend(c.timing_at_least("--duration", least));
    line
}

/// `--clock-ghz` at the run's measured one-thread clock, where it is known: the peak of every
/// CPU point of the checks at one clock. A point's own clock probes, disturbed by the fault
/// or by the host, would otherwise leave its peak unknown now and then (a LINPACK point on a
/// shared host read "the probes disagree by more than 3 %", once in three runs).
fn clock(c: &mut Checks) -> Vec<String> {
    let sys = c.rec.system();
    sys.cpu
        .measured_clock_ghz
        .get()
        .filter(|g| g.is_finite() && **g > 0.0)
        .map_or(Vec::new(), |g| {
            vec!["--clock-ghz".to_string(), format!("{g:.3}")]
        })
}

/// The throughput record of a run's points with an efficiency (a stream's receiver's, what
/// arrived).
fn rated(c: &Checks, points: &[usize]) -> Option<usize> {
    c.find(points, |r| {
        r.metric == Metric::Throughput
            && r.efficiency.is_some_and(|e| e > 0.0)
            && r.params.net().is_none_or(|n| n.side != Some(Side::Sender))
    })
}

/// A measured line: its points, or the check it ends (the benchmark failed).
enum Measured {
    Points(Vec<usize>),
    Ended(Check),
}

fn measure(c: &mut Checks, line: &[String], base: &Check) -> anyhow::Result<Measured> {
    match c.measure(line) {
        Ok(p) => Ok(Measured::Points(p)),
        Err(e) if interrupted(&e) => Err(e),
        Err(e) => Ok(Measured::Ended(super::checks::failed(
            base.clone(),
            line,
            &e,
        ))),
    }
}

/// How a fault is imposed around its point: `on` before it, `off` after (each may fail,
/// saying why: the check is then skipped).
trait Fault {
    fn on(&mut self) -> Result<(), String>;
    fn off(&mut self) -> anyhow::Result<()>;
}

/// A fault of the point's line alone (another ISA, another N): nothing to impose.
struct InTheLine;

impl Fault for InTheLine {
    fn on(&mut self) -> Result<(), String> {
        Ok(())
    }
    fn off(&mut self) -> anyhow::Result<()> {
        Ok(())
    }
}

/// The point's clean line just before and just after its faulted one (a shared host moves a
/// thread's rate from run to run: the clean figure is the mean of both); a check off its mark
/// is measured once more, and the second try is the verdict, saying what the first read.
fn interleaved(
    c: &mut Checks,
    base: Check,
    (clean_line, faulted_line): (&[String], &[String]),
    fault: &mut dyn Fault,
    how: &str,
) -> anyhow::Result<Check> {
    let first = attempt(c, &base, (clean_line, faulted_line), fault, how)?;
    if first.status != Status::Fail || first.measured.is_none() || crate::runner::stop::requested()
    {
        return Ok(first);
    }
    let second = attempt(c, &base, (clean_line, faulted_line), fault, how)?;
    let mut points = first.points.clone();
    points.extend(&second.points);
    Ok(Check {
        reason: format!(
            "{}; measured twice, the first try read {} % of the gap against {} % (the host's rate moved during it)",
            second.reason,
            first.measured.map_or("no".into(), |m| format!("{m:.0}")),
            first.expected.map_or("no".into(), |e| format!("{e:.0}"))
        ),
        points,
        ..second
    })
}

/// One try of [`interleaved`].
fn attempt(
    c: &mut Checks,
    base: &Check,
    (clean_line, faulted_line): (&[String], &[String]),
    fault: &mut dyn Fault,
    how: &str,
) -> anyhow::Result<Check> {
    let before = match measure(c, clean_line, base)? {
        Measured::Points(p) => p,
        Measured::Ended(check) => return Ok(check),
    };
    if let Err(why) = fault.on() {
        return Ok(Check {
            reason: why,
            ..base.clone()
        });
    }
    let faulted = measure(c, faulted_line, base);
    fault.off()?;
    let faulted = match faulted? {
        Measured::Points(p) => p,
        Measured::Ended(check) => return Ok(check),
    };
    let after = match measure(c, clean_line, base)? {
        Measured::Points(p) => p,
        Measured::Ended(check) => return Ok(check),
    };
    let mut clean = before;
    clean.extend(after);
    Ok(judge(
        c,
        base.clone(),
        (clean_line, &clean),
        (faulted_line, &faulted),
        how,
    ))
}

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
fn co_runner(c: &mut Checks, base: Check) -> anyhow::Result<Check> {
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
    let line = one_thread(c, &[], Duration::ZERO);
    interleaved(
        c,
        base,
        (&line, &line),
        &mut Busy { cpu, hog: None },
        &format!(
            "a shell loop of the run's spinning on CPU {cpu}, the point's, while the faulted point ran"
        ),
    )
}

/// The process in a control group of the run's, under a quota, while the point runs.
struct Quota(super::cgroups::Group);

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
fn quota(c: &mut Checks, base: Check) -> anyhow::Result<Check> {
    let group = match super::cpu::quota_group() {
        Ok(g) => g,
        Err(why) => {
            return Ok(Check {
                reason: why,
                ..base
            });
        }
    };
    let (quota, period) = (super::cpu::QUOTA_US, super::cpu::PERIOD_US);
    // Ten periods a repetition at least (see the CPU check).
    let line = one_thread(c, &[], Duration::from_micros(10 * period));
    interleaved(
        c,
        base,
        (&line, &line),
        &mut Quota(group),
        &format!(
            "a control group of the run's allows {quota} µs of CPU time every {period} µs while the faulted point runs"
        ),
    )
}

/// A point on the next narrower instruction set than the widest this CPU has.
fn isa(c: &mut Checks, base: Check) -> anyhow::Result<Check> {
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
    let clean_line = one_thread(c, &["--isa", widest.name()], Duration::ZERO);
    let faulted_line = one_thread(c, &["--isa", narrower.name()], Duration::ZERO);
    interleaved(
        c,
        base,
        (&clean_line, &faulted_line),
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
fn problem_size(c: &mut Checks, base: Check) -> anyhow::Result<Check> {
    let threads = crate::runner::affinity::allowed_cpus().len().max(1);
    let clock = clock(c);
    let line = |c: &Checks, n: usize| {
        let mut l = strings(&[
            "cpu",
            "--workload",
            "LINPACK",
            "--threads",
            &threads.to_string(),
            "--n",
            &n.to_string(),
            "--repeat",
        ]);
        l.push(c.opts.repeat.to_string());
        l.extend(clock.iter().cloned());
        l
    };
    let faulted_line = line(c, SMALL_N);
    let faulted = match measure(c, &faulted_line, &base)? {
        Measured::Points(p) => p,
        Measured::Ended(check) => return Ok(check),
    };
    let Some(gops) = rated(c, &faulted)
        .and_then(|i| c.record(i))
        .map(|r| in_base(r) / 1e9)
        .filter(|g| *g > 0.0)
    else {
        return Ok(no_figure(base, &[&faulted_line], faulted));
    };
    let n = large_n(gops, c.opts.duration);
    let clean_line = line(c, n);
    let clean = match measure(c, &clean_line, &base)? {
        Measured::Points(p) => p,
        Measured::Ended(check) => return Ok(check),
    };
    Ok(judge(
        c,
        base,
        (&clean_line, &clean),
        (&faulted_line, &faulted),
        &format!("LINPACK at N = {SMALL_N} instead of N = {n}"),
    ))
}

/// A record's mean in its unit's base (operations or bytes a second).
fn in_base(r: &ResultRecord) -> f64 {
    crate::units::Conversion::to_base(r.unit).map_or(r.summary.mean, |k| k.apply(r.summary.mean))
}

/// The larger LINPACK's order for a small one's rate of `gops` GOPS: about `duration` of work
/// at [`LARGE_GAIN`] × that rate, from [`LEAST_LARGE_N`] to [`LARGE_N`], a multiple of 100.
fn large_n(gops: f64, duration: Duration) -> usize {
    let ops = duration.as_secs_f64() * gops * 1e9 * LARGE_GAIN;
    let n = (1.5 * ops).cbrt();
    let n = if n.is_finite() { n as usize } else { LARGE_N };
    (n / 100 * 100).clamp(LEAST_LARGE_N, LARGE_N)
}

/// A TCP stream through the delay line (5 ms each way, shaped to 200 Mbit/s) with a window
/// of a quarter of the bandwidth-delay product, against the same stream with the kernel's own
/// (autotuned) window; the point's peak is the shaped rate (`--link-gbps`).
fn window(c: &mut Checks, base: Check) -> anyhow::Result<Check> {
    let skip = base.clone();
    super::net::in_pair(
        c,
        |c, pair, server_ns| {
            let line = match super::net::delay_line(pair, server_ns) {
                Ok(line) => line,
                Err(why) => {
                    return Ok(Check {
                        reason: why,
                        ..base
                    });
                }
            };
            line.set_delay(super::net::DELAY);
            let tuns = super::names::tuns(std::process::id());
            if let Err(why) = pair.limit_rate_of(&tuns, super::net::RATE_BPS) {
                return Ok(Check {
                    reason: format!("cannot shape the delay line: {why}"),
                    ..base
                });
            }
            let gbps = super::net::RATE_BPS as f64 / 1e9;
            let mut clean_line = strings(&[
                "net",
                "--server",
                super::net::TUN_SERVER,
                "--workload",
                "THROUGHPUT",
                "--protocol",
                "tcp",
                "--streams",
                "1",
                "--link-gbps",
                &gbps.to_string(),
            ]);
            clean_line.extend(c.timing("--duration"));
            let mut faulted_line = clean_line.clone();
            faulted_line.extend(strings(&["--window", WINDOW]));
            let check = interleaved(
                c,
                base,
                (&clean_line, &faulted_line),
                &mut InTheLine,
                &format!(
                    "a TCP stream through a delay line of the run's ({} ms each way, tc tbf {} Mbit/s) with --window {WINDOW}, against the kernel's own window",
                    super::net::DELAY.as_millis(),
                    super::net::RATE_BPS / 1_000_000
                ),
            );
            drop(line);
            check
        },
        |_, why| {
            Ok(Check {
                reason: why,
                ..skip
            })
        },
    )
}

/// STREAM's TRIAD on one thread with arrays in memory (four times the last-level cache, 64 MiB
/// at least) against arrays that fit in L2 (three arrays of a quarter of it each). A cache
/// level's rate is in no table: the peak is given (`--mem-peak-gbs`) as the rate the arrays in
/// L2 reached just before, the level's as this run sees it.
fn working_set(c: &mut Checks, base: Check) -> anyhow::Result<Check> {
    let caches = c.rec.system().caches;
    let data = || caches.iter().filter(|x| x.kind != "Instruction");
    let l2 = data().find(|x| x.level == 2).map(|x| x.size_bytes);
    let last = data().map(|x| x.size_bytes).max();
    let (Some(l2), Some(last)) = (l2.filter(|b| *b >= 64 << 10), last) else {
        return Ok(Check {
            reason: "sysfs names no L2 data cache of 64 KiB or more on this machine".into(),
            ..base
        });
    };
    // Whole KiB and MiB, as --array-size is given.
    let small_bytes = (l2 / 4) & !((1 << 10) - 1);
    let large_bytes = (4 * last).max(64 << 20) & !((1 << 20) - 1);
    let (small, large) = (
        format!("{}K", small_bytes >> 10),
        format!("{}M", large_bytes >> 20),
    );
    let line = |c: &Checks, array: &str, gbs: Option<f64>| {
        let mut l = strings(&[
            "mem",
            "--workload",
            "TRIAD",
            "--threads",
            "1",
            "--array-size",
            array,
        ]);
        if let Some(gbs) = gbs {
            l.extend(["--mem-peak-gbs".to_string(), format!("{gbs:.3}")]);
        }
        l.extend(c.timing("--duration"));
        l
    };
    let first = line(c, &small, None);
    let level = match measure(c, &first, &base)? {
        Measured::Points(p) => p,
        Measured::Ended(check) => return Ok(check),
    };
    // GB/s, from the record's unit's base.
    let gbs = c
        .find(&level, |r| r.metric == Metric::Throughput)
        .and_then(|i| c.record(i))
        .map(|r| in_base(r) / 1e9)
        .filter(|v| v.is_finite() && *v >= 0.01);
    let Some(gbs) = gbs else {
        return Ok(no_figure(base, &[&first], level));
    };
    let clean_line = line(c, &small, Some(gbs));
    let faulted_line = line(c, &large, Some(gbs));
    let mut check = interleaved(
        c,
        base,
        (&clean_line, &faulted_line),
        &mut InTheLine,
        &format!(
            "TRIAD on one thread with arrays of {} each instead of {} (L2: {}), the peak given as the {} GB/s the arrays in L2 read just before",
            format_bytes_binary(large_bytes),
            format_bytes_binary(small_bytes),
            format_bytes_binary(l2),
            format_sig(gbs)
        ),
    )?;
    check.points.splice(0..0, level);
    Ok(check)
}

/// Random 4 KiB reads of a file of the run's at queue depth 1 against queue depth 32 (io_uring
/// both, O_DIRECT), on the disk under [`disk_dir`]. A virtio or cloud disk's rated IOPS are
/// nowhere to be read: its peak is given (`--disk-peak-read-iops`, and the MB/s it makes with
/// 4 KiB records) as the rate queue depth 32 reached just before, the device's limit as this
/// run sees it.
fn queue_depth(c: &mut Checks, base: Check) -> anyhow::Result<Check> {
    let dir = disk_dir();
    let dir = dir.to_string_lossy();
    let line = |c: &Checks, qd: u32, iops: Option<f64>| {
        let mut l = strings(&[
            "disk",
            "--dir",
            &dir,
            "--size",
            DISK_FILE,
            "--workload",
            "RR",
            "--block-size",
            "4K",
            "--threads",
            "1",
            "--iodepth",
            &qd.to_string(),
            "--engine",
            "io_uring",
        ]);
        if let Some(iops) = iops {
            l.extend([
                "--disk-peak-read-iops".to_string(),
                format!("{iops:.0}"),
                "--disk-peak-read-mbps".to_string(),
                format!("{:.3}", iops * 4096.0 / 1e6),
            ]);
        }
        l.extend(c.timing("--runtime"));
        l
    };
    let first = line(c, DEEP_QUEUE, None);
    let limit = match measure(c, &first, &base)? {
        Measured::Points(p) => p,
        Measured::Ended(check) => return Ok(check),
    };
    let on_tmpfs = limit
        .iter()
        .filter_map(|i| c.record(*i))
        .filter_map(|r| r.params.disk()?.file_system.clone())
        .any(|fs| matches!(fs.as_str(), "tmpfs" | "ramfs"));
    if on_tmpfs {
        return Ok(Check {
            reason: format!("{dir} is on a tmpfs: no disk to queue I/Os on"),
            points: limit,
            ..base
        });
    }
    let iops = c
        .find(&limit, |r| r.metric == Metric::Iops)
        .and_then(|i| c.record(i))
        .map(|r| r.summary.mean)
        .filter(|v| v.is_finite() && *v > 0.0);
    let Some(iops) = iops else {
        return Ok(no_figure(base, &[&first], limit));
    };
    let clean_line = line(c, DEEP_QUEUE, Some(iops));
    let faulted_line = line(c, 1, Some(iops));
    let mut check = interleaved(
        c,
        base,
        (&clean_line, &faulted_line),
        &mut InTheLine,
        &format!(
            "4 KiB random reads (O_DIRECT, io_uring) of a file of the run's in {dir} at queue depth 1 instead of {DEEP_QUEUE}, the disk's peak given as the {iops:.0} IOPS queue depth {DEEP_QUEUE} read just before"
        ),
    )?;
    check.points.splice(0..0, limit);
    Ok(check)
}

/// The directory of the queue-depth fault's file: /var/tmp, which the FHS keeps on persistent
/// storage (a disk, where /tmp may be a tmpfs), else the system's temporary directory.
fn disk_dir() -> std::path::PathBuf {
    let var = std::path::Path::new("/var/tmp");
    if var.is_dir() {
        var.to_path_buf()
    } else {
        std::env::temp_dir()
    }
}

/// A check whose benchmark gave no figure with an efficiency.
fn no_figure(base: Check, lines: &[&[String]], points: Vec<usize>) -> Check {
    Check {
        status: Status::Fail,
        reason:
            "the point gave no throughput with a known peak (its peak is needed for a diagnosis)"
                .into(),
        commands: lines
            .iter()
            .map(|l| super::checks::command_line(l))
            .collect(),
        points,
        ..base
    }
}

/// The judgement of a fault: the faulted point diagnosed beside its clean one (those two
/// points alone: the run's other checks' points are no part of it), its first cause against
/// the fault's, and that cause's share against the fault's effect.
fn judge(
    c: &mut Checks,
    base: Check,
    (clean_line, clean): (&[String], &[usize]),
    (faulted_line, faulted): (&[String], &[usize]),
    how: &str,
) -> Check {
    let mut points = clean.to_vec();
    points.extend(faulted);
    let commands = vec![
        super::checks::command_line(clean_line),
        super::checks::command_line(faulted_line),
    ];
    // Every clean run's rated record (one per run of the clean line).
    let cleans: Vec<ResultRecord> = clean
        .iter()
        .filter(|i| rated(c, &[**i]).is_some())
        .filter_map(|i| c.record(*i).cloned())
        .collect();
    let at = rated(c, faulted);
    let faulted_rec = at.and_then(|i| c.record(i).cloned());
    let Some(faulted_rec) = faulted_rec.filter(|_| !cleans.is_empty()) else {
        return no_figure(base, &[clean_line, faulted_line], points);
    };
    // The faulted point's other records (a disk point's latency, which Little's law reads).
    let beside: Vec<ResultRecord> = faulted
        .iter()
        .filter(|i| Some(**i) != at)
        .filter_map(|i| c.record(*i).cloned())
        .collect();
    let sys = c.rec.system();
    let verdict = verdict(
        &base.name["diagnose ".len()..],
        &cleans,
        (&faulted_rec, &beside),
        sys,
    );
    Check {
        status: verdict.status,
        reason: format!("{how}; {}", verdict.reason),
        expected: verdict.expected,
        measured: verdict.measured,
        tolerance: verdict.expected.map(|e| SHARE_TOLERANCE * e),
        tolerance_text: if verdict.expected.is_some() {
            format!("±{:.0} % of the effect", SHARE_TOLERANCE * 100.0)
        } else {
            String::new()
        },
        commands,
        points,
        ..base
    }
}

/// What a fault's check found: the effect's share of the gap (%), the cause's share (%), the
/// status and why.
#[derive(Debug)]
struct Verdict {
    expected: Option<f64>,
    measured: Option<f64>,
    status: Status,
    reason: String,
}

/// The verdict on the point `faulted` against `clean` (the same point without the fault, each
/// run of it: their mean efficiency is the clean one) for the fault whose cause is `cause`, on
/// the machine `sys`; `beside`: the faulted point's other records (its latency), diagnosed
/// with it.
fn verdict(
    cause: &str,
    clean: &[ResultRecord],
    (faulted, beside): (&ResultRecord, &[ResultRecord]),
    sys: crate::sysinfo::SystemInfo,
) -> Verdict {
    let efficiencies: Vec<f64> = clean.iter().filter_map(|r| r.efficiency).collect();
    let ec = if efficiencies.is_empty() {
        f64::NAN
    } else {
        efficiencies.iter().sum::<f64>() / efficiencies.len() as f64
    };
    let ef = faulted.efficiency.unwrap_or(f64::NAN);
    let pct = |e: f64| format!("{:.1} %", 100.0 * e);
    let figures = match efficiencies.as_slice() {
        [a, b] => format!(
            "clean {} of its peak (mean of {} before and {} after), faulted {}",
            pct(ec),
            pct(*a),
            pct(*b),
            pct(ef)
        ),
        _ => format!("clean {} of its peak, faulted {}", pct(ec), pct(ef)),
    };
    if !(ef > 0.0 && ec > 0.0) || ef >= ec * LEAST_EFFECT {
        return Verdict {
            expected: None,
            measured: None,
            status: Status::Skip,
            reason: format!(
                "{figures}: the fault cost this machine less than {:.0} % (nothing to diagnose)",
                100.0 * (1.0 - LEAST_EFFECT)
            ),
        };
    }
    // The share of the faulted point's gap that the fault took.
    let effect = if ef < 1.0 {
        ((ef / ec).ln() / ef.ln()).clamp(0.0, 1.0)
    } else {
        0.0
    };
    let mut report = crate::results::Report::new(sys, Vec::new());
    report.results = clean.to_vec();
    report.results.extend(beside.iter().cloned());
    report.results.push(faulted.clone());
    let diagnosis = crate::report::diagnosis::of_report(&report).pop().flatten();
    let Some(d) = diagnosis else {
        return Verdict {
            expected: Some(100.0 * effect),
            measured: None,
            status: Status::Fail,
            reason: format!("{figures}: the faulted point got no diagnosis"),
        };
    };
    let named: Vec<String> = d
        .causes
        .iter()
        .map(|x| match x.share {
            Some(s) => format!("{} {:.0} %", x.cause, 100.0 * s),
            None => x.cause.clone(),
        })
        .collect();
    let first = d.causes.first().map(|x| x.cause.as_str());
    let share = d
        .causes
        .iter()
        .find(|x| x.cause == cause)
        .and_then(|x| x.share);
    let status = match (first == Some(cause), share) {
        (true, Some(s)) => {
            Check::judged(100.0 * effect, 100.0 * s, SHARE_TOLERANCE * 100.0 * effect)
        }
        _ => Status::Fail,
    };
    Verdict {
        expected: Some(100.0 * effect),
        measured: share.map(|s| 100.0 * s),
        status,
        reason: format!(
            "{figures}; expected: `{cause}` named first with the fault's share of the faulted point's gap, ln(faulted / clean) / ln(faulted); diagnosed: {} ({:.0} % unexplained)",
            if named.is_empty() {
                "no cause".to_string()
            } else {
                named.join(", ")
            },
            100.0 * d.unexplained
        ),
    }
}

#[cfg(test)]
mod tests;
