//! The registry of tools: what is found, what is missing, which records get none.

use super::testing::record;
use super::*;
use serde_json::json;
use std::ffi::OsString;

fn empty_path_ctx() -> RefContext {
    let mut ctx = RefContext::new(std::env::temp_dir());
    ctx.locator = Locator {
        path: OsString::new(),
        stream: None,
        blis: None,
    };
    ctx
}

#[test]
fn every_tool_is_missing_on_an_empty_path() {
    let statuses = check_with(&Locator::default());
    assert_eq!(statuses.len(), Tool::ALL.len());
    for s in statuses {
        assert_eq!(s.availability, Availability::Missing, "{}", s.name);
        assert!(!s.install.is_empty());
    }
}

#[test]
fn a_missing_tool_is_an_error_naming_the_package() {
    let ctx = empty_path_ctx();
    let dp = record(
        "cpu",
        "DP",
        "throughput",
        "GOPS",
        json!({"threads": 1, "isa": "avx2"}),
        Some(50.0),
    );
    let err = measure(&dp, &ctx).unwrap().unwrap_err();
    assert_eq!(err, "likwid-bench not found: apt-get install likwid");
    let copy = record(
        "mem",
        "COPY",
        "throughput",
        "GB/s",
        json!({"threads": 1, "isa": "avx2", "stores": "nt", "working_set_bytes": 64_000_000}),
        None,
    );
    let err = measure_typed(&copy, &ctx).unwrap().unwrap_err();
    match err {
        RefError::Missing { tools, install } => {
            assert_eq!(tools, "likwid-bench or HPL (hpcc) or STREAM");
            assert!(install.starts_with(
                "apt-get install likwid; or apt-get install hpcc openmpi-bin \
                 libopenblas0-serial; or build stream.c"
            ));
        }
        e => panic!("{e}"),
    }
    let lat = record(
        "net",
        "LATENCY",
        "latency",
        "us",
        json!({"protocol": "TCP", "message_size_bytes": 64, "server": "127.0.0.1:5301", "duration_s": 1.0}),
        None,
    );
    assert_eq!(
        measure(&lat, &ctx).unwrap().unwrap_err(),
        "sockperf or qperf or ping not found: apt-get install sockperf; or apt-get install qperf; or apt-get install iputils-ping"
    );
    // A 1-byte ping-pong: sockperf cannot, so qperf (ping cannot time it either).
    let mut one = lat.clone();
    if let crate::results::params::Params::Net(p) = &mut one.params {
        p.message_size_bytes = 1;
    }
    assert_eq!(
        measure(&one, &ctx).unwrap().unwrap_err(),
        "qperf not found: apt-get install qperf"
    );
}

#[test]
fn records_without_a_tool_get_none() {
    let ctx = empty_path_ctx();
    for (sub, wl, metric, unit) in [
        ("cpu", "INT32", "throughput", "GOPS"),
        ("cpu", "NULL", "latency", "ns"),
        ("mem", "NULL", "latency", "ns"),
        ("mem", "SCALE", "latency", "ns"),
    ] {
        let rec = record(sub, wl, metric, unit, json!({"threads": 1}), None);
        assert!(measure(&rec, &ctx).is_none(), "{sub} {wl}");
    }
    // A staircase step: sysbench (LATENCY's tool, for its 8-byte probes) says why not.
    let chase = record(
        "mem",
        "LATENCY",
        "latency",
        "ns",
        json!({"threads": 1}),
        None,
    );
    let e = measure(&chase, &ctx).unwrap().unwrap_err();
    assert!(e.contains("does not chase pointers"), "{e}");
}

#[test]
fn stream_named_by_env_but_absent_is_unusable() {
    let loc = Locator {
        path: OsString::new(),
        stream: Some("/nonexistent/stream".into()),
        blis: None,
    };
    match loc.availability(Tool::Stream) {
        Availability::Unusable { reason, .. } => {
            assert!(reason.contains("PEAKBENCH_STREAM=/nonexistent/stream"))
        }
        a => panic!("{a:?}"),
    }
}

#[test]
fn another_program_named_stream_is_unusable() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let fake = dir.join("stream");
    std::fs::write(&fake, "#!/bin/sh\necho ImageMagick\n").unwrap();
    std::fs::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let loc = Locator {
        path: dir.as_os_str().to_owned(),
        stream: None,
        blis: None,
    };
    let a = loc.availability(Tool::Stream);
    match a {
        Availability::Unusable { reason, path } => {
            assert_eq!(path, fake);
            assert!(reason.contains("is not McCalpin's STREAM"), "{reason}");
        }
        a => panic!("{a:?}"),
    }
}

#[test]
fn a_found_tool_has_a_path_and_version() {
    let loc = Locator::from_env();
    for tool in [Tool::Fio, Tool::Iperf3, Tool::Sockperf, Tool::LikwidBench] {
        match loc.availability(tool) {
            Availability::Found(f) => {
                assert!(f.path.is_absolute() || f.path.components().count() > 1);
                assert_ne!(f.version, "unknown", "{tool}");
            }
            _ => eprintln!("skipped {tool}: not installed ({})", tool.install()),
        }
    }
}

/// Finding 6: every parser refuses a figure that is not finite, is negative or is beyond
/// [`MAX_TOOL_NUMBER`] (1e308, NaN, -1, inf; in JSON, where NaN and inf are not numbers, the
/// document is refused), and reads its recorded output as before.
#[test]
fn every_parser_refuses_figures_no_tool_can_measure() {
    type Parse = fn(&str) -> Result<(), String>;
    let cases: [(&str, &str, Parse); 13] = [
        ("iperf3-tcp.json", "21560977224.049839", |t| {
            iperf3::parse_json(t).map(drop)
        }),
        ("fio-randread.json", "64386173", |t| {
            fio::parse_json(t).map(drop)
        }),
        ("dd-copy.txt", "0.00392109", |t| {
            dd::parse_output(t).map(drop)
        }),
        ("mbw-mcblock.txt", "7791.955", |t| {
            mbw::parse_output(t).map(drop)
        }),
        ("ping-loopback.txt", "0.035", |t| {
            ping::parse_output(t).map(drop)
        }),
        ("qperf-tcp-lat.txt", "30.7", |t| {
            qperf::parse_output(t).map(drop)
        }),
        ("sockperf-tcp.txt", "71.801", |t| {
            sockperf::parse_output(t).map(drop)
        }),
        ("stream.txt", "23300.5", |t| {
            stream::parse_output(t).map(drop)
        }),
        ("sysbench-memory-seq-read.txt", "32944.68", |t| {
            sysbench::parse_memory(t).map(drop)
        }),
        ("sysbench-fileio-rndrw.txt", "16738.34", |t| {
            fileio::parse(t).map(drop)
        }),
        ("likwid-copy.txt", "40836.17", |t| {
            likwid::parse_output(t).map(drop)
        }),
        ("hpcc-n8000-np2.txt", "0.0885859", |t| {
            hpcc::parse_output(t).map(drop)
        }),
        // A count beyond 10¹⁸.
        ("dd-copy.txt", "4194304 bytes", |t| {
            dd::parse_output(t).map(drop)
        }),
    ];
    let digits = format!("1{}", "0".repeat(308));
    for (name, figure, parse) in cases {
        let text = super::testing::fixture(name);
        assert!(text.contains(figure), "{name} has no {figure}");
        assert_eq!(parse(&text), Ok(()), "{name}");
        let bad: Vec<String> = if figure.ends_with(" bytes") {
            vec!["18446744073709551615 bytes".into()]
        } else {
            ["1e308", &digits, "NaN", "-1", "inf"]
                .map(String::from)
                .to_vec()
        };
        for bad in bad {
            let err = parse(&text.replace(figure, &bad));
            assert!(err.is_err(), "{name} with {bad}: {err:?}");
        }
    }
    assert_eq!(tool_number(1e18), Some(1e18));
    assert_eq!(tool_number(0.0), Some(0.0));
    for x in [1.1e18, f64::NAN, f64::INFINITY, -1.0, -0.5] {
        assert_eq!(tool_number(x), None, "{x}");
    }
    assert_eq!(tool_count(u64::MAX), None);
}

/// Finding 6: a figure in its record's unit beyond what any machine measures (10 Tbit/s of
/// goodput here), negative or not finite is a failed reference run that says why, in one line.
#[test]
fn a_figure_beyond_its_units_bound_is_refused() {
    let goodput = record(
        "net",
        "THROUGHPUT",
        "throughput",
        "bit/s",
        json!({"protocol": "tcp", "streams": 1}),
        None,
    );
    assert_eq!(checked_figure("iperf3", &goodput, 2e10), Ok(2e10));
    for bad in [2e13, 1e308, -1.0, f64::NAN, f64::INFINITY] {
        let err = checked_figure("iperf3", &goodput, bad)
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("cannot read iperf3's output: its figure for THROUGHPUT"),
            "{err}"
        );
        assert!(!err.contains('\n'), "{err}");
    }
    let loss = record(
        "net",
        "THROUGHPUT",
        "loss",
        "%",
        json!({"protocol": "udp", "streams": 1}),
        None,
    );
    assert!(checked_figure("iperf3", &loss, 100.0).is_ok());
    assert!(checked_figure("iperf3", &loss, 100.5).is_err());
}

/// Where the tools that would take a point are missing and one that is installed refuses it
/// (hpcc's STREAM, too long for what a budget leaves a tool's run), the point says the
/// installed tool's reason, not "STREAM not found".
#[test]
fn an_installed_tools_refusal_says_more_than_not_found() {
    let ctx = empty_path_ctx();
    ctx.tools.lock().unwrap().insert(
        Tool::Hpcc,
        Availability::Found(Found {
            path: "/usr/bin/hpcc".into(),
            version: "1.5.0".into(),
        }),
    );
    ctx.set_limits(Limits {
        longest: Some(Duration::from_millis(1)),
        ..ctx.limits()
    });
    let scale = record(
        "mem",
        "SCALE",
        "throughput",
        "GB/s",
        json!({"threads": 1, "isa": "avx2", "stores": "nt", "working_set_bytes": 2_000_000_000u64}),
        None,
    );
    let err = measure(&scale, &ctx).unwrap().unwrap_err();
    assert!(
        err.starts_with("HPL (hpcc) cannot run this point: a run takes longer than --budget"),
        "{err}"
    );
    // Without the budget's limit, hpcc would run it: no refusal to prefer.
    ctx.set_limits(Limits {
        longest: None,
        ..ctx.limits()
    });
    assert!(matches!(
        jobs(&scale, &ctx),
        Some(Ok(j)) if j.iter().any(|j| j.tool() == Tool::Hpcc)
    ));
}
