//! `--precision` on measured points: each subsystem's session measures a point again with the
//! repetitions the first measurement's spread asks, within `--max-repeat` in all, and its
//! record is the last measurement, saying what was reached (the mock session's arithmetic is
//! in tests/common/options.rs's `precision_cases`).

mod common;

/// Runs `peakbench SUB ARGS --repeat 2 --precision 0.1% --max-repeat 6 --json FILE` and
/// checks each record: a first measurement of 2 (±12.7 · s/√2: ±0.1 % only where s is below
/// 0.011 %) is followed by one of 3 or 4 (4 is all that 6 leave; 3 where t(2) · s/√3 meets it),
/// after which none has more than its last; where the first one met it after all, its 2
/// repetitions are the record's.
fn measured_again(sub: &str, args: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    common::peakbench()
        .env("COLUMNS", "1000")
        .arg(sub)
        .args(args)
        .args(["--repeat", "2", "--precision", "0.1%", "--max-repeat", "6"])
        .args(["--no-history", "--json"])
        .arg(&json)
        .timeout(std::time::Duration::from_secs(120))
        .assert()
        .success();
    let doc = common::read_json(&json);
    assert!(
        common::schema_errors(&doc).is_empty(),
        "{:?}",
        common::schema_errors(&doc)
    );
    let results = doc["results"].as_array().unwrap();
    assert!(!results.is_empty(), "{sub}: no records");
    for r in results {
        let p = &r["precision"];
        let samples = r["samples"].as_array().unwrap().len();
        let (measurements, repetitions) = (p["measurements"].as_u64(), p["repetitions"].as_u64());
        match measurements {
            Some(2) => assert!(
                (samples == 3 || samples == 4) && repetitions == Some(samples as u64 + 2),
                "{sub}: {r}"
            ),
            Some(1) => {
                assert_eq!((samples, repetitions), (2, Some(2)), "{sub}: {r}");
                assert_eq!(p["met"], true, "{sub}: one measurement and not met: {r}");
            }
            _ => panic!("{sub}: {r}"),
        }
        assert_eq!((&p["target"], &p["max_repeat"]), (&0.001.into(), &6.into()));
        let warned = r["warnings"].as_array().is_some_and(|w| {
            w.iter()
                .any(|w| w.as_str().unwrap().contains("not reached"))
        });
        assert_eq!(warned, p["met"] == false, "{sub}: {r}");
    }
}

#[test]
fn each_subsystem_measures_a_point_again_within_its_bound() {
    let _share = common::share(false);
    measured_again(
        "cpu",
        &[
            "--workload",
            "INT64",
            "--threads",
            "1",
            "--duration",
            "5ms",
            "--warmup",
            "0",
        ],
    );
    measured_again(
        "cpu",
        &[
            "--workload",
            "DGEMM",
            "--n",
            "64",
            "--threads",
            "1",
            "--warmup",
            "0",
        ],
    );
    measured_again(
        "mem",
        &[
            "--workload",
            "COPY",
            "--threads",
            "1",
            "--array-size",
            "1M",
            "--duration",
            "5ms",
        ],
    );
    let dir = tempfile::tempdir().unwrap();
    measured_again(
        "disk",
        &[
            "--engine",
            "null",
            "--workload",
            "RR",
            "--block-size",
            "4K",
            "--size",
            "4M",
            "--runtime",
            "20ms",
            "--ramp",
            "0",
            "--dir",
            dir.path().to_str().unwrap(),
        ],
    );
    measured_again(
        "net",
        &[
            "--workload",
            "LATENCY",
            "--protocol",
            "tcp",
            "--duration",
            "50ms",
            "--omit",
            "0",
        ],
    );
}
