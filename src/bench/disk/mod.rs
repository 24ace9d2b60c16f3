//! The disk benchmark: sequential and random reads and writes, and a mix, through an I/O engine
//! (psync, io_uring, null), with O_DIRECT by default; throughput (MB/s), IOPS and completion
//! latency percentiles from HDR histograms merged across threads.
//!
//! Latency is measured per I/O from just before it is handed to the engine (the pread/pwrite
//! call, or the io_uring submission) to the moment its completion is reaped: fio's total
//! latency `lat`, which for a synchronous engine is its `clat`. Write points end with an
//! fdatasync inside the timed window. A ramp at the start of each repetition is excluded.

pub mod engine;
pub mod target;
pub mod uring;

use crate::bench::rng::SplitMix64;
use crate::measure::latency::histogram as new_hist;
use crate::results::ResultRecord;
use crate::results::params::{DiskParams, LittlesLaw, NodeTag, Params, SyncMode};
use crate::results::{Metric, Subsystem, Unit};
use crate::runner::stop;
use crate::runner::{self, Repetition, affinity};
use crate::sysinfo::peak::{self, Peak};
pub use engine::EngineKind;
use engine::{Buffers, Completion, Dir, Engine, NullEngine, Psync};
use hdrhistogram::Histogram;
use std::fmt;
use std::str::FromStr;
use std::sync::Mutex;
use std::time::{Duration, Instant};
use target::{Place, Target};

/// A disk workload, as users type it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum DiskWorkload {
    /// Sequential read.
    Rs,
    /// Sequential write.
    Ws,
    /// Random read.
    Rr,
    /// Random write.
    Wr,
    /// Random mixed read/write (`--read-percent`).
    Rw,
    /// Sequential copy: each block read from the test file and written to a second, new file.
    Copy,
}

impl DiskWorkload {
    pub const ALL: [DiskWorkload; 6] = [
        DiskWorkload::Rs,
        DiskWorkload::Ws,
        DiskWorkload::Rr,
        DiskWorkload::Wr,
        DiskWorkload::Rw,
        DiskWorkload::Copy,
    ];

    pub fn name(self) -> &'static str {
        match self {
            DiskWorkload::Rs => "RS",
            DiskWorkload::Ws => "WS",
            DiskWorkload::Rr => "RR",
            DiskWorkload::Wr => "WR",
            DiskWorkload::Rw => "RW",
            DiskWorkload::Copy => "COPY",
        }
    }

    fn random(self) -> bool {
        matches!(self, DiskWorkload::Rr | DiskWorkload::Wr | DiskWorkload::Rw)
    }

    /// Whether it writes.
    pub fn writes(self) -> bool {
        self.read_percent(50) < 100
    }

    /// Percent of I/Os that read (a copy reads and writes every block once).
    fn read_percent(self, mixed: u32) -> u32 {
        match self {
            DiskWorkload::Rs | DiskWorkload::Rr => 100,
            DiskWorkload::Ws | DiskWorkload::Wr => 0,
            DiskWorkload::Rw => mixed,
            DiskWorkload::Copy => 50,
        }
    }
}

impl fmt::Display for DiskWorkload {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for DiskWorkload {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        DiskWorkload::ALL
            .into_iter()
            .find(|w| w.name().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| format!("unknown disk workload '{s}'; use RS, WS, RR, WR, RW or COPY"))
    }
}

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
    pub direct: bool,
    pub sync: SyncMode,
    /// Each thread on its own file of `size` bytes (as fio's jobs without a shared filename),
    /// else all on one, each in its region.
    pub file_per_thread: bool,
    /// Fixed work instead of `runtime` (`--total-bytes`): the bytes each repetition moves
    /// after its ramp, split between the threads (strong) or each thread's (weak), as fio's
    /// io_size.
    pub total_bytes: Option<u64>,
    pub scaling: crate::results::params::Scaling,
    pub reps: Repetition,
    pub peaks: DiskPeaks,
}

/// Why a disk run cannot start or go on. Each message says what to do.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum DiskError {
    #[error("directory {dir} does not exist; create it first or choose another {option}")]
    DirMissing { dir: String, option: &'static str },
    #[error("{0} is not a directory; give a directory to --dir")]
    NotADir(String),
    #[error("{0} is a directory; give a file path to --file, or use --dir")]
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
        "COPY writes a second file beside the first and {0} is a block device; measure COPY in a --dir"
    )]
    CopyNeedsFileSystem(String),
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

/// One point of the sweep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DiskPoint {
    pub workload: DiskWorkload,
    pub block: u64,
    pub threads: usize,
    pub iodepth: usize,
}

/// The bytes of I/O buffers the largest point of `opts` allocates (threads × depth × block,
/// every slot page-aligned); None when that does not even fit in 64 bits.
fn buffer_bytes(opts: &DiskOptions) -> Option<u64> {
    let max = |v: &[usize]| v.iter().copied().max().unwrap_or(1) as u64;
    let block = opts.block_sizes.iter().copied().max().unwrap_or(4096);
    let slot = block.checked_next_multiple_of(4096)?;
    max(&opts.threads)
        .checked_mul(max(&opts.iodepths))?
        .checked_mul(slot)
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
    // Fixed work: the bytes at about 1 GB/s (a point's, whatever the threads share).
    let work = match opts.total_bytes {
        Some(b) => {
            let max_threads = opts.threads.iter().copied().max().unwrap_or(1) as f64;
            b as f64 / 1e9
                * match opts.scaling {
                    crate::results::params::Scaling::Strong => 1.0,
                    crate::results::params::Scaling::Weak => max_threads,
                }
        }
        None => opts.runtime.as_secs_f64(),
    };
    let per = opts.ramp.as_secs_f64() + work + 0.02;
    Duration::from_secs_f64(layout + points(opts).len() as f64 * opts.reps.repeat as f64 * per)
}

/// Every workload × block size × thread count × queue depth.
pub fn points(opts: &DiskOptions) -> Vec<DiskPoint> {
    let mut out = Vec::new();
    for &workload in &opts.workloads {
        for &block in &opts.block_sizes {
            for &threads in &opts.threads {
                for &iodepth in &opts.iodepths {
                    out.push(DiskPoint {
                        workload,
                        block,
                        threads,
                        iodepth,
                    });
                }
            }
        }
    }
    out
}

/// What one thread measured in one repetition.
struct ThreadStats {
    read_bytes: u64,
    written_bytes: u64,
    ios: u64,
    window: Duration,
    /// Time of the final fdatasync (inside `window`).
    sync: Duration,
    hist: Histogram<u64>,
    /// Bytes completed in each interval (`Plan::interval`) after the ramp.
    timeline: Vec<u64>,
}

/// The most intervals a thread keeps (an hour of 100 ms intervals).
const MAX_INTERVALS: usize = 36_000;

/// The interval of a point's timeline: a twentieth of a timed repetition, between 10 ms and
/// one second (fio's and iperf3's default), or 100 ms for fixed work.
fn timeline_interval(runtime: Duration, fixed_work: bool) -> Duration {
    if fixed_work {
        Duration::from_millis(100)
    } else {
        (runtime / 20).clamp(Duration::from_millis(10), Duration::from_secs(1))
    }
}

/// The per-thread plan of one repetition.
#[derive(Clone, Copy)]
struct Plan {
    block: u64,
    /// This thread's region of its file: [start, start + blocks × block).
    start: u64,
    blocks: u64,
    random: bool,
    read_percent: u32,
    /// Each block read from file 0 is written to the same place of file 1.
    copy: bool,
    depth: usize,
    ramp: Duration,
    runtime: Duration,
    /// Bytes to move after the ramp, where the repetition ends on work, not time.
    quota: Option<u64>,
    seed: u64,
    sync: SyncMode,
    /// The length of an interval of the timeline.
    interval: Duration,
}

/// Makes the data written to `fd` durable (fsync, or fdatasync when `data_only`).
fn sync_fd(fd: std::os::unix::io::RawFd, data_only: bool) -> std::io::Result<()> {
    // SAFETY: fd is an open descriptor of the run's files.
    let rc = unsafe {
        if data_only {
            libc::fdatasync(fd)
        } else {
            libc::fsync(fd)
        }
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// The I/O loop: keeps `depth` I/Os in flight until the ramp and the runtime have passed, then
/// drains them and, after writes, syncs as `plan.sync` says; counts what completed after the
/// ramp. `fds` are the engine's files (what it reads and writes; for a copy, the source and
/// the destination), for the syncs.
fn run_thread<E: Engine>(
    engine: &mut E,
    plan: Plan,
    target: &Target,
    fds: &[std::os::unix::io::RawFd],
    sync: bool,
) -> Result<ThreadStats, DiskError> {
    let mut hist = new_hist();
    let mut rng = SplitMix64(plan.seed);
    let mut next_seq = 0u64;
    let mut submitted = vec![Instant::now(); plan.depth];
    let mut done: Vec<Completion> = Vec::with_capacity(plan.depth);
    let (mut read_bytes, mut written_bytes, mut ios) = (0u64, 0u64, 0u64);
    let mut timeline: Vec<u64> = Vec::new();
    // In u64: no u128 division per I/O.
    let interval_ns = (plan.interval.as_nanos() as u64).max(1);
    // What each slot has in flight: its direction, file and offset.
    let mut inflight = vec![(Dir::Read, 0usize, 0u64); plan.depth];
    let mut pick = |rng: &mut SplitMix64| {
        let block = if plan.random {
            rng.below(plan.blocks)
        } else {
            let b = next_seq;
            next_seq = (next_seq + 1) % plan.blocks;
            b
        };
        let dir = if plan.read_percent >= 100
            || (plan.read_percent > 0 && rng.below(100) < plan.read_percent as u64)
            || plan.copy
        {
            Dir::Read
        } else {
            Dir::Write
        };
        (dir, 0usize, plan.start + block * plan.block)
    };
    let start = Instant::now();
    let ramp_end = start + plan.ramp;
    // A repetition of fixed work has no deadline but a generous bound (a stalled device).
    let deadline = ramp_end
        + if plan.quota.is_some() {
            Duration::from_secs(3600)
        } else {
            plan.runtime
        };
    // A copy-on-write file system (btrfs, ZFS) needs free space to overwrite, too.
    let io_err = |e: std::io::Error| match e.raw_os_error() {
        Some(libc::EINVAL) => DiskError::Io(format!(
            "I/O refused (EINVAL): {e}; the file system may not support O_DIRECT at this block size: try --buffered"
        )),
        _ => target.io_error(
            e,
            format!(
                "write the test file {} during the run",
                target.path.display()
            ),
        ),
    };
    let fsync_each = sync && plan.sync == SyncMode::FsyncEach;
    for slot in 0..plan.depth {
        let (dir, file, off) = pick(&mut rng);
        inflight[slot] = (dir, file, off);
        submitted[slot] = Instant::now();
        engine.queue(slot, dir, file, off).map_err(io_err)?;
    }
    let mut in_flight = plan.depth;
    let mut stopping = false;
    let mut failure = None;
    while in_flight > 0 {
        done.clear();
        engine.complete(1, &mut done).map_err(io_err)?;
        let mut now = Instant::now();
        if !stopping && (now >= deadline || stop::requested()) {
            stopping = true;
        }
        for &(slot, ref result) in &done {
            let (dir, file, off) = inflight[slot];
            match result {
                Ok(n) if *n as u64 == plan.block => {
                    // fsync-each: the write is done when it is durable.
                    if fsync_each && dir == Dir::Write {
                        if let Err(e) = sync_fd(fds[file], false) {
                            failure = failure.or(Some(io_err(e)));
                        }
                        now = Instant::now();
                    }
                    if now >= ramp_end {
                        let ns = now.duration_since(submitted[slot]).as_nanos() as u64;
                        let _ = hist.record(ns.max(1));
                        ios += 1;
                        match dir {
                            Dir::Read => read_bytes += *n as u64,
                            Dir::Write => written_bytes += *n as u64,
                        }
                        let at =
                            (now.duration_since(ramp_end).as_nanos() as u64 / interval_ns) as usize;
                        if at < MAX_INTERVALS {
                            if timeline.len() <= at {
                                timeline.resize(at + 1, 0);
                            }
                            timeline[at] += *n as u64;
                        }
                        // Fixed work: no more I/O once the quota is moved.
                        if plan.quota.is_some_and(|q| read_bytes + written_bytes >= q) {
                            stopping = true;
                        }
                    }
                }
                Ok(n) => {
                    failure = failure.or(Some(DiskError::Io(format!(
                        "short I/O: {n} of {} bytes",
                        plan.block
                    ))))
                }
                Err(e) => {
                    failure = failure.or(Some(io_err(std::io::Error::from_raw_os_error(
                        e.raw_os_error().unwrap_or(libc::EIO),
                    ))))
                }
            }
            if stopping || failure.is_some() {
                in_flight -= 1;
            } else {
                // A copy writes what it read to the same place of its destination.
                let next = if plan.copy && dir == Dir::Read {
                    (Dir::Write, 1, off)
                } else {
                    pick(&mut rng)
                };
                inflight[slot] = next;
                submitted[slot] = Instant::now();
                engine.queue(slot, next.0, next.1, next.2).map_err(io_err)?;
            }
        }
    }
    if let Some(f) = failure {
        return Err(f);
    }
    let mut sync_time = Duration::ZERO;
    if sync && plan.sync == SyncMode::FdatasyncEnd && written_bytes > 0 {
        let sync_start = Instant::now();
        // The files written: the destination of a copy, else the thread's file.
        let written = if plan.copy { &fds[1..] } else { &fds[..1] };
        for &fd in written {
            sync_fd(fd, true).map_err(io_err)?;
        }
        sync_time = sync_start.elapsed();
    }
    if stop::requested() {
        return Err(DiskError::Interrupted);
    }
    Ok(ThreadStats {
        read_bytes,
        written_bytes,
        ios,
        window: Instant::now().saturating_duration_since(ramp_end),
        sync: sync_time,
        hist,
        timeline,
    })
}

/// Readies a thread's region before a repetition, outside its timed window: a copy's
/// destination region has its blocks released (FALLOC_FL_PUNCH_HOLE; where the file system
/// cannot, the copy overwrites), so that each repetition writes into new blocks as `cp` does;
/// records that fall back to the page cache find none of the region cached (its pages written
/// back and dropped, POSIX_FADV_DONTNEED) and no read-ahead for random access.
fn prepare(
    plan: &Plan,
    fds: &[std::os::unix::io::RawFd],
    does_io: bool,
    falls_back: bool,
) -> std::io::Result<()> {
    if !does_io {
        return Ok(());
    }
    let (start, len) = (plan.start as i64, (plan.blocks * plan.block) as i64);
    if plan.copy {
        let mode = libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE;
        // SAFETY: fds[1] is the open destination; the range lies within its size.
        if unsafe { libc::fallocate(fds[1], mode, start, len) } != 0 {
            let e = std::io::Error::last_os_error();
            if !matches!(
                e.raw_os_error(),
                Some(libc::EOPNOTSUPP) | Some(libc::ENOSYS)
            ) {
                return Err(e);
            }
        }
    }
    if falls_back {
        let advice = if plan.random {
            libc::POSIX_FADV_RANDOM
        } else {
            libc::POSIX_FADV_SEQUENTIAL
        };
        for &fd in fds {
            sync_fd(fd, true)?;
            // SAFETY: fd is open; posix_fadvise only advises the kernel about the range.
            unsafe {
                libc::posix_fadvise(fd, start, len, libc::POSIX_FADV_DONTNEED);
                libc::posix_fadvise(fd, start, len, advice);
            }
        }
    }
    Ok(())
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
    let caps = opts.engine.caps();
    if opts.iodepths.iter().any(|d| *d > caps.max_depth) {
        return Err(DiskError::DepthAbove {
            engine: caps.name,
            max: caps.max_depth,
        });
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
    // The files it creates: one or one per thread, and as many copies for COPY.
    let files = if opts.file_per_thread { max_threads } else { 1 }
        * if opts.workloads.contains(&DiskWorkload::Copy) {
            2
        } else {
            1
        };
    let (path, _, block_device, _) =
        target::resolve(&opts.place, "disk-0", opts.size.saturating_mul(files))?;
    if block_device && opts.workloads.contains(&DiskWorkload::Copy) {
        return Err(DiskError::CopyNeedsFileSystem(path.display().to_string()));
    }
    Ok(())
}

/// A run: the target files, laid out once, and the options.
pub struct DiskSession<'a> {
    opts: &'a DiskOptions,
    sys: &'a crate::sysinfo::SystemInfo,
    /// The measured files: one that the threads share, or one per thread (`file_per_thread`).
    targets: Vec<Target>,
    /// COPY's destinations, one per target, created empty (as `cp` writes a new file) and
    /// emptied again before each repetition.
    copies: Vec<Target>,
    allowed: Vec<usize>,
}

impl<'a> DiskSession<'a> {
    /// Validates the options, opens the targets and lays them out (reads need real data).
    pub fn new(
        sys: &'a crate::sysinfo::SystemInfo,
        opts: &'a DiskOptions,
    ) -> Result<Self, DiskError> {
        validate(sys, opts)?;
        let caps = opts.engine.caps();
        let max_threads = *opts.threads.iter().max().unwrap_or(&1) as u64;
        let files = if opts.file_per_thread {
            max_threads as usize
        } else {
            1
        };
        let open = |place: &Place, name: String| {
            target::open(
                place,
                opts.size,
                target::Opening {
                    name: &name,
                    direct: opts.direct,
                    flags: opts.sync.open_flags(),
                },
            )
        };
        let mut targets = Vec::with_capacity(files);
        for i in 0..files {
            let mut t = open(&opts.place, format!("disk-{i}"))?;
            if caps.does_io {
                t.precondition()?;
            }
            targets.push(t);
        }
        let mut copies = Vec::new();
        if opts.workloads.contains(&DiskWorkload::Copy) {
            for (i, t) in targets.iter().enumerate() {
                if t.is_block_device {
                    return Err(DiskError::CopyNeedsFileSystem(t.path.display().to_string()));
                }
                let dir = t.path.parent().unwrap_or(std::path::Path::new("."));
                copies.push(open(&Place::Dir(dir.to_path_buf()), format!("copy-{i}"))?);
            }
        }
        Ok(DiskSession {
            opts,
            sys,
            targets,
            copies,
            allowed: affinity::allowed_cpus(),
        })
    }

    /// The (first) measured file.
    pub fn target(&self) -> &Target {
        &self.targets[0]
    }

    /// Where the I/O threads run: first on the CPUs that take the device's completion
    /// interrupts (a completion on another CPU costs a cross-CPU wake-up: on this VM's virtio
    /// disk, 4k QD1 reads go from 12.5k to 15.7k IOPS with fio pinned to the IRQ's CPU), then
    /// on the others, as the CPU benchmark places them.
    fn placement(&self, threads: usize) -> affinity::Placement {
        let mut p = affinity::place(threads, &self.allowed, &self.sys.cpu.logical);
        let irq: Vec<usize> = self
            .target()
            .device
            .as_ref()
            .map(|d| {
                d.irq_cpus
                    .iter()
                    .copied()
                    .filter(|c| self.allowed.contains(c))
                    .collect()
            })
            .unwrap_or_default();
        let rest = p.cpus.iter().copied().filter(|c| !irq.contains(c));
        let order: Vec<usize> = irq.iter().copied().chain(rest).collect();
        let mut seen = std::collections::BTreeSet::new();
        let unique: Vec<usize> = order.into_iter().filter(|c| seen.insert(*c)).collect();
        if !unique.is_empty() {
            p.cpus = (0..threads).map(|i| unique[i % unique.len()]).collect();
        }
        p
    }

    /// Runs one point: its throughput, IOPS and latency records.
    pub fn run(
        &self,
        point: DiskPoint,
        tick: &mut dyn FnMut(),
    ) -> Result<Vec<ResultRecord>, DiskError> {
        let opts = self.opts;
        let placement = self.placement(point.threads);
        // Each thread's region: its whole file, or its share of the one file.
        let sharing = if opts.file_per_thread {
            1
        } else {
            point.threads as u64
        };
        let region_blocks = self.target().size / point.block / sharing;
        let stats: Mutex<Vec<Vec<ThreadStats>>> =
            Mutex::new((0..point.threads).map(|_| Vec::new()).collect());
        let failure: Mutex<Option<DiskError>> = Mutex::new(None);
        let copy = point.workload == DiskWorkload::Copy;
        let falls_back = self.target().falls_back(point.block);
        let round = std::sync::atomic::AtomicU64::new(0);
        let reps = Repetition {
            warmup: 0,
            repeat: opts.reps.repeat,
        };
        runner::run_rounds(
            &placement.cpus,
            reps,
            |i| {
                if failure.lock().expect("failure").is_some() {
                    return;
                }
                let file = if opts.file_per_thread { i } else { 0 };
                let target = &self.targets[file];
                let mut fds = vec![target.fd_for(point.block).0];
                if copy {
                    fds.push(self.copies[file].fd_for(point.block).0);
                }
                let plan = Plan {
                    block: point.block,
                    start: (i as u64 % sharing) * region_blocks * point.block,
                    blocks: region_blocks,
                    random: point.workload.random(),
                    read_percent: point.workload.read_percent(opts.read_percent),
                    copy,
                    depth: point.iodepth,
                    ramp: opts.ramp,
                    runtime: opts.runtime,
                    quota: opts.total_bytes.map(|t| match opts.scaling {
                        crate::results::params::Scaling::Strong => {
                            (t / point.threads as u64).max(1)
                        }
                        crate::results::params::Scaling::Weak => t,
                    }),
                    seed: (i as u64) << 32
                        ^ round.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
                    sync: opts.sync,
                    interval: timeline_interval(opts.runtime, opts.total_bytes.is_some()),
                };
                let does_io = opts.engine.caps().does_io;
                let result = prepare(&plan, &fds, does_io, falls_back)
                    .map_err(|e| target.io_error(e, format!("prepare {}", target.path.display())))
                    .and_then(|()| {
                        Buffers::new(point.block as usize, point.iodepth, plan.seed)
                            .map_err(|e| DiskError::Io(format!("cannot allocate I/O buffers: {e}")))
                    })
                    .and_then(|bufs| match opts.engine {
                        EngineKind::Psync => {
                            run_thread(&mut Psync::new(&fds, bufs), plan, target, &fds, does_io)
                        }
                        EngineKind::IoUring => uring::Uring::new(&fds, bufs)
                            .map_err(|e| DiskError::UringUnavailable(e.to_string()))
                            .and_then(|mut u| run_thread(&mut u, plan, target, &fds, does_io)),
                        EngineKind::Null => run_thread(
                            &mut NullEngine::new(point.block as usize, point.iodepth),
                            plan,
                            target,
                            &fds,
                            does_io,
                        ),
                    });
                match result {
                    Ok(s) => stats.lock().expect("stats")[i].push(s),
                    Err(e) => {
                        failure.lock().expect("failure").get_or_insert(e);
                    }
                }
            },
            |_| {},
            |_| tick(),
        )
        .map_err(|e| DiskError::Io(format!("could not pin a thread: {e}")))?;
        if let Some(e) = failure.into_inner().expect("failure") {
            return Err(e);
        }
        Ok(self.records(point, &placement.cpus, stats.into_inner().expect("stats")))
    }

    fn records(
        &self,
        point: DiskPoint,
        cpus: &[usize],
        stats: Vec<Vec<ThreadStats>>,
    ) -> Vec<ResultRecord> {
        let opts = self.opts;
        let falls_back = self.target().falls_back(point.block);
        let reps = stats.iter().map(|s| s.len()).min().unwrap_or(0);
        let (mut mbps, mut iops, mut mean_us) = (Vec::new(), Vec::new(), Vec::new());
        let mut all = new_hist();
        let (mut read_total, mut written_total) = (0u64, 0u64);
        for r in 0..reps {
            let round: Vec<&ThreadStats> = stats.iter().map(|s| &s[r]).collect();
            let window = round
                .iter()
                .map(|s| s.window)
                .max()
                .unwrap_or_default()
                .as_secs_f64()
                .max(1e-9);
            let bytes: u64 = round.iter().map(|s| s.read_bytes + s.written_bytes).sum();
            let ios: u64 = round.iter().map(|s| s.ios).sum();
            read_total += round.iter().map(|s| s.read_bytes).sum::<u64>();
            written_total += round.iter().map(|s| s.written_bytes).sum::<u64>();
            mbps.push(bytes as f64 / window / 1e6);
            iops.push(ios as f64 / window);
            let mut h = new_hist();
            for s in &round {
                let _ = h.add(&s.hist);
            }
            mean_us.push(h.mean() / 1000.0);
            let _ = all.add(&h);
        }
        let sync_s = stats
            .iter()
            .flatten()
            .map(|s| s.sync.as_secs_f64())
            .fold(0.0, f64::max);
        let read_share = if read_total + written_total > 0 {
            read_total as f64 / (read_total + written_total) as f64
        } else {
            1.0
        };
        // Little's law: outstanding I/Os = IOPS × mean latency.
        let iops_mean = iops.iter().sum::<f64>() / iops.len().max(1) as f64;
        let lat_mean_s = all.mean() / 1e9;
        let expected = (point.threads * point.iodepth) as f64 / lat_mean_s.max(1e-12);
        let ratio = iops_mean / expected;
        let mut params = DiskParams {
            threads: point.threads,
            iodepth: point.iodepth,
            block_size_bytes: point.block,
            engine: opts.engine,
            io_mode: if opts.direct && !falls_back {
                "direct"
            } else {
                "buffered"
            }
            .into(),
            io_mode_reason: falls_back.then(|| {
                format!(
                    "{} B records are not whole {}-byte logical blocks, which O_DIRECT needs: through the page cache, each thread's region written back and dropped from it (POSIX_FADV_DONTNEED) before each repetition{}",
                    point.block,
                    self.target().align,
                    if point.workload.random() {
                        ", read-ahead off (POSIX_FADV_RANDOM)"
                    } else {
                        ""
                    }
                )
            }),
            sync: opts.sync,
            file_per_thread: opts.file_per_thread,
            pattern: if point.workload.random() {
                "random"
            } else {
                "sequential"
            }
            .into(),
            read_percent: point.workload.read_percent(opts.read_percent),
            file_size_bytes: self.target().size,
            runtime_s: if opts.total_bytes.is_some() {
                0.0
            } else {
                opts.runtime.as_secs_f64()
            },
            total_bytes: opts.total_bytes,
            scaling: opts.total_bytes.map(|_| opts.scaling),
            ramp_s: opts.ramp.as_secs_f64(),
            final_sync_s: sync_s,
            cpus: cpus.to_vec(),
            target: self.target().path.display().to_string(),
            device: self.target().device.as_ref().map(|d| d.name.clone()),
            file_system: self.target().file_system.clone(),
            littles_law: LittlesLaw {
                outstanding: point.threads * point.iodepth,
                expected_iops: expected,
                ratio,
                within_5_percent: (ratio - 1.0).abs() <= 0.05,
            },
            latency_definition: None,
            node: NodeTag::default(),
        };
        let label = point.workload.name();
        let mut out = vec![
            ResultRecord::new(
                Subsystem::Disk,
                label,
                Params::Disk(params.clone()),
                Metric::Throughput,
                Unit::MBPerSec,
                mbps,
                self.throughput_peak(read_share),
            ),
            ResultRecord::new(
                Subsystem::Disk,
                label,
                Params::Disk(params.clone()),
                Metric::Iops,
                Unit::Iops,
                iops,
                peak::disk_iops(
                    &self.opts.peaks,
                    read_share,
                    point.block,
                    self.link(),
                    point.workload.random(),
                ),
            ),
        ];
        let definition = if opts.engine.caps().synchronous() {
            "per I/O, the duration of its synchronous call (fio's clat); samples are per-repetition means, percentiles over all repetitions"
        } else {
            "per I/O, from handing it to the engine to reaping its completion (fio's lat); samples are per-repetition means, percentiles over all repetitions"
        };
        params.latency_definition = Some(definition.into());
        let mut lat = ResultRecord::new(
            Subsystem::Disk,
            label,
            Params::Disk(params),
            Metric::Latency,
            Unit::Micros,
            mean_us,
            peak::disk_latency(
                &self.opts.peaks,
                read_share,
                point.block,
                self.link(),
                point.workload.random(),
            ),
        );
        lat.percentiles = crate::measure::latency::percentiles_s(&all);
        out.push(lat);
        // The last repetition's throughput per interval, its whole intervals only (the last
        // one may be cut by the end of the window), in B/s.
        if let Some(last) = reps.checked_sub(1) {
            let interval = timeline_interval(opts.runtime, opts.total_bytes.is_some());
            let round: Vec<&ThreadStats> = stats.iter().map(|s| &s[last]).collect();
            let window = round.iter().map(|s| s.window).min().unwrap_or_default();
            let whole = (window.as_nanos() / interval.as_nanos().max(1)) as usize;
            let mut bytes = vec![0u64; whole.min(MAX_INTERVALS)];
            for s in &round {
                for (b, v) in bytes.iter_mut().zip(&s.timeline) {
                    *b += v;
                }
            }
            if bytes.len() >= 2 {
                out[0].intervals = Some(crate::results::Intervals {
                    interval_s: interval.as_secs_f64(),
                    values: bytes
                        .iter()
                        .map(|b| *b as f64 / interval.as_secs_f64())
                        .collect(),
                });
            }
        }
        out
    }

    /// The device's link bandwidth in MB/s and how it was found, where it has one.
    fn link(&self) -> Option<(f64, String)> {
        let d = self.target().device.as_ref()?;
        d.link_bytes_per_sec.map(|b| (b / 1e6, d.link.clone()))
    }

    /// The throughput peak of the point's read/write mix (see [`peak::disk_throughput`]).
    fn throughput_peak(&self, read_share: f64) -> Result<Peak, String> {
        let device = self.target().device.as_ref();
        peak::disk_throughput(
            &self.opts.peaks,
            read_share,
            self.link(),
            &device.map_or("its device is unknown".to_string(), |d| {
                format!("{} has no link bound ({})", d.name, d.link)
            }),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    fn opts(engine: EngineKind, depth: usize, dir: &std::path::Path) -> DiskOptions {
        DiskOptions {
            workloads: vec![DiskWorkload::Ws],
            block_sizes: vec![4096],
            threads: vec![1],
            iodepths: vec![depth],
            engine,
            place: Place::Dir(dir.to_path_buf()),
            size: 4 << 20,
            runtime: Duration::from_millis(50),
            ramp: Duration::ZERO,
            read_percent: 0,
            direct: false,
            sync: SyncMode::FdatasyncEnd,
            file_per_thread: false,
            total_bytes: None,
            scaling: crate::results::params::Scaling::Strong,
            reps: Repetition {
                warmup: 0,
                repeat: 1,
            },
            peaks: DiskPeaks::default(),
        }
    }

    /// The one throughput record of a run of `o`'s only point.
    fn measure(o: &DiskOptions) -> Result<Vec<ResultRecord>, DiskError> {
        let sys = sys();
        let session = DiskSession::new(&sys, o)?;
        session.run(points(o)[0], &mut || {})
    }

    /// COPY reads each block from the test file and writes it to a second file it creates
    /// beside it: as many bytes read as written, both counted, and no file left behind.
    #[test]
    fn copy_reads_and_writes_every_block_to_a_new_file() {
        let dir = tempfile::tempdir().unwrap();
        let mut o = opts(EngineKind::Psync, 1, dir.path());
        o.workloads = vec![DiskWorkload::Copy];
        o.block_sizes = vec![64 << 10];
        o.threads = vec![2];
        o.reps.repeat = 2;
        let sys = sys();
        let session = DiskSession::new(&sys, &o).unwrap();
        assert_eq!(session.copies.len(), 1);
        let copy = session.copies[0].path.clone();
        assert!(copy.exists() && copy.parent() == Some(dir.path()));
        let recs = session.run(points(&o)[0], &mut || {}).unwrap();
        let p = recs[0].params.disk().unwrap();
        assert_eq!((p.read_percent, p.pattern.as_str()), (50, "sequential"));
        assert!(recs[0].summary.mean > 0.0);
        // The destination holds what was copied: its first block is the source's.
        let (src, dst) = (
            std::fs::read(&session.targets[0].path).unwrap(),
            std::fs::read(&copy).unwrap(),
        );
        assert!(dst.len() >= 64 << 10);
        assert_eq!(src[..64 << 10], dst[..64 << 10]);
        drop(session);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    /// Fixed work: each repetition ends when the threads have moved their share of
    /// --total-bytes (strong: split; weak: each thread all of it), whatever the runtime says;
    /// one thread's loop moves exactly its quota at depth 1, and about it at depth 8.
    #[test]
    fn fixed_work_moves_the_bytes_asked_for() {
        let dir = tempfile::tempdir().unwrap();
        let mut o = opts(EngineKind::Null, 1, dir.path());
        o.workloads = vec![DiskWorkload::Rr];
        let sys = sys();
        let session = DiskSession::new(&sys, &o).unwrap();
        for depth in [1usize, 8] {
            let plan = Plan {
                block: 4096,
                start: 0,
                blocks: 1024,
                random: true,
                read_percent: 100,
                copy: false,
                depth,
                ramp: Duration::ZERO,
                runtime: Duration::from_secs(3600),
                quota: Some(1 << 20),
                seed: 1,
                sync: SyncMode::None,
                interval: Duration::from_micros(100),
            };
            let mut engine = NullEngine::new(4096, depth);
            let st = run_thread(&mut engine, plan, session.target(), &[], false).unwrap();
            // The timeline holds every byte counted, interval by interval.
            assert_eq!(st.timeline.iter().sum::<u64>(), st.read_bytes);
            let extra = st.read_bytes - (1 << 20);
            assert!(
                extra < (depth as u64) * 4096,
                "depth {depth}: {}",
                st.read_bytes
            );
            if depth == 1 {
                assert_eq!(extra, 0);
            }
        }
        drop(session);
        for scaling in [
            crate::results::params::Scaling::Strong,
            crate::results::params::Scaling::Weak,
        ] {
            let mut o = opts(EngineKind::Psync, 1, dir.path());
            o.workloads = vec![DiskWorkload::Rr];
            o.threads = vec![2];
            o.runtime = Duration::from_secs(3600);
            o.total_bytes = Some(2 << 20);
            o.scaling = scaling;
            let start = Instant::now();
            let recs = measure(&o).unwrap();
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "ended on work, not time"
            );
            let p = recs[0].params.disk().unwrap();
            assert_eq!(
                (p.total_bytes, p.scaling, p.runtime_s),
                (Some(2 << 20), Some(scaling), 0.0)
            );
        }
    }

    /// Every --sync mode is recorded, and only fdatasync-end syncs at the end of the window.
    #[test]
    fn sync_modes_are_applied_and_recorded() {
        let dir = tempfile::tempdir().unwrap();
        for sync in [
            SyncMode::None,
            SyncMode::FdatasyncEnd,
            SyncMode::FsyncEach,
            SyncMode::OSync,
            SyncMode::ODsync,
        ] {
            let mut o = opts(EngineKind::Psync, 1, dir.path());
            o.sync = sync;
            let recs = measure(&o).unwrap();
            let p = recs[0].params.disk().unwrap();
            assert_eq!(p.sync, sync);
            assert_eq!(
                p.final_sync_s > 0.0,
                sync == SyncMode::FdatasyncEnd,
                "{sync:?}"
            );
            assert!(recs[1].summary.mean > 0.0, "{sync:?}: IOPS");
        }
        assert_eq!(SyncMode::OSync.open_flags(), libc::O_SYNC);
        assert_eq!(SyncMode::None.open_flags(), 0);
    }

    /// --file-per-thread gives each thread a file of --size bytes, laid out, removed at the end.
    #[test]
    fn a_file_per_thread() {
        let dir = tempfile::tempdir().unwrap();
        let mut o = opts(EngineKind::Psync, 1, dir.path());
        o.workloads = vec![DiskWorkload::Rr];
        o.threads = vec![1, 3];
        o.file_per_thread = true;
        let sys = sys();
        let session = DiskSession::new(&sys, &o).unwrap();
        assert_eq!(session.targets.len(), 3);
        for t in &session.targets {
            assert_eq!(t.file.metadata().unwrap().len(), o.size);
        }
        let recs = session.run(points(&o)[1], &mut || {}).unwrap();
        assert!(recs[0].params.disk().unwrap().file_per_thread);
        assert_eq!(recs[0].params.threads(), 3);
        drop(session);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        o.place = Place::File {
            path: dir.path().join("f"),
            allow_overwrite: false,
            destructive: false,
        };
        assert_eq!(
            DiskSession::new(&sys, &o).err(),
            Some(DiskError::FilePerThreadNeedsDir)
        );
    }

    /// Records from 1 B to 1 GiB are accepted; with O_DIRECT, those that are not whole
    /// logical blocks run through the page cache, and the record says so and why.
    #[test]
    fn records_of_any_size_and_the_page_cache_fallback() {
        let dir = tempfile::tempdir().unwrap();
        let mut o = opts(EngineKind::Psync, 1, dir.path());
        o.block_sizes = vec![0];
        assert_eq!(
            DiskSession::new(&sys(), &o).err(),
            Some(DiskError::BlockRange(0))
        );
        o.block_sizes = vec![MAX_BLOCK + 1];
        assert!(matches!(
            DiskSession::new(&sys(), &o).err(),
            Some(DiskError::BlockRange(_))
        ));
        o.direct = true;
        o.workloads = vec![DiskWorkload::Rr];
        for (block, fallback) in [(1u64, true), (1000, true), (4096, false)] {
            o.block_sizes = vec![block];
            match measure(&o) {
                Ok(recs) => {
                    let p = recs[0].params.disk().unwrap();
                    assert_eq!(p.io_mode == "buffered", fallback, "{block}: {p:?}");
                    assert_eq!(p.io_mode_reason.is_some(), fallback, "{block}");
                    if fallback {
                        assert!(p.io_mode_reason.as_ref().unwrap().contains("page cache"));
                    }
                    assert!(recs[1].summary.mean > 0.0);
                }
                // A file system without O_DIRECT (tmpfs) refuses the direct target at once.
                Err(DiskError::DirectUnsupported(_)) => {
                    println!(
                        "SKIPPED: O_DIRECT is not supported in {}",
                        dir.path().display()
                    );
                    return;
                }
                Err(e) => panic!("{block}: {e}"),
            }
        }
    }

    fn sys() -> crate::sysinfo::SystemInfo {
        crate::sysinfo::collect(crate::sysinfo::ClockBudget {
            warmup: Duration::from_millis(1),
            sample: Duration::from_millis(1),
            samples: 1,
        })
    }

    /// The buffers of the largest point: threads × depth × page-aligned block, and no
    /// wrap-around for absurd sizes (which are then refused as too large).
    #[test]
    fn buffer_memory_of_the_largest_point() {
        let dir = std::path::Path::new("/nonexistent");
        let mut o = opts(EngineKind::Null, 256, dir);
        o.threads = vec![1, 16];
        o.block_sizes = vec![4096, 64 << 20];
        assert_eq!(buffer_bytes(&o), Some(16 * 256 * (64 << 20)));
        o.block_sizes = vec![1000];
        o.threads = vec![1];
        o.iodepths = vec![2];
        assert_eq!(buffer_bytes(&o), Some(2 * 4096));
        o.threads = vec![usize::MAX];
        o.iodepths = vec![usize::MAX];
        assert_eq!(buffer_bytes(&o), None);
    }

    /// The engines' capabilities, not their names, decide the queue depth allowed, whether the
    /// file is laid out first and whether writes end with fdatasync.
    #[test]
    fn capabilities_decide_depth_layout_and_sync() {
        let sys = sys();
        let dir = tempfile::tempdir().unwrap();
        // Depth: psync's is 1, the null engine's has no bound.
        let psync2 = opts(EngineKind::Psync, 2, dir.path());
        let err = DiskSession::new(&sys, &psync2).err().unwrap();
        assert_eq!(
            err,
            DiskError::DepthAbove {
                engine: "psync",
                max: 1
            }
        );
        assert!(
            err.to_string()
                .contains("--engine psync keeps at most 1 I/O in flight")
        );
        let deep = opts(EngineKind::Null, 4096, dir.path());
        let session = DiskSession::new(&sys, &deep).unwrap();
        // Layout: no I/O, so the file is not written (no block allocated) ...
        let allocated = |s: &DiskSession| s.target().file.metadata().unwrap().blocks();
        assert_eq!(allocated(&session), 0);
        // ... and no final fdatasync.
        let point = points(&deep)[0];
        let recs = session.run(point, &mut || {}).unwrap();
        assert_eq!(recs[0].params.disk().unwrap().final_sync_s, 0.0);
        drop(session);
        // An engine that does I/O has its file laid out.
        let psync = opts(EngineKind::Psync, 1, dir.path());
        let session = DiskSession::new(&sys, &psync).unwrap();
        assert!(allocated(&session) * 512 >= psync.size);
    }
}
