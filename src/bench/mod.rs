//! The benchmarks, one folder per subsystem.

pub mod buffer;
pub mod cpu;
pub mod disk;
pub mod linalg;
pub mod mem;
pub mod net;
pub mod rng;
pub mod timeline;

/// The longest one repetition of a point's fixed work (`--total-ops`, `--total-bytes`) may be
/// estimated to take: 24 h. A timed repetition is at most 600 s, and a whole run is planned in
/// hours; a fixed amount whose one repetition would outlast a day is a typo, refused when the
/// request is checked rather than run (the estimate's rate is a guess, so the bound is wide).
pub const MAX_WORK_TIME: std::time::Duration = std::time::Duration::from_secs(86_400);

/// A point's fixed work estimated to take more than [`MAX_WORK_TIME`] a repetition.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error(
    "{option} {amount} with --scaling {} at {threads} threads is estimated at {} a repetition (at {rate}), more than {} h: give less {option}, or {timed} for a timed repetition",
    scaling.name(),
    crate::units::format_duration(crate::units::estimate_secs(*seconds)),
    MAX_WORK_TIME.as_secs() / 3600
)]
pub struct WorkTooLong {
    /// The option that gave the work: `--total-bytes`, `--total-ops`.
    pub option: &'static str,
    /// The amount as the user reads it ("16 TiB", "10^18").
    pub amount: String,
    pub scaling: crate::results::params::Scaling,
    /// The point's threads.
    pub threads: usize,
    /// The estimated seconds of one repetition.
    pub seconds: f64,
    /// The rate the estimate assumes, in words.
    pub rate: &'static str,
    /// The option of a timed repetition instead: `--duration`, `--runtime`.
    pub timed: &'static str,
}

impl WorkTooLong {
    /// Refuses a repetition estimated at `seconds` (NaN counts as too long).
    pub fn check(self) -> Result<(), WorkTooLong> {
        if self.seconds <= MAX_WORK_TIME.as_secs_f64() {
            Ok(())
        } else {
            Err(self)
        }
    }
}
