//! The disk benchmark: sequential and random reads and writes, and a mix, through an I/O engine
//! (psync, io_uring, null), with O_DIRECT by default; throughput (MB/s), IOPS and completion
//! latency percentiles from HDR histograms merged across threads.
//!
//! Latency is measured per I/O from just before it is handed to the engine (the pread/pwrite
//! call, or the io_uring submission) to the moment its completion is reaped: fio's total
//! latency `lat`, which for a synchronous engine is its `clat`. Write points end with an
//! fdatasync inside the timed window. A ramp at the start of each repetition is excluded.

pub mod engine;
mod records;
mod session;
pub mod target;
mod thread;
pub mod uring;
mod workload;

use crate::results::params::SyncMode;
use crate::runner::Repetition;
pub use engine::EngineKind;
pub use records::{planned, point_params};
pub use session::DiskSession;
use std::time::Duration;
use target::Place;
pub use workload::{DiskPoint, DiskWorkload, points};

pub use crate::sysinfo::peak::DiskPeaks;

/// What the user asked for.
#[derive(Debug, Clone)]
pub struct DiskOptions {
    pub workloads: Vec<DiskWorkload>,
    pub block_sizes: Vec<u64>,
    pub threads: Vec<usize>,
    pub iodepths: Vec<usize>,
    pub engine: EngineKind,
    pub place: Place,
    pub size: u64,
    pub runtime: Duration,
    pub ramp: Duration,
    pub read_percent: u32,
    /// RSTRIDE's distance between two blocks it reads, in blocks (IOzone's -j).
    pub stride: u64,
    /// The stream engine's library buffer, bytes.
    pub stream_buffer: u64,
    pub direct: bool,
    pub sync: SyncMode,
    /// Each thread on its own file of `size` bytes (as fio's jobs without a shared filename),
    /// else all on one, each in its region.
    pub file_per_thread: bool,
    /// Fixed work instead of `runtime` (`--total-bytes`): the bytes each repetition moves
    /// after its ramp, split between the threads (strong) or each thread's (weak), as fio's
    /// io_size.
    pub total_bytes: Option<u64>,
    /// `--sustain`: each repetition runs until its rate is steady ([`steady`]), `runtime` at
    /// most.
    pub sustain: bool,
    /// The percentiles of every I/O's latency a point reports (`--percentiles`).
    pub percentiles: crate::measure::latency::Percentiles,
    pub scaling: crate::results::params::Scaling,
    pub reps: Repetition,
    pub peaks: DiskPeaks,
    /// `--diagnose`: after its points, each below 90 % of its peak measured again with the
    /// knob of its first cause turned (the app's, `app::disk`).
    pub diagnose: bool,
    /// `--precision`: each point measured again until its interval is within the target.
    pub precision: Option<crate::measure::precision::Precision>,
}

/// Why a disk run cannot start or go on. Each message says what to do.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum DiskError {
    #[error("directory {dir} does not exist; create it first or choose another {option}")]
    DirMissing { dir: String, option: &'static str },
    #[error("{0} is not a directory; give a directory to --dir")]
    NotADir(String),
    #[error(
        "{0} is neither a regular file nor a block device (or it changed since it was checked); give a file path to --file, or use --dir"
    )]
    NotAFile(String),
    #[error(
        "{0} exists; peakbench only writes files it creates: choose a new path, or pass --allow-overwrite to destroy its contents"
    )]
    FileExists(String),
    #[error(
        "{0} is a block device; benchmarking it destroys its data: pass --destructive if that is what you want"
    )]
    BlockDeviceNeedsDestructive(String),
    #[error("{0} is on a read-only file system; choose a writable --dir")]
    ReadOnly(String),
    #[error("no permission to write {0}; choose a --dir you can write")]
    Permission(String),
    #[error(
        "not enough free space in {path}: the test file needs {need} bytes (--size and 5 % for the file system's own data) and {free} are free; free space there, give a smaller --size or choose another {option}"
    )]
    NoSpace {
        path: String,
        need: u64,
        free: u64,
        option: &'static str,
    },
    #[error(
        "cannot {doing}: {problem}; free space there, give a smaller --size or choose another {option}"
    )]
    Full {
        doing: String,
        problem: String,
        option: &'static str,
    },
    #[error(
        "the file system of {0} does not support O_DIRECT; use --buffered or a --dir on a disk file system"
    )]
    DirectUnsupported(String),
    #[error("--block-size {0} is out of range: use 1 B to 1 GiB")]
    BlockRange(u64),
    #[error("--file-per-thread needs --dir: peakbench names and creates each thread's file there")]
    FilePerThreadNeedsDir,
    #[error(
        "{workload} writes a second file beside the first and {path} is a block device; measure {workload} in a --dir"
    )]
    NewFileNeedsFileSystem {
        workload: &'static str,
        path: String,
    },
    #[error(
        "--engine {0} reads and writes through a library buffer, which O_DIRECT cannot take; add --buffered"
    )]
    EngineNeedsBuffered(&'static str),
    #[error(
        "--size {size} holds fewer than {need} blocks of {block} bytes for {threads} threads; give a larger --size"
    )]
    SizeTooSmall {
        size: u64,
        block: u64,
        threads: usize,
        need: u64,
    },
    #[error(
        "the largest point needs {need} bytes of I/O buffers (threads × iodepth × block size) and {available} bytes are available to this process; use fewer threads, a lower --iodepth or smaller blocks"
    )]
    TooMuchMemory { need: u64, available: u64 },
    #[error(
        "--engine {engine} keeps at most {max} I/O in flight per thread; use --iodepth {max} or lower, or --engine io_uring for deeper queues"
    )]
    DepthAbove { engine: &'static str, max: usize },
    #[error("--engine io_uring is not available: {0}; use --engine psync")]
    UringUnavailable(String),
    #[error("interrupted: the points measured before the signal are kept")]
    Interrupted,
    #[error(transparent)]
    WorkTooLong(#[from] crate::bench::WorkTooLong),
    #[error("{0}")]
    Io(String),
}

impl DiskError {
    /// True for errors the user can fix in the command line or the environment (exit code 2).
    pub fn is_usage(&self) -> bool {
        !matches!(self, DiskError::Io(_) | DiskError::Interrupted)
    }
}

/// The largest record: 1 GiB, the most one registered io_uring buffer may hold (a pread or
/// pwrite of it is one call; the kernel splits it into the device's requests).
pub const MAX_BLOCK: u64 = 1 << 30;

/// The bytes of I/O buffers the largest point of `opts` allocates (threads × depth × block,
/// every slot page-aligned); None when that does not even fit in 64 bits.
fn buffer_bytes(opts: &DiskOptions) -> Option<u64> {
    let max = |v: &[usize]| v.iter().copied().max().unwrap_or(1) as u64;
    let block = opts.block_sizes.iter().copied().max().unwrap_or(4096);
    let slot = block.checked_next_multiple_of(4096)?;
    // A library buffer to read and one to write, per thread.
    let stream = if opts.engine.caps().stream_buffer {
        opts.stream_buffer.checked_mul(2)?
    } else {
        0
    };
    max(&opts.threads).checked_mul(max(&opts.iodepths).checked_mul(slot)?.checked_add(stream)?)
}

/// About how long one repetition's fixed work (`--total-bytes`) takes at `threads` threads:
/// the bytes at about 1 GB/s (a point's, whatever the threads share); None for a timed one.
fn work_secs(opts: &DiskOptions, threads: usize) -> Option<f64> {
    let b = opts.total_bytes? as f64;
    Some(match opts.scaling {
        crate::results::params::Scaling::Strong => b / 1e9,
        crate::results::params::Scaling::Weak => b / 1e9 * threads as f64,
    })
}

/// About how long the points of `opts` take (a plan, not a promise): each file laid out
/// (written whole at about 1 GB/s, then synced; none for an engine that does no I/O), then per
/// repetition of each point its ramp and runtime, and its preparation and final sync (about
/// 20 ms).
pub fn estimate(opts: &DiskOptions) -> Duration {
    let files = if opts.file_per_thread {
        opts.threads.iter().copied().max().unwrap_or(1)
    } else {
        1
    };
    let layout = if opts.engine.caps().does_io {
        files as f64 * opts.size as f64 / 1e9 + 0.1
    } else {
        0.0
    };
    let max_threads = opts.threads.iter().copied().max().unwrap_or(1);
    let work = work_secs(opts, max_threads).unwrap_or(opts.runtime.as_secs_f64());
    let per = opts.ramp.as_secs_f64() + work + 0.02;
    // Under --precision, the most repetitions a point may take.
    let repeat = crate::measure::precision::worst_repeat(opts.reps.repeat, opts.precision);
    crate::units::estimate_secs(layout + points(opts).len() as f64 * repeat as f64 * per)
}

/// Checks `opts` on `sys` before anything is created: record sizes, queue depths the engine
/// keeps, io_uring there, a file per thread only in a directory, a block per thread, the I/O
/// buffers of the largest point within memory, and the place (it exists, nothing there is
/// overwritten without the flag, the files fit its free space).
pub fn validate(sys: &crate::sysinfo::SystemInfo, opts: &DiskOptions) -> Result<(), DiskError> {
    for &b in &opts.block_sizes {
        if !(1..=MAX_BLOCK).contains(&b) {
            return Err(DiskError::BlockRange(b));
        }
    }
    let threads = opts.threads.iter().copied().max().unwrap_or(1);
    if let (Some(bytes), Some(seconds)) = (opts.total_bytes, work_secs(opts, threads)) {
        crate::bench::WorkTooLong {
            option: "--total-bytes",
            amount: crate::units::format_bytes_binary(bytes),
            scaling: opts.scaling,
            threads,
            seconds,
            rate: "about 1 GB/s",
            timed: "--runtime",
        }
        .check()?;
    }
    let caps = opts.engine.caps();
    if opts.iodepths.iter().any(|d| *d > caps.max_depth) {
        return Err(DiskError::DepthAbove {
            engine: caps.name,
            max: caps.max_depth,
        });
    }
    if !caps.direct && opts.direct {
        return Err(DiskError::EngineNeedsBuffered(caps.name));
    }
    if opts.engine == EngineKind::IoUring {
        uring::probe().map_err(DiskError::UringUnavailable)?;
    }
    if opts.file_per_thread && !matches!(opts.place, Place::Dir(_)) {
        return Err(DiskError::FilePerThreadNeedsDir);
    }
    let max_block = *opts.block_sizes.iter().max().unwrap_or(&4096);
    let max_threads = *opts.threads.iter().max().unwrap_or(&1) as u64;
    // Each thread needs a block of its own: of its file, or of the shared one.
    let sharing = if opts.file_per_thread { 1 } else { max_threads };
    if opts.size / max_block < sharing {
        return Err(DiskError::SizeTooSmall {
            size: opts.size,
            block: max_block,
            threads: max_threads as usize,
            need: sharing,
        });
    }
    // The buffers of the largest point, checked before anything is allocated or created.
    let need = buffer_bytes(opts).unwrap_or(u64::MAX);
    if let Some(&available) = sys.memory.available_bytes.get()
        && need > available / 10 * 9
    {
        return Err(DiskError::TooMuchMemory { need, available });
    }
    // The files it creates: one or one per thread, and as many new files for COPY and WNEW.
    let new_file = opts.workloads.iter().find(|w| w.new_blocks());
    let files =
        if opts.file_per_thread { max_threads } else { 1 } * if new_file.is_some() { 2 } else { 1 };
    let (path, _, block_device, _) =
        target::resolve(&opts.place, "disk-0", opts.size.saturating_mul(files))?;
    if let (true, Some(w)) = (block_device, new_file) {
        return Err(DiskError::NewFileNeedsFileSystem {
            workload: w.name(),
            path: path.display().to_string(),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests;
