//! A point's noise fingerprint: what else the machine did while the point was measured — the
//! hypervisor's steal, other processes' CPU time, the time runnable tasks waited for a CPU
//! (the kernel's pressure stall information), this process's context switches and page
//! faults — from /proc/stat, /proc/pressure/cpu and getrusage over the point's window, and the
//! interference they show, named with the diagnosis's words (`co-runner`, `steal`).
//!
//! Not read: the migrations of the point's threads (their counters, in /proc/self/task, go
//! with the threads, which end with the point; the benchmark threads are pinned) and the run
//! queue's length (an instant's figure, where the pressure covers the whole window).

use crate::units::format_sig;
use serde::{Deserialize, Serialize};
use std::time::Instant;

/// Other processes kept at least this many CPUs busy on average over a CPU or memory point's
/// window: a co-runner (a quarter of a CPU: an idle machine's daemons take a few hundredths;
/// a process that competes for a core or for the memory bus takes more).
pub const CO_RUNNER_CPUS: f64 = 0.25;

/// The hypervisor took at least this many CPUs' worth of the window from the machine's
/// virtual CPUs while they had work (steal): a twentieth of a CPU.
pub const STEAL_CPUS: f64 = 0.05;

/// The fewest /proc/stat ticks (all CPUs together) a window's steal and others' figures are
/// read from: 100 ticks of 10 ms, half a second on 2 CPUs; a shorter window's are null.
pub const MIN_TICKS: f64 = 100.0;

/// What happened beside a point, over its window (from its start to its last record, the
/// reference tools' runs interleaved with its rounds included and their CPU time left out).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Noise {
    pub window_s: f64,
    /// CPUs' worth of time the hypervisor took from the machine's CPUs while they had work
    /// (/proc/stat's steal); null where /proc/stat cannot be read or the window is too short
    /// for its ticks ([`MIN_TICKS`]).
    pub steal_cpus: Option<f64>,
    /// CPUs kept busy by other processes on average: the machine's busy time (user, nice,
    /// system, irq, softirq) less this process's and its waited children's (the reference
    /// tools); null as `steal_cpus` is.
    pub others_cpus: Option<f64>,
    /// CPUs kept busy by this process on average (its threads' CPU time over the window).
    pub own_cpus: f64,
    /// The share of the window in which some runnable task waited for a CPU (the "some" line
    /// of /proc/pressure/cpu); null where the kernel has no pressure stall information.
    pub cpu_pressure: Option<f64>,
    /// This process's context switches per second: waits it chose, and preemptions.
    pub voluntary_switches_per_s: f64,
    pub involuntary_switches_per_s: f64,
    /// Page faults of this process over the window (major: served from a disk).
    pub minor_faults: u64,
    pub major_faults: u64,
    /// The interference these show, by cause (`co-runner`, `steal`); empty where none. Said
    /// in the notes under the tables, and in a low point's diagnosis.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub interference: Vec<String>,
}

/// The counters at one instant.
#[derive(Debug, Clone)]
pub struct NoiseSnapshot {
    at: Instant,
    /// user, nice, system, idle, iowait, irq, softirq, steal (ticks) and the CPUs.
    stat: Option<([u64; 8], u32)>,
    own: Usage,
    children_us: u64,
    pressure_us: Option<u64>,
}

#[derive(Debug, Clone, Copy, Default)]
struct Usage {
    cpu_us: u64,
    voluntary: u64,
    involuntary: u64,
    minor: u64,
    major: u64,
}

/// The counters now.
pub fn snapshot() -> NoiseSnapshot {
    NoiseSnapshot {
        at: Instant::now(),
        stat: std::fs::read_to_string("/proc/stat")
            .ok()
            .and_then(|t| super::cpu_usage::parse_stat(&t)),
        own: usage(libc::RUSAGE_SELF),
        children_us: usage(libc::RUSAGE_CHILDREN).cpu_us,
        pressure_us: std::fs::read_to_string("/proc/pressure/cpu")
            .ok()
            .and_then(|t| parse_pressure(&t)),
    }
}

/// getrusage's figures for `who` (zeros where it fails).
fn usage(who: libc::c_int) -> Usage {
    let Some(u) = super::cpu_usage::getrusage(who) else {
        return Usage::default();
    };
    let us = super::cpu_usage::micros;
    let count = |v: libc::c_long| v.max(0) as u64;
    Usage {
        cpu_us: us(u.ru_utime).saturating_add(us(u.ru_stime)),
        voluntary: count(u.ru_nvcsw),
        involuntary: count(u.ru_nivcsw),
        minor: count(u.ru_minflt),
        major: count(u.ru_majflt),
    }
}

/// The `total=` of the "some" line of /proc/pressure/cpu: µs in which some runnable task
/// waited for a CPU.
pub fn parse_pressure(text: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with("some "))?;
    line.split_ascii_whitespace()
        .find_map(|w| w.strip_prefix("total="))?
        .parse()
        .ok()
}

impl NoiseSnapshot {
    /// What happened between this snapshot and a `later` one; `cpu_bound`: the point competes
    /// for cores or the memory bus (a CPU or memory point), where another process's CPU time is
    /// interference (a disk or network point's own server or tool may be another process).
    pub fn until(&self, later: &NoiseSnapshot, cpu_bound: bool) -> Noise {
        let window_s = later.at.duration_since(self.at).as_secs_f64().max(1e-9);
        let (a, b) = (self.own, later.own);
        let delta = |x: u64, y: u64| y.saturating_sub(x);
        let own_s = delta(a.cpu_us, b.cpu_us) as f64 / 1e6;
        let ours_s = own_s + delta(self.children_us, later.children_us) as f64 / 1e6;
        let (steal_cpus, others_cpus) = match (self.stat, later.stat) {
            (Some((t0, _)), Some((t1, cpus))) => {
                let d: Vec<f64> = (0..8).map(|i| t1[i].saturating_sub(t0[i]) as f64).collect();
                let all = d.iter().sum::<f64>();
                // Ticks are 10 ms (USER_HZ 100) per CPU: fewer than MIN_TICKS in the window
                // tell nothing of it.
                if all >= MIN_TICKS {
                    let cpus = f64::from(cpus);
                    let busy = (d[0] + d[1] + d[2] + d[5] + d[6]) / all * cpus;
                    let steal = d[7] / all * cpus;
                    (Some(steal), Some((busy - ours_s / window_s).max(0.0)))
                } else {
                    (None, None)
                }
            }
            _ => (None, None),
        };
        let cpu_pressure = self
            .pressure_us
            .zip(later.pressure_us)
            .map(|(p0, p1)| (delta(p0, p1) as f64 / 1e6 / window_s).min(1.0));
        let mut interference = Vec::new();
        if cpu_bound && others_cpus.is_some_and(|o| o >= CO_RUNNER_CPUS) {
            interference.push("co-runner".to_string());
        }
        if steal_cpus.is_some_and(|s| s >= STEAL_CPUS) {
            interference.push("steal".to_string());
        }
        Noise {
            window_s,
            steal_cpus,
            others_cpus,
            own_cpus: own_s / window_s,
            cpu_pressure,
            voluntary_switches_per_s: delta(a.voluntary, b.voluntary) as f64 / window_s,
            involuntary_switches_per_s: delta(a.involuntary, b.involuntary) as f64 / window_s,
            minor_faults: delta(a.minor, b.minor),
            major_faults: delta(a.major, b.major),
            interference,
        }
    }
}

impl Noise {
    /// The interference in words, for the findings and the notes ("other processes kept 0.93
    /// CPUs busy"); empty where there is none.
    pub fn words(&self) -> Vec<String> {
        self.interference
            .iter()
            .map(|cause| match cause.as_str() {
                "co-runner" => format!(
                    "co-runner: other processes kept {} CPUs busy while it ran",
                    format_sig(self.others_cpus.unwrap_or(f64::NAN))
                ),
                "steal" => format!(
                    "steal: the hypervisor took {} CPUs' worth of its time",
                    format_sig(self.steal_cpus.unwrap_or(f64::NAN))
                ),
                other => crate::text::printable(other),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pressure_is_read_from_the_some_line() {
        let text = "some avg10=8.86 avg60=7.68 avg300=6.72 total=16281491535\n\
                    full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n";
        assert_eq!(parse_pressure(text), Some(16_281_491_535));
        assert_eq!(parse_pressure("full total=3\n"), None);
        assert_eq!(parse_pressure("some total=x\n"), None);
    }

    /// A window in which the machine's two CPUs were busy 1.5 CPUs' worth, 0.5 of them this
    /// process's: one CPU's worth of others, a co-runner for a CPU point and not for a disk
    /// point; a tenth of a CPU stolen.
    #[test]
    fn others_are_the_busy_time_less_ours() {
        let at = Instant::now();
        let snap = |ticks: [u64; 8], cpu_us: u64, at: Instant| NoiseSnapshot {
            at,
            stat: Some((ticks, 2)),
            own: Usage {
                cpu_us,
                ..Usage::default()
            },
            children_us: 0,
            pressure_us: Some(0),
        };
        // 200 ticks in 1 s on 2 CPUs: 150 busy, 40 idle, 10 steal.
        let a = snap([0; 8], 0, at);
        let b = snap(
            [100, 0, 50, 40, 0, 0, 0, 10],
            500_000,
            at + std::time::Duration::from_secs(1),
        );
        let n = a.until(&b, true);
        assert!((n.others_cpus.unwrap() - 1.0).abs() < 1e-9, "{n:?}");
        assert!((n.steal_cpus.unwrap() - 0.1).abs() < 1e-9, "{n:?}");
        assert_eq!(n.interference, ["co-runner", "steal"]);
        assert_eq!(a.until(&b, false).interference, ["steal"]);
        let busy = format!("kept {} CPUs busy", format_sig(1.0));
        assert!(n.words()[0].contains(&busy), "{:?}", n.words());
    }
}
