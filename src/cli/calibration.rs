//! What `run --budget` measures before it fits a profile: one tiny real point of each
//! subsystem the profile uses, timed against its own estimate, so that every job's estimate
//! is scaled by what this machine really does (a CPU below its peak, a slow disk's layout and
//! sync, a loopback server's start) rather than by the constants the estimates assume.

use crate::app::Recorder;
use crate::app::Request;
use crate::app::outputs::Outputs;
use crate::results::Subsystem;
use crate::sysinfo::SystemInfo;
use crate::units::format_duration;
use std::path::Path;
use std::time::{Duration, Instant};

/// Makes a probe's request from its command line (the command line's own parser), None where
/// it cannot run here.
pub type Build<'a> = &'a dyn Fn(&[String]) -> Option<Box<dyn Request>>;

/// The range of a factor. A probe far faster than its estimate says little about the timed
/// points (their time is their duration), so a fast machine's factor stays near 1; a slow one's
/// is believed up to 10.
const LEAST: f64 = 0.75;
const MOST: f64 = 10.0;

/// Each subsystem's factor: the time its probe took over the time its estimate said.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Calibration {
    factors: Vec<(Subsystem, f64)>,
    /// The subsystems whose probe failed (their factor is 1).
    failed: Vec<Subsystem>,
    /// The probes' time in all.
    took: Duration,
}

impl Calibration {
    /// Given factors (a synthetic machine; 1 for the others).
    #[cfg(test)]
    pub fn with(factors: &[(Subsystem, f64)]) -> Calibration {
        Calibration {
            factors: factors.to_vec(),
            ..Calibration::default()
        }
    }

    /// The factor of `sub`'s estimates (1 where it was not probed).
    pub fn factor(&self, sub: Subsystem) -> f64 {
        self.factors
            .iter()
            .find(|(s, _)| *s == sub)
            .map_or(1.0, |(_, f)| *f)
    }

    /// An estimate of `sub` scaled by its factor (saturating).
    pub fn scale(&self, sub: Subsystem, d: Duration) -> Duration {
        crate::units::estimate_secs(d.as_secs_f64() * self.factor(sub))
    }

    /// The probes' time in all (spent out of the budget).
    pub fn took(&self) -> Duration {
        self.took
    }

    /// What it measured, for the plan's line ("calibrated in 0.9 s: cpu × 1.02, disk × 2.40").
    /// Without a probe (a dry run measures nothing): says so.
    pub fn describe(&self) -> String {
        if self.factors.is_empty() && self.failed.is_empty() {
            return "estimates not calibrated (a dry run measures nothing; the run probes the machine first, about a second, and may fit otherwise)".into();
        }
        let mut parts: Vec<String> = self
            .factors
            .iter()
            .map(|(s, f)| format!("{s} × {f:.2}"))
            .collect();
        parts.extend(self.failed.iter().map(|s| format!("{s} not probed")));
        format!(
            "calibrated in {}: {}",
            format_duration(self.took),
            parts.join(", ")
        )
    }

    /// Runs the probe of each of `subsystems` on this machine (about a second in all), the
    /// disk's with `disk` added to its line (where and how the profile's disk jobs write:
    /// [`disk_words`]).
    /// `build` makes a probe's request from its command line.
    pub fn measure(
        subsystems: &[Subsystem],
        sys: &SystemInfo,
        disk: Option<&[String]>,
        build: Build,
    ) -> Calibration {
        let start = Instant::now();
        let mut cal = Calibration::default();
        for &sub in subsystems {
            let probed = match (sub, disk) {
                // A job on a device (not a file) is not probed beside it.
                (Subsystem::Disk, None) => None,
                (_, disk) => probe(sub, sys, disk.unwrap_or_default(), build),
            };
            match probed {
                Some(f) => cal.factors.push((sub, f)),
                None => cal.failed.push(sub),
            }
        }
        cal.took = start.elapsed();
        cal
    }
}

/// The probe of `sub`: a point whose estimate is mostly what the machine's speed decides and
/// that is like the profiles' points (the CPU's fixed work at the rate the estimate assumes,
/// memory's arrays first touched and a timed round, a file laid out, synced and read, a
/// loopback server started and a stream timed).
/// `ops` sizes the CPU's fixed work; `disk` is added to the disk's (where and how it writes).
pub(super) fn probe_line(sub: Subsystem, ops: u64, disk: &[String]) -> Vec<String> {
    let words: &[&str] = match sub {
        Subsystem::Cpu => &["cpu", "--workload=DP", "--threads=1", "--warmup=0"],
        Subsystem::Mem => &[
            "mem",
            "--workload=COPY",
            "--threads=1",
            "--array-size=64M",
            "--duration=100ms",
            "--warmup=0",
        ],
        Subsystem::Disk => &[
            "disk",
            "--workload=RS",
            "--block-size=1M",
            "--size=64M",
            "--total-bytes=64M",
            "--engine=psync",
            "--ramp=0",
        ],
        Subsystem::Net => &[
            "net",
            "--workload=THROUGHPUT",
            "--protocol=tcp",
            "--streams=1",
            "--duration=200ms",
            "--omit=0",
        ],
    };
    let mut line: Vec<String> = words.iter().map(|w| w.to_string()).collect();
    line.push("--repeat=1".into());
    match sub {
        Subsystem::Cpu => line.push(format!("--total-ops={ops}")),
        Subsystem::Disk => {
            // The job's engine replaces the probe's.
            if disk.iter().any(|w| w.starts_with("--engine=")) {
                line.retain(|w| !w.starts_with("--engine="));
            }
            line.extend(disk.iter().cloned());
        }
        _ => {}
    }
    line
}

/// About this long is what the CPU's probe is sized for at the estimate's rate.
const CPU_PROBE: Duration = Duration::from_millis(150);

/// The factor of `sub` on this machine, None where its probe cannot run here.
fn probe(sub: Subsystem, sys: &SystemInfo, disk: &[String], make: Build) -> Option<f64> {
    let build = |ops| {
        let req = make(&probe_line(sub, ops, disk))?;
        let estimate = req.check(sys).ok()?;
        Some((req, estimate))
    };
    let (mut req, mut estimate) = build(1_000_000_000)?;
    if sub == Subsystem::Cpu {
        let ops = 1e9 * CPU_PROBE.as_secs_f64() / estimate.as_secs_f64().max(1e-3);
        (req, estimate) = build(ops.max(1e6) as u64)?;
    }
    let mut rec = Recorder::new(
        Vec::new(),
        Outputs {
            quiet: true,
            history: false,
            ..Outputs::default()
        },
    )
    .with_system(sys.clone());
    let start = Instant::now();
    req.run(&mut rec).ok()?;
    let took = start.elapsed().as_secs_f64();
    Some((took / estimate.as_secs_f64().max(1e-3)).clamp(LEAST, MOST))
}

/// Where and how a profile's disk jobs write, from the first one's line, as the disk probe's
/// words: `--dir=D` (also the directory of `--file=F`: the probe goes beside a named file,
/// never onto it) and `--engine=null` where the job uses the null engine (which touches no
/// disk, and neither does its probe); no words for a profile without a disk job (or naming
/// neither: disk's default, the working directory). None where that job names a device (or
/// anything but a regular file): the disk is then not probed.
pub fn disk_words<'a>(lines: impl IntoIterator<Item = &'a [String]>) -> Option<Vec<String>> {
    let Some(line) = lines
        .into_iter()
        .find(|l| l.first().map(String::as_str) == Some("disk"))
    else {
        return Some(Vec::new());
    };
    let mut words = Vec::new();
    for word in line {
        if let Some(d) = word.strip_prefix("--dir=") {
            words.push(format!("--dir={d}"));
        } else if let Some(f) = word.strip_prefix("--file=") {
            // A block device (or anything but a file to be made or overwritten): its directory
            // (/dev) is no place for the probe's file, and says nothing of the device.
            if std::fs::symlink_metadata(f).is_ok_and(|m| !m.is_file()) {
                return None;
            }
            match Path::new(f).parent() {
                Some(p) if !p.as_os_str().is_empty() => {
                    words.push(format!("--dir={}", p.display()))
                }
                _ => {}
            }
        } else if word == "--engine=null" {
            words.push(word.clone());
        }
    }
    Some(words)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_factor_scales_its_subsystem_only() {
        let cal = Calibration::with(&[(Subsystem::Disk, 2.5)]);
        let d = Duration::from_secs(4);
        assert_eq!(cal.scale(Subsystem::Disk, d), Duration::from_secs(10));
        assert_eq!(cal.scale(Subsystem::Cpu, d), d);
        assert_eq!(cal.scale(Subsystem::Disk, Duration::MAX), Duration::MAX);
    }

    /// The disk's probe goes where the profile's first disk job writes, never onto a file a
    /// job names, and touches no disk where the job uses the null engine.
    #[test]
    fn the_disk_probe_goes_where_the_disk_jobs_write() {
        let line = |w: &[&str]| w.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let cpu = line(&["cpu", "--dir=/nowhere"]);
        let dir = line(&["disk", "--workload=RS", "--dir=/mnt/scratch"]);
        let file = line(&["disk", "--file=/mnt/data/test.bin"]);
        let null = line(&["disk", "--engine=null", "--size=4M"]);
        let bare = line(&["disk", "--file=test.bin"]);
        let words =
            |ls: &[&Vec<String>]| disk_words(ls.iter().map(|l| l.as_slice())).unwrap_or_default();
        assert_eq!(words(&[&cpu, &dir]), ["--dir=/mnt/scratch"]);
        assert_eq!(words(&[&file, &dir]), ["--dir=/mnt/data"]);
        assert_eq!(words(&[&null]), ["--engine=null"]);
        assert!(words(&[&bare]).is_empty());
        assert!(words(&[&cpu]).is_empty());
        // A device is not probed beside: /dev is no place for a file.
        let device = line(&["disk", "--file=/dev/null", "--destructive"]);
        assert_eq!(disk_words([device.as_slice()]), None);
        let probe = probe_line(Subsystem::Disk, 1, &words(&[&null]));
        assert_eq!(
            probe
                .iter()
                .filter(|w| w.starts_with("--engine="))
                .collect::<Vec<_>>(),
            ["--engine=null"]
        );
    }
}
