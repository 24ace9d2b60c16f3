//! What a disk or network point saturated below its peak: the device (or the link), where more
//! I/Os in flight or more streams in the same run gained nothing (`device-limit`); or the CPUs,
//! where they were all busy while it ran, or a disk point's threads each kept a CPU busy
//! (`cpu-bound`).

use super::{FLAT, Found};
use crate::results::{Metric, ResultRecord, Subsystem};

/// What tells points of one kind apart by what they keep in flight: threads and queue depth
/// (and the engine a depth above one takes), streams.
pub(super) const IN_FLIGHT: &[&str] = &["threads", "iodepth", "engine", "streams", "side"];

/// A CPU this busy or more (its share of a second) is saturated.
const BUSY: f64 = 0.95;

/// The I/Os (threads × queue depth) or streams a disk or network point keeps in flight.
pub(super) fn in_flight(r: &ResultRecord) -> Option<usize> {
    match (r.params.disk(), r.params.net()) {
        (Some(d), _) => d.threads.checked_mul(d.iodepth),
        (_, Some(n)) => Some(n.streams as usize),
        _ => None,
    }
}

/// `device-limit`: the points of `r`'s kind, `kind` (its metric, its point but for what it
/// keeps in flight: each one's in flight and efficiency, `r` among them), with more in flight,
/// where there is one, and none of them reached a tenth
/// more than `r`'s efficiency `e`; or, where none has more, one with fewer that already reached
/// within a tenth of `e`: the device's (or the link's) own rate at this block size and pattern,
/// below the peak. Its ceiling is the best of them and `r`.
pub(super) fn device_limit(r: &ResultRecord, e: f64, kind: &[(usize, f64)]) -> Option<Found> {
    if !matches!(r.subsystem, Subsystem::Disk | Subsystem::Net) || r.metric == Metric::Latency {
        return None;
    }
    let mine = in_flight(r)?;
    let others: Vec<(usize, f64)> = kind.iter().copied().filter(|(n, _)| *n != mine).collect();
    let device = if r.subsystem == Subsystem::Disk {
        "device"
    } else {
        "link"
    };
    let count = |n: usize| match (r.subsystem, n) {
        (Subsystem::Disk, 1) => "1 I/O in flight".to_string(),
        (Subsystem::Disk, n) => format!("{n} I/Os in flight"),
        (_, 1) => "1 stream".to_string(),
        (_, n) => format!("{n} streams"),
    };
    let deeper = others.iter().filter(|(n, _)| *n > mine);
    let (text, best, n) = match deeper.clone().map(|(n, _)| *n).max() {
        Some(most) => {
            let best = deeper.map(|(_, xe)| *xe).fold(0.0, f64::max);
            if best > e * FLAT {
                return None;
            }
            (
                format!(
                    "{} reached no more ({:.1} % at most)",
                    count(most),
                    best * 100.0
                ),
                best,
                most,
            )
        }
        None => {
            let (fewest, at) = (others.iter())
                .filter(|(n, xe)| *n < mine && *xe * FLAT >= e)
                .min_by_key(|(n, _)| *n)?;
            (
                format!("{} already reached {:.1} %", count(*fewest), at * 100.0),
                *at,
                *fewest,
            )
        }
    };
    Some(Found {
        cause: "device-limit",
        ceiling: Some(best.max(e).min(1.0)),
        text: format!("{text}: the {device}'s own rate at this point, below its peak"),
        cites: vec![n as f64, best * 100.0],
    })
}

/// `cpu-bound`: every CPU of the machine busy while `r` ran (user, system and interrupt time
/// over the CPUs /proc/stat lists), or a disk point whose threads each kept a CPU busy: the
/// CPUs, not the device or the link, set its rate. Not measured (no run shows the point with
/// more CPU).
pub(super) fn cpu_bound(r: &ResultRecord) -> Option<Found> {
    let u = r.params.cpu_use()?;
    let online = f64::from(u.online_cpus);
    let busy = [u.user_cpus, u.system_cpus, u.irq_cpus, u.softirq_cpus]
        .into_iter()
        .sum::<Option<f64>>()
        .filter(|b| b.is_finite());
    let own = u.process_user_cpus + u.process_system_cpus;
    let threads = r.params.threads() as f64;
    let (text, cites) = if let Some(b) = busy.filter(|b| online > 0.0 && *b >= BUSY * online) {
        (
            format!(
                "every CPU was busy while it ran ({b:.2} of {} CPUs, user, system and interrupts): the CPUs, not the {}, set its rate",
                u.online_cpus,
                if r.subsystem == Subsystem::Disk {
                    "device"
                } else {
                    "link"
                }
            ),
            vec![b, online],
        )
    } else if r.subsystem == Subsystem::Disk && threads > 0.0 && own >= BUSY * threads {
        (
            format!(
                "{} kept {own:.2} CPUs busy: the CPU, not the device, set its rate",
                crate::results::its_threads(r.params.threads()),
            ),
            vec![own],
        )
    } else {
        return None;
    };
    Some(Found {
        cause: "cpu-bound",
        ceiling: None,
        text,
        cites,
    })
}

#[cfg(test)]
mod tests {
    use crate::results::params::Params;
    use crate::results::{Metric, Report, ResultRecord, Subsystem, Unit, Workload};
    use crate::sysinfo::peak::Peak;
    use serde_json::{Value, json};

    fn rec(sub: Subsystem, workload: &str, params: Value, unit: Unit, mean: f64) -> ResultRecord {
        let w = Workload::named(sub, workload).unwrap();
        let params = Params::with_defaults(w, params).unwrap();
        let peak = Peak {
            value: if unit == Unit::Iops {
                100_000.0
            } else {
                10_000.0
            },
            unit,
            formula: "test".into(),
            inputs: Default::default(),
        };
        ResultRecord::new(
            w,
            params,
            Metric::Throughput,
            unit,
            vec![mean, mean],
            Ok(peak),
        )
    }

    /// Each record's cause of that name, in words.
    fn named(recs: Vec<ResultRecord>, cause: &str) -> Vec<Option<String>> {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/history");
        let mut report =
            Report::from_json(&std::fs::read(dir.join("quick.json")).unwrap()).unwrap();
        report.results = recs;
        super::super::of_report(&report)
            .into_iter()
            .map(|d| {
                let c = d?.causes.into_iter().find(|c| c.cause == cause)?;
                Some(c.text)
            })
            .collect()
    }

    fn random_reads(threads: usize, iodepth: usize, iops: f64) -> ResultRecord {
        rec(
            Subsystem::Disk,
            "RR",
            json!({"threads": threads, "block_size_bytes": 4096, "pattern": "random",
                   "read_percent": 100, "io_mode": "direct", "iodepth": iodepth,
                   "engine": if iodepth > 1 { "io_uring" } else { "psync" }}),
            Unit::Iops,
            iops,
        )
    }

    /// 4 KiB random reads at 20 % of the peak: where 32 in flight read no more, the device's
    /// own limit; where they read four times as much, not.
    #[test]
    fn more_in_flight_that_gains_nothing_is_the_devices_limit() {
        let flat = named(
            vec![random_reads(1, 1, 20_000.0), random_reads(1, 32, 21_000.0)],
            "device-limit",
        );
        assert_eq!(
            flat[0].as_deref(),
            Some(
                "32 I/Os in flight reached no more (21.0 % at most): the device's own rate at this point, below its peak"
            )
        );
        // The deepest: the shallower one had already reached within a tenth of it.
        assert_eq!(
            flat[1].as_deref(),
            Some(
                "1 I/O in flight already reached 20.0 %: the device's own rate at this point, below its peak"
            )
        );
        let deeper = named(
            vec![random_reads(1, 1, 20_000.0), random_reads(1, 32, 80_000.0)],
            "device-limit",
        );
        assert_eq!(deeper, vec![None, None]);
    }

    /// A TCP stream while both CPUs were busy, a disk thread that kept its CPU busy: `cpu-bound`;
    /// a disk thread at a tenth of a CPU: not.
    #[test]
    fn busy_cpus_are_named_cpu_bound() {
        let cpu = |own: f64, machine: f64| {
            json!({"window_s": 1.0, "process_user_cpus": own / 2.0,
                   "process_system_cpus": own / 2.0, "user_cpus": machine / 2.0,
                   "system_cpus": machine / 2.0, "irq_cpus": 0.0, "softirq_cpus": 0.0,
                   "online_cpus": 2})
        };
        let stream = rec(
            Subsystem::Net,
            "THROUGHPUT",
            json!({"protocol": "TCP", "side": "receiver", "streams": 1, "cpu": cpu(1.9, 1.98)}),
            Unit::MbitPerSec,
            5000.0,
        );
        let mut disk = random_reads(1, 1, 20_000.0);
        let mut idle = random_reads(1, 1, 20_000.0);
        if let (Params::Disk(d), Params::Disk(i)) = (&mut disk.params, &mut idle.params) {
            d.cpu = serde_json::from_value(cpu(0.99, 1.0)).unwrap();
            i.cpu = serde_json::from_value(cpu(0.1, 0.2)).unwrap();
        }
        let net = named(vec![stream], "cpu-bound");
        assert_eq!(
            net[0].as_deref(),
            Some(
                "every CPU was busy while it ran (1.98 of 2 CPUs, user, system and interrupts): the CPUs, not the link, set its rate"
            )
        );
        let disk = named(vec![disk], "cpu-bound");
        assert_eq!(
            disk[0].as_deref(),
            Some("its thread kept 0.99 CPUs busy: the CPU, not the device, set its rate")
        );
        assert_eq!(named(vec![idle], "cpu-bound"), vec![None]);
    }
}
