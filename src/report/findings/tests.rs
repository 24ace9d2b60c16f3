use super::*;
use crate::ids::Unit;
use crate::results::params::Params;
use crate::sysinfo::{Fact, Isa, Source};
use serde_json::{Value, json};

/// A run with the quick profile's machine (AVX-512, measured clock set below) and `results`.
fn run(results: Vec<ResultRecord>) -> Report {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/history");
    let mut r = Report::from_json(&std::fs::read(dir.join("quick.json")).unwrap()).unwrap();
    r.system.cpu.isas = vec![Isa::Avx512, Isa::Avx2, Isa::Sse2, Isa::Scalar];
    r.system.cpu.measured_clock_ghz = Fact::known(3.6, Source::Measured);
    r.results = results;
    r.displayed(&Default::default())
}

fn rec(
    sub: Subsystem,
    workload: &str,
    params: Value,
    metric: Metric,
    unit: Unit,
    mean: f64,
    peak: Option<f64>,
) -> ResultRecord {
    let params = Params::with_defaults(
        crate::results::Workload::named(sub, workload).unwrap(),
        params,
    )
    .unwrap();
    let peak = peak.map(|value| crate::sysinfo::peak::Peak {
        value,
        unit,
        formula: "test".into(),
        inputs: Default::default(),
    });
    let peak = peak.ok_or_else(|| "none".to_string());
    ResultRecord::new(
        crate::results::Workload::named(sub, workload).unwrap(),
        params,
        metric,
        unit,
        vec![mean, mean],
        peak,
    )
}

fn dp(threads: u32, gops: f64, isa: &str, clock: f64) -> ResultRecord {
    rec(
        Subsystem::Cpu,
        "DP",
        json!({"threads": threads, "isa": isa, "clock_ghz": clock}),
        Metric::Throughput,
        Unit::Gops,
        gops,
        Some(60.0 * threads as f64),
    )
}

fn disk(
    workload: &str,
    pattern: &str,
    block: u64,
    threads: u32,
    mbps: f64,
    buffered: bool,
) -> ResultRecord {
    let read = if workload.starts_with('R') { 100 } else { 0 };
    rec(
        Subsystem::Disk,
        workload,
        json!({"threads": threads, "block_size_bytes": block, "pattern": pattern,
               "read_percent": read, "io_mode": if buffered { "buffered" } else { "direct" }}),
        Metric::Throughput,
        Unit::MBPerSec,
        mbps,
        Some(1000.0),
    )
}

/// Every figure a finding cites is in its text, as the text writes it.
fn cited(f: &Finding) {
    assert!(
        !f.cites.is_empty(),
        "a finding without a figure: {}",
        f.text
    );
    for c in &f.cites {
        let forms = [
            format_sig(*c),
            format!("{c:.2}"),
            format!("{c:.1}"),
            format!("{c}"),
        ];
        assert!(
            forms.iter().any(|x| f.text.contains(x.as_str())),
            "{c} not in '{}'",
            f.text
        );
    }
}

fn only(found: &[Finding], kind: Kind) -> Vec<&str> {
    found
        .iter()
        .filter(|f| f.kind == kind)
        .map(|f| f.text.as_str())
        .collect()
}

/// A sweep's gain, and its knee: saturated, still gaining, or flat from the start.
#[test]
fn scaling_cites_its_ends_and_finds_the_knee() {
    let found = of(&run(vec![
        dp(1, 57.0, "avx512", 3.6),
        dp(2, 113.0, "avx512", 3.6),
        dp(4, 118.0, "avx512", 3.6),
        dp(8, 119.0, "avx512", 3.6),
    ]));
    found.iter().for_each(cited);
    let s = only(&found, Kind::Scaling);
    assert_eq!(s.len(), 1);
    assert!(
        s[0].contains("57.00 → 119.0 GOPS from 1 to 8 threads (×2.09); saturated from 2 threads"),
        "{}",
        s[0]
    );
    let gaining = of(&run(vec![
        dp(1, 50.0, "avx512", 3.6),
        dp(2, 99.0, "avx512", 3.6),
    ]));
    assert!(only(&gaining, Kind::Scaling)[0].ends_with("still gaining at 2 threads"));
    let flat = of(&run(vec![
        dp(1, 50.0, "avx512", 3.6),
        dp(2, 52.0, "avx512", 3.6),
    ]));
    assert!(
        only(&flat, Kind::Scaling)[0].ends_with("flat from 1: more threads add less than 10 %")
    );
}

/// Random against sequential and writes against reads, at equal other parameters only;
/// UDP against TCP at the same streams and message size.
#[test]
fn ratios_pair_equal_points() {
    let found = of(&run(vec![
        disk("RS", "sequential", 4096, 1, 400.0, false),
        disk("RR", "random", 4096, 1, 100.0, false),
        disk("RS", "sequential", 1 << 20, 1, 800.0, false),
        disk("RR", "random", 1 << 20, 1, 600.0, false),
        disk("WS", "sequential", 4096, 1, 200.0, false),
        // No partner at 64 KiB: not paired.
        disk("RR", "random", 65536, 1, 5.0, false),
    ]));
    found.iter().for_each(cited);
    let r = only(&found, Kind::Ratio);
    assert!(
        r.contains(&"random against sequential: RR's throughput over RS's: ×0.25 to ×0.75 (median ×0.75 over 2 points)"),
        "{r:?}"
    );
    assert!(
        r.contains(&"writes against reads: WS's throughput over RS's: ×0.50"),
        "{r:?}"
    );
    let net = |proto: &str, mbps: f64| {
        rec(
            Subsystem::Net,
            "THROUGHPUT",
            json!({"protocol": proto, "streams": 2, "message_size_bytes": 1400,
                   "side": "receiver"}),
            Metric::Throughput,
            Unit::MbitPerSec,
            mbps,
            None,
        )
    };
    let found = of(&run(vec![net("TCP", 9000.0), net("UDP", 3000.0)]));
    found.iter().for_each(cited);
    assert_eq!(
        only(&found, Kind::Ratio),
        ["UDP against TCP at 2 × 1400 B messages: 3000 against 9000 Mbit/s (×0.33)"]
    );
}

/// Every cause of low efficiency the run can show, each citing its figures; a low point
/// with none says so, and a point at 70 % or more gets no cause.
#[test]
fn each_low_efficiency_cause_cites_what_shows_it() {
    let causes = |recs: Vec<ResultRecord>| {
        let found = of(&run(recs));
        found.iter().for_each(cited);
        only(&found, Kind::Cause)
            .iter()
            .map(|s| s.to_string())
            .collect::<Vec<_>>()
    };
    let narrow = causes(vec![dp(1, 30.0, "avx2", 3.6)]);
    assert!(
        narrow[0].ends_with(
            "50.0 % of its peak — it runs avx2 (256 bits) on a CPU with avx512 (512 bits) (100 % of the gap)"
        ),
        "{narrow:?}"
    );
    let slow = causes(vec![dp(1, 30.0, "avx512", 2.4)]);
    assert!(
        slow[0].ends_with(
            "its clock was 2.40 GHz, below the 3.60 GHz one thread reached (58 % of the gap); 42 % of the gap unexplained"
        ),
        "{slow:?}"
    );
    let mut limited = run(vec![dp(2, 60.0, "avx512", 3.6)]);
    limited.system.cpu.cgroup_cpu_quota = Some(crate::sysinfo::cgroup::CpuQuota {
        quota_us: 50_000,
        period_us: 100_000,
    });
    let found = of(&limited);
    found.iter().for_each(cited);
    let quota = only(&found, Kind::Cause);
    assert!(
        quota[0].ends_with(
            "50.0 % of its peak — this process's cgroup allows 0.50 CPUs' worth of time for its 2 threads: at most 25.0 % of the peak is within its reach (100 % of the gap)"
        ),
        "{quota:?}"
    );
    // Beside a busy process: the co-runner its noise names, with the CPUs it kept busy.
    let mut beside = dp(1, 30.0, "avx512", 3.6);
    beside.noise = Some(crate::measure::noise::Noise {
        window_s: 2.0,
        steal_cpus: Some(0.0),
        others_cpus: Some(0.93),
        own_cpus: 0.6,
        cpu_pressure: Some(0.4),
        voluntary_switches_per_s: 1.0,
        involuntary_switches_per_s: 50.0,
        minor_faults: 0,
        major_faults: 0,
        interference: vec!["co-runner".into()],
    });
    let co = causes(vec![beside]);
    assert!(
        co[0].ends_with(
            "50.0 % of its peak — other processes kept 0.930 CPUs busy while it ran (74 % of the gap); 26 % of the gap unexplained"
        ),
        "{co:?}"
    );
    // Two causes multiply: half-width vectors (×0.5) under half a CPU (×0.5) reach a quarter
    // of the peak; each explains half of the gap and nothing is left unexplained.
    let mut both = dp(1, 15.0, "avx2", 3.6);
    both.params.set_cpu_quota(0.5);
    let two = causes(vec![both.clone()]);
    assert!(
        two[0].ends_with(
            "25.0 % of its peak — it runs avx2 (256 bits) on a CPU with avx512 (512 bits) (50 % of the gap); this process's cgroup allows 0.50 CPUs' worth of time for its thread: at most 50.0 % of the peak is within its reach (50 % of the gap)"
        ),
        "{two:?}"
    );
    let d = crate::report::diagnosis::of_report(&run(vec![both]))[0]
        .clone()
        .unwrap();
    let names: Vec<&str> = d.causes.iter().map(|c| c.cause.as_str()).collect();
    assert_eq!(names, ["isa", "cpu-quota"]);
    assert!(
        d.causes
            .iter()
            .all(|c| (c.share.unwrap() - 0.5).abs() < 1e-9)
    );
    assert!(d.unexplained < 1e-9, "{d:?}");
    let buffered = causes(vec![disk("RR", "random", 4096, 2, 100.0, true)]);
    assert!(
        buffered[0]
            .ends_with("10.0 % of its peak — its I/O went through the page cache (buffered)"),
        "{buffered:?}"
    );
    let qd1 = causes(vec![disk("RR", "random", 4096, 1, 100.0, false)]);
    assert!(qd1[0].contains("one I/O at a time"), "{qd1:?}");
    // With the point's latency, Little's law: 4096 B every 40.96 µs is 100 MB/s, 10 % of the
    // 1000 MB/s peak, as far as one I/O in flight can go: all of the gap.
    let mut lat = disk("RR", "random", 4096, 1, 0.0, false);
    lat.metric = Metric::Latency;
    lat.unit = Unit::Micros;
    lat.summary.mean = 40.96;
    lat.efficiency = None;
    lat.peak = None;
    // A latency record says what its latency is: its params are the throughput's and that.
    if let Params::Disk(d) = &mut lat.params {
        d.latency_definition = Some("per I/O, from handing it to the engine".into());
    }
    let little = causes(vec![disk("RR", "random", 4096, 1, 100.0, false), lat]);
    assert!(
        little[0].ends_with(
            "one I/O at a time (1 thread at queue depth 1) at a mean latency of 40.96 µs: at most 1 / latency (100 % of the gap)"
        ),
        "{little:?}"
    );
    let few = causes(vec![
        disk("RR", "random", 4096, 2, 100.0, false),
        disk("RR", "random", 4096, 8, 800.0, false),
    ]);
    assert_eq!(few.len(), 1);
    assert!(
        few[0].ends_with(
            "2 threads do not fill it: 8 threads reached 80.0 % (90 % of the gap); 10 % of the gap unexplained"
        ),
        "{few:?}"
    );
    let none = causes(vec![disk("RR", "random", 4096, 4, 100.0, false)]);
    assert!(none[0].ends_with("no cause this run can show"), "{none:?}");
    assert!(causes(vec![dp(1, 45.0, "avx2", 3.6)]).is_empty());
    let loss = of(&run(vec![
        rec(
            Subsystem::Net,
            "THROUGHPUT",
            json!({"protocol": "UDP", "side": "receiver"}),
            Metric::Throughput,
            Unit::MbitPerSec,
            100.0,
            Some(1000.0),
        ),
        rec(
            Subsystem::Net,
            "THROUGHPUT",
            json!({"protocol": "UDP", "side": "receiver"}),
            Metric::Loss,
            Unit::Percent,
            12.5,
            None,
        ),
    ]));
    loss.iter().for_each(cited);
    assert!(
        only(&loss, Kind::Cause)[0].ends_with(
            "12.50 % of its datagrams were lost (6 % of the gap); 94 % of the gap unexplained"
        ),
        "{loss:?}"
    );
}

/// Random reads on a 7200 rpm disk with 8.5 ms seeks at QD 8 and 32 measured 180 % and
/// 384 % of n / (seek + ½ rotation), as the reports' queued HDD did: the finding says why
/// (command queueing shortens the access), citing the range; a point at QD 1 or within
/// its bound is not counted.
#[test]
fn a_rotating_disk_beating_its_queue_bound_is_explained() {
    let hdd = crate::sysinfo::peak::DiskPeaks {
        rpm: Some(7200.0),
        seek_ms: Some(8.5),
        ..Default::default()
    };
    let point = |n: u32, share: f64| {
        let peak = crate::sysinfo::peak::disk_iops(&hdd, 1.0, 4096, None, true, n as u64);
        let mean = peak.as_ref().unwrap().value * share;
        let params = json!({"threads": 1, "iodepth": n, "block_size_bytes": 4096,
            "pattern": "random", "read_percent": 100, "io_mode": "direct"});
        let params = Params::with_defaults(
            crate::results::Workload::Disk(crate::workload::disk::DiskWorkload::Rr),
            params,
        )
        .unwrap();
        ResultRecord::new(
            crate::results::Workload::Disk(crate::workload::disk::DiskWorkload::Rr),
            params,
            Metric::Iops,
            Unit::Iops,
            vec![mean, mean],
            peak,
        )
    };
    let found = of(&run(vec![
        point(1, 0.9),
        point(8, 1.8),
        point(32, 3.84),
        point(4, 1.0),
    ]));
    found.iter().for_each(cited);
    let queued: Vec<&Finding> = found
        .iter()
        .filter(|f| f.text.contains("NCQ/TCQ"))
        .collect();
    assert_eq!(queued.len(), 1, "{found:?}");
    assert!(
        queued[0].text.starts_with(
            "2 random points on a rotating disk reach 180.0–384.0 % of n / (seek + ½ rotation), 12.67 ms, with 8–32 I/Os in flight"
        ),
        "{}",
        queued[0].text
    );
    assert!(
        queued[0]
            .text
            .contains("reorders the queued requests to shorten its seeks")
    );
    let within = of(&run(vec![point(32, 0.5)]));
    assert!(!within.iter().any(|f| f.text.contains("NCQ/TCQ")));
}

/// The recorded points run's findings, a test per kind of statement, as the recorded
/// figures make them.
fn recorded() -> Vec<Finding> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/history");
    let r = Report::from_json(&std::fs::read(dir.join("points.json")).unwrap()).unwrap();
    let found = of(&r.displayed(&Default::default()));
    found.iter().for_each(cited);
    found
}

/// UDP's 2762 → 385.7 Mbit/s at 2 streams falls: it is not "flat".
#[test]
fn a_recorded_collapse_is_a_fall_not_flat() {
    let found = recorded();
    let udp: Vec<&str> = only(&found, Kind::Scaling)
        .into_iter()
        .filter(|t| t.contains("2762 → 385.7 Mbit/s from 1 to 2 streams"))
        .collect();
    assert_eq!(udp.len(), 1, "{found:?}");
    assert!(
        udp[0].ends_with("(×0.14); falls with more streams: 86.0 % lower at 2 than at 1"),
        "{udp:?}"
    );
    assert!(!udp[0].contains("flat"), "{udp:?}");
}

/// Efficiencies of 119.7–121.7 % are a class of their own, not among those at 90 % or more.
#[test]
fn recorded_efficiencies_above_the_peak_are_their_own_class() {
    let found = recorded();
    let mem: Vec<&Finding> = (found.iter())
        .filter(|f| f.kind == Kind::Efficiency && f.subsystem == Subsystem::Mem)
        .collect();
    assert_eq!(mem.len(), 1, "{found:?}");
    let t = &mem[0].text;
    assert!(
        t.contains(
            "3 above 100 % (119.7–121.7 %): above the peak, so a peak input is wrong or the peak is not the ceiling"
        ),
        "{t}"
    );
    assert!(
        t.contains("0 at 90–100 % of it") && !t.contains("≥ 90"),
        "{t}"
    );
    for f in only(&found, Kind::Efficiency) {
        assert!(!f.contains("≥ 90"), "{f}");
    }
}

/// Read-only memory kernels (RS, RR) have no stores: "none stores" is said nowhere, while
/// the kernels with stores still say which.
#[test]
fn recorded_read_only_points_say_no_stores() {
    let found = recorded();
    let texts: Vec<&str> = found.iter().map(|f| f.text.as_str()).collect();
    assert!(texts.iter().any(|t| t.starts_with("RS · ")), "{texts:?}");
    assert!(
        texts.iter().all(|t| !t.contains("none stores")),
        "{texts:?}"
    );
    assert!(
        texts.iter().any(|t| t.contains("regular stores")),
        "{texts:?}"
    );
}

/// LINPACK and DGEMM at N = 200 are too small for the peak: that is the cause, not "none".
#[test]
fn recorded_small_solves_say_n_is_too_small() {
    let found = recorded();
    let causes = only(&found, Kind::Cause);
    let solves: Vec<&&str> = (causes.iter())
        .filter(|t| t.starts_with("LINPACK") || t.starts_with("DGEMM"))
        .collect();
    assert_eq!(solves.len(), 4, "{causes:?}");
    for t in &solves {
        assert!(
            t.contains("N = 200 is too small for the peak: its O(N³) work does not amortise the O(N²) memory traffic and the threads' start-up"),
            "{t}"
        );
        assert!(!t.contains("no cause this run can show"), "{t}");
    }
    assert!(
        solves
            .iter()
            .any(|t| t.starts_with("LINPACK · 2 threads · N = 200")
                && t.contains("3.2 % of its peak")),
        "{solves:?}"
    );
}

/// The stored runs' findings (every kind of point): each cites its figures.
#[test]
fn stored_runs_findings_cite_their_figures() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/history");
    let mut kinds = Vec::new();
    for name in ["quick.json", "points.json"] {
        let r = Report::from_json(&std::fs::read(dir.join(name)).unwrap()).unwrap();
        let found = of(&r.displayed(&Default::default()));
        found.iter().for_each(cited);
        kinds.extend(found.iter().map(|f| f.kind));
    }
    for k in [Kind::Scaling, Kind::Ratio, Kind::Efficiency, Kind::Cause] {
        assert!(kinds.contains(&k), "no {k:?} finding in the stored runs");
    }
}

/// The recorded points fixture's six CPU points below 70 % of their peaks each get a cause
/// the run measured: the 2-thread DP and SP points their threads' contention (each at about
/// half the rate one thread reached alone), LINPACK and DGEMM at N = 200 their size.
#[test]
fn the_recorded_low_cpu_points_each_have_a_cause() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/history/points.json"
    );
    let report = Report::from_json(&std::fs::read(path).unwrap()).unwrap();
    let found = of(&report);
    found.iter().for_each(cited);
    let causes: Vec<&str> = found
        .iter()
        .filter(|f| f.kind == Kind::Cause && f.subsystem == Subsystem::Cpu)
        .map(|f| f.text.as_str())
        .collect();
    assert_eq!(causes.len(), 6, "{causes:#?}");
    assert!(
        causes
            .iter()
            .all(|c| !c.contains("no cause this run can show")),
        "{causes:#?}"
    );
    assert!(
        causes
            .iter()
            .filter(|c| c.starts_with("DP · 2 threads") || c.starts_with("SP · 2 threads"))
            .all(|c| c
                .contains("each of its 2 threads ran at 0.50 × the rate 1 thread reached alone")),
        "{causes:#?}"
    );
    assert_eq!(
        causes
            .iter()
            .filter(|c| c.contains("N = 200 is too small"))
            .count(),
        4,
        "{causes:#?}"
    );
}

mod causes;
