//! A memory run ([`MemSession`]): the kernels chosen for the machine and the options, the
//! peak, and each point run on its pinned threads (the bandwidth and LATENCY points in their
//! own files).

use super::kernels::{self, Kernels};
use super::records::record;
use super::{MemError, MemOptions, MemPoint, MemWorkload, Stores, validate};
use crate::results::params::{self as rp, Params};
use crate::results::{Metric, ResultRecord, Unit};
use crate::runner::{self, Repetition, affinity};
use crate::sysinfo::peak::{Peak, mem_peak};
use crate::sysinfo::{Isa, SystemInfo};
use std::sync::Mutex;

/// State of one run: the kernels chosen and the peak.
pub struct MemSession<'a> {
    pub(super) sys: &'a SystemInfo,
    pub(super) opts: &'a MemOptions,
    /// The points' repetitions: the options', or as [`MemSession::set_repeat`] changed them.
    pub(super) reps: Repetition,
    pub(super) isa: Isa,
    /// Kernels with regular stores, and with non-temporal ones where the ISA has them.
    pub(super) regular: Kernels,
    streaming: Option<Kernels>,
    pub(super) allowed: Vec<usize>,
    pub(super) peak: Result<Peak, String>,
}

impl<'a> MemSession<'a> {
    pub fn new(sys: &'a SystemInfo, opts: &'a MemOptions) -> Result<Self, MemError> {
        validate(opts, sys)?;
        // The widest instruction set that has kernels of its own (others run the portable
        // ones, which are recorded as scalar).
        let isa = opts.isa.unwrap_or_else(|| {
            sys.cpu
                .isas
                .iter()
                .copied()
                .find(|i| kernels::has_kernels(*i))
                .unwrap_or(Isa::Scalar)
        });
        let (regular, _) = kernels::kernels(isa, false);
        let streaming = match kernels::kernels(isa, true) {
            (k, true) => Some(k),
            _ => None,
        };
        if opts.stores == Stores::Nt && streaming.is_none() {
            return Err(MemError::NoStreamingStores(isa));
        }
        Ok(MemSession {
            sys,
            opts,
            reps: opts.reps,
            isa,
            regular,
            streaming,
            allowed: affinity::allowed_cpus(),
            peak: mem_peak(&sys.memory.devices, &opts.peak),
        })
    }

    pub fn isa(&self) -> Isa {
        self.isa
    }

    /// Sets the timed repetitions of the points measured from now on (`--precision`).
    pub fn set_repeat(&mut self, repeat: usize) {
        self.reps.repeat = repeat;
    }

    /// The kernels for a point moving blocks of `block` bytes, and whether they stream;
    /// `in_cache`: whether the point's arrays fit in the last-level cache.
    pub(super) fn kernels_for(&self, block: u64, in_cache: bool) -> (Kernels, bool) {
        let want = match self.opts.stores {
            Stores::Nt => true,
            Stores::Regular => false,
            Stores::Auto => !in_cache && block.is_multiple_of(64) && block >= 1024,
        };
        match (want, self.streaming) {
            (true, Some(k)) => (k, true),
            _ => (self.regular, false),
        }
    }

    /// What the store option means on this machine, for the banner.
    pub fn stores(&self) -> &'static str {
        match (self.opts.stores, self.streaming.is_some()) {
            (_, false) | (Stores::Regular, _) => "regular",
            (Stores::Nt, true) => "non-temporal",
            (Stores::Auto, true) => "non-temporal where they help (auto)",
        }
    }

    /// Runs one point; returns its records (LATENCY gives many).
    pub fn run(
        &self,
        point: MemPoint,
        tick: &mut dyn FnMut(),
    ) -> Result<Vec<ResultRecord>, MemError> {
        match point.workload {
            MemWorkload::Latency => self.latency(point.threads, tick),
            MemWorkload::C2c => self.c2c(tick),
            MemWorkload::Loaded => self.loaded_latency(point, tick),
            MemWorkload::Numa => self.numa(tick),
            MemWorkload::Null => {
                let placement =
                    affinity::place(point.threads, &self.allowed, &self.sys.cpu.logical);
                let times =
                    runner::run_rounds(&placement.cpus, self.reps, |_| {}, |_| {}, |_| tick())
                        .map_err(|e| MemError::Pin(e.to_string()))?;
                let samples = times.iter().map(|t| t.as_secs_f64() * 1e9).collect();
                Ok(vec![record(
                    MemWorkload::Null,
                    null_params(point.threads),
                    Metric::Latency,
                    Unit::Nanos,
                    samples,
                    Err("the NULL workload measures harness overhead and has no peak".into()),
                )])
            }
            _ => self.bandwidth(point, tick),
        }
    }
}

/// A NULL point's parameters: its threads alone (it runs no kernel).
pub(super) fn null_params(threads: usize) -> Params {
    Params::Mem(rp::MemParams {
        threads,
        cpu_quota: None,
        kernel: None,
        node: rp::NodeTag::default(),
    })
}

/// Makes each thread's part on its own pinned CPU (first touch places the pages on its node),
/// all at once; `bytes` (of all of them) is for the error.
pub(super) fn on_each<T: Send>(
    cpus: &[usize],
    bytes: u64,
    make: impl Fn(usize) -> std::io::Result<T> + Sync,
) -> Result<Vec<T>, MemError> {
    let once = Repetition {
        warmup: 0,
        repeat: 1,
    };
    let slots: Mutex<Vec<Option<std::io::Result<T>>>> =
        Mutex::new((0..cpus.len()).map(|_| None).collect());
    runner::run_rounds(
        cpus,
        once,
        |i| {
            let made = make(i);
            slots.lock().unwrap_or_else(|e| e.into_inner())[i] = Some(made);
        },
        |_| {},
        |_| {},
    )
    .map_err(|e| MemError::Pin(e.to_string()))?;
    slots
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .into_iter()
        .map(|a| a.unwrap_or_else(|| Err(std::io::Error::other("a thread made nothing"))))
        .collect::<std::io::Result<_>>()
        .map_err(|e| MemError::Alloc {
            bytes,
            reason: e.to_string(),
        })
}
