//! A benchmark's request made in code rather than typed: its subsystem and the options set on
//! it, each a typed value ([`Setting`]), the others at their defaults. The command line gives
//! each subsystem's `apply` (in `cli`) these values to set on its options, with nothing parsed
//! again; the same values write the line a user would type for it ([`Benchmark::line`]), which a
//! check or a plan shows. `run --budget`'s fit changes a job's options this way, `verify`'s
//! checks and the budget's calibration probes make theirs this way.

use crate::results::Subsystem;
use crate::results::params::{EngineKind, Proto};
use crate::sysinfo::Isa;
use crate::workload::Workload;
use std::path::PathBuf;
use std::time::Duration;

/// One option at its value.
#[derive(Debug, Clone, PartialEq)]
pub enum Setting {
    /// A duration (`--duration`, `--runtime`, `--sustain`, `--ramp`, `--omit`).
    Time(&'static str, Duration),
    /// A fixed amount of work (`--total-ops`, `--total-bytes`).
    Work(&'static str, u64),
    /// `--repeat`.
    Repeat(usize),
    /// `--max-repeat` (under `--precision`).
    MaxRepeat(usize),
    /// `--warmup` (rounds).
    Warmup(usize),
    /// `--workload`: one workload.
    Workload(Workload),
    /// A count: `--threads`, `--iodepth`, `--streams`, `--n` (one value each, no sweep).
    Count(&'static str, usize),
    /// A size in bytes (`--size`, `--block-size`, `--array-size`, `--latency-max`,
    /// `--message-size`, `--window`).
    Bytes(&'static str, u64),
    /// `--rate` in bit/s.
    Rate(u64),
    /// A figure (`--clock-ghz`, `--link-gbps`, `--mem-peak-gbs`, `--disk-peak-read-iops`,
    /// `--disk-peak-read-mbps`).
    Number(&'static str, f64),
    /// A switch (`--destructive`, `--buffered`, `--reverse`).
    Flag(&'static str),
    /// A path (`--dir`, `--file`).
    Path(&'static str, PathBuf),
    /// `--isa`.
    Isa(Isa),
    /// `--engine`.
    Engine(EngineKind),
    /// `--protocol`: one protocol.
    Protocol(Proto),
    /// `--huge-pages on` (true) or `off`.
    HugePages(bool),
    /// `--server`: a host, with `:PORT` or not.
    Server(String),
}

impl Setting {
    /// Its option's long name.
    pub fn key(&self) -> &'static str {
        match self {
            Setting::Time(k, _)
            | Setting::Work(k, _)
            | Setting::Count(k, _)
            | Setting::Bytes(k, _)
            | Setting::Number(k, _)
            | Setting::Flag(k)
            | Setting::Path(k, _) => k,
            Setting::Repeat(_) => "repeat",
            Setting::MaxRepeat(_) => "max-repeat",
            Setting::Warmup(_) => "warmup",
            Setting::Workload(_) => "workload",
            Setting::Rate(_) => "rate",
            Setting::Isa(_) => "isa",
            Setting::Engine(_) => "engine",
            Setting::Protocol(_) => "protocol",
            Setting::HugePages(_) => "huge-pages",
            Setting::Server(_) => "server",
        }
    }

    /// Its value as the command line writes it (and parses back to the same value; a test of
    /// `cli` parses every kind back), `None` for a switch.
    pub fn value(&self) -> Option<String> {
        Some(match self {
            Setting::Time(_, d) => crate::units::duration_arg(*d),
            Setting::Work(_, n) => n.to_string(),
            Setting::Repeat(r) | Setting::MaxRepeat(r) | Setting::Warmup(r) => r.to_string(),
            Setting::Count(_, n) => n.to_string(),
            Setting::Workload(w) => w.name().to_string(),
            Setting::Bytes(_, n) => binary(*n),
            Setting::Rate(r) => match r % 1_000_000 {
                0 if *r > 0 => format!("{}M", r / 1_000_000),
                _ => r.to_string(),
            },
            Setting::Number(_, x) => x.to_string(),
            Setting::Flag(_) => return None,
            Setting::Path(_, p) => p.display().to_string(),
            Setting::Isa(i) => i.to_string(),
            Setting::Engine(e) => e.name().to_string(),
            Setting::Protocol(p) => p.name().to_ascii_lowercase(),
            Setting::HugePages(on) => if *on { "on" } else { "off" }.to_string(),
            Setting::Server(s) => s.clone(),
        })
    }
}

/// `n` bytes as the size options read them: with a binary suffix where it is a whole number
/// of KiB, MiB or GiB (64M), else in bytes.
fn binary(n: u64) -> String {
    for (shift, suffix) in [(30, "G"), (20, "M"), (10, "K")] {
        if n > 0 && n.is_multiple_of(1 << shift) {
            return format!("{}{suffix}", n >> shift);
        }
    }
    n.to_string()
}

/// A benchmark to run: its subsystem and its options set, in the order a user would type them.
#[derive(Debug, Clone, PartialEq)]
pub struct Benchmark {
    pub subsystem: Subsystem,
    pub settings: Vec<Setting>,
}

impl Benchmark {
    /// A job of `subsystem` with every option at its default.
    pub fn new(subsystem: Subsystem) -> Benchmark {
        Benchmark {
            subsystem,
            settings: Vec::new(),
        }
    }

    /// With `setting` too (replacing the option's earlier value).
    pub fn with(mut self, setting: Setting) -> Benchmark {
        self.set(setting);
        self
    }

    /// With each of `settings` too.
    pub fn with_all(mut self, settings: impl IntoIterator<Item = Setting>) -> Benchmark {
        for s in settings {
            self.set(s);
        }
        self
    }

    /// Sets `setting`, replacing the option's earlier value where it had one.
    pub fn set(&mut self, setting: Setting) {
        match self.settings.iter_mut().find(|s| s.key() == setting.key()) {
            Some(s) => *s = setting,
            None => self.settings.push(setting),
        }
    }

    /// The command line a user types for it, without the program's name: its subcommand and
    /// `--key value` words.
    pub fn line(&self) -> Vec<String> {
        let mut line = vec![self.subsystem.name().to_string()];
        for s in &self.settings {
            line.push(format!("--{}", s.key()));
            line.extend(s.value());
        }
        line
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_jobs_line_is_what_a_user_types() {
        let job = Benchmark::new(Subsystem::Disk)
            .with(Setting::Workload(Workload::Disk(
                crate::workload::disk::DiskWorkload::Rr,
            )))
            .with(Setting::Bytes("block-size", 4096))
            .with(Setting::Bytes("size", 3 << 20))
            .with(Setting::Bytes("message-size", 1472))
            .with(Setting::Flag("buffered"))
            .with(Setting::Time("runtime", Duration::from_millis(500)))
            .with(Setting::Time("runtime", Duration::from_secs(2)))
            .with(Setting::Rate(200_000_000));
        assert_eq!(
            job.line().join(" "),
            "disk --workload RR --block-size 4K --size 3M --message-size 1472 --buffered \
             --runtime 2s --rate 200M"
        );
    }
}
