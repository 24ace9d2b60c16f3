//! Shared test helpers: a fixed report for exporter snapshots, and schema validation.
#![allow(dead_code)]

use peakbench::measure::Summary;
use peakbench::results::params::Params;
use peakbench::results::{
    Metric, Reference, Report, ResultRecord, Subsystem, Tool, Unit, Workload,
};
use peakbench::sysinfo::clock::ProbeReading;
use peakbench::sysinfo::peak::{Peak, PeakInput};
use peakbench::sysinfo::{
    Cache, CpuInfo, Fact, Isa, LogicalCpu, MemoryInfo, OsInfo, Source, SystemInfo,
};
use peakbench::workload::{cpu::CpuWorkload, mem::MemWorkload};
use serde_json::json;
use std::collections::BTreeMap;

/// The clock probes' test double (`PEAKBENCH_MOCK_CLOCK_GHZ`, src/sysinfo/clock.rs): set on
/// the binary by tests of parsing and reporting, so that a process does not spend 0.6 s
/// probing the clock (and a CPU point more after each round). Tests of the probes themselves,
/// of timing and of Ctrl-C during the probes run without it.
pub const MOCK_CLOCK: (&str, &str) = (peakbench::sysinfo::clock::MOCK_ENV, "3.0");

/// The mock session (`PEAKBENCH_MOCK_SESSION`, src/app/mock.rs): set on the binary by tests of
/// what comes after a measurement (tables, charts, history, compare, profiles), so that a
/// point's records are made from its parameters instead of measured. Tests of a measurement,
/// of its timing, or of a point the mock cannot make (LATENCY's staircase, C2C, LOADED, NUMA,
/// a server's answers) run without it.
pub const MOCK_SESSION: (&str, &str) = (peakbench::app::mock::MOCK_ENV, "1");

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
            clock_probes: vec![
                ProbeReading {
                    probe: "imul r64".into(),
                    latency_cycles: 3.0,
                    ghz: 3.61,
                },
                ProbeReading {
                    probe: "vfmadd213sd".into(),
                    latency_cycles: 4.0,
                    ghz: 3.59,
                },
            ],
            all_core_clock_ghz: Fact::known(3.55, Source::Measured),
            fma512_units: Fact::unknown(
                "measured only on Skylake-SP/Cascade Lake, whose parts have one or two 512-bit FMA units",
            ),
            cgroup_cpu_quota: None,
            allowed_cpus: Vec::new(),
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
            cgroup_limit_bytes: None,
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

fn record(
    workload: impl Into<Workload>,
    threads: u32,
    samples: Vec<f64>,
    peak: Option<f64>,
) -> ResultRecord {
    let workload = workload.into();
    let summary = Summary::of(&samples).unwrap();
    let peak = peak.map(|value| Peak {
        value,
        unit: Unit::Gops,
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
    // A CPU point's kernel; the others' parameters are the callers' to give.
    let given = match workload {
        Workload::Cpu(_) => json!({"threads": threads, "isa": "avx512"}),
        _ => json!({"threads": threads}),
    };
    ResultRecord {
        subsystem: workload.subsystem(),
        workload,
        params: Params::with_defaults(workload, given).unwrap(),
        metric: Metric::Throughput,
        unit: Unit::Gops,
        summary,
        samples,
        warmup_rounds: None,
        percentiles: None,
        peak_unknown_reason: peak
            .is_none()
            .then(|| "the microarchitecture is not in peakbench's table".into()),
        peak,
        efficiency,
        intervals: None,
        phases: None,
        sustain: None,
        noise: None,
        diagnosis: None,
        rerun: None,
        precision: None,
        reference: None,
        other_references: Vec::new(),
        reference_unknown_reason: None,
        warnings: Vec::new(),
    }
}

/// A fixed report: two DP points with peaks, one SP point without, one noisy, one with a
/// reference figure, a NULL point in ns, a memory block point and a latency point. Written in
/// the units of schema version 3 (GOPS, GB/s, ns) and read as peakbench reads such a report:
/// in base units.
pub fn fixed_report() -> Report {
    let mut dp2 = record(CpuWorkload::Dp, 2, vec![114.0, 115.0, 116.0], Some(115.2));
    dp2.reference = Some(Reference {
        tool: "likwid-bench".into(),
        version: "5.2.2".into(),
        mean: 114.5,
        efficiency: Some(114.5 / 115.2),
        ..Default::default()
    });
    let mut null = record(CpuWorkload::Null, 1, vec![20.0, 30.0, 25.0], None);
    null.metric = Metric::Latency;
    null.unit = Unit::Nanos;
    null.params = Params::with_defaults(
        peakbench::results::Workload::Cpu(peakbench::workload::cpu::CpuWorkload::Null),
        json!({"threads": 1}),
    )
    .unwrap();
    null.peak_unknown_reason =
        Some("the NULL workload measures harness overhead and has no peak".into());
    let mut rws = record(MemWorkload::Rws, 2, vec![40.0, 41.0, 42.0], None);
    rws.unit = Unit::GBPerSec;
    rws.params = Params::with_defaults(
        peakbench::results::Workload::Mem(peakbench::workload::mem::MemWorkload::Rws),
        json!({"threads": 2, "isa": "avx512", "block_size_bytes": 1000,
               "blocks_per_thread": 1, "order": "sequential"}),
    )
    .unwrap();
    rws.peak_unknown_reason = Some("no SMBIOS table; give --mem-peak-gbs".into());
    let mut chase = record(MemWorkload::Latency, 1, vec![1.1, 1.1, 1.2], None);
    chase.metric = Metric::Latency;
    chase.unit = Unit::Nanos;
    chase.params = Params::with_defaults(
        peakbench::results::Workload::Mem(peakbench::workload::mem::MemWorkload::Latency),
        json!({"probe": "chase", "working_set_bytes": 32768, "pages": "thp"}),
    )
    .unwrap();
    chase.peak_unknown_reason = Some("latency has no theoretical peak".into());
    Report {
        schema_version: 3,
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
            record(CpuWorkload::Dp, 1, vec![57.0, 57.5, 58.0], Some(57.6)),
            dp2,
            record(CpuWorkload::Sp, 1, vec![100.0, 115.0, 120.0], None),
            null,
            rws,
            chase,
        ],
        fleet: None,
        verification: None,
        sha256: None,
    }
    .upgraded()
}

/// `report` as the text exporters get it: in the units peakbench prints by default.
pub fn shown(report: &Report) -> Report {
    report.displayed(&peakbench::units::Display::default())
}

pub mod history;
pub mod html;
pub mod net;
pub mod options;

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
        .env(MOCK_CLOCK.0, MOCK_CLOCK.1)
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

/// A parameter object naming only what a fixture is about.
fn params(pairs: &[(&str, serde_json::Value)]) -> serde_json::Value {
    serde_json::Value::Object(
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect(),
    )
}

/// A record from a fixture's parameters, completed as a benchmark would give them.
fn rec_new(
    subsystem: &str,
    workload: &str,
    params: serde_json::Value,
    metric: &str,
    unit: &str,
    samples: Vec<f64>,
    peak: Result<Peak, String>,
) -> ResultRecord {
    let subsystem: Subsystem = subsystem.parse().unwrap();
    let params = Params::with_defaults(
        peakbench::results::Workload::named(subsystem, workload).unwrap(),
        params,
    )
    .unwrap();
    let (metric, unit) = (metric.parse().unwrap(), unit.parse().unwrap());
    ResultRecord::new(
        peakbench::results::Workload::named(subsystem, workload).unwrap(),
        params,
        metric,
        unit,
        samples,
        peak,
    )
}

fn cpu_peak(value: f64, cores: u32) -> Peak {
    let input = |value: f64, unit: &str, source| PeakInput {
        value,
        unit: unit.into(),
        source,
    };
    Peak {
        value,
        unit: Unit::Gops,
        formula: "cores × clock × fma_per_cycle × (vector_width / element_width) × 2".into(),
        inputs: BTreeMap::from([
            (
                "cores".into(),
                input(cores as f64, "cores", Source::Detected),
            ),
            ("clock".into(), input(3.6, "GHz", Source::Measured)),
            (
                "fma_per_cycle".into(),
                input(2.0, "instructions/cycle/core", Source::Table),
            ),
        ]),
    }
}

/// Three samples around `mean`, ±1 %.
fn around(mean: f64) -> Vec<f64> {
    vec![mean * 0.99, mean, mean * 1.01]
}

/// A report with data for every chart: CPU DP and SP at 1 and 2 threads with peaks (DP with a
/// likwid-bench figure), an INT64 point whose statistics are NaN; memory COPY and RWS (two block
/// sizes) at 1 and 2 threads, a latency staircase from 4 KiB to 64 MiB with huge pages and
/// without, a level and a probe record; disk RR 4 KiB at queue depths 1, 4 and 32; network TCP
/// and UDP goodput at 1, 2 and 4 streams and a ping-pong. Its charts: CPU DP, SP and efficiency;
/// memory COPY, RWS and the staircase; disk IOPS and latency; network goodput — nine.
pub fn chart_report() -> Report {
    let mut system = fixed_system();
    let cache = |level, kind: &str, size_bytes, shared_by_cpus, instances| Cache {
        level,
        kind: kind.into(),
        size_bytes,
        line_bytes: Some(64),
        shared_by_cpus,
        instances,
    };
    system.caches = vec![
        cache(1, "Data", 48 << 10, 1, 2),
        cache(1, "Instruction", 32 << 10, 1, 2),
        cache(2, "Unified", 1 << 20, 1, 2),
        cache(3, "Unified", 32 << 20, 2, 1),
    ];
    let mut results = cpu_records();
    results.extend(mem_records());
    results.extend(disk_records());
    results.extend(net_records());
    Report {
        schema_version: peakbench::results::SCHEMA_VERSION,
        tool: Tool {
            name: "peakbench".into(),
            version: "0.1.0".into(),
        },
        started_at: "2026-11-21T12:00:00Z".into(),
        command_line: vec![
            "peakbench".into(),
            "run".into(),
            "--profile".into(),
            "quick".into(),
        ],
        system,
        results,
        fleet: None,
        verification: None,
        sha256: None,
    }
}

/// [`chart_report`]'s CPU points: DP and SP at 1 and 2 threads with peaks (DP with a
/// likwid-bench figure), and an INT64 point whose statistics are NaN.
fn cpu_records() -> Vec<ResultRecord> {
    let mut results = Vec::new();
    for (workload, per_core) in [("DP", 57.6), ("SP", 115.2)] {
        for threads in [1u32, 2] {
            let peak = per_core * threads as f64;
            let mean = peak * (0.99 - 0.03 * threads as f64);
            let mut rec = rec_new(
                "cpu",
                workload,
                params(&[("threads", json!(threads)), ("isa", json!("avx512"))]),
                "throughput",
                "GOPS",
                around(mean),
                Ok(cpu_peak(peak, threads)),
            );
            if workload == "DP" {
                // Set after construction: in the record's base unit, op/s.
                rec.reference = Some(Reference {
                    tool: "likwid-bench".into(),
                    version: "5.2.2".into(),
                    mean: mean * 1.01 * 1e9,
                    efficiency: Some(mean * 1.01 / peak),
                    ..Default::default()
                });
            }
            results.push(rec);
        }
    }
    results.push(rec_new(
        "cpu",
        "INT64",
        params(&[("threads", json!(1)), ("isa", json!("avx512"))]),
        "throughput",
        "GOPS",
        vec![f64::NAN],
        Ok(cpu_peak(57.6, 1)),
    ));
    results
}

/// [`chart_report`]'s memory points: COPY and RWS (two block sizes) at 1 and 2 threads, a
/// latency staircase from 4 KiB to 64 MiB with huge pages and without, a level and a probe record.
fn mem_records() -> Vec<ResultRecord> {
    let mut results = Vec::new();
    let no_mem_peak = || Err("no SMBIOS table; give --mem-peak-gbs".to_string());
    for threads in [1u32, 2] {
        let t = threads as f64;
        results.push(rec_new(
            "mem",
            "COPY",
            params(&[("threads", json!(threads)), ("isa", json!("avx512"))]),
            "throughput",
            "GB/s",
            around(21.0 * t.powf(0.8)),
            no_mem_peak(),
        ));
        for (block, gbs) in [(1000u64, 14.0), (1_000_000, 19.0)] {
            results.push(rec_new(
                "mem",
                "RWS",
                params(&[
                    ("threads", json!(threads)),
                    ("block_size_bytes", json!(block)),
                ]),
                "throughput",
                "GB/s",
                around(gbs * t.powf(0.7)),
                no_mem_peak(),
            ));
        }
    }
    let latency = |p: serde_json::Value, ns: f64| {
        rec_new(
            "mem",
            "LATENCY",
            p,
            "latency",
            "ns",
            around(ns),
            Err("latency has no theoretical peak".into()),
        )
    };
    for (pages, dram_ns) in [("thp", 92.0), ("4k", 118.0)] {
        for k in 0..=28 {
            let bytes = (4096.0 * 2f64.powf(k as f64 / 2.0)).round() as u64;
            let ns = match bytes {
                b if b <= 48 << 10 => 1.1,
                b if b <= 1 << 20 => 3.6,
                b if b <= 32 << 20 => 13.0,
                _ => dram_ns,
            };
            results.push(latency(
                params(&[
                    ("threads", json!(1)),
                    ("probe", json!("chase")),
                    ("working_set_bytes", json!(bytes)),
                    ("pages", json!(pages)),
                ]),
                ns,
            ));
        }
    }
    results.push(latency(
        params(&[
            ("threads", json!(1)),
            ("probe", json!("level")),
            ("level", json!("L1")),
            ("pages", json!("thp")),
        ]),
        1.1,
    ));
    results.push(latency(
        params(&[
            ("threads", json!(1)),
            ("probe", json!("seq-8B")),
            ("working_set_bytes", json!(1 << 26)),
        ]),
        0.3,
    ));
    results
}

/// [`chart_report`]'s disk points: RR 4 KiB at queue depths 1, 4 and 32 (throughput with its
/// intervals, IOPS, latency with percentiles).
fn disk_records() -> Vec<ResultRecord> {
    let mut results = Vec::new();
    let no_disk_peak = || Err("a virtio disk has no link and no rated figures".to_string());
    for qd in [1u32, 4, 32] {
        let iops = 9000.0 * (qd as f64).powf(0.8);
        let disk = params(&[
            ("threads", json!(1)),
            ("iodepth", json!(qd)),
            ("block_size_bytes", json!(4096)),
            ("engine", json!(if qd == 1 { "psync" } else { "io_uring" })),
            ("io_mode", json!("direct")),
            ("pattern", json!("random")),
            ("read_percent", json!(100)),
            ("file_system", json!("ext4")),
        ]);
        results.push(rec_new(
            "disk",
            "RR",
            disk.clone(),
            "throughput",
            "MB/s",
            around(iops * 4096.0 / 1e6),
            no_disk_peak(),
        ));
        // The last repetition per 250 ms interval, in the record's unit (B/s), with a stall.
        results.last_mut().unwrap().intervals = Some(peakbench::results::Intervals {
            interval_s: 0.25,
            values: [1.0, 1.02, 0.4, 0.98]
                .iter()
                .map(|f| f * iops * 4096.0)
                .collect(),
        });
        results.push(rec_new(
            "disk",
            "RR",
            disk.clone(),
            "iops",
            "IOPS",
            around(iops),
            no_disk_peak(),
        ));
        let mut lat = rec_new(
            "disk",
            "RR",
            disk,
            "latency",
            "us",
            around(qd as f64 / iops * 1e6),
            Err("latency has no theoretical peak".into()),
        );
        let mean = lat.summary.mean;
        lat.percentiles = Some(BTreeMap::from([
            ("p50".into(), mean * 0.9),
            ("p99".into(), mean * 2.5),
            ("p99.9".into(), mean * 4.0),
            ("max".into(), mean * 9.0),
        ]));
        results.push(lat);
    }
    results
}

/// [`chart_report`]'s network points: TCP and UDP goodput at 1, 2 and 4 streams, both sides,
/// and a ping-pong with percentiles.
fn net_records() -> Vec<ResultRecord> {
    let mut results = Vec::new();
    let no_link = || Err("loopback has no link speed; give --link-gbps".to_string());
    for (protocol, message, streams_list, mbps) in [
        ("TCP", 131072u64, vec![1u32, 2, 4], 38000.0),
        ("UDP", 1400, vec![1, 2], 3100.0),
    ] {
        for streams in streams_list {
            for side in ["receiver", "sender"] {
                results.push(rec_new(
                    "net",
                    "THROUGHPUT",
                    params(&[
                        ("threads", json!(streams)),
                        ("streams", json!(streams)),
                        ("protocol", json!(protocol)),
                        ("message_size_bytes", json!(message)),
                        ("side", json!(side)),
                        ("direction", json!("client to server")),
                    ]),
                    "throughput",
                    "Mbit/s",
                    around(mbps * (streams as f64).powf(0.6)),
                    no_link(),
                ));
            }
        }
    }
    let mut rtt = rec_new(
        "net",
        "LATENCY",
        params(&[
            ("threads", json!(1)),
            ("streams", json!(1)),
            ("protocol", json!("TCP")),
            ("message_size_bytes", json!(1)),
            ("side", json!("client")),
        ]),
        "latency",
        "us",
        around(24.0),
        Err("round-trip time has no theoretical peak".into()),
    );
    // In the record's base unit, seconds.
    rtt.percentiles = Some(BTreeMap::from([
        ("p50".into(), 23e-6),
        ("p99".into(), 41e-6),
        ("p99.9".into(), 80e-6),
        ("max".into(), 400e-6),
    ]));
    results.push(rtt);
    results
}

/// The results database the CLI tests write to (under the target directory, never the user's).
pub fn test_db() -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("history.db")
}

/// Network namespaces this test created, deleted (with their interfaces) when dropped.
pub struct Namespaces {
    pub names: Vec<String>,
}

impl Namespaces {
    /// Creates the namespaces `names`; an error says what is missing (root, `ip`).
    pub fn new(names: Vec<String>) -> Result<Namespaces, String> {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            return Err("needs root to create network namespaces".into());
        }
        if std::process::Command::new("ip").arg("-V").output().is_err() {
            return Err("needs the `ip` command (apt-get install iproute2)".into());
        }
        let mut ns = Namespaces { names: Vec::new() };
        for n in names {
            run_ip(&["netns", "add", &n])?;
            ns.names.push(n);
        }
        Ok(ns)
    }
}

impl Drop for Namespaces {
    fn drop(&mut self) {
        for n in &self.names {
            let _ = std::process::Command::new("ip")
                .args(["netns", "del", n])
                .output();
        }
    }
}

/// Runs `ip ARGS`; the error holds its message.
pub fn run_ip(args: &[&str]) -> Result<(), String> {
    let out = std::process::Command::new("ip")
        .args(args)
        .output()
        .map_err(|e| e.to_string())?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "ip {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// A tmpfs of its own mounted with `options` (root only; None with the reason printed), unmounted
/// when the returned guard is dropped.
pub fn tmpfs(options: &str) -> Option<(tempfile::TempDir, Unmount)> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: mounting a tmpfs needs root");
        return None;
    }
    let dir = tempfile::tempdir().unwrap();
    let ok = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", options, "peakbench-test"])
        .arg(dir.path())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        eprintln!("skipped: mount -t tmpfs -o {options} failed");
        return None;
    }
    let unmount = Unmount(dir.path().to_path_buf());
    Some((dir, unmount))
}

pub struct Unmount(std::path::PathBuf);

impl Drop for Unmount {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg(&self.0).status();
    }
}

/// Fills the file system holding `dir` to the last byte with a file `filler` in it (written
/// until the file system says it is full).
pub fn fill(dir: &std::path::Path) {
    use std::io::Write;
    let mut f = std::fs::File::create(dir.join("filler")).unwrap();
    let chunk = vec![0u8; 4096];
    loop {
        match f.write(&chunk) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::StorageFull => break,
            Err(e) => panic!("filling {}: {e}", dir.display()),
        }
    }
    // The last partial page: byte by byte.
    while f.write(&[0]).is_ok_and(|n| n == 1) {}
}

/// The names in `dir` but `filler`, sorted: what a command left behind.
pub fn left_in(dir: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n != "filler")
        .collect();
    names.sort();
    names
}

/// Runs the real binary with `args` and checks the failure contract: exit code `code`, one
/// line on stderr containing every one of `expected`, no panic.
pub fn one_line_exit(args: &[&str], code: i32, expected: &[&str]) {
    let out = assert_cmd::Command::new(env!("CARGO_BIN_EXE_peakbench"))
        .env("PEAKBENCH_DB", test_db())
        .env(MOCK_CLOCK.0, MOCK_CLOCK.1)
        .args(args)
        // A hang's bound (a refusal is at once): a command that waits fails instead.
        .timeout(std::time::Duration::from_secs(120))
        .assert()
        .code(code);
    let stderr = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
    for e in expected {
        assert!(stderr.contains(e), "{args:?}: expected '{e}' in: {stderr}");
    }
}

/// Held for reading by every test or case of a test binary that benchmarks, and for writing by
/// one that compares timings: the others' benchmarks would share its cores and skew it.
static TIMING: std::sync::RwLock<()> = std::sync::RwLock::new(());

/// The caller's share of the machine until the guard is dropped: alone where it compares
/// timings, beside the others elsewhere. A test that panicked holding it poisons nothing that
/// matters here.
pub enum Share {
    Beside(std::sync::RwLockReadGuard<'static, ()>),
    Alone(std::sync::RwLockWriteGuard<'static, ()>),
}

pub fn share(alone: bool) -> Share {
    if alone {
        Share::Alone(TIMING.write().unwrap_or_else(|e| e.into_inner()))
    } else {
        Share::Beside(TIMING.read().unwrap_or_else(|e| e.into_inner()))
    }
}

/// Waits (bounded) until signal `sig` sent to `pid` is no longer pending (ShdPnd): the next
/// one is then a second signal, not merged into it.
pub fn wait_delivered(pid: u32, sig: i32) {
    let bit = 1u64 << (sig - 1);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while std::time::Instant::now() < deadline {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
        let pending = status
            .lines()
            .find_map(|l| l.strip_prefix("ShdPnd:"))
            .and_then(|v| u64::from_str_radix(v.trim(), 16).ok());
        if pending.is_none_or(|p| p & bit == 0) {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}

/// A recorded run grown to `records` records, each a point of its own: the records of
/// tests/fixtures/history/quick.json (63: CPU, memory, disk and network points of a quick run)
/// again and again, copy `k` on node `k / 4` with `1 + k % 4` times the recorded threads (and
/// streams), so that every node has a sweep of four over threads. The document written is
/// what `peakbench report` reads at scale (tests/history_bounds.rs, bench/report-scale.sh).
pub fn scaled_document(records: usize) -> Vec<u8> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/history/quick.json"
    );
    let mut doc: serde_json::Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    let recorded = doc["results"].as_array().unwrap().clone();
    let mut results = Vec::with_capacity(records);
    for k in 0..records.div_ceil(recorded.len()) {
        for r in &recorded {
            if results.len() == records {
                break;
            }
            let mut r = r.clone();
            let params = r["params"].as_object_mut().unwrap();
            params.insert("node".into(), json!(k / 4));
            let times = 1 + (k % 4) as u64;
            for key in ["threads", "streams"] {
                if let Some(n) = params.get(key).and_then(|v| v.as_u64()) {
                    params.insert(key.into(), json!(n * times));
                }
            }
            results.push(r);
        }
    }
    doc["results"] = serde_json::Value::Array(results);
    serde_json::to_vec(&doc).unwrap()
}

/// Makes a FIFO at `path` (for the tests that a FIFO never makes peakbench wait).
pub fn mkfifo(path: &std::path::Path) {
    let made = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap();
    assert!(made.success(), "mkfifo {}", path.display());
}

/// The binary as users run it, writing to the tests' database: the clock probed.
pub fn real() -> assert_cmd::Command {
    let mut c = assert_cmd::Command::new(env!("CARGO_BIN_EXE_peakbench"));
    c.env("PEAKBENCH_DB", test_db());
    c
}

/// The binary with the clock probes' test double, writing to the tests' database: for tests of
/// parsing and reporting.
pub fn peakbench() -> assert_cmd::Command {
    let mut c = real();
    c.env(MOCK_CLOCK.0, MOCK_CLOCK.1);
    c
}

/// The JSON document at `path`.
pub fn read_json(path: &std::path::Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}
