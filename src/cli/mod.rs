//! The command line: clap derive structs, one per subcommand, and `run()`.

mod benchmark;
mod calibrate;
mod calibration;
mod card;
mod cluster;
mod common;
mod cpu;
mod disk;
mod fit;
mod history;
mod mem;
mod net;
mod peak;
mod peak_others;
mod rank;

mod reference;
mod report;
mod run;
mod shell;
mod sysinfo;
mod token;
mod verify;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

pub use crate::error::{Interrupted, UsageError};

/// peakbench: how fast is this machine, and how close to its peak?
#[derive(Debug, Parser)]
#[command(name = "peakbench", version, about, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Show what the machine is: CPU, microarchitecture, caches, ISA, clocks, memory.
    Sysinfo(sysinfo::SysinfoArgs),
    /// CPU arithmetic throughput (GOPS) per data type against the theoretical peak.
    Cpu(Box<cpu::CpuArgs>),
    /// Memory bandwidth (GB/s, STREAM-counted) and latency (pointer-chasing staircase).
    Mem(Box<mem::MemArgs>),
    /// Disk throughput (MB/s), IOPS and latency percentiles, O_DIRECT, psync or io_uring.
    Disk(Box<disk::DiskArgs>),
    /// Network goodput (Mbit/s), UDP loss and jitter, ping-pong round trips (µs); `net serve`
    /// is the server.
    Net(Box<net::NetArgs>),
    /// The theoretical peaks of a machine described on the command line (CPU from its
    /// microarchitecture, cores and clock; memory, disk and network from their ratings), with
    /// each formula; nothing is measured.
    Peak(peak::PeakArgs),
    /// Turn a run's JSON (written by --json) into a self-contained HTML report and PNG charts.
    Report(report::ReportArgs),
    // Its one-liner names every tool of the registry (`reference::Tool::ALL`).
    #[command(about = reference::about())]
    Reference(reference::ReferenceArgs),
    // Its one-liner names every built-in profile (`profile::BUILT_IN`).
    #[command(about = run::about())]
    Run(Box<run::SuiteArgs>),
    /// A machine's card in one command (about five minutes): every subsystem's headline figures
    /// with their peaks and reference tools, as JSON, an HTML page and a PNG summary.
    Card(Box<card::CardArgs>),
    /// List the runs stored in the results database (and import JSON documents into it).
    History(history::HistoryArgs),
    /// Compare two runs point by point (Welch's t-test; exit code 3 on a significant regression
    /// on the same hardware), or three machines or more side by side.
    Compare(history::CompareArgs),
    /// How far this machine's figures move between runs by themselves: a profile (ci) run N
    /// times, each point's run-to-run noise, the smallest slowdown a gate catches and its false
    /// alarms, stored for `compare --gate`.
    Calibrate(calibrate::CalibrateArgs),
    /// Where a run stands among others (a directory of cards, a fleet's runs): for each figure
    /// the share of them it beats, among all and its microarchitecture, and the outliers of its
    /// own kind of machine.
    Rank(rank::RankArgs),
    /// Many machines: `cluster run` under mpirun, srun, SSH or Kubernetes (one merged report);
    /// `cluster identity` shows the rank this process gets from its launcher.
    Cluster(cluster::ClusterArgs),
    /// Impose ceilings on purpose (a link's rate, a delay, a loss rate, disk caps, a CPU quota)
    /// in namespaces, a loop device and control groups of its own, and check that the
    /// benchmarks measure each within its tolerance (root).
    Verify(Box<verify::VerifyArgs>),
    /// Print the shell completion script for bash, zsh, fish, elvish or powershell.
    Completions(shell::CompletionsArgs),
    /// Print the manual page peakbench(1) in roff, or write one per command with --out-dir.
    Man(shell::ManArgs),
}

impl Command {
    /// The outputs of a benchmark command (cpu, mem, disk, the net client) or of a suite;
    /// `None` for the others.
    pub fn output_mut(&mut self) -> Option<&mut common::OutputArgs> {
        match self {
            Command::Cpu(a) => Some(&mut a.output),
            Command::Mem(a) => Some(&mut a.output),
            Command::Disk(a) => Some(&mut a.output),
            Command::Net(a) => Some(&mut a.client.output),
            Command::Run(a) => Some(&mut a.output),
            Command::Verify(a) => Some(&mut a.output),
            Command::Sysinfo(_)
            | Command::Peak(_)
            | Command::Report(_)
            | Command::Reference(_)
            | Command::History(_)
            | Command::Compare(_)
            | Command::Calibrate(_)
            | Command::Rank(_)
            | Command::Card(_)
            | Command::Cluster(_)
            | Command::Completions(_)
            | Command::Man(_) => None,
        }
    }
}

impl Cli {
    /// Parses `argv` (with the program's name first), noting which options it gave.
    pub fn parse_noting(argv: impl IntoIterator<Item = String>) -> Result<Cli, clap::Error> {
        use clap::FromArgMatches;
        let definition = command();
        let matches = definition.clone().try_get_matches_from(argv)?;
        let mut cli = Cli::from_arg_matches(&matches)?;
        if let Some((name, sub)) = matches.subcommand()
            && let Some(output) = cli.command.output_mut()
            && let Some(options) = definition.find_subcommand(name)
        {
            output.given = common::Given::of(sub, options);
        }
        Ok(cli)
    }
}

/// The command line's definition, each option that only some workloads use saying which in
/// its help (from the options' table).
pub fn command() -> clap::Command {
    use crate::app::workloads::options;
    use clap::CommandFactory;
    let mut cli = Cli::command();
    for row in options::TABLE {
        for name in row.names {
            let id = name.replace('-', "_");
            cli = cli.mut_subcommand(row.subsystem.name(), |sub| {
                if sub.get_arguments().all(|a| a.get_id() != id.as_str()) {
                    return sub;
                }
                sub.mut_arg(&id, |a| {
                    let with = |h: Option<&clap::builder::StyledStr>| match h {
                        Some(h) => {
                            format!("{}. {}", h.to_string().trim_end_matches('.'), row.help())
                        }
                        None => row.help(),
                    };
                    let help = with(a.get_help());
                    match a.get_long_help().map(|h| with(Some(h))) {
                        Some(long) => a.help(help).long_help(long),
                        None => a.help(help),
                    }
                })
            });
        }
    }
    cli
}

/// Runs a parsed command line; `argv` is recorded in the results.
pub fn run(cli: Cli, argv: Vec<String>) -> anyhow::Result<()> {
    match cli.command {
        Command::Sysinfo(args) => sysinfo::run(args, argv),
        Command::Cpu(args) => cpu::run(*args, argv),
        Command::Mem(args) => mem::run(*args, argv),
        Command::Disk(args) => disk::run(*args, argv),
        Command::Net(args) => net::run(*args, argv),
        Command::Peak(args) => peak::run(args),
        Command::Report(args) => report::run(args),
        Command::Reference(args) => reference::run(args),
        Command::Run(args) => run::run(*args, argv),
        Command::Card(args) => card::run(*args, argv),
        Command::History(args) => history::run_history(args),
        Command::Compare(args) => history::run_compare(args),
        Command::Calibrate(args) => calibrate::run(args, argv),
        Command::Rank(args) => rank::run(args),
        Command::Cluster(args) => cluster::run(args, argv),
        Command::Verify(args) => verify::run(*args, argv),
        Command::Completions(args) => shell::completions(args),
        Command::Man(args) => shell::man(args),
    }
}

/// Exit code for user errors (bad input), as clap uses.
pub const EXIT_USAGE: u8 = 2;
/// Exit code for failures while running.
pub const EXIT_FAILURE: u8 = 1;
/// Exit code of `compare` when it finds a significant regression.
pub const EXIT_REGRESSION: u8 = 3;

/// clap's message, without its usage and help lines, on one line.
pub(crate) fn clap_message(e: &clap::Error) -> String {
    let text = e.render().to_string();
    let message = text
        .lines()
        .take_while(|l| !l.starts_with("Usage:") && !l.starts_with("For more information"))
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    message.trim_start_matches("error: ").to_string()
}

/// An error and its causes on one line, each cause said once: a cause whose text the message
/// already holds (an error that prints its source, such as "control connection: {0}") is not
/// repeated.
pub(crate) fn one_line(e: &anyhow::Error) -> String {
    let mut line = e.to_string();
    for cause in e.chain().skip(1) {
        let text = cause.to_string();
        if !line.contains(&text) {
            line.push_str(": ");
            line.push_str(&text);
        }
    }
    line
}

/// Whether `e` came from writing to a pipe whose reader has gone.
fn broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// Parses `argv`, runs it and maps the outcome to an exit code; every error is one line on
/// standard error.
pub fn main_with(argv: Vec<String>) -> ExitCode {
    crate::runner::stop::install();
    let cli = match Cli::parse_noting(argv.iter().cloned()) {
        Ok(cli) => cli,
        Err(e) => {
            use clap::error::ErrorKind;
            if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
                let _ = e.print();
                return ExitCode::SUCCESS;
            }
            if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
                let _ = e.print();
                return ExitCode::from(EXIT_USAGE);
            }
            eprintln!("peakbench: {} (see --help)", clap_message(&e));
            return ExitCode::from(EXIT_USAGE);
        }
    };
    match run(cli, argv) {
        Ok(()) => ExitCode::SUCCESS,
        // The reader of standard output went away (`peakbench history | head`): nothing more
        // to say to anyone, as a program killed by SIGPIPE says nothing.
        Err(e) if broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            // One line, whatever a peer or a file put in the message.
            eprintln!("peakbench: {}", crate::text::printable(&one_line(&e)));
            if e.downcast_ref::<UsageError>().is_some() {
                ExitCode::from(EXIT_USAGE)
            } else if e.downcast_ref::<Interrupted>().is_some() {
                ExitCode::from(crate::runner::stop::EXIT_INTERRUPTED as u8)
            } else if e.downcast_ref::<history::Regression>().is_some() {
                ExitCode::from(EXIT_REGRESSION)
            } else {
                ExitCode::from(EXIT_FAILURE)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every option of the options' table is an option of its subsystem's command, and its
    /// help says which workloads it is for.
    #[test]
    fn the_options_table_names_real_options_and_their_help_its_users() {
        let cli = command();
        for row in crate::app::workloads::options::TABLE {
            let sub = cli.find_subcommand(row.subsystem.name()).unwrap();
            for name in row.names {
                let arg = sub
                    .get_arguments()
                    .find(|a| a.get_long() == Some(name))
                    .unwrap_or_else(|| panic!("{} has no --{name}", row.subsystem));
                let help = arg.get_help().unwrap().to_string();
                assert!(help.ends_with(&row.help()), "--{name}: {help}");
            }
        }
    }

    #[derive(Debug, thiserror::Error)]
    enum Outer {
        #[error("control connection: {0}")]
        Frame(#[from] Inner),
    }

    #[derive(Debug, thiserror::Error)]
    #[error("a 1213486160-byte control message exceeds the 65536-byte limit")]
    struct Inner;

    #[test]
    fn each_cause_is_said_once() {
        let e = anyhow::Error::from(Outer::from(Inner));
        assert_eq!(
            one_line(&e),
            "control connection: a 1213486160-byte control message exceeds the 65536-byte limit"
        );
        let ctx = anyhow::Error::from(Inner).context("cannot start");
        assert_eq!(
            one_line(&ctx),
            "cannot start: a 1213486160-byte control message exceeds the 65536-byte limit"
        );
    }
}
