//! Profiles: a whole suite declared in a TOML file, like a fio job file. Each `[[job]]` names a
//! subsystem and sets that subcommand's options by their long names; `[defaults]` apply to
//! every job that accepts them. The built-in profiles (`quick`, `assignment`) are such files,
//! under profiles/ in the repository.
//!
//! A job becomes a command line (`peakbench cpu --workload DP,SP --threads 2 …`) that the
//! subcommand's own parser checks, so a profile accepts exactly what the command line does and
//! reports the same errors.

use crate::bench::linalg::workload::LinalgWorkload;
use crate::bench::mem::DEFAULT_LATENCY_MAX;
use crate::bench::mem::latency::staircase_sizes;
use crate::bench::registry;
use std::time::Duration;

/// The built-in profiles: name, TOML text.
pub const BUILT_IN: &[(&str, &str)] = &[
    ("quick", include_str!("../profiles/quick.toml")),
    ("assignment", include_str!("../profiles/assignment.toml")),
];

/// The subsystems a job may name.
pub const SUBSYSTEMS: &[&str] = &["cpu", "mem", "disk", "net"];

/// One option's value as written in the file.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Text(String),
    Flag(bool),
    List(Vec<String>),
}

/// One job: a subsystem and its options (by name; their order does not matter).
#[derive(Debug, Clone, PartialEq)]
pub struct Job {
    pub subsystem: String,
    pub options: Vec<(String, Value)>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Profile {
    pub name: String,
    pub description: String,
    pub defaults: Vec<(String, Value)>,
    pub jobs: Vec<Job>,
}

fn value(key: &str, v: &toml::Value) -> Result<Value, String> {
    let scalar = |v: &toml::Value| match v {
        toml::Value::String(s) => Ok(s.clone()),
        toml::Value::Integer(i) => Ok(i.to_string()),
        toml::Value::Float(f) => Ok(f.to_string()),
        _ => Err(format!(
            "option '{key}' has a value of type {}; use a string, a number, a list of them, or true/false",
            v.type_str()
        )),
    };
    match v {
        toml::Value::Boolean(b) => Ok(Value::Flag(*b)),
        toml::Value::Array(a) => Ok(Value::List(a.iter().map(scalar).collect::<Result<_, _>>()?)),
        v => scalar(v).map(Value::Text),
    }
}

/// Options of the whole run (where it is written and how it is printed), which a job cannot
/// set: `peakbench run` takes them.
const RUN_OPTIONS: &[&str] = &["json", "csv", "markdown", "html", "mib", "gbit"];

fn options(table: &toml::Table, skip: &str) -> Result<Vec<(String, Value)>, String> {
    table
        .iter()
        .filter(|(k, _)| k.as_str() != skip)
        .map(|(k, v)| {
            let key = k.replace('_', "-");
            if RUN_OPTIONS.contains(&key.as_str()) {
                return Err(format!(
                    "'{key}' sets how the whole run is written or printed, not a job; give --{key} to peakbench run"
                ));
            }
            Ok((key, value(k, v)?))
        })
        .collect()
}

impl Profile {
    /// Parses a profile's TOML text; `name` is for messages.
    pub fn parse(name: &str, text: &str) -> Result<Profile, String> {
        let doc: toml::Table = text.parse().map_err(|e: toml::de::Error| {
            format!("profile {name} is not valid TOML: {}", e.message())
        })?;
        let mut p = Profile {
            name: name.into(),
            description: String::new(),
            defaults: Vec::new(),
            jobs: Vec::new(),
        };
        for (key, v) in &doc {
            match (key.as_str(), v) {
                ("description", toml::Value::String(s)) => p.description = s.clone(),
                ("defaults", toml::Value::Table(t)) => {
                    p.defaults =
                        options(t, "").map_err(|e| format!("profile {name}, [defaults]: {e}"))?
                }
                ("job", toml::Value::Array(jobs)) => {
                    for (i, job) in jobs.iter().enumerate() {
                        let where_ = format!("profile {name}, job {}", i + 1);
                        let toml::Value::Table(t) = job else {
                            return Err(format!("{where_}: write jobs as [[job]] tables"));
                        };
                        let subsystem = match t.get("subsystem") {
                            Some(toml::Value::String(s)) if SUBSYSTEMS.contains(&s.as_str()) => {
                                s.clone()
                            }
                            Some(v) => {
                                return Err(format!(
                                    "{where_}: subsystem {v} is not one of {}",
                                    SUBSYSTEMS.join(", ")
                                ));
                            }
                            None => {
                                return Err(format!(
                                    "{where_}: no subsystem; add subsystem = \"cpu\", \"mem\", \"disk\" or \"net\""
                                ));
                            }
                        };
                        let options =
                            options(t, "subsystem").map_err(|e| format!("{where_}: {e}"))?;
                        p.jobs.push(Job { subsystem, options });
                    }
                }
                _ => {
                    return Err(format!(
                        "profile {name}: unknown key '{key}' at the top level (expected description, [defaults] and [[job]] tables)"
                    ));
                }
            }
        }
        if p.jobs.is_empty() {
            return Err(format!("profile {name} has no [[job]]"));
        }
        Ok(p)
    }

    /// A built-in profile by name, or `None`.
    pub fn built_in(name: &str) -> Option<Profile> {
        BUILT_IN
            .iter()
            .find(|(n, _)| *n == name)
            .and_then(|(n, text)| Profile::parse(n, text).ok())
    }
}

impl Job {
    /// The job's option `key` (with dashes), falling back to `defaults`.
    fn get<'a>(&'a self, defaults: &'a [(String, Value)], key: &str) -> Option<&'a Value> {
        self.options
            .iter()
            .chain(defaults)
            .find(|(k, _)| k == key)
            .map(|(_, v)| v)
    }

    /// The job's option `key` as its words: a list's items, or a text's comma-separated
    /// parts; empty where the job does not set it.
    fn words(&self, defaults: &[(String, Value)], key: &str) -> Vec<String> {
        match self.get(defaults, key) {
            Some(Value::List(l)) => l.clone(),
            Some(Value::Text(s)) => s.split(',').map(|w| w.trim().to_string()).collect(),
            _ => Vec::new(),
        }
    }

    /// The keys of `defaults` that [`Job::argv`] adds to this job (those `accepts` takes and
    /// the job does not set itself).
    pub fn inherited<'a>(
        &'a self,
        defaults: &'a [(String, Value)],
        accepts: impl Fn(&str) -> bool + 'a,
    ) -> impl Iterator<Item = &'a str> + 'a {
        defaults
            .iter()
            .filter(move |(k, _)| accepts(k) && !self.options.iter().any(|(o, _)| o == k))
            .map(|(k, _)| k.as_str())
    }

    /// The job as a command line (without the program name), with the defaults that `accepts`
    /// says the subcommand takes, and `threads = "all"` as `hw_threads`.
    pub fn argv(
        &self,
        defaults: &[(String, Value)],
        accepts: impl Fn(&str) -> bool,
        hw_threads: usize,
    ) -> Vec<String> {
        let mut argv = vec![self.subsystem.clone()];
        let own = self.options.iter();
        let inherited: Vec<&str> = self.inherited(defaults, &accepts).collect();
        let inherited = defaults
            .iter()
            .filter(|(k, _)| inherited.contains(&k.as_str()));
        for (key, v) in own.chain(inherited) {
            let text = |s: &String| {
                if key == "threads" && s == "all" {
                    hw_threads.to_string()
                } else {
                    s.clone()
                }
            };
            match v {
                Value::Flag(true) => argv.push(format!("--{key}")),
                Value::Flag(false) => {}
                Value::Text(s) => argv.push(format!("--{key}={}", text(s))),
                Value::List(l) => argv.push(format!(
                    "--{key}={}",
                    l.iter().map(text).collect::<Vec<_>>().join(",")
                )),
            }
        }
        argv
    }

    /// A rough estimate of the job's time: the points (the product of its list options) times
    /// the rounds per point times the time of a round. Options left to their defaults count as
    /// the defaults' sizes given here; the memory latency staircase counts its working sets.
    pub fn estimate(&self, defaults: &[(String, Value)], hw_threads: usize) -> Duration {
        let count = |key: &str, default: usize| match self.get(defaults, key) {
            Some(Value::List(l)) => l.len().max(1),
            Some(Value::Text(s)) => s.split(',').count().max(1),
            _ => default,
        };
        let seconds = |key: &str, default: f64| match self.get(defaults, key) {
            Some(Value::Text(s)) => crate::units::parse_duration(s)
                .map(|d| d.as_secs_f64())
                .unwrap_or(default),
            _ => default,
        };
        let threads_default = crate::sweep::powers_of_two_up_to(hw_threads).len();
        let repeat = count_number(self.get(defaults, "repeat")).unwrap_or(3) as f64;
        let warmup = count_number(self.get(defaults, "warmup")).unwrap_or(1) as f64;
        let secs = match self.subsystem.as_str() {
            "cpu" => {
                let workloads = self.words(defaults, "workload");
                let linalg: Vec<LinalgWorkload> =
                    workloads.iter().filter_map(|w| w.parse().ok()).collect();
                let kernels = if workloads.is_empty() {
                    registry::defaults("cpu").count()
                } else {
                    workloads.len() - linalg.len()
                };
                let threads: Vec<usize> = match self.get(defaults, "threads") {
                    Some(Value::Text(s)) if s == "all" => vec![hw_threads.max(1)],
                    Some(Value::List(_) | Value::Text(_)) => self
                        .words(defaults, "threads")
                        .iter()
                        .filter_map(|t| t.parse().ok())
                        .collect(),
                    _ => crate::sweep::powers_of_two_up_to(hw_threads),
                };
                let sizes: Vec<usize> = match self.words(defaults, "n") {
                    n if n.is_empty() => vec![8000],
                    n => n.iter().filter_map(|n| n.parse().ok()).collect(),
                };
                // The linear-algebra points: their operations at an assumed
                // LINALG_GFLOPS_PER_THREAD, each round.
                let mut solve = 0.0;
                for w in &linalg {
                    for &n in &sizes {
                        for &t in &threads {
                            solve += w.flops(n) / (LINALG_GFLOPS_PER_THREAD * 1e9 * t as f64);
                        }
                    }
                }
                let points = kernels * threads.len();
                (points as f64 * seconds("duration", 0.25) + solve) * (repeat + warmup) + 1.0
            }
            "mem" => {
                let mut workloads = self.words(defaults, "workload");
                if workloads.is_empty() {
                    workloads = registry::defaults("mem")
                        .map(|w| w.name.to_string())
                        .collect();
                }
                let latency = workloads
                    .iter()
                    .filter(|w| w.eq_ignore_ascii_case("LATENCY"))
                    .count();
                let blocks = count("block-size", 3);
                let threads = count("threads", threads_default);
                // The staircase's working sets up to the default maximum, × 2 page sizes.
                let stairs = staircase_sizes(4096, DEFAULT_LATENCY_MAX).len()
                    * if matches!(self.get(defaults, "huge-pages"), Some(Value::Text(s)) if s != "both")
                    {
                        1
                    } else {
                        2
                    };
                // LATENCY at each given thread count (one without --threads).
                let latency_threads = count("threads", 1);
                let points = (workloads.len() - latency) * blocks * threads
                    + latency * stairs * latency_threads;
                points as f64 * (repeat + warmup) * seconds("duration", 0.25) + 2.0
            }
            "disk" => {
                let points = count("workload", registry::defaults("disk").count())
                    * count("block-size", 4)
                    * count("threads", 1)
                    * count("iodepth", 1);
                points as f64 * repeat * (seconds("runtime", 5.0) + seconds("ramp", 1.0)) + 5.0
            }
            _ => {
                let protocols = count("protocol", 2);
                let points = count("workload", registry::defaults("net").count())
                    * protocols
                    * count("streams", 1)
                    * count("message-size", 1);
                points as f64 * repeat * (seconds("duration", 5.0) + seconds("omit", 1.0) + 0.3)
            }
        };
        Duration::from_secs_f64(secs)
    }
}

/// The rate a LINPACK or GEMM point's time is estimated at, per thread (GFLOP/s): about what
/// an AVX2 or AVX-512 core of the last decade reaches at N of a few thousand.
const LINALG_GFLOPS_PER_THREAD: f64 = 40.0;

fn count_number(v: Option<&Value>) -> Option<usize> {
    match v {
        Some(Value::Text(s)) => s.parse().ok(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn built_in_profiles_parse() {
        for (name, _) in BUILT_IN {
            let p = Profile::built_in(name).unwrap_or_else(|| panic!("{name} parses"));
            assert!(!p.jobs.is_empty() && !p.description.is_empty());
        }
    }

    #[test]
    fn run_options_are_refused_in_jobs() {
        let e = Profile::parse("t", "[[job]]\nsubsystem = \"net\"\ngbit = true\n").unwrap_err();
        assert!(e.contains("'gbit'") && e.contains("peakbench run"), "{e}");
        let e = Profile::parse(
            "t",
            "[defaults]\nmib = true\n[[job]]\nsubsystem = \"disk\"\n",
        )
        .unwrap_err();
        assert!(e.contains("'mib'"), "{e}");
    }

    #[test]
    fn a_job_becomes_a_command_line() {
        let p = Profile::parse(
            "t",
            r#"
            [defaults]
            repeat = 2
            quiet = true
            [[job]]
            subsystem = "cpu"
            workload = ["DP", "SP"]
            threads = "all"
            clock_ghz = 3.5
            [[job]]
            subsystem = "disk"
            repeat = 5
            buffered = false
            "#,
        )
        .unwrap();
        let accepts = |k: &str| k == "repeat";
        assert_eq!(
            p.jobs[0].argv(&p.defaults, accepts, 4),
            [
                "cpu",
                "--clock-ghz=3.5",
                "--threads=4",
                "--workload=DP,SP",
                "--repeat=2"
            ]
        );
        assert_eq!(
            p.jobs[1].argv(&p.defaults, accepts, 4),
            ["disk", "--repeat=5"]
        );
    }

    #[test]
    fn bad_profiles_say_what_is_wrong() {
        for (text, want) in [
            ("[[job]]\nworkload = 'DP'", "no subsystem"),
            ("[[job]]\nsubsystem = 'gpu'", "not one of"),
            (
                "title = 'x'\n[[job]]\nsubsystem = 'cpu'",
                "unknown key 'title'",
            ),
            ("description = 'x'", "has no [[job]]"),
            (
                "[[job]]\nsubsystem = 'cpu'\nthreads = { a = 1 }",
                "type table",
            ),
            ("[[job", "not valid TOML"),
        ] {
            let err = Profile::parse("t", text).unwrap_err();
            assert!(err.contains(want), "{text:?}: {err}");
        }
    }

    #[test]
    fn estimates_grow_with_the_matrix() {
        let quick = Profile::built_in("quick").unwrap();
        let full = Profile::built_in("assignment").unwrap();
        let total = |p: &Profile| {
            p.jobs
                .iter()
                .map(|j| j.estimate(&p.defaults, 2))
                .sum::<Duration>()
        };
        assert!(
            total(&quick) < Duration::from_secs(60),
            "{:?}",
            total(&quick)
        );
        assert!(total(&full) > total(&quick) * 10);
    }

    /// A LINPACK job's estimate is its operations at the assumed rate: N³, divided by the
    /// threads, times the rounds.
    #[test]
    fn linear_algebra_estimates_follow_the_operations() {
        let job = |n: &str, threads: &str| {
            let p = Profile::parse(
                "t",
                &format!(
                    "[[job]]\nsubsystem = \"cpu\"\nworkload = [\"LINPACK\"]\nn = {n}\nthreads = {threads}\nrepeat = 2\nwarmup = 0\n"
                ),
            )
            .unwrap();
            p.jobs[0].estimate(&p.defaults, 4).as_secs_f64() - 1.0
        };
        let one = job("[8000]", "[1]");
        let want = 2.0 * (2.0 / 3.0 * 8000f64.powi(3)) / (LINALG_GFLOPS_PER_THREAD * 1e9);
        assert!((one / want - 1.0).abs() < 0.01, "{one} vs {want}");
        assert!((job("[4000]", "[1]") * 8.0 / one - 1.0).abs() < 0.01);
        assert!((job("[8000]", "\"all\"") * 4.0 / one - 1.0).abs() < 0.01);
        // Two sizes and the default thread sweep (1, 2, 4 on 4 threads).
        let sweep = job("[4000, 8000]", "[1, 2, 4]");
        assert!((sweep / (one * 1.125 * 1.75) - 1.0).abs() < 0.01, "{sweep}");
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]

        /// A profile file is read from outside: any text is a profile or a message, never a
        /// panic.
        #[test]
        fn any_profile_text_parses_or_is_refused(text in "(\\[\\[job\\]\\]\n|[a-z_]{1,10} = [0-9a-z'\\[\\],. ]{0,12}\n|.{0,20}\n){0,8}") {
            let _ = Profile::parse("fuzz", &text);
        }
    }
}
