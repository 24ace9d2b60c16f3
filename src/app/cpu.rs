//! `peakbench cpu` once its arguments are read: the request (the workloads and their options,
//! in the vocabulary the command line builds it from), planned and checked against the
//! machine, estimated, and run point by point into a recorder — the synthetic kernels first,
//! then LINPACK, DGEMM and SGEMM.

use super::Recorder;
use crate::bench::cpu::estimate as cpu_estimate;
use crate::bench::cpu::{CpuOptions, CpuPoint, CpuSession, points};
use crate::bench::linalg::system_blas::SystemBlas;
use crate::bench::linalg::workload::{self as linalg, Engine, LinalgPoint};
use crate::error::UsageError;
use crate::measure::precision::Precision;
use crate::report;
use crate::runner::Repetition;
use crate::sysinfo::peak::CpuPeakOverrides;
use crate::sysinfo::{Isa, SystemInfo};
use std::path::PathBuf;
use std::time::Duration;

pub use crate::bench::cpu::{CpuWorkload, Op, Scaling, operation};
pub use crate::bench::linalg::kernels as linalg_kernels;
pub use crate::workload::linalg::LinalgWorkload;

/// What `peakbench cpu` is asked to measure.
#[derive(Debug, Clone)]
pub struct CpuRequest {
    /// The synthetic kernels (QP … INT64, NULL).
    pub kernels: Vec<CpuWorkload>,
    /// LINPACK, DGEMM, SGEMM.
    pub linalg: Vec<LinalgWorkload>,
    /// The thread counts (None: 1, 2, 4 … up to the hardware threads).
    pub threads: Option<Vec<usize>>,
    pub scaling: Scaling,
    pub isa: Option<Isa>,
    /// A kernel repetition's target time.
    pub duration: Duration,
    /// Fixed work instead of `duration`.
    pub total_ops: Option<u64>,
    /// `--sustain`: each kernel repetition runs until its rate is steady, `duration` at most.
    pub sustain: bool,
    pub reps: Repetition,
    /// Peak inputs given by the user.
    pub clock_ghz: Option<f64>,
    pub ops_per_cycle: Vec<(CpuWorkload, f64)>,
    pub peak: Vec<(CpuWorkload, f64)>,
    /// The linear-algebra sizes: N, or a share of the memory.
    pub n: Vec<usize>,
    pub memory_fraction: Option<f64>,
    /// LINPACK's block with the built-in engine.
    pub nb: Option<usize>,
    /// An installed BLAS/LAPACK instead of the built-in engine, and which.
    pub system_blas: bool,
    pub blas_library: Option<PathBuf>,
    /// `--diagnose`: each point below 90 % of its peak measured once more with the knob of its
    /// first cause changed.
    pub diagnose: bool,
    /// `--precision`: each point measured again until its interval is within the target.
    pub precision: Option<Precision>,
}

/// What a request measures, checked against the machine before anything runs.
struct Plan {
    /// The kernel points' options (None: no kernel workload).
    kernels: Option<CpuOptions>,
    linalg: Vec<LinalgPoint>,
    reps: Repetition,
    precision: Option<Precision>,
}

/// One core's peak of operation class `op` on `sys` (GOPS), where it is known.
fn core_peak(sys: &SystemInfo, op: crate::sysinfo::peak::OpClass) -> Option<f64> {
    crate::sysinfo::peak::cpu_peak(
        op,
        1,
        sys.cpu
            .measured_clock_ghz
            .get()
            .copied()
            .ok_or_else(|| "unknown".to_string()),
        sys.uarch(),
        &sys.cpu.isas,
        &Default::default(),
    )
    .ok()
    .map(|p| p.value)
}

impl Plan {
    /// About how long it takes on `sys`.
    fn estimate(&self, sys: &SystemInfo) -> Duration {
        let cpus = crate::runner::affinity::allowed_cpus().len();
        let kernel_peak = |w: CpuWorkload| w.op().and_then(|op| core_peak(sys, op)).unwrap_or(30.0);
        // Under --precision, the most repetitions a point may take.
        let reps = Repetition {
            repeat: crate::measure::precision::worst_repeat(self.reps.repeat, self.precision),
            ..self.reps
        };
        let kernels = self.kernels.as_ref().map_or(Duration::ZERO, |o| {
            cpu_estimate(&CpuOptions { reps, ..o.clone() }, cpus, &kernel_peak)
        });
        let cores = (sys.cpu.cores.get().copied().unwrap_or(1).max(1) as usize).min(cpus.max(1));
        let linalg = crate::units::sum_estimates(self.linalg.iter().map(|p| {
            let bits = if p.workload == LinalgWorkload::Sgemm {
                32
            } else {
                64
            };
            let core = core_peak(
                sys,
                crate::sysinfo::peak::OpClass::Fma { element_bits: bits },
            );
            linalg::estimate(*p, reps, cores, core)
        }));
        kernels.saturating_add(linalg)
    }
}

impl CpuRequest {
    /// The peak overrides of a dense solve or multiply: those of the FMA workload of its
    /// element type (DP's for LINPACK and DGEMM, SP's for SGEMM).
    fn linalg_overrides(&self, w: LinalgWorkload) -> CpuPeakOverrides {
        let fma = match w {
            LinalgWorkload::Sgemm => CpuWorkload::Sp,
            LinalgWorkload::Linpack | LinalgWorkload::Dgemm => CpuWorkload::Dp,
        };
        let find =
            |list: &[(CpuWorkload, f64)]| list.iter().find(|(x, _)| *x == fma).map(|(_, v)| *v);
        CpuPeakOverrides {
            clock_ghz: self.clock_ghz,
            ops_per_cycle: find(&self.ops_per_cycle),
            gops_per_core: find(&self.peak),
        }
    }

    /// The engine of its dense solves and multiplies.
    fn linalg_engine(&self) -> crate::results::params::LinalgEngine {
        if self.system_blas {
            crate::results::params::LinalgEngine::System
        } else {
            crate::results::params::LinalgEngine::BuiltIn
        }
    }

    /// Each measured kernel's rate on one core of `sys` (GOPS): its peak where known.
    fn kernel_rates(&self, sys: &SystemInfo) -> Vec<f64> {
        self.kernels
            .iter()
            .filter(|w| w.spec().work != crate::workload::spec::Work::Nothing)
            .map(|w| w.op().and_then(|op| core_peak(sys, op)).unwrap_or(30.0))
            .collect()
    }

    /// The threads of its busiest point, and how many of them share the fixed work.
    fn sharing(&self, sys: &SystemInfo) -> usize {
        let most = match &self.threads {
            Some(t) => t.iter().copied().max().unwrap_or(1),
            None => sys.cpu.threads as usize,
        };
        match self.scaling {
            Scaling::Strong => most.max(1),
            Scaling::Weak => 1,
        }
    }

    /// The fixed work (`--total-ops`) under which a thread of some point would run less than
    /// `floor` at a core's peak on `sys` (the fastest kernel's, the work split between the
    /// most threads under strong scaling): `run --budget` shortens fixed work down to it.
    pub fn floor_ops(&self, sys: &SystemInfo, floor: Duration) -> u64 {
        let fastest = self.kernel_rates(sys).into_iter().fold(0.0, f64::max);
        let ops = floor.as_secs_f64() * fastest * 1e9 * self.sharing(sys) as f64;
        ops.min(u64::MAX as f64) as u64
    }

    /// The least timed work of one repetition of a kernel point: its duration, or a thread's
    /// share of the fixed work at a core's peak (a thread that shares its core takes longer);
    /// None without kernels.
    pub fn least_timed(&self, sys: &SystemInfo) -> Option<Duration> {
        let fastest = self.kernel_rates(sys).into_iter().reduce(f64::max)?;
        Some(match self.total_ops {
            None => self.duration,
            Some(n) => crate::units::estimate_secs(
                n as f64 / self.sharing(sys) as f64 / (fastest * 1e9).max(1.0),
            ),
        })
    }
}

/// Checks `req` against `sys` (the ISA there, each linear-algebra point's memory, the system
/// BLAS loadable) and lays out the points; nothing is measured.
fn plan(req: &CpuRequest, sys: &SystemInfo) -> anyhow::Result<Plan> {
    let (kernels, linalg_workloads) = (req.kernels.clone(), &req.linalg);
    if let Some(isa) = req.isa
        && !sys.cpu.isas.contains(&isa)
        && isa != crate::sysinfo::Isa::Scalar
    {
        return Err(UsageError(format!(
            "--isa {isa} is not available on this CPU; available: {}",
            sys.cpu
                .isas
                .iter()
                .map(|i| i.name())
                .collect::<Vec<_>>()
                .join(", ")
        ))
        .into());
    }
    let reps = req.reps;
    let threads = match &req.threads {
        None => crate::sweep::powers_of_two_up_to(sys.cpu.threads as usize),
        Some(t) => t.clone(),
    };
    let kernels = (!kernels.is_empty()).then(|| CpuOptions {
        workloads: kernels,
        threads: threads.clone(),
        scaling: req.scaling,
        isa: req.isa,
        duration: req.duration,
        sustain: req.sustain,
        total_ops: req.total_ops,
        reps,
        clock_ghz: req.clock_ghz,
        ops_per_cycle: req.ops_per_cycle.iter().copied().collect(),
        peak_per_core: req.peak.iter().copied().collect(),
    });
    if let Some(o) = &kernels {
        CpuSession::new(sys, o).map_err(|e| UsageError(e.to_string()))?;
        let cpus = crate::runner::affinity::allowed_cpus().len();
        let kernel_peak = |w: CpuWorkload| w.op().and_then(|op| core_peak(sys, op)).unwrap_or(30.0);
        crate::bench::cpu::check_work(o, cpus, &kernel_peak)
            .map_err(|e| UsageError(e.to_string()))?;
    }
    let memory = sys.memory.available_or_assumed();
    let mut pts = Vec::new();
    for &workload in linalg_workloads {
        let sizes = if req.n.is_empty() {
            vec![match req.memory_fraction {
                Some(fraction) => workload.n_for_memory(memory, fraction),
                None => workload.default_n(memory),
            }]
        } else {
            req.n.clone()
        };
        for &n in &sizes {
            for &t in &threads {
                let point = LinalgPoint {
                    workload,
                    n,
                    threads: t,
                };
                let isa = req.isa.filter(|_| !req.system_blas);
                linalg::check_memory(sys, point, req.nb.unwrap_or(linalg::default_nb(n)), isa)
                    .map_err(|e| UsageError(e.to_string()))?;
                pts.push(point);
            }
        }
    }
    if req.system_blas {
        SystemBlas::load(
            req.blas_library.as_deref(),
            linalg_workloads.contains(&LinalgWorkload::Linpack),
        )
        .map_err(|e| UsageError(e.to_string()))?;
    }
    Ok(Plan {
        kernels,
        linalg: pts,
        reps,
        precision: req.precision,
    })
}

impl super::Request for CpuRequest {
    fn check(&self, sys: &SystemInfo) -> anyhow::Result<Duration> {
        Ok(plan(self, sys)?.estimate(sys))
    }

    fn run(self: Box<Self>, rec: &mut Recorder) -> anyhow::Result<()> {
        run(*self, rec)
    }

    fn least_timed(&self, sys: &SystemInfo) -> Option<Duration> {
        CpuRequest::least_timed(self, sys)
    }

    fn planned(&self, sys: &SystemInfo) -> Vec<crate::results::ResultRecord> {
        let Ok(plan) = plan(self, sys) else {
            return Vec::new();
        };
        let mut out = match &plan.kernels {
            Some(o) => super::planned::cpu(o, sys),
            None => Vec::new(),
        };
        out.extend(super::planned::linalg(
            sys,
            &plan.linalg,
            self.nb,
            self.linalg_engine(),
            self.memory_fraction,
            plan.reps.repeat,
        ));
        out
    }
}

/// Measures the points of `req` into `rec` (one command, or one job of a suite); with
/// `--diagnose`, then its low points again.
fn run(req: CpuRequest, rec: &mut Recorder) -> anyhow::Result<()> {
    let from = rec.results().len();
    measure(&req, rec)?;
    if req.diagnose {
        diagnose_again(&req, rec, from)?;
    }
    Ok(())
}

/// `--diagnose` ([`super::diagnose`]): the knobs of the CPU's causes — the widest instruction
/// set of the CPU for `isa` (a kernel's, or a built-in dense solve's or multiply's), four times
/// the order N ([`LinalgWorkload::larger_n`]) for `problem-size` — on the point alone.
fn diagnose_again(req: &CpuRequest, rec: &mut Recorder, from: usize) -> anyhow::Result<()> {
    let sys = rec.system();
    let memory = sys.memory.available_or_assumed();
    let widest = sys.cpu.isas.iter().copied().max_by_key(|i| i.width_bits());
    let knob = |r: &crate::results::ResultRecord, cause: &str| {
        let one = CpuRequest {
            kernels: Vec::new(),
            linalg: Vec::new(),
            threads: Some(vec![r.params.threads()]),
            diagnose: false,
            ..req.clone()
        };
        match (cause, r.workload) {
            ("isa", crate::workload::Workload::Cpu(w)) => {
                let isa = widest?;
                Some((
                    format!("--isa {}", isa.name()),
                    CpuRequest {
                        kernels: vec![w],
                        isa: Some(isa),
                        ..one
                    },
                ))
            }
            ("isa", crate::workload::Workload::Linalg(w)) => {
                let (isa, n) = (widest?, r.params.cpu()?.linalg.as_ref()?.n);
                Some((
                    format!("--isa {}", isa.name()),
                    CpuRequest {
                        linalg: vec![w],
                        n: vec![n],
                        memory_fraction: None,
                        isa: Some(isa),
                        ..one
                    },
                ))
            }
            ("problem-size", crate::workload::Workload::Linalg(w)) => {
                let larger = w.larger_n(r.params.cpu()?.linalg.as_ref()?.n, memory)?;
                Some((
                    format!("--n {larger}"),
                    CpuRequest {
                        linalg: vec![w],
                        n: vec![larger],
                        memory_fraction: None,
                        ..one
                    },
                ))
            }
            _ => None,
        }
    };
    super::diagnose::again(rec, from, "cpu", knob, measure)
}

/// Measures the points of `req` into `rec`.
fn measure(req: &CpuRequest, rec: &mut Recorder) -> anyhow::Result<()> {
    let req = req.clone();
    let sys = rec.system();
    let plan = plan(&req, &sys)?;
    let estimate = plan.estimate(&sys);
    let Some(opts) = plan.kernels else {
        return run_linalg(&req, plan.linalg, rec, Some(estimate));
    };
    let session = CpuSession::new(&sys, &opts).map_err(|e| UsageError(e.to_string()))?;
    rec.announce(
        "cpu",
        &format!(
            "{} — ISA {}, {} scaling, {} of {} after {} warm-up",
            report::table::machine_line(&sys),
            session.isa(),
            opts.scaling.name(),
            super::repetitions(opts.reps.repeat, req.precision),
            super::repetition_time(opts.duration, opts.sustain),
            opts.reps.warmup
        ),
        Some(estimate),
    );
    rec.drive(
        &points(&opts),
        &mut KernelRun {
            session,
            warmup: opts.reps.warmup,
            precision: req.precision,
        },
    )?;
    if plan.linalg.is_empty() {
        return Ok(());
    }
    run_linalg(&req, plan.linalg, rec, None)
}

/// The LINPACK, DGEMM and SGEMM points: workload × N × threads, each `--repeat` solves or
/// multiplies after `--warmup` untimed ones.
fn run_linalg(
    req: &CpuRequest,
    pts: Vec<LinalgPoint>,
    rec: &mut Recorder,
    estimate: Option<Duration>,
) -> anyhow::Result<()> {
    let sys = rec.system();
    let reps = req.reps;
    // The system BLAS is loaded once, before any point (and after the synthetic kernels: a
    // library may start its threads when loaded); its threads follow each point's placement.
    let blas = if req.system_blas {
        Some(
            SystemBlas::load(
                req.blas_library.as_deref(),
                req.linalg.contains(&LinalgWorkload::Linpack),
            )
            .map_err(|e| UsageError(e.to_string()))?,
        )
    } else {
        None
    };
    let engine = blas
        .as_ref()
        .map_or(Engine::BuiltIn(req.isa), Engine::System);
    let which = match &blas {
        Some(b) => format!("system BLAS {}", b.description()),
        None => format!(
            "built-in engine ({})",
            linalg::plan_for::<f64>(&sys, 1, req.isa).kernel.isa
        ),
    };
    rec.announce(
        "cpu",
        &format!(
            "{} — {which}, {} after {} warm-up; the peak is the FMA's of the element type (DP=… in --ops-per-cycle and --peak applies to LINPACK and DGEMM, SP=… to SGEMM)",
            report::table::machine_line(&sys),
            super::repetitions(reps.repeat, req.precision),
            reps.warmup
        ),
        estimate,
    );
    rec.drive(
        &pts,
        &mut LinalgRun {
            req,
            sys: &sys,
            engine,
            reps,
        },
    )
}

/// A CPU run's synthetic kernels as the recorder drives them.
struct KernelRun<'a> {
    session: CpuSession<'a>,
    warmup: usize,
    precision: Option<Precision>,
}

impl super::session::Session for KernelRun<'_> {
    type Point = CpuPoint;

    fn rounds(&self, _: &CpuPoint) -> u64 {
        (self.warmup + self.session.repeat()) as u64
    }

    fn repeat(&self) -> usize {
        self.session.repeat()
    }

    fn set_repeat(&mut self, repeat: usize) {
        self.session.set_repeat(repeat);
    }

    fn precision(&self) -> Option<Precision> {
        self.precision
    }

    fn planned(&self, p: &CpuPoint) -> Vec<crate::results::ResultRecord> {
        vec![self.session.planned(*p)]
    }

    fn run(
        &mut self,
        point: CpuPoint,
        tick: &mut dyn FnMut(),
    ) -> anyhow::Result<Vec<crate::results::ResultRecord>> {
        let warmup = self.warmup;
        self.session
            .run(point, tick)
            .map(|mut r| {
                r.warmup_rounds = Some(warmup);
                vec![r]
            })
            .map_err(|e| anyhow::anyhow!("{} with {} threads: {e}", point.workload, point.threads))
    }
}

/// A CPU run's dense solves and multiplies as the recorder drives them.
struct LinalgRun<'a> {
    req: &'a CpuRequest,
    sys: &'a SystemInfo,
    engine: Engine<'a>,
    /// The request's repetitions, or as `set_repeat` changed them.
    reps: Repetition,
}

impl super::session::Session for LinalgRun<'_> {
    type Point = LinalgPoint;

    fn rounds(&self, _: &LinalgPoint) -> u64 {
        (self.reps.warmup + self.reps.repeat) as u64
    }

    fn repeat(&self) -> usize {
        self.reps.repeat
    }

    fn set_repeat(&mut self, repeat: usize) {
        self.reps.repeat = repeat;
    }

    fn precision(&self) -> Option<Precision> {
        self.req.precision
    }

    fn planned(&self, p: &LinalgPoint) -> Vec<crate::results::ResultRecord> {
        super::planned::linalg(
            self.sys,
            std::slice::from_ref(p),
            self.req.nb,
            self.engine.kind(),
            self.req.memory_fraction,
            self.reps.repeat,
        )
    }

    fn run(
        &mut self,
        point: LinalgPoint,
        tick: &mut dyn FnMut(),
    ) -> anyhow::Result<Vec<crate::results::ResultRecord>> {
        let req = self.req;
        linalg::run(
            self.sys,
            point,
            req.nb.unwrap_or(linalg::default_nb(point.n)),
            self.engine,
            self.reps,
            &req.linalg_overrides(point.workload),
            tick,
        )
        .map(|mut r| {
            r.warmup_rounds = Some(req.reps.warmup);
            if let crate::results::params::Params::Cpu(c) = &mut r.params
                && let Some(l) = &mut c.linalg
            {
                l.memory_fraction = req.memory_fraction;
            }
            vec![r]
        })
        .map_err(|e| {
            anyhow::anyhow!(
                "{} at N = {} with {} threads: {e}",
                point.workload.name(),
                point.n,
                point.threads
            )
        })
    }
}
