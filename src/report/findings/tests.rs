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

/// Four DP threads on two cores, two hardware threads each (cpus 2 and 3 the siblings of 0
/// and 1): each core ran at 0.6 × one thread alone on one, which is `smt-sharing`, not an
/// unknown contention; on four cores of their own the same figures are a contention.
#[test]
fn threads_sharing_cores_are_named_smt_sharing() {
    let lc = |cpu, core| crate::sysinfo::LogicalCpu {
        cpu,
        package: 0,
        core,
    };
    let point = |threads: usize, gops: f64, cores: f64| {
        rec(
            Subsystem::Cpu,
            "DP",
            json!({"threads": threads, "isa": "avx512", "clock_ghz": 3.6,
                   "cpus": (0..threads).collect::<Vec<_>>()}),
            Metric::Throughput,
            Unit::Gops,
            gops,
            Some(60.0 * cores),
        )
    };
    let causes = |logical: Vec<crate::sysinfo::LogicalCpu>, cores: f64| {
        let mut r = run(vec![point(1, 60.0, 1.0), point(4, 72.0, cores)]);
        r.system.cpu.logical = logical;
        let found = of(&r);
        found.iter().for_each(cited);
        only(&found, Kind::Cause)
            .iter()
            .map(|s| s.to_string())
            .collect::<Vec<_>>()
    };
    let smt = causes(vec![lc(0, 0), lc(1, 1), lc(2, 0), lc(3, 1)], 2.0);
    assert_eq!(smt.len(), 1, "{smt:?}");
    assert!(
        smt[0].ends_with(
            "60.0 % of its peak — its 4 threads run on 2 cores, hardware threads of each sharing its execution units: each core ran at 0.60 × the rate of 1 thread alone on one (100 % of the gap)"
        ),
        "{smt:?}"
    );
    let own = causes(vec![lc(0, 0), lc(1, 1), lc(2, 2), lc(3, 3)], 4.0);
    assert!(
        own[0].contains("(contention") || own[0].contains("they share what fewer had"),
        "{own:?}"
    );
    assert!(!own[0].contains("hardware threads of each"), "{own:?}");
}

/// The findings' cause statements of a run of `recs`, each checked to cite its figures.
fn cause_texts(recs: Vec<ResultRecord>) -> Vec<String> {
    let found = of(&run(recs));
    found.iter().for_each(cited);
    only(&found, Kind::Cause)
        .iter()
        .map(|s| s.to_string())
        .collect()
}

/// A TCP stream held by its window: the window asked over the streams' round trip, or the one
/// the receiver advertised over TCP's own, where TCP says the window held it back.
#[test]
fn a_window_below_the_bandwidth_delay_product_is_named() {
    let causes = cause_texts;
    // One stream of a 64 KiB window over 10 ms carries 52.4 Mbit/s of a 1 Gbit/s peak.
    let window = causes(vec![rec(
        Subsystem::Net,
        "THROUGHPUT",
        json!({"protocol": "TCP", "side": "receiver", "socket_options": {"window_bytes": 65536},
               "stream_rtt_us": [9800.0, 10200.0]}),
        Metric::Throughput,
        Unit::MbitPerSec,
        50.0,
        Some(1000.0),
    )]);
    assert!(
        window[0].ends_with(
            "5.0 % of its peak — a window of 64 KiB over a 10.00 ms round trip carries at most 52.43 Mbit/s: the bandwidth-delay product of its peak is 1.2 MiB (98 % of the gap); 2 % of the gap unexplained"
        ),
        "{window:?}"
    );
    // No window asked, but TCP held the sender by the receiver's 80 KB window 97 % of its busy
    // time, over its own 10 ms round trip: 64 Mbit/s of a 1 Gbit/s peak.
    let held = |limited: f64| {
        causes(vec![rec(
            Subsystem::Net,
            "THROUGHPUT",
            json!({"protocol": "TCP", "side": "receiver",
                   "client_socket": {"rtt_us": 10000.0, "peer_window_bytes": 80000,
                                     "window_limited": limited, "send_buffer_limited": 0.0}}),
            Metric::Throughput,
            Unit::MbitPerSec,
            60.0,
            Some(1000.0),
        )])
    };
    let by_window = held(0.97);
    assert!(
        by_window[0].contains(
            "the receiver's window of 80 KB over a 10.00 ms round trip carries at most 64.00 Mbit/s (TCP held the sender back 97 % of its busy time by the receiver's window, 0 % by its send buffer)"
        ),
        "{by_window:?}"
    );
    // Held back a tenth of the time only: some other limit, not named the window.
    assert!(!held(0.1)[0].contains("window"), "{:?}", held(0.1));
}

/// Four threads taking turns on two CPUs: `oversubscription`, never a contention (each
/// thread's share of a CPU is what oversubscription means).
#[test]
fn an_oversubscribed_point_is_no_contention() {
    let point = |threads: usize, gops: f64, oversubscribed: bool| {
        rec(
            Subsystem::Cpu,
            "DP",
            json!({"threads": threads, "isa": "avx512", "clock_ghz": 3.6,
                   "cpus": (0..threads).map(|t| t % 2).collect::<Vec<_>>(),
                   "oversubscribed": oversubscribed}),
            Metric::Throughput,
            Unit::Gops,
            gops,
            Some(120.0),
        )
    };
    let found = cause_texts(vec![point(2, 110.0, false), point(4, 60.0, true)]);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].contains("4 threads share fewer cores"),
        "{found:?}"
    );
    assert!(!found[0].contains("they share what fewer had"), "{found:?}");
}

/// A CPU point's peak counts the cores its threads run on: one thread at 50 % beside two at
/// 95 % is not "1 thread does not fill it" (each is judged against its own cores).
#[test]
fn more_threads_doing_better_is_no_cause_of_a_cpu_points_gap() {
    let found = cause_texts(vec![
        dp(1, 30.0, "avx512", 3.6),
        dp(2, 114.0, "avx512", 3.6),
    ]);
    assert!(found.iter().all(|f| !f.contains("fill it")), "{found:?}");
    assert!(
        found[0].ends_with("no cause this run can show"),
        "{found:?}"
    );
}

/// TRIAD on one thread against a peak its arrays in L2 reach (the quick machine's L2: 1 MiB):
/// arrays in memory are held by their `working-set`, the whole gap; against a memory peak that
/// the arrays in cache surpass three times, the point in memory has no such cause.
#[test]
fn arrays_out_of_the_peaks_cache_level_are_the_working_set() {
    let triad = |ws: u64, gbs: f64, peak: f64| {
        rec(
            Subsystem::Mem,
            "TRIAD",
            json!({"threads": 1, "isa": "avx512", "stores": "regular", "cpus": [0],
                   "working_set_bytes": ws, "array_bytes_per_thread": ws / 3,
                   "pages": "thp", "huge_page_bytes": null}),
            Metric::Throughput,
            Unit::GBPerSec,
            gbs,
            Some(peak),
        )
    };
    let found = cause_texts(vec![
        triad(768 << 10, 150.0, 150.0),
        triad(768 << 20, 45.0, 150.0),
    ]);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].ends_with(
            "30.0 % of its peak — its arrays, 768 MiB a thread, do not fit in L2 (they are in memory): at 768 KiB a thread, which fit, it reached 100.0 % (100 % of the gap)"
        ),
        "{found:?}"
    );
    let memory = cause_texts(vec![
        triad(768 << 10, 150.0, 50.0),
        triad(768 << 20, 40.0, 50.0),
    ]);
    assert!(
        memory.iter().all(|f| !f.contains("do not fit")),
        "{memory:?}"
    );
    // There the arrays in L2 are what lifted the first point to 300 % of the memory's peak:
    // ln(3 / 0.8) / ln(3) is more than all of the excess.
    assert_eq!(memory.len(), 1, "{memory:?}");
    assert!(
        memory[0].ends_with(
            "300.0 % of its peak, above it — its arrays, 768 KiB a thread, fit in L2, which moves them faster than memory: at 768 MiB a thread, in memory, it reached 80.0 % (100 % of the excess)"
        ),
        "{memory:?}"
    );
}

/// Buffered rereads served from the page cache at 3 × the device's peak, beside the same
/// point with O_DIRECT at 60 % (then 90 %: a mean of 75 %): the page cache lifted it 4 ×, all of
/// the excess; alone, without a direct twin, it is named without a share; within 110 % of
/// the peak nothing is said.
#[test]
fn reads_above_the_devices_peak_are_the_page_cache() {
    let reread =
        |mbps: f64, buffered: bool| disk("REREAD", "sequential", 1 << 20, 1, mbps, buffered);
    let found = cause_texts(vec![
        reread(600.0, false),
        reread(3000.0, true),
        reread(900.0, false),
    ]);
    assert_eq!(found.len(), 2, "{found:?}");
    let lifted = found.iter().find(|f| f.contains("above it")).unwrap();
    assert!(
        lifted.ends_with(
            "300.0 % of its peak, above it — its reads went through the page cache (buffered), which served what it held from memory: the same point with O_DIRECT reached 75.0 % (100 % of the excess)"
        ),
        "{found:?}"
    );
    let alone = cause_texts(vec![reread(3000.0, true)]);
    assert!(
        alone[0].ends_with("from memory, not the device"),
        "{alone:?}"
    );
    assert!(cause_texts(vec![reread(1050.0, true)]).is_empty());
}

/// Two LATENCY threads pinned to one CPU: each load's time counts the other thread's turns,
/// which halves the L1 level's efficiency (the floor over the latency): `oversubscription`,
/// all of the gap; on two CPUs of their own nothing is said.
#[test]
fn threads_taking_turns_on_a_cpu_lengthen_a_latency() {
    let level = |cpus: &[usize], ns: f64| {
        rec(
            Subsystem::Mem,
            "LATENCY",
            json!({"threads": 2, "probe": "level", "cpus": cpus, "level": "L1", "pages": "thp",
                   "plateau_from_bytes": 4096, "plateau_to_bytes": 32768,
                   "capacity_bytes": 49152, "sysfs_size_bytes": 49152,
                   "latency_cycles": 4.0}),
            Metric::Latency,
            Unit::Nanos,
            ns,
            Some(1.0),
        )
    };
    let found = cause_texts(vec![level(&[0, 1], 1.02), level(&[0, 0], 2.0)]);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].ends_with(
            "50.0 % of its peak — 2 threads took turns on 1 CPU: each thread's time per operation counts the others' turns (100 % of the gap)"
        ),
        "{found:?}"
    );
}

/// `--diagnose`: an avx2 point at half its peak measured again with avx512 reached 95 %, the
/// gain the `isa` cause promised: confirmed; at 52 % it gained nothing: dropped.
#[test]
fn a_point_measured_again_without_its_cause_confirms_or_drops_it() {
    let again = |gops: f64| {
        let mut r = dp(1, gops, "avx512", 3.6);
        r.rerun = Some(crate::results::diagnosis::Rerun {
            of: 0,
            cause: "isa".into(),
            knob: "--isa avx512".into(),
        });
        r
    };
    let said = |gops: f64| {
        cause_texts(vec![dp(1, 30.0, "avx2", 3.6), again(gops)])
            .into_iter()
            .find(|t| t.contains("avx2"))
            .unwrap()
    };
    assert!(
        said(57.0).ends_with(
            "(100 % of the gap; measured again with --isa avx512: 95.0 % of its peak, 100.0 % expected without it: confirmed)"
        ),
        "{}",
        said(57.0)
    );
    assert!(said(31.2).ends_with(": dropped)"), "{}", said(31.2));
}

/// `--diagnose` where the run had measured no ceiling for the cause (LINPACK at N = 200, no
/// larger N): a gain of a tenth or more confirms it, and the re-run's figure becomes its
/// ceiling; less drops it, and the cause keeps no share.
#[test]
fn a_cause_without_a_ceiling_is_confirmed_by_a_gain_of_a_tenth() {
    let linpack = |n: usize, gops: f64, again: bool| {
        let mut r = rec(
            Subsystem::Cpu,
            "LINPACK",
            json!({"threads": 2, "n": n, "engine": "built-in", "micro_kernel": "AVX-512 24x8",
                   "micro_kernel_isa": "avx512", "flops": 1e7}),
            Metric::Throughput,
            Unit::Gops,
            gops,
            Some(100.0),
        );
        r.rerun = again.then(|| crate::results::diagnosis::Rerun {
            of: 0,
            cause: "problem-size".into(),
            knob: "--n 1000".into(),
        });
        r
    };
    let said = |gops: f64| {
        cause_texts(vec![linpack(200, 8.0, false), linpack(1000, gops, true)])
            .into_iter()
            .find(|t| t.contains("N = 200 ·"))
            .unwrap()
    };
    // ln(8 / 48) / ln(0.08): 71 % of the gap.
    assert!(
        said(48.0).ends_with(
            "(71 % of the gap; measured again with --n 1000: 48.0 % of its peak, at least 8.8 % expected without it: confirmed); 29 % of the gap unexplained"
        ),
        "{}",
        said(48.0)
    );
    let dropped = said(8.5);
    assert!(
        dropped.contains("at least 8.8 % expected without it: dropped)"),
        "{dropped}"
    );
    assert!(!dropped.contains("% of the gap;"), "{dropped}");
}

/// `--diagnose` of a LATENCY level on 4 KiB pages (`pages`): its staircase measured again on
/// huge pages gives every level; the level's own (memory) confirms the cause, not the L2 one.
#[test]
fn a_staircase_measured_again_confirms_each_level_by_its_own() {
    let level = |level: &str, pages: &str, ns: f64, floor: f64, again: bool| {
        let mut r = rec(
            Subsystem::Mem,
            "LATENCY",
            json!({"threads": 1, "probe": "level", "cpus": [0], "level": level, "pages": pages,
                   "plateau_from_bytes": 1 << 24, "plateau_to_bytes": 1u64 << 31}),
            Metric::Latency,
            Unit::Nanos,
            ns,
            Some(floor),
        );
        r.rerun = again.then(|| crate::results::diagnosis::Rerun {
            of: 1,
            cause: "pages".into(),
            knob: "--huge-pages on".into(),
        });
        r
    };
    let found = cause_texts(vec![
        level("memory", "thp", 157.5, 90.0, false),
        level("memory", "4k", 177.0, 90.0, false),
        level("L2", "thp", 3.4, 3.4, true),
        level("memory", "thp", 156.5, 90.0, true),
    ]);
    let small = found.iter().find(|t| t.contains("4k")).unwrap();
    assert!(
        small.contains(
            "the same point on transparent huge pages reached 57.1 % (fewer TLB misses)"
        ) && small.contains(
            "measured again with --huge-pages on: 57.5 % of its peak, 57.1 % expected without it: confirmed)"
        ),
        "{found:?}"
    );
}

/// A built-in LINPACK whose micro-kernel ran avx2 on an avx512 CPU: `isa`, as a kernel's (half
/// the peak's vector width); a system library's (no `isa` recorded) is not named so.
#[test]
fn a_dense_solve_on_narrower_vectors_is_named_isa() {
    let linpack = |isa: Option<&str>| {
        let mut p = json!({"threads": 1, "n": 3000, "engine": "built-in",
                           "micro_kernel": "AVX2+FMA 8x6", "flops": 1.8e10});
        if let Some(isa) = isa {
            p["micro_kernel_isa"] = json!(isa);
        }
        rec(
            Subsystem::Cpu,
            "LINPACK",
            p,
            Metric::Throughput,
            Unit::Gops,
            24.0,
            Some(60.0),
        )
    };
    let found = cause_texts(vec![linpack(Some("avx2"))]);
    assert!(
        found[0].contains(
            "40.0 % of its peak — it runs avx2 (256 bits) on a CPU with avx512 (512 bits)"
        ),
        "{found:?}"
    );
    let system = cause_texts(vec![linpack(None)]);
    assert!(
        system.iter().all(|t| !t.contains("it runs avx2")),
        "{system:?}"
    );
}

/// The memory level of a LATENCY staircase on 4 KiB pages at 200 ns against a 100 ns floor,
/// beside the same level on transparent huge pages at 120 ns: `pages`, its ceiling the two
/// efficiencies' ratio (0.5 / 0.833), ln(0.6) / ln(0.5) = 74 % of the gap.
#[test]
fn small_pages_where_huge_ones_did_better_are_named_pages() {
    let level = |pages: &str, ns: f64| {
        rec(
            Subsystem::Mem,
            "LATENCY",
            json!({"threads": 1, "probe": "level", "cpus": [0], "level": "memory",
                   "pages": pages, "plateau_from_bytes": 268435456u64,
                   "plateau_to_bytes": 1073741824u64, "latency_cycles": 600.0}),
            Metric::Latency,
            Unit::Nanos,
            ns,
            Some(100.0),
        )
    };
    let found = cause_texts(vec![level("4k", 200.0), level("thp", 120.0)]);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].ends_with(
            "50.0 % of its peak — it ran on 4 KiB pages: the same point on transparent huge pages reached 83.3 % (fewer TLB misses) (74 % of the gap); 26 % of the gap unexplained"
        ),
        "{found:?}"
    );
}

/// A system BLAS that ran 1 of the 2 threads asked (a single-threaded build): `workers`, half.
#[test]
fn a_blas_on_fewer_threads_than_asked_is_named() {
    let found = cause_texts(vec![rec(
        Subsystem::Cpu,
        "DGEMM",
        json!({"threads": 2, "n": 1000, "engine": "system", "micro_kernel": "OpenBLAS Haswell",
               "library_threads": 1, "flops": 2e9}),
        Metric::Throughput,
        Unit::Gops,
        30.0,
        Some(120.0),
    )]);
    assert!(
        found[0].contains("the system BLAS ran 1 of the 2 threads asked (50 % of the gap)"),
        "{found:?}"
    );
}
