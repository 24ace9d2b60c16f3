//! The disk benchmark's unit tests: options refused, sessions laid out and removed, and
//! points run through each engine, sync mode and placement of the files.

use super::engine::{Buffers, NullEngine, Psync, Stream};
use super::thread::{Plan, run_thread};
use super::*;
use crate::results::params::SyncMode;
use crate::results::{Metric, ResultRecord};
use crate::runner::Repetition;
use std::os::unix::fs::MetadataExt;
use std::time::Instant;

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
        stride: 17,
        stream_buffer: 64 << 10,
        direct: false,
        sync: SyncMode::FdatasyncEnd,
        file_per_thread: false,
        total_bytes: None,
        sustain: false,
        percentiles: Default::default(),
        scaling: crate::results::params::Scaling::Strong,
        reps: Repetition {
            warmup: 0,
            repeat: 1,
        },
        peaks: DiskPeaks::default(),
        diagnose: false,
        precision: None,
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
    assert_eq!((p.read_percent, p.pattern.name()), (50, "sequential"));
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
            pattern: crate::results::params::IoPattern::Random,
            stride: 17,
            read_percent: 100,
            copy: false,
            fresh: false,
            pre_read: false,
            depth,
            ramp: Duration::ZERO,
            runtime: Duration::from_secs(3600),
            quota: Some(1 << 20),
            seed: 1,
            sync: SyncMode::None,
            interval: Duration::from_micros(100),
        };
        let mut engine = NullEngine::new(4096, depth);
        let st = run_thread(&mut engine, plan, session.target(), &[], (false, None)).unwrap();
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
                assert_eq!(
                    p.io_mode == crate::results::params::IoMode::Buffered,
                    fallback,
                    "{block}: {p:?}"
                );
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

/// Finding 5: the largest fixed work at the most threads, depths and repetitions saturates the
/// estimate instead of panicking, and the check refuses it by its time, in one line.
#[test]
fn a_fixed_amount_beyond_a_day_saturates_the_estimate_and_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = opts(EngineKind::Null, 256, dir.path());
    o.total_bytes = Some(u64::MAX);
    o.scaling = crate::results::params::Scaling::Weak;
    o.threads = (1..=128).collect();
    o.iodepths = (1..=256).collect();
    o.reps.repeat = 1000;
    assert_eq!(estimate(&o), Duration::MAX);
    let err = validate(&sys(), &o).unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, DiskError::WorkTooLong(_)), "{text}");
    assert!(err.is_usage());
    assert!(
        text.contains("more than 24 h") && text.contains("--runtime"),
        "{text}"
    );
    assert!(!text.contains('\n'), "{text}");
    // A day's bytes at 1 GB/s pass.
    o.total_bytes = Some(86_000_000_000_000);
    o.scaling = crate::results::params::Scaling::Strong;
    o.iodepths = vec![1];
    o.threads = vec![1];
    assert!(!matches!(
        validate(&sys(), &o),
        Err(DiskError::WorkTooLong(_))
    ));
    assert!(estimate(&o) < Duration::MAX);
}

/// A plan of one thread over `blocks` blocks of 4 KiB in `pattern`, reading `quota` bytes.
fn iozone_plan(pattern: crate::results::params::IoPattern, blocks: u64, quota: u64) -> Plan {
    Plan {
        block: 4096,
        start: 0,
        blocks,
        pattern,
        stride: 3,
        read_percent: 100,
        copy: false,
        fresh: false,
        pre_read: false,
        depth: 1,
        ramp: Duration::ZERO,
        runtime: Duration::from_secs(3600),
        quota: Some(quota),
        seed: 1,
        sync: SyncMode::None,
        interval: Duration::from_millis(100),
    }
}

/// The blocks a picker visits: backwards from the last, wrapping to the last again; by
/// stride, each pass a block further, so that `stride` passes read every block once.
#[test]
fn backward_and_stride_orders() {
    use crate::results::params::IoPattern;
    let blocks = |pattern, n: u64, count| {
        let plan = iozone_plan(pattern, n, 0);
        let mut p = super::thread::Picker::new(&plan);
        (0..count)
            .map(|_| p.pick(&plan).2 / 4096)
            .collect::<Vec<_>>()
    };
    assert_eq!(blocks(IoPattern::Backward, 5, 7), [4, 3, 2, 1, 0, 4, 3]);
    assert_eq!(
        blocks(IoPattern::Stride, 10, 12),
        [0, 3, 6, 9, 1, 4, 7, 2, 5, 8, 0, 3]
    );
    // A region smaller than the stride: each pass is one block.
    assert_eq!(blocks(IoPattern::Stride, 2, 5), [0, 1, 0, 1, 0]);
    assert_eq!(blocks(IoPattern::Sequential, 3, 4), [0, 1, 2, 0]);
}

/// Each of IOzone's read operations reads for real, through pread and through a library
/// buffer: exactly the bytes asked for, none written, and what it read is the file's.
#[test]
fn iozone_reads_move_the_bytes_of_their_work_model() {
    use crate::results::params::IoPattern;
    let dir = tempfile::tempdir().unwrap();
    let mut o = opts(EngineKind::Psync, 1, dir.path());
    o.workloads = vec![DiskWorkload::Rb];
    o.size = 1 << 20;
    let sys = sys();
    let session = DiskSession::new(&sys, &o).unwrap();
    let t = session.target();
    let fd = t.fd_for(4096).0;
    for pattern in [
        IoPattern::Backward,
        IoPattern::Stride,
        IoPattern::Sequential,
    ] {
        let plan = iozone_plan(pattern, 256, 512 << 10);
        let mut psync = Psync::new(&[fd], Buffers::new(4096, 1, 1).unwrap());
        let st = run_thread(&mut psync, plan, t, &[fd], (true, None)).unwrap();
        assert_eq!(
            (st.read_bytes, st.written_bytes),
            (512 << 10, 0),
            "{pattern}"
        );
        let bufs = Buffers::new(4096, 1, 1).unwrap();
        let mut stream = Stream::new(&[fd], bufs, 64 << 10).unwrap();
        let st = run_thread(&mut stream, plan, t, &[fd], (true, None)).unwrap();
        assert_eq!(
            (st.read_bytes, st.written_bytes),
            (512 << 10, 0),
            "{pattern}"
        );
        assert_eq!(st.ios, 128, "{pattern}");
    }
    // The last block read backwards through the library buffer is the file's first block.
    let plan = iozone_plan(IoPattern::Backward, 256, 256 * 4096);
    let bufs = Buffers::new(4096, 1, 1).unwrap();
    let slot = bufs.slot(0);
    let mut stream = Stream::new(&[fd], bufs, 16 << 10).unwrap();
    run_thread(&mut stream, plan, t, &[fd], (true, None)).unwrap();
    let file = std::fs::read(&t.path).unwrap();
    // SAFETY: the engine's buffer of one 4 KiB slot, alive with `stream`.
    let last = unsafe { std::slice::from_raw_parts(slot, 4096) };
    assert_eq!(last, &file[..4096]);
}

/// The stream engine writes through its buffer: records written out of order and in order
/// land where they were asked to, once flushed; a read after writes sees them.
#[test]
fn the_stream_engine_writes_where_it_is_told() {
    use super::engine::{Dir, Engine};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f");
    let file = std::fs::File::create_new(&path).unwrap();
    file.set_len(64 << 10).unwrap();
    use std::os::unix::io::AsRawFd;
    let fd = file.as_raw_fd();
    let bufs = Buffers::new(4096, 1, 7).unwrap();
    let slot = bufs.slot(0);
    let mut s = Stream::new(&[fd], bufs, 8192).unwrap();
    let mut done = Vec::new();
    for off in [8192u64, 12288, 0, 40960] {
        s.queue(0, Dir::Write, 0, off).unwrap();
        s.complete(1, &mut done).unwrap();
    }
    // Before the flush, the last write may still be in the library's buffer; a read of it
    // through the same engine sees it.
    s.queue(0, Dir::Read, 0, 40960).unwrap();
    s.complete(1, &mut done).unwrap();
    assert!(done.iter().all(|(_, r)| matches!(r, Ok(4096))), "{done:?}");
    s.flush().unwrap();
    let data = std::fs::read(&path).unwrap();
    // SAFETY: the engine's one slot of 4 KiB, alive with `s`.
    let record = unsafe { std::slice::from_raw_parts(slot, 4096) };
    for off in [8192usize, 12288, 0, 40960] {
        assert_eq!(&data[off..off + 4096], record, "{off}");
    }
    assert!(data[4096..8192].iter().all(|b| *b == 0));
}

/// WNEW writes a file of its own into blocks released before each repetition (the test file
/// is left as laid out); REREAD reads its region into the page cache first, RS drops it.
#[test]
fn wnew_writes_new_blocks_and_reread_reads_cached_ones() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = opts(EngineKind::Psync, 1, dir.path());
    o.workloads = vec![DiskWorkload::Wnew, DiskWorkload::Reread, DiskWorkload::Rs];
    o.size = 1 << 20;
    o.total_bytes = Some(256 << 10);
    let sys = sys();
    let session = DiskSession::new(&sys, &o).unwrap();
    let (laid_out, new) = (
        session.targets[0].path.clone(),
        session.copies[0].path.clone(),
    );
    let before = std::fs::read(&laid_out).unwrap();
    let point = |workload| DiskPoint {
        workload,
        block: 4096,
        threads: 1,
        iodepth: 1,
    };
    let recs = session.run(point(DiskWorkload::Wnew), &mut || {}).unwrap();
    let p = recs[0].params.disk().unwrap();
    assert_eq!((p.read_percent, p.pattern.name()), (0, "sequential"));
    // The first quarter of the new file written, the test file untouched.
    let allocated = std::fs::metadata(&new).unwrap().blocks() * 512;
    assert!((256 << 10..1 << 20).contains(&allocated), "{allocated}");
    assert_eq!(std::fs::read(&laid_out).unwrap(), before);
    // Its blocks are released before the next repetition.
    let plan = session.plan(point(DiskWorkload::Wnew), 0, 1);
    let fd = session.copies[0].fd_for(4096).0;
    super::thread::prepare(&plan, &[fd], true, true).unwrap();
    assert_eq!(std::fs::metadata(&new).unwrap().blocks(), 0);
    // A reread finds its region in the page cache, a read does not (tmpfs keeps every page:
    // it has no other copy of them).
    let fd = session.targets[0].fd_for(4096).0;
    let tmpfs = session.target().file_system.as_deref() == Some("tmpfs");
    let pages = |plan: &Plan| {
        super::thread::prepare(plan, &[fd], true, true).unwrap();
        cached_pages(&laid_out)
    };
    let (reread, read) = (
        pages(&session.plan(point(DiskWorkload::Reread), 0, 1)),
        pages(&session.plan(point(DiskWorkload::Rs), 0, 1)),
    );
    if tmpfs {
        eprintln!("skipped the page cache's check: the directory is on tmpfs");
    } else {
        assert_eq!((reread, read), (256, 0));
    }
    for w in [DiskWorkload::Reread, DiskWorkload::Rs] {
        let recs = session.run(point(w), &mut || {}).unwrap();
        assert!(recs[0].summary.mean > 0.0, "{w}");
    }
    drop(session);
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

/// Pages of `path` resident in the page cache (mincore).
fn cached_pages(path: &std::path::Path) -> usize {
    use std::os::unix::io::AsRawFd;
    let file = std::fs::File::open(path).unwrap();
    let len = file.metadata().unwrap().len() as usize;
    let mut vec = vec![0u8; len.div_ceil(4096)];
    // SAFETY: a shared read-only mapping of a regular file, unmapped below; the vector holds
    // one byte per page as mincore requires.
    unsafe {
        let p = libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ,
            libc::MAP_SHARED,
            file.as_raw_fd(),
            0,
        );
        assert_ne!(p, libc::MAP_FAILED);
        assert_eq!(libc::mincore(p, len, vec.as_mut_ptr()), 0);
        libc::munmap(p, len);
    }
    vec.iter().filter(|b| **b & 1 == 1).count()
}

/// The stream engine is refused with O_DIRECT and above depth 1.
#[test]
fn the_stream_engine_refuses_what_it_cannot_do() {
    let dir = tempfile::tempdir().unwrap();
    let sys = sys();
    let mut o = opts(EngineKind::Stream, 1, dir.path());
    o.direct = true;
    let e = validate(&sys, &o).unwrap_err();
    assert_eq!(e, DiskError::EngineNeedsBuffered("stream"));
    assert!(e.to_string().contains("add --buffered"), "{e}");
    o.direct = false;
    o.iodepths = vec![4];
    assert_eq!(
        validate(&sys, &o).unwrap_err(),
        DiskError::DepthAbove {
            engine: "stream",
            max: 1
        }
    );
    o.iodepths = vec![1];
    assert_eq!(validate(&sys, &o), Ok(()));
    assert!(EngineKind::Stream.caps().synchronous() && !EngineKind::Stream.caps().direct);
}

/// A measured point's IOPS peak counts its own I/Os in flight (Little's law): the first
/// report's SSD (93 000 rated IOPS, 500 µs access) at QD 32 is bounded by 32 / 500 µs =
/// 64 000 IOPS, at QD 1 by 1 / 500 µs = 2000 IOPS, and 4 threads × QD 32 by the rated 93 000.
#[test]
fn a_points_iops_peak_counts_its_ios_in_flight() {
    let dir = tempfile::tempdir().unwrap();
    for (threads, depth, peak) in [(1, 32, 64_000.0), (1, 1, 2000.0), (4, 32, 93_000.0)] {
        let mut o = opts(EngineKind::Null, depth, dir.path());
        o.workloads = vec![DiskWorkload::Rr];
        o.block_sizes = vec![1024];
        o.threads = vec![threads];
        o.runtime = Duration::from_millis(20);
        o.peaks = DiskPeaks {
            read_iops: Some(93_000.0),
            latency_us: Some(500.0),
            ..Default::default()
        };
        let recs = measure(&o).unwrap();
        let iops = recs.iter().find(|r| r.metric == Metric::Iops).unwrap();
        let p = iops.peak.as_ref().unwrap();
        assert!((p.value - peak).abs() < 1e-6, "{threads} × {depth}: {p:?}");
        assert_eq!(p.inputs["n"].value, (threads * depth) as f64);
        assert!(p.formula.starts_with("min(rated, n / access)"), "{p:?}");
    }
}
