//! Profiles: a whole suite declared in a TOML file, like a fio job file. Each `[[job]]` names a
//! subsystem and sets that subcommand's options by their long names; `[defaults]` apply to
//! every job that accepts them. The built-in profiles (`quick`, `assignment`) are such files,
//! under profiles/ in the repository.
//!
//! A job becomes a command line (`peakbench cpu --workload DP,SP --threads 2 …`) that the
//! subcommand's own parser checks, so a profile accepts exactly what the command line does and
//! reports the same errors.

use crate::results::Subsystem;

/// The built-in profiles: name, TOML text.
pub const BUILT_IN: &[(&str, &str)] = &[
    ("quick", include_str!("../profiles/quick.toml")),
    ("assignment", include_str!("../profiles/assignment.toml")),
    ("ci", include_str!("../profiles/ci.toml")),
    ("memory", include_str!("../profiles/memory.toml")),
    ("card", include_str!("../profiles/card.toml")),
];

/// One option's value as written in the file.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Text(String),
    Flag(bool),
    List(Vec<String>),
}

/// One job: a subsystem, the experiment it reproduces (its name, where the profile gives
/// one: `experiment = "M1: memory RWS/RWR …"`) and its options (by name; their order does not
/// matter).
#[derive(Debug, Clone, PartialEq)]
pub struct Job {
    pub subsystem: Subsystem,
    pub experiment: Option<String>,
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

/// Options that name code to load into peakbench (a shared library, whose constructors run
/// as the user at once, even for `--dry-run`'s check): a profile cannot set them, since a
/// profile is data that users share and run.
const LOADS_CODE: &[&str] = &["blas-library"];

fn options(table: &toml::Table, skip: &[&str]) -> Result<Vec<(String, Value)>, String> {
    table
        .iter()
        .filter(|(k, _)| !skip.contains(&k.as_str()))
        .map(|(k, v)| {
            let key = k.replace('_', "-");
            if RUN_OPTIONS.contains(&key.as_str()) {
                return Err(format!(
                    "'{key}' sets how the whole run is written or printed, not a job; give --{key} to peakbench run"
                ));
            }
            if LOADS_CODE.contains(&key.as_str()) {
                return Err(format!(
                    "'{key}' names a library to load into peakbench, whose code would run as you: a profile cannot choose one; run that job on the command line (peakbench cpu … --{key} PATH)"
                ));
            }
            Ok((key, value(k, v)?))
        })
        .collect()
}

/// Options that destroy data (an existing file's, a block device's): a profile file that sets
/// one is refused unless the same flag is given to `peakbench run` itself, so that a shared,
/// innocent-looking profile cannot decide it alone.
pub const DESTRUCTIVE: &[&str] = &["allow-overwrite", "destructive"];

impl Profile {
    /// Refuses a profile that sets one of the [`DESTRUCTIVE`] options (in a job or in
    /// `[defaults]`) not in `given`, the flags of the command line that runs it.
    pub fn refuse_destructive(&self, given: &[&str]) -> Result<(), String> {
        let jobs = self.jobs.iter().enumerate().map(|(i, j)| {
            (
                format!("job {} ({})", i + 1, j.subsystem),
                j.options.as_slice(),
            )
        });
        let all = std::iter::once(("[defaults]".to_string(), self.defaults.as_slice())).chain(jobs);
        for (where_, options) in all {
            for (key, v) in options {
                if DESTRUCTIVE.contains(&key.as_str())
                    && *v != Value::Flag(false)
                    && !given.contains(&key.as_str())
                {
                    return Err(format!(
                        "profile {}, {where_}: '{key}' destroys data, and a profile cannot decide that alone; give --{key} to peakbench run as well if that is what you want",
                        self.name
                    ));
                }
            }
        }
        Ok(())
    }

    /// Parses a profile's TOML text; `name` is for messages.
    pub fn parse(name: &str, text: &str) -> Result<Profile, String> {
        let doc: toml::Table = text.parse().map_err(|e: toml::de::Error| {
            format!("profile {name} is not valid TOML: {}", e.message())
        })?;
        let mut p = Profile {
            name: crate::text::printable(name),
            description: String::new(),
            defaults: Vec::new(),
            jobs: Vec::new(),
        };
        for (key, v) in &doc {
            match (key.as_str(), v) {
                // Printed as it is: a peer's text, escaped once here.
                ("description", toml::Value::String(s)) => {
                    p.description = crate::text::printable(s)
                }
                ("defaults", toml::Value::Table(t)) => {
                    p.defaults =
                        options(t, &[]).map_err(|e| format!("profile {name}, [defaults]: {e}"))?
                }
                ("job", toml::Value::Array(jobs)) => {
                    for (i, job) in jobs.iter().enumerate() {
                        let where_ = format!("profile {name}, job {}", i + 1);
                        let toml::Value::Table(t) = job else {
                            return Err(format!("{where_}: write jobs as [[job]] tables"));
                        };
                        let subsystem = match t.get("subsystem") {
                            Some(toml::Value::String(s)) => s
                                .parse::<Subsystem>()
                                .map_err(|e| format!("{where_}: {e}"))?,
                            Some(v) => {
                                return Err(format!(
                                    "{where_}: subsystem {v} is not a name; use {}",
                                    crate::text::one_of(Subsystem::ALL.iter().map(|s| s.name()))
                                ));
                            }
                            None => {
                                return Err(format!(
                                    "{where_}: no subsystem; add subsystem = \"cpu\", \"mem\", \"disk\" or \"net\""
                                ));
                            }
                        };
                        let experiment = match t.get("experiment") {
                            None => None,
                            Some(toml::Value::String(s)) if s.len() <= 200 => {
                                Some(crate::text::printable(s))
                            }
                            Some(_) => {
                                return Err(format!(
                                    "{where_}: experiment is the job's name, a string of at most 200 characters"
                                ));
                            }
                        };
                        let options = options(t, &["subsystem", "experiment"])
                            .map_err(|e| format!("{where_}: {e}"))?;
                        p.jobs.push(Job {
                            subsystem,
                            experiment,
                            options,
                        });
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
        let mut argv = vec![self.subsystem.to_string()];
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
            (
                "[[job]]\nsubsystem = 'gpu'",
                "'gpu' is not a subsystem; use cpu, mem, disk or net",
            ),
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
            (
                "[[job]]\nsubsystem = 'cpu'\nexperiment = 3",
                "experiment is the job's name",
            ),
        ] {
            let err = Profile::parse("t", text).unwrap_err();
            assert!(err.contains(want), "{text:?}: {err}");
        }
    }

    /// A job's experiment names it, and is no option of the command line; control characters
    /// in it are escaped.
    #[test]
    fn a_profile_cannot_name_a_library_to_load() {
        for text in [
            "[[job]]\nsubsystem = 'cpu'\nblas = 'system'\nblas_library = './libblas-fast.so'\n",
            "[defaults]\nblas-library = 'libx.so'\n[[job]]\nsubsystem = 'cpu'\n",
        ] {
            let e = Profile::parse("x.toml", text).unwrap_err();
            assert!(e.contains("'blas-library' names a library to load"), "{e}");
        }
    }

    #[test]
    fn destructive_options_need_the_run_s_flag() {
        let p = Profile::parse(
            "x.toml",
            "[[job]]\nsubsystem = 'disk'\nfile = '/dev/loop0'\ndestructive = true\n",
        )
        .unwrap();
        let e = p.refuse_destructive(&[]).unwrap_err();
        assert!(e.contains("job 1 (disk): 'destructive'"), "{e}");
        assert!(e.contains("--destructive"), "{e}");
        assert!(p.refuse_destructive(&["allow-overwrite"]).is_err());
        assert_eq!(p.refuse_destructive(&["destructive"]), Ok(()));
        let p = Profile::parse(
            "x.toml",
            "[defaults]\nallow_overwrite = 'yes'\n[[job]]\nsubsystem = 'disk'\n",
        )
        .unwrap();
        let e = p.refuse_destructive(&[]).unwrap_err();
        assert!(e.contains("[defaults]: 'allow-overwrite'"), "{e}");
        let p = Profile::parse(
            "x.toml",
            "[[job]]\nsubsystem = 'disk'\nallow_overwrite = false\n",
        )
        .unwrap();
        assert_eq!(p.refuse_destructive(&[]), Ok(()));
        for (name, _) in BUILT_IN {
            assert_eq!(
                Profile::built_in(name).unwrap().refuse_destructive(&[]),
                Ok(())
            );
        }
    }

    #[test]
    fn a_job_names_its_experiment() {
        let text = r#"[[job]]
subsystem = 'cpu'
experiment = "C1: CPU \u001b[2J"
threads = 2"#;
        let p = Profile::parse("t", text).unwrap();
        let job = &p.jobs[0];
        let name = job.experiment.as_deref().unwrap();
        assert!(
            name.starts_with("C1: CPU ") && !name.contains('\u{1b}'),
            "{name}"
        );
        assert_eq!(job.argv(&[], |_| true, 2), ["cpu", "--threads=2"]);
        for p in ["assignment"].map(|n| Profile::built_in(n).unwrap()) {
            assert!(p.jobs.iter().all(|j| j.experiment.is_some()), "{}", p.name);
        }
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
