//! `peakbench peak`: the theoretical peak of another machine or of any part of one, without
//! measuring; a rated figure that physics contradicts is warned about everywhere.

mod common;

use common::peakbench;
use serde_json::Value;

/// `peak` computes another machine's theoretical peak without measuring: the example.
#[test]
fn peak_for_another_machine() {
    let haswell = |columns: &str| {
        let out = peakbench()
            .args([
                "peak", "--uarch", "haswell", "--cores", "24", "--ghz", "2.3",
            ])
            .env("COLUMNS", columns)
            .assert()
            .success();
        String::from_utf8(out.get_output().stdout.clone()).unwrap()
    };
    let text = haswell("300");
    let dp = text.lines().find(|l| l.contains(" DP ")).unwrap();
    assert!(dp.contains("883.2") && dp.contains("× 2"), "{text}");
    // On a terminal of 100 columns, the table wraps its cells instead of its lines.
    let text = haswell("100");
    assert!(text.lines().all(|l| l.chars().count() <= 100), "{text}");
    assert!(text.contains("883.2"), "{text}");
    let out = peakbench()
        .args([
            "peak",
            "--uarch",
            "6:0xcf",
            "--cores",
            "56",
            "--sockets",
            "2",
        ])
        .args(["--ghz", "2", "--json", "-"])
        .assert()
        .success();
    let doc: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(
        doc["microarchitecture"],
        "Intel Sapphire Rapids/Emerald Rapids"
    );
    let dp = doc["peaks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["workload"] == "DP")
        .unwrap();
    assert_eq!(dp["peak"]["value"], 7168.0);
    for bad in [
        vec!["--uarch", "pentium4", "--cores", "4", "--ghz", "3"],
        vec!["--uarch", "zen4", "--cores", "0", "--ghz", "3"],
        vec!["--uarch", "zen4", "--cores", "4", "--ghz", "-1"],
    ] {
        let out = peakbench().arg("peak").args(&bad).assert().code(2);
        let err = String::from_utf8(out.get_output().stderr.clone()).unwrap();
        assert_eq!(err.lines().count(), 1, "{bad:?}: {err}");
    }
}

/// `peak` computes a memory, disk or network peak without a CPU, into the same JSON document
/// (the CPU's keys absent), and refuses a command line that describes nothing in one line.
#[test]
fn peak_describes_any_part_of_a_machine() {
    let out = peakbench()
        .args([
            "peak",
            "--mem-channels",
            "4",
            "--mem-mts",
            "2133",
            "--json",
            "-",
        ])
        .assert()
        .success();
    let doc: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert!(doc.get("microarchitecture").is_none(), "{doc}");
    assert_eq!(doc["memory"]["described"], "4 channels × 2133 MT/s");
    let bw = &doc["memory"]["peaks"][0];
    assert_eq!(bw["figure"], "bandwidth");
    assert!((bw["peak"]["value"].as_f64().unwrap() - 68.256).abs() < 1e-9);
    assert!(
        doc["memory"]["peaks"][1]["unknown_reason"]
            .as_str()
            .unwrap()
            .contains("--mem-cl")
    );
    for (args, says) in [
        (&["peak"][..], "give a machine to compute"),
        (&["peak", "--mem-channels", "4"], "--mem-mts"),
        (&["peak", "--rpm", "7200"], "--seek-ms"),
        (&["peak", "--link-gbps", "0"], "--link-gbps"),
        (&["peak", "--link-gbps", "1e9"], "out of range"),
        (
            &[
                "peak",
                "--mem-channels",
                "4",
                "--mem-mts",
                "2133",
                "--mem-cl",
                "x",
            ],
            "--mem-cl",
        ),
    ] {
        let out = peakbench().args(args).assert().code(2);
        let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
}

/// A rated figure that physics contradicts (S1's "Total 5782" IOPS for a 7200 rpm disk with
/// 8.5 ms seeks: 1 / (seek + ½ rotation) = 78.95 IOPS) is a warning, never a refusal: in
/// `peak --json` and its table, and in a measured point's record, table and JSON; the point's
/// IOPS peak counts its own I/Os in flight (QD 4: 4 / 12.67 ms).
#[test]
fn a_contradicted_rated_figure_is_warned_everywhere() {
    let rated = [
        "--rpm",
        "7200",
        "--seek-ms",
        "8.5",
        "--disk-peak-read-iops",
        "5782.4991",
    ];
    let out = peakbench()
        .arg("peak")
        .args(rated)
        .args(["--iodepth", "4", "--json", "-"])
        .assert()
        .success();
    let doc: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let iops = &doc["disk"]["peaks"][2];
    assert_eq!(iops["figure"], "random read IOPS (4 KiB, QD 4)");
    assert!((iops["peak"]["value"].as_f64().unwrap() - 4e3 / (8.5 + 30e3 / 7200.0)).abs() < 1e-9);
    assert!(
        iops["warnings"][0].as_str().unwrap().contains("78.95 IOPS"),
        "{doc}"
    );
    let out = peakbench()
        .env("COLUMNS", "100")
        .arg("peak")
        .args(rated)
        .assert()
        .success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert!(
        text.contains("warning: random read IOPS (4 KiB, QD 1)"),
        "{text}"
    );
    assert!(text.lines().all(|l| l.chars().count() <= 100), "{text}");
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run.json");
    let out = peakbench()
        .current_dir(dir.path())
        .env("COLUMNS", "100")
        .args([
            "disk",
            "--engine",
            "null",
            "--workload",
            "RR",
            "--iodepth",
            "4",
        ])
        .args([
            "--block-size",
            "4K",
            "--size",
            "4M",
            "--runtime",
            "20ms",
            "--ramp",
            "0s",
        ])
        .args(["--repeat", "1", "--no-history", "--json"])
        .arg(&run)
        .args(rated)
        .assert()
        .success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert!(text.contains("78.95 IOPS"), "{text}");
    let doc: Value = serde_json::from_slice(&std::fs::read(&run).unwrap()).unwrap();
    let iops = doc["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["metric"] == "iops")
        .unwrap();
    assert_eq!(iops["peak"]["inputs"]["n"]["value"], 4.0);
    let warnings = iops["warnings"].as_array().unwrap();
    assert!(
        warnings
            .iter()
            .any(|w| w.as_str().unwrap().contains("= 78.95 IOPS")),
        "{warnings:?}"
    );
}
