//! `peakbench verify --cleanup`: what earlier verify runs left where they could not remove it
//! themselves (a second Ctrl-C, SIGKILL, a crash), found by verify's names ([`super::names`])
//! and removed. Only what a process that is no running peakbench made is touched: its two
//! network namespaces (with the veth pair, TUN devices, qdiscs and firewall rules inside them),
//! veth or TUN devices of its names in this namespace, loop devices attached to the image in
//! its temporary directory, its tmpfs on that directory, the directory, and its control groups
//! in every cgroup v1 and v2 hierarchy. Anything else, a name that only looks alike included,
//! is left as it is.

use super::names;
use super::sandbox::run;
use std::collections::BTreeSet;
use std::io::Write;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// Directory levels searched below a cgroup hierarchy's root for verify's groups, which it
/// makes below the group it runs in.
const CGROUP_DEPTH: usize = 16;
/// Directories visited at most in one hierarchy.
const CGROUP_DIRS: usize = 200_000;

/// Something a verify made, found by its name.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Leftover {
    /// A network namespace (a file in /run/netns).
    Namespace(String),
    /// A network interface in this namespace.
    Link(String),
    /// A loop device and the image it is attached to.
    Loop { device: PathBuf, image: PathBuf },
    /// A tmpfs mounted on a temporary directory of verify's.
    Mount(PathBuf),
    /// The temporary directory.
    Directory(PathBuf),
    /// A control group.
    Group(PathBuf),
}

impl Leftover {
    fn describe(&self) -> String {
        let shown = |p: &Path| crate::text::printable(&p.display().to_string());
        match self {
            Leftover::Namespace(n) => format!("network namespace {n}"),
            Leftover::Link(n) => format!("network interface {n}"),
            Leftover::Loop { device, image } => {
                format!("loop device {} over {}", shown(device), shown(image))
            }
            Leftover::Mount(p) => format!("tmpfs mount {}", shown(p)),
            Leftover::Directory(p) => format!("directory {}", shown(p)),
            Leftover::Group(p) => format!("control group {}", shown(p)),
        }
    }

    fn remove(&self) -> Result<(), String> {
        match self {
            Leftover::Namespace(n) => run("ip", &["netns", "del", n]),
            Leftover::Link(n) => run("ip", &["link", "del", n]),
            Leftover::Loop { device, .. } => super::loop_disk::detach(device),
            Leftover::Mount(p) => super::loop_disk::unmount(p),
            Leftover::Directory(p) => remove_temp_dir(p),
            Leftover::Group(p) => super::cgroups::remove(p),
        }
    }
}

/// What was found and what became of it.
#[derive(Debug, Default)]
pub struct Outcome {
    pub removed: usize,
    pub failed: usize,
    /// Kept: their verify is running.
    pub kept: usize,
}

/// Finds what earlier verify runs left and removes it, a line on `out` for each thing and one
/// to sum up. An error where something found could not be removed.
pub fn run_cleanup(out: &mut dyn Write) -> anyhow::Result<Outcome> {
    let mut outcome = Outcome::default();
    let mut pids = BTreeSet::new();
    let mut running = BTreeSet::new();
    // In the order that frees each for the next: a loop device holds the tmpfs it is on, the
    // tmpfs its directory.
    for (pid, thing) in find() {
        if running_peakbench(pid) {
            running.insert(pid);
            outcome.kept += 1;
            writeln!(out, "kept {} (verify {pid} is running)", thing.describe())?;
            continue;
        }
        match thing.remove() {
            Ok(()) => {
                outcome.removed += 1;
                pids.insert(pid);
                writeln!(out, "removed {} (verify {pid})", thing.describe())?;
            }
            Err(why) => {
                outcome.failed += 1;
                writeln!(out, "cannot remove {}: {why}", thing.describe())?;
            }
        }
    }
    let list = |s: &BTreeSet<u32>| s.iter().map(u32::to_string).collect::<Vec<_>>().join(", ");
    let mut summary = if outcome.removed == 0 && outcome.failed == 0 {
        "nothing left by an earlier verify".to_string()
    } else {
        format!(
            "removed {} thing{} left by verify {}",
            outcome.removed,
            if outcome.removed == 1 { "" } else { "s" },
            if pids.is_empty() {
                "-".into()
            } else {
                list(&pids)
            }
        )
    };
    if outcome.kept > 0 {
        summary.push_str(&format!(
            "; kept {} of verify {}, still running",
            outcome.kept,
            list(&running)
        ));
    }
    writeln!(out, "peakbench verify --cleanup: {summary}")?;
    if outcome.failed > 0 {
        anyhow::bail!(
            "{} of {} things found could not be removed (see above)",
            outcome.failed,
            outcome.failed + outcome.removed
        );
    }
    Ok(outcome)
}

/// Whether `pid` is a running peakbench (the verify that made something may still be at
/// work): its command's name, or its executable's (rebuilt since it started), is peakbench's.
/// A pid another program has taken since is not.
fn running_peakbench(pid: u32) -> bool {
    let proc = PathBuf::from(format!("/proc/{pid}"));
    let comm = std::fs::read_to_string(proc.join("comm")).unwrap_or_default();
    comm.trim_end() == "peakbench"
        || std::fs::read_link(proc.join("exe")).is_ok_and(|exe| {
            exe.file_name().is_some_and(|n| {
                n.to_str()
                    .is_some_and(|n| matches!(n, "peakbench" | "peakbench (deleted)"))
            })
        })
}

/// Everything of verify's names, in the order to remove it, with the pid it names.
fn find() -> Vec<(u32, Leftover)> {
    let mut found = Vec::new();
    // Each directory's names, sorted.
    let entries = |dir: &Path| -> BTreeSet<String> {
        std::fs::read_dir(dir)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect()
    };
    found.extend(
        entries(Path::new("/run/netns"))
            .into_iter()
            .filter_map(|n| Some((names::namespace_pid(&n)?, Leftover::Namespace(n)))),
    );
    found.extend(
        entries(Path::new("/sys/class/net"))
            .into_iter()
            .filter_map(|n| Some((names::link_pid(&n)?, Leftover::Link(n)))),
    );
    // Temporary directories: where the system's are, and wherever a loop device's image or a
    // tmpfs of verify's is.
    let mut dirs: BTreeSet<PathBuf> = BTreeSet::new();
    let mut roots: BTreeSet<PathBuf> = BTreeSet::from([std::env::temp_dir()]);
    for (device, image) in loop_devices() {
        let Some(dir) = image.parent() else { continue };
        let Some(pid) = temp_dir_pid(dir) else {
            continue;
        };
        if image.file_name().is_some_and(|f| f == names::IMAGE) {
            roots.extend(dir.parent().map(Path::to_path_buf));
            found.push((pid, Leftover::Loop { device, image }));
        }
    }
    let mounts = std::fs::read_to_string("/proc/self/mounts").unwrap_or_default();
    for m in mount_table(&mounts) {
        if m.source == names::MOUNT_SOURCE
            && m.fstype == "tmpfs"
            && let Some(pid) = temp_dir_pid(&m.at)
        {
            roots.extend(m.at.parent().map(Path::to_path_buf));
            found.push((pid, Leftover::Mount(m.at.clone())));
            dirs.insert(m.at);
        }
    }
    for root in roots {
        for n in entries(&root) {
            let path = root.join(&n);
            if names::temp_dir_pid(&n).is_some() && is_roots_dir(&path) {
                dirs.insert(path);
            }
        }
    }
    found.extend(
        dirs.into_iter()
            .filter_map(|d| Some((temp_dir_pid(&d)?, Leftover::Directory(d)))),
    );
    let mut groups = BTreeSet::new();
    for m in mount_table(&mounts) {
        let verifys = m.fstype == "cgroup2"
            || (m.fstype == "cgroup"
                && m.options
                    .split(',')
                    .any(|o| matches!(o, "cpu" | "cpuacct" | "blkio")));
        if verifys {
            find_groups(&m.at, &mut groups);
        }
    }
    found.extend(groups.into_iter().filter_map(|g| {
        let pid = names::group_pid(&g.file_name()?.to_string_lossy())?;
        Some((pid, Leftover::Group(g)))
    }));
    found
}

/// The pid of a temporary directory of verify's at `path`.
fn temp_dir_pid(path: &Path) -> Option<u32> {
    names::temp_dir_pid(&path.file_name()?.to_string_lossy())
}

/// Whether `path` is a directory of root's (not a link): verify's are; one another user made
/// under a name alike is not touched.
fn is_roots_dir(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir() && m.uid() == 0)
}

/// Removes a temporary directory of verify's, unmounted: empty, or holding only the image
/// (where the tmpfs was never mounted on it).
fn remove_temp_dir(dir: &Path) -> Result<(), String> {
    let image = dir.join(names::IMAGE);
    if std::fs::symlink_metadata(&image).is_ok_and(|m| m.is_file()) {
        std::fs::remove_file(&image)
            .map_err(|e| format!("cannot remove {}: {e}", image.display()))?;
    }
    std::fs::remove_dir(dir).map_err(|e| format!("cannot remove {}: {e}", dir.display()))
}

/// Every attached loop device and its backing file (/sys/block/loopN/loop/backing_file).
fn loop_devices() -> Vec<(PathBuf, PathBuf)> {
    let mut found = Vec::new();
    for e in std::fs::read_dir("/sys/block")
        .into_iter()
        .flatten()
        .flatten()
    {
        let name = e.file_name().to_string_lossy().into_owned();
        if !name.starts_with("loop") {
            continue;
        }
        let Ok(file) = std::fs::read_to_string(e.path().join("loop/backing_file")) else {
            continue;
        };
        let file = file.trim_end_matches('\n');
        // An image whose directory was removed under it.
        let file = file.strip_suffix(" (deleted)").unwrap_or(file);
        found.push((Path::new("/dev").join(&name), PathBuf::from(file)));
    }
    found.sort();
    found
}

/// A line of /proc/self/mounts.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Mount {
    source: String,
    at: PathBuf,
    fstype: String,
    options: String,
}

/// The mounts of a mount table's text, their fields unescaped (`\040` is a space).
fn mount_table(text: &str) -> Vec<Mount> {
    text.lines()
        .filter_map(|line| {
            let mut f = line.split(' ');
            Some(Mount {
                source: unescape(f.next()?),
                at: PathBuf::from(unescape(f.next()?)),
                fstype: unescape(f.next()?),
                options: unescape(f.next()?),
            })
        })
        .collect()
}

/// A field of the mount table with its octal escapes (`\040`, `\011`, `\012`, `\134`) undone.
fn unescape(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let octal = bytes
            .get(i + 1..i + 4)
            .filter(|d| bytes[i] == b'\\' && d.iter().all(|b| (b'0'..=b'7').contains(b)));
        match octal {
            Some(d) => {
                let v = d.iter().fold(0u32, |v, b| v * 8 + u32::from(b - b'0'));
                out.push(v as u8);
                i += 4;
            }
            None => {
                out.push(bytes[i]);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Adds verify's groups below cgroup hierarchy `root` to `found` (not below them: verify makes
/// none there), searching [`CGROUP_DEPTH`] levels and at most [`CGROUP_DIRS`] directories;
/// links are not followed.
fn find_groups(root: &Path, found: &mut BTreeSet<PathBuf>) {
    let mut stack = vec![(root.to_path_buf(), 0)];
    let mut visited = 0;
    while let Some((dir, depth)) = stack.pop() {
        visited += 1;
        if visited > CGROUP_DIRS {
            return;
        }
        for e in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            if !e.file_type().is_ok_and(|t| t.is_dir()) {
                continue;
            }
            let path = e.path();
            if names::group_pid(&e.file_name().to_string_lossy()).is_some() {
                found.insert(path);
            } else if depth + 1 < CGROUP_DEPTH {
                stack.push((path, depth + 1));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mount_table_is_read_with_its_escapes() {
        let text = "peakbench-verify /tmp/a\\040b/peakbench-verify-12-aB3xZ9 tmpfs rw,size=66560k,mode=700 0 0\n\
                    cgroup /sys/fs/cgroup/blkio cgroup rw,nosuid,blkio 0 0\n";
        let m = mount_table(text);
        assert_eq!(m.len(), 2);
        assert_eq!(m[0].source, "peakbench-verify");
        assert_eq!(
            m[0].at,
            PathBuf::from("/tmp/a b/peakbench-verify-12-aB3xZ9")
        );
        assert_eq!(temp_dir_pid(&m[0].at), Some(12));
        assert_eq!(m[1].fstype, "cgroup");
        assert_eq!(m[1].options, "rw,nosuid,blkio");
        assert_eq!(unescape("a\\134b\\0"), "a\\b\\0");
    }

    #[test]
    fn groups_are_found_below_a_hierarchy_and_only_by_their_names() {
        let root = tempfile::tempdir().unwrap();
        let deep = root.path().join("user.slice/session-1.scope");
        for d in [
            deep.join("peakbench-verify-12"),
            root.path().join("peakbench-verify-13"),
            root.path().join("peakbench-verify-14x"),
            deep.join("peakbench-verify-15-aB3xZ9"),
        ] {
            std::fs::create_dir_all(d).unwrap();
        }
        let mut found = BTreeSet::new();
        find_groups(root.path(), &mut found);
        assert_eq!(
            found,
            BTreeSet::from([
                deep.join("peakbench-verify-12"),
                root.path().join("peakbench-verify-13")
            ])
        );
    }

    #[test]
    fn this_process_is_no_peakbench_and_a_missing_pid_is_not_running() {
        // The test binary's name (peakbench-<hash>) only starts like peakbench's.
        assert!(!running_peakbench(std::process::id()));
        assert!(!running_peakbench(u32::MAX));
    }
}
