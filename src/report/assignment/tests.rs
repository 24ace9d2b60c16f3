//! The hand-in's unit tests: its pivots are data the pivot code reads, its sections follow the
//! reports' order with a T-A table per metric, and what the run holds is escaped in both formats.

use super::*;
use crate::results::Reference;

/// The recorded quick run (CPU, memory, disk and network points), its DP point given a
/// reference tool's figure and output, in the units a report shows.
fn quick(output: &str) -> Report {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/history/quick.json"
    );
    let mut run = Report::from_json(&std::fs::read(path).unwrap()).unwrap();
    let dp = run
        .results
        .iter_mut()
        .find(|r| r.workload == crate::workload::cpu::CpuWorkload::Dp)
        .unwrap();
    let half = dp.summary.mean / 2.0;
    dp.reference = Some(Reference::measured(
        "likwid-bench",
        "5.4",
        vec![half, half],
        |_| Some(0.25),
        (
            vec!["likwid-bench -t peakflops_avx512_fma -W N:1GB:2".into()],
            output.into(),
        ),
    ));
    run.displayed(&Default::default())
}

#[test]
fn every_pivot_is_one_the_pivot_option_reads() {
    for spec in PIVOTS {
        let form = format!("rows={},cols={}", spec.rows, spec.cols);
        assert!(form.parse::<Pivot>().is_ok(), "{form}");
        assert!(!spec.mirrors.is_empty());
    }
    for s in Subsystem::ALL {
        assert!(PIVOTS.iter().any(|p| p.subsystem == s), "{s}: no pivot");
    }
}

#[test]
fn the_hand_in_follows_the_reports_order() {
    let h = HandIn::of(&quick("$ likwid-bench\n1.0 GFLOP/s"));
    let order: Vec<Subsystem> = h.sections.iter().map(|s| s.subsystem).collect();
    assert_eq!(
        order,
        [
            Subsystem::Cpu,
            Subsystem::Mem,
            Subsystem::Disk,
            Subsystem::Net
        ]
    );
    // One T-A table per metric, with both efficiencies, the share of the reference and the
    // standard deviation, each figure's column with its unit.
    let disk = &h.sections[2];
    let titles: Vec<&str> = disk.tables.iter().map(|t| t.title.as_str()).collect();
    assert_eq!(
        titles,
        [
            "Disk throughput (MB/s)",
            "Disk IOPS (IOPS)",
            "Disk latency (ms)"
        ]
    );
    let cpu = &h.sections[0].tables[0];
    assert_eq!(
        cpu.headers,
        [
            "Workload",
            "Concurrency",
            "ISA",
            "peakbench measured (GOPS)",
            "likwid-bench measured (GOPS)",
            "theoretical (GOPS)",
            "peakbench efficiency %",
            "likwid-bench efficiency %",
            "peakbench ÷ likwid-bench %",
            "std dev (GOPS)"
        ]
    );
    let dp = cpu.rows.iter().find(|r| r[0] == "DP").unwrap();
    assert_eq!(dp[7], "25.0");
    assert_eq!(dp[8], "200.0");
    let sp = cpu.rows.iter().find(|r| r[0] == "SP").unwrap();
    assert_eq!((sp[4].as_str(), sp[8].as_str()), ("—", "—"));
    // Threads × block size per disk workload, as S3 drew them; a pivot the pivot code cannot
    // draw is left out with the reason.
    let by_block = &disk.pivots[0];
    assert_eq!(
        (by_block.spec.rows, by_block.spec.cols),
        ("threads", "block_size")
    );
    assert!(by_block.left_out.is_none(), "{:?}", by_block.left_out);
    assert!(
        by_block
            .tables
            .iter()
            .any(|t| t.title.starts_with("Disk RR throughput")),
        "{:?}",
        by_block.tables
    );
    for p in h.sections.iter().flat_map(|s| &s.pivots) {
        match &p.left_out {
            Some(why) => assert!(why.contains(p.spec.cols), "{why}"),
            None => assert!(!p.tables.is_empty(), "{:?}", p.spec),
        }
    }
    // The theoretical values: each peak once with its formula, and the unknown ones with why.
    assert!(
        h.peaks
            .rows
            .iter()
            .any(|r| r[0] == "CPU" && r[4].contains('×'))
    );
    assert!(h.peaks.rows.iter().any(|r| r[3] == "unknown"));
    // The charts of each section are the document's, each once.
    let mut charts: Vec<usize> = h.sections.iter().flat_map(|s| s.charts.clone()).collect();
    charts.sort();
    assert_eq!(charts, (0..h.doc.charts.len()).collect::<Vec<_>>());
}

#[test]
fn what_the_run_holds_is_escaped() {
    let output = "$ likwid-bench\n</code></pre><script>alert(1)</script>\n```\nrm -rf ~\n";
    let mut run = quick(output);
    run.results[1].peak.as_mut().expect("a peak").formula = "<b>SP</b> & co".into();
    let h = HandIn::of(&run);
    let page = String::from_utf8(html::render_hand_in(&h)).unwrap();
    assert!(
        !page.contains("<script") && !page.contains("<b>"),
        "raw markup"
    );
    assert!(page.contains("&lt;/code&gt;&lt;/pre&gt;&lt;script&gt;alert(1)"));
    assert!(page.contains("&lt;b&gt;SP&lt;/b&gt; &amp; co"));
    assert!(page.contains("likwid-bench -t peakflops_avx512_fma -W N:1GB:2"));
    let md = String::from_utf8(markdown::render_hand_in(
        &h,
        Some(std::path::Path::new("charts")),
    ))
    .unwrap();
    // The output in a block that its own fence cannot close; names outside it as entities.
    assert!(md.contains("````text\n$ likwid-bench\n"), "{md}");
    assert!(md.contains("&lt;b&gt;SP&lt;/b&gt; &amp; co"));
    assert!(!md.contains("<b>"));
    assert!(md.contains("](<charts/01-"), "the charts' PNG files linked");
    for heading in [
        "## 1. The machine",
        "## 2. Theoretical peaks",
        "## 3. CPU",
        "### 3.1 Results",
        "### 3.2 Pivot tables",
        "### 3.3 Charts",
        "### 3.4 Reference tools",
        "### 3.5 Analysis",
        "## 6. Network",
        "## 7. Notes",
    ] {
        assert!(md.contains(heading), "{heading} missing");
    }
}
