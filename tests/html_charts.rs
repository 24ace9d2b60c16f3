//! The HTML report's charts in headless Chromium (skipped, saying so, where it is missing):
//! every chart drawn with no console error, a fleet's node-pair heatmaps, and charts that
//! follow what a run swept.

mod common;

use common::html::{CHARTS, chromium, console_lines, find_chromium, html_of, svgs};
use common::peakbench;
use peakbench::report;
use peakbench::results::{Metric, Report, Subsystem, Unit};
use std::path::Path;

#[test]
fn chromium_renders_every_chart() {
    let Some(bin) = find_chromium() else {
        println!("skipped: chromium not found (apt-get install chromium)");
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let logging = ["--enable-logging=stderr".to_string(), "--v=0".to_string()];

    // The console check sees a page's errors: a page that logs one shows it.
    let control = work.path().join("control.html");
    std::fs::write(
        &control,
        "<!DOCTYPE html><title>c</title><script>console.error('peakbench-control')</script>",
    )
    .unwrap();
    let mut args = logging.to_vec();
    args.push("--dump-dom".into());
    let (_, stderr) = chromium(&bin, work.path(), &args, &control);
    assert!(
        console_lines(&stderr)
            .iter()
            .any(|l| l.contains("peakbench-control")),
        "Chromium's log does not show console messages, so the check below would prove nothing:\n{stderr}"
    );

    let page = work.path().join("report.html");
    std::fs::write(
        &page,
        report::html::render(&common::shown(&common::chart_report())),
    )
    .unwrap();
    let (dom, stderr) = chromium(&bin, work.path(), &args, &page);
    assert_eq!(console_lines(&stderr), Vec::<&str>::new(), "{stderr}");
    let charts = svgs(&dom);
    assert_eq!(charts.len(), CHARTS, "{dom}");
    for svg in &charts {
        let drawn = ["<path", "<polyline", "<circle", "<rect", "<line"]
            .iter()
            .map(|e| svg.matches(e).count())
            .sum::<usize>();
        assert!(drawn > 10, "a chart with {drawn} drawn elements: {svg}");
        assert!(svg.contains("<text"), "a chart without text: {svg}");
        assert!(
            svg.contains("<title>"),
            "a chart without hover texts: {svg}"
        );
    }

    let shot = work.path().join("report.png");
    let args = [
        format!("--screenshot={}", shot.display()),
        "--window-size=1280,2400".to_string(),
    ];
    chromium(&bin, work.path(), &args, &page);
    let decoder = png::Decoder::new(std::io::BufReader::new(
        std::fs::File::open(&shot).expect("chromium wrote the screenshot"),
    ));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    let channels = info.color_type.samples();
    assert!(channels >= 3, "{:?}", info.color_type);
    let pixels: Vec<[u8; 3]> = buf[..info.buffer_size()]
        .chunks(channels)
        .map(|p| [p[0], p[1], p[2]])
        .collect();
    let non_white = pixels.iter().filter(|p| p.iter().any(|c| *c < 240)).count();
    let share = non_white as f64 / pixels.len() as f64;
    assert!(
        share > 0.03,
        "only {:.1} % of the screenshot is not white",
        share * 100.0
    );
    let colours: std::collections::HashSet<[u8; 3]> = pixels.iter().copied().collect();
    assert!(colours.len() > 64, "{} colours", colours.len());
    let series = report::plot::PALETTE[0];
    let drawn = pixels
        .iter()
        .filter(|p| {
            p.iter()
                .zip([series.0, series.1, series.2])
                .all(|(a, b)| a.abs_diff(b) <= 8)
        })
        .count();
    assert!(drawn > 300, "{drawn} pixels in the first series' colour");
    if let Some(keep) = std::env::var_os("PEAKBENCH_KEEP_SCREENSHOT") {
        std::fs::copy(&shot, keep).unwrap();
    }
}

/// A report of three nodes with both node-pair matrices and one outlier.
fn fleet_report() -> Report {
    use peakbench::results::fleet::{Fleet, Matrix, Node, Outlier, OutlierRule};
    let mut r = common::chart_report();
    let node = |rank: u32| Node {
        rank,
        hostname: format!("node{rank}"),
        machine_id: format!("m{rank}"),
        identity_source: "open_mpi".into(),
        address: format!("10.0.0.{}", rank + 1),
        status: "complete".into(),
        failed_jobs: Vec::new(),
        system: Some(common::fixed_system()),
    };
    let matrix = |metric: &str, unit: &str, base: f64| Matrix {
        pattern: peakbench::results::params::LinkPattern::Pairs,
        metric: metric.parse().unwrap(),
        unit: unit.parse().unwrap(),
        protocol: "TCP".into(),
        values: (0..3)
            .map(|s| {
                (0..3)
                    .map(|d| Some(base * (1.0 + (s * 3 + d) as f64 / 10.0)))
                    .collect()
            })
            .collect(),
    };
    r.fleet = Some(Fleet {
        world_size: 3,
        nodes: (0..3).map(node).collect(),
        outliers: vec![Outlier {
            kind: "node".into(),
            node: 2,
            dst_node: None,
            hostname: "node2".into(),
            subsystem: Subsystem::Cpu,
            workload: peakbench::results::Workload::named(Subsystem::Cpu, "DP").unwrap(),
            metric: Metric::Throughput,
            unit: Unit::Gops,
            point: "cpu/DP/throughput {\"threads\":2}".into(),
            value: 28.0,
            median: 112.0,
            mad: 2.0,
            deviation: -0.75,
            worse: true,
            peers: 3,
        }],
        outlier_rule: OutlierRule::default(),
        matrices: vec![
            matrix("throughput", "Mbit/s", 20000.0),
            matrix("latency", "us", 60.0),
        ],
        notes: vec!["rank 1: a note".into()],
        hpl: None,
        pairs_sampled: None,
    });
    r
}

#[test]
fn chromium_renders_the_node_pair_heatmaps() {
    let Some(bin) = find_chromium() else {
        println!("skipped: chromium not found (apt-get install chromium)");
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let page = work.path().join("fleet.html");
    let report = fleet_report();
    let doc: serde_json::Value = serde_json::from_slice(&report::json::render(&report)).unwrap();
    assert!(
        common::schema_errors(&doc).is_empty(),
        "{:?}",
        common::schema_errors(&doc)
    );
    std::fs::write(&page, report::html::render(&common::shown(&report))).unwrap();
    let args = [
        "--enable-logging=stderr".to_string(),
        "--v=0".to_string(),
        "--dump-dom".to_string(),
    ];
    let (dom, stderr) = chromium(&bin, work.path(), &args, &page);
    assert_eq!(console_lines(&stderr), Vec::<&str>::new(), "{stderr}");
    let heatmaps: Vec<&str> = dom
        .split("<table class=\"heatmap\">")
        .skip(1)
        .map(|t| t.split("</table>").next().unwrap_or(""))
        .collect();
    assert_eq!(heatmaps.len(), 2, "{dom}");
    for h in heatmaps {
        // 3 × 3 coloured cells, from red (hue 0) to green (hue 120).
        assert_eq!(h.matches("style=\"background:hsl(").count(), 9, "{h}");
        assert!(
            h.contains("hsl(0, 70%, 78%)") && h.contains("hsl(120, 70%, 78%)"),
            "{h}"
        );
        assert_eq!(h.matches("<th>").count(), 4 + 3, "{h}");
    }
    assert!(
        dom.contains("node 2 (node2): cpu DP throughput = 28"),
        "{dom}"
    );
    assert_eq!(dom.matches("<summary>System of rank").count(), 3);
}

/// The chart titles of a report, without the machine and time each ends with.
fn chart_titles(r: &Report) -> Vec<String> {
    report::charts::for_report(r)
        .iter()
        .map(|c| c.title.split(" — ").next().unwrap_or_default().to_string())
        .collect()
}

/// The line names of the chart titled `title`.
fn line_names(r: &Report, title: &str) -> Vec<String> {
    let charts = report::charts::for_report(r);
    let chart = charts
        .iter()
        .find(|c| c.title.starts_with(title))
        .unwrap_or_else(|| panic!("no chart '{title}' in {:?}", chart_titles(r)));
    match &chart.plot {
        report::plot::Plot::Lines { series, .. } => series.iter().map(|s| s.name.clone()).collect(),
        other => panic!("{other:?}"),
    }
}

/// The report of `peakbench ARGS` (two repetitions, nothing stored), its JSON written as
/// `NAME.json` in `dir`.
fn swept(dir: &Path, name: &str, args: &[&str]) -> Report {
    let json = dir.join(format!("{name}.json"));
    peakbench()
        .current_dir(dir)
        .args(args)
        .args(["--repeat", "2", "--no-history", "--quiet", "--json"])
        .arg(&json)
        .assert()
        .success();
    Report::from_json(&std::fs::read(&json).unwrap()).unwrap()
}

/// Chromium renders the page of `r` (written as `NAME.html` in `dir`) with every chart drawn
/// and no console error (skipped, saying so, where Chromium is missing).
fn chromium_draws_every_chart(dir: &Path, name: &str, r: &Report) {
    let Some(bin) = find_chromium() else {
        println!("SKIPPED: chromium not found (apt-get install chromium)");
        return;
    };
    let logging = ["--enable-logging=stderr".to_string(), "--v=0".to_string()];
    let mut args = logging.to_vec();
    args.push("--dump-dom".into());
    let page = dir.join(format!("{name}.html"));
    std::fs::write(&page, html_of(r)).unwrap();
    let (dom, stderr) = chromium(&bin, dir, &args, &page);
    assert_eq!(console_lines(&stderr), Vec::<&str>::new(), "{stderr}");
    let drawn = svgs(&dom);
    assert_eq!(drawn.len(), chart_titles(r).len(), "{name}");
    for title in chart_titles(r) {
        assert!(
            drawn
                .iter()
                .any(|svg| svg.contains(&format!("aria-label=\"{title} — "))),
            "{name}: Chromium did not draw '{title}'"
        );
    }
}

/// The charts follow what was swept: a disk run over threads and block sizes at QD1 draws MB/s,
/// IOPS and latency against threads (a line per block size) and against block size, and no
/// chart against queue depth. Chromium renders its page with every chart and no console error.
#[test]
fn charts_follow_what_was_swept() {
    let dir = tempfile::tempdir().unwrap();
    let disk = swept(
        dir.path(),
        "disk",
        &[
            "disk",
            "--engine",
            "null",
            "--workload",
            "RS,RR",
            "--threads",
            "1,2,4",
            "--block-size",
            "4K,1M",
            "--iodepth",
            "1",
            "--size",
            "8M",
            "--runtime",
            "30ms",
            "--ramp",
            "0s",
        ],
    );
    let titles = chart_titles(&disk);
    for what in ["throughput", "IOPS", "mean latency", "p99 latency"] {
        for axis in ["threads", "block size"] {
            let title = format!("Disk RS, RR: {what} vs {axis}");
            assert!(titles.contains(&title), "{title} not in {titles:?}");
        }
    }
    assert_eq!(
        line_names(&disk, "Disk RS, RR: IOPS vs threads"),
        [
            "RS · 4 KiB blocks",
            "RS · 1 MiB blocks",
            "RR · 4 KiB blocks",
            "RR · 1 MiB blocks"
        ]
    );
    assert_eq!(
        line_names(&disk, "Disk RS, RR: throughput vs block size"),
        [
            "RS · 1 thread",
            "RS · 2 threads",
            "RS · 4 threads",
            "RR · 1 thread",
            "RR · 2 threads",
            "RR · 4 threads"
        ]
    );
    // Nothing was swept in queue depth: no chart against it.
    assert!(
        !titles.iter().any(|t| t.contains("queue depth")),
        "{titles:?}"
    );
    chromium_draws_every_chart(dir.path(), "disk", &disk);
}

/// A network LATENCY run over streams draws the round trip (mean and p99) against streams.
/// Chromium renders its page with every chart and no console error.
#[test]
fn charts_follow_a_network_sweep() {
    let dir = tempfile::tempdir().unwrap();
    let net = swept(
        dir.path(),
        "net",
        &[
            "net",
            "--loopback",
            "--workload",
            "LATENCY",
            "-P",
            "1,2,4",
            "--protocol",
            "tcp",
            "--duration",
            "50ms",
            "--omit",
            "0s",
        ],
    );
    assert_eq!(
        line_names(&net, "Network LATENCY: round-trip time vs streams"),
        ["LATENCY"]
    );
    assert_eq!(
        line_names(&net, "Network LATENCY: p99 round-trip time vs streams"),
        ["LATENCY"]
    );
    chromium_draws_every_chart(dir.path(), "net", &net);
}

/// A memory run of RWS and RWR over three block sizes draws throughput against block size,
/// sequential and random as lines of their own, and the time of one operation against
/// threads. Chromium renders its page with every chart and no console error.
#[test]
fn charts_follow_a_memory_sweep() {
    let dir = tempfile::tempdir().unwrap();
    let mem = swept(
        dir.path(),
        "mem",
        &[
            "mem",
            "--workload",
            "RWS,RWR",
            "--block-size",
            "1K,64K,1M",
            "--threads",
            "1,2",
            "--array-size",
            "4M",
            "--duration",
            "10ms",
        ],
    );
    assert_eq!(
        line_names(&mem, "Memory RWS, RWR: throughput vs block size"),
        [
            "RWS · 1 thread",
            "RWS · 2 threads",
            "RWR · 1 thread",
            "RWR · 2 threads"
        ]
    );
    // The time of one block operation against threads, a line per workload and block size.
    assert_eq!(
        line_names(&mem, "Memory RWS, RWR: mean latency vs threads"),
        [
            "RWS · 1 KiB blocks",
            "RWS · 64 KiB blocks",
            "RWS · 1 MiB blocks",
            "RWR · 1 KiB blocks",
            "RWR · 64 KiB blocks",
            "RWR · 1 MiB blocks"
        ]
    );
    chromium_draws_every_chart(dir.path(), "mem", &mem);
}
