//! `run`'s tests: the profiles' jobs as command lines, and `--budget`'s fit (floors, cuts,
//! calibration, refits).

use super::*;

thread_local! {
    /// Job lines parsed by clap on this thread ([`Read::of`]'s).
    pub(super) static PARSES: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Profile `name` read, its jobs parsed.
fn read(name: &str) -> Read {
    Read::of(load(name).unwrap()).unwrap()
}

#[test]
fn every_built_in_job_is_a_valid_command_line() {
    for (name, _) in BUILT_IN {
        let p = Profile::built_in(name).unwrap();
        for (i, job) in p.jobs.iter().enumerate() {
            let line = job.argv(&p.defaults, |k| accepts(job.subsystem, k), 2);
            if let Err(e) = parse_job(&line, &[]) {
                panic!("profile {name} job {}: {line:?}: {e}", i + 1);
            }
        }
    }
}

/// The machine, with the shortest clock measurement.
fn tiny_sys() -> SystemInfo {
    crate::sysinfo::collect(crate::sysinfo::ClockBudget {
        warmup: Duration::from_millis(1),
        sample: Duration::from_millis(1),
        samples: 1,
    })
}

/// Issue 49: at small budgets the fit keeps every point's timed work (a fixed amount of
/// work at a core's peak) at the floor or above (or as written, where that is less), and
/// drops repetitions, sweep points and whole jobs instead, and says which.
#[test]
fn a_fitted_plan_keeps_every_point_above_its_floor() {
    let sys = tiny_sys();
    let cal = Calibration::default();
    for (name, _) in BUILT_IN {
        let r = read(name);
        let (_, written) = plan(&r, &sys, Fit::default(), None, &cal).unwrap();
        for secs in [10, 60, 180] {
            let budget = Duration::from_secs(secs);
            let Ok((_, jobs, fit)) = fit_budget(&r, &sys, budget, None, &cal) else {
                continue;
            };
            assert!(total(&jobs) <= budget, "{name} at {secs} s");
            assert!(jobs.len() <= written.len());
            for (i, (job, as_written)) in jobs.iter().zip(&written).enumerate() {
                let (Some(t), Some(w)) = (job.least_timed, as_written.least_timed) else {
                    continue;
                };
                // A fixed amount of work is a whole number of operations or bytes.
                let floor = POINT_FLOOR.min(w).mul_f64(0.999);
                assert!(
                    t >= floor,
                    "{name} at {secs} s, job {}: {t:?} of timed work, below {floor:?}",
                    i + 1
                );
            }
            let cuts = dropped(&r, fit, 0);
            assert_eq!(
                fit.thin_sweeps || fit.jobs_kept.is_some_and(|k| k < written.len()),
                cuts.starts_with("dropped: "),
                "{name} at {secs} s: {fit:?} {cuts}"
            );
        }
    }
}

/// The calibration scales the estimates: on a machine 4 times slower than the estimates
/// assume, every job's estimate is 4 times as long, and the same budget fits less.
#[test]
fn a_slow_machine_is_fitted_shorter() {
    let sys = tiny_sys();
    let normal = Calibration::default();
    let subsystems = [
        Subsystem::Cpu,
        Subsystem::Mem,
        Subsystem::Disk,
        Subsystem::Net,
    ];
    let slow = Calibration::with(&subsystems.map(|s| (s, 4.0)));
    let quick = read("quick");
    let (_, fast) = plan(&quick, &sys, Fit::default(), None, &normal).unwrap();
    let (_, slower) = plan(&quick, &sys, Fit::default(), None, &slow).unwrap();
    for (a, b) in fast.iter().zip(&slower) {
        let own = |j: &Job| j.estimate.saturating_sub(JOB_OVERHEAD).as_secs_f64();
        assert!(
            (own(b) - 4.0 * own(a)).abs() < 1e-3,
            "{} {}",
            own(a),
            own(b)
        );
    }
    let budget = total(&fast) / 2;
    let (_, _, fit) = fit_budget(&quick, &sys, budget, None, &normal).unwrap();
    let (_, jobs, slow_fit) = fit_budget(&quick, &sys, budget, None, &slow).unwrap();
    assert!(total(&jobs) <= budget);
    assert_ne!(fit, slow_fit);
    let repeats = |f: Fit| f.max_repeat.unwrap_or(usize::MAX);
    assert!(
        slow_fit.time_scale < fit.time_scale
            || repeats(slow_fit) < repeats(fit)
            || slow_fit.thin_sweeps
            || slow_fit.jobs_kept.is_some(),
        "{fit:?} {slow_fit:?}"
    );
}

/// A sweep is cut to its ends whether a job or `[defaults]` gives it, as a list or as a
/// text of values; a range and a single value are left whole.
#[test]
fn sweeps_are_thinned_wherever_they_are_written() {
    use crate::profile::Value;
    let list = |v: &[&str]| Value::List(v.iter().map(|s| s.to_string()).collect());
    let mut threads = list(&["1", "2", "4", "8"]);
    assert_eq!(thin("threads", &mut threads).as_deref(), Some("2,4"));
    assert_eq!(threads, list(&["1", "8"]));
    let mut text = Value::Text("1, 2,4,16".into());
    assert_eq!(thin("streams", &mut text).as_deref(), Some("2,4"));
    assert_eq!(text, Value::Text("1,16".into()));
    for mut whole in [
        Value::Text("1..8".into()),
        Value::Text("4".into()),
        list(&["1", "2"]),
    ] {
        let before = whole.clone();
        assert_eq!(thin("threads", &mut whole), None);
        assert_eq!(whole, before);
    }
    // Not a sweep: a workload list stays whole.
    let mut workloads = list(&["RS", "WS", "RR"]);
    assert_eq!(thin("workload", &mut workloads), None);
    let mut profile = crate::profile::Profile::parse(
        "t",
        "[defaults]\nthreads = [1, 2, 4]\n[[job]]\nsubsystem = 'cpu'\nworkload = ['DP']\n",
    )
    .unwrap();
    let cuts = cut(&mut profile, shortest(None, None, None));
    assert_eq!(cuts, [(0, "[defaults] threads 2".to_string())]);
}

/// A refit lists what it drops of the jobs left only (those before it have run), and the
/// jobs it drops whole.
#[test]
fn a_refit_lists_the_cuts_of_the_jobs_left() {
    let fit = shortest(None, None, Some(15));
    let assignment = read("assignment");
    let all = dropped(&assignment, fit, 0);
    assert!(
        all.contains("C1 threads 2") && all.contains("D4 threads"),
        "{all}"
    );
    let left = dropped(&assignment, fit, 12);
    assert!(!left.contains("C1 ") && !left.contains("M1 "), "{left}");
    assert!(left.contains("D4 threads 2,4,8,12,24"), "{left}");
    assert!(
        left.contains("whole N1, N3, N2 (job 18), N2 (job 19)"),
        "{left}"
    );
}

/// The assignment's C3 (10⁹ operations between up to 8 threads) times under the floor as
/// the reports fixed it: the dry run says so, and of C1 (10¹²) it says nothing.
#[test]
fn a_job_under_the_floor_as_written_is_said() {
    let sys = tiny_sys();
    let (_, jobs) = plan(
        &read("assignment"),
        &sys,
        Fit::default(),
        None,
        &Calibration::default(),
    )
    .unwrap();
    assert!(below_floor(&jobs[0]).is_none());
    let c3 = below_floor(&jobs[1]).expect("C3 is under the floor");
    assert!(c3.contains("under the 50 ms floor"), "{c3}");
}

/// Every calibration probe is a benchmark its command accepts (the null engine and a
/// directory set on the disk's), and its line parses to the options it runs with.
#[test]
fn every_calibration_probe_is_a_valid_command_line() {
    let disk = [
        Setting::Path("dir", "/tmp".into()),
        Setting::Engine(crate::results::params::EngineKind::Null),
    ];
    let sys = tiny_sys();
    for sub in Subsystem::ALL {
        let bench = super::super::calibration::probe_bench(sub, 1_000_000, &disk);
        let line = bench.line();
        let parsed = parse_job(&line, &[]).unwrap_or_else(|e| panic!("{sub}: {line:?}: {e}"));
        let made = super::super::benchmark::command_of(&bench).unwrap();
        assert_eq!(format!("{made:?}"), format!("{parsed:?}"), "{line:?}");
        if let Err(e) = request(&made, &sys).and_then(|r| r.check(&sys)) {
            panic!("{sub}: {line:?}: {e}");
        }
    }
}

/// A fitted option replaces the job's own word (written `--key=value`), else is added;
/// a longer option that starts with the key's name is left alone.
#[test]
fn fitted_options_replace_the_jobs_own() {
    let line: Vec<String> = ["mem", "--duration=1s", "--duration-x=1", "--repeat=5"]
        .map(String::from)
        .to_vec();
    let fitted = with_options(
        line,
        &[
            Setting::Time("duration", Duration::from_millis(250)),
            Setting::Time("omit", Duration::from_millis(10)),
        ],
    );
    assert_eq!(
        fitted,
        [
            "mem",
            "--duration-x=1",
            "--repeat=5",
            "--duration=250ms",
            "--omit=10ms"
        ]
    );
}

/// Under a fit, a cpu job's line carries its fitted duration and repetitions, a LINPACK
/// job's (whose duration is its solve's) only its repetitions; without one, nothing.
#[test]
fn a_jobs_fitted_options_are_those_the_fit_changes() {
    let fit = Fit {
        time_scale: 0.25,
        max_repeat: Some(2),
        ..Fit::default()
    };
    let sys = tiny_sys();
    let fitted = |c: &Command, f: &Fit| -> Vec<(&str, String)> {
        fitted(c, f, &sys)
            .iter()
            .map(|x| (x.key(), x.value().unwrap_or_default()))
            .collect()
    };
    let parse = |words: &[&str]| {
        let line: Vec<String> = words.iter().map(|w| w.to_string()).collect();
        parse_job(&line, &[]).unwrap()
    };
    let dp = parse(&["cpu", "--workload=DP", "--duration=1s", "--repeat=3"]);
    assert_eq!(
        fitted(&dp, &fit),
        [("duration", "250ms".to_string()), ("repeat", "2".into())]
    );
    let linpack = parse(&["cpu", "--workload=LINPACK", "--n=1000", "--repeat=3"]);
    assert_eq!(fitted(&linpack, &fit), [("repeat", "2".to_string())]);
    assert!(fitted(&dp, &Fit::default()).is_empty());
    let latency = parse(&["mem", "--workload=LATENCY", "--repeat=2"]);
    // Its samples' 25 ms × 0.25, at least 5 ms.
    assert_eq!(fitted(&latency, &fit), [("duration", "6ms".to_string())]);
    // Fixed work is cut no further than a thread's 50 ms at a core's peak.
    let tiny = Fit {
        time_scale: 1e-6,
        ..fit
    };
    let ops = parse(&[
        "cpu",
        "--workload=DP",
        "--threads=1",
        "--total-ops=1000000000000",
    ]);
    let Command::Cpu(args) = &ops else {
        unreachable!()
    };
    let floor = super::super::cpu::request(args)
        .unwrap()
        .floor_ops(&sys, POINT_FLOOR);
    assert!(floor > 1_000_000, "{floor}");
    assert_eq!(
        fitted(&ops, &tiny)[0],
        ("total-ops", floor.min(1_000_000_000_000).to_string())
    );
    // A point's duration keeps the floor.
    assert_eq!(fitted(&dp, &tiny)[0], ("duration", "50ms".to_string()));
}

#[test]
fn defaults_go_only_where_accepted() {
    assert!(accepts(Subsystem::Cpu, "repeat") && accepts(Subsystem::Disk, "iodepth"));
    assert!(!accepts(Subsystem::Cpu, "iodepth") && !accepts(Subsystem::Net, "nope"));
}

/// A fit set on a job's parsed options is the job its fitted line parses to (so within every
/// option's bounds, which only the command line's parse checks): every job of every built-in
/// profile, under fits that change times, amounts and repetitions, from the least a budget
/// gives (a thousandth of the times, one repetition) to none.
#[test]
fn a_fit_set_on_the_parsed_job_is_its_fitted_line_parsed() {
    let sys = tiny_sys();
    let mut changed_any = 0;
    for fit in [(0.3, Some(2)), (1e-3, Some(1)), (1.0, None)].map(|(time_scale, max_repeat)| Fit {
        time_scale,
        max_repeat,
        ..Fit::default()
    }) {
        for (name, _) in BUILT_IN {
            let profile = load(name).unwrap();
            for job in &profile.jobs {
                let accepts = |k: &str| accepts(job.subsystem, k);
                let line = job.argv(&profile.defaults, accepts, 2);
                let inherited: Vec<&str> = job.inherited(&profile.defaults, accepts).collect();
                let mut applied = parse_job(&line, &inherited).unwrap();
                let changed = fitted(&applied, &fit, &sys);
                apply(&mut applied, &changed).unwrap();
                let still_inherited: Vec<&str> = inherited
                    .iter()
                    .copied()
                    .filter(|k| !changed.iter().any(|f| f.key() == *k))
                    .collect();
                let reparsed = parse_job(&with_options(line.clone(), &changed), &still_inherited);
                assert_eq!(
                    format!("{applied:?}"),
                    format!("{:?}", reparsed.unwrap()),
                    "{name} at {fit:?}: {line:?}"
                );
                changed_any += usize::from(!changed.is_empty());
            }
        }
    }
    assert!(changed_any >= 20, "{changed_any}");
}

/// A profile's jobs are parsed when it is read: once each, and once more where thinning its
/// sweeps changes a job's line. A budget's fit then plans it over and over (a bisection on its
/// times) and parses nothing: the assignment profile's 19 jobs, fitted to a budget that
/// thins its sweeps too.
#[test]
fn a_budgets_fit_parses_nothing_after_the_profile_is_read() {
    let sys = tiny_sys();
    let cal = Calibration::default();
    PARSES.with(|n| n.set(0));
    let r = read("assignment");
    let at_read = PARSES.with(|n| n.get());
    assert!((19..=2 * 19).contains(&at_read), "{at_read} parses");
    PARSES.with(|n| n.set(0));
    let (_, jobs, fit) = fit_budget(&r, &sys, Duration::from_secs(300), None, &cal).unwrap();
    assert!(!jobs.is_empty() && fit.scales(), "{fit:?}");
    // Budgets down to one that thins the sweeps (or refuses: too small for the first job).
    let thinned = [120, 60, 30, 20, 10, 5].into_iter().find_map(|s| {
        fit_budget(&r, &sys, Duration::from_secs(s), None, &cal)
            .ok()
            .filter(|(_, _, f)| f.thin_sweeps)
    });
    assert!(thinned.is_some(), "no budget thinned the sweeps");
    assert_eq!(PARSES.with(|n| n.get()), 0, "parses after reading");
}
