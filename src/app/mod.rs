//! The application: what a command does once its arguments are read. `cli` only parses the
//! command line into these types and chooses what to print; the recorder, the suite of jobs
//! and the multi-node run live here.

pub mod cluster;
pub mod cpu;
mod diagnose;
pub mod disk;
pub mod mem;
pub mod mock;
pub mod net;
pub mod outputs;
pub mod peak;
pub mod planned;
pub mod recorder;
pub mod session;
pub mod setting;
pub mod stream;
pub mod suite;
pub mod workloads;

pub use outputs::Outputs;
pub use recorder::Recorder;

use crate::sysinfo::SystemInfo;
use std::time::Duration;

/// How long each repetition runs, for a run's first line ("3 repetitions of …"): "~250ms", or
/// under `--sustain` "up to 4s, until steady,".
pub fn repetition_time(d: Duration, sustain: bool) -> String {
    match sustain {
        true => format!("up to {d:?}, until steady,"),
        false => format!("~{d:?}"),
    }
}

/// A point's repetitions, for a run's first line: "3 repetitions", or under `--precision`
/// "3 repetitions (more until ±2 %, at most 50 in all)".
pub fn repetitions(
    repeat: usize,
    precision: Option<crate::measure::precision::Precision>,
) -> String {
    match precision {
        None => format!("{repeat} repetitions"),
        Some(p) => format!(
            "{repeat} repetitions (more until ±{} %, at most {} in all)",
            crate::measure::precision::pct(p.target),
            p.max_repeat
        ),
    }
}

/// What a benchmark's request (each subsystem's, as the command line or a profile's job builds
/// it) does: it is checked on the machine as the run would check it, with its estimated time,
/// and then measured into a recorder.
pub trait Request {
    /// Checks the request on `sys` as the run would (before creating anything), and says
    /// about how long it takes (`run --dry-run`, `--budget`).
    fn check(&self, sys: &SystemInfo) -> anyhow::Result<Duration>;

    /// Measures its points into `rec` (one command, or one job of a suite).
    fn run(self: Box<Self>, rec: &mut Recorder) -> anyhow::Result<()>;

    /// The least timed work of one repetition of any of its points (a fixed amount of work
    /// at the rate its estimate assumes; `run --budget` keeps it above a floor), where its
    /// points have one.
    fn least_timed(&self, _sys: &SystemInfo) -> Option<Duration> {
        None
    }

    /// Its points as records without figures, with the parameters the reference tools'
    /// adapters read ([`planned`]): what `run --dry-run --reference` asks them.
    fn planned(&self, _sys: &SystemInfo) -> Vec<crate::results::ResultRecord> {
        Vec::new()
    }
}
