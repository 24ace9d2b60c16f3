//! One I/O thread of a repetition: its plan (its region of the file, the pattern and mix, the
//! queue depth, the ramp and the end), the loop that keeps its queue full through an engine
//! and counts what completes after the ramp, and the readying of its region before the timed
//! window.

use super::DiskError;
use super::engine::{Completion, Dir, Engine};
use super::target::Target;
use crate::bench::rng::SplitMix64;
use crate::measure::latency::histogram as new_hist;
use crate::measure::steady::Steady;
use crate::results::params::{IoPattern, SyncMode};
use crate::runner::stop;
use hdrhistogram::Histogram;
use std::time::{Duration, Instant};

/// What one thread measured in one repetition.
pub(super) struct ThreadStats {
    pub(super) read_bytes: u64,
    pub(super) written_bytes: u64,
    pub(super) ios: u64,
    pub(super) window: Duration,
    /// Time of the final fdatasync (inside `window`).
    pub(super) sync: Duration,
    pub(super) hist: Histogram<u64>,
    /// Bytes completed in each interval (`Plan::interval`) after the ramp.
    pub(super) timeline: Vec<u64>,
}

pub(super) use crate::measure::timeline::MAX_INTERVALS;

/// The interval of a point's timeline: a twentieth of a timed repetition, between 10 ms and
/// one second (fio's and iperf3's default), or 100 ms for fixed work.
pub(super) fn timeline_interval(runtime: Duration, fixed_work: bool) -> Duration {
    if fixed_work {
        Duration::from_millis(100)
    } else {
        crate::measure::timeline::interval_of(runtime)
    }
}

/// The per-thread plan of one repetition.
#[derive(Clone, Copy)]
pub(super) struct Plan {
    pub(super) block: u64,
    /// This thread's region of its file: [start, start + blocks × block).
    pub(super) start: u64,
    pub(super) blocks: u64,
    pub(super) pattern: IoPattern,
    /// A stride read's distance between two blocks it reads, in blocks.
    pub(super) stride: u64,
    pub(super) read_percent: u32,
    /// Each block read from file 0 is written to the same place of file 1.
    pub(super) copy: bool,
    /// The written file's region has its blocks released before each repetition (COPY's
    /// destination, WNEW's file), so that each write allocates its block.
    pub(super) fresh: bool,
    /// The region is read once before each repetition, through the page cache (REREAD).
    pub(super) pre_read: bool,
    pub(super) depth: usize,
    pub(super) ramp: Duration,
    pub(super) runtime: Duration,
    /// Bytes to move after the ramp, where the repetition ends on work, not time.
    pub(super) quota: Option<u64>,
    pub(super) seed: u64,
    pub(super) sync: SyncMode,
    /// The length of an interval of the timeline.
    pub(super) interval: Duration,
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
/// the destination), for the syncs. With `steady` (`--sustain`), the thread reports each
/// interval it has passed, and ends at the end of the interval it is in once the repetition's
/// rate is steady.
pub(super) fn run_thread<E: Engine>(
    engine: &mut E,
    plan: Plan,
    target: &Target,
    fds: &[std::os::unix::io::RawFd],
    (sync, steady): (bool, Option<&Steady>),
) -> Result<ThreadStats, DiskError> {
    let mut tally = Tally::new(plan.interval);
    let mut picker = Picker::new(&plan);
    let mut submitted = vec![Instant::now(); plan.depth];
    let mut done: Vec<Completion> = Vec::with_capacity(plan.depth);
    // What each slot has in flight: its direction, file and offset.
    let mut inflight = vec![(Dir::Read, 0usize, 0u64); plan.depth];
    let start = Instant::now();
    let ramp_end = start + plan.ramp;
    // A repetition of fixed work has no deadline but a generous bound (a stalled device).
    let mut deadline = ramp_end
        + if plan.quota.is_some() {
            Duration::from_secs(3600)
        } else {
            plan.runtime
        };
    let io_err = |e: std::io::Error| io_error(target, e);
    let fsync_each = sync && plan.sync == SyncMode::FsyncEach;
    for slot in 0..plan.depth {
        let (dir, file, off) = picker.pick(&plan);
        inflight[slot] = (dir, file, off);
        submitted[slot] = Instant::now();
        engine.queue(slot, dir, file, off).map_err(io_err)?;
    }
    let mut in_flight = plan.depth;
    let mut stopping = false;
    let mut failure = None;
    // A timed repetition counts the bytes and I/Os that completed by its deadline, over exactly
    // its runtime: those still in flight then are drained, their latencies kept, but not
    // counted (one held back by a throttling device could otherwise stretch the window by its
    // wait).
    let mut at_deadline: Option<Tally> = None;
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
                    // fsync-each: the write is done when it is durable (what an engine holds
                    // flushed first, as fflush before fsync).
                    if fsync_each && dir == Dir::Write {
                        if let Err(e) = engine.flush().and_then(|()| sync_fd(fds[file], false)) {
                            failure = failure.or(Some(io_err(e)));
                        }
                        now = Instant::now();
                    }
                    if now >= ramp_end {
                        if plan.quota.is_none() && now > deadline && at_deadline.is_none() {
                            at_deadline = Some(tally.clone());
                        }
                        let at = tally.count(dir, *n as u64, submitted[slot], now, ramp_end);
                        if let Some(end) = steady.and_then(|s| tally.watch(s, at, ramp_end)) {
                            deadline = deadline.min(end);
                        }
                        // Fixed work: no more I/O once the quota is moved.
                        if plan.quota.is_some_and(|q| tally.bytes() >= q) {
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
                    picker.pick(&plan)
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
    // What the engine still holds is written inside the window (a library buffer's writes).
    engine.flush().map_err(io_err)?;
    let end = Instant::now();
    // Where nothing completed by the deadline (an I/O longer than the runtime), the whole
    // drain counts.
    let (tally, window) = match at_deadline {
        // The latencies keep the I/Os drained after the deadline: a stall that crossed the end
        // is a latency like any other.
        Some(t) if t.ios > 0 => (
            Tally {
                hist: tally.hist,
                ..t
            },
            deadline.saturating_duration_since(ramp_end),
        ),
        _ => (tally, end.saturating_duration_since(ramp_end)),
    };
    let mut sync_time = Duration::ZERO;
    if sync && plan.sync == SyncMode::FdatasyncEnd && tally.written_bytes > 0 {
        sync_time = final_sync(&plan, fds).map_err(io_err)?;
    }
    if stop::requested() {
        return Err(DiskError::Interrupted);
    }
    Ok(tally.into_stats(window, sync_time))
}

/// Where a thread's I/Os go, one after the other: a block of its region in the plan's order
/// (in sequence, at random, backwards, or by stride), read or written as the plan's mix says
/// (a copy reads; its writes follow its reads).
pub(super) struct Picker {
    rng: SplitMix64,
    /// The next block picked in order.
    next_seq: u64,
    /// Where the current pass of a stride read started (each pass starts a block further).
    stride_start: u64,
}

impl Picker {
    pub(super) fn new(plan: &Plan) -> Picker {
        Picker {
            rng: SplitMix64(plan.seed),
            // Backwards from the region's last block.
            next_seq: match plan.pattern {
                IoPattern::Backward => plan.blocks - 1,
                _ => 0,
            },
            stride_start: 0,
        }
    }

    /// The next block of the region: in sequence, wrapping; at random; from the last back to
    /// the first, wrapping; or every `stride`th block, each pass from the block after the
    /// last pass's first, so that a pass of passes reads every block once (IOzone's stride
    /// read with -j).
    fn block(&mut self, plan: &Plan) -> u64 {
        let b = self.next_seq;
        match plan.pattern {
            IoPattern::Random => return self.rng.below(plan.blocks),
            IoPattern::Sequential => self.next_seq = (b + 1) % plan.blocks,
            IoPattern::Backward => self.next_seq = b.checked_sub(1).unwrap_or(plan.blocks - 1),
            IoPattern::Stride => {
                self.next_seq = b + plan.stride;
                if self.next_seq >= plan.blocks {
                    self.stride_start = (self.stride_start + 1) % plan.stride.min(plan.blocks);
                    self.next_seq = self.stride_start;
                }
            }
        }
        b
    }

    /// The next I/O: its direction, file and offset.
    pub(super) fn pick(&mut self, plan: &Plan) -> (Dir, usize, u64) {
        let block = self.block(plan);
        let dir = if plan.read_percent >= 100
            || (plan.read_percent > 0 && self.rng.below(100) < plan.read_percent as u64)
            || plan.copy
        {
            Dir::Read
        } else {
            Dir::Write
        };
        (dir, 0usize, plan.start + block * plan.block)
    }
}

/// What completed after the ramp: the bytes read and written, the I/Os and their latencies, and
/// the bytes of each interval of the timeline.
#[derive(Clone)]
struct Tally {
    read_bytes: u64,
    written_bytes: u64,
    ios: u64,
    hist: Histogram<u64>,
    timeline: Vec<u64>,
    /// The timeline's interval in ns; in u64: no u128 division per I/O.
    interval_ns: u64,
    /// The intervals reported to a steady-state watch (`--sustain`).
    published: usize,
}

impl Tally {
    fn new(interval: Duration) -> Tally {
        Tally {
            read_bytes: 0,
            written_bytes: 0,
            ios: 0,
            hist: new_hist(),
            timeline: Vec::new(),
            interval_ns: (interval.as_nanos() as u64).max(1),
            published: 0,
        }
    }

    /// Counts an I/O of `n` bytes, handed to the engine at `submitted` and completed at `now`
    /// (at or after `ramp_end`): its latency, its bytes and its interval's bytes.
    /// Returns the interval `now` is in.
    fn count(
        &mut self,
        dir: Dir,
        n: u64,
        submitted: Instant,
        now: Instant,
        ramp_end: Instant,
    ) -> usize {
        let ns = now.duration_since(submitted).as_nanos() as u64;
        let _ = self.hist.record(ns.max(1));
        self.ios += 1;
        match dir {
            Dir::Read => self.read_bytes += n,
            Dir::Write => self.written_bytes += n,
        }
        let at = (now.duration_since(ramp_end).as_nanos() as u64 / self.interval_ns) as usize;
        if at < MAX_INTERVALS {
            if self.timeline.len() <= at {
                self.timeline.resize(at + 1, 0);
            }
            self.timeline[at] += n;
        }
        at
    }

    /// Reports the intervals before interval `at` (the one the last I/O completed in) to
    /// `steady`: the end of `at` once the repetition is steady.
    fn watch(&mut self, steady: &Steady, at: usize, ramp_end: Instant) -> Option<Instant> {
        while self.published < at.min(MAX_INTERVALS) {
            let b = self.timeline.get(self.published).copied().unwrap_or(0);
            steady.report(self.published, b);
            self.published += 1;
        }
        steady.steady_at().map(|_| {
            ramp_end + Duration::from_nanos(self.interval_ns.saturating_mul(at as u64 + 1))
        })
    }

    /// The bytes moved, read and written.
    fn bytes(&self) -> u64 {
        self.read_bytes + self.written_bytes
    }

    /// The thread's figures of a repetition whose timed window lasted `window`, its final
    /// sync `sync`.
    fn into_stats(self, window: Duration, sync: Duration) -> ThreadStats {
        ThreadStats {
            read_bytes: self.read_bytes,
            written_bytes: self.written_bytes,
            ios: self.ios,
            window,
            sync,
            hist: self.hist,
            timeline: self.timeline,
        }
    }
}

/// An error of an I/O during the run, as the user's error: EINVAL as O_DIRECT's likely
/// refusal, others as the target explains them (a full file system says which one).
fn io_error(target: &Target, e: std::io::Error) -> DiskError {
    // A copy-on-write file system (btrfs, ZFS) needs free space to overwrite, too.
    match e.raw_os_error() {
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
    }
}

/// The final fdatasync of a repetition that wrote, inside its timed window; returns how long
/// it took.
fn final_sync(plan: &Plan, fds: &[std::os::unix::io::RawFd]) -> std::io::Result<Duration> {
    let sync_start = Instant::now();
    // The files written: the destination of a copy, else the thread's file.
    let written = if plan.copy { &fds[1..] } else { &fds[..1] };
    for &fd in written {
        sync_fd(fd, true)?;
    }
    Ok(sync_start.elapsed())
}

/// Readies a thread's region before a repetition, outside its timed window: the region of a
/// file written into new blocks (a copy's destination, WNEW's file) has its blocks released
/// (FALLOC_FL_PUNCH_HOLE; where the file system cannot, the writes overwrite), so that each
/// repetition allocates them again as `cp` and IOzone's write do; records through the page
/// cache find none of the region cached (its pages written back and dropped,
/// POSIX_FADV_DONTNEED, as fio's invalidate) and no read-ahead for random access, except a
/// reread's, whose region is then read once.
pub(super) fn prepare(
    plan: &Plan,
    fds: &[std::os::unix::io::RawFd],
    does_io: bool,
    page_cache: bool,
) -> std::io::Result<()> {
    if !does_io {
        return Ok(());
    }
    let (start, len) = (plan.start as i64, (plan.blocks * plan.block) as i64);
    if plan.fresh
        && let Some(&written) = fds.last()
    {
        let mode = libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE;
        // SAFETY: `written` is the open file written into new blocks; punching a range past
        // its end is allowed.
        if unsafe { libc::fallocate(written, mode, start, len) } != 0 {
            let e = std::io::Error::last_os_error();
            if !matches!(
                e.raw_os_error(),
                Some(libc::EOPNOTSUPP) | Some(libc::ENOSYS)
            ) {
                return Err(e);
            }
        }
    }
    if page_cache {
        let advice = match plan.pattern {
            IoPattern::Random | IoPattern::Stride | IoPattern::Backward => libc::POSIX_FADV_RANDOM,
            IoPattern::Sequential => libc::POSIX_FADV_SEQUENTIAL,
        };
        for &fd in fds {
            sync_fd(fd, true)?;
            // SAFETY: fd is open; posix_fadvise only advises the kernel about the range.
            unsafe {
                libc::posix_fadvise(fd, start, len, libc::POSIX_FADV_DONTNEED);
                libc::posix_fadvise(fd, start, len, advice);
            }
        }
        if plan.pre_read {
            read_region(fds[0], plan.start, plan.blocks * plan.block)?;
        }
    }
    Ok(())
}

/// Reads `len` bytes of `fd` from `start`, through the page cache, in chunks of 1 MiB.
fn read_region(fd: std::os::unix::io::RawFd, start: u64, len: u64) -> std::io::Result<()> {
    let mut chunk = vec![0u8; len.clamp(1, 1 << 20) as usize];
    let mut off = 0;
    while off < len {
        let want = chunk.len().min((len - off) as usize);
        // SAFETY: `chunk` holds at least `want` bytes; fd is open for the run.
        let n = unsafe {
            libc::pread(
                fd,
                chunk.as_mut_ptr() as *mut libc::c_void,
                want,
                (start + off) as i64,
            )
        };
        match n {
            n if n < 0 => return Err(std::io::Error::last_os_error()),
            0 => break,
            n => off += n as u64,
        }
    }
    Ok(())
}
