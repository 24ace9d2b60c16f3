//! The HTML report and the charts: a `--json` document reads back into the same report; the
//! page is self-contained and survives odd reports; headless Chromium renders it with every
//! chart drawn and no console error; `peakbench report` and `--html` write it, and PNGs.

mod common;

use peakbench::report;
use peakbench::results::{Metric, ReadError, Report, Subsystem, Unit};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Charts in [`common::chart_report`]: CPU DP, SP, efficiency, measured beside likwid-bench and
/// the peak (grouped bars); memory COPY, RWS, staircase; disk throughput, IOPS, mean and p99
/// latency against queue depth, latency percentiles, throughput per interval; network goodput,
/// latency percentiles.
const CHARTS: usize = 15;

fn html_of(r: &Report) -> String {
    String::from_utf8(report::html::render(&common::shown(r))).unwrap()
}

#[test]
fn json_reads_back_into_the_same_report() {
    let mut odd = common::fixed_report();
    odd.results[0].summary.mean = f64::NAN;
    odd.results[0].samples.push(f64::INFINITY);
    odd.results[1].efficiency = Some(f64::NAN);
    for r in [common::fixed_report(), common::chart_report(), odd] {
        let first = report::json::render(&r);
        let back = Report::from_json(&first).unwrap();
        assert_eq!(
            String::from_utf8(report::json::render(&back)).unwrap(),
            String::from_utf8(first).unwrap()
        );
    }
}

#[test]
fn reading_refuses_what_is_not_a_report() {
    assert!(matches!(
        Report::from_json(b"not json"),
        Err(ReadError::Json(_))
    ));
    assert!(matches!(
        Report::from_json(b"{}"),
        Err(ReadError::NoVersion)
    ));
    let good: Value =
        serde_json::from_slice(&report::json::render(&common::fixed_report())).unwrap();
    let mut newer = good.clone();
    newer["schema_version"] = json!(99);
    let e = Report::from_json(&serde_json::to_vec(&newer).unwrap()).unwrap_err();
    assert!(e.to_string().contains("schema_version 99"), "{e}");
    let mut broken = good.clone();
    broken.as_object_mut().unwrap().remove("system");
    assert!(matches!(
        Report::from_json(&serde_json::to_vec(&broken).unwrap()),
        Err(ReadError::Shape(_))
    ));
    // A subsystem, metric or unit outside the schema's lists is refused, naming it.
    for (field, value) in [
        ("subsystem", "gpu"),
        ("metric", "speed"),
        ("unit", "furlong/s"),
    ] {
        let mut odd = good.clone();
        odd["results"][0][field] = json!(value);
        let e = Report::from_json(&serde_json::to_vec(&odd).unwrap()).unwrap_err();
        assert!(matches!(e, ReadError::Shape(_)), "{field}: {e}");
        assert!(e.to_string().contains(value), "{field}: {e}");
    }
    // Version 1 documents (before the network subsystem) are a subset: they read, in this
    // version's form (figures in base units).
    let mut v1 = good;
    v1["schema_version"] = json!(1);
    assert_eq!(
        Report::from_json(&serde_json::to_vec(&v1).unwrap())
            .unwrap()
            .schema_version,
        peakbench::results::SCHEMA_VERSION
    );
}

/// The `<svg>…</svg>` elements of a page.
fn svgs(html: &str) -> Vec<&str> {
    html.split("<svg")
        .skip(1)
        .map(|s| s.split("</svg>").next().unwrap_or(""))
        .collect()
}

#[test]
fn the_page_is_self_contained_and_complete() {
    let html = html_of(&common::chart_report());
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert_eq!(svgs(&html).len(), CHARTS);
    for svg in svgs(&html) {
        assert!(
            svg.contains("<circle") || svg.matches("<rect").count() > 4,
            "a chart without data: {svg}"
        );
    }
    // Every measured point of a line chart has its hover text: the figure and its spread.
    let throughput = svgs(&html)[0];
    assert!(throughput.contains("<title>") && throughput.contains("repetitions)"));
    // The disk section says what the points ran on, the network section its server.
    assert!(
        html.contains("class=\"meta setup\">engine "),
        "disk setup line"
    );
    // A person reads µs, never us.
    assert!(
        !html.contains("(us)") && !html.contains(" us "),
        "us in the page"
    );
    // Nothing to run and nothing to fetch: the only URL is the SVG namespace.
    for banned in [
        "<script", "<link", "<img", "<iframe", "src=", "url(", "@import",
    ] {
        assert!(!html.contains(banned), "{banned} in the page");
    }
    assert_eq!(
        html.matches("http").count(),
        html.matches("http://www.w3.org/2000/svg").count()
    );
    for expected in [
        "peakbench run --profile quick",
        "2026-11-21T12:00:00Z",
        "AMD Zen 4",
        "Microarchitecture",
        "L2 unified cache",
        "peakbench measured (GOPS)",
        "likwid-bench measured (GOPS)",
        "likwid-bench",
        "cores × clock × fma_per_cycle",
        "clock = 3.60 GHz (measured)",
        "no SMBIOS table; give --mem-peak-gbs",
        "id=\"chart-disk-rr-percentiles\"",
        "id=\"chart-disk-rr-intervals\"",
        "throughput per interval",
        "id=\"chart-net-latency-percentiles\"",
        "ideal linear scaling",
        "likwid-bench: DP",
        "id=\"chart-mem-latency-staircase\"",
        "id=\"chart-cpu-efficiency\"",
        "id=\"chart-cpu-throughput-measured-bars\"",
        "likwid-bench measured",
        "theoretical peak",
        "L1d 48 KiB",
        "Network THROUGHPUT: goodput vs streams",
    ] {
        assert!(html.contains(expected), "{expected} missing");
    }
}

#[test]
fn odd_reports_give_a_page_not_a_panic() {
    let mut empty = common::fixed_report();
    empty.results.clear();
    let html = html_of(&empty);
    assert!(html.contains("no results") && svgs(&html).is_empty());
    assert!(report::charts::pngs(&common::shown(&empty)).is_empty());

    let mut odd = common::chart_report();
    for (i, rec) in odd.results.iter_mut().enumerate() {
        match i % 5 {
            0 => {
                rec.summary.mean = f64::NAN;
                rec.efficiency = Some(f64::INFINITY);
            }
            1 => {
                // The fewest parameters a record of its kind can have.
                rec.params = peakbench::results::params::Params::with_defaults(
                    rec.workload,
                    serde_json::json!({}),
                )
                .unwrap();
                rec.peak = None;
                rec.peak_unknown_reason = None;
            }
            2 => rec.summary.mean = -1e308,
            3 => {
                rec.summary.mean = 0.0;
                rec.warnings
                    .push("<script>alert('x')</script> & \"q\"".into());
                rec.subsystem = Subsystem::Net;
            }
            _ => rec.summary.mean = 1e308,
        }
    }
    odd.system.caches.clear();
    odd.command_line.push("it's <b>".into());
    let html = html_of(&odd);
    assert!(!html.contains("<script") && !html.contains("<b>"));
    assert!(html.contains("&lt;script&gt;"));
    for (name, png) in report::charts::pngs(&common::shown(&odd)) {
        png.unwrap_or_else(|e| panic!("{name}: {e}"));
    }
}

#[test]
fn every_chart_exports_as_png() {
    let files = report::charts::pngs(&common::shown(&common::chart_report()));
    let names: Vec<&str> = files.iter().map(|f| f.0.as_str()).collect();
    assert_eq!(names.len(), CHARTS, "{names:?}");
    assert_eq!(names[0], "01-cpu-dp-throughput-vs-threads.png");
    assert!(names.contains(&"07-mem-latency-staircase.png"), "{names:?}");
    for (_, png) in files {
        let png = png.unwrap();
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    }
}

fn peakbench() -> assert_cmd::Command {
    let mut c = assert_cmd::Command::new(env!("CARGO_BIN_EXE_peakbench"));
    c.env(common::MOCK_CLOCK.0, common::MOCK_CLOCK.1);
    c.env("PEAKBENCH_DB", common::test_db());
    c
}

#[test]
fn report_command_writes_the_page_and_the_pngs() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("run.json");
    std::fs::write(&input, report::json::render(&common::chart_report())).unwrap();
    let (html, png) = (dir.path().join("run.html"), dir.path().join("slides"));
    peakbench()
        .arg("report")
        .arg(&input)
        .arg("--html")
        .arg(&html)
        .arg("--png")
        .arg(&png)
        .assert()
        .success()
        .stdout("")
        // It says what it wrote, one line a file or folder.
        .stderr(format!(
            "wrote {CHARTS} charts into {}\nwrote {}\n",
            png.display(),
            html.display()
        ));
    let page = std::fs::read_to_string(&html).unwrap();
    let expected = html_of(&Report::from_json(&std::fs::read(&input).unwrap()).unwrap());
    let differs = page.lines().zip(expected.lines()).find(|(a, b)| a != b);
    assert_eq!(
        differs, None,
        "the page from the JSON differs from the report's"
    );
    assert_eq!(page.len(), expected.len());
    assert_eq!(std::fs::read_dir(&png).unwrap().count(), CHARTS);
}

#[test]
fn report_command_bad_input_is_one_line_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.html");
    let out = out.to_str().unwrap();
    let text = dir.path().join("notes.txt");
    std::fs::write(&text, "hello").unwrap();
    let mut doc: Value =
        serde_json::from_slice(&report::json::render(&common::fixed_report())).unwrap();
    doc["schema_version"] = json!(7);
    let newer = dir.path().join("newer.json");
    std::fs::write(&newer, serde_json::to_vec(&doc).unwrap()).unwrap();
    let missing = dir.path().join("missing.json");
    for (args, expected) in [
        (
            vec!["report", missing.to_str().unwrap(), "--html", out],
            "cannot read",
        ),
        (
            vec!["report", text.to_str().unwrap(), "--html", out],
            "not a JSON document",
        ),
        (
            vec!["report", newer.to_str().unwrap(), "--html", out],
            "schema_version 7",
        ),
        (
            vec!["report", newer.to_str().unwrap()],
            "is not one this peakbench reads",
        ),
        (
            vec![
                "report",
                text.to_str().unwrap(),
                "--png",
                text.to_str().unwrap(),
            ],
            "not a directory",
        ),
    ] {
        common::one_line_exit_2(&args, expected);
    }
    assert!(!Path::new(out).exists());
}

#[test]
fn benchmark_commands_write_the_page_after_every_point() {
    let dir = tempfile::tempdir().unwrap();
    let (html, json) = (dir.path().join("mem.html"), dir.path().join("mem.json"));
    peakbench()
        .args(["mem", "--workload", "COPY,LATENCY", "--threads", "1"])
        .args(["--repeat", "1", "--warmup", "0", "--duration", "2ms"])
        .args(["--array-size", "1Mi", "--latency-max", "32Ki"])
        .args(["--huge-pages", "off", "--quiet", "--html"])
        .arg(&html)
        .arg("--json")
        .arg(&json)
        .assert()
        .success();
    let page = std::fs::read_to_string(&html).unwrap();
    // One thread: COPY is one point, a table row and no chart; the staircase is a line.
    assert!(!page.contains("id=\"chart-mem-copy-throughput\""));
    assert!(page.contains("<td>COPY</td>"), "COPY's row");
    assert!(page.contains("id=\"chart-mem-latency-staircase\""));
    assert!(page.contains("peakbench mem --workload COPY,LATENCY"));
    // The same page again from the run's JSON document.
    let again = dir.path().join("again.html");
    peakbench()
        .arg("report")
        .arg(&json)
        .arg("--html")
        .arg(&again)
        .assert()
        .success();
    assert!(std::fs::read_to_string(&again).unwrap() == page);
}

/// Chromium on PATH, as Debian names it or as others do.
fn find_chromium() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    ["chromium", "chromium-browser"]
        .into_iter()
        .find_map(|name| {
            std::env::split_paths(&path)
                .map(|d| d.join(name))
                .find(|p| p.is_file())
        })
}

/// Runs headless Chromium on `page` with `args`, at most 90 s; returns (stdout, stderr).
fn chromium(bin: &Path, work: &Path, args: &[String], page: &Path) -> (String, String) {
    let profile = tempfile::tempdir_in(work).unwrap();
    let (out, err) = (work.join("stdout"), work.join("stderr"));
    let mut child = Command::new(bin)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-extensions",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
            "--force-device-scale-factor=1",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(args)
        .arg(format!("file://{}", page.display()))
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap())
        .spawn()
        .expect("chromium starts");
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        match child.try_wait().unwrap() {
            Some(_) => break,
            None if Instant::now() > deadline => {
                let _ = child.kill();
                let _ = child.wait();
                panic!("chromium did not finish within 90 s: {args:?}");
            }
            None => std::thread::sleep(Duration::from_millis(50)),
        }
    }
    (
        std::fs::read_to_string(out).unwrap_or_default(),
        std::fs::read_to_string(err).unwrap_or_default(),
    )
}

/// Lines of Chromium's log that are messages of the page's console.
fn console_lines(stderr: &str) -> Vec<&str> {
    stderr.lines().filter(|l| l.contains("CONSOLE")).collect()
}

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
            workload: "DP".into(),
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

/// `peakbench report A B`: the runs side by side — a table of every common point with each
/// run's figure, B ÷ A and the verdict (B is A 20 % slower on every rate: worse), the line
/// charts with both runs' series; the same as Markdown and CSV; rendered in Chromium without
/// a console error. `history export` writes a stored run's CSV.
#[test]
fn report_compares_runs_side_by_side() {
    let dir = tempfile::tempdir().unwrap();
    let base = common::chart_report();
    let mut slower = base.clone();
    for r in &mut slower.results {
        let f = if r.unit == Unit::Seconds { 1.25 } else { 0.8 };
        for v in r.samples.iter_mut() {
            *v *= f;
        }
        let s = &mut r.summary;
        for v in [
            &mut s.mean,
            &mut s.median,
            &mut s.min,
            &mut s.max,
            &mut s.stddev,
        ] {
            *v *= f;
        }
    }
    // The first point has a reference in both runs: the tool 20 % lower in B, over 3 runs.
    let mut base = base;
    let reference = |runs: Vec<f64>| {
        Some(peakbench::results::Reference::measured(
            "likwid-bench",
            "5.2.2",
            runs,
            |_| None,
            (Vec::new(), String::new()),
        ))
    };
    base.results[0].reference = reference(vec![90.0, 91.0, 89.0]);
    slower.results[0].reference = reference(vec![72.0, 73.0, 71.0]);
    let (a, b) = (dir.path().join("a.json"), dir.path().join("b.json"));
    std::fs::write(&a, report::json::render(&base)).unwrap();
    std::fs::write(&b, report::json::render(&slower)).unwrap();
    let (html, md, csv) = (
        dir.path().join("cmp.html"),
        dir.path().join("cmp.md"),
        dir.path().join("cmp.csv"),
    );
    peakbench()
        .arg("report")
        .args([&a, &b])
        .arg("--html")
        .arg(&html)
        .arg("--markdown")
        .arg(&md)
        .arg("--csv")
        .arg(&csv)
        .assert()
        .success();
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("peakbench comparison") && page.contains("B / A"));
    assert!(page.contains("class=\"worse\""), "a 20 % drop is worse");
    assert!(
        page.contains("CPU DP · 2 threads"),
        "points named for a person"
    );
    let charts = svgs(&page);
    assert!(!charts.is_empty());
    assert!(
        charts[0].contains("A: ") && charts[0].contains("B: "),
        "both runs' series"
    );
    // The reference's change, tested on its runs, in its own column (after the verdicts).
    assert!(
        page.contains("Ref B vs A %") && page.contains("-20.0*"),
        "{page}"
    );
    let md = std::fs::read_to_string(&md).unwrap();
    assert!(md.contains("| B / A |") && md.contains("0.800"), "{md}");
    assert!(
        md.contains("| Ref B vs A % |") && md.contains("| -20.0* |"),
        "{md}"
    );
    let csv = std::fs::read_to_string(&csv).unwrap();
    assert!(csv.starts_with(
        "subsystem,point,metric,unit,mean_A,mean_B,ratio_B,p_adjusted_B,verdict_B,ref_change_B,ref_p_adjusted_B"
    ));
    // One run's formats are refused for a comparison, in one line.
    let out = peakbench()
        .arg("report")
        .args([&a, &b])
        .arg("--png")
        .arg(dir.path().join("png"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(String::from_utf8_lossy(&out.stderr).lines().count(), 1);

    if let Some(bin) = find_chromium() {
        let work = tempfile::tempdir().unwrap();
        let args = [
            "--enable-logging=stderr".to_string(),
            "--v=0".to_string(),
            "--dump-dom".into(),
        ];
        let (dom, stderr) = chromium(&bin, work.path(), &args, &html);
        assert_eq!(console_lines(&stderr), Vec::<&str>::new(), "{stderr}");
        assert!(dom.contains("Every common point"));
    } else {
        println!("SKIPPED: chromium not found (apt-get install chromium)");
    }
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

/// The charts follow what was swept: a disk run over threads and block sizes at QD1 draws MB/s,
/// IOPS and latency against threads (a line per block size) and against block size; a
/// network LATENCY run over streams draws the round trip against streams; a memory run of
/// RWS and RWR over three block sizes draws throughput against block size, sequential and
/// random as lines of their own, and the time of one operation against threads. Chromium renders each page with every chart and no console error.
#[test]
fn charts_follow_what_was_swept() {
    let dir = tempfile::tempdir().unwrap();
    let run = |name: &str, args: &[&str]| -> Report {
        let json = dir.path().join(format!("{name}.json"));
        peakbench()
            .current_dir(dir.path())
            .args(args)
            .args(["--repeat", "2", "--no-history", "--quiet", "--json"])
            .arg(&json)
            .assert()
            .success();
        Report::from_json(&std::fs::read(&json).unwrap()).unwrap()
    };
    let disk = run(
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

    let net = run(
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

    let mem = run(
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

    let Some(bin) = find_chromium() else {
        println!("SKIPPED: chromium not found (apt-get install chromium)");
        return;
    };
    let logging = ["--enable-logging=stderr".to_string(), "--v=0".to_string()];
    let mut args = logging.to_vec();
    args.push("--dump-dom".into());
    for (name, r) in [("disk", &disk), ("net", &net), ("mem", &mem)] {
        let page = dir.path().join(format!("{name}.html"));
        std::fs::write(&page, html_of(r)).unwrap();
        let (dom, stderr) = chromium(&bin, dir.path(), &args, &page);
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
}

/// A reference's runs are on the page on demand, folded, once per run however many records
/// it gave a figure to; what the tool printed is escaped, even from a hostile document.
#[test]
fn reference_runs_are_shown_folded_and_escaped() {
    let mut report = common::fixed_report();
    let hostile = "$ likwid-bench -t peakflops\n<script>alert(1)</script>\u{1b}[2J done\n";
    let rec = report
        .results
        .iter_mut()
        .find(|r| r.reference.is_some())
        .expect("the fixed report has a reference");
    let reference = rec.reference.as_mut().unwrap();
    reference.samples = vec![1.0, 2.0, 3.0];
    reference.output = hostile.into();
    let page = String::from_utf8(peakbench::report::html::render(&report)).unwrap();
    assert_eq!(
        page.matches("<details class=\"evidence\">").count(),
        1,
        "{page}"
    );
    assert!(page.contains("likwid-bench 5.2.2: 3 runs"), "{page}");
    assert!(
        page.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
        "{page}"
    );
    assert!(!page.contains("<script>"), "{page}");
    assert!(
        !page.contains('\u{1b}'),
        "an escape sequence reached the page"
    );
}

/// tests/fixtures/history/assignment.json: a recorded `run --profile assignment --reference`.
fn assignment_run() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/history/assignment.json")
}

/// Where each of `marks` first is in `text`, checked to be in that order.
fn in_order(text: &str, marks: &[impl AsRef<str>]) {
    let at: Vec<usize> = marks
        .iter()
        .map(|m| {
            let m = m.as_ref();
            text.find(m).unwrap_or_else(|| panic!("{m} missing"))
        })
        .collect();
    for (w, m) in at.windows(2).zip(marks.windows(2)) {
        assert!(
            w[0] < w[1],
            "{} comes after {}",
            m[0].as_ref(),
            m[1].as_ref()
        );
    }
}

/// `report --as assignment` of a recorded assignment run: the hand-in in the reports' order,
/// in HTML (rendered by headless Chromium with every chart drawn and no console error) and in
/// Markdown.
#[test]
fn report_as_assignment_is_the_hand_in() {
    let dir = tempfile::tempdir().unwrap();
    let (html, md) = (
        dir.path().join("hand-in.html"),
        dir.path().join("hand-in.md"),
    );
    peakbench()
        .arg("report")
        .arg(assignment_run())
        .args(["--as", "assignment", "--html"])
        .arg(&html)
        .arg("--markdown")
        .arg(&md)
        .assert()
        .success()
        .stdout("");
    let page = std::fs::read_to_string(&html).unwrap();
    let mut order = vec!["id=\"machine\"".to_string(), "id=\"peaks\"".to_string()];
    for s in ["cpu", "mem", "disk", "net"] {
        for part in [
            "",
            "-tables",
            "-pivots",
            "-charts",
            "-references",
            "-analysis",
        ] {
            order.push(format!("id=\"{s}{part}\""));
        }
    }
    order.push("id=\"notes\"".to_string());
    in_order(&page, &order);
    for expected in [
        // The machine, the peaks' formulas, the T-A columns with both efficiencies.
        "Microarchitecture",
        "cores × clock × fma_per_cycle",
        "fio, dd measured (MB/s)",
        "fio, dd efficiency %",
        "peakbench ÷ fio, dd %",
        "std dev (MB/s)",
        // S3's threads × block size, and the grouped bars.
        "threads \\ block size",
        "id=\"chart-cpu-throughput-measured-bars-part-1\"",
        "id=\"chart-disk-iops-measured-bars-part-1\"",
        // The reference tools' command lines and output.
        "/usr/bin/fio --name=peakbench-reference",
        "Its output",
    ] {
        assert!(page.contains(expected), "{expected} missing");
    }
    for banned in [
        "<script", "<link", "<img", "<iframe", "src=", "url(", "@import",
    ] {
        assert!(!page.contains(banned), "{banned} in the page");
    }
    // A network point's bars: its protocol named, its receiver's goodput only.
    assert!(page.contains("THROUGHPUT UDP ×8 32 KiB receiver\n</text>"));
    assert!(
        !page.contains(" sender\n</text>"),
        "a sender's row in a chart"
    );
    let figures = page.matches("<figure class=\"chart\"").count();
    assert!(figures > 50, "{figures} charts");

    let text = std::fs::read_to_string(&md).unwrap();
    in_order(
        &text,
        &[
            "## 1. The machine",
            "## 2. Theoretical peaks",
            "## 3. CPU",
            "### 3.1 Results",
            "#### Table 3.1 — CPU throughput (GOPS)",
            "### 3.2 Pivot tables",
            "### 3.3 Charts",
            "**Figure 3.1: CPU",
            "### 3.4 Reference tools",
            "### 3.5 Analysis",
            "## 4. Memory",
            "threads \\ block size",
            "## 5. Disk",
            "```sh\n/usr/bin/fio --name",
            "## 6. Network",
            "## 7. Notes",
        ],
    );
    assert!(text.contains("| peakbench ÷ fio, dd % |"), "T-A header");
    assert!(!text.contains("<figure") && !text.contains("<svg"));

    let Some(bin) = find_chromium() else {
        println!(
            "SKIPPED: chromium not found (apt-get install chromium): the page was not rendered"
        );
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let args = [
        "--enable-logging=stderr".to_string(),
        "--v=0".to_string(),
        "--dump-dom".to_string(),
    ];
    let (dom, stderr) = chromium(&bin, work.path(), &args, &html);
    assert_eq!(console_lines(&stderr), Vec::<&str>::new(), "{stderr}");
    let drawn = svgs(&dom);
    assert_eq!(drawn.len(), figures, "every chart in the rendered page");
    assert!(drawn.iter().all(|svg| svg.contains("<text")));
}

#[test]
fn report_as_assignment_refuses_what_it_does_not_write() {
    let run = assignment_run();
    let run = run.to_str().unwrap();
    for (args, expected) in [
        (
            vec!["report", run, "--as", "assignment"],
            "--html FILE or --markdown FILE",
        ),
        (
            vec!["report", run, run, "--as", "assignment", "--html", "-"],
            "give one RUN",
        ),
        (
            vec!["report", run, "--as", "assignment", "--csv", "-"],
            "drop --csv",
        ),
        (
            vec![
                "report",
                run,
                "--as",
                "assignment",
                "--html",
                "-",
                "--pivot",
                "rows=threads,cols=block_size",
            ],
            "drop --pivot",
        ),
        (
            vec!["report", run, "--as", "handout", "--html", "-"],
            "handout",
        ),
    ] {
        common::one_line_exit_2(&args, expected);
    }
}
