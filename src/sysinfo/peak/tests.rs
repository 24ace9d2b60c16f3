use super::*;
use crate::sysinfo::uarch::lookup_x86;

const X86: [Isa; 4] = [Isa::Avx512, Isa::Avx2, Isa::Sse2, Isa::Scalar];

#[test]
fn zen4_dp_is_16_flops_per_cycle() {
    let zen4 = lookup_x86("AuthenticAMD", 25, 17);
    let p = cpu_peak(
        OpClass::Fma { element_bits: 64 },
        2,
        Ok(3.6),
        zen4,
        &X86,
        &Default::default(),
    )
    .unwrap();
    assert!((p.value - 2.0 * 3.6 * 16.0).abs() < 1e-9);
    assert_eq!(p.inputs["clock"].source, Source::Measured);
    assert_eq!(p.inputs["fma_per_cycle"].source, Source::Table);
    assert!(p.formula.contains("× 2"));
    let sp = cpu_peak(
        OpClass::Fma { element_bits: 32 },
        1,
        Ok(3.6),
        zen4,
        &X86,
        &Default::default(),
    )
    .unwrap();
    assert!((sp.value - 3.6 * 32.0).abs() < 1e-9);
    let i8 = cpu_peak(
        OpClass::IntAdd { element_bits: 8 },
        1,
        Ok(1.0),
        zen4,
        &X86,
        &Default::default(),
    )
    .unwrap();
    assert_eq!(i8.value, 128.0); // 4 × 256-bit adds = 2 × 512-bit adds = 128 bytes/cycle
}

/// The FP issue ceiling: FMAs and the adds on pipes of their own, at the width where they
/// do the most; the FMA's where adds take the FMA pipes.
#[test]
fn fp_issue_ceilings_per_family() {
    let lookup = |k: &str| super::super::uarch::lookup(k).unwrap();
    let per_cycle = |key: &str, op: OpClass, isas: &[Isa]| {
        cpu_peak(op, 1, Ok(1.0), Some(lookup(key)), isas, &Default::default())
            .unwrap()
            .value
    };
    let avx2 = [Isa::Avx2, Isa::Sse2, Isa::Scalar];
    let fa = OpClass::FmaAdd { element_bits: 64 };
    let fma = OpClass::Fma { element_bits: 64 };
    for (key, isas, fma_only, with_adds) in [
        // Two 512-bit FMAs and two 512-bit adds a cycle.
        ("zen5", &X86[..], 32.0, 48.0),
        // One 512-bit FMA (two 256-bit) and one 512-bit add (two 256-bit).
        ("zen4", &X86[..], 16.0, 24.0),
        ("zen3", &avx2[..], 16.0, 24.0),
        // Two 256-bit FMAs (one 256-bit on Zen 1) and two 128-bit adds.
        ("zen", &avx2[..], 8.0, 12.0),
        // The port-5 adder beside two 256-bit FMAs; none beside 512-bit FMAs, which stay
        // the ceiling where AVX-512 is there.
        ("alderlake", &avx2[..], 16.0, 20.0),
        ("sapphirerapids", &X86[..], 32.0, 32.0),
        ("sapphirerapids", &avx2[..], 16.0, 20.0),
        ("skylake", &avx2[..], 16.0, 16.0),
        ("skylake-sp", &X86[..], 32.0, 32.0),
    ] {
        assert_eq!(per_cycle(key, fma, isas), fma_only, "{key} {isas:?}");
        assert_eq!(per_cycle(key, fa, isas), with_adds, "{key} {isas:?}");
    }
    let arm = [Isa::Sve, Isa::Neon, Isa::Scalar];
    assert_eq!(
        per_cycle("neoverse-v2", fa, &arm),
        per_cycle("neoverse-v2", fma, &arm)
    );
    let p = cpu_peak(
        fa,
        2,
        Ok(3.0),
        Some(lookup("zen5")),
        &X86,
        &Default::default(),
    )
    .unwrap();
    assert_eq!(p.value, 2.0 * 3.0 * 48.0);
    assert_eq!(p.inputs["fadd_per_cycle"].value, 2.0);
    assert_eq!(p.inputs["fadd_per_cycle"].source, Source::Table);
    assert!(p.formula.contains("fadd_per_cycle"), "{}", p.formula);
    // SP: twice the lanes.
    let sp = OpClass::FmaAdd { element_bits: 32 };
    assert_eq!(per_cycle("zen5", sp, &X86), 96.0);
}

#[test]
fn unknown_uarch_gives_reason_and_overrides_work() {
    let op = OpClass::Fma { element_bits: 64 };
    let err = cpu_peak(op, 1, Ok(3.0), None, &X86, &Default::default()).unwrap_err();
    assert!(err.contains("--ops-per-cycle"));
    let user = CpuPeakOverrides {
        ops_per_cycle: Some(8.0),
        clock_ghz: Some(2.0),
        ..Default::default()
    };
    let p = cpu_peak(op, 2, Ok(3.0), None, &X86, &user).unwrap();
    assert_eq!(p.value, 32.0);
    assert_eq!(p.inputs["clock"].source, Source::User);
    let err = cpu_peak(
        op,
        1,
        Err("probes disagree".into()),
        None,
        &X86,
        &Default::default(),
    )
    .unwrap_err();
    assert!(
        err.starts_with(CLOCK_UNKNOWN) && err.contains("probes disagree"),
        "{err}"
    );
    assert!(err.contains("--clock-ghz"));
    let user = CpuPeakOverrides {
        gops_per_core: Some(50.0),
        ..Default::default()
    };
    assert_eq!(
        cpu_peak(op, 2, Err(String::new()), None, &X86, &user)
            .unwrap()
            .value,
        100.0
    );
}

#[test]
fn fp_peak_needs_an_fma_isa() {
    let zen4 = lookup_x86("AuthenticAMD", 25, 17);
    let err = cpu_peak(
        OpClass::Fma { element_bits: 64 },
        1,
        Ok(3.0),
        zen4,
        &[Isa::Sse2, Isa::Scalar],
        &Default::default(),
    );
    assert!(err.is_err());
}
