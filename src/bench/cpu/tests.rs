//! The CPU benchmark's tests: kernels, slices, estimates and fixed work on this machine.

use super::*;

/// The machine, with the shortest clock measurement.
fn tiny_sys() -> SystemInfo {
    crate::sysinfo::collect(crate::sysinfo::ClockBudget {
        warmup: Duration::from_millis(1),
        sample: Duration::from_millis(1),
        samples: 1,
    })
}

/// Tiny options: `workloads` on one thread at `isa`, `repeat` repetitions of 2 ms.
fn tiny_opts(workloads: Vec<CpuWorkload>, isa: Isa, repeat: usize) -> CpuOptions {
    CpuOptions {
        workloads,
        threads: vec![1],
        scaling: Scaling::Weak,
        isa: Some(isa),
        duration: Duration::from_millis(2),
        total_ops: None,
        sustain: false,
        reps: Repetition { warmup: 0, repeat },
        clock_ghz: None,
        ops_per_cycle: BTreeMap::new(),
        peak_per_core: BTreeMap::new(),
    }
}

/// The adds an FMA+add kernel issues per FMA follow the table's add pipes at its width.
#[test]
fn add_mix_follows_the_add_pipes_beside_the_fmas() {
    let u = |k: &str| Some(crate::sysinfo::uarch::lookup(k).unwrap());
    for (key, isa, mix) in [
        ("sapphirerapids", Isa::Avx512, AddMix::None),
        ("sapphirerapids", Isa::Avx2, AddMix::Half),
        ("alderlake", Isa::Avx2, AddMix::Half),
        ("zen4", Isa::Avx512, AddMix::Equal),
        ("zen4", Isa::Avx2, AddMix::Equal),
        ("zen5", Isa::Avx512, AddMix::Equal),
        ("skylake-sp", Isa::Avx512, AddMix::None),
        ("skylake", Isa::Avx2, AddMix::None),
        ("zen3", Isa::Scalar, AddMix::None),
    ] {
        assert_eq!(AddMix::of(u(key), isa), mix, "{key} {isa}");
    }
    assert_eq!(AddMix::of(None, Isa::Avx2), AddMix::None);
}

/// Every FMA+add kernel this machine can run runs, and counts 14 FMAs (two operations a
/// lane) and 7 or 14 adds (one) an iteration; without adds the FMA kernel takes its place.
#[cfg(target_arch = "x86_64")]
#[test]
fn fma_add_kernels_run_and_count_their_operations() {
    let sys = tiny_sys();
    let mut ran = 0;
    for isa in [Isa::Avx512, Isa::Avx2] {
        if !sys.cpu.isas.contains(&isa) {
            continue;
        }
        for bits in [64, 32] {
            let lanes = isa.lanes(bits) as u64;
            for (mix, adds) in [(AddMix::Half, 7), (AddMix::Equal, 14)] {
                let k = kernel_with(Op::FmaAdd { element_bits: bits }, isa, mix).unwrap();
                assert_eq!(k.ops_per_iteration, lanes * (14 * 2 + adds), "{isa} {bits}");
                assert!(k.instruction.contains("vadd"), "{}", k.instruction);
                (k.run)(1000);
                ran += 1;
            }
            let fma = kernel_with(Op::FmaAdd { element_bits: bits }, isa, AddMix::None);
            let plain = kernel(Op::Fma { element_bits: bits }, isa).unwrap();
            assert_eq!(fma.unwrap().instruction, plain.instruction);
        }
    }
    assert!(ran > 0 || !sys.cpu.isas.contains(&Isa::Avx2));
}

/// A dot product whose extension the machine lacks at the ISA is refused before any point,
/// with what it needs; where it has one, its kernel counts 8 (int8) or 4 (bf16) operations a
/// 32-bit lane and runs.
#[test]
fn dot_products_need_their_extension() {
    let sys = tiny_sys();
    let opts = |w: CpuWorkload, isa: Isa| tiny_opts(vec![w], isa, 1);
    for w in [CpuWorkload::Int8Dot, CpuWorkload::Bf16Dot] {
        let o = opts(w, Isa::Scalar);
        let e = CpuSession::new(&sys, &o)
            .err()
            .expect("no dot product in scalar code");
        let needs = if cfg!(target_arch = "x86_64") {
            "needs AVX512"
        } else {
            "needs FEAT_"
        };
        assert!(e.to_string().contains(needs), "{e}");
        assert!(e.to_string().starts_with(w.name()), "{e}");
        for &isa in &sys.cpu.isas {
            let op = w.op().unwrap();
            let Some(k) = kernel(op, isa) else {
                assert!(CpuSession::new(&sys, &opts(w, isa)).is_err());
                continue;
            };
            let per_lane = if w == CpuWorkload::Int8Dot { 8 } else { 4 };
            let chains = if isa == Isa::Avx512 || cfg!(target_arch = "aarch64") {
                24
            } else {
                12
            };
            assert_eq!(
                k.ops_per_iteration,
                chains * isa.lanes(32) as u64 * per_lane
            );
            (k.run)(100);
        }
    }
}

/// A matrix workload where the machine lacks the extension is refused before any point
/// with what it needs (on x86, the AMX decision's own reason); where it has one, the kernel
/// counts its products and runs.
#[test]
fn matrix_multiplies_need_their_extension() {
    let sys = tiny_sys();
    for (w, products) in [(CpuWorkload::Int8Mm, 8), (CpuWorkload::Bf16Mm, 4)] {
        let op = w.op().unwrap();
        let o = tiny_opts(vec![w], Isa::Scalar, 1);
        let e = CpuSession::new(&sys, &o)
            .err()
            .expect("no matrix multiply in scalar code");
        let needs = if cfg!(target_arch = "x86_64") {
            "needs Intel AMX"
        } else {
            "needs FEAT_"
        };
        assert!(e.to_string().contains(needs), "{e}");
        for &isa in &sys.cpu.isas {
            let opts = tiny_opts(vec![w], isa, 1);
            let session = CpuSession::new(&sys, &opts);
            let Some(k) = kernel(op, isa) else {
                let e = session.err().expect("refused without a kernel");
                eprintln!("refused as it should be: {e}");
                continue;
            };
            assert!(session.is_ok());
            // Arm MMLA: 24 chains, each 32-bit lane the sum of `products` products (2
            // operations each); AMX: 8 instructions of 16 × 16 lanes, 8 × `products` each.
            let expected = if cfg!(target_arch = "aarch64") {
                24 * isa.lanes(32) as u64 * 2 * products
            } else {
                8 * 256 * 2 * 8 * products
            };
            assert_eq!(k.ops_per_iteration, expected, "{isa} {w}");
            (k.run)(100);
        }
    }
}

#[test]
fn a_round_in_slices_runs_all_its_iterations_in_few_calls() {
    use std::sync::atomic::{AtomicU64, Ordering};
    static DONE: AtomicU64 = AtomicU64::new(0);
    static CALLS: AtomicU64 = AtomicU64::new(0);
    fn count(n: u64) {
        DONE.fetch_add(n, Ordering::Relaxed);
        CALLS.fetch_add(1, Ordering::Relaxed);
    }
    for (n, calls) in [
        (1, 1),
        (MIN_SLICE, 1),
        (MIN_SLICE * 3 + 1, 4),
        (1 << 40, SLICES),
        ((1 << 40) + 7, SLICES),
    ] {
        DONE.store(0, Ordering::Relaxed);
        CALLS.store(0, Ordering::Relaxed);
        run_sliced(count, n);
        assert_eq!(DONE.load(Ordering::Relaxed), n);
        assert_eq!(CALLS.load(Ordering::Relaxed), calls, "{n} iterations");
    }
}

/// Every registered workload runs in every ISA this machine supports, at a tiny size, and
/// gives a positive finite rate.
#[test]
fn conformance_every_workload_every_isa() {
    let sys = tiny_sys();
    for &isa in &sys.cpu.isas {
        // A dot product without its extension at this width is refused (tested below).
        let workloads = CpuWorkload::ALL
            .into_iter()
            .filter(
                |w| !matches!(w.op(), Some(op @ (Op::Dot { .. } | Op::Matrix { .. })) if kernel(op, isa).is_none()),
            )
            .collect();
        let opts = tiny_opts(workloads, isa, 2);
        let Ok(session) = CpuSession::new(&sys, &opts) else {
            eprintln!("skipped: no kernels for {isa} on {}", sys.cpu.arch);
            continue;
        };
        for point in points(&opts) {
            let mut ticks = 0;
            let rec = session.run(point, &mut || ticks += 1).unwrap();
            assert_eq!(ticks, 2);
            assert_eq!(rec.samples.len(), 2);
            assert!(
                rec.samples.iter().all(|s| s.is_finite() && *s > 0.0),
                "{isa} {point:?}: {:?}",
                rec.samples
            );
            if point.workload != CpuWorkload::Null {
                assert_eq!(rec.unit, Unit::OpsPerSec);
                let k = rec.params.cpu().unwrap().kernel.as_ref().unwrap();
                assert_eq!(k.isa, isa);
                let per_thread = &k.thread_gops;
                assert_eq!(per_thread.len(), point.threads);
                // One thread: its own rate is the point's, within the timer's resolution.
                let own = per_thread[0] * 1e9;
                assert!(own >= rec.summary.min * 0.999, "{own} vs {:?}", rec.samples);
                assert_eq!(k.clock_probes.len(), 2);
            }
        }
    }
}

#[test]
fn point_clock_is_the_mean_of_each_threads_median_or_unknown() {
    let d = |ghz: Option<f64>| ClockDecision {
        ghz,
        unknown_reason: ghz.is_none().then(|| "the probes disagree".to_string()),
        readings: vec![ProbeReading {
            probe: "imul r64".into(),
            latency_cycles: 3.0,
            ghz: ghz.unwrap_or(1.0),
        }],
    };
    // Thread 0: median 3.0 of (2.0, 3.0, 3.1); thread 1: 3.4, its unknown round left out.
    let c = point_clock(&[
        vec![d(Some(2.0)), d(Some(3.0)), d(Some(3.1))],
        vec![d(None), d(Some(3.4))],
    ]);
    assert!((c.ghz.unwrap() - 3.2).abs() < 1e-9, "{c:?}");
    assert_eq!(c.readings.len(), 1);
    // A thread that never agreed makes the point's clock unknown, with its reason.
    let c = point_clock(&[vec![d(Some(3.0))], vec![d(None), d(None)]]);
    assert_eq!(c.ghz, None);
    assert_eq!(c.unknown_reason.as_deref(), Some("the probes disagree"));
    assert_eq!(point_clock(&[]).ghz, None);
}

#[test]
fn forced_isa_must_exist() {
    let mut sys = tiny_sys();
    sys.cpu.isas = vec![Isa::Scalar];
    let err = choose_isa(&sys, Some(Isa::Avx512)).unwrap_err();
    assert!(err.to_string().contains("not available"), "{err}");
}

/// Finding 5: 2^64 − 1 operations, weak, at 4096 threads, on a core whose peak is unknown
/// or absurd, saturate the estimate instead of panicking (two such jobs are summed), and
/// the check refuses them by their time, in one line.
#[test]
fn a_fixed_amount_beyond_a_day_saturates_the_estimate_and_is_refused() {
    let mut o = tiny_opts(vec![CpuWorkload::Dp], Isa::Scalar, 1000);
    o.total_ops = Some(u64::MAX);
    o.threads = (1..=4096).collect();
    for gops in [30.0, 1e-300, 0.0, f64::NAN] {
        let e = estimate(&o, 1, &|_| gops);
        assert!(e > Duration::from_secs(86_400), "{gops}: {e:?}");
        let total = crate::units::sum_estimates([e, e]);
        assert!(total >= e, "{gops}");
    }
    assert_eq!(estimate(&o, 1, &|_| 1e-300), Duration::MAX);
    let err = check_work(&o, 1, &|_| 30.0).unwrap_err().to_string();
    assert!(err.starts_with("--total-ops 18446744073709551615"), "{err}");
    assert!(
        err.contains("more than 24 h") && err.contains("--duration"),
        "{err}"
    );
    assert!(!err.contains('\n'), "{err}");
    // A second of work passes; NULL's work is its own.
    o.total_ops = Some(28_500_000_000);
    o.threads = vec![1];
    assert_eq!(check_work(&o, 1, &|_| 30.0), Ok(()));
    o.total_ops = Some(u64::MAX);
    o.workloads = vec![CpuWorkload::Null];
    assert_eq!(check_work(&o, 1, &|_| 30.0), Ok(()));
}
