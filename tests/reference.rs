//! `peakbench reference check` against the real binary: with nothing on PATH every tool is
//! missing with its install command; with this machine's PATH the installed ones show their
//! versions.

use assert_cmd::Command;
use peakbench::reference::{Availability, RefContext, Tool, measure};
use serde_json::json;
use std::time::Duration;

/// (name in the table, program on PATH, install command).
const TOOLS: [(&str, &str, &str); 12] = [
    ("likwid-bench", "likwid-bench", "apt-get install likwid"),
    (
        "STREAM",
        "stream",
        "build stream.c from https://www.cs.virginia.edu/stream/",
    ),
    ("sysbench", "sysbench", "apt-get install sysbench"),
    ("mbw", "mbw", "apt-get install mbw"),
    ("fio", "fio", "apt-get install fio"),
    ("dd", "dd", "apt-get install coreutils"),
    ("iperf3", "iperf3", "apt-get install iperf3"),
    ("sockperf", "sockperf", "apt-get install sockperf"),
    ("qperf", "qperf", "apt-get install qperf"),
    ("ping", "ping", "apt-get install iputils-ping"),
    (
        "HPL (hpcc)",
        "hpcc",
        "apt-get install hpcc openmpi-bin libopenblas0-serial",
    ),
    // A library, found where Debian's alternatives put it, not on PATH.
    ("BLIS", "libblis.so.4", "apt-get install libblis4-pthread"),
];

/// The table's cells, row by row (the header included).
fn rows(table: &str) -> Vec<Vec<String>> {
    table
        .lines()
        .filter(|l| l.starts_with('│'))
        .map(|l| {
            l.trim_matches('│')
                .split('┆')
                .map(|c| c.trim().to_string())
                .collect()
        })
        .collect()
}

fn check(path: &std::ffi::OsStr) -> Vec<Vec<String>> {
    let out = Command::new(env!("CARGO_BIN_EXE_peakbench"))
        .args(["reference", "check"])
        .env("PATH", path)
        .env_remove("PEAKBENCH_STREAM")
        .env("COLUMNS", "400")
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    // What cannot be had here is said, with what stands in for it.
    for tool in ["IOzone", "pmbw", "netperf", "lmbench", "Intel MLC"] {
        assert!(text.contains(tool), "{tool}: {text}");
    }
    let rows = rows(&text);
    assert_eq!(rows.len(), TOOLS.len() + 1, "{text}");
    assert_eq!(rows[0], ["Tool", "Status", "Covers", "Install"]);
    rows
}

fn row<'a>(rows: &'a [Vec<String>], name: &str) -> &'a [String] {
    rows.iter()
        .find(|r| r[0] == name)
        .unwrap_or_else(|| panic!("no row for {name}: {rows:?}"))
}

#[test]
fn every_tool_is_missing_with_an_empty_path() {
    let rows = check("".as_ref());
    for (name, _, install) in TOOLS {
        let r = row(&rows, name);
        if name == "BLIS" && installed(Tool::Blis) {
            // Not looked up on PATH.
            assert!(r[1].starts_with("found"), "{r:?}");
            continue;
        }
        assert_eq!(r[1], "missing", "{name}");
        assert!(r[3].starts_with(install), "{name}: {}", r[3]);
        assert!(!r[2].is_empty());
    }
}

#[test]
fn installed_tools_show_their_version_and_path() {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let rows = check(&path);
    for (name, program, _) in TOOLS {
        let Some(dir) = std::env::split_paths(&path).find(|d| d.join(program).is_file()) else {
            eprintln!("skipped {name}: not installed");
            continue;
        };
        let r = row(&rows, name);
        // Another program of the same name (ImageMagick's `stream`) is found and said to be
        // no STREAM: nothing to check of its version.
        if r[1].starts_with("unusable: ") && r[1].contains("is not McCalpin's STREAM") {
            eprintln!("skipped {name}: {} is another program", program);
            continue;
        }
        let at = format!(" at {}", dir.join(program).display());
        assert!(
            r[1].starts_with("found ") && r[1].ends_with(&at),
            "{name}: {}",
            r[1]
        );
        let version = &r[1]["found ".len()..r[1].len() - at.len()];
        assert!(
            version.starts_with(|c: char| c.is_ascii_digit()),
            "{name}: version {version:?}"
        );
    }
}

/// A record as the benchmarks write it, with the parameters the adapters read.
fn record(
    subsystem: &str,
    workload: &str,
    metric: &str,
    unit: &str,
    params: serde_json::Value,
    mean: f64,
    peak: Option<f64>,
) -> peakbench::results::ResultRecord {
    use peakbench::results::{Metric, Subsystem, Unit};
    let subsystem: Subsystem = subsystem.parse().unwrap();
    let (metric, unit): (Metric, Unit) = (metric.parse().unwrap(), unit.parse().unwrap());
    let params = peakbench::results::params::Params::with_defaults(
        peakbench::results::Workload::named(subsystem, workload).unwrap(),
        params,
    )
    .unwrap();
    let peak = peak.map_or_else(
        || Err("no peak".to_string()),
        |value| {
            Ok(peakbench::sysinfo::peak::Peak {
                value,
                unit,
                formula: "test".into(),
                inputs: Default::default(),
            })
        },
    );
    peakbench::results::ResultRecord::new(
        peakbench::results::Workload::named(subsystem, workload).unwrap(),
        params,
        metric,
        unit,
        vec![mean],
        peak,
    )
}

/// Whether `tool` is installed; when not, the reason the test is skipped is printed.
fn installed(tool: Tool) -> bool {
    match peakbench::reference::Locator::from_env().availability(tool) {
        Availability::Found(_) => true,
        _ => {
            eprintln!(
                "skipped: {} is not installed ({})",
                tool.name(),
                tool.install()
            );
            false
        }
    }
}

/// A context whose temporary files live on the build directory's file system (O_DIRECT works
/// there; /tmp may be tmpfs) and whose runs last about a second.
fn context() -> (tempfile::TempDir, RefContext) {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let mut ctx = RefContext::new(dir.path());
    ctx.duration = Some(Duration::from_millis(500));
    (dir, ctx)
}

#[test]
fn fio_measures_a_disk_point_and_removes_its_file() {
    if !installed(Tool::Fio) {
        return;
    }
    let (dir, ctx) = context();
    let params = json!({
        "threads": 1, "iodepth": 1, "block_size_bytes": 4096, "engine": "psync",
        "io_mode": "direct", "pattern": "random", "read_percent": 100,
        "file_size_bytes": 4_194_304, "runtime_s": 5.0, "ramp_s": 0.0, "cpus": [0]
    });
    let iops = record(
        "disk",
        "RR",
        "iops",
        "IOPS",
        params.clone(),
        1000.0,
        Some(1e9),
    );
    let r = measure(&iops, &ctx).unwrap().unwrap();
    assert_eq!(r.tool, "fio");
    assert!(r.mean > 0.0, "{r:?}");
    assert_eq!(r.efficiency, Some(r.mean / 1e9));
    // Its buffers asked on huge pages as peakbench's are, and the command says so.
    assert!(
        r.commands
            .iter()
            .all(|c| c.contains("GLIBC_TUNABLES=glibc.malloc.hugetlb=1")),
        "{:?}",
        r.commands
    );
    // The same point's latency comes from the same run.
    let lat = record("disk", "RR", "latency", "us", params, 100.0, None);
    let l = measure(&lat, &ctx).unwrap().unwrap();
    assert!(l.mean > 0.0 && l.efficiency.is_none(), "{l:?}");
    // fio's file is kept for the next run of the same size (laid out once), one file only;
    // released at the end of the job, and with the context.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    ctx.release_files();
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

/// fio measures IOzone's operations: a backward read, a stride read, a reread through the page
/// cache and a write into a new file, each with its figure; the new file is removed after its
/// run, and a point through a library buffer has no figure, with the reason.
#[test]
fn fio_measures_iozones_operations() {
    if !installed(Tool::Fio) {
        return;
    }
    let (dir, ctx) = context();
    let params = |pattern: &str, read_percent: u64, io_mode: &str| {
        json!({
            "threads": 1, "iodepth": 1, "block_size_bytes": 4096, "engine": "psync",
            "io_mode": io_mode, "pattern": pattern, "read_percent": read_percent,
            "file_size_bytes": 1_048_576, "runtime_s": 0.2, "ramp_s": 0.0, "cpus": [0],
            "stride_blocks": 17, "sync": "none"
        })
    };
    for (workload, pattern, read_percent, io_mode, argument) in [
        ("RB", "backward", 100, "direct", "--rw=read:-8192"),
        ("RSTRIDE", "stride", 100, "direct", "--rw=read:65536"),
        ("REREAD", "sequential", 100, "buffered", "--pre_read=1"),
        ("WNEW", "sequential", 0, "direct", "--fallocate=none"),
    ] {
        let p = params(pattern, read_percent, io_mode);
        let rec = record("disk", workload, "iops", "IOPS", p, 1.0, None);
        let r = measure(&rec, &ctx).unwrap().unwrap();
        assert_eq!(r.tool, "fio");
        assert!(r.mean > 0.0, "{workload}: {r:?}");
        assert!(
            r.commands.iter().any(|c| c.contains(argument)),
            "{workload}: {:?}",
            r.commands
        );
    }
    // The kept file of the reads; WNEW's own file is gone.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    let mut p = params("sequential", 100, "buffered");
    p["engine"] = json!("stream");
    p["stream_buffer_bytes"] = json!(65536);
    let rec = record("disk", "RS", "iops", "IOPS", p, 1.0, None);
    let e = measure(&rec, &ctx).unwrap().unwrap_err();
    assert!(e.contains("library buffer"), "{e}");
    ctx.release_files();
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

/// sysbench fileio measures a disk point beside fio with the same parameters (random 4 KiB
/// reads and writes, O_DIRECT, two threads), from the same prepared file for the point's three
/// records; fio's figure is the preferred one; its directory goes with the context's files.
#[test]
fn sysbench_fileio_measures_a_disk_point_beside_fio() {
    if !installed(Tool::Fio) || !installed(Tool::Sysbench) {
        return;
    }
    let (dir, ctx) = context();
    let params = json!({
        "threads": 2, "iodepth": 1, "block_size_bytes": 4096, "engine": "psync",
        "io_mode": "direct", "pattern": "random", "read_percent": 60,
        "file_size_bytes": 4_194_304, "runtime_s": 5.0, "ramp_s": 0.0, "sync": "none"
    });
    let mut figures = Vec::new();
    for (metric, unit) in [("throughput", "B/s"), ("iops", "IOPS"), ("latency", "s")] {
        let rec = record("disk", "RW", metric, unit, params.clone(), 1.0, None);
        let (first, others) = peakbench::reference::measure_all(&rec, &ctx)
            .unwrap()
            .unwrap();
        assert_eq!(first.tool, "fio");
        let other = match others.as_slice() {
            [Ok(o)] => o.clone(),
            other => panic!("{metric}: {other:?}"),
        };
        assert_eq!(other.tool, "sysbench");
        assert!(other.mean > 0.0 && other.samples.len() == 1, "{other:?}");
        assert!(
            other
                .commands
                .iter()
                .any(|c| c.contains("--file-test-mode=rndrw")
                    && c.contains("--file-rw-ratio=1.5")
                    && c.contains("--file-extra-flags=direct")
                    && c.contains("--threads=2"))
        );
        figures.push(other.mean);
    }
    // Bytes per second are 4 KiB per I/O, to what sysbench prints: its two MiB/s and its two
    // per-second counts each to 0.01 (a slow disk's few IOPS make the ratio's error larger);
    // the latency is about threads over IOPS.
    let printed = (0.01 * 1_048_576.0 + 0.01 * 4096.0) / figures[1];
    assert!(
        (figures[0] / figures[1] - 4096.0).abs() <= printed,
        "{figures:?}: within {printed}"
    );
    let little = 2.0 / figures[1];
    assert!(
        figures[2] > 0.5 * little && figures[2] < 2.0 * little,
        "{figures:?}"
    );
    // fio's file and sysbench's directory, each laid out once, removed with the context's files.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
    ctx.release_files();
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn iperf3_and_sockperf_measure_loopback_points() {
    let (_dir, ctx) = context();
    if installed(Tool::Iperf3) {
        let tcp = record(
            "net",
            "THROUGHPUT",
            "throughput",
            "Mbit/s",
            json!({"streams": 1, "protocol": "TCP", "message_size_bytes": 131072,
                   "duration_s": 0.25, "omit_s": 0.0, "server": "127.0.0.1:5301",
                   "side": "receiver", "direction": "client to server"}),
            1000.0,
            None,
        );
        let r = measure(&tcp, &ctx).unwrap().unwrap();
        assert_eq!(r.tool, "iperf3");
        assert!(r.mean > 0.0, "{r:?}");
    }
    if installed(Tool::Sockperf) {
        let lat = record(
            "net",
            "LATENCY",
            "latency",
            "us",
            json!({"streams": 1, "protocol": "UDP", "message_size_bytes": 64,
                   "duration_s": 0.25, "server": "127.0.0.1:5301", "side": "client"}),
            50.0,
            None,
        );
        let r = measure(&lat, &ctx).unwrap().unwrap();
        assert_eq!(r.tool, "sockperf");
        assert!(r.mean > 0.0, "{r:?}");
    }
}

/// A 1-byte ping-pong, which sockperf refuses (its header is 14 bytes): qperf measures it, and
/// its server is gone afterwards; ping gives a 64-byte point's ICMP round trip.
#[test]
fn qperf_measures_one_byte_and_ping_the_icmp_round_trip() {
    let (_dir, ctx) = context();
    let lat = |size: u64, metric: &str, unit: &str| {
        record(
            "net",
            "LATENCY",
            metric,
            unit,
            json!({"streams": 1, "protocol": "TCP", "message_size_bytes": size,
                   "duration_s": 0.25, "server": "127.0.0.1:5301", "side": "client"}),
            50.0,
            None,
        )
    };
    if installed(Tool::Qperf) {
        let r = measure(&lat(1, "latency", "us"), &ctx).unwrap().unwrap();
        assert_eq!(r.tool, "qperf");
        assert!(r.mean > 0.0 && r.mean < 0.1, "{r:?}");
        let rate = measure(&lat(1, "rate", "trans/s"), &ctx).unwrap().unwrap();
        // One run for both records: the rate is the inverse of the round trip.
        assert!((rate.mean * r.mean - 1.0).abs() < 1e-9, "{rate:?} {r:?}");
        let left = std::process::Command::new("pgrep")
            .args(["-x", "qperf"])
            .output();
        if let Ok(out) = left {
            assert!(out.stdout.is_empty(), "a qperf server was left running");
        }
    }
    if installed(Tool::Ping) && !installed(Tool::Sockperf) && !installed(Tool::Qperf) {
        let r = measure(&lat(64, "latency", "us"), &ctx).unwrap().unwrap();
        assert_eq!(r.tool, "ping");
        assert!(r.version.contains("ICMP") && r.mean > 0.0, "{r:?}");
    }
    if installed(Tool::Ping) {
        // ping itself, on the point's payload, whatever else is installed.
        let Availability::Found(found) =
            peakbench::reference::Locator::from_env().availability(Tool::Ping)
        else {
            unreachable!()
        };
        let job = peakbench::reference::ping::job(&lat(64, "latency", "us"), &ctx)
            .unwrap()
            .unwrap();
        let r = peakbench::reference::ping::run(&found.path, &job).unwrap();
        assert!(r.avg_ms > 0.0 && r.avg_ms < 100.0, "{r:?}");
        assert_eq!(r.received, Some(job.count));
    }
}

#[cfg(target_arch = "x86_64")]
#[test]
fn likwid_measures_a_cpu_point() {
    if !installed(Tool::LikwidBench) {
        return;
    }
    let (_dir, ctx) = context();
    let isa = if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma") {
        "avx2"
    } else {
        "sse2"
    };
    let dp = record(
        "cpu",
        "DP",
        "throughput",
        "GOPS",
        json!({"threads": 1, "isa": isa}),
        30.0,
        Some(1000.0),
    );
    // Sized from the record's 30 GOPS to last about half a second.
    let r = measure(&dp, &ctx).unwrap().unwrap();
    assert_eq!(r.tool, "likwid-bench");
    // Stored in op/s, as the record and its peak are.
    assert!(r.mean > 0.1e9, "{r:?}");
    assert_eq!(r.efficiency, Some(r.mean / 1000e9));
}

/// A memory block record as `peakbench mem` writes it: 8 MiB per thread.
fn block(
    workload: &str,
    metric: &str,
    unit: &str,
    block: u64,
    mean: f64,
) -> peakbench::results::ResultRecord {
    let order = if workload.ends_with('R') {
        "random"
    } else {
        "sequential"
    };
    record(
        "mem",
        workload,
        metric,
        unit,
        json!({"threads": 1, "isa": "scalar", "stores": "regular",
               "array_bytes_per_thread": 8u64 << 20, "working_set_bytes": 8u64 << 20,
               "block_size_bytes": block, "blocks_per_thread": (8u64 << 20) / block,
               "order": order}),
        mean,
        None,
    )
}

/// sysbench memory reads and writes an 8 MiB buffer in sequence, and 8-byte words at random,
/// for RS, WS and RR points; its time of one operation is the block over its rate; a random
/// 1 KiB block is refused with the reason.
#[test]
fn sysbench_measures_memory_blocks() {
    if !installed(Tool::Sysbench) {
        return;
    }
    let (_dir, ctx) = context();
    let rs = measure(&block("RS", "throughput", "B/s", 1024, 10e9), &ctx)
        .unwrap()
        .unwrap();
    assert_eq!(rs.tool, "sysbench");
    assert!(rs.mean > 100e6, "{rs:?}");
    // The same run gives the time of one 1 KiB read.
    let op = measure(&block("RS", "latency", "s", 1024, 1e-7), &ctx)
        .unwrap()
        .unwrap();
    assert!(
        (op.mean - 1024.0 / rs.mean).abs() <= 1e-9 * op.mean,
        "{op:?} {rs:?}"
    );
    for w in ["WS", "RR"] {
        let r = measure(&block(w, "throughput", "B/s", 8, 1e9), &ctx)
            .unwrap()
            .unwrap();
        assert!(r.mean > 1e6, "{w}: {r:?}");
    }
    let e = measure(&block("RR", "throughput", "B/s", 1024, 1e9), &ctx)
        .unwrap()
        .unwrap_err();
    assert!(e.contains("not random 1024-byte blocks"), "{e}");
}

/// sysbench reads a LATENCY point's 8 MiB span in 8-byte words, in sequence and at random: the
/// time of one load of each thread; a 1-byte probe and a staircase step are refused with the
/// reason.
#[test]
fn sysbench_measures_the_eight_byte_probes() {
    if !installed(Tool::Sysbench) {
        return;
    }
    let (_dir, ctx) = context();
    let probe = |name: &str, bytes: u64, order: &str| {
        let params = json!({"threads": 2, "probe": name, "op_bytes": bytes, "order": order,
                            "working_set_bytes": 8u64 << 20, "ops": 1000});
        measure(
            &record("mem", "LATENCY", "latency", "s", params, 1e-9, None),
            &ctx,
        )
        .unwrap()
    };
    let seq = probe("seq-8B", 8, "sequential").unwrap();
    let rnd = probe("random-8B", 8, "random").unwrap();
    assert_eq!(seq.tool, "sysbench");
    // Between a picosecond and a microsecond a load (a Zen 5 thread streams 8 MiB at 0.095 ns
    // a word: 84 GB/s); random no faster than in order.
    for r in [&seq, &rnd] {
        assert!(r.mean > 1e-12 && r.mean < 1e-6, "{r:?}");
    }
    assert!(rnd.mean > seq.mean, "{seq:?} {rnd:?}");
    assert!(
        seq.commands
            .iter()
            .any(|c| c.contains("--memory-access-mode=seq")),
        "{seq:?}"
    );
    let e = probe("random-1B", 1, "random").unwrap_err();
    assert!(e.contains("1-byte loads"), "{e}");
    let chase = json!({"threads": 1, "probe": "chase", "working_set_bytes": 4096});
    let e = measure(
        &record("mem", "LATENCY", "latency", "s", chase, 1e-9, None),
        &ctx,
    )
    .unwrap()
    .unwrap_err();
    assert!(e.contains("does not chase pointers"), "{e}");
}

/// mbw copies an 8 MiB array in 1 KiB blocks; its rate counts the bytes read and written; two
/// threads are two mbw processes at once, and the figure is the sum of their rates. (Which of
/// one and two processes is faster is the host's business, not the test's: on a shared 2-core
/// guest two at once may be slower.)
#[test]
fn mbw_measures_a_block_copy() {
    if !installed(Tool::Mbw) {
        return;
    }
    let (_dir, ctx) = context();
    let one = measure(&block("RWS", "throughput", "B/s", 1024, 10e9), &ctx)
        .unwrap()
        .unwrap();
    assert_eq!(one.tool, "mbw");
    assert!(one.mean > 200e6, "{one:?}");
    assert_eq!(mbw_rates(&one.output).len(), 1, "{}", one.output);
    let mut two = block("RWS", "throughput", "B/s", 1024, 10e9);
    if let peakbench::results::params::Params::Mem(m) = &mut two.params {
        m.threads = 2;
    }
    let both = measure(&two, &ctx).unwrap().unwrap();
    assert_eq!(both.commands.len(), 2, "{:?}", both.commands);
    let rates = mbw_rates(&both.output);
    assert_eq!(rates.len(), 2, "{}", both.output);
    // Read and written: twice the MiB copied per second, both processes' together.
    let sum = 2.0 * rates.iter().sum::<f64>() * 1_048_576.0;
    assert!(
        (both.mean - sum).abs() <= 1e-9 * sum,
        "{} against {sum}",
        both.mean
    );
}

/// Each `AVG … Copy: X MiB/s` rate in what mbw runs printed.
fn mbw_rates(output: &str) -> Vec<f64> {
    output
        .lines()
        .filter(|l| l.trim_start().starts_with("AVG"))
        .filter_map(|l| {
            l.split_once("Copy:")?
                .1
                .split_whitespace()
                .next()?
                .parse()
                .ok()
        })
        .collect()
}

/// A point repeated three times gets three runs of its tool: the reference has their figures,
/// their spread, the three command lines and what each printed.
#[test]
fn a_reference_is_repeated_as_its_point_and_keeps_its_evidence() {
    if !installed(Tool::Mbw) {
        return;
    }
    let (_dir, ctx) = context();
    let mut rec = block("RWS", "throughput", "B/s", 4096, 10e9);
    rec.samples = vec![10e9, 10.1e9, 9.9e9];
    let r = measure(&rec, &ctx).unwrap().unwrap();
    assert_eq!(r.samples.len(), 3, "{r:?}");
    let mean = r.samples.iter().sum::<f64>() / 3.0;
    assert!((r.mean - mean).abs() <= 1e-9 * mean);
    let (lo, hi) = (r.min.unwrap(), r.max.unwrap());
    assert!(
        lo <= r.mean && r.mean <= hi && r.stddev.unwrap() >= 0.0,
        "{r:?}"
    );
    assert_eq!(r.commands.len(), 3, "{:?}", r.commands);
    for c in &r.commands {
        assert!(
            c.ends_with("mbw -q -t2 -b 4096 -n ") || c.contains("mbw -q -t2 -b 4096 -n "),
            "{c}"
        );
    }
    assert_eq!(r.output.matches("$ ").count(), 3, "{}", r.output);
    assert_eq!(r.output.matches("AVG").count(), 3, "{}", r.output);
    // In the JSON document, as the schema says.
    let json = serde_json::to_value(&r).unwrap();
    for key in ["samples", "stddev", "min", "max", "commands", "output"] {
        assert!(json.get(key).is_some(), "{key}: {json}");
    }
}

/// dd copies a file block by block, two threads at once, O_DIRECT, in the point's directory:
/// MB/s, IOPS and latency from one run, and both of its files removed afterwards.
#[test]
fn dd_copies_a_file_for_a_disk_copy_point_and_removes_its_files() {
    if !installed(Tool::Dd) {
        return;
    }
    let (dir, ctx) = context();
    let target = dir.path().join("peakbench-target");
    let params = json!({
        "threads": 2, "iodepth": 1, "block_size_bytes": 65536, "engine": "psync",
        "io_mode": "direct", "pattern": "sequential", "read_percent": 50,
        "file_size_bytes": 4_194_304, "runtime_s": 0.2, "ramp_s": 0.0,
        "target": target.display().to_string()
    });
    let bw = record(
        "disk",
        "COPY",
        "throughput",
        "B/s",
        params.clone(),
        100e6,
        None,
    );
    let r = measure(&bw, &ctx).unwrap().unwrap();
    assert_eq!(r.tool, "dd");
    assert!(r.mean > 1e6, "{r:?}");
    assert_eq!(
        r.commands.len(),
        3,
        "the layout and two copies: {:?}",
        r.commands
    );
    assert!(r.commands[1].contains("oflag=direct"), "{:?}", r.commands);
    // The IOPS and latency of the same run.
    let iops = record("disk", "COPY", "iops", "IOPS", params.clone(), 1.0, None);
    let i = measure(&iops, &ctx).unwrap().unwrap();
    assert!((i.mean - r.mean / 65536.0).abs() <= 1e-9 * i.mean, "{i:?}");
    let lat = record("disk", "COPY", "latency", "s", params, 1.0, None);
    let l = measure(&lat, &ctx).unwrap().unwrap();
    assert!((l.mean - 2.0 / i.mean).abs() <= 1e-9 * l.mean, "{l:?}");
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}

/// The references of `args`' run (peakbench's JSON on standard output): each record's tool
/// figures, preferred first.
fn references_of(args: &[&str]) -> Vec<(String, serde_json::Value)> {
    let out = Command::new(env!("CARGO_BIN_EXE_peakbench"))
        .args(args)
        .args(["--reference", "--json", "-", "--no-history", "--quiet"])
        .timeout(Duration::from_secs(120))
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let doc: serde_json::Value = serde_json::from_slice(&out).unwrap();
    let mut refs = Vec::new();
    for r in doc["results"].as_array().unwrap() {
        let label = format!("{} {}", r["workload"], r["metric"]);
        let others = r["other_references"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        for reference in std::iter::once(r["reference"].clone()).chain(others) {
            if !reference.is_null() {
                refs.push((label.clone(), reference));
            }
        }
    }
    refs
}

/// A tool's runs alternate with the point's repetitions: three repetitions, three runs of each
/// tool, made between them (`interleaved`), none made again after the point.
#[test]
fn a_tools_runs_alternate_with_the_points_repetitions() {
    if installed(Tool::Mbw) {
        let refs = references_of(&[
            "mem",
            "--workload=RWS",
            "--block-size=1M",
            "--array-size=8M",
            "--threads=1",
            "--repeat=3",
            "--warmup=1",
            "--duration=20ms",
        ]);
        assert_eq!(
            refs.len(),
            2,
            "throughput and the time of one block: {refs:?}"
        );
        for (label, r) in refs {
            assert_eq!(r["tool"], "mbw", "{label}: {r}");
            assert_eq!(r["interleaved"], true, "{label}: {r}");
            assert_eq!(r["samples"].as_array().unwrap().len(), 3, "{label}: {r}");
            assert_eq!(r["commands"].as_array().unwrap().len(), 3, "{label}: {r}");
        }
    }
    if installed(Tool::Fio) {
        let dir = tempfile::tempdir().unwrap();
        let refs = references_of(&[
            "disk",
            "--workload=RS",
            "--block-size=64K",
            "--threads=1",
            "--size=8M",
            "--runtime=200ms",
            "--repeat=3",
            "--dir",
            dir.path().to_str().unwrap(),
        ]);
        let fio: Vec<_> = refs.iter().filter(|(_, r)| r["tool"] == "fio").collect();
        assert_eq!(fio.len(), 3, "MB/s, IOPS and latency: {refs:?}");
        for (label, r) in fio {
            assert_eq!(r["interleaved"], true, "{label}: {r}");
            assert_eq!(r["commands"].as_array().unwrap().len(), 3, "{label}: {r}");
        }
        // sysbench fileio beside it, where installed: its file prepared once, then three runs.
        for (label, r) in refs.iter().filter(|(_, r)| r["tool"] == "sysbench") {
            assert_eq!(r["interleaved"], true, "{label}: {r}");
            assert_eq!(r["samples"].as_array().unwrap().len(), 3, "{label}: {r}");
        }
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert!(left.is_empty(), "left behind: {left:?}");
    }
}

/// hpcc's STREAM gives SCALE and ADD points their reference, sized by HPL's N from the point's
/// arrays: a 1 MiB array a thread is HPL of order 628, a run of a second or two. One run serves
/// both records of a thread count; two threads take StarSTREAM on two processes.
#[test]
fn hpcc_streams_scale_and_add_points() {
    if !matches!(
        peakbench::reference::Locator::from_env().availability(Tool::Hpcc),
        Availability::Found(_)
    ) {
        eprintln!(
            "SKIPPED hpcc_streams_scale_and_add_points: hpcc is missing or unusable ({})",
            Tool::Hpcc.install()
        );
        return;
    }
    let (_dir, ctx) = context();
    let mem = |workload: &str, threads: u64| {
        record(
            "mem",
            workload,
            "throughput",
            "B/s",
            json!({"threads": threads, "isa": "scalar", "stores": "regular",
                   "array_bytes_per_thread": 1u64 << 20,
                   "working_set_bytes": threads * (3u64 << 20)}),
            10e9,
            Some(100e9),
        )
    };
    for (workload, threads) in [("SCALE", 1), ("ADD", 1), ("ADD", 2)] {
        let r = measure(&mem(workload, threads), &ctx)
            .unwrap_or_else(|| panic!("{workload}: no tool"))
            .unwrap_or_else(|e| panic!("{workload} × {threads}: {e}"));
        assert_eq!(r.tool, "STREAM (hpcc)", "{r:?}");
        // Arrays of 1 MiB live in the caches: at least 100 MB/s, at most the bound of a figure.
        assert!(
            r.mean > 100e6 && r.mean < 1e14,
            "{workload} × {threads}: {r:?}"
        );
        assert_eq!(r.efficiency, Some(r.mean / 100e9));
    }
    // COPY, which likwid-bench measures too: hpcc's whole suite is not run beside it for a
    // second opinion (its plan names likwid-bench alone); where likwid-bench is missing,
    // hpcc is the reference.
    let likwid = matches!(
        peakbench::reference::Locator::from_env().availability(Tool::LikwidBench),
        Availability::Found(_)
    );
    let planned = peakbench::reference::plan::coverage(
        &[mem("COPY", 1)],
        &ctx,
        peakbench::reference::Limits::default(),
    );
    let shown = format!("{planned:?}");
    if likwid {
        assert!(
            shown.contains("likwid-bench") && !shown.contains("hpcc"),
            "{shown}"
        );
    } else {
        assert!(shown.contains("STREAM (hpcc)"), "{shown}");
    }
}

/// DGEMM and SGEMM points get BLIS's figure at their N and threads, through `--blas system` in a
/// process of peakbench's own, where BLIS is installed; on a CPU with AVX2 never BLIS's generic
/// code (where BLIS chose it, the point's configuration asked for with BLIS_ARCH_TYPE, in the
/// command shown); and `--blas system` runs the configuration BLIS_ARCH_TYPE names (BLIS
/// aborted where its configuration was queried before it initialised).
#[test]
fn blis_measures_the_points_multiply() {
    if !installed(Tool::Blis) {
        return;
    }
    #[cfg(target_arch = "x86_64")]
    let avx2 =
        std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma");
    #[cfg(not(target_arch = "x86_64"))]
    let avx2 = false;
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("out.json");
    Command::new(env!("CARGO_BIN_EXE_peakbench"))
        .args([
            "cpu",
            "--workload",
            "DGEMM,SGEMM",
            "--n",
            "256",
            "--threads",
            "1",
            "--repeat",
            "1",
            "--reference",
            "--no-history",
            "--json",
        ])
        .arg(&json)
        .timeout(Duration::from_secs(300))
        .assert()
        .success();
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let results = doc["results"].as_array().unwrap();
    assert_eq!(results.len(), 2, "{doc}");
    for r in results {
        let reference = &r["reference"];
        assert_eq!(reference["tool"], "BLIS", "{r}");
        // A multiply of 2·256³ operations through any BLIS build: above 0.1 GFLOP/s.
        assert!(reference["mean"].as_f64().unwrap() > 1e8, "{r}");
        // The configuration BLIS chose on this CPU is part of its version.
        let version = reference["version"].as_str().unwrap();
        assert!(version.contains("(BLIS "), "{version}");
        assert!(!avx2 || !version.contains("(BLIS generic"), "{version}");
        // The run of the figure is the last command (the first point's probes come before).
        let commands = reference["commands"].as_array().unwrap();
        let command = commands.last().unwrap().as_str().unwrap();
        assert!(
            command.contains("--blas system --blas-library") && command.contains("--n 256"),
            "{command}"
        );
        let asked = version.contains("asked with BLIS_ARCH_TYPE=");
        assert_eq!(
            asked,
            command.starts_with("BLIS_ARCH_TYPE="),
            "{version}: {command}"
        );
    }
    if !avx2 {
        return;
    }
    // BLIS's haswell configuration, its fourth (BLIS_ARCH_TYPE=3 in 0.8 and 0.9), is in every
    // x86 build of Debian's.
    let library = peakbench::reference::blis::library().unwrap();
    Command::new(env!("CARGO_BIN_EXE_peakbench"))
        .env("BLIS_ARCH_TYPE", "3")
        .args(["cpu", "--workload", "DGEMM", "--n", "64", "--threads", "1"])
        .args(["--repeat", "1", "--blas", "system", "--blas-library"])
        .arg(&library)
        .args(["--no-history", "--json"])
        .arg(&json)
        .timeout(Duration::from_secs(60))
        .assert()
        .success();
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(
        doc["results"][0]["params"]["micro_kernel"], "BLIS haswell",
        "{doc}"
    );
}
