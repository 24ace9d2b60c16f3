//! `peakbench mem` once its arguments are read: the request (the benchmark's options, the
//! vocabulary the command line builds it from), checked against the machine, estimated, and
//! run point by point into a recorder.

use super::Recorder;
use crate::bench::mem::{MemError, MemPoint, MemSession, default_array_bytes, points, rounds};
use crate::error::UsageError;
use crate::report;
use crate::sysinfo::SystemInfo;
use crate::units::format_size;
use std::time::Duration;

pub use crate::bench::buffer::HugePages;
pub use crate::bench::mem::kernels::has_kernels;
pub use crate::bench::mem::latency::staircase_sizes;
pub use crate::bench::mem::{
    DEFAULT_LATENCY_MAX, DEFAULT_LATENCY_SAMPLE, MemOptions, MemWorkload, Stores, estimate,
};

/// A user error (2) or a failure (1).
fn classify(e: MemError) -> anyhow::Error {
    if e.is_usage() {
        anyhow::Error::new(UsageError(e.to_string()))
    } else {
        anyhow::Error::new(e)
    }
}

/// A thread's copy rate in its caches, above what the estimate assumes: fixed work
/// (`--total-bytes`) shortened by `run --budget` keeps its floor's time of it a thread.
pub const FLOOR_BYTES_PER_SEC: f64 = 20e9;

impl super::Request for MemOptions {
    fn check(&self, sys: &SystemInfo) -> anyhow::Result<Duration> {
        MemSession::new(sys, self).map_err(|e| UsageError(e.to_string()))?;
        Ok(estimate(self, sys))
    }

    fn run(self: Box<Self>, rec: &mut Recorder) -> anyhow::Result<()> {
        let from = rec.results().len();
        let opts = *self;
        run(opts.clone(), rec)?;
        if opts.diagnose {
            diagnose_again(&opts, rec, from)?;
        }
        Ok(())
    }

    /// A bandwidth point's: its duration, or a thread's share of the fixed work at
    /// [`FLOOR_BYTES_PER_SEC`] (the latency chases time samples, not points).
    fn least_timed(&self, _: &SystemInfo) -> Option<Duration> {
        use crate::workload::spec::Work;
        let bandwidth = self
            .workloads
            .iter()
            .any(|w| !matches!(w.spec().work, Work::Nothing | Work::Loads));
        let sharing = match self.scaling {
            crate::results::params::Scaling::Strong => {
                self.threads.iter().copied().max().unwrap_or(1)
            }
            crate::results::params::Scaling::Weak => 1,
        };
        bandwidth.then(|| match self.total_bytes {
            None => self.bandwidth_time(),
            Some(b) => {
                crate::units::estimate_secs(b as f64 / sharing.max(1) as f64 / FLOOR_BYTES_PER_SEC)
            }
        })
    }

    fn planned(&self, sys: &SystemInfo) -> Vec<crate::results::ResultRecord> {
        super::planned::mem(self, sys)
    }
}

/// Measures the points of `opts` into `rec` (one command, or one job of a suite).
fn run(opts: MemOptions, rec: &mut Recorder) -> anyhow::Result<()> {
    let sys = rec.system();
    let session = MemSession::new(&sys, &opts).map_err(classify)?;
    rec.announce(
        "mem",
        &format!(
            "{} — ISA {}, {} stores, arrays of {} each, {} of {} after {} warm-up; GB/s counted as STREAM does (bytes read + written)",
            report::table::machine_line(&sys),
            session.isa(),
            session.stores(),
            match opts.array_sizes.as_slice() {
                [] => format_size(default_array_bytes(&sys)),
                [one] => format_size(*one),
                many => format!(
                    "{} sizes from {} to {}",
                    many.len(),
                    format_size(many.iter().copied().min().unwrap_or(0)),
                    format_size(many.iter().copied().max().unwrap_or(0))
                ),
            },
            super::repetitions(opts.reps.repeat, opts.precision),
            super::repetition_time(opts.bandwidth_time(), opts.sustain.is_some()),
            opts.reps.warmup
        ),
        Some(estimate(&opts, &sys)),
    );
    let mut run = MemRun {
        session,
        opts: opts.clone(),
        sys: &sys,
    };
    rec.drive(&points(&opts), &mut run)
}

/// `--diagnose` ([`super::diagnose`]): a point on 4 KiB pages whose twin on huge pages did
/// better (`pages`) measured again on transparent huge pages: a bandwidth point alone (its
/// workload, threads, arrays, blocks and mix), a LATENCY level by its staircase, once for all
/// the levels of its threads.
fn diagnose_again(opts: &MemOptions, rec: &mut Recorder, from: usize) -> anyhow::Result<()> {
    use crate::results::params::{Params, Scaling};
    let staircases = std::cell::RefCell::new(std::collections::HashSet::new());
    let knob = |r: &crate::results::ResultRecord, cause: &str| {
        let crate::workload::Workload::Mem(w) = r.workload else {
            return None;
        };
        if cause != "pages" {
            return None;
        }
        let on = MemOptions {
            workloads: vec![w],
            huge_pages: vec![HugePages::On],
            diagnose: false,
            ..opts.clone()
        };
        let request = match &r.params {
            Params::Mem(p) => {
                let k = p.kernel.as_ref()?;
                let array = match opts.scaling {
                    Scaling::Strong => k.array_bytes_per_thread.checked_mul(p.threads as u64)?,
                    Scaling::Weak => k.array_bytes_per_thread,
                };
                MemOptions {
                    threads: vec![p.threads],
                    array_sizes: vec![array],
                    block_sizes: (k.blocks.as_ref())
                        .map_or_else(Vec::new, |b| vec![b.block_size_bytes]),
                    mixes: k.mix.map_or_else(|| opts.mixes.clone(), |m| vec![m]),
                    ..on
                }
            }
            Params::MemLatency(p) if p.level.is_some() => {
                staircases.borrow_mut().insert(p.threads).then_some(())?;
                MemOptions {
                    latency_threads: vec![p.threads],
                    ..on
                }
            }
            _ => return None,
        };
        Some(("--huge-pages on".to_string(), request))
    };
    super::diagnose::again(rec, from, "mem", knob, |o: &MemOptions, rec| {
        run(o.clone(), rec)
    })
}

/// A memory run's points as the recorder drives them.
struct MemRun<'a> {
    session: MemSession<'a>,
    /// The request's options, their repetitions as the session's (`set_repeat`).
    opts: MemOptions,
    sys: &'a SystemInfo,
}

impl super::session::Session for MemRun<'_> {
    type Point = MemPoint;

    fn rounds(&self, p: &MemPoint) -> u64 {
        rounds(p, &self.opts)
    }

    fn repeat(&self) -> usize {
        self.opts.reps.repeat
    }

    fn set_repeat(&mut self, repeat: usize) {
        self.opts.reps.repeat = repeat;
        self.session.set_repeat(repeat);
    }

    fn precision(&self) -> Option<crate::measure::precision::Precision> {
        self.opts.precision
    }

    /// Its planned record's label; C2C, LOADED and NUMA, which have none, their own.
    fn label(&self, p: &MemPoint) -> String {
        if let Some(planned) = self.planned(p).first() {
            return crate::results::point::label(planned);
        }
        let array = match (p.array, self.opts.array_sizes.len()) {
            (Some(a), 2..) => format!(" {}", format_size(a)),
            _ => String::new(),
        };
        match p.block {
            Some(b) => format!("{} {}{array} ×{}", p.workload, format_size(b), p.threads),
            None => format!("{}{array} ×{}", p.workload, p.threads),
        }
    }

    fn planned(&self, p: &MemPoint) -> Vec<crate::results::ResultRecord> {
        super::planned::mem_point(&self.session, *p, &self.opts, self.sys)
    }

    fn run(
        &mut self,
        point: MemPoint,
        tick: &mut dyn FnMut(),
    ) -> anyhow::Result<Vec<crate::results::ResultRecord>> {
        let warmup = self.opts.reps.warmup;
        self.session
            .run(point, tick)
            .map(|mut recs| {
                for r in &mut recs {
                    r.warmup_rounds = Some(warmup);
                }
                recs
            })
            .map_err(|e| anyhow::anyhow!("{} with {} threads: {e}", point.workload, point.threads))
    }
}
