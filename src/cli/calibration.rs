//! What `run --budget` measures before it fits a profile: one tiny real point of each
//! subsystem the profile uses, timed against its own estimate, so that every job's estimate
//! is scaled by what this machine really does (a CPU below its peak, a slow disk's layout and
//! sync, a loopback server's start) rather than by the constants the estimates assume.

use super::Command;
use crate::app::Recorder;
use crate::app::outputs::Outputs;
use crate::app::setting::{Benchmark, Setting};
use crate::results::Subsystem;
use crate::results::params::{EngineKind, Proto};
use crate::sysinfo::SystemInfo;
use crate::units::format_duration;
use std::time::{Duration, Instant};

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
    /// disk's with `disk` set on it (where and how the profile's disk jobs write:
    /// [`disk_settings`]).
    pub fn measure(
        subsystems: &[Subsystem],
        sys: &SystemInfo,
        disk: Option<&[Setting]>,
    ) -> Calibration {
        let start = Instant::now();
        let mut cal = Calibration::default();
        for &sub in subsystems {
            let probed = match (sub, disk) {
                // A job on a device (not a file) is not probed beside it.
                (Subsystem::Disk, None) => None,
                (_, disk) => probe(sub, sys, disk.unwrap_or_default()),
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
/// `ops` sizes the CPU's fixed work; `disk` is set on the disk's (where and how it writes).
pub(super) fn probe_bench(sub: Subsystem, ops: u64, disk: &[Setting]) -> Benchmark {
    use crate::workload::{Workload as W, cpu::CpuWorkload, disk::DiskWorkload};
    use crate::workload::{mem::MemWorkload, net::NetWorkload};
    use Setting as S;
    let ms = Duration::from_millis;
    let settings = match sub {
        Subsystem::Cpu => vec![
            S::Workload(W::Cpu(CpuWorkload::Dp)),
            S::Count("threads", 1),
            S::Warmup(0),
            S::Work("total-ops", ops),
        ],
        Subsystem::Mem => vec![
            S::Workload(W::Mem(MemWorkload::Copy)),
            S::Count("threads", 1),
            S::Bytes("array-size", 64 << 20),
            S::Time("duration", ms(100)),
            S::Warmup(0),
        ],
        Subsystem::Disk => vec![
            S::Workload(W::Disk(DiskWorkload::Rs)),
            S::Bytes("block-size", 1 << 20),
            S::Bytes("size", 64 << 20),
            S::Work("total-bytes", 64 << 20),
            S::Engine(EngineKind::Psync),
            S::Time("ramp", Duration::ZERO),
        ],
        Subsystem::Net => vec![
            S::Workload(W::Net(NetWorkload::Throughput)),
            S::Protocol(Proto::Tcp),
            S::Count("streams", 1),
            S::Time("duration", ms(200)),
            S::Time("omit", Duration::ZERO),
        ],
    };
    let bench = Benchmark::new(sub).with_all(settings).with(S::Repeat(1));
    // Where the job writes, and its engine in place of the probe's.
    match sub {
        Subsystem::Disk => bench.with_all(disk.iter().cloned()),
        _ => bench,
    }
}

/// About this long is what the CPU's probe is sized for at the estimate's rate.
const CPU_PROBE: Duration = Duration::from_millis(150);

/// The factor of `sub` on this machine, None where its probe cannot run here.
fn probe(sub: Subsystem, sys: &SystemInfo, disk: &[Setting]) -> Option<f64> {
    let build = |ops| {
        let req = super::benchmark::request_of(&probe_bench(sub, ops, disk), sys).ok()?;
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

/// Where and how a profile's disk jobs write, from the first one's options, as the disk
/// probe's settings: its `--dir` (or the directory of its `--file`: the probe goes beside a
/// named file, never onto it) and the null engine where the job uses it (which touches no
/// disk, and neither does its probe); none for a profile without a disk job. None where that
/// job names a device (or anything but a regular file): the disk is then not probed.
pub fn disk_settings<'a>(jobs: impl IntoIterator<Item = &'a Command>) -> Option<Vec<Setting>> {
    let Some(args) = jobs.into_iter().find_map(|c| match c {
        Command::Disk(a) => Some(a),
        _ => None,
    }) else {
        return Some(Vec::new());
    };
    let mut settings = Vec::new();
    match &args.file {
        // A block device (or anything but a file to be made or overwritten): its directory
        // (/dev) is no place for the probe's file, and says nothing of the device.
        Some(f) if std::fs::symlink_metadata(f).is_ok_and(|m| !m.is_file()) => return None,
        Some(f) => match f.parent() {
            Some(p) if !p.as_os_str().is_empty() => {
                settings.push(Setting::Path("dir", p.to_path_buf()))
            }
            _ => {}
        },
        None => settings.push(Setting::Path("dir", args.dir.clone())),
    }
    if args.engine.0 == Some(EngineKind::Null) {
        settings.push(Setting::Engine(EngineKind::Null));
    }
    Some(settings)
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
        let parse = |w: &str| {
            let line: Vec<String> = w.split(' ').map(String::from).collect();
            let argv = std::iter::once("peakbench".to_string()).chain(line);
            crate::cli::Cli::parse_noting(argv).unwrap().command
        };
        let dir = |d: &str| Setting::Path("dir", d.into());
        let cpu = parse("cpu --workload=DP");
        let on_dir = parse("disk --workload=RS --dir=/mnt/scratch");
        let file = parse("disk --file=/mnt/data/test.bin");
        let null = parse("disk --engine=null --size=4M");
        let bare = parse("disk --file=test.bin");
        let settings = |jobs: &[&Command]| disk_settings(jobs.iter().copied()).unwrap();
        assert_eq!(settings(&[&cpu, &on_dir]), [dir("/mnt/scratch")]);
        assert_eq!(settings(&[&file, &on_dir]), [dir("/mnt/data")]);
        assert_eq!(
            settings(&[&null]),
            [dir("."), Setting::Engine(EngineKind::Null)]
        );
        assert!(settings(&[&bare]).is_empty());
        assert!(settings(&[&cpu]).is_empty());
        // A device is not probed beside: /dev is no place for a file.
        let device = parse("disk --file=/dev/null --destructive");
        assert_eq!(disk_settings([&device]), None);
        let probe = probe_bench(Subsystem::Disk, 1, &settings(&[&null]));
        assert_eq!(
            probe
                .settings
                .iter()
                .filter(|s| s.key() == "engine")
                .collect::<Vec<_>>(),
            [&Setting::Engine(EngineKind::Null)]
        );
    }
}
