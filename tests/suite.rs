//! `peakbench run --profile`: jobs of every subsystem in one run, one report, one stored run.

mod common;

use assert_cmd::Command;
use serde_json::Value;

/// The binary with the clock probes' and the session's test doubles (these tests are of the
/// suite, not the measurements) and a terminal wide enough that no phrase is wrapped.
fn peakbench(db: &std::path::Path) -> Command {
    let mut c = measuring(db);
    c.env(common::MOCK_SESSION.0, common::MOCK_SESSION.1);
    c
}

/// The binary that measures, with the clock probes' test double: for the runs whose points
/// are measured (one per subsystem, a job that fails as it runs).
fn measuring(db: &std::path::Path) -> Command {
    let mut c = real(db);
    c.env(common::MOCK_CLOCK.0, common::MOCK_CLOCK.1);
    c
}

/// The binary as users run it (the clock probed): for the budget, whose estimate counts the
/// probes' time.
fn real(db: &std::path::Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_peakbench"));
    // Phrases are looked for whole: a terminal wide enough that no line is wrapped.
    c.env("PEAKBENCH_DB", db).env("COLUMNS", "1000");
    c
}

/// A profile whose jobs are tiny: the NULL workloads and engines, and a short loopback test.
const TINY: &str = r#"
description = "tiny: one point per subsystem"
[defaults]
repeat = 2
[[job]]
subsystem = "cpu"
workload = ["NULL"]
threads = "all"
warmup = 0
[[job]]
subsystem = "mem"
workload = ["NULL"]
threads = 1
warmup = 0
[[job]]
subsystem = "disk"
workload = ["RR"]
engine = "null"
block_size = "4K"
size = "4M"
runtime = "50ms"
ramp = "0s"
[[job]]
subsystem = "net"
workload = ["LATENCY"]
protocol = ["tcp"]
duration = "100ms"
omit = "0s"
"#;

#[test]
fn a_profile_runs_every_subsystem_into_one_report_and_one_stored_run() {
    let _share = common::share(false);
    let dir = tempfile::tempdir().unwrap();
    let (profile, json, db) = (
        dir.path().join("tiny.toml"),
        dir.path().join("r.json"),
        dir.path().join("h.db"),
    );
    std::fs::write(&profile, TINY).unwrap();
    let out = measuring(&db)
        .current_dir(dir.path())
        .args(["run", "--profile"])
        .arg(&profile)
        .arg("--json")
        .arg(&json)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("4 jobs, estimated"), "{err}");
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(common::schema_errors(&doc), Vec::<String>::new());
    let subsystems: std::collections::BTreeSet<&str> = doc["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["subsystem"].as_str().unwrap())
        .collect();
    assert_eq!(
        subsystems.into_iter().collect::<Vec<_>>(),
        ["cpu", "disk", "mem", "net"]
    );
    // The terminal's summary has a table per subsystem.
    let table = String::from_utf8_lossy(&out.stdout);
    for s in ["CPU", "Memory", "Disk", "Network"] {
        assert!(
            table.lines().any(|l| l == s),
            "{s} section missing:\n{table}"
        );
    }
    // One run in the history, complete, with every point.
    let store = peakbench::history::Store::open(&db).unwrap();
    let runs = store.runs().unwrap();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].status, "complete");
    assert_eq!(
        runs[0].points as usize,
        doc["results"].as_array().unwrap().len()
    );
    // No temporary file left in the working directory (the disk job's).
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("peakbench"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn quick_profile_is_estimated_under_a_minute_and_lists_its_jobs() {
    let _share = common::share(false);
    let dir = tempfile::tempdir().unwrap();
    let out = peakbench(&dir.path().join("h.db"))
        .args(["run", "--profile", "quick", "--dry-run"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    let listing = String::from_utf8_lossy(&out.stdout);
    assert!(err.contains("profile quick"), "{err}");
    assert!(!err.contains("min"), "estimated under a minute: {err}");
    for s in [
        "peakbench cpu",
        "peakbench mem",
        "peakbench disk",
        "peakbench net",
    ] {
        assert!(listing.contains(s), "{s}:\n{listing}");
    }
    let out = peakbench(&dir.path().join("h.db"))
        .args(["run", "--profile", "assignment", "--dry-run"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("min"));
    // The profile for `compare`: the quick profile's jobs, six repetitions of each.
    let out = peakbench(&dir.path().join("h.db"))
        .args(["run", "--profile", "ci", "--dry-run"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let ci = String::from_utf8_lossy(&out.stdout);
    let jobs: Vec<&str> = ci.lines().filter(|l| l.starts_with("job ")).collect();
    assert_eq!(
        jobs.len(),
        listing.lines().filter(|l| l.starts_with("job ")).count()
    );
    assert!(jobs.iter().all(|j| j.contains("--repeat=6")), "{ci}");
}

/// A bare `peakbench disk` and `peakbench net` (a job with nothing but its subsystem is the
/// command with its defaults) are estimated at about a minute, well within 90 s; and each
/// command says its estimate before it measures.
#[test]
fn bare_disk_and_net_take_about_a_minute_and_say_so_first() {
    let _share = common::share(false);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bare.toml");
    std::fs::write(
        &path,
        "[[job]]\nsubsystem = 'disk'\n[[job]]\nsubsystem = 'net'\n",
    )
    .unwrap();
    let out = peakbench(&dir.path().join("h.db"))
        .current_dir(dir.path())
        .args(["run", "--profile"])
        .arg(&path)
        .arg("--dry-run")
        .output()
        .unwrap();
    let listing = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{listing}");
    let seconds: Vec<f64> = listing
        .lines()
        .filter_map(|l| {
            // "1 min 02 s", "45 s"
            let about = l.split_once("(about ")?.1.trim_end_matches(')');
            let words: Vec<&str> = about.split_whitespace().collect();
            let mut total = 0.0;
            for pair in words.chunks(2) {
                let n: f64 = pair[0].parse().ok()?;
                total += n * if pair.get(1) == Some(&"min") {
                    60.0
                } else {
                    1.0
                };
            }
            Some(total)
        })
        .collect();
    assert_eq!(seconds.len(), 2, "{listing}");
    for s in seconds {
        assert!(
            (40.0..=80.0).contains(&s),
            "a bare command estimated at {s} s:\n{listing}"
        );
    }
    // The estimate comes first, before any point is measured.
    let out = peakbench(&dir.path().join("h.db"))
        .current_dir(dir.path())
        .args([
            "disk",
            "--engine",
            "null",
            "--size",
            "4M",
            "--block-size",
            "4K",
        ])
        .args([
            "--workload",
            "RR",
            "--runtime",
            "20ms",
            "--ramp",
            "0s",
            "--no-history",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.lines()
            .next()
            .is_some_and(|l| l.starts_with("peakbench disk: "))
            && err.contains("; estimated "),
        "{err}"
    );
}

#[test]
fn bad_profiles_are_one_line_and_exit_2() {
    let _share = common::share(false);
    let dir = tempfile::tempdir().unwrap();
    let bad = [
        ("no-such-profile", None),
        (
            "typo.toml",
            Some("[[job]]\nsubsystem = \"cpu\"\nworklaod = [\"DP\"]\n"),
        ),
        (
            "value.toml",
            Some("[[job]]\nsubsystem = \"disk\"\niodepth = [0]\n"),
        ),
        ("gpu.toml", Some("[[job]]\nsubsystem = \"gpu\"\n")),
        ("broken.toml", Some("[[job]\n")),
    ];
    for (name, text) in bad {
        let path = dir.path().join(name);
        if let Some(t) = text {
            std::fs::write(&path, t).unwrap();
        }
        let out = peakbench(&dir.path().join("h.db"))
            .args(["run", "--profile"])
            .arg(if text.is_some() {
                path.as_os_str()
            } else {
                name.as_ref()
            })
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{name}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{name}: {err}");
    }
}

/// A profile file cannot destroy data on its own: `allow_overwrite = true` on an existing file
/// and `destructive = true` on a block device are refused unless `run` is given the same flag
/// (the file is left as it was), also where `run` is given the other flag; a flag that no job
/// uses is refused too.
#[test]
fn a_profile_cannot_destroy_data_without_the_run_s_flag() {
    let _share = common::share(false);
    let dir = tempfile::tempdir().unwrap();
    let victim = dir.path().join("precious");
    std::fs::write(&victim, b"precious").unwrap();
    let overwrite = dir.path().join("overwrite.toml");
    std::fs::write(
        &overwrite,
        format!(
            "[[job]]\nsubsystem = 'disk'\nworkload = ['WS']\nfile = '{}'\nallow_overwrite = true\nsize = '1M'\nblock_size = '4K'\nruntime = '50ms'\nramp = '0s'\nrepeat = 1\n",
            victim.display()
        ),
    )
    .unwrap();
    let device = dir.path().join("device.toml");
    std::fs::write(
        &device,
        "[defaults]\ndestructive = true\n[[job]]\nsubsystem = 'disk'\nfile = '/dev/loop7'\n",
    )
    .unwrap();
    for (profile, key, extra) in [
        (&overwrite, "allow-overwrite", None),
        (&overwrite, "allow-overwrite", Some("--destructive")),
        (&device, "destructive", None),
        (&device, "destructive", Some("--allow-overwrite")),
    ] {
        for dry in [true, false] {
            let mut cmd = peakbench(&dir.path().join("h.db"));
            cmd.args(["run", "--no-history", "--profile"])
                .arg(profile)
                .args(extra)
                .timeout(std::time::Duration::from_secs(30));
            if dry {
                cmd.arg("--dry-run");
            }
            let out = cmd.output().unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{key} {extra:?}: {err}");
            assert_eq!(err.trim().lines().count(), 1, "{err}");
            let expected = format!("'{key}' destroys data");
            assert!(err.contains(&expected), "{expected}: {err}");
        }
    }
    // A flag no job uses is refused, not ignored.
    let out = peakbench(&dir.path().join("h.db"))
        .args(["run", "--dry-run", "--destructive", "--profile", "quick"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--destructive lets a profile's job set"),
        "{err}"
    );
    assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
    // With the flag on the command line, the profile's choice stands.
    let out = peakbench(&dir.path().join("h.db"))
        .args(["run", "--no-history", "--allow-overwrite", "--profile"])
        .arg(&overwrite)
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert_ne!(std::fs::read(&victim).unwrap(), b"precious");
}

/// A profile cannot load code: a job naming a BLAS library (whose constructor would run at
/// once, in the dry run's check already) is refused before anything is loaded.
#[test]
fn a_profile_cannot_load_a_library() {
    let _share = common::share(false);
    let dir = tempfile::tempdir().unwrap();
    let c = dir.path().join("evil.c");
    let marker = dir.path().join("PWNED");
    std::fs::write(
        &c,
        format!(
            "#include <stdio.h>\n__attribute__((constructor)) static void pwn(void) {{ FILE *f = fopen(\"{}\", \"w\"); if (f) fclose(f); }}\n",
            marker.display()
        ),
    )
    .unwrap();
    let lib = dir.path().join("libblas-fast.so");
    let built = std::process::Command::new("cc")
        .args(["-shared", "-fPIC", "-o"])
        .arg(&lib)
        .arg(&c)
        .status();
    if !built.is_ok_and(|s| s.success()) {
        println!("SKIPPED: no C compiler to build the library (apt-get install gcc)");
        return;
    }
    let profile = dir.path().join("evil.toml");
    std::fs::write(
        &profile,
        format!(
            "[[job]]\nsubsystem = 'cpu'\nworkload = ['DGEMM']\nblas = 'system'\nblas_library = '{}'\n",
            lib.display()
        ),
    )
    .unwrap();
    for dry in [true, false] {
        let mut cmd = peakbench(&dir.path().join("h.db"));
        cmd.args(["run", "--no-history", "--profile"])
            .arg(&profile)
            .timeout(std::time::Duration::from_secs(30));
        if dry {
            cmd.arg("--dry-run");
        }
        let out = cmd.output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains("names a library to load"), "{err}");
        assert!(!marker.exists(), "the library was loaded: {err}");
    }
}

/// A profile's text is printed escaped: its description in the plan's line, its options in the
/// jobs' lines (dry run and run alike).
#[test]
fn a_profile_s_text_is_never_printed_raw() {
    let _share = common::share(false);
    let dir = tempfile::tempdir().unwrap();
    let profile = dir.path().join("esc.toml");
    std::fs::write(
        &profile,
        "description = \"\\u001b]0;TITLE\\u0007\\u001b[31mRED \\u202eevil\"\n\
         [[job]]\nsubsystem = 'cpu'\nworkload = ['NULL']\nexperiment = 'x'\nrepeat = 2\n\
         [[job]]\nsubsystem = 'disk'\nengine = 'null'\nworkload = ['RR']\nsize = '1M'\nblock_size = '4K'\nruntime = '20ms'\nramp = '0s'\nrepeat = 2\ndir = \"d\\u001b[2J\\u202e\"\n",
    )
    .unwrap();
    std::fs::create_dir(dir.path().join("d\u{1b}[2J\u{202e}")).unwrap();
    // A dry run, a budgeted dry run (the plan's line with the budget's words), a run.
    for (dry, budget) in [(true, false), (true, true), (false, false)] {
        let mut cmd = peakbench(&dir.path().join("h.db"));
        cmd.current_dir(dir.path())
            .args(["run", "--no-history", "--profile"])
            .arg(&profile)
            .timeout(std::time::Duration::from_secs(60));
        if dry {
            cmd.arg("--dry-run");
        } else {
            cmd.arg("-v");
        }
        if budget {
            cmd.args(["--budget", "1m"]);
        }
        let out = cmd.output().unwrap();
        let text = String::from_utf8_lossy(&[out.stdout, out.stderr].concat()).into_owned();
        assert!(out.status.success(), "{text}");
        assert!(text.contains("RED"), "{text}");
        for bad in ['\u{1b}', '\u{7}', '\u{202e}'] {
            assert!(
                !text.contains(bad),
                "dry run {dry}, budget {budget}: {bad:?} raw in\n{text}"
            );
        }
    }
}

#[test]
fn a_failing_job_does_not_stop_the_suite() {
    let _share = common::share(false);
    let dir = tempfile::tempdir().unwrap();
    let (profile, json, db) = (
        dir.path().join("p.toml"),
        dir.path().join("r.json"),
        dir.path().join("h.db"),
    );
    // Job 2's server does not answer (a closed port on loopback): it is checked before the
    // run (its address is one), and fails when it runs.
    std::fs::write(
        &profile,
        "[defaults]\nrepeat = 1\n\
         [[job]]\nsubsystem = 'cpu'\nworkload = ['NULL']\nthreads = 1\nwarmup = 0\n\
         [[job]]\nsubsystem = 'net'\nserver = '127.0.0.1:1'\nworkload = ['LATENCY']\n\
         protocol = ['tcp']\nduration = '200ms'\n\
         [[job]]\nsubsystem = 'mem'\nworkload = ['NULL']\nthreads = 1\nwarmup = 0\n",
    )
    .unwrap();
    let out = measuring(&db)
        .args(["run", "--profile"])
        .arg(&profile)
        .arg("--json")
        .arg(&json)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("job 2/3 (net) failed"), "{err}");
    assert!(err.contains("1 of 3 jobs failed: job 2 (net)"), "{err}");
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let subsystems: Vec<&str> = doc["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["subsystem"].as_str().unwrap())
        .collect();
    assert!(
        subsystems.contains(&"cpu") && subsystems.contains(&"mem"),
        "{subsystems:?}"
    );
    // The measured points are shown, and the run is stored as failed.
    assert!(String::from_utf8_lossy(&out.stdout).contains("Memory\n"));
    let runs = peakbench::history::Store::open(&db)
        .unwrap()
        .runs()
        .unwrap();
    assert_eq!(runs[0].status, "failed");
}

/// `--dry-run` checks every job on this machine as it would run, before anything runs: a job
/// that would fail in its 20th minute (a record size the disk refuses, a directory that does
/// not exist, a memory size above what is there) fails the dry run, and the real run, at once
/// with the job named; nothing is created.
#[test]
fn a_dry_run_checks_every_job_and_names_the_one_that_would_fail() {
    let _share = common::share(false);
    let dir = tempfile::tempdir().unwrap();
    let ok = "[[job]]\nsubsystem = 'cpu'\nworkload = ['NULL']\nthreads = 1\n";
    for (bad, expected) in [
        (
            "[[job]]\nsubsystem = 'disk'\nblock_size = '2G'\nengine = 'null'\n",
            "job 2 (disk): --block-size 2147483648 is out of range",
        ),
        (
            "[[job]]\nsubsystem = 'disk'\ndir = '/nonexistent-peakbench-dir'\n",
            "job 2 (disk): directory /nonexistent-peakbench-dir does not exist",
        ),
        (
            "[[job]]\nsubsystem = 'mem'\nworkload = ['COPY']\narray_size = '1000T'\n",
            "job 2 (mem): the working set",
        ),
        (
            "[[job]]\nsubsystem = 'cpu'\nworkload = ['LINPACK']\nn = 1000000\nthreads = 1\n",
            "job 2 (cpu): LINPACK at N = 1000000 needs",
        ),
        (
            "[[job]]\nsubsystem = 'mem'\nworkload = ['COPY']\nblock_size = '1K'\n",
            "job 2 (mem): --block-size sizes the blocks",
        ),
    ] {
        let path = dir.path().join("p.toml");
        std::fs::write(&path, format!("{ok}{bad}")).unwrap();
        for extra in [&["--dry-run"][..], &[][..]] {
            let out = peakbench(&dir.path().join("h.db"))
                .args(["run", "--profile"])
                .arg(&path)
                .args(extra)
                .output()
                .unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{bad}: {err}");
            assert_eq!(err.trim().lines().count(), 1, "{err}");
            assert!(err.contains(expected), "{expected}: {err}");
        }
        assert!(!dir.path().join("h.db").exists(), "nothing was stored");
    }
}

/// The scales a run fitted to `--budget` applied, from its lines: the plan's ("to fit --budget
/// 15 s: times × 0.523") and any refit's ("fitted again (times × 0.400)").
fn budget_scales(err: &str) -> Vec<f64> {
    err.split("times × ")
        .skip(1)
        .map(|rest| {
            let n: String = rest
                .chars()
                .take_while(|c| c.is_ascii_digit() || *c == '.')
                .collect();
            n.parse()
                .unwrap_or_else(|_| panic!("no scale after 'times ×' in {err}"))
        })
        .collect()
}

/// The estimate of a plan's first line ("4 jobs, estimated 14 s", "… 1 min 05 s"), in seconds.
fn estimated_s(err: &str) -> f64 {
    let rest = err
        .split("estimated ")
        .nth(1)
        .unwrap_or_else(|| panic!("no estimate in {err}"));
    let words: Vec<&str> = rest.split_whitespace().take(4).collect();
    let n = |w: &str| -> f64 {
        w.trim_end_matches([';', ','])
            .parse()
            .unwrap_or_else(|_| panic!("cannot read the estimate in {err}"))
    };
    match words.as_slice() {
        [m, "min", s, ..] => n(m) * 60.0 + n(s),
        [s, ..] => n(s),
        _ => panic!("no estimate in {err}"),
    }
}

/// `--budget` fits a profile in a wall time: the jobs' times are shortened alike, the plan's
/// estimate is within the budget, and the run applies the fitted times (each disk and network
/// point's window is its job's time × a scale the run printed). How close the wall time comes
/// to the budget is measured by `bench/budget-accuracy.sh`, not here: on a shared machine a
/// test of a wall-clock window fails for reasons of the machine's (the run is only bounded,
/// to catch a hang). A budget below the profile's shortest (its first job alone, at its
/// floors) is refused with the least budget.
#[test]
fn a_budget_shortens_the_jobs_and_the_estimate_holds() {
    let _share = common::share(true);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("p.toml");
    std::fs::write(
        &path,
        "[defaults]\nrepeat = 3\n\
         [[job]]\nsubsystem = 'cpu'\nworkload = ['DP', 'INT64']\nthreads = [1, 2]\nduration = '1s'\nwarmup = 0\n\
         [[job]]\nsubsystem = 'mem'\nworkload = ['COPY']\nthreads = 1\narray_size = '8Mi'\nduration = '1s'\nwarmup = 0\n\
         [[job]]\nsubsystem = 'disk'\nworkload = ['RR']\nengine = 'null'\nsize = '4M'\nblock_size = '4K'\nruntime = '2s'\nramp = '0s'\n\
         [[job]]\nsubsystem = 'net'\nworkload = ['LATENCY']\nprotocol = ['tcp']\nduration = '2s'\nomit = '0s'\n",
    )
    .unwrap();
    let dry = real(&dir.path().join("h.db"))
        .args(["run", "--profile"])
        .arg(&path)
        .args(["--dry-run", "--budget", "15s"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&dry.stderr);
    assert!(dry.status.success(), "{err}");
    // A dry run measures nothing: not even the calibration's probes.
    assert!(
        err.contains("to fit --budget 15 s, estimates not calibrated (a dry run measures nothing"),
        "{err}"
    );
    assert!(err.contains(": times ×"), "{err}");
    let planned = budget_scales(&err);
    assert_eq!(planned.len(), 1, "{err}");
    assert!(planned[0] > 0.0 && planned[0] < 1.0, "{err}");
    // The estimate is within the budget and fills most of it.
    let estimate = estimated_s(&err);
    assert!((10.0..=15.0).contains(&estimate), "{estimate} s: {err}");
    let out = real(&dir.path().join("h.db"))
        .args(["run", "--profile"])
        .arg(&path)
        .args(["--budget", "15s", "--no-history", "--json"])
        .arg(dir.path().join("r.json"))
        .timeout(std::time::Duration::from_secs(120))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    // The run probes each subsystem first and says what it found.
    let said = err.split_whitespace().collect::<Vec<_>>().join(" ");
    for sub in ["cpu ×", "mem ×", "disk ×", "net ×"] {
        assert!(
            said.contains("calibrated in ") && said.contains(sub),
            "{sub}: {err}"
        );
    }
    let scales = budget_scales(&err);
    assert!(!scales.is_empty(), "{err}");
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("r.json")).unwrap()).unwrap();
    let results = doc["results"].as_array().unwrap();
    let workloads: std::collections::BTreeSet<&str> = results
        .iter()
        .map(|r| r["workload"].as_str().unwrap())
        .collect();
    assert_eq!(
        workloads,
        ["COPY", "DP", "INT64", "LATENCY", "RR"]
            .into_iter()
            .collect()
    );
    // The disk job was written with 2 s, the network job with 2 s: each point ran its job's
    // time × a scale the run said (the plan's, or a refit's after a job ran long), to the
    // millisecond, never the time as written.
    for r in results {
        let window = match r["workload"].as_str().unwrap() {
            "RR" => r["params"]["runtime_s"].as_f64().unwrap(),
            "LATENCY" => r["params"]["duration_s"].as_f64().unwrap(),
            _ => continue,
        };
        assert!(
            scales.iter().any(|s| (window - 2.0 * s).abs() <= 0.002),
            "a {window} s window, scales {scales:?}: {r}"
        );
        assert!(r["samples"].as_array().unwrap().len() <= 3, "{r}");
    }
    let small = real(&dir.path().join("h.db"))
        .args(["run", "--profile"])
        .arg(&path)
        .args(["--dry-run", "--budget", "50ms"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&small.stderr);
    assert_eq!(small.status.code(), Some(2), "{err}");
    assert!(
        err.contains("takes at least") && err.contains("give --budget"),
        "{err}"
    );
}

/// `--budget` with `--reference` fits the tools too: the plan says how (each tool run once a
/// point), its estimate is within the budget with the tools' time in it, and the run gives every
/// row the tool's figure, run once (sysbench memory, where it is installed). The wall time
/// against the budget is measured by `bench/budget-accuracy.sh`, not asserted here.
#[test]
fn a_budget_with_references_fits_the_tools_too() {
    let sysbench = std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .any(|d| d.join("sysbench").is_file());
    if !sysbench {
        println!("SKIPPED: sysbench is not installed (apt-get install sysbench)");
        return;
    }
    let _share = common::share(true);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("p.toml");
    // Arrays in DRAM: a cache-resident array's repetitions run shorter than --duration (its
    // passes are calibrated from one cold pass), which would leave the run 20 % short.
    std::fs::write(
        &path,
        "[[job]]\nsubsystem = 'mem'\nworkload = ['RS', 'WS']\nblock_size = ['8', '1K']\n\
         threads = [1, 2]\narray_size = '64M'\nduration = '1s'\nwarmup = 0\nrepeat = 3\n",
    )
    .unwrap();
    let budget = 10.0;
    let dry = real(&dir.path().join("h.db"))
        .args([
            "run",
            "--dry-run",
            "--reference",
            "--budget",
            "10s",
            "--profile",
        ])
        .arg(&path)
        .env("COLUMNS", "400")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&dry.stderr);
    assert!(dry.status.success(), "{err}");
    assert!(
        err.contains("each reference tool run once a point"),
        "{err}"
    );
    assert!(
        err.contains("references: a tool's figure for 16 of 16 points"),
        "{err}"
    );
    let estimate = estimated_s(&err);
    assert!(estimate <= budget, "{estimate} s: {err}");
    let out = real(&dir.path().join("h.db"))
        .args([
            "run",
            "--reference",
            "--budget",
            "10s",
            "--no-history",
            "--json",
        ])
        .arg(dir.path().join("r.json"))
        .arg("--profile")
        .arg(&path)
        .timeout(std::time::Duration::from_secs(120))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    // The run's plan is calibrated on this machine: where it measures slow (a busy host), the
    // plan may leave out the tools' runs longer than a 40th of the budget, and says so. The
    // rows hold what the run's plan said, each tool run once.
    let covered: usize = err
        .split("references: a tool's figure for ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("the run does not say how many points have a tool: {err}"));
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("r.json")).unwrap()).unwrap();
    let rows = doc["results"].as_array().unwrap();
    let mut with_tool = 0;
    for r in rows {
        if r["reference"].is_null() {
            let why = r["reference_unknown_reason"].as_str().unwrap_or_default();
            assert!(why.contains("--budget leaves a tool's run"), "{r}");
            continue;
        }
        with_tool += 1;
        assert_eq!(r["reference"]["tool"], "sysbench", "{r}");
        // Run once: one sample, however many repetitions the point had.
        assert_eq!(
            r["reference"]["samples"].as_array().unwrap().len(),
            1,
            "{r}"
        );
    }
    assert_eq!(with_tool, covered, "{err}");
    if covered < rows.len() {
        println!(
            "NOTE: the calibrated plan left the tools out of {} rows: {err}",
            rows.len() - covered
        );
    }
}

/// `--dry-run --reference` says, under each job, which tool will give which points a
/// reference figure and which will have none and why, counts the points covered, and adds the
/// tools' time to the estimate. With no tool on PATH every point says which tool is missing;
/// a random 1 KiB block says why sysbench cannot measure it, whatever is installed.
#[test]
fn a_dry_run_with_references_lists_each_points_tool() {
    let _share = common::share(false);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("p.toml");
    std::fs::write(
        &path,
        "[[job]]\nsubsystem = 'mem'\nworkload = ['RS', 'RR']\nblock_size = ['8', '1K']\n\
         threads = 1\narray_size = '8M'\nduration = '10ms'\nrepeat = 2\n",
    )
    .unwrap();
    let dry = |path_env: Option<&std::path::Path>, reference: bool| {
        let mut cmd = peakbench(&dir.path().join("h.db"));
        cmd.args(["run", "--dry-run", "--profile"]).arg(&path);
        if reference {
            cmd.arg("--reference");
        }
        if let Some(p) = path_env {
            cmd.env("PATH", p);
        }
        let out = cmd.env("COLUMNS", "400").output().unwrap();
        assert!(out.status.success(), "{out:?}");
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stderr),
            String::from_utf8_lossy(&out.stdout)
        )
    };
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let none = dry(Some(&empty), true);
    assert!(
        none.contains("references: a tool's figure for 0 of 8 points"),
        "{none}"
    );
    assert!(
        none.contains("reference none: RS 8 B blocks, RS 1 KiB blocks, RR 8 B blocks (6 points): sysbench not found: apt-get install sysbench"),
        "{none}"
    );
    let refused = "reference none: RR 1 KiB blocks (2 points): sysbench cannot run this point: --memory-access-mode=rnd reads or writes random 8-byte words, not random 1024-byte blocks";
    assert!(none.contains(refused), "{none}");
    // Without --reference, no such lines.
    assert!(
        !dry(Some(&empty), false).contains("reference "),
        "no references asked"
    );
    let sysbench = std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .any(|d| d.join("sysbench").is_file());
    if !sysbench {
        println!(
            "SKIPPED the installed part: sysbench is not installed (apt-get install sysbench)"
        );
        return;
    }
    let with = dry(None, true);
    assert!(
        with.contains("references: a tool's figure for 6 of 8 points"),
        "{with}"
    );
    assert!(
        with.contains(
            "reference sysbench: RS 8 B blocks, RS 1 KiB blocks, RR 8 B blocks (6 points)"
        ),
        "{with}"
    );
    assert!(with.contains(refused), "{with}");
    // The tools' time is in the estimate: two sysbench runs (RS, RR 8 B) of 1 s, twice each.
    let estimate = |text: &str| {
        let at = text.find("estimated ").unwrap() + "estimated ".len();
        let words: Vec<&str> = text[at..].split_whitespace().take(4).collect();
        // "42 s" or "3 min 05 s".
        let n = |w: &str| w.parse::<f64>().unwrap_or(0.0);
        match words.as_slice() {
            [m, "min", s, ..] => n(m) * 60.0 + n(s),
            [s, ..] => n(s),
            _ => 0.0,
        }
    };
    let without = dry(None, false);
    let (a, b) = (estimate(&without), estimate(&with));
    // (Whole seconds: "4 s"; below a second, two decimals.)
    assert!(b >= a + 3.5, "with references {b} s, without {a} s: {with}");
}

/// A dry run under `--budget` lists the command lines the run will run: each job's times as
/// the plan line's scale fits them (whole milliseconds) and its repetitions cut, never the
/// profile's as written; the same profile without a budget lists them as written.
#[test]
fn a_budgeted_dry_run_lists_the_fitted_command_lines() {
    let _share = common::share(false);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("p.toml");
    std::fs::write(
        &path,
        "[defaults]\nrepeat = 5\n\
         [[job]]\nsubsystem = 'cpu'\nworkload = ['NULL', 'DP']\nthreads = 1\nduration = '2s'\nwarmup = 0\n\
         [[job]]\nsubsystem = 'disk'\nworkload = ['RR']\nengine = 'null'\nsize = '4M'\nblock_size = '4K'\nruntime = '4s'\nramp = '1s'\n",
    )
    .unwrap();
    let dry = |extra: &[&str]| {
        let out = peakbench(&dir.path().join("h.db"))
            .current_dir(dir.path())
            .args(["run", "--profile"])
            .arg(&path)
            .arg("--dry-run")
            .args(extra)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(out.status.success(), "{err}");
        (String::from_utf8_lossy(&out.stdout).into_owned(), err)
    };
    let (written, _) = dry(&[]);
    assert!(
        written.contains("--duration=2s") && written.contains("--runtime=4s"),
        "{written}"
    );
    assert!(written.contains("--repeat=5"), "{written}");
    let (fitted, err) = dry(&["--budget", "4s"]);
    let scales = budget_scales(&err);
    assert_eq!(scales.len(), 1, "{err}");
    let scale = scales[0];
    assert!(scale > 0.0 && scale < 1.0, "{err}");
    // Each option's fitted value, in seconds, from the listing.
    let option = |key: &str| -> Vec<f64> {
        fitted
            .split_whitespace()
            .filter_map(|w| w.strip_prefix(&format!("--{key}=")))
            .map(|v| {
                let (n, unit) = v.split_at(v.find(|c: char| c.is_ascii_alphabetic()).unwrap());
                let n: f64 = n.parse().unwrap();
                match unit {
                    "s" => n,
                    "ms" => n / 1e3,
                    other => panic!("{key}={v}: unit {other}"),
                }
            })
            .collect()
    };
    // The scale is printed to 3 decimals, the times to the millisecond.
    for (key, written_s) in [("duration", 2.0), ("runtime", 4.0), ("ramp", 1.0)] {
        let got = option(key);
        assert_eq!(got.len(), 1, "--{key}: {fitted}");
        assert!(
            (got[0] - written_s * scale).abs() <= written_s * 0.0005 + 0.0006,
            "--{key}={} s, {written_s} s × {scale}: {fitted}",
            got[0]
        );
    }
    assert!(!fitted.contains("--duration=2s") && !fitted.contains("--runtime=4s"));
    if err.contains("at most 2 repetitions") {
        assert_eq!(fitted.matches("--repeat=2").count(), 2, "{fitted}");
        assert!(!fitted.contains("--repeat=5"), "{fitted}");
    }
}
