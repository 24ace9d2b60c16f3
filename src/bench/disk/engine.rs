//! I/O engines behind one small interface, as fio's ioengines: queue an I/O, then complete at
//! least some. Each engine kind states its capabilities ([`EngineKind::caps`]); the benchmark
//! asks them (queue depth, whether there is a file to lay out and to sync), never the engine's
//! name. The loop is generic over the engine, so no call in it is dynamic.

use crate::bench::buffer::{Buffer, HugePages};
use std::io;
use std::os::unix::io::RawFd;

/// Direction of one I/O.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dir {
    Read,
    Write,
}

pub use crate::results::params::EngineKind;

/// The deepest queue per thread of the io_uring engine (the command line's --iodepth bound).
pub const URING_MAX_DEPTH: usize = 256;

/// What an engine can do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Caps {
    pub name: &'static str,
    /// The deepest queue per thread (1: one synchronous I/O at a time).
    pub max_depth: usize,
    /// Touches the file: it is laid out (preconditioned) first, and writes end with fdatasync.
    pub does_io: bool,
}

impl Caps {
    /// One I/O at a time: its latency is the call's (fio's clat), not a queued I/O's.
    pub fn synchronous(&self) -> bool {
        self.max_depth == 1
    }
}

impl EngineKind {
    pub fn caps(self) -> Caps {
        match self {
            EngineKind::Psync => Caps {
                name: "psync",
                max_depth: 1,
                does_io: true,
            },
            EngineKind::IoUring => Caps {
                name: "io_uring",
                max_depth: URING_MAX_DEPTH,
                does_io: true,
            },
            EngineKind::Null => Caps {
                name: "null",
                max_depth: usize::MAX,
                does_io: false,
            },
        }
    }

    pub fn name(self) -> &'static str {
        self.caps().name
    }
}

/// A completed I/O: its buffer slot and the bytes moved, or the error.
pub type Completion = (usize, io::Result<usize>);

/// An I/O engine bound to a thread's files (the file it measures; for a copy, its source and
/// its destination) and one set of buffers (one per queue slot).
pub trait Engine {
    /// Queues one I/O of the block size at `offset` of file `file` (an index into the files it
    /// was made with), using buffer `slot`.
    fn queue(&mut self, slot: usize, dir: Dir, file: usize, offset: u64) -> io::Result<()>;
    /// Submits what is queued and waits until at least `min` I/Os completed; appends them.
    fn complete(&mut self, min: usize, out: &mut Vec<Completion>) -> io::Result<()>;
}

/// The buffers of one thread: `depth` blocks of `block` bytes, page-aligned (which satisfies any
/// logical block size up to 4 KiB), filled with incompressible data, on transparent huge pages
/// where the kernel gives them: a block in physically contiguous memory goes to the device as
/// one segment, while a 1 MiB block on scattered 4 KiB pages needs 256 and is split in two
/// requests on a queue that takes fewer (virtio-blk here: max_segments 254). Measured on this
/// VM, 1M reads at QD32: 2.8 GB/s on huge pages, 1.1 GB/s on 4 KiB pages (fio's malloc'd
/// buffers: 1.1 GB/s).
pub struct Buffers {
    buf: Buffer,
    pub block: usize,
    pub depth: usize,
}

impl Buffers {
    pub fn new(block: usize, depth: usize, seed: u64) -> io::Result<Buffers> {
        let buf = Buffer::new(block * depth, HugePages::On)?;
        // SAFETY: the buffer holds block × depth bytes, owned here.
        let bytes = unsafe { std::slice::from_raw_parts_mut(buf.as_ptr(), block * depth) };
        crate::bench::rng::SplitMix64(seed).fill(bytes);
        Ok(Buffers { buf, block, depth })
    }

    pub fn slot(&self, slot: usize) -> *mut u8 {
        debug_assert!(slot < self.depth);
        // SAFETY: slot < depth, so the pointer stays inside the buffer.
        unsafe { self.buf.as_ptr().add(slot * self.block) }
    }
}

/// pread/pwrite: one synchronous I/O per call.
pub struct Psync {
    fds: Vec<RawFd>,
    bufs: Buffers,
    done: Vec<Completion>,
}

impl Psync {
    pub fn new(fds: &[RawFd], bufs: Buffers) -> Psync {
        Psync {
            fds: fds.to_vec(),
            bufs,
            done: Vec::with_capacity(1),
        }
    }
}

impl Engine for Psync {
    fn queue(&mut self, slot: usize, dir: Dir, file: usize, offset: u64) -> io::Result<()> {
        let (p, len) = (self.bufs.slot(slot), self.bufs.block);
        let fd = *self
            .fds
            .get(file)
            .ok_or_else(|| io::Error::other("no such file"))?;
        // SAFETY: p points to `len` bytes of this engine's buffers; fd is open for the run.
        let n = unsafe {
            match dir {
                Dir::Read => libc::pread(fd, p as *mut libc::c_void, len, offset as i64),
                Dir::Write => libc::pwrite(fd, p as *const libc::c_void, len, offset as i64),
            }
        };
        let result = if n < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(n as usize)
        };
        self.done.push((slot, result));
        Ok(())
    }

    fn complete(&mut self, _min: usize, out: &mut Vec<Completion>) -> io::Result<()> {
        out.append(&mut self.done);
        Ok(())
    }
}

/// No I/O at all: every I/O completes at once. Measures the harness's own cost per I/O.
pub struct NullEngine {
    block: usize,
    done: Vec<Completion>,
}

impl NullEngine {
    pub fn new(block: usize, depth: usize) -> NullEngine {
        NullEngine {
            block,
            done: Vec::with_capacity(depth),
        }
    }
}

impl Engine for NullEngine {
    fn queue(&mut self, slot: usize, _dir: Dir, _file: usize, _offset: u64) -> io::Result<()> {
        self.done.push((slot, Ok(self.block)));
        Ok(())
    }

    fn complete(&mut self, _min: usize, out: &mut Vec<Completion>) -> io::Result<()> {
        out.append(&mut self.done);
        Ok(())
    }
}
