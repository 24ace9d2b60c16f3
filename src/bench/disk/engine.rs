//! I/O engines behind one small interface, as fio's ioengines: queue an I/O, then complete at
//! least some. Each engine kind states its capabilities ([`EngineKind::caps`]); the benchmark
//! asks them (queue depth, whether there is a file to lay out and to sync), never the engine's
//! name. The loop is generic over the engine, so no call in it is dynamic.

use crate::bench::buffer::{Buffer, HugePages};
use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::os::unix::io::{FromRawFd, RawFd};

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
    /// Can move records with O_DIRECT (a library buffer cannot: it is not aligned, and it
    /// is what the engine measures).
    pub direct: bool,
    /// Holds records in a library buffer of its own (`--stream-buffer`), as stdio's FILE.
    pub stream_buffer: bool,
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
                direct: true,
                stream_buffer: false,
            },
            EngineKind::IoUring => Caps {
                name: "io_uring",
                max_depth: URING_MAX_DEPTH,
                does_io: true,
                direct: true,
                stream_buffer: false,
            },
            EngineKind::Null => Caps {
                name: "null",
                max_depth: usize::MAX,
                does_io: false,
                direct: true,
                stream_buffer: false,
            },
            EngineKind::Stream => Caps {
                name: "stream",
                max_depth: 1,
                does_io: true,
                direct: false,
                stream_buffer: true,
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
    /// Hands what the engine holds back to the kernel (a library buffer's writes: fflush),
    /// before a sync and at the end of the timed window.
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
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

/// The smallest and largest library buffer of the stream engine (`--stream-buffer`).
pub const STREAM_BUFFER_MIN: u64 = 512;
pub const STREAM_BUFFER_MAX: u64 = 64 << 20;

/// One file as a stdio FILE holds it: a read buffer and a write buffer of the library's size
/// over the same open file (two descriptors sharing one offset), and where the program is in
/// it. A seek within what the read buffer holds keeps it (as glibc's fseek); a change of
/// direction flushes the writes or drops what was read ahead.
struct StreamFile {
    reader: BufReader<File>,
    writer: BufWriter<File>,
    /// The program's position: just after its last record.
    pos: u64,
    last: Option<Dir>,
}

impl StreamFile {
    fn new(fd: RawFd, buffer: usize) -> io::Result<StreamFile> {
        let dup = |fd: RawFd| {
            // SAFETY: fd is open for the run; dup returns a new descriptor owned by the File.
            let new = unsafe { libc::dup(fd) };
            if new < 0 {
                Err(io::Error::last_os_error())
            } else {
                // SAFETY: `new` is a fresh descriptor that nothing else owns.
                Ok(unsafe { File::from_raw_fd(new) })
            }
        };
        Ok(StreamFile {
            reader: BufReader::with_capacity(buffer, dup(fd)?),
            writer: BufWriter::with_capacity(buffer, dup(fd)?),
            pos: 0,
            last: None,
        })
    }

    /// fread or fwrite of `record` at `offset`, with an fseek first where the program is not
    /// there yet.
    fn transfer(&mut self, dir: Dir, offset: u64, record: &mut [u8]) -> io::Result<usize> {
        match dir {
            Dir::Read => {
                match self.last {
                    Some(Dir::Read) if offset != self.pos => self
                        .reader
                        .seek_relative(offset.wrapping_sub(self.pos) as i64)?,
                    Some(Dir::Read) => {}
                    _ => {
                        self.writer.flush()?;
                        self.reader.seek(SeekFrom::Start(offset))?;
                    }
                }
                self.reader.read_exact(record)?;
            }
            Dir::Write => {
                if self.last != Some(Dir::Write) || offset != self.pos {
                    // Flushes what the buffer holds, then moves the shared offset.
                    self.writer.seek(SeekFrom::Start(offset))?;
                }
                self.writer.write_all(record)?;
            }
        }
        self.last = Some(dir);
        self.pos = offset + record.len() as u64;
        Ok(record.len())
    }
}

/// fread/fwrite through a library buffer (std's BufReader and BufWriter over the file), one
/// record at a time: IOzone's fread, fwrite, freread and frewrite tests.
pub struct Stream {
    files: Vec<StreamFile>,
    bufs: Buffers,
    done: Vec<Completion>,
}

impl Stream {
    /// The engine over `fds`, each with buffers of `buffer` bytes.
    pub fn new(fds: &[RawFd], bufs: Buffers, buffer: usize) -> io::Result<Stream> {
        Ok(Stream {
            files: fds
                .iter()
                .map(|&fd| StreamFile::new(fd, buffer))
                .collect::<io::Result<_>>()?,
            bufs,
            done: Vec::with_capacity(1),
        })
    }
}

impl Engine for Stream {
    fn queue(&mut self, slot: usize, dir: Dir, file: usize, offset: u64) -> io::Result<()> {
        let f = self
            .files
            .get_mut(file)
            .ok_or_else(|| io::Error::other("no such file"))?;
        // SAFETY: the slot holds `block` bytes of this engine's buffers, used by this I/O only.
        let record =
            unsafe { std::slice::from_raw_parts_mut(self.bufs.slot(slot), self.bufs.block) };
        let result = f.transfer(dir, offset, record);
        self.done.push((slot, result));
        Ok(())
    }

    fn complete(&mut self, _min: usize, out: &mut Vec<Completion>) -> io::Result<()> {
        out.append(&mut self.done);
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.files.iter_mut().try_for_each(|f| f.writer.flush())
    }
}
