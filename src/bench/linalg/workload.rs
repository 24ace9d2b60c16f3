//! The LINPACK, DGEMM and SGEMM workloads of `peakbench cpu`: a point is a problem size and a
//! thread count; each repetition times one solve (LINPACK: factorisation and solve, HPL's count
//! of operations, HPL's residual check) or one multiply (DGEMM, SGEMM: C = A·B, 2·N³
//! operations). The rate is in GOPS (GFLOP/s) against the machine's FMA peak for the element
//! type (fp64; SGEMM fp32).
//!
//! Two engines do the arithmetic ([`Engine`]): peakbench's own multiply and factorisation, or
//! an installed BLAS/LAPACK ([`SystemBlas`], `--blas system`); the problem, the timing, the
//! checks and the record are the same for both.

use super::gemm::{Blocking, Gemm, MatMut, MatRef};
use super::kernels::{self, Element, MicroKernel};
use super::system_blas::{BlasError, SystemBlas, Threads};
use super::{hpl, lu, lu_team};
use crate::results::ResultRecord;
use crate::results::params::{CpuParams, LinalgParams, NodeTag, Params};
use crate::results::{Metric, Unit};
use crate::runner::{Repetition, affinity};
use crate::sysinfo::SystemInfo;
use crate::sysinfo::peak::{CpuPeakOverrides, OpClass, cpu_peak};
use std::time::Instant;

pub use crate::workload::linalg::{DEFAULT_NB, LinalgWorkload, default_nb};

impl LinalgWorkload {
    /// Bytes a point of order `n` on `threads` threads allocates: the matrices and the
    /// workspaces (packed panels, a copy of U12), overflow-checked.
    pub fn bytes<T>(self, n: usize, nb: usize, threads: usize, g: &Gemm<T>) -> Option<u64> {
        let n = n as u64;
        let size = self.element_bytes();
        let matrices = n.checked_mul(n)?.checked_mul(size * self.matrices())?;
        let b = g.blocking;
        let packs = ((b.kc * (b.nc + b.mc + g.kernel.nr + g.kernel.mr)) as u64)
            .checked_mul(size * threads as u64)?;
        let u12 = (nb as u64)
            .checked_mul(n)?
            .checked_mul(size * threads as u64)?;
        matrices
            .checked_add(packs)?
            .checked_add(u12)?
            .checked_add(n * 8 * 2)
    }
}

/// Why a point could not be measured.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LinalgError {
    #[error(
        "{workload} at N = {n} needs {need} bytes of memory and {available} are available; choose a smaller --n or --memory-fraction"
    )]
    Memory {
        workload: &'static str,
        n: usize,
        need: u64,
        available: u64,
    },
    #[error("{0} at N = {1} is too large to allocate; choose a smaller --n")]
    TooLarge(&'static str, usize),
    #[error(
        "the residual check FAILED at N = {n}: scaled residual {scaled:.3e} is not below HPL's threshold 16; the solve is wrong, no figure is reported"
    )]
    Residual { n: usize, scaled: f64 },
    #[error(
        "the {workload} product is wrong at N = {n}: C({i}, {j}) is {got:e}, its sum is {want:e}; the multiply is broken, no figure is reported"
    )]
    Product {
        workload: &'static str,
        n: usize,
        i: usize,
        j: usize,
        got: f64,
        want: f64,
    },
    #[error("{0}")]
    Solve(#[from] lu::LuError),
    #[error("{0}")]
    Shape(#[from] super::gemm::ShapeError),
    #[error("{0}")]
    Blas(#[from] BlasError),
    #[error("could not pin the threads: {0}")]
    Pin(String),
}

/// One point: a workload at order `n` on `threads` threads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LinalgPoint {
    pub workload: LinalgWorkload,
    pub n: usize,
    pub threads: usize,
}

/// Which code multiplies and factors.
#[derive(Debug, Clone, Copy)]
pub enum Engine<'a> {
    /// peakbench's own ([`Gemm`], [`lu`]), with the micro-kernel of this instruction set
    /// (`--isa`; None: the widest).
    BuiltIn(Option<crate::sysinfo::Isa>),
    /// An installed BLAS/LAPACK: `dgemm_`/`sgemm_`, `dgetrf_` and `dgetrs_`.
    System(&'a SystemBlas),
}

impl Engine<'_> {
    /// The name in the record's `engine`.
    pub fn name(&self) -> &'static str {
        self.kind().name()
    }

    /// What the record says of it.
    pub fn kind(&self) -> crate::results::params::LinalgEngine {
        match self {
            Engine::BuiltIn(_) => crate::results::params::LinalgEngine::BuiltIn,
            Engine::System(_) => crate::results::params::LinalgEngine::System,
        }
    }
}

/// About how long a point takes with `reps` (a plan, not a promise): each round's solve or
/// multiply at a share of the FMA peak that grows with N as the built-in engine's does (at
/// N = 8000 on a Zen 4: LINPACK 80 %, DGEMM 88 %; at N = 1000, 35 % and 75 %), on the cores
/// the threads can use, plus making the system and, for LINPACK, checking its residual (each
/// element made again: about 5 ns each on one thread). `core_gops` is one core's FMA peak for
/// the element type (GOPS), or a common figure where the peak is unknown.
pub fn estimate(
    point: LinalgPoint,
    reps: Repetition,
    cores: usize,
    core_gops: Option<f64>,
) -> std::time::Duration {
    let n = point.n as f64;
    let usable = point.threads.min(cores.max(1)) as f64;
    let share = match point.workload {
        LinalgWorkload::Linpack => 0.9 * n / (n + 1200.0),
        LinalgWorkload::Dgemm | LinalgWorkload::Sgemm => 0.9 * n / (n + 150.0),
    };
    let rate = core_gops.unwrap_or(30.0) * 1e9 * usable * share;
    let solve = point.workload.flops(point.n) / rate;
    let rounds = (reps.warmup + reps.repeat) as f64;
    let elements = n * n * 5e-9;
    let per_round = match point.workload {
        // A fresh system each round (in parallel) and the residual (on one thread).
        LinalgWorkload::Linpack => solve + elements / usable + elements,
        LinalgWorkload::Dgemm | LinalgWorkload::Sgemm => solve,
    };
    // DGEMM and SGEMM make their two matrices once and check one element of C.
    let once = match point.workload {
        LinalgWorkload::Linpack => 0.0,
        _ => 2.0 * elements / usable,
    };
    crate::units::estimate_secs(rounds * per_round + once)
}

/// The multiply's plan for this machine: its widest micro-kernel for `T` (or the one of
/// `kernel`), blocked for the caches one thread has (L1 and L2 its own, its share of the last
/// level).
pub fn plan<T: Element>(
    sys: &SystemInfo,
    threads: usize,
    kernel: Option<MicroKernel<T>>,
) -> Gemm<T> {
    let kernel = kernel.unwrap_or_else(kernels::best::<T>);
    let size = |level: u32| {
        sys.caches
            .iter()
            .filter(|c| c.level == level && c.kind != "Instruction")
            .map(|c| {
                c.size_bytes
                    / u64::from(c.shared_by_cpus.max(1))
                        .min(threads.max(1) as u64)
                        .max(1)
            })
            .next()
    };
    Gemm {
        kernel,
        blocking: Blocking::for_caches(&kernel, size(1), size(2), size(3)),
        threads: threads.max(1),
    }
}

/// Whether a point's matrices and workspaces fit the memory available, before any is made.
pub fn check_memory(
    sys: &SystemInfo,
    point: LinalgPoint,
    nb: usize,
    isa: Option<crate::sysinfo::Isa>,
) -> Result<(), LinalgError> {
    let LinalgPoint {
        workload,
        n,
        threads,
    } = point;
    let need = match workload {
        LinalgWorkload::Linpack | LinalgWorkload::Dgemm => {
            workload.bytes(n, nb, threads, &plan_for::<f64>(sys, threads, isa))
        }
        LinalgWorkload::Sgemm => {
            workload.bytes(n, nb, threads, &plan_for::<f32>(sys, threads, isa))
        }
    };
    let need = need.ok_or(LinalgError::TooLarge(workload.name(), n))?;
    if let Some(&available) = sys.memory.available_bytes.get()
        && need > available
    {
        return Err(LinalgError::Memory {
            workload: workload.name(),
            n,
            need,
            available,
        });
    }
    Ok(())
}

/// Measures one point with `engine`: `reps.warmup` untimed and `reps.repeat` timed repetitions,
/// `tick` after each. The threads run on the CPUs the placement picks (a system BLAS's worker
/// threads too).
#[allow(clippy::too_many_arguments)]
pub fn run(
    sys: &SystemInfo,
    point: LinalgPoint,
    nb: usize,
    engine: Engine,
    reps: Repetition,
    overrides: &CpuPeakOverrides,
    tick: &mut dyn FnMut(),
) -> Result<ResultRecord, LinalgError> {
    let LinalgPoint {
        workload,
        n,
        threads,
    } = point;
    let allowed = affinity::allowed_cpus();
    // The point's CPUs as its parameters place it; a run completes the parameters.
    let mut params = point_params(sys, point, nb, engine.kind());
    let (cpus, cores) = (params.cpus.clone(), params.cores);
    let isa = match engine {
        Engine::BuiltIn(isa) => isa,
        Engine::System(_) => None,
    };
    check_memory(sys, point, nb, isa)?;
    let bits = match workload {
        LinalgWorkload::Linpack | LinalgWorkload::Dgemm => f64::ELEMENT_BITS,
        LinalgWorkload::Sgemm => f32::ELEMENT_BITS,
    };
    // The calling thread runs on the placement's CPUs while the point runs (the threads of the
    // multiply and the factorisation inherit the set; a system BLAS's threads, which may be
    // older than the point, are restricted to it), then on what it had before.
    affinity::restrict_current_thread(&cpus).map_err(|e| LinalgError::Pin(e.to_string()))?;
    let outcome = match engine {
        Engine::BuiltIn(isa) => built_in(sys, point, nb, isa, reps, tick),
        Engine::System(blas) => system(blas, point, &cpus, reps, tick),
    };
    let _ = affinity::restrict_current_thread(&allowed);
    let outcome = outcome?;
    let flops = workload.flops(n);
    let samples: Vec<f64> = outcome.seconds.iter().map(|t| flops / t / 1e9).collect();
    let clock = if threads > 1 {
        &sys.cpu.all_core_clock_ghz
    } else {
        &sys.cpu.measured_clock_ghz
    };
    let peak = cpu_peak(
        OpClass::Fma { element_bits: bits },
        cores,
        clock.get().copied().ok_or_else(|| {
            clock
                .unknown_reason
                .clone()
                .unwrap_or_else(|| "the clock was not measured".into())
        }),
        sys.uarch(),
        &sys.cpu.isas,
        overrides,
    );
    if let Some(l) = &mut params.linalg {
        l.micro_kernel = outcome.micro_kernel;
        l.micro_kernel_isa = outcome.isa;
        l.library = match engine {
            Engine::BuiltIn(_) => None,
            Engine::System(blas) => Some(blas.description().to_string()),
        };
        l.library_threads = outcome.library_threads.as_ref().and_then(|t| t.used);
        l.residual = outcome.residual;
        l.residual_passed = outcome.residual.map(|_| true);
    }
    let mut record = ResultRecord::new(
        workload,
        Params::Cpu(params),
        Metric::Throughput,
        Unit::Gops,
        samples,
        peak,
    );
    record
        .warnings
        .extend(outcome.library_threads.and_then(|t| t.note));
    Ok(record)
}

/// The parameters of `point` before it runs with block `nb` on `engine`: its CPUs (the
/// placement on `sys`), its order, engine and block, and its operation count. A run completes
/// them with what the engine reports (its micro-kernel, library and threads, the residual);
/// the dry run plans them as they are.
pub fn point_params(
    sys: &SystemInfo,
    point: LinalgPoint,
    nb: usize,
    engine: crate::results::params::LinalgEngine,
) -> CpuParams {
    let placement = affinity::place(point.threads, &affinity::allowed_cpus(), &sys.cpu.logical);
    let built_in = engine == crate::results::params::LinalgEngine::BuiltIn;
    CpuParams {
        threads: point.threads,
        cpu_quota: None,
        cpus: placement.cpus,
        cores: placement.cores,
        oversubscribed: placement.oversubscribed,
        kernel: None,
        linalg: Some(LinalgParams {
            n: point.n,
            memory_fraction: None,
            engine,
            micro_kernel: String::new(),
            micro_kernel_isa: None,
            library: None,
            library_threads: None,
            // A system LAPACK chooses its own block.
            nb: (point.workload == LinalgWorkload::Linpack && built_in).then_some(nb),
            flops: point.workload.flops(point.n),
            residual: None,
            residual_passed: None,
        }),
        node: NodeTag::default(),
    }
}

/// [`plan`] with the micro-kernel of `isa` where one is asked for (and exists: the command
/// line checks [`kernels::for_isa`] first), else the widest.
pub fn plan_for<T: Element>(
    sys: &SystemInfo,
    threads: usize,
    isa: Option<crate::sysinfo::Isa>,
) -> Gemm<T> {
    plan(sys, threads, isa.and_then(kernels::for_isa::<T>))
}

/// A point's repetitions with peakbench's own multiply and factorisation.
fn built_in(
    sys: &SystemInfo,
    point: LinalgPoint,
    nb: usize,
    isa: Option<crate::sysinfo::Isa>,
    reps: Repetition,
    tick: &mut dyn FnMut(),
) -> Result<Outcome, LinalgError> {
    let LinalgPoint {
        workload,
        n,
        threads,
    } = point;
    match workload {
        LinalgWorkload::Linpack => {
            let g = plan_for::<f64>(sys, threads, isa);
            let mut ipiv = vec![0usize; n];
            let mut out = linpack(n, threads, reps, tick, kernel_name(&g), &mut |ab| {
                Ok(lu_team::solve_carried(&g, ab, n, n, nb, &mut ipiv)?)
            })?;
            out.isa = Some(g.kernel.kind);
            Ok(out)
        }
        LinalgWorkload::Dgemm => {
            built_in_multiply(&plan_for::<f64>(sys, threads, isa), point, reps, tick)
        }
        LinalgWorkload::Sgemm => {
            built_in_multiply(&plan_for::<f32>(sys, threads, isa), point, reps, tick)
        }
    }
}

fn built_in_multiply<T: Element>(
    g: &Gemm<T>,
    point: LinalgPoint,
    reps: Repetition,
    tick: &mut dyn FnMut(),
) -> Result<Outcome, LinalgError> {
    let n = point.n;
    let mut out = multiply(point, reps, tick, kernel_name(g), &mut |a, b, c| {
        let square = |data| MatRef {
            data,
            rows: n,
            cols: n,
            ld: n,
        };
        let c = MatMut {
            data: c,
            rows: n,
            cols: n,
            ld: n,
        };
        Ok(g.run(T::ONE, square(a), square(b), T::ZERO, c)?)
    })?;
    out.isa = Some(g.kernel.kind);
    Ok(out)
}

/// A point's repetitions on an installed BLAS/LAPACK: its thread count set to the point's, its
/// worker threads restricted to the point's CPUs.
fn system(
    blas: &SystemBlas,
    point: LinalgPoint,
    cpus: &[usize],
    reps: Repetition,
    tick: &mut dyn FnMut(),
) -> Result<Outcome, LinalgError> {
    let LinalgPoint {
        workload,
        n,
        threads,
    } = point;
    let asked = blas.set_threads(threads)?;
    blas.pin(cpus)
        .map_err(|e| LinalgError::Pin(format!("the system BLAS's threads: {e}")))?;
    let name = blas.micro_kernel();
    // Threads the library starts on its first call with this count are remembered for the
    // next point's pinning (they inherit this point's CPUs).
    let mut outcome = blas.watch(|| match workload {
        LinalgWorkload::Linpack => {
            let mut ipiv = vec![0i32; n];
            linpack(n, threads, reps, tick, name, &mut |ab| {
                let (a, b) = ab.split_at_mut(n * n);
                blas.getrf(a, n, &mut ipiv)?;
                blas.getrs(a, n, &ipiv, b)?;
                Ok(())
            })
        }
        LinalgWorkload::Dgemm => multiply::<f64>(point, reps, tick, name, &mut |a, b, c| {
            Ok(blas.gemm(n, a, b, c)?)
        }),
        LinalgWorkload::Sgemm => multiply::<f32>(point, reps, tick, name, &mut |a, b, c| {
            Ok(blas.gemm(n, a, b, c)?)
        }),
    })?;
    outcome.library_threads = Some(asked);
    Ok(outcome)
}

/// The timed repetitions of a point.
struct Outcome {
    seconds: Vec<f64>,
    /// The multiply's micro-kernel, e.g. `AVX-512 24x8`, or the system library's kernels.
    micro_kernel: String,
    /// The built-in multiply's instruction set (None for a system library's).
    isa: Option<crate::sysinfo::Isa>,
    /// LINPACK: the last repetition's scaled residual (every one passed).
    residual: Option<f64>,
    /// A system BLAS: what it did with the point's thread count.
    library_threads: Option<Threads>,
}

/// A solve of [A | b] (`n × (n + 1)`, leading dimension `n`) in place: x is left in column n.
type Solve<'a> = dyn FnMut(&mut [f64]) -> Result<(), LinalgError> + 'a;

/// A multiply: C = A·B for `n × n` matrices (leading dimension `n`).
type Multiply<'a, T> = dyn FnMut(&[T], &[T], &mut [T]) -> Result<(), LinalgError> + 'a;

/// LINPACK's repetitions: a fresh HPL system each, `solve` timed, HPL's residual checked.
fn linpack(
    n: usize,
    threads: usize,
    reps: Repetition,
    tick: &mut dyn FnMut(),
    micro_kernel: String,
    solve: &mut Solve,
) -> Result<Outcome, LinalgError> {
    let mut out = Outcome {
        seconds: Vec::new(),
        micro_kernel,
        isa: None,
        residual: None,
        library_threads: None,
    };
    for round in 0..reps.warmup + reps.repeat {
        let seed = 0x5EED + round as u64;
        // A fresh system each repetition, made outside the timed region.
        let mut ab = hpl::matrix(seed, n, n + 1, n, threads);
        let t = Instant::now();
        solve(&mut ab)?;
        let seconds = t.elapsed().as_secs_f64();
        let x = ab.split_off(n * n);
        drop(ab);
        let r = hpl::residual(seed, n, &x);
        if !r.passed {
            return Err(LinalgError::Residual {
                n,
                scaled: r.scaled,
            });
        }
        if round >= reps.warmup {
            out.seconds.push(seconds);
            out.residual = Some(r.scaled);
        }
        tick();
    }
    Ok(out)
}

/// The micro-kernel of a plan as the record names it.
fn kernel_name<T>(g: &Gemm<T>) -> String {
    format!("{} {}x{}", g.kernel.isa, g.kernel.mr, g.kernel.nr)
}

/// DGEMM or SGEMM: C = A·B by `product`, then a spot check of one element of C against its
/// sum in double precision, within the rounding bound of an n-term dot product (2·n·u·Σ|a·b|,
/// u the unit roundoff of `T`).
fn multiply<T: Element>(
    point: LinalgPoint,
    reps: Repetition,
    tick: &mut dyn FnMut(),
    micro_kernel: String,
    product: &mut Multiply<T>,
) -> Result<Outcome, LinalgError> {
    let LinalgPoint {
        workload,
        n,
        threads,
    } = point;
    let a: Vec<T> = hpl::matrix(1, n, n, n, threads);
    let b: Vec<T> = hpl::matrix(2, n, n, n, threads);
    let mut c = vec![T::ZERO; n * n];
    crate::bench::buffer::advise_huge_pages(&c);
    let mut seconds = Vec::new();
    for round in 0..reps.warmup + reps.repeat {
        let t = Instant::now();
        product(&a, &b, &mut c)?;
        let s = t.elapsed().as_secs_f64();
        if round >= reps.warmup {
            seconds.push(s);
        }
        tick();
    }
    let (i, j) = (n / 3, n / 2);
    let terms = (0..n).map(|p| a[i + p * n].to_f64() * b[p + j * n].to_f64());
    let (want, size) = terms.fold((0.0, 0.0), |(s, m), x| (s + x, m + x.abs()));
    let got = c[i + j * n].to_f64();
    if (got - want).abs() > 2.0 * n as f64 * T::unit_roundoff() * size + f64::MIN_POSITIVE {
        return Err(LinalgError::Product {
            workload: workload.name(),
            n,
            i,
            j,
            got,
            want,
        });
    }
    Ok(Outcome {
        seconds,
        micro_kernel,
        isa: None,
        residual: None,
        library_threads: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_block_shrinks_with_a_small_matrix() {
        for (n, nb) in [
            (0, 32),
            (1, 32),
            (64, 32),
            (500, 32),
            (1000, 64),
            (2000, 128),
            (1535, 64),
            (1536, 128),
            (8000, 128),
            (100_000, 128),
        ] {
            assert_eq!(default_nb(n), nb, "N = {n}");
        }
    }

    #[test]
    fn sizes_from_memory_and_the_memory_a_point_needs() {
        let gib = 1u64 << 30;
        // 8 GiB at 80 %: HPL's rule of thumb gives about 29 000.
        let n = LinalgWorkload::Linpack.n_for_memory(8 * gib, 0.8);
        assert!(
            (28_000..=29_400).contains(&n) && n.is_multiple_of(64),
            "{n}"
        );
        assert!(LinalgWorkload::Dgemm.n_for_memory(8 * gib, 0.8) < n);
        // fp32 elements: √2 × the fp64 order in the same memory.
        let (d, f) = (
            LinalgWorkload::Dgemm.n_for_memory(8 * gib, 0.8) as f64,
            LinalgWorkload::Sgemm.n_for_memory(8 * gib, 0.8) as f64,
        );
        assert!((f / d - 2f64.sqrt()).abs() < 0.01, "{d} {f}");
        assert_eq!(LinalgWorkload::Linpack.n_for_memory(0, 0.5), 64);
        let g = Gemm::<f64>::new(2);
        let b = LinalgWorkload::Linpack.bytes(8000, 256, 2, &g).unwrap();
        assert!(
            (8000 * 8000 * 8..8000 * 8000 * 8 + (256 << 20)).contains(&b),
            "{b}"
        );
        assert!(
            LinalgWorkload::Linpack
                .bytes(usize::MAX, 256, 2, &g)
                .is_none()
        );
    }
}
