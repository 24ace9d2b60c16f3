//! A benchmark command's options as data: typed settings ([`Setting`]) set on them (a
//! budget's fit, a benchmark made in code: `verify`'s checks, the budget's probes), and the
//! request they make. Nothing here parses: a benchmark made in code starts from its command's
//! defaults.

use super::Command;
use super::common::UsageError;
use crate::app::Request;
use crate::app::setting::{Benchmark, Setting};
use crate::results::Subsystem;
use crate::sysinfo::SystemInfo;

/// What a profile's job must be.
pub(super) const NOT_A_BENCHMARK: &str = "a profile job must be a benchmark (cpu, mem, disk, net)";

/// Sets `fitted` on a benchmark's options (no parse again).
pub(super) fn apply(command: &mut Command, fitted: &[Setting]) -> Result<(), String> {
    match command {
        _ if fitted.is_empty() => Ok(()),
        Command::Cpu(a) => super::cpu::apply(a, fitted),
        Command::Mem(a) => super::mem::apply(a, fitted),
        Command::Disk(a) => super::disk::apply(a, fitted),
        Command::Net(a) => super::net::apply(a, fitted),
        _ => Err(fitted
            .first()
            .map(super::fit::unknown_setting)
            .unwrap_or_default()),
    }
}

/// A job's request (its line already fitted).
pub(super) fn request(command: &Command, sys: &SystemInfo) -> anyhow::Result<Box<dyn Request>> {
    match command {
        Command::Cpu(a) => super::cpu::job(a),
        Command::Mem(a) => super::mem::job(a, sys),
        Command::Disk(a) => super::disk::job(a),
        Command::Net(a) => super::net::job(a),
        _ => Err(UsageError(NOT_A_BENCHMARK.into()).into()),
    }
}

/// The options of `bench`, a benchmark made in code: its subcommand's defaults with its
/// settings set, nothing parsed.
pub(super) fn command_of(bench: &Benchmark) -> Result<Command, String> {
    let mut command = match bench.subsystem {
        Subsystem::Cpu => Command::Cpu(Default::default()),
        Subsystem::Mem => Command::Mem(Default::default()),
        Subsystem::Disk => Command::Disk(Default::default()),
        Subsystem::Net => Command::Net(Box::new(super::net::NetArgs {
            command: None,
            client: Default::default(),
        })),
    };
    apply(&mut command, &bench.settings)?;
    Ok(command)
}

/// The request of `bench`, a benchmark made in code (`verify`'s checks, the budget's probes).
pub(super) fn request_of(bench: &Benchmark, sys: &SystemInfo) -> anyhow::Result<Box<dyn Request>> {
    let command = command_of(bench).map_err(anyhow::Error::msg)?;
    request(&command, sys)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// `line` (without the program's name) as the command line parses it.
    fn parse_job(line: &[String], _: &[&str]) -> Result<Command, String> {
        let argv = std::iter::once("peakbench".to_string()).chain(line.iter().cloned());
        crate::cli::Cli::parse_noting(argv)
            .map(|c| c.command)
            .map_err(|e| e.to_string())
    }

    /// A benchmark made in code starts from what the command line gives: each subcommand's
    /// defaults equal its bare parse (the variables a parse reads, PEAKBENCH_DB and
    /// PEAKBENCH_TOKEN, aside).
    #[test]
    fn a_benchmark_made_in_code_starts_from_the_command_lines_defaults() {
        let bare = |c: Command| {
            let mut text = format!("{c:?}");
            for var in ["db: Some(", "token: Some("] {
                if let Some(i) = text.find(var) {
                    let end = i + text[i..].find(')').unwrap() + 1;
                    text.replace_range(i..end, &var.replace("Some(", "None"));
                }
            }
            text
        };
        for sub in Subsystem::ALL {
            let parsed = parse_job(&[sub.name().to_string()], &[]).unwrap();
            let made = command_of(&Benchmark::new(sub)).unwrap();
            assert_eq!(bare(made), bare(parsed), "{sub}");
        }
    }

    /// Every kind of setting each subsystem takes is written into the line as the command line
    /// reads it back: the options the line parses to are the ones set, given options and all.
    #[test]
    fn a_benchmarks_line_parses_to_the_options_it_sets() {
        use crate::app::setting::Setting as S;
        use crate::results::params::{EngineKind, Proto};
        use crate::workload::{Workload as W, cpu::CpuWorkload, linalg::LinalgWorkload};
        use crate::workload::{disk::DiskWorkload, mem::MemWorkload, net::NetWorkload};
        let ms = Duration::from_millis;
        let isa = crate::sysinfo::Isa::ALL[0];
        let benches = [
            Benchmark::new(Subsystem::Cpu).with_all([
                S::Workload(W::Cpu(CpuWorkload::Dp)),
                S::Count("threads", 2),
                S::Warmup(0),
                S::Isa(isa),
                S::Number("clock-ghz", 4.014),
                S::Time("duration", ms(1500)),
                S::Repeat(2),
            ]),
            Benchmark::new(Subsystem::Cpu).with_all([
                S::Workload(W::Linalg(LinalgWorkload::Linpack)),
                S::Count("n", 200),
                S::Work("total-ops", 7_000_000),
            ]),
            Benchmark::new(Subsystem::Cpu).with(S::Time("sustain", ms(2000))),
            Benchmark::new(Subsystem::Mem).with_all([
                S::Workload(W::Mem(MemWorkload::Latency)),
                S::Count("threads", 2),
                S::Bytes("latency-max", 128 << 10),
                S::HugePages(true),
                S::Number("mem-peak-gbs", 4.7),
                S::Time("sustain", ms(1500)),
            ]),
            Benchmark::new(Subsystem::Mem).with_all([
                S::Workload(W::Mem(MemWorkload::Triad)),
                S::Bytes("array-size", 64 << 20),
                S::HugePages(false),
                S::Isa(isa),
                S::Work("total-bytes", 1 << 30),
                S::Repeat(4),
            ]),
            Benchmark::new(Subsystem::Disk).with_all([
                S::Workload(W::Disk(DiskWorkload::Rr)),
                S::Path("dir", "/tmp/a b".into()),
                S::Bytes("size", 3 << 20),
                S::Bytes("block-size", 4096),
                S::Count("threads", 1),
                S::Count("iodepth", 32),
                S::Engine(EngineKind::IoUring),
                S::Flag("buffered"),
                S::Number("disk-peak-read-iops", 88401.0),
                S::Number("disk-peak-read-mbps", 362.125),
                S::Time("runtime", ms(500)),
                S::Time("ramp", Duration::ZERO),
                S::Repeat(2),
            ]),
            Benchmark::new(Subsystem::Disk).with_all([
                S::Path("file", "/dev/loop7".into()),
                S::Flag("destructive"),
                S::Bytes("size", 64 << 20),
                S::Work("total-bytes", 64 << 20),
            ]),
            Benchmark::new(Subsystem::Disk).with(S::Time("sustain", ms(2500))),
            Benchmark::new(Subsystem::Net).with_all([
                S::Server("10.233.0.1".into()),
                S::Workload(W::Net(NetWorkload::Throughput)),
                S::Protocol(Proto::Udp),
                S::Count("streams", 1),
                S::Bytes("message-size", 1472),
                S::Rate(200_000_000),
                S::Time("duration", ms(500)),
                S::Time("omit", ms(250)),
                S::Number("link-gbps", 0.2),
            ]),
            Benchmark::new(Subsystem::Net).with_all([
                S::Server("10.233.1.1:5201".into()),
                S::Protocol(Proto::Tcp),
                S::Bytes("window", 64 << 10),
                S::Flag("reverse"),
                S::Time("sustain", ms(3000)),
                S::Rate(1234),
            ]),
        ];
        for bench in &benches {
            let made = command_of(bench).unwrap();
            let parsed = parse_job(&bench.line(), &[]).unwrap();
            assert_eq!(
                format!("{made:?}"),
                format!("{parsed:?}"),
                "{:?}",
                bench.line()
            );
        }
        // An option the subcommand does not take is an internal error, not ignored.
        let wrong = Benchmark::new(Subsystem::Cpu).with(S::Bytes("window", 1024));
        assert!(command_of(&wrong).unwrap_err().contains("--window"));
    }
}
