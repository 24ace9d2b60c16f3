//! The memory limit of this process's control group (a container's, a Slurm job's): cgroup v2
//! `memory.max` less `memory.current` (the tightest along the path to the root), or cgroup v1
//! `memory.limit_in_bytes` less `memory.usage_in_bytes`. A benchmark that allocates past it is
//! killed by the OOM killer without a word, so the memory checks use the smaller of this and
//! the machine's MemAvailable.

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
    let text = std::fs::read_to_string(path).ok()?;
    text.trim().parse().ok()
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
    for line in proc_self_cgroup.lines() {
        let mut parts = line.splitn(3, ':');
        let (Some(_), Some(controllers), Some(path)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        let rel = path.trim_start_matches('/');
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

/// This process's limit (None outside a limited control group).
pub fn own_memory_limit() -> Option<MemoryLimit> {
    let cgroup = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    memory_limit(Path::new("/sys/fs/cgroup"), &cgroup)
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
}
