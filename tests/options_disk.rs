//! Every option of `peakbench disk` is used or refused, never ignored: its walk (see
//! tests/common/options.rs) over the target and engine, how the I/O runs, the peak's inputs
//! and fixed amounts of work.

mod common;

use common::options::{
    Case, output_cases, precision_cases, refused, repeat_case, used, user_input, walk,
};

const PSYNC: [&str; 4] = ["--engine", "psync", "--size", "1M"];

#[test]
fn every_disk_option_is_used_or_refused() {
    let mut cases = target();
    cases.extend(how_it_runs());
    cases.extend(peak_inputs());
    cases.extend(fixed_work());
    cases.extend(output_cases("disk", &["--workload", "RR"], "RR"));
    cases.extend(precision_cases(&["--workload", "RR"]));
    walk("disk", cases, &[]);
}

/// The workload, block size, threads, queue depth and engine; the file or directory written.
fn target() -> Vec<Case> {
    vec![
        used("workload", &["--workload", "RR"], |r| {
            r.first()["workload"] == "RR"
        }),
        used(
            "block-size",
            &["--block-size", "8K", "--workload", "RR"],
            |r| r.params()["block_size_bytes"] == 8192,
        ),
        refused("block-size", &["--block-size", "0"], "out of range"),
        used("threads", &["--workload", "RR", "--threads", "2"], |r| {
            r.params()["threads"] == 2
        }),
        used("iodepth", &["--workload", "RR", "--iodepth", "4"], |r| {
            r.params()["iodepth"] == 4
        }),
        used(
            "engine",
            &[&PSYNC[..], &["--workload", "RR"]].concat(),
            |r| r.params()["engine"] == "psync",
        ),
        used(
            "sync",
            &[&PSYNC[..], &["--workload", "WS", "--sync", "none"]].concat(),
            |r| r.params()["sync"] == "none",
        ),
        refused(
            "sync",
            &["--workload", "RR", "--sync", "o-sync"],
            "no workload in --workload writes",
        ),
        used(
            "file-per-thread",
            &[
                &PSYNC[..],
                &["--workload", "RR", "--threads", "2", "--file-per-thread"],
            ]
            .concat(),
            |r| r.params()["file_per_thread"] == true,
        ),
        refused(
            "file-per-thread",
            &["--workload", "RR", "--file", "{dir}/f", "--file-per-thread"],
            "--file-per-thread needs --dir",
        ),
        used("file", &["--workload", "RR", "--file", "{dir}/f"], |r| {
            r.params()["target"]
                .as_str()
                .is_some_and(|t| t.ends_with("/f"))
                && !r.dir.join("f").exists()
        }),
        used("dir", &["--workload", "RR", "--dir", "{dir}"], |r| {
            r.params()["target"]
                .as_str()
                .is_some_and(|t| t.starts_with(r.dir.to_str().unwrap()))
        }),
        refused(
            "dir",
            &["--workload", "RR", "--dir", "{dir}/missing"],
            "does not exist",
        ),
        Case {
            setup: Some(|d| std::fs::write(d.join("old"), b"x").unwrap()),
            ..used(
                "allow-overwrite",
                &[
                    "--workload",
                    "RR",
                    "--file",
                    "{dir}/old",
                    "--allow-overwrite",
                ],
                |r| {
                    r.params()["target"]
                        .as_str()
                        .is_some_and(|t| t.ends_with("/old"))
                },
            )
        },
        Case {
            setup: Some(|d| std::fs::write(d.join("old"), b"x").unwrap()),
            ..refused(
                "allow-overwrite",
                &["--workload", "RR", "--file", "{dir}/old"],
                "pass --allow-overwrite",
            )
        },
        refused(
            "allow-overwrite",
            &["--workload", "RR", "--allow-overwrite"],
            "--file",
        ),
        refused(
            "destructive",
            &["--workload", "RR", "--destructive"],
            "--file",
        ),
    ]
}

/// The size, run and ramp time, read mix, stride, buffering and repetitions.
fn how_it_runs() -> Vec<Case> {
    vec![
        used("size", &["--workload", "RR", "--size", "8M"], |r| {
            r.params()["file_size_bytes"] == 8 << 20
        }),
        used("runtime", &["--workload", "RR", "--runtime", "30ms"], |r| {
            r.params()["runtime_s"] == 0.03
        }),
        used("ramp", &["--workload", "RR", "--ramp", "10ms"], |r| {
            r.params()["ramp_s"] == 0.01
        }),
        used(
            "read-percent",
            &["--workload", "RW", "--read-percent", "30"],
            |r| r.params()["read_percent"] == 30,
        ),
        refused(
            "read-percent",
            &["--workload", "RR", "--read-percent", "30"],
            "RW is not in --workload",
        ),
        used("stride", &["--workload", "RSTRIDE", "--stride", "5"], |r| {
            r.params()["stride_blocks"] == 5 && r.params()["pattern"] == "stride"
        }),
        refused(
            "stride",
            &["--workload", "RR", "--stride", "5"],
            "RSTRIDE is not in --workload",
        ),
        used(
            "stream-buffer",
            &[
                "--workload",
                "RS",
                "--engine",
                "stream",
                "--buffered",
                "--size",
                "1M",
                "--stream-buffer",
                "16K",
            ],
            |r| r.params()["stream_buffer_bytes"] == 16384 && r.params()["engine"] == "stream",
        ),
        refused(
            "stream-buffer",
            &["--workload", "RS", "--stream-buffer", "16K"],
            "add --engine stream or drop --stream-buffer",
        ),
        used("buffered", &["--workload", "RR", "--buffered"], |r| {
            r.params()["io_mode"] == "buffered"
        }),
        repeat_case(&["--workload", "RR"]),
    ]
}

/// The inputs of the peak: rated throughputs, IOPS and latency, or a spinning disk's figures.
fn peak_inputs() -> Vec<Case> {
    vec![
        // One I/O in flight against a peak far above it: measured again 32 deep.
        used(
            "diagnose",
            &[
                "--workload",
                "RR",
                "--engine",
                "psync",
                "--disk-peak-read-iops",
                "10000000",
                "--disk-peak-read-mbps",
                "40960",
                "--diagnose",
            ],
            |r| {
                r.results().iter().any(|x| {
                    x["rerun"]["cause"] == "queue-depth"
                        && x["rerun"]["of"] == 0
                        && x["params"]["iodepth"] == 32
                })
            },
        )
        .measured(),
        used(
            "disk-peak-read-mbps",
            &["--workload", "RS", "--disk-peak-read-mbps", "100"],
            |r| r.metric("throughput")["peak"]["value"] == 1e8,
        )
        .measured(),
        refused(
            "disk-peak-read-mbps",
            &["--workload", "RW", "--disk-peak-read-mbps", "100"],
            "needs the write figure too",
        ),
        used(
            "disk-peak-write-mbps",
            &["--workload", "WS", "--disk-peak-write-mbps", "200"],
            |r| r.metric("throughput")["peak"]["value"] == 2e8,
        )
        .measured(),
        refused(
            "disk-peak-write-mbps",
            &["--workload", "RS", "--disk-peak-write-mbps", "100"],
            "no point of this run only writes",
        ),
        used(
            "disk-peak-read-iops",
            &["--workload", "RR", "--disk-peak-read-iops", "1000"],
            |r| r.metric("iops")["peak"]["value"] == 1000.0,
        )
        .measured(),
        refused(
            "disk-peak-read-iops",
            &["--workload", "WR", "--disk-peak-read-iops", "1000"],
            "no point of this run only reads",
        ),
        used(
            "disk-peak-write-iops",
            &["--workload", "WR", "--disk-peak-write-iops", "500"],
            |r| r.metric("iops")["peak"]["value"] == 500.0,
        )
        .measured(),
        refused(
            "disk-peak-write-iops",
            &["--workload", "RW", "--disk-peak-write-iops", "500"],
            "needs the read figure too",
        ),
        used(
            "disk-latency-us",
            &["--workload", "RR", "--disk-latency-us", "80"],
            |r| user_input(r.metric("latency"), 80.0),
        )
        .measured(),
        refused(
            "disk-latency-us",
            &[
                "--workload",
                "RR",
                "--disk-latency-us",
                "80",
                "--rpm",
                "7200",
                "--seek-ms",
                "8",
            ],
            "cannot be used with",
        ),
        used(
            "rpm",
            &["--workload", "RR", "--rpm", "7200", "--seek-ms", "8"],
            |r| user_input(r.metric("iops"), 7200.0) && user_input(r.metric("latency"), 8.0),
        )
        .measured(),
        refused("rpm", &["--workload", "RR", "--rpm", "7200"], "--seek-ms"),
        used(
            "seek-ms",
            &["--workload", "RS", "--rpm", "5400", "--seek-ms", "12"],
            |r| user_input(r.metric("latency"), 12.0),
        )
        .measured(),
        refused("seek-ms", &["--workload", "RR", "--seek-ms", "8"], "--rpm"),
    ]
}

/// Fixed work and its scaling; the reference tool.
fn fixed_work() -> Vec<Case> {
    vec![
        used(
            "total-bytes",
            &["--workload", "RR", "--total-bytes", "1M"],
            |r| r.params()["total_bytes"] == 1u64 << 20 && r.params()["runtime_s"] == 0.0,
        ),
        refused(
            "total-bytes",
            &["--workload", "RR", "--total-bytes", "1M", "--runtime", "1s"],
            "cannot be used with",
        ),
        used(
            "scaling",
            &[
                "--workload",
                "RR",
                "--threads",
                "2",
                "--total-bytes",
                "1M",
                "--scaling",
                "weak",
            ],
            |r| r.params()["scaling"] == "weak",
        ),
        refused(
            "scaling",
            &["--workload", "RR", "--scaling", "weak"],
            "no --total-bytes is given",
        ),
        // Until steady, 1 s at most: when each repetition was steady (or null), within it
        // (measured: a planned record knows no steady state).
        used("sustain", &["--workload", "RR", "--sustain", "1s"], |r| {
            r.params()["runtime_s"] == 1.0 && r.sustained(1.0)
        })
        .measured(),
        // Chosen percentiles, and only those (measured: a planned record has none).
        // In every output: the JSON's keys, the CSV's columns, the notes of -v.
        used(
            "percentiles",
            &[
                "--workload",
                "RR",
                "--percentiles",
                "25,99.5",
                "-v",
                "--csv",
                "{dir}/p.csv",
            ],
            |r| {
                let keys: Vec<&String> = r.metric("latency")["percentiles"]
                    .as_object()
                    .map(|p| p.keys().collect())
                    .unwrap_or_default();
                let csv = std::fs::read_to_string(r.dir.join("p.csv")).unwrap_or_default();
                let header = csv.lines().next().unwrap_or("");
                keys == ["max", "min", "p25", "p99.5"]
                    && header
                        .ends_with("percentile_min,percentile_p25,percentile_p99.5,percentile_max")
                    && r.stdout.contains(" p25 ")
                    && r.stdout.contains(", p99.5 ")
            },
        )
        .measured(),
        refused(
            "percentiles",
            &["--workload", "RR", "--percentiles", "50,100"],
            "'100' is no percentile",
        ),
        refused(
            "sustain",
            &["--workload", "RR", "--sustain", "500ms"],
            "no time to reach a steady state",
        ),
        refused(
            "sustain",
            &["--workload", "RR", "--sustain", "2s", "--runtime", "1s"],
            "cannot be used with",
        ),
        // COPY's tool is dd (coreutils): its figure, or why there is none.
        used("reference", &["--workload", "COPY", "--reference"], |r| {
            r.results().iter().any(|x| {
                x["reference"]["tool"] == "dd" || x["reference_unknown_reason"].is_string()
            })
        }),
    ]
}
