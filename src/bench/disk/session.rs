//! A disk run ([`DiskSession`]): the target files, laid out once, the placement of the I/O
//! threads, and each point run as repetitions of every thread's I/O loop.

use super::engine::{Buffers, EngineKind, NullEngine, Psync, Stream};
use super::target::{self, Place, Target};
use super::thread::{Plan, ThreadStats, prepare, run_thread, timeline_interval};
use super::{DiskError, DiskOptions, DiskPoint, DiskWorkload, uring, validate};
use crate::measure::steady::Steady;
use crate::results::ResultRecord;
use crate::runner::{self, Repetition, affinity};
use std::sync::Mutex;

/// A run: the target files, laid out once, and the options.
pub struct DiskSession<'a> {
    pub(super) opts: &'a DiskOptions,
    sys: &'a crate::sysinfo::SystemInfo,
    /// The measured files: one that the threads share, or one per thread (`file_per_thread`).
    pub(super) targets: Vec<Target>,
    /// The files written into new blocks, one per target, created empty (as `cp` and IOzone's
    /// write write a new file) and their regions' blocks released before each repetition:
    /// COPY's destinations, WNEW's files.
    pub(super) copies: Vec<Target>,
    allowed: Vec<usize>,
    /// The points' timed repetitions: the options', or as [`DiskSession::set_repeat`] changed
    /// them.
    pub(super) repeat: usize,
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
        if let Some(w) = opts.workloads.iter().find(|w| w.new_blocks()) {
            for (i, t) in targets.iter().enumerate() {
                if t.is_block_device {
                    return Err(DiskError::NewFileNeedsFileSystem {
                        workload: w.name(),
                        path: t.path.display().to_string(),
                    });
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
            repeat: opts.reps.repeat,
        })
    }

    /// The options it runs.
    pub fn opts(&self) -> &DiskOptions {
        self.opts
    }

    /// The timed repetitions of the points measured from now on.
    pub fn repeat(&self) -> usize {
        self.repeat
    }

    /// Sets the timed repetitions of the points measured from now on (`--precision`).
    pub fn set_repeat(&mut self, repeat: usize) {
        self.repeat = repeat;
    }

    /// The (first) measured file.
    pub fn target(&self) -> &Target {
        &self.targets[0]
    }

    /// Where the I/O threads run: first on the CPUs that take the device's completion
    /// interrupts (a completion on another CPU costs a cross-CPU wake-up: on this VM's virtio
    /// disk, 4k QD1 reads go from 12.5k to 15.7k IOPS with fio pinned to the IRQ's CPU), then
    /// on the others, as the CPU benchmark places them.
    pub(super) fn placement(&self, threads: usize) -> affinity::Placement {
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
        let placement = self.placement(point.threads);
        let stats: Mutex<Vec<Vec<ThreadStats>>> =
            Mutex::new((0..point.threads).map(|_| Vec::new()).collect());
        let failure: Mutex<Option<DiskError>> = Mutex::new(None);
        let round = std::sync::atomic::AtomicU64::new(0);
        let reps = Repetition {
            warmup: 0,
            repeat: self.repeat,
        };
        // --sustain: the watch the threads of a repetition share, and when each repetition was
        // steady (the end of its first steady window, in seconds of its measured time).
        let interval = timeline_interval(self.opts.runtime, self.opts.total_bytes.is_some());
        let interval_s = interval.as_secs_f64();
        let steady = self
            .opts
            .sustain
            .then(|| Steady::over(self.opts.runtime, interval, point.threads));
        let mut steady_at: Vec<Option<f64>> = Vec::new();
        let before = crate::measure::cpu_usage::snapshot();
        runner::run_rounds(
            &placement.cpus,
            reps,
            |i| {
                if failure.lock().expect("failure").is_some() {
                    return;
                }
                let seed =
                    (i as u64) << 32 ^ round.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                match self.repetition(point, i, seed, steady.as_ref()) {
                    Ok(s) => stats.lock().expect("stats")[i].push(s),
                    Err(e) => {
                        failure.lock().expect("failure").get_or_insert(e);
                    }
                }
            },
            |_| {},
            |_| {
                if let Some(s) = &steady {
                    s.round_ended(true, interval_s, &mut steady_at);
                }
                tick()
            },
        )
        .map_err(|e| DiskError::Io(format!("could not pin a thread: {e}")))?;
        let cpu = before.until(&crate::measure::cpu_usage::snapshot());
        if let Some(e) = failure.into_inner().expect("failure") {
            return Err(e);
        }
        let stats = stats.into_inner().expect("stats");
        let mut records = self.records(point, &placement.cpus, stats, cpu);
        if self.opts.sustain {
            for r in &mut records {
                r.sustain = Some(crate::results::phases::Sustain {
                    max_s: self.opts.runtime.as_secs_f64(),
                    steady_s: steady_at.clone(),
                });
            }
        }
        Ok(records)
    }

    /// Thread `i`'s plan for a repetition of `point`, its random choices seeded with `seed`.
    pub(super) fn plan(&self, point: DiskPoint, i: usize, seed: u64) -> Plan {
        let opts = self.opts;
        // Each thread's region: its whole file, or its share of the one file.
        let sharing = if opts.file_per_thread {
            1
        } else {
            point.threads as u64
        };
        let region_blocks = self.target().size / point.block / sharing;
        Plan {
            block: point.block,
            start: (i as u64 % sharing) * region_blocks * point.block,
            blocks: region_blocks,
            pattern: point.workload.pattern(),
            stride: opts.stride,
            read_percent: point.workload.read_percent(opts.read_percent),
            copy: point.workload == DiskWorkload::Copy,
            fresh: point.workload.new_blocks(),
            pre_read: point.workload.pre_read(),
            depth: point.iodepth,
            ramp: opts.ramp,
            runtime: opts.runtime,
            quota: opts.total_bytes.map(|t| match opts.scaling {
                crate::results::params::Scaling::Strong => (t / point.threads as u64).max(1),
                crate::results::params::Scaling::Weak => t,
            }),
            seed,
            sync: opts.sync,
            interval: timeline_interval(opts.runtime, opts.total_bytes.is_some()),
        }
    }

    /// Thread `i`'s part of one repetition of `point`: its region readied, its buffers made,
    /// then its I/O loop on the engine asked for.
    fn repetition(
        &self,
        point: DiskPoint,
        i: usize,
        seed: u64,
        steady: Option<&Steady>,
    ) -> Result<ThreadStats, DiskError> {
        let opts = self.opts;
        let file = if opts.file_per_thread { i } else { 0 };
        // WNEW writes its own file (new blocks), a copy reads the target and writes its own.
        let target = match point.workload {
            DiskWorkload::Wnew => &self.copies[file],
            _ => &self.targets[file],
        };
        let (fd, page_cache) = target.fd_for(point.block);
        let mut fds = vec![fd];
        if point.workload == DiskWorkload::Copy {
            fds.push(self.copies[file].fd_for(point.block).0);
        }
        let plan = self.plan(point, i, seed);
        let does_io = opts.engine.caps().does_io;
        prepare(&plan, &fds, does_io, page_cache)
            .map_err(|e| target.io_error(e, format!("prepare {}", target.path.display())))
            .and_then(|()| {
                Buffers::new(point.block as usize, point.iodepth, plan.seed)
                    .map_err(|e| DiskError::Io(format!("cannot allocate I/O buffers: {e}")))
            })
            .and_then(|bufs| match opts.engine {
                EngineKind::Psync => run_thread(
                    &mut Psync::new(&fds, bufs),
                    plan,
                    target,
                    &fds,
                    (does_io, steady),
                ),
                EngineKind::IoUring => uring::Uring::new(&fds, bufs)
                    .map_err(|e| DiskError::UringUnavailable(e.to_string()))
                    .and_then(|mut u| run_thread(&mut u, plan, target, &fds, (does_io, steady))),
                EngineKind::Stream => Stream::new(&fds, bufs, opts.stream_buffer as usize)
                    .map_err(|e| target.io_error(e, format!("open {}", target.path.display())))
                    .and_then(|mut s| run_thread(&mut s, plan, target, &fds, (does_io, steady))),
                EngineKind::Null => run_thread(
                    &mut NullEngine::new(point.block as usize, point.iodepth),
                    plan,
                    target,
                    &fds,
                    (does_io, steady),
                ),
            })
    }
}
