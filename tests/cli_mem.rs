//! `peakbench mem` from the command line: NULL and tiny points in the schema, a user's peak
//! giving an efficiency, and bad input refused in one line.

mod common;

use common::peakbench;
use serde_json::Value;

#[test]
fn mem_null_and_tiny_points_follow_the_schema() {
    let out = peakbench()
        .args([
            "mem",
            "--workload",
            "NULL,COPY,RWR,LATENCY",
            "--threads",
            "1,2",
            "--repeat",
            "2",
        ])
        .args([
            "--warmup",
            "0",
            "--duration",
            "2ms",
            "--array-size",
            "1Mi",
            "--block-size",
            "1KB,64Ki",
        ])
        .args([
            "--latency-max",
            "32Ki",
            "--huge-pages",
            "off",
            "--quiet",
            "--json",
            "-",
        ])
        .assert()
        .success();
    let doc: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(common::schema_errors(&doc), Vec::<String>::new());
    let results = doc["results"].as_array().unwrap();
    let of = |w: &str| {
        results
            .iter()
            .filter(|r| r["workload"] == w)
            .collect::<Vec<_>>()
    };
    assert_eq!(of("NULL").len(), 2);
    assert_eq!(of("COPY").len(), 2);
    // 2 block sizes × 2 thread counts, each its throughput and the time of one operation.
    assert_eq!(of("RWR").len(), 8);
    let (rates, ops): (Vec<&Value>, Vec<&Value>) = of("RWR")
        .into_iter()
        .partition(|r| r["metric"] == "throughput");
    assert_eq!((rates.len(), ops.len()), (4, 4));
    for r in &ops {
        assert!(r["metric"] == "latency" && r["unit"] == "s", "{r}");
        assert!(r["mean"].as_f64().unwrap() > 0.0, "{r}");
    }
    for r in of("COPY").iter().chain(rates.iter()) {
        assert_eq!(r["unit"], "B/s");
        assert_eq!(r["samples"].as_array().unwrap().len(), 2);
        // No SMBIOS here or there: unknown with the reason, unless the machine has one.
        assert!(r["peak"].is_object() || r["peak_unknown_reason"].is_string());
    }
    assert_eq!(of("RWR")[0]["params"]["block_size_bytes"], 1000);
    assert_eq!(of("RWR")[0]["params"]["order"], "random");
    // --threads 1,2 given: the staircase at each count, the two-thread one with both chains.
    for threads in [1, 2] {
        let chase: Vec<&Value> = of("LATENCY")
            .into_iter()
            .filter(|r| r["params"]["probe"] == "chase" && r["params"]["threads"] == threads)
            .collect();
        assert_eq!(chase.len(), 7, "4, 5.6, 8, 11.3, 16, 22.6 and 32 KiB");
        for r in chase {
            let each = r["params"]["thread_latency_ns"].as_array().unwrap();
            assert_eq!(each.len(), threads, "{r}");
        }
    }
}

#[test]
fn mem_user_peak_gives_efficiency() {
    let out = peakbench()
        .args([
            "mem",
            "--workload",
            "TRIAD",
            "--threads",
            "1",
            "--repeat",
            "1",
            "--warmup",
            "0",
        ])
        .args([
            "--duration",
            "2ms",
            "--array-size",
            "1Mi",
            "--mem-channels",
            "2",
            "--mem-mts",
            "4800",
        ])
        .args(["--quiet", "--json", "-"])
        .assert()
        .success();
    let doc: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let r = &doc["results"][0];
    assert_eq!(r["peak"]["value"], 76.8e9);
    assert_eq!(r["peak"]["inputs"]["channels"]["source"], "user");
    let eff = r["efficiency"].as_f64().unwrap();
    assert!((eff - r["mean"].as_f64().unwrap() / 76.8e9).abs() < 1e-12);
}

#[test]
fn mem_bad_input_is_one_line_and_exit_2() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["mem", "--block-size", "0"],
            "--block-size 0 is out of range",
        ),
        (
            &["mem", "--block-size", "2G"],
            "out of range: use 1 B to 1 GiB",
        ),
        (&["mem", "--block-size", "1X"], "'1X' is not a size"),
        (
            &[
                "mem",
                "--workload",
                "RWS",
                "--array-size",
                "1Mi",
                "--block-size",
                "10M",
            ],
            "larger than each thread's array",
        ),
        (
            &["mem", "--array-size", "1000T"],
            "more than 90 % of the available memory",
        ),
        (
            &["mem", "--workload", "LATENCY", "--latency-max", "1000T"],
            "more than 90 % of the available memory",
        ),
        (
            &["mem", "--workload", "STREAM"],
            "unknown memory workload 'STREAM'",
        ),
        (&["mem", "--mem-channels", "2"], "--mem-mts"),
        (&["mem", "--threads", "0"], "between 1 and 4096"),
    ];
    for (args, expected) in cases {
        common::one_line_exit_2(args, expected);
    }
}
