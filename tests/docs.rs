//! The documentation keeps up with the command line: every option of every command (and
//! subcommand) appears in docs/, every command has its words there, and the README stays a
//! page a newcomer reads (at most 200 lines) with its two commands first.

use clap::CommandFactory;
use std::collections::BTreeSet;
use std::path::Path;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Every Markdown page under docs/, one text.
fn docs() -> String {
    let mut pages: Vec<_> = std::fs::read_dir(root().join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    pages.sort();
    assert!(pages.len() >= 7, "docs/ has {} pages", pages.len());
    pages
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect::<Vec<_>>()
        .join("\n")
}

/// (command path, `--long`) for every option of every command, help and version aside.
fn options(cmd: &clap::Command, path: &str, out: &mut BTreeSet<(String, String)>) {
    for a in cmd.get_arguments() {
        if a.is_hide_set() {
            continue;
        }
        if let Some(long) = a.get_long()
            && !matches!(long, "help" | "version")
        {
            out.insert((path.to_string(), format!("--{long}")));
        }
    }
    for sub in cmd.get_subcommands() {
        if sub.get_name() == "help" {
            continue;
        }
        options(sub, &format!("{path} {}", sub.get_name()), out);
    }
}

#[test]
fn every_option_of_every_command_is_documented() {
    let text = docs();
    let mut all = BTreeSet::new();
    options(&peakbench::cli::Cli::command(), "peakbench", &mut all);
    assert!(all.len() > 100, "only {} options found", all.len());
    let missing: Vec<String> = all
        .iter()
        .filter(|(_, opt)| !written_whole(&text, opt))
        .map(|(cmd, opt)| format!("{cmd} {opt}"))
        .collect();
    assert!(
        missing.is_empty(),
        "{} options are in no page of docs/:\n{}",
        missing.len(),
        missing.join("\n")
    );
}

/// The page that documents a command's options: each subsystem its own, `history` and
/// `compare` the database's, `cluster` its own, `peak` the CPU's (where the machine is),
/// every other command usage.md.
fn page_of(cmd: &str) -> &'static str {
    match cmd.split(' ').nth(1).unwrap_or("") {
        "cpu" | "peak" => "cpu.md",
        "mem" => "mem.md",
        "disk" => "disk.md",
        "net" => "net.md",
        "history" | "compare" | "rank" | "calibrate" => "history.md",
        "cluster" => "cluster.md",
        "verify" => "verify.md",
        _ => "usage.md",
    }
}

/// Each subsystem's options are on its own page, except those every benchmark command shares
/// (`--repeat`, `--json`, …), which usage.md lists once.
#[test]
fn each_commands_options_are_on_its_page() {
    let mut all = BTreeSet::new();
    options(&peakbench::cli::Cli::command(), "peakbench", &mut all);
    let shared: BTreeSet<&String> = all
        .iter()
        .filter(|(cmd, opt)| {
            cmd == "peakbench cpu"
                && ["mem", "disk", "net"]
                    .iter()
                    .all(|s| all.contains(&(format!("peakbench {s}"), opt.clone())))
        })
        .map(|(_, opt)| opt)
        .collect();
    let read = |page: &str| std::fs::read_to_string(root().join("docs").join(page)).unwrap();
    let usage = read("usage.md");
    let mut missing = Vec::new();
    for (cmd, opt) in &all {
        let page = page_of(cmd);
        let text = read(page);
        let on_page = written_whole(&text, opt);
        let shared_in_usage = shared.contains(opt) && written_whole(&usage, opt);
        if !on_page && !shared_in_usage {
            missing.push(format!("{cmd} {opt} (docs/{page})"));
        }
    }
    assert!(
        missing.is_empty(),
        "{} options are not on their command's page:\n{}",
        missing.len(),
        missing.join("\n")
    );
}

/// Whether `opt` is written whole in `text`: `--repeat`, not `--repeats` nor the middle of
/// `--no-repeat`.
fn written_whole(text: &str, opt: &str) -> bool {
    text.match_indices(opt).any(|(i, _)| {
        let before = text[..i].chars().next_back();
        let after = text[i + opt.len()..].chars().next();
        !before.is_some_and(|c| c.is_alphanumeric() || c == '-')
            && !after.is_some_and(|c| c.is_alphanumeric() || c == '-' || c == '_')
    })
}

#[test]
fn every_command_has_its_words_in_docs() {
    let text = docs();
    let cli = peakbench::cli::Cli::command();
    let mut missing = Vec::new();
    for sub in cli.get_subcommands().filter(|s| s.get_name() != "help") {
        let name = format!("peakbench {}", sub.get_name());
        if !text.contains(&name) {
            missing.push(name);
        }
    }
    assert!(missing.is_empty(), "commands not in docs/: {missing:?}");
}

#[test]
fn the_readme_is_short_and_starts_with_the_two_commands() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let lines = readme.lines().count();
    assert!(lines <= 200, "README.md has {lines} lines");
    let head: String = readme.lines().take(25).collect::<Vec<_>>().join("\n");
    assert!(
        head.contains("cargo run --release -- run --profile quick"),
        "{head}"
    );
    assert!(head.contains("cargo test"), "{head}");
    // Every page it links to exists.
    for (i, _) in readme.match_indices("](docs/") {
        let rest = &readme[i + 2..];
        let target = &rest[..rest.find([')', '#']).unwrap()];
        assert!(root().join(target).exists(), "README links to {target}");
    }
}

/// An option that only some workloads use says which on its page's row, as its help does
/// (both from the options' table).
#[test]
fn each_options_page_row_names_the_workloads_it_is_for() {
    let mut missing = Vec::new();
    for row in peakbench::workload::options::TABLE {
        let page = format!("{}.md", row.subsystem.name());
        let text = std::fs::read_to_string(root().join("docs").join(&page)).unwrap();
        for name in row.names {
            let long = format!("--{name}");
            let line = text.lines().find(|l| {
                l.starts_with("| `")
                    && l.split('`')
                        .nth(1)
                        .is_some_and(|cell| cell.split([' ', ',']).any(|word| word == long))
            });
            if !line.is_some_and(|l| l.contains(&row.help())) {
                missing.push(format!("{page} {long}: {}", row.help()));
            }
        }
    }
    assert!(missing.is_empty(), "{}", missing.join("\n"));
}
