//! Options' values beyond any machine or any day: a theoretical input beyond what any machine
//! has, and fixed work beyond its bounds (or estimated at more than a day a repetition), are
//! refused in one line with exit code 2 before anything runs or is stored.

mod common;

use std::path::Path;

/// A theoretical input beyond what any machine has (1e308 GOPS, a clock of 10³⁰⁸ GHz or of
/// 10⁻³⁰⁰ GHz, +∞) overflowed the peak to infinity, which the JSON document and the database
/// then held as `null` and could not read back: each option that gives one is bounded, and
/// refuses such a value in one line, exit code 2, before anything runs or is stored.
#[test]
fn theoretical_inputs_beyond_any_machine_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("history.db");
    let db = db.to_str().unwrap();
    let cpu = ["cpu", "--workload", "DP", "--threads", "1", "--db", db];
    let mem = ["mem", "--workload", "COPY", "--threads", "1", "--db", db];
    let disk = ["disk", "--engine", "null", "--dir", "/tmp", "--db", db];
    let net = ["net", "--loopback", "--workload", "THROUGHPUT", "--db", db];
    let cases: Vec<Vec<&str>> = vec![
        [&cpu[..], &["--peak", "DP=1e308"]].concat(),
        [&cpu[..], &["--peak", "DP=inf"]].concat(),
        [&cpu[..], &["--clock-ghz", "1e308"]].concat(),
        [&cpu[..], &["--clock-ghz", "1e-300"]].concat(),
        [&cpu[..], &["--ops-per-cycle", "DP=1e308"]].concat(),
        [&mem[..], &["--mem-peak-gbs", "1e308"]].concat(),
        [&mem[..], &["--mem-latency-ns", "1e-300"]].concat(),
        [&mem[..], &["--mem-channels", "4", "--mem-mts", "1e308"]].concat(),
        [&disk[..], &["--disk-peak-read-mbps", "1e308"]].concat(),
        [&disk[..], &["--disk-peak-write-iops", "1e308"]].concat(),
        [&disk[..], &["--disk-latency-us", "1e308"]].concat(),
        [&disk[..], &["--rpm", "1e308", "--seek-ms", "8"]].concat(),
        [&disk[..], &["--rpm", "7200", "--seek-ms", "1e-300"]].concat(),
        [&net[..], &["--link-gbps", "1e308"]].concat(),
        vec!["peak", "--disk-peak-read-iops", "1e308"],
        vec!["peak", "--rpm", "7200", "--seek-ms", "1e308"],
    ];
    for args in &cases {
        common::one_line_exit_2(args, "is out of range for");
    }
    assert!(!Path::new(db).exists(), "a refused command stored nothing");
}

/// Runs `peakbench args` with the clock's test double and a database in `dir`, bounded in
/// time: (exit code, stderr).
fn refused_within(dir: &Path, args: &[&str]) -> (Option<i32>, String) {
    let out = assert_cmd::Command::new(env!("CARGO_BIN_EXE_peakbench"))
        .args(args)
        .current_dir(dir)
        .env("PEAKBENCH_DB", dir.join("env.db"))
        .env(common::MOCK_CLOCK.0, common::MOCK_CLOCK.1)
        .env("COLUMNS", "1000")
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Finding 5: fixed work beyond its bound (1 PiB, 10¹⁸ operations) or estimated at more than
/// a day a repetition is refused in one line with exit code 2, never a panic of the estimate:
/// on the command line, in a profile's dry run (two such cpu jobs summed), and in a cluster
/// run's dry run. Nothing is measured.
#[test]
fn fixed_work_beyond_its_bounds_is_refused_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let profile = |name: &str, text: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        path.display().to_string()
    };
    let mem = profile(
        "mem.toml",
        "[[job]]\nsubsystem = \"mem\"\nworkload = [\"COPY\"]\ntotal_bytes = \"16000000T\"\nscaling = \"weak\"\nthreads = \"1..4096\"\narray_size = \"64M\"\n",
    );
    let cpu_job = "[[job]]\nsubsystem = \"cpu\"\nworkload = [\"DP\"]\ntotal_ops = \"18446744073709551615\"\nscaling = \"weak\"\nthreads = \"1..4096\"\n";
    let cpu = profile("cpu.toml", &format!("{cpu_job}{cpu_job}"));
    // Within the bounds, and still a day's work a repetition: refused by its estimate.
    let long_disk = profile(
        "disk.toml",
        "[[job]]\nsubsystem = \"disk\"\nworkload = [\"RS\"]\nengine = \"null\"\ntotal_bytes = \"1024T\"\nscaling = \"weak\"\nthreads = \"1..128\"\nblock_size = \"4K\"\nsize = \"1M\"\n",
    );
    let long_cpu = profile(
        "long-cpu.toml",
        "[[job]]\nsubsystem = \"cpu\"\nworkload = [\"DP\"]\ntotal_ops = \"1000000000000000000\"\nthreads = \"1\"\n",
    );
    let disk = [
        "disk",
        "--workload",
        "RS",
        "--total-bytes",
        "16000000T",
        "--scaling",
        "weak",
        "--iodepth",
        "1..256",
        "--threads",
        "1..128",
        "--repeat",
        "1000",
        "--block-size",
        "4K",
        "--size",
        "1M",
    ];
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            disk.to_vec(),
            "'16000000T' is out of range: at most 1024T (1 PiB)",
        ),
        (
            vec!["run", "--profile", &mem, "--dry-run"],
            "'16000000T' is out of range: at most 1024T (1 PiB)",
        ),
        (
            vec!["run", "--profile", &cpu, "--dry-run"],
            "'18446744073709551615' is out of range: at most 1000000000000000000",
        ),
        (
            vec!["cluster", "run", "--profile", &cpu, "--dry-run"],
            "'18446744073709551615' is out of range",
        ),
        (
            vec!["run", "--profile", &long_disk, "--dry-run"],
            "more than 24 h: give less --total-bytes",
        ),
        (
            vec!["run", "--profile", &long_cpu, "--dry-run"],
            "more than 24 h: give less --total-ops",
        ),
    ];
    for (args, text) in cases {
        let (code, err) = refused_within(dir.path(), &args);
        assert_eq!(code, Some(2), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(text), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}
