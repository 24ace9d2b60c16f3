//! A busy process of the run's: a shell loop spinning on one CPU, so that a point on that CPU
//! shares it with another process. Killed when dropped; the kernel kills it too if this process
//! dies first (its parent-death signal), so it never outlives the run.

use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};

pub(super) struct Hog(Child);

impl Hog {
    /// Starts the loop on `cpu`, or says why it could not.
    pub(super) fn start(cpu: usize) -> Result<Hog, String> {
        let mut command = Command::new("/bin/sh");
        command
            .args(["-c", "while :; do :; done"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        // SAFETY: between fork and exec the closure makes one system call (prctl), which is
        // async-signal-safe, and allocates nothing.
        unsafe {
            command.pre_exec(|| {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = command.spawn().map_err(|e| format!("/bin/sh: {e}"))?;
        let hog = Hog(child);
        let pid = libc::pid_t::try_from(hog.0.id()).map_err(|_| "a pid out of range")?;
        crate::runner::affinity::restrict_thread(pid, &[cpu])
            .map_err(|e| format!("cannot place it on CPU {cpu}: {e}"))?;
        Ok(hog)
    }
}

impl Drop for Hog {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The loop runs on the CPU asked, and is gone once dropped.
    #[test]
    fn the_busy_process_is_placed_and_reaped() {
        let cpu = crate::runner::affinity::allowed_cpus()[0];
        let hog = Hog::start(cpu).unwrap();
        let pid = hog.0.id();
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
        let allowed = status
            .lines()
            .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
            .unwrap()
            .trim()
            .to_string();
        assert_eq!(allowed, cpu.to_string());
        drop(hog);
        assert!(!std::path::Path::new(&format!("/proc/{pid}")).exists());
    }
}
