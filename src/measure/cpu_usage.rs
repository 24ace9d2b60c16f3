//! What a figure costs in CPU: the machine's busy time per kind over a window, from
//! `/proc/stat` (user, system, irq, softirq: the receive path of a network stream is softirq),
//! and this process's own, from `getrusage` — netperf's CPU utilisation and service demand,
//! fio's usr/sys per job.

use serde::{Deserialize, Serialize};
use std::time::Instant;

/// What a point cost in CPU over its repetitions (the mean of their windows): the machine's
/// busy CPUs per kind from /proc/stat (1.0 is one CPU kept busy; null where it cannot be
/// read) and this process's own from getrusage.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CpuUse {
    /// Seconds the figures cover, all repetitions together (each from the start of its
    /// transfer to its end).
    pub window_s: f64,
    pub process_user_cpus: f64,
    pub process_system_cpus: f64,
    /// user + nice.
    pub user_cpus: Option<f64>,
    pub system_cpus: Option<f64>,
    pub irq_cpus: Option<f64>,
    pub softirq_cpus: Option<f64>,
    /// The CPUs /proc/stat lists, over which the busy figures are summed.
    pub online_cpus: u32,
    /// Network throughput: µs of the machine's busy CPU time per KB (1024 bytes) of goodput,
    /// netperf's service demand.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_demand_us_per_kb: Option<f64>,
}

/// The counters at one instant.
#[derive(Debug, Clone)]
pub struct CpuSnapshot {
    at: Instant,
    /// The `cpu` line of /proc/stat: user, nice, system, idle, iowait, irq, softirq, steal (in
    /// clock ticks); None where it cannot be read.
    ticks: Option<[u64; 8]>,
    /// `cpuN` lines: the CPUs the ticks are summed over.
    cpus: u32,
    /// This process's user and system time, µs.
    user_us: u64,
    system_us: u64,
}

/// The counters now.
pub fn snapshot() -> CpuSnapshot {
    let (ticks, cpus) = std::fs::read_to_string("/proc/stat")
        .ok()
        .and_then(|t| parse_stat(&t))
        .map_or((None, 0), |(t, n)| (Some(t), n));
    let (user_us, system_us) = rusage();
    CpuSnapshot {
        at: Instant::now(),
        ticks,
        cpus,
        user_us,
        system_us,
    }
}

/// This process's (user, system) CPU time in µs, all its threads (0 where getrusage fails).
fn rusage() -> (u64, u64) {
    getrusage(libc::RUSAGE_SELF).map_or((0, 0), |u| (micros(u.ru_utime), micros(u.ru_stime)))
}

/// getrusage's figures for `who` (RUSAGE_SELF, RUSAGE_CHILDREN); None where it fails.
pub(super) fn getrusage(who: libc::c_int) -> Option<libc::rusage> {
    // SAFETY: getrusage writes one rusage into the zeroed value it is given.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `who` is one of getrusage's targets and the pointer is to a rusage.
    (unsafe { libc::getrusage(who, &mut u) } == 0).then_some(u)
}

/// A timeval in µs (a negative part counts as 0).
pub(super) fn micros(t: libc::timeval) -> u64 {
    (t.tv_sec.max(0) as u64) * 1_000_000 + t.tv_usec.max(0) as u64
}

/// The `cpu` line's first eight counters and the number of `cpuN` lines; None without a `cpu`
/// line of eight numbers.
pub fn parse_stat(text: &str) -> Option<([u64; 8], u32)> {
    let mut total = None;
    let mut cpus = 0u32;
    for line in text.lines().take(100_000) {
        let mut words = line.split_ascii_whitespace();
        match words.next() {
            Some("cpu") => {
                let mut t = [0u64; 8];
                for slot in &mut t {
                    *slot = words.next()?.parse().ok()?;
                }
                total = Some(t);
            }
            Some(w) if w.starts_with("cpu") && w[3..].parse::<u32>().is_ok() => {
                cpus = cpus.saturating_add(1)
            }
            _ => {}
        }
    }
    Some((total?, cpus.max(1)))
}

impl CpuSnapshot {
    /// The CPU use between this snapshot and a `later` one.
    pub fn until(&self, later: &CpuSnapshot) -> CpuUse {
        let window_s = later.at.duration_since(self.at).as_secs_f64().max(1e-9);
        let per_s = |a: u64, b: u64| b.saturating_sub(a) as f64 / 1e6 / window_s;
        // Each kind's share of all ticks, times the CPUs: CPUs kept busy by it.
        let kinds = self.ticks.zip(later.ticks).map(|(a, b)| {
            let d: Vec<f64> = (0..8).map(|i| b[i].saturating_sub(a[i]) as f64).collect();
            let all = d.iter().sum::<f64>().max(1.0);
            let cpus = later.cpus as f64;
            let of = |x: f64| x / all * cpus;
            (of(d[0] + d[1]), of(d[2]), of(d[5]), of(d[6]))
        });
        CpuUse {
            window_s,
            process_user_cpus: per_s(self.user_us, later.user_us),
            process_system_cpus: per_s(self.system_us, later.system_us),
            user_cpus: kinds.map(|k| k.0),
            system_cpus: kinds.map(|k| k.1),
            irq_cpus: kinds.map(|k| k.2),
            softirq_cpus: kinds.map(|k| k.3),
            online_cpus: later.cpus,
            service_demand_us_per_kb: None,
        }
    }
}

impl CpuUse {
    /// The mean of several windows' figures (a point's repetitions); None for none.
    pub fn mean(all: &[CpuUse]) -> Option<CpuUse> {
        let n = all.len();
        let first = all.first()?;
        let avg = |f: fn(&CpuUse) -> f64| all.iter().map(f).sum::<f64>() / n as f64;
        let avg_opt = |f: fn(&CpuUse) -> Option<f64>| {
            let v: Option<Vec<f64>> = all.iter().map(f).collect();
            v.map(|v| v.iter().sum::<f64>() / n as f64)
        };
        Some(CpuUse {
            window_s: all.iter().map(|c| c.window_s).sum(),
            process_user_cpus: avg(|c| c.process_user_cpus),
            process_system_cpus: avg(|c| c.process_system_cpus),
            user_cpus: avg_opt(|c| c.user_cpus),
            system_cpus: avg_opt(|c| c.system_cpus),
            irq_cpus: avg_opt(|c| c.irq_cpus),
            softirq_cpus: avg_opt(|c| c.softirq_cpus),
            online_cpus: first.online_cpus,
            service_demand_us_per_kb: avg_opt(|c| c.service_demand_us_per_kb),
        })
    }

    /// Checks figures that came from a peer: finite, not negative, at most twice its CPUs
    /// (accounting at the window's edges may overshoot them a little), at most 65 536 CPUs and
    /// a window of at most a day.
    pub fn validate(&self) -> Result<(), String> {
        let cpus = f64::from(self.online_cpus);
        if self.online_cpus == 0 || self.online_cpus > 65_536 {
            return Err(format!("{} online CPUs", self.online_cpus));
        }
        if !(self.window_s.is_finite() && self.window_s > 0.0 && self.window_s <= 86_400.0) {
            return Err(format!("a CPU window of {} s", self.window_s));
        }
        let share = [
            Some(self.process_user_cpus),
            Some(self.process_system_cpus),
            self.user_cpus,
            self.system_cpus,
            self.irq_cpus,
            self.softirq_cpus,
        ];
        if share
            .into_iter()
            .flatten()
            .any(|v| !(v.is_finite() && (0.0..=cpus * 2.0).contains(&v)))
        {
            return Err(format!("CPU figures outside 0 to {cpus} CPUs"));
        }
        if self
            .service_demand_us_per_kb
            .is_some_and(|d| !(d.is_finite() && d >= 0.0))
        {
            return Err("a service demand that is not a positive number".into());
        }
        Ok(())
    }

    /// The machine's CPUs kept busy (user, system, irq and softirq), where /proc/stat was read.
    pub fn busy_cpus(&self) -> Option<f64> {
        Some(self.user_cpus? + self.system_cpus? + self.irq_cpus? + self.softirq_cpus?)
    }

    /// With the service demand of moving `bytes_per_s`: µs of busy CPU per KB (1024 bytes).
    pub fn with_demand(mut self, bytes_per_s: f64) -> CpuUse {
        self.service_demand_us_per_kb = self
            .busy_cpus()
            .filter(|_| bytes_per_s > 0.0)
            .map(|busy| busy * 1e6 / (bytes_per_s / 1024.0));
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_is_parsed_and_hostile_text_is_not_a_panic() {
        let text = "cpu  10 1 20 300 4 5 6 7 0 0\ncpu0 5 0 10 150 2 2 3 3 0 0\ncpu1 5 1 10 150 2 3 3 4 0 0\nintr 1 2\n";
        assert_eq!(parse_stat(text), Some(([10, 1, 20, 300, 4, 5, 6, 7], 2)));
        for bad in [
            "",
            "cpu 1 2",
            "cpu a b c d e f g h",
            "cpu0 1 2 3 4 5 6 7 8",
            "\u{1b}[2J",
        ] {
            assert_eq!(parse_stat(bad), None, "{bad:?}");
        }
        let huge = format!("cpu {}\n", ["18446744073709551615"; 8].join(" "));
        assert!(parse_stat(&huge).is_some());
    }

    /// A thread that spins for 200 ms shows about one CPU of user time, in the process's
    /// figures and the machine's.
    #[test]
    fn a_spinning_thread_is_one_cpu_busy() {
        let a = snapshot();
        let until = Instant::now() + std::time::Duration::from_millis(200);
        let mut x = 0u64;
        while Instant::now() < until {
            x = std::hint::black_box(x.wrapping_add(1));
        }
        let use_ = a.until(&snapshot());
        assert!(
            use_.process_user_cpus + use_.process_system_cpus > 0.6,
            "{use_:?}"
        );
        if let Some(busy) = use_.busy_cpus() {
            assert!(
                busy > 0.6 && busy <= use_.online_cpus as f64 + 0.01,
                "{use_:?}"
            );
        }
        let d = use_.clone().with_demand(1e9);
        assert!(d.service_demand_us_per_kb.is_some_and(|s| s > 0.0));
        let m = CpuUse::mean(&[use_.clone(), use_]).unwrap();
        assert!(m.window_s > 0.3);
        assert!(m.validate().is_ok(), "{m:?}");
    }

    #[test]
    fn a_peers_cpu_figures_are_bounded() {
        let ok = CpuUse {
            window_s: 4.0,
            process_user_cpus: 0.1,
            process_system_cpus: 0.9,
            user_cpus: Some(0.2),
            system_cpus: Some(1.0),
            irq_cpus: Some(0.0),
            softirq_cpus: Some(0.3),
            online_cpus: 2,
            service_demand_us_per_kb: Some(0.5),
        };
        assert!(ok.validate().is_ok());
        let bad = [
            CpuUse {
                online_cpus: 0,
                ..ok.clone()
            },
            CpuUse {
                online_cpus: u32::MAX,
                ..ok.clone()
            },
            CpuUse {
                window_s: f64::NAN,
                ..ok.clone()
            },
            CpuUse {
                window_s: -1.0,
                ..ok.clone()
            },
            CpuUse {
                window_s: 1e12,
                ..ok.clone()
            },
            CpuUse {
                system_cpus: Some(1e9),
                ..ok.clone()
            },
            CpuUse {
                process_user_cpus: -0.5,
                ..ok.clone()
            },
            CpuUse {
                softirq_cpus: Some(f64::INFINITY),
                ..ok.clone()
            },
            CpuUse {
                service_demand_us_per_kb: Some(-1.0),
                ..ok.clone()
            },
        ];
        for b in bad {
            assert!(b.validate().is_err(), "{b:?}");
        }
    }
}
