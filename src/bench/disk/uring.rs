//! The io_uring engine: up to 256 I/Os in flight per thread, with the file and the buffers
//! registered once (fixed file, READ_FIXED/WRITE_FIXED), so that no I/O pays for looking them up
//! or pinning pages.

use super::engine::{Buffers, Completion, Dir, Engine, URING_MAX_DEPTH};
use io_uring::{IoUring, opcode, types};
use std::io;
use std::os::unix::io::RawFd;

/// The deepest queue per thread (the command line's --iodepth bound): the engine's capability,
/// stated with the others in [`super::engine`].
pub const MAX_DEPTH: usize = URING_MAX_DEPTH;

pub struct Uring {
    ring: IoUring,
    bufs: Buffers,
    /// Registered files: fixed file i is the i-th file it was made with.
    files: usize,
}

/// Whether io_uring can be used here, or why not (kernel too old, disabled by the
/// kernel.io_uring_disabled sysctl, refused by a seccomp filter).
pub fn probe() -> Result<(), String> {
    if let Some(v) = crate::sysinfo::sysfs::read_trimmed("/proc/sys/kernel/io_uring_disabled")
        && v != "0"
    {
        return Err(format!(
            "io_uring is disabled (kernel.io_uring_disabled = {v})"
        ));
    }
    IoUring::new(8)
        .map(drop)
        .map_err(|e| format!("io_uring_setup failed: {e}"))
}

impl Uring {
    pub fn new(fds: &[RawFd], bufs: Buffers) -> io::Result<Uring> {
        let entries = (bufs.depth as u32).next_power_of_two().max(2);
        // A plain ring, as fio's io_uring engine sets it up (COOP/DEFER_TASKRUN made no
        // difference measurable through this VM's noise).
        let ring = IoUring::new(entries)?;
        let iovecs: Vec<libc::iovec> = (0..bufs.depth)
            .map(|i| libc::iovec {
                iov_base: bufs.slot(i) as *mut libc::c_void,
                iov_len: bufs.block,
            })
            .collect();
        // SAFETY: the iovecs describe `bufs`, which lives as long as the ring (same struct) and
        // is not moved in memory (mmap-backed).
        unsafe { ring.submitter().register_buffers(&iovecs)? };
        ring.submitter().register_files(fds)?;
        Ok(Uring {
            ring,
            bufs,
            files: fds.len(),
        })
    }
}

impl Engine for Uring {
    fn queue(&mut self, slot: usize, dir: Dir, file: usize, offset: u64) -> io::Result<()> {
        let (p, len) = (self.bufs.slot(slot), self.bufs.block as u32);
        if file >= self.files {
            return Err(io::Error::other("no such file"));
        }
        let fd = types::Fixed(file as u32);
        let entry = match dir {
            Dir::Read => opcode::ReadFixed::new(fd, p, len, slot as u16)
                .offset(offset)
                .build(),
            Dir::Write => opcode::WriteFixed::new(fd, p, len, slot as u16)
                .offset(offset)
                .build(),
        }
        .user_data(slot as u64);
        // SAFETY: the buffer slot stays valid and unused by anything else until its completion
        // is reaped; at most `depth` entries are queued, which the ring holds.
        unsafe { self.ring.submission().push(&entry) }
            .map_err(|_| io::Error::other("io_uring submission queue full"))?;
        // Hand it to the kernel now, one I/O per enter, as fio does: batching the resubmissions
        // of a burst of completions leaves the device's queue emptier meanwhile, which cost 8 %
        // of 4k IOPS at QD8 and 15 % at QD32 on this VM's virtio disk.
        self.ring.submit()?;
        Ok(())
    }

    fn complete(&mut self, min: usize, out: &mut Vec<Completion>) -> io::Result<()> {
        // Completions already posted are reaped without entering the kernel.
        while self.ring.completion().len() < min {
            match self.ring.submit_and_wait(min) {
                Ok(_) => {}
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => {
                    if crate::runner::stop::requested() {
                        break;
                    }
                }
                Err(e) => return Err(e),
            }
        }
        for cqe in self.ring.completion() {
            let r = cqe.result();
            let result = if r < 0 {
                Err(io::Error::from_raw_os_error(-r))
            } else {
                Ok(r as usize)
            };
            out.push((cqe.user_data() as usize, result));
        }
        Ok(())
    }
}
