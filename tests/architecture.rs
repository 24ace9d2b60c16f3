//! The module structure, checked from the source: only the command line (and the binary) may
//! import `cli`, and the top-level modules of the library import each other without a cycle.
//! `cargo test --test architecture -- --nocapture` prints the module map.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Every `.rs` file under `dir`.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(rust_files(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    out.sort();
    out
}

/// The top-level modules: `src/NAME.rs` and `src/NAME/`.
fn top_modules() -> BTreeSet<String> {
    std::fs::read_dir(src())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter_map(|p| {
            let name = p.file_stem()?.to_str()?.to_string();
            (p.is_dir() || p.extension().is_some_and(|e| e == "rs")).then_some(name)
        })
        .filter(|n| n != "lib" && n != "main")
        .collect()
}

/// The top-level module a file belongs to (`None` for lib.rs and main.rs).
fn owner(file: &Path) -> Option<String> {
    let rel = file.strip_prefix(src()).unwrap();
    let first = rel.components().next()?.as_os_str().to_str()?.to_string();
    let name = first.strip_suffix(".rs").unwrap_or(&first).to_string();
    (name != "lib" && name != "main").then_some(name)
}

/// Source text without `//` comments (doc comments name modules without importing them).
fn code(file: &Path) -> String {
    std::fs::read_to_string(file)
        .unwrap()
        .lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The top-level modules `text` refers to through `crate::`: paths (`crate::a::b`) and groups
/// (`use crate::{a::b, c}`).
fn referenced(text: &str) -> BTreeSet<String> {
    referenced_after(text, "crate::")
}

/// The first path segment after each `prefix` in `text` (each name of a group).
fn referenced_after(text: &str, prefix: &str) -> BTreeSet<String> {
    let ident = |s: &str| {
        s.trim_start()
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect::<String>()
    };
    let mut out = BTreeSet::new();
    for (i, _) in text.match_indices(prefix) {
        // A longer path that ends in the prefix (`crate::a::super::`) is not it.
        let before = text[..i].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
            continue;
        }
        let rest = &text[i + prefix.len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let mut depth = 0;
            let mut start = 0;
            for (j, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => {
                        out.insert(ident(&group[start..j]));
                        break;
                    }
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        out.insert(ident(&group[start..j]));
                        start = j + 1;
                    }
                    _ => {}
                }
            }
        } else {
            out.insert(ident(rest));
        }
    }
    out
}

/// Who imports whom among the top-level modules.
fn module_map() -> BTreeMap<String, BTreeSet<String>> {
    let tops = top_modules();
    let mut map: BTreeMap<String, BTreeSet<String>> =
        tops.iter().map(|t| (t.clone(), BTreeSet::new())).collect();
    for file in rust_files(&src()) {
        let Some(from) = owner(&file) else { continue };
        for to in referenced(&code(&file)) {
            if to != from && tops.contains(&to) {
                map.get_mut(&from).unwrap().insert(to);
            }
        }
    }
    map
}

/// A cycle of the map, if there is one.
fn find_cycle(map: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        map: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|p| p == node) {
            let mut cycle = path[at..].to_vec();
            cycle.push(node.to_string());
            return Some(cycle);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_string());
        for next in map.get(node).into_iter().flatten() {
            if let Some(c) = visit(next, map, path, done) {
                return Some(c);
            }
        }
        path.pop();
        done.insert(node.to_string());
        None
    }
    let mut done = BTreeSet::new();
    map.keys()
        .find_map(|k| visit(k, map, &mut Vec::new(), &mut done))
}

#[test]
fn the_reader_sees_paths_and_groups() {
    let text = "use crate::app::Recorder;\nuse crate::{history::Store, units::{self, x}, error};\nlet y = crate::report::render(&r);";
    let got: Vec<String> = referenced(text).into_iter().collect();
    assert_eq!(got, ["app", "error", "history", "report", "units"]);
    let map = BTreeMap::from([
        ("a".to_string(), BTreeSet::from(["b".to_string()])),
        ("b".to_string(), BTreeSet::from(["c".to_string()])),
        ("c".to_string(), BTreeSet::from(["a".to_string()])),
    ]);
    assert_eq!(find_cycle(&map).unwrap(), ["a", "b", "c", "a"]);
}

#[test]
fn only_the_command_line_imports_cli() {
    let offenders: Vec<String> = rust_files(&src())
        .into_iter()
        .filter(|f| !matches!(owner(f).as_deref(), Some("cli") | None))
        .filter(|f| referenced(&code(f)).contains("cli"))
        .map(|f| f.display().to_string())
        .collect();
    assert_eq!(offenders, Vec::<String>::new(), "these files import cli");
}

/// What a workload is sits below everything that measures or reports one: `workload` imports
/// only the typed ids and the text helpers, so that the benchmarks implement it and the
/// command line, reports, reference tools and results read it without importing `bench`.
#[test]
fn the_workloads_stand_below_the_benchmarks() {
    let map = module_map();
    let imports: Vec<&str> = map["workload"].iter().map(String::as_str).collect();
    assert!(
        imports.iter().all(|m| matches!(*m, "ids" | "text")),
        "workload imports {imports:?}"
    );
    // The workload enums are read from there, not through bench.
    let through_bench: Vec<String> = rust_files(&src())
        .into_iter()
        .filter(|f| !matches!(owner(f).as_deref(), Some("bench" | "workload")))
        .filter(|f| {
            let code = code(f);
            ["spec", "registry"]
                .iter()
                .any(|m| code.contains(&format!("bench::{m}")))
                || code.contains("bench::mem::MemWorkload")
                || code.contains("bench::linalg::workload::LinalgWorkload")
        })
        .map(|f| f.display().to_string())
        .collect();
    assert_eq!(
        through_bench,
        Vec::<String>::new(),
        "workloads read through bench"
    );
}

#[test]
fn top_level_modules_have_no_import_cycle() {
    let map = module_map();
    for (from, to) in &map {
        let to: Vec<&str> = to.iter().map(String::as_str).collect();
        println!("{from:10} -> {}", to.join(", "));
    }
    assert_eq!(
        find_cycle(&map),
        None,
        "an import cycle between top-level modules"
    );
    assert!(
        map.contains_key("cli") && map.contains_key("app"),
        "{map:?}"
    );
}

/// The module path of a folder under src/ (`src/report/charts` → `report::charts`).
fn module_path(dir: &Path) -> String {
    let rel = dir.strip_prefix(src()).unwrap();
    rel.components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("::")
}

/// The sibling modules a file (not a folder's mod.rs) refers to: `super::x` paths and groups,
/// and `crate::<its folder>::x`.
fn siblings_referenced(file: &Path) -> BTreeSet<String> {
    let text = code(file);
    let folder = module_path(file.parent().unwrap());
    let mut prefixes = vec!["super::".to_string()];
    if !folder.is_empty() {
        prefixes.push(format!("crate::{folder}::"));
    }
    let mut out = BTreeSet::new();
    for prefix in &prefixes {
        out.extend(referenced_after(&text, prefix));
    }
    out
}

/// No two files of one folder import each other, directly or around a circle: a folder's
/// files are layered as the top-level modules are (`-- --nocapture` prints each folder's map).
#[test]
fn files_in_a_folder_have_no_import_cycle() {
    let mut folders: BTreeSet<PathBuf> = BTreeSet::new();
    for f in rust_files(&src()) {
        folders.insert(f.parent().unwrap().to_path_buf());
    }
    let mut cycles = Vec::new();
    for dir in folders {
        let files: Vec<PathBuf> = rust_files(&dir)
            .into_iter()
            .filter(|f| f.parent() == Some(dir.as_path()))
            .filter(|f| {
                !matches!(
                    f.file_stem().and_then(|s| s.to_str()),
                    Some("mod" | "lib" | "main")
                )
            })
            .collect();
        let names: BTreeSet<String> = files
            .iter()
            .map(|f| f.file_stem().unwrap().to_string_lossy().into_owned())
            .collect();
        let map: BTreeMap<String, BTreeSet<String>> = files
            .iter()
            .map(|f| {
                let name = f.file_stem().unwrap().to_string_lossy().into_owned();
                let to = siblings_referenced(f)
                    .into_iter()
                    .filter(|t| *t != name && names.contains(t))
                    .collect();
                (name, to)
            })
            .collect();
        if let Some(c) = find_cycle(&map) {
            cycles.push(format!("{}: {}", dir.display(), c.join(" → ")));
        }
    }
    assert!(cycles.is_empty(), "import circles:\n{}", cycles.join("\n"));
}

/// The folders whose mod.rs and files still import each other (issue 50): the list may only
/// shrink, and a folder leaves it when its circle is gone.
const MOD_CIRCLES: &[&str] = &[
    "bench/cpu",
    "bench/disk",
    "bench/mem",
    "bench/net",
    "cli",
    "reference",
    "report/charts",
    "report/plot",
    "sysinfo",
];

/// A folder's mod.rs and its files have no circle: the files import from each other, layered,
/// not from the mod.rs that imports them (a name a mod.rs holds for its files goes in a file
/// of its own). A file's `super::x` that names no sibling is an import of mod.rs; mod.rs's
/// `file::x` (a `use`, a path, a re-export) an import of that file. A file's inline test module
/// is left out: its `super::` is the file itself.
#[test]
fn a_folders_mod_rs_and_its_files_have_no_circle() {
    let mut folders: BTreeSet<PathBuf> = BTreeSet::new();
    for f in rust_files(&src()) {
        folders.insert(f.parent().unwrap().to_path_buf());
    }
    let production = |f: &Path| {
        let text = code(f);
        text.split("#[cfg(test)]\nmod tests {")
            .next()
            .unwrap_or("")
            .to_string()
    };
    let mut circles = BTreeSet::new();
    for dir in folders {
        let files: Vec<PathBuf> = rust_files(&dir)
            .into_iter()
            .filter(|f| f.parent() == Some(dir.as_path()))
            .collect();
        let stem = |f: &Path| f.file_stem().unwrap().to_string_lossy().into_owned();
        let Some(module) = files.iter().find(|f| stem(f) == "mod") else {
            continue;
        };
        let names: BTreeSet<String> = files.iter().map(|f| stem(f)).collect();
        let parent = production(module);
        let circle = files.iter().filter(|f| stem(f) != "mod").any(|f| {
            let name = stem(f);
            let imported = !referenced_after(&parent, &format!("{name}::")).is_empty();
            let imports_parent = referenced_after(&production(f), "super::")
                .iter()
                .any(|x| x != "super" && !names.contains(x));
            imported && imports_parent
        });
        if circle {
            circles.insert(
                dir.strip_prefix(src())
                    .unwrap()
                    .to_string_lossy()
                    .into_owned(),
            );
        }
    }
    let known: BTreeSet<String> = MOD_CIRCLES.iter().map(|s| s.to_string()).collect();
    let new: Vec<&String> = circles.difference(&known).collect();
    assert!(new.is_empty(), "a mod.rs ↔ file circle in {new:?}");
    let gone: Vec<&String> = known.difference(&circles).collect();
    assert!(
        gone.is_empty(),
        "no circle any more in {gone:?}: take them out of MOD_CIRCLES"
    );
}

/// The integration tests' files: tests/*.rs and everything under tests/common/ (their shared
/// helpers); fixtures and snapshots aside.
fn test_files() -> Vec<PathBuf> {
    let tests = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let mut files: Vec<PathBuf> = rust_files(&tests)
        .into_iter()
        .filter(|f| f.parent() == Some(tests.as_path()))
        .collect();
    files.extend(rust_files(&tests.join("common")));
    files
}

/// Rooms that fit their contents, the tests' as the library's: no file under src/ or of the
/// tests over 1,000 lines, no function over 150.
#[test]
fn no_file_over_1000_lines_nor_function_over_150() {
    let mut over = Vec::new();
    let files = [rust_files(&src()), test_files()].concat();
    assert!(
        files.iter().any(|f| f.ends_with("tests/architecture.rs"))
            && files.iter().any(|f| f.ends_with("tests/common/mod.rs")),
        "the tests' files are not all read"
    );
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        if lines.len() > 1000 {
            over.push(format!("{}: {} lines", f.display(), lines.len()));
        }
        // A function runs from its `fn` line to the closing brace at its indentation.
        for (i, line) in lines.iter().enumerate() {
            let body = line.trim_start();
            let indent = &line[..line.len() - body.len()];
            let is_fn = [
                "fn ",
                "pub fn ",
                "pub(crate) fn ",
                "pub(super) fn ",
                "const fn ",
                "pub const fn ",
                "unsafe fn ",
                "pub unsafe fn ",
            ]
            .iter()
            .any(|p| body.starts_with(p));
            if !is_fn || body.ends_with(';') {
                continue;
            }
            let close = format!("{indent}}}");
            if let Some(end) = lines[i..].iter().position(|l| *l == close)
                && end + 1 > 150
            {
                {
                    over.push(format!(
                        "{}:{}: a function of {} lines",
                        f.display(),
                        i + 1,
                        end + 1
                    ));
                }
            }
        }
    }
    assert!(over.is_empty(), "{}", over.join("\n"));
}

/// What reads results stands beside the benchmarks, not above them: no file of `report`,
/// `results`, `reference` or `cluster` imports `bench` (what they need of a workload is in
/// `workload`, of the network's control protocol in `wire`; what they need run, such as a
/// link's test or the system BLAS's kernels, the application hands them).
#[test]
fn the_readers_of_results_do_not_import_bench() {
    let rooms = ["report", "results", "reference", "cluster"];
    let importing: Vec<String> = rust_files(&src())
        .into_iter()
        .filter(|f| owner(f).is_some_and(|o| rooms.contains(&o.as_str())))
        .filter(|f| referenced(&code(f)).contains("bench"))
        .map(|f| f.strip_prefix(src()).unwrap().display().to_string())
        .collect();
    assert_eq!(importing, Vec::<String>::new(), "these files import bench");
}

/// What crosses a connection between two peakbench processes (`wire`) is spoken by the
/// network benchmark, the cluster and the reference tools alike, so it imports none of them,
/// nor the application or the command line.
#[test]
fn the_wire_stands_below_those_who_speak_it() {
    let map = module_map();
    let above = [
        "bench",
        "cluster",
        "reference",
        "app",
        "cli",
        "report",
        "verify",
    ];
    let imports: Vec<&str> = map["wire"]
        .iter()
        .map(String::as_str)
        .filter(|m| above.contains(m))
        .collect();
    assert_eq!(imports, Vec::<&str>::new(), "wire imports these");
}

/// The command line builds requests and stops there: no file of `cli` reaches into a
/// benchmark (the application, `app`, plans and runs them).
#[test]
fn the_command_line_does_not_import_bench() {
    let offenders: Vec<String> = rust_files(&src().join("cli"))
        .into_iter()
        .filter(|f| referenced(&code(f)).contains("bench"))
        .map(|f| f.display().to_string())
        .collect();
    assert_eq!(offenders, Vec::<String>::new(), "these files import bench");
}

/// Requests are data once the command line is read: clap is entered where the process's
/// command line is parsed (`cli/mod.rs`) and where a profile's jobs are read, each job once
/// (`run.rs`'s `Read::of`, through `parse_job`), and nowhere else outside tests; `verify`'s
/// checks, the budget's probes and its fits set typed settings on a command's options
/// (`app::setting`). A call in a file's `#[cfg(test)]` module is a test's.
#[test]
fn clap_parses_the_command_line_and_a_profiles_jobs_only() {
    let entries = [
        "parse_noting(",
        "parse_job(",
        "try_get_matches",
        "get_matches",
        "try_parse_from(",
        "parse_from(",
        "try_parse(",
        "::parse()",
        "from_arg_matches(",
    ];
    let mut calls = Vec::new();
    for file in rust_files(&src()) {
        let rel = file.strip_prefix(src()).unwrap().display().to_string();
        if rel.ends_with("/tests.rs") || rel.ends_with("_tests.rs") {
            continue;
        }
        let text = code(&file);
        let body = text.split("#[cfg(test)]\nmod ").next().unwrap_or(&text);
        for (n, line) in body.lines().enumerate() {
            if entries.iter().any(|e| line.contains(e)) && !line.trim_start().starts_with("pub") {
                calls.push(format!("{rel}:{}: {}", n + 1, line.trim()));
            }
        }
    }
    let allowed = |c: &String| {
        c.starts_with("cli/mod.rs:")
            && (c.contains("try_get_matches_from(argv)")
                || c.contains("Cli::from_arg_matches(&matches)")
                || c.contains("Cli::parse_noting(argv"))
            || c.starts_with("cli/run.rs:")
                && (c.contains("parse_job(&line, &inherited)")
                    || c.contains("Cli::parse_noting(full)"))
    };
    let others: Vec<&String> = calls.iter().filter(|c| !allowed(c)).collect();
    assert!(others.is_empty(), "clap entered elsewhere: {others:#?}");
    // Each allowed call is still there (the test would pass vacuously if one moved).
    assert_eq!(calls.len(), 5, "{calls:#?}");
}
