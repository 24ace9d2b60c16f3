//! The limits of this process's control group (a container's, a Slurm job's, a Kubernetes
//! pod's):
//! - memory: cgroup v2 `memory.max` less `memory.current` (the tightest along the path to the
//!   root), or cgroup v1 `memory.limit_in_bytes` less `memory.usage_in_bytes`. A benchmark that
//!   allocates past it is killed by the OOM killer without a word, so the memory checks use the
//!   smaller of this and the machine's MemAvailable.
//! - CPU time: cgroup v2 `cpu.max` ("QUOTA PERIOD", "max" for none), or cgroup v1
//!   `cpu.cfs_quota_us` (-1 for none) over `cpu.cfs_period_us`, the tightest along the path: the
//!   CPUs' worth of time the group may use (Kubernetes' `limits.cpu`), whatever CPUs it may run
//!   on.

use std::path::Path;

/// A limit at or above this is "no limit" (cgroup v1 writes 2^63 rounded to pages).
const UNLIMITED: u64 = 1 << 62;

/// The control group's memory limit and what it has left, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemoryLimit {
    pub limit: u64,
    pub headroom: u64,
}

fn number(path: &Path) -> Option<u64> {
    read_small(path)?.trim().parse().ok()
}

/// The limit of the control group named in `proc_self_cgroup` (the text of
/// /proc/self/cgroup) under the cgroup file system at `root` (/sys/fs/cgroup); None without a
/// limit.
pub fn memory_limit(root: &Path, proc_self_cgroup: &str) -> Option<MemoryLimit> {
    let mut best: Option<MemoryLimit> = None;
    let mut consider = |limit: Option<u64>, used: Option<u64>| {
        if let Some(limit) = limit.filter(|l| *l < UNLIMITED) {
            let headroom = limit.saturating_sub(used.unwrap_or(0));
            if best.is_none_or(|b| headroom < b.headroom) {
                best = Some(MemoryLimit { limit, headroom });
            }
        }
    };
    for (controllers, rel) in memberships(proc_self_cgroup) {
        if controllers.is_empty() {
            // v2: this group and each ancestor may limit.
            let mut dir = root.join(rel);
            loop {
                consider(
                    number(&dir.join("memory.max")),
                    number(&dir.join("memory.current")),
                );
                if dir == root || !dir.pop() || !dir.starts_with(root) {
                    break;
                }
            }
        } else if controllers.split(',').any(|c| c == "memory") {
            let dir = root.join("memory").join(rel);
            consider(
                number(&dir.join("memory.limit_in_bytes")),
                number(&dir.join("memory.usage_in_bytes")),
            );
        }
    }
    best
}

/// The groups `proc_self_cgroup` (the text of /proc/self/cgroup) names: for each hierarchy its
/// controllers ("cpu,cpuacct"; empty for cgroup v2) and the group's path below its root,
/// without the leading slash. At most 64 lines; a path that climbs (`..`) is skipped.
pub fn memberships(proc_self_cgroup: &str) -> impl Iterator<Item = (&str, &str)> {
    proc_self_cgroup.lines().take(64).filter_map(|line| {
        let mut parts = line.splitn(3, ':');
        let (Some(_), Some(controllers), Some(path)) = (parts.next(), parts.next(), parts.next())
        else {
            return None;
        };
        let rel = path.trim_start_matches('/');
        (!rel.split('/').any(|c| c == "..")).then_some((controllers, rel))
    })
}

/// This process's limit (None outside a limited control group).
pub fn own_memory_limit() -> Option<MemoryLimit> {
    let cgroup = read_small(Path::new("/proc/self/cgroup"))?;
    memory_limit(Path::new("/sys/fs/cgroup"), &cgroup)
}

/// A control group's CPU quota: `quota_us` of CPU time every `period_us`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CpuQuota {
    pub quota_us: u64,
    pub period_us: u64,
}

impl CpuQuota {
    /// The CPUs' worth of time it allows (0.5: half a CPU).
    pub fn cpus(&self) -> f64 {
        self.quota_us as f64 / self.period_us.max(1) as f64
    }

    /// A quota and period as cgroup files give them: both above 0, the period at most a second
    /// (v2 and v1 refuse more), the quota at most a million CPUs' worth.
    fn checked(quota_us: u64, period_us: u64) -> Option<CpuQuota> {
        ((1..=1_000_000).contains(&period_us) && quota_us > 0)
            .then_some(CpuQuota {
                quota_us,
                period_us,
            })
            .filter(|q| q.cpus() <= 1e6)
    }
}

/// The tightest CPU quota of the control group named in `proc_self_cgroup` and its ancestors,
/// under the cgroup file system at `root`; None without one.
pub fn cpu_quota(root: &Path, proc_self_cgroup: &str) -> Option<CpuQuota> {
    let mut best: Option<CpuQuota> = None;
    let mut consider = |q: Option<CpuQuota>| {
        if let Some(q) = q
            && best.is_none_or(|b| q.cpus() < b.cpus())
        {
            best = Some(q);
        }
    };
    for (controllers, rel) in memberships(proc_self_cgroup) {
        let (base, v2) = if controllers.is_empty() {
            (root.to_path_buf(), true)
        } else if controllers.split(',').any(|c| c == "cpu") {
            // v1 mounts the controller alone or with cpuacct ("cpu,cpuacct").
            let dir = ["cpu", "cpu,cpuacct", "cpuacct,cpu"]
                .iter()
                .map(|d| root.join(d))
                .find(|d| d.is_dir());
            match dir {
                Some(d) => (d, false),
                None => continue,
            }
        } else {
            continue;
        };
        let mut dir = base.join(rel);
        loop {
            consider(if v2 {
                read_small(&dir.join("cpu.max")).and_then(|t| parse_cpu_max(&t))
            } else {
                let quota = read_small(&dir.join("cpu.cfs_quota_us"))
                    .and_then(|t| t.trim().parse::<i64>().ok());
                let period = number(&dir.join("cpu.cfs_period_us"));
                match (quota, period) {
                    (Some(q), Some(p)) if q > 0 => CpuQuota::checked(q as u64, p),
                    _ => None,
                }
            });
            if dir == base || !dir.pop() || !dir.starts_with(&base) {
                break;
            }
        }
    }
    best
}

/// cgroup v2's `cpu.max`: "QUOTA PERIOD", or "max PERIOD" for none.
pub fn parse_cpu_max(text: &str) -> Option<CpuQuota> {
    let mut words = text.split_ascii_whitespace();
    let (quota, period) = (words.next()?, words.next()?);
    if words.next().is_some() || quota == "max" {
        return None;
    }
    CpuQuota::checked(quota.parse().ok()?, period.parse().ok()?)
}

/// A cgroup file of at most 4 KiB.
fn read_small(path: &Path) -> Option<String> {
    super::sysfs::read_bounded(path, 4096)
}

/// This process's CPU quota (None outside a control group that has one).
pub fn own_cpu_quota() -> Option<CpuQuota> {
    let cgroup = read_small(Path::new("/proc/self/cgroup"))?;
    cpu_quota(Path::new("/sys/fs/cgroup"), &cgroup)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(root: &Path, rel: &str, file: &str, text: &str) {
        let dir = root.join(rel);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(file), text).unwrap();
    }

    #[test]
    fn v2_takes_the_tightest_group_on_the_path() {
        let root = tempfile::tempdir().unwrap();
        let r = root.path();
        write(r, "", "memory.max", "max\n");
        write(r, "job", "memory.max", "1073741824\n");
        write(r, "job", "memory.current", "100\n");
        write(r, "job/step", "memory.max", "536870912\n");
        write(r, "job/step", "memory.current", "268435456\n");
        let l = memory_limit(r, "0::/job/step\n").unwrap();
        assert_eq!(
            l,
            MemoryLimit {
                limit: 536870912,
                headroom: 268435456
            }
        );
        // Only the outer group limits.
        write(r, "job/step", "memory.max", "max\n");
        assert_eq!(memory_limit(r, "0::/job/step\n").unwrap().limit, 1073741824);
        // No limit anywhere.
        write(r, "job", "memory.max", "max\n");
        assert_eq!(memory_limit(r, "0::/job/step\n"), None);
    }

    #[test]
    fn v1_reads_the_memory_controller_and_ignores_its_unlimited_value() {
        let root = tempfile::tempdir().unwrap();
        let r = root.path();
        write(r, "memory/docker/abc", "memory.limit_in_bytes", "536870912");
        write(r, "memory/docker/abc", "memory.usage_in_bytes", "1000");
        let text = "12:cpu,cpuacct:/docker/abc\n4:memory:/docker/abc\n";
        assert_eq!(memory_limit(r, text).unwrap().headroom, 536870912 - 1000);
        write(
            r,
            "memory/docker/abc",
            "memory.limit_in_bytes",
            "9223372036854771712",
        );
        assert_eq!(memory_limit(r, text), None);
        assert_eq!(memory_limit(r, "garbage\n::\n"), None);
    }

    #[test]
    fn cpu_quotas_v2_and_v1_the_tightest_on_the_path() {
        let root = tempfile::tempdir().unwrap();
        let r = root.path();
        write(r, "", "cpu.max", "max 100000\n");
        write(r, "pod", "cpu.max", "200000 100000\n");
        write(r, "pod/c1", "cpu.max", "50000 100000\n");
        let q = cpu_quota(r, "0::/pod/c1\n").unwrap();
        assert_eq!(q.cpus(), 0.5);
        write(r, "pod/c1", "cpu.max", "max 100000\n");
        assert_eq!(cpu_quota(r, "0::/pod/c1\n").unwrap().cpus(), 2.0);
        write(r, "pod", "cpu.max", "max 100000\n");
        assert_eq!(cpu_quota(r, "0::/pod/c1\n"), None);
        // v1: the cpu controller's quota over its period; -1 is none.
        write(r, "cpu,cpuacct/job", "cpu.cfs_quota_us", "150000\n");
        write(r, "cpu,cpuacct/job", "cpu.cfs_period_us", "100000\n");
        let text = "4:memory:/job\n2:cpu,cpuacct:/job\n";
        assert_eq!(cpu_quota(r, text).unwrap().cpus(), 1.5);
        write(r, "cpu,cpuacct/job", "cpu.cfs_quota_us", "-1\n");
        assert_eq!(cpu_quota(r, text), None);
    }

    #[test]
    fn hostile_cpu_quota_files_are_no_quota() {
        for bad in [
            "",
            "max",
            "0 100000",
            "50000 0",
            "50000 100000 7",
            "x y",
            "-5 100000",
            "50000 99999999999",
            "18446744073709551615 1",
            "\u{1b}[2J 1",
        ] {
            assert_eq!(parse_cpu_max(bad), None, "{bad:?}");
        }
        assert_eq!(parse_cpu_max("25000 100000").unwrap().cpus(), 0.25);
        let root = tempfile::tempdir().unwrap();
        assert_eq!(cpu_quota(root.path(), "garbage\n::\n0::/../../etc\n"), None);
    }
}
