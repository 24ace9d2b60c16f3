//! A disk of `verify`'s own: a file in a tmpfs mounted for the run, attached to a loop device.
//! Its caps are the block I/O controller's; its speed without them is memory's, far above
//! them, so what the benchmarks measure under a cap is the cap. Dropped, the loop device is
//! detached, the tmpfs unmounted and its directory (`peakbench-verify-<pid>-XXXXXX` in the
//! temporary directory) removed.

use super::names;
use super::sandbox::run;
use std::os::unix::fs::MetadataExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};

pub struct LoopDisk {
    /// /dev/loopN.
    pub device: PathBuf,
    /// Its device number, as the cgroup files name it: "7:0".
    pub number: String,
    dir: Option<tempfile::TempDir>,
    mounted: bool,
    attached: bool,
}

impl LoopDisk {
    /// A loop device of `size` bytes over a file in a tmpfs of its own.
    pub fn new(size: u64) -> Result<LoopDisk, String> {
        let dir = tempfile::Builder::new()
            .prefix(&names::temp_prefix(std::process::id()))
            .rand_bytes(names::TEMP_RANDOM)
            .tempdir()
            .map_err(|e| format!("cannot make a temporary directory: {e}"))?;
        let path = dir.path().to_path_buf();
        let mut disk = LoopDisk {
            device: PathBuf::new(),
            number: String::new(),
            dir: Some(dir),
            mounted: false,
            attached: false,
        };
        let mount_at = path.to_string_lossy().into_owned();
        run(
            "mount",
            &[
                "-t",
                "tmpfs",
                "-o",
                &format!("size={}k,mode=0700", size / 1024 + 1024),
                names::MOUNT_SOURCE,
                &mount_at,
            ],
        )?;
        disk.mounted = true;
        let image = path.join(names::IMAGE);
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&image)
            .map_err(|e| format!("cannot create {}: {e}", image.display()))?;
        file.set_len(size)
            .map_err(|e| format!("cannot size {}: {e}", image.display()))?;
        drop(file);
        let out = std::process::Command::new("losetup")
            .args(["--find", "--show"])
            .arg(&image)
            .stdin(std::process::Stdio::null())
            .process_group(0)
            .output()
            .map_err(|e| format!("cannot run losetup: {e}"))?;
        let device = String::from_utf8_lossy(&out.stdout).trim().to_string();
        if !out.status.success() || !device.starts_with("/dev/loop") {
            return Err(crate::text::printable(&format!(
                "losetup could not attach a loop device: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            )));
        }
        disk.device = PathBuf::from(&device);
        disk.attached = true;
        let rdev = std::fs::metadata(&disk.device)
            .map_err(|e| format!("cannot stat {device}: {e}"))?
            .rdev();
        disk.number = format!("{}:{}", libc::major(rdev), libc::minor(rdev));
        Ok(disk)
    }
}

impl Drop for LoopDisk {
    fn drop(&mut self) {
        if self.attached
            && let Err(e) = detach(&self.device)
        {
            eprintln!("peakbench: warning: {e}");
        }
        if self.mounted
            && let Some(d) = &self.dir
            && let Err(e) = unmount(d.path())
        {
            eprintln!("peakbench: warning: {e}");
        }
        // The directory itself (empty once unmounted).
        drop(self.dir.take());
    }
}

/// Detaches loop device `device`.
pub fn detach(device: &Path) -> Result<(), String> {
    run("losetup", &["-d", &device.to_string_lossy()])
}

/// Unmounts the tmpfs on `dir`; a loop device just detached may hold its file for a moment.
pub fn unmount(dir: &Path) -> Result<(), String> {
    let at = dir.to_string_lossy().into_owned();
    let mut outcome = run("umount", &[&at]);
    for _ in 0..50 {
        if outcome.is_ok() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
        outcome = run("umount", &[&at]);
    }
    outcome
}
