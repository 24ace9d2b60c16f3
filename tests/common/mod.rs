//! Shared test helpers: a fixed report for exporter snapshots, and schema validation.
#![allow(dead_code)]

use peakbench::measure::Summary;
use peakbench::results::{Reference, Report, ResultRecord, Tool};
use peakbench::sysinfo::peak::{Peak, PeakInput};
use peakbench::sysinfo::{
    Cache, CpuInfo, Fact, Isa, LogicalCpu, MemoryInfo, OsInfo, Source, SystemInfo,
};
use serde_json::json;
use std::collections::BTreeMap;

fn d<T>(v: T) -> Fact<T> {
    Fact::known(v, Source::Detected)
}

/// A machine like the CI VM, fixed so that snapshots do not depend on where tests run.
pub fn fixed_system() -> SystemInfo {
    SystemInfo {
        cpu: CpuInfo {
            arch: "x86_64".into(),
            vendor: d("AuthenticAMD".into()),
            brand: d("AMD EPYC".into()),
            family: d(25),
            model: d(17),
            stepping: d(1),
            microarchitecture: Fact::known("AMD Zen 4".into(), Source::Table),
            sockets: d(1),
            cores: d(2),
            threads: 2,
            threads_per_core: d(1),
            features: vec!["avx2".into(), "fma".into(), "avx512f".into()],
            xcr0: d("0xe7".into()),
            isas: vec![Isa::Avx512, Isa::Avx2, Isa::Sse2, Isa::Scalar],
            cpuinfo_mhz: d(2596.15),
            max_freq_ghz: Fact::unknown("no cpufreq in sysfs (a VM, or no cpufreq driver loaded)"),
            tsc_ghz: Fact::known(2.596, Source::Measured),
            measured_clock_ghz: Fact::known(3.6, Source::Measured),
            logical: vec![
                LogicalCpu {
                    cpu: 0,
                    package: 0,
                    core: 0,
                },
                LogicalCpu {
                    cpu: 1,
                    package: 0,
                    core: 1,
                },
            ],
        },
        caches: vec![Cache {
            level: 3,
            kind: "Unified".into(),
            size_bytes: 32 << 20,
            line_bytes: Some(64),
            shared_by_cpus: 2,
            instances: 1,
        }],
        memory: MemoryInfo {
            total_bytes: d(24 << 30),
            available_bytes: d(23 << 30),
            numa_nodes: d(1),
            devices: Fact::unknown(
                "no SMBIOS table (/sys/firmware/dmi/tables/DMI is missing: a VM or firmware without SMBIOS)",
            ),
        },
        os: OsInfo {
            hostname: d("vm".into()),
            kernel: d("6.1.0".into()),
            distribution: d("Debian GNU/Linux 12 (bookworm)".into()),
            virtualization: d("KVM".into()),
        },
    }
}

fn record(workload: &str, threads: u32, samples: Vec<f64>, peak: Option<f64>) -> ResultRecord {
    let summary = Summary::of(&samples).unwrap();
    let peak = peak.map(|value| Peak {
        value,
        unit: "GOPS".into(),
        formula: "cores × clock × fma_per_cycle × (vector_width / element_width) × 2".into(),
        inputs: BTreeMap::from([
            (
                "cores".into(),
                PeakInput {
                    value: threads as f64,
                    unit: "cores".into(),
                    source: Source::Detected,
                },
            ),
            (
                "clock".into(),
                PeakInput {
                    value: 3.6,
                    unit: "GHz".into(),
                    source: Source::Measured,
                },
            ),
            (
                "fma_per_cycle".into(),
                PeakInput {
                    value: 2.0,
                    unit: "instructions/cycle/core".into(),
                    source: Source::Table,
                },
            ),
        ]),
    });
    let efficiency = peak.as_ref().map(|p| summary.mean / p.value);
    ResultRecord {
        subsystem: "cpu".into(),
        workload: workload.into(),
        params: BTreeMap::from([
            ("threads".into(), json!(threads)),
            ("isa".into(), json!("avx512")),
        ]),
        metric: "throughput".into(),
        unit: "GOPS".into(),
        summary,
        samples,
        percentiles: None,
        peak_unknown_reason: peak
            .is_none()
            .then(|| "the microarchitecture is not in peakbench's table".into()),
        peak,
        efficiency,
        reference: None,
    }
}

/// A fixed report: two DP points with peaks, one SP point without, one noisy, one with a
/// reference figure, a NULL point in ns, a memory block point and a latency point.
pub fn fixed_report() -> Report {
    let mut dp2 = record("DP", 2, vec![114.0, 115.0, 116.0], Some(115.2));
    dp2.reference = Some(Reference {
        tool: "likwid-bench".into(),
        version: "5.2.2".into(),
        mean: 114.5,
        efficiency: Some(114.5 / 115.2),
    });
    let mut null = record("NULL", 1, vec![20.0, 30.0, 25.0], None);
    null.metric = "latency".into();
    null.unit = "ns".into();
    null.params.remove("isa");
    null.peak_unknown_reason =
        Some("the NULL workload measures harness overhead and has no peak".into());
    let mut rws = record("RWS", 2, vec![40.0, 41.0, 42.0], None);
    rws.subsystem = "mem".into();
    rws.unit = "GB/s".into();
    rws.params.insert("block_size_bytes".into(), json!(1000));
    rws.peak_unknown_reason = Some("no SMBIOS table; give --mem-peak-gbs".into());
    let mut chase = record("LATENCY", 1, vec![1.1, 1.1, 1.2], None);
    chase.subsystem = "mem".into();
    chase.metric = "latency".into();
    chase.unit = "ns".into();
    chase.params.remove("isa");
    chase.params.insert("probe".into(), json!("chase"));
    chase
        .params
        .insert("working_set_bytes".into(), json!(32768));
    chase.params.insert("pages".into(), json!("thp"));
    chase.peak_unknown_reason = Some("latency has no theoretical peak".into());
    Report {
        schema_version: peakbench::results::SCHEMA_VERSION,
        tool: Tool {
            name: "peakbench".into(),
            version: "0.1.0".into(),
        },
        started_at: "2026-11-21T12:00:00Z".into(),
        command_line: vec![
            "peakbench".into(),
            "cpu".into(),
            "--workload".into(),
            "DP,SP,NULL".into(),
        ],
        system: fixed_system(),
        results: vec![
            record("DP", 1, vec![57.0, 57.5, 58.0], Some(57.6)),
            dp2,
            record("SP", 1, vec![100.0, 115.0, 120.0], None),
            null,
            rws,
            chase,
        ],
    }
}

/// Validates `doc` against docs/results.schema.json; returns every error.
pub fn schema_errors(doc: &serde_json::Value) -> Vec<String> {
    let schema: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/docs/results.schema.json"
        ))
        .unwrap(),
    )
    .unwrap();
    let validator = jsonschema::validator_for(&schema).expect("the schema compiles");
    validator
        .iter_errors(doc)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect()
}

/// Runs the real binary with `args` and checks the user-error contract: exit code 2, one line
/// on stderr containing `expected`, no panic.
pub fn one_line_exit_2(args: &[&str], expected: &str) {
    let out = assert_cmd::Command::new(env!("CARGO_BIN_EXE_peakbench"))
        .args(args)
        .assert()
        .code(2);
    let stderr = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
    assert!(
        stderr.contains(expected),
        "{args:?}: expected '{expected}' in: {stderr}"
    );
    assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
}
