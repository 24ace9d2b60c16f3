//! `peakbench disk` once its arguments are read: the request (the benchmark's options, the
//! vocabulary the command line builds it from), checked against the machine, estimated, and
//! run point by point into a recorder.

use super::Recorder;
use crate::bench::disk::{DiskError, DiskPoint, DiskSession, points, uring};
use crate::error::{Interrupted, UsageError};
use crate::units::format_bytes_binary;
use std::time::Duration;

pub use crate::bench::disk::engine::{STREAM_BUFFER_MAX, STREAM_BUFFER_MIN};
pub use crate::bench::disk::target::Place;
pub use crate::bench::disk::uring::MAX_DEPTH;
pub use crate::bench::disk::{DiskOptions, DiskPeaks, DiskWorkload, EngineKind};

/// A user error (2), an interruption (130) or a failure (1).
fn classify(e: DiskError) -> anyhow::Error {
    match e {
        DiskError::Interrupted => anyhow::Error::new(Interrupted),
        e if e.is_usage() => anyhow::Error::new(UsageError(e.to_string())),
        e => anyhow::Error::new(e),
    }
}

/// The engine `auto` chooses for these queue depths: psync where every one is 1, io_uring
/// above, where the kernel has it (else why not).
pub fn auto_engine(iodepths: &[usize]) -> Result<EngineKind, String> {
    if iodepths.iter().all(|d| *d == 1) {
        return Ok(EngineKind::Psync);
    }
    uring::probe()
        .map(|()| EngineKind::IoUring)
        .map_err(|why| format!("--iodepth above 1 needs io_uring, which is not available: {why}"))
}

impl super::Request for DiskOptions {
    fn check(&self, sys: &crate::sysinfo::SystemInfo) -> anyhow::Result<Duration> {
        crate::bench::disk::validate(sys, self).map_err(classify)?;
        Ok(crate::bench::disk::estimate(self))
    }

    fn run(self: Box<Self>, rec: &mut Recorder) -> anyhow::Result<()> {
        let from = rec.results().len();
        let diagnose = self.diagnose;
        let opts = *self;
        run(&opts, rec)?;
        if diagnose {
            diagnose_again(&opts, rec, from)?;
        }
        Ok(())
    }

    /// Its runtime, or its fixed work at 2 GB/s.
    fn least_timed(&self, _: &crate::sysinfo::SystemInfo) -> Option<Duration> {
        Some(match self.total_bytes {
            None => self.runtime,
            Some(b) => crate::units::estimate_secs(b as f64 / 2e9),
        })
    }

    fn planned(&self, _: &crate::sysinfo::SystemInfo) -> Vec<crate::results::ResultRecord> {
        super::planned::disk(self)
    }
}

/// `--diagnose` ([`super::diagnose`]): one I/O in flight (`queue-depth`) turned to
/// [`DIAGNOSE_DEPTH`] through io_uring, where the kernel has it, on the point alone.
fn diagnose_again(opts: &DiskOptions, rec: &mut Recorder, from: usize) -> anyhow::Result<()> {
    let uring = uring::probe().is_ok();
    let knob = |r: &crate::results::ResultRecord, cause: &str| {
        let (crate::workload::Workload::Disk(w), Some(d)) = (r.workload, r.params.disk()) else {
            return None;
        };
        (cause == "queue-depth" && uring).then(|| {
            (
                format!("--iodepth {DIAGNOSE_DEPTH} --engine io_uring"),
                DiskOptions {
                    workloads: vec![w],
                    block_sizes: vec![d.block_size_bytes],
                    threads: vec![d.threads],
                    iodepths: vec![DIAGNOSE_DEPTH],
                    engine: EngineKind::IoUring,
                    diagnose: false,
                    ..opts.clone()
                },
            )
        })
    };
    super::diagnose::again(rec, from, "disk", knob, run)
}

/// The queue depth `--diagnose` measures a point of one I/O in flight again at.
const DIAGNOSE_DEPTH: usize = 32;

/// Measures the points of `opts` into `rec` (one command, or one job of a suite).
fn run(opts: &DiskOptions, rec: &mut Recorder) -> anyhow::Result<()> {
    let sys = rec.system();
    let session = DiskSession::new(&sys, opts).map_err(classify)?;
    let t = session.target();
    rec.announce(
        "disk",
        &format!(
            "{} on {} ({}), engine {}, {} I/O, {} of {} after a {:?} ramp",
            format_bytes_binary(t.size),
            t.path.display(),
            t.device
                .as_ref()
                .map_or("unknown device".to_string(), |d| format!(
                    "{}, {}-byte logical blocks",
                    d.name, t.align
                )),
            opts.engine.name(),
            if opts.direct {
                "O_DIRECT"
            } else {
                "buffered (page cache)"
            },
            super::repetitions(opts.reps.repeat, opts.precision),
            super::repetition_time(opts.runtime, opts.sustain),
            opts.ramp
        ),
        Some(crate::bench::disk::estimate(opts)),
    );
    rec.drive(&points(opts), &mut DiskRun(session))
}

/// A disk run's points as the recorder drives them.
struct DiskRun<'a>(DiskSession<'a>);

impl super::session::Session for DiskRun<'_> {
    type Point = DiskPoint;

    fn rounds(&self, _: &DiskPoint) -> u64 {
        self.0.repeat() as u64
    }

    fn repeat(&self) -> usize {
        self.0.repeat()
    }

    fn set_repeat(&mut self, repeat: usize) {
        self.0.set_repeat(repeat);
    }

    fn precision(&self) -> Option<crate::measure::precision::Precision> {
        self.0.opts().precision
    }

    fn planned(&self, p: &DiskPoint) -> Vec<crate::results::ResultRecord> {
        self.0.planned(*p)
    }

    fn run(
        &mut self,
        p: DiskPoint,
        tick: &mut dyn FnMut(),
    ) -> anyhow::Result<Vec<crate::results::ResultRecord>> {
        self.0.run(p, tick).map_err(classify)
    }
}
