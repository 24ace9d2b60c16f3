//! The commands that write the HTML report: `peakbench report` writes the page and PNGs,
//! compares runs side by side and writes an assignment's hand-in; `--html` on a benchmark
//! command writes the page after every point; bad input is one line.

mod common;

use common::html::{CHARTS, chromium, console_lines, find_chromium, html_of, svgs};
use common::peakbench;
use peakbench::report;
use peakbench::results::{Report, Unit};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

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
        page.contains("point(s) worse beyond the threshold") && !page.contains("another machine"),
        "the same machine's drop is a regression"
    );
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
