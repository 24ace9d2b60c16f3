use super::cpu::{LARGE_N, LEAST_LARGE_N, large_n};
use super::*;
use crate::results::params::Params;
use crate::sysinfo::{Fact, Isa, Source, SystemInfo};
use serde_json::json;

/// The quick profile's machine (AVX-512, a measured clock).
fn machine() -> SystemInfo {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/history");
    let r =
        crate::results::Report::from_json(&std::fs::read(dir.join("quick.json")).unwrap()).unwrap();
    let mut sys = r.system;
    sys.cpu.isas = vec![Isa::Avx512, Isa::Avx2, Isa::Sse2, Isa::Scalar];
    sys.cpu.measured_clock_ghz = Fact::known(3.6, Source::Measured);
    sys
}

/// One DP thread on `isa` at `share` of a 60 GOPS peak.
fn dp(isa: &str, share: f64) -> ResultRecord {
    let w = crate::results::Workload::named(Subsystem::Cpu, "DP").unwrap();
    let params = Params::with_defaults(
        w,
        json!({"threads": 1, "isa": isa, "clock_ghz": 3.6, "cpus": [0]}),
    )
    .unwrap();
    let peak = crate::sysinfo::peak::Peak {
        value: 60.0,
        unit: Unit::Gops,
        formula: "test".into(),
        inputs: Default::default(),
    };
    ResultRecord::new(
        w,
        params,
        Metric::Throughput,
        Unit::Gops,
        vec![60.0 * share; 2],
        Ok(peak),
    )
}

#[test]
fn a_fault_named_first_with_its_share_passes() {
    // Half-width vectors: 95 % → 48 %; the fault took ln(0.48/0.95)/ln(0.48) = 93 % of the
    // gap, `isa` (ceiling 0.5) explains ln(0.5)/ln(0.48) = 94 %.
    let v = verdict(
        "isa",
        &[dp("avx512", 0.95)],
        (&dp("avx2", 0.48), &[]),
        machine(),
    );
    assert_eq!(v.status, Status::Pass, "{v:?}");
    let (e, m) = (v.expected.unwrap(), v.measured.unwrap());
    assert!((e - 93.0).abs() < 0.5 && (m - 94.4).abs() < 0.5, "{v:?}");
    assert!(v.reason.contains("diagnosed: isa 94 %"), "{}", v.reason);
}

#[test]
fn a_fault_named_with_the_wrong_share_or_not_at_all_fails() {
    // 95 % → 20 % on avx2: the fault took 97 % of the gap, `isa` explains 43 % of it.
    let v = verdict(
        "isa",
        &[dp("avx512", 0.95)],
        (&dp("avx2", 0.2), &[]),
        machine(),
    );
    assert_eq!(v.status, Status::Fail, "{v:?}");
    assert!(v.measured.unwrap() < 50.0, "{v:?}");
    // A quota the point does not record is not diagnosed: its cause is missing.
    let v = verdict(
        "cpu-quota",
        &[dp("avx512", 0.95)],
        (&dp("avx512", 0.45), &[]),
        machine(),
    );
    assert_eq!(v.status, Status::Fail, "{v:?}");
    assert_eq!(v.measured, None);
    assert!(v.reason.contains("diagnosed: no cause"), "{}", v.reason);
    // Named, but not first: a narrower ISA's half is found before the quota's half.
    let mut both = dp("avx2", 0.25);
    both.params.set_cpu_quota(0.5);
    let v = verdict("cpu-quota", &[dp("avx2", 0.5)], (&both, &[]), machine());
    assert_eq!(v.status, Status::Fail, "{v:?}");
    assert!(v.measured.is_some_and(|m| (m - 50.0).abs() < 1e-6), "{v:?}");
    assert!(
        v.reason.contains("diagnosed: isa 50 %, cpu-quota 50 %"),
        "{}",
        v.reason
    );
}

#[test]
fn a_fault_without_effect_is_skipped_saying_so() {
    let v = verdict(
        "isa",
        &[dp("avx512", 0.95)],
        (&dp("avx2", 0.9), &[]),
        machine(),
    );
    assert_eq!(v.status, Status::Skip, "{v:?}");
    assert!(v.reason.contains("nothing to diagnose"), "{}", v.reason);
}

#[test]
fn the_large_linpack_takes_about_the_duration() {
    let d = Duration::from_millis(500);
    // 40 GOPS at N = 200: 320 GOPS for 0.5 s is N ≈ 6200, capped.
    assert_eq!(large_n(40.0, d), LARGE_N);
    // An optimised build's 10.8 GOPS: N³ = 1.5 × 0.5 s × 86.4 GOPS → N = 4016 → 4000.
    assert_eq!(large_n(10.8, d), 4000);
    // 2.0 GOPS: N³ = 1.5 × 0.5 s × 16 GOPS → N = 2289 → 2200.
    assert_eq!(large_n(2.0, d), 2200);
    // A debug build's 0.58 GOPS: N = 1515 → 1500; 0.2 GOPS: N = 1062, at least N = 1000.
    assert_eq!(large_n(0.58, d), 1500);
    assert_eq!(large_n(0.1, d), LEAST_LARGE_N);
    assert_eq!(large_n(f64::NAN, d), LARGE_N);
}
