//! A control group of `verify`'s own, made under this process's group for one controller (the
//! CPU's, or the block I/O's), with limits written to it, the whole process moved in to be
//! measured under them and moved back out; dropped, the process is back in its group and the
//! group removed. cgroup v1 (a hierarchy per controller) where the controller is mounted so,
//! else cgroup v2 (one hierarchy).

use std::path::{Path, PathBuf};

/// The controllers `verify` limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Controller {
    Cpu,
    Io,
}

impl Controller {
    /// v1's directory names under /sys/fs/cgroup, and the name /proc/self/cgroup gives it.
    fn v1(self) -> (&'static [&'static str], &'static str) {
        match self {
            Controller::Cpu => (&["cpu", "cpu,cpuacct", "cpuacct,cpu"], "cpu"),
            Controller::Io => (&["blkio"], "blkio"),
        }
    }

    /// v2's name for it.
    fn v2(self) -> &'static str {
        match self {
            Controller::Cpu => "cpu",
            Controller::Io => "io",
        }
    }
}

const ROOT: &str = "/sys/fs/cgroup";

/// A group of ours.
pub struct Group {
    pub dir: PathBuf,
    /// The group this process was in, to go back to.
    home: PathBuf,
    pub v2: bool,
    joined: bool,
}

/// This process's group for `controller`: its directory and whether it is cgroup v2.
fn own_group(controller: Controller) -> Result<(PathBuf, bool), String> {
    let text = crate::sysinfo::sysfs::read_bounded(Path::new("/proc/self/cgroup"), 64 * 1024)
        .ok_or("cannot read /proc/self/cgroup")?;
    let (dirs, name) = controller.v1();
    let mut unified = None;
    for (controllers, rel) in crate::sysinfo::cgroup::memberships(&text) {
        if controllers.is_empty() {
            unified = Some(Path::new(ROOT).join(rel));
        } else if controllers.split(',').any(|c| c == name)
            && let Some(d) = dirs
                .iter()
                .map(|d| Path::new(ROOT).join(d))
                .find(|d| d.join("cgroup.procs").exists())
        {
            return Ok((d.join(rel), false));
        }
    }
    let dir = unified.ok_or(format!(
        "no cgroup hierarchy has the {} controller",
        controller.v2()
    ))?;
    Ok((dir, true))
}

fn write(path: &Path, text: &str) -> Result<(), String> {
    std::fs::write(path, text)
        .map_err(|e| format!("cannot write '{text}' to {}: {e}", path.display()))
}

impl Group {
    /// Makes group `name` under this process's group for `controller`. Refused where a group of
    /// that name exists (not this run's), or where the controller cannot be had below it.
    pub fn new(controller: Controller, name: &str) -> Result<Group, String> {
        let (home, v2) = own_group(controller)?;
        if v2 {
            // Below a group, a v2 controller exists only where the group hands it down, which
            // a group with processes of its own cannot do (only the root group can): verify
            // changes no group it did not make.
            let handed = std::fs::read_to_string(home.join("cgroup.subtree_control"))
                .map(|t| t.split_whitespace().any(|c| c == controller.v2()))
                .unwrap_or(false);
            if !handed {
                return Err(format!(
                    "cgroup v2: the group this process runs in ({}) does not hand the {} controller down to groups below it (only the root group can, beside processes of its own): run verify from the root group (as root: echo $$ > /sys/fs/cgroup/cgroup.procs)",
                    home.display(),
                    controller.v2()
                ));
            }
        }
        let dir = home.join(name);
        std::fs::create_dir(&dir)
            .map_err(|e| format!("cannot make the control group {}: {e}", dir.display()))?;
        Ok(Group {
            dir,
            home,
            v2,
            joined: false,
        })
    }

    /// Writes `text` to the group's file `file`.
    pub fn set(&self, file: &str, text: &str) -> Result<(), String> {
        write(&self.dir.join(file), text)
    }

    /// Limits the group's CPU time to `quota_us` every `period_us` (v2 `cpu.max`, v1
    /// `cpu.cfs_period_us` and `cpu.cfs_quota_us`).
    pub fn limit_cpu(&self, quota_us: u64, period_us: u64) -> Result<(), String> {
        if self.v2 {
            self.set("cpu.max", &format!("{quota_us} {period_us}"))
        } else {
            self.set("cpu.cfs_period_us", &period_us.to_string())
                .and_then(|()| self.set("cpu.cfs_quota_us", &quota_us.to_string()))
        }
    }

    /// Lifts the group's CPU limit (v2 `cpu.max` "max", v1 `cpu.cfs_quota_us` -1).
    pub fn unlimit_cpu(&self) -> Result<(), String> {
        if self.v2 {
            self.set("cpu.max", "max")
        } else {
            self.set("cpu.cfs_quota_us", "-1")
        }
    }

    /// Moves this whole process (every thread) into the group.
    pub fn join(&mut self) -> Result<(), String> {
        write(
            &self.dir.join("cgroup.procs"),
            &std::process::id().to_string(),
        )?;
        self.joined = true;
        Ok(())
    }

    /// Moves it back to the group it came from.
    pub fn leave(&mut self) -> Result<(), String> {
        if self.joined {
            write(
                &self.home.join("cgroup.procs"),
                &std::process::id().to_string(),
            )?;
            self.joined = false;
        }
        Ok(())
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        if let Err(e) = self.leave() {
            eprintln!("peakbench: warning: {e}");
        }
        if let Err(e) = remove(&self.dir) {
            eprintln!("peakbench: warning: {e}");
        }
    }
}

/// Removes the control group `dir` (one already gone is fine); a group just left may stay
/// busy for a moment.
pub fn remove(dir: &Path) -> Result<(), String> {
    let mut last = None;
    for _ in 0..50 {
        match std::fs::remove_dir(dir) {
            Ok(()) => return Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => last = Some(e),
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    Err(format!(
        "cannot remove the control group {}: {}",
        dir.display(),
        last.map_or_else(String::new, |e| e.to_string())
    ))
}
