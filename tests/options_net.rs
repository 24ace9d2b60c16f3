//! Every option of the `peakbench net` client is used or refused, never ignored: its walk (see
//! tests/common/options.rs) against two servers on loopback, one with a token, over the
//! connection, what is measured, socket options, fixed amounts and rates.

mod common;

use common::options::{
    Case, output_cases, precision_cases, refused, repeat_case, used, user_input, walk,
};
use serde_json::Value;

const LAT: [&str; 2] = ["--workload", "LATENCY"];
const TPUT: [&str; 2] = ["--workload", "THROUGHPUT"];
const TCP: [&str; 4] = ["--workload", "THROUGHPUT", "--protocol", "tcp"];

#[test]
fn every_net_option_is_used_or_refused() {
    let plain = common::net::start(None);
    let guarded = common::net::start(Some("s3cret"));
    let servers = [
        ("{server}", plain.addr.to_string()),
        ("{guarded}", guarded.addr.to_string()),
    ];
    let mut cases = connection();
    cases.extend(what_is_measured());
    cases.extend(socket_options());
    cases.extend(amounts_and_display());
    cases.extend(output_cases("net", &LAT, "LATENCY"));
    cases.extend(precision_cases(&LAT));
    walk("net", cases, &servers);
    drop((plain, guarded));
}

/// The server, loopback, and the token (given or read from a file).
fn connection() -> Vec<Case> {
    vec![
        used(
            "server",
            &["--workload", "LATENCY", "--server", "{server}"],
            |r| r.params()["server"].as_str().is_some_and(|s| !s.is_empty()),
        ),
        used("loopback", &["--workload", "LATENCY", "--loopback"], |r| {
            r.params()["server"]
                .as_str()
                .is_some_and(|s| s.starts_with("127.0.0.1:"))
        }),
        refused(
            "loopback",
            &[
                "--workload",
                "LATENCY",
                "--loopback",
                "--server",
                "{server}",
            ],
            "cannot be used with",
        ),
        used(
            "token",
            &[
                "--workload",
                "LATENCY",
                "--server",
                "{guarded}",
                "--token",
                "s3cret",
            ],
            |r| {
                r.doc.as_ref().is_some_and(|d| {
                    d["command_line"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .any(|a| a == "***")
                })
            },
        ),
        refused(
            "token",
            &[
                "--workload",
                "LATENCY",
                "--server",
                "{guarded}",
                "--token",
                "wrong",
            ],
            "does not match the server",
        )
        .measured(),
        Case {
            setup: Some(|d| std::fs::write(d.join("tok"), "s3cret\n").unwrap()),
            ..used(
                "token-file",
                &[
                    "--workload",
                    "LATENCY",
                    "--server",
                    "{guarded}",
                    "--token-file",
                    "{dir}/tok",
                ],
                |r| r.first()["workload"] == "LATENCY",
            )
        },
    ]
}

/// The workload, protocol, streams, message size, timing, direction, pacing and the peak's inputs.
fn what_is_measured() -> Vec<Case> {
    vec![
        used("workload", &LAT, |r| {
            r.results().iter().all(|x| x["workload"] == "LATENCY")
        }),
        used(
            "protocol",
            &["--workload", "LATENCY", "--protocol", "udp"],
            |r| r.params()["protocol"] == "UDP",
        ),
        used(
            "streams",
            &["--workload", "LATENCY", "--streams", "2"],
            |r| r.params()["streams"] == 2,
        ),
        used(
            "message-size",
            &["--workload", "LATENCY", "--message-size", "64"],
            |r| r.params()["message_size_bytes"] == 64,
        ),
        used(
            "duration",
            &["--workload", "LATENCY", "--duration", "150ms"],
            |r| r.params()["duration_s"] == 0.15,
        ),
        used("omit", &["--workload", "LATENCY", "--omit", "50ms"], |r| {
            r.params()["omit_s"] == 0.05
        }),
        used("reverse", &[&TPUT[..], &["--reverse"]].concat(), |r| {
            r.params()["direction"]
                .as_str()
                .is_some_and(|d| d.contains("reverse"))
        }),
        refused(
            "reverse",
            &[&LAT[..], &["--reverse"]].concat(),
            "THROUGHPUT is not in --workload",
        ),
        used(
            "rate",
            &[
                "--workload",
                "THROUGHPUT",
                "--protocol",
                "udp",
                "--rate",
                "10M",
            ],
            |r| r.params()["target_rate_bps"] == 10_000_000,
        ),
        refused(
            "rate",
            &[
                "--workload",
                "LATENCY",
                "--protocol",
                "udp",
                "--rate",
                "10M",
            ],
            "--rate paces UDP THROUGHPUT",
        ),
        used(
            "busy-poll",
            &[&TPUT[..], &["--busy-poll", "0"]].concat(),
            |r| r.params()["busy_poll_us"] == 0,
        ),
        refused(
            "busy-poll",
            &[&LAT[..], &["--busy-poll", "0"]].concat(),
            "THROUGHPUT is not in --workload",
        ),
        repeat_case(&LAT),
        used(
            "link-gbps",
            &[&TPUT[..], &["--link-gbps", "10"]].concat(),
            |r| user_input(r.first(), 10000.0),
        )
        .measured(),
        refused(
            "link-gbps",
            &[&LAT[..], &["--link-gbps", "10"]].concat(),
            "this run has neither",
        ),
        used(
            "propagation-us",
            &[&LAT[..], &["--link-gbps", "10", "--propagation-us", "2"]].concat(),
            |r| user_input(r.metric("latency"), 2.0) && user_input(r.metric("latency"), 10000.0),
        )
        .measured(),
        refused(
            "propagation-us",
            &[&TPUT[..], &["--propagation-us", "2"]].concat(),
            "LATENCY is not in --workload",
        ),
    ]
}

/// Both ways at once, and the socket options: window, congestion control, MSS, Nagle, zero-copy.
fn socket_options() -> Vec<Case> {
    vec![
        used("bidir", &[&TCP[..], &["--bidir"]].concat(), |r| {
            r.results()
                .iter()
                .any(|x| x["params"]["direction"] == "both ways at once, summed (--bidir)")
        }),
        refused(
            "bidir",
            &[&LAT[..], &["--bidir"]].concat(),
            "THROUGHPUT is not in --workload",
        ),
        // A window asked far below the link's bandwidth-delay product: measured again with
        // the kernel's own, which confirms or drops it (either, on a loaded runner).
        used(
            "diagnose",
            &[
                &TCP[..],
                &["--window", "16K", "--link-gbps", "100", "--diagnose"],
            ]
            .concat(),
            |r| {
                r.results().iter().any(|x| {
                    x["rerun"]["cause"] == "window" && x["params"].get("socket_options").is_none()
                }) && r
                    .stdout
                    .contains("measured again with the kernel's own window")
            },
        )
        .measured(),
        used("window", &[&TCP[..], &["--window", "256K"]].concat(), |r| {
            r.params()["socket_options"]["window_bytes"] == 262_144
                && r.params()["client_socket"]["receive_buffer_bytes"] == 524_288
        })
        .measured(),
        refused(
            "window",
            &[&TCP[..], &["--window", "1G"]].concat(),
            "out of range",
        ),
        used(
            "congestion",
            &[&TCP[..], &["--congestion", "reno"]].concat(),
            |r| r.params()["client_socket"]["congestion"] == "reno",
        )
        .measured(),
        refused(
            "congestion",
            &[&TCP[..], &["--congestion", "no_such_cc"]].concat(),
            "this kernel has no congestion control 'no_such_cc'",
        ),
        used("mss", &[&TCP[..], &["--mss", "1200"]].concat(), |r| {
            r.params()["client_socket"]["mss_bytes"]
                .as_u64()
                .is_some_and(|m| m <= 1200)
        })
        .measured(),
        refused(
            "mss",
            &[&TPUT[..], &["--protocol", "udp", "--mss", "1200"]].concat(),
            "is a TCP option",
        ),
        used(
            "no-delay",
            &[
                "--workload",
                "LATENCY",
                "--protocol",
                "tcp",
                "--no-delay",
                "off",
            ],
            |r| r.params()["client_socket"]["nodelay"] == false,
        )
        .measured(),
        refused(
            "no-delay",
            &[&LAT[..], &["--no-delay", "maybe"]].concat(),
            "is neither on nor off",
        ),
        used("zerocopy", &[&TCP[..], &["--zerocopy"]].concat(), |r| {
            r.params()["client_socket"]["zerocopy_sends"]
                .as_u64()
                .is_some_and(|n| n > 0)
        })
        .measured(),
        refused(
            "zerocopy",
            &["--workload", "LATENCY", "--protocol", "tcp", "--zerocopy"],
            "THROUGHPUT is not in --workload",
        ),
    ]
}

/// Fixed amounts and their scaling, message rates and load; goodput in Gbit/s; the reference tool.
fn amounts_and_display() -> Vec<Case> {
    vec![
        used(
            "total-bytes",
            &[&TCP[..], &["--total-bytes", "64M", "--streams", "2"]].concat(),
            |r| r.params()["amount_per_stream"] == 32 << 20 && r.params()["scaling"] == "strong",
        ),
        refused(
            "total-bytes",
            &[
                &TPUT[..],
                &["--protocol", "tcp,udp", "--total-bytes", "64M"],
            ]
            .concat(),
            "add --protocol tcp",
        ),
        // Until steady, 1 s at most (measured: a planned record knows no steady state).
        used(
            "sustain",
            &[&TCP[..], &["--sustain", "1s", "--omit", "0"]].concat(),
            |r| r.sustained(1.0),
        )
        .measured(),
        refused(
            "sustain",
            &[&TPUT[..], &["--protocol", "tcp,udp", "--sustain", "1s"]].concat(),
            "add --protocol tcp",
        ),
        refused(
            "sustain",
            &[&LAT[..], &["--sustain", "1s"]].concat(),
            "THROUGHPUT is not in --workload",
        ),
        refused(
            "sustain",
            &[&TCP[..], &["--sustain", "11m"]].concat(),
            "a test lasts 600 s at most",
        ),
        // Chosen percentiles of the round trips, and only those.
        used(
            "percentiles",
            &[&LAT[..], &["--percentiles", "50,99.999"]].concat(),
            |r| {
                let keys: Vec<&String> = r.metric("latency")["percentiles"]
                    .as_object()
                    .map(|p| p.keys().collect())
                    .unwrap_or_default();
                keys == ["max", "min", "p50", "p99.999"]
            },
        )
        .measured(),
        refused(
            "percentiles",
            &[&TCP[..], &["--percentiles", "50,99"]].concat(),
            "none of them is in --workload",
        ),
        used("count", &[&LAT[..], &["--count", "500"]].concat(), |r| {
            r.params()["amount_per_stream"] == 500
        }),
        refused(
            "count",
            &[&TCP[..], &["--count", "500"]].concat(),
            "none of them is in --workload",
        ),
        used(
            "scaling",
            &[
                &LAT[..],
                &["--count", "500", "--streams", "2", "--scaling", "weak"],
            ]
            .concat(),
            |r| r.params()["amount_per_stream"] == 500 && r.params()["scaling"] == "weak",
        ),
        refused(
            "scaling",
            &[&LAT[..], &["--scaling", "weak"]].concat(),
            "neither is given",
        ),
        used("mps", &[&LAT[..], &["--mps", "2000"]].concat(), |r| {
            r.params()["mps"] == 2000
                && r.metric("rate")["mean"]
                    .as_f64()
                    .is_some_and(|v| v > 1000.0 && v <= 2050.0)
        })
        .measured(),
        refused(
            "mps",
            &[&TPUT[..], &["--mps", "2000"]].concat(),
            "none of them is in --workload",
        ),
        used("load", &[&LAT[..], &["--load", "0,1"]].concat(), |r| {
            let load = |x: &Value| x["params"]["load_streams"].as_u64();
            r.results().iter().any(|x| load(x) == Some(0))
                && r.results().iter().any(|x| {
                    load(x) == Some(1)
                        && x["params"]["load_goodput_bps"]
                            .as_f64()
                            .is_some_and(|v| v > 0.0)
                })
        })
        .measured(),
        refused(
            "load",
            &[&TCP[..], &["--load", "1"]].concat(),
            "LATENCY is not in --workload",
        ),
        used("gbit", &[&TPUT[..], &["--gbit"]].concat(), |r| {
            r.stdout.contains("Gbit/s")
        }),
        refused(
            "gbit",
            &[&LAT[..], &["--gbit"]].concat(),
            "--gbit shows network goodput",
        ),
        used(
            "reference",
            &[
                "--workload",
                "LATENCY",
                "--message-size",
                "1",
                "--reference",
            ],
            |r| r.stderr.contains("reference") || !r.first()["reference"].is_null(),
        ),
    ]
}
