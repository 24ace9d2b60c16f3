//! How `run --budget` shortens a profile's jobs: the fit (a scale on their times, a cap on
//! their repetitions and on the reference tools' runs, sweeps thinned, last jobs dropped) and
//! the options it changes on a job ([`Setting`]s), set on the job's parsed options and written
//! into its line.

use crate::app::setting::Setting;

/// How a job of `run --budget` is shortened: its durations (measured time, warm-up, ramp,
/// omit) × `time_scale`, down to each subsystem's floor ([`POINT_FLOOR`] at least for a
/// point's timed work, and as much fixed work as that takes), its repetitions at most
/// `max_repeat`, and with `--reference` each tool's runs per point at most `reference_runs`;
/// where even that does not fit, the profile's sweeps thinned to their ends and its last jobs
/// dropped. The job's own options are fitted in its command line (each subsystem's
/// `fitted`), so that the line a dry run prints is the job that runs; the tools' limits are
/// the run's.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fit {
    pub time_scale: f64,
    pub max_repeat: Option<usize>,
    /// Runs of each reference tool per point (`None`: as many as the point's repetitions).
    pub reference_runs: Option<usize>,
    /// The longest run of a reference tool (`None`: any).
    pub reference_longest: Option<std::time::Duration>,
    /// Every sweep of the profile's jobs cut to its ends (threads 1,2,4,8 → 1,8).
    pub thin_sweeps: bool,
    /// The profile's first jobs kept, the others dropped (`None`: all kept).
    pub jobs_kept: Option<usize>,
}

/// The least timed work of one repetition of a point that `run --budget` leaves: shorter, a
/// figure is mostly the harness's start and stop (threads started and joined at a barrier,
/// about 0.1 ms; a scheduler's time slice, 3–4 ms, between threads that share a CPU) and
/// varies run to run by more than the effects the report compares. Fixed work (`--total-ops`,
/// `--total-bytes`) is kept at what takes this long at a core's peak. A subsystem may keep
/// more (disk 100 ms, network 200 ms).
pub const POINT_FLOOR: std::time::Duration = std::time::Duration::from_millis(50);

/// How long a tool that sets its own time (likwid-bench, mbw) measures once tools run once a
/// point to fit a budget.
pub const FITTED_TOOL_TIME: std::time::Duration = std::time::Duration::from_millis(250);

impl Fit {
    /// What the reference tools may take under this fit.
    pub fn reference_limits(&self) -> crate::reference::Limits {
        crate::reference::Limits {
            runs: self.reference_runs.unwrap_or(crate::reference::MAX_RUNS),
            longest: self.reference_longest,
            own_time: self.reference_runs.map(|_| FITTED_TOOL_TIME),
            others: self.reference_runs.is_none(),
        }
    }
}

impl Default for Fit {
    fn default() -> Fit {
        Fit {
            time_scale: 1.0,
            max_repeat: None,
            reference_runs: None,
            reference_longest: None,
            thin_sweeps: false,
            jobs_kept: None,
        }
    }
}

impl Fit {
    /// Whether it shortens the points' times (and fixed work).
    pub fn scales(&self) -> bool {
        self.time_scale < 1.0
    }

    /// A point's timed work `d` scaled, not below `floor` nor [`POINT_FLOOR`] (nor above `d`).
    pub fn time(&self, d: std::time::Duration, floor: std::time::Duration) -> std::time::Duration {
        self.time_above(d, floor.max(POINT_FLOOR))
    }

    /// `d` scaled, to the nearest millisecond from 1 ms (a command line's figure), not below
    /// `floor` (nor above `d`): a time that is not a point's whole timed work (a latency
    /// sample, a ramp, an omit).
    pub fn time_above(
        &self,
        d: std::time::Duration,
        floor: std::time::Duration,
    ) -> std::time::Duration {
        if !self.scales() {
            return d;
        }
        let scaled = d.mul_f64(self.time_scale.max(0.0));
        let scaled = if scaled >= std::time::Duration::from_millis(1) {
            std::time::Duration::from_millis((scaled.as_secs_f64() * 1e3).round() as u64)
        } else {
            scaled
        };
        scaled.min(d).max(floor.min(d))
    }

    /// Option `key` (a duration `d`) fitted, not below `floor`: where the fit changes it.
    pub fn time_option(
        &self,
        key: &'static str,
        d: std::time::Duration,
        floor: std::time::Duration,
    ) -> Option<Setting> {
        changed(key, d, self.time(d, floor))
    }

    /// Option `key` (a duration `d` that is not a point's timed work) fitted, not below
    /// `floor`: where the fit changes it.
    pub fn time_above_option(
        &self,
        key: &'static str,
        d: std::time::Duration,
        floor: std::time::Duration,
    ) -> Option<Setting> {
        changed(key, d, self.time_above(d, floor))
    }

    /// Option `key` (a fixed amount of work `n`) fitted, not below `floor`: where the fit
    /// changes it.
    pub fn work_option(&self, key: &'static str, n: Option<u64>, floor: u64) -> Option<Setting> {
        let fitted = self.work(n, floor)?;
        (Some(fitted) != n).then_some(Setting::Work(key, fitted))
    }

    /// `--repeat` and, under `--precision`, `--max-repeat` fitted: where the fit changes
    /// them. A point measured to a precision keeps 2 repetitions at least (its first
    /// measurement's interval needs them), and its most repetitions in all are capped as one
    /// measurement's are (not below its first's).
    pub fn repeat_options(
        &self,
        repeat: usize,
        precision: &super::common::PrecisionArgs,
    ) -> Vec<Setting> {
        let Some(cap) = self.max_repeat else {
            return Vec::new();
        };
        let precise = precision.precision.is_some();
        let fitted = match precise {
            true => repeat.min(cap.max(2)),
            false => repeat.min(cap),
        };
        let mut out: Vec<Setting> = (fitted != repeat)
            .then_some(Setting::Repeat(fitted))
            .into_iter()
            .collect();
        if precise {
            let most = precision
                .max_repeat
                .unwrap_or(crate::measure::precision::DEFAULT_MAX_REPEAT);
            let capped = most.min(cap.max(fitted));
            if capped != most {
                out.push(Setting::MaxRepeat(capped));
            }
        }
        out
    }

    /// A fixed amount of work (`--total-ops`, `--total-bytes`) scaled as times are, not below
    /// `floor` (nor above `n`).
    pub fn work(&self, n: Option<u64>, floor: u64) -> Option<u64> {
        let n = n?;
        if !self.scales() {
            return Some(n);
        }
        Some(((n as f64 * self.time_scale.max(0.0)) as u64).max(floor.min(n)))
    }
}

/// Duration option `key` at `fitted`, where the fit changed it from `d`.
fn changed(
    key: &'static str,
    d: std::time::Duration,
    fitted: std::time::Duration,
) -> Option<Setting> {
    (fitted != d).then_some(Setting::Time(key, fitted))
}

/// An option set in code that its subsystem's `apply` does not know: the code and the
/// subsystem disagree, a defect (the job's line would say what it does not run).
pub fn unknown_setting(f: &Setting) -> String {
    format!("internal: --{} set on a job that cannot take it", f.key())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fitted time is whole milliseconds, written as the command line reads it back.
    #[test]
    fn fitted_times_are_scaled_and_floored() {
        use std::time::Duration;
        let fit = Fit {
            time_scale: 0.3127,
            ..Fit::default()
        };
        let ms = Duration::from_millis;
        assert_eq!(fit.time(ms(1000), ms(20)), ms(313));
        assert_eq!(fit.time(ms(10), ms(20)), ms(10));
        assert_eq!(fit.time(ms(100), ms(50)), ms(50));
        // A point's timed work keeps the common floor; a time that is not one (a ramp, a
        // latency sample) only its own.
        assert_eq!(fit.time(ms(100), ms(20)), POINT_FLOOR);
        assert_eq!(fit.time_above(ms(100), ms(20)), ms(31));
        assert_eq!(
            fit.time_above_option("ramp", ms(100), Duration::ZERO)
                .map(|f| (f.key(), f.value().unwrap_or_default())),
            Some(("ramp", "31ms".to_string()))
        );
        assert_eq!(
            fit.time_option("runtime", ms(1000), ms(20))
                .map(|f| (f.key(), f.value().unwrap_or_default())),
            Some(("runtime", "313ms".to_string()))
        );
        assert_eq!(
            Fit::default().time_option("runtime", ms(1000), ms(20)),
            None
        );
        assert_eq!(
            fit.work_option("total-bytes", Some(1 << 30), 64 << 20)
                .map(|f| (f.key(), f.value().unwrap_or_default())),
            Some(("total-bytes", "335759068".to_string()))
        );
        let none = crate::cli::common::PrecisionArgs::default();
        assert_eq!(fit.repeat_options(3, &none), []);
    }

    /// A budget caps a point's repetitions; under --precision its first measurement keeps two
    /// (an interval) and its most in all are capped alike.
    #[test]
    fn a_budget_caps_repetitions_and_a_precisions_most() {
        let fit = |m| Fit {
            max_repeat: Some(m),
            ..Fit::default()
        };
        let none = crate::cli::common::PrecisionArgs::default();
        let two = crate::cli::common::PrecisionArgs {
            precision: Some(0.02),
            max_repeat: None,
        };
        assert_eq!(fit(2).repeat_options(6, &none), [Setting::Repeat(2)]);
        assert_eq!(fit(1).repeat_options(6, &none), [Setting::Repeat(1)]);
        assert_eq!(
            fit(1).repeat_options(6, &two),
            [Setting::Repeat(2), Setting::MaxRepeat(2)]
        );
        assert_eq!(fit(2).repeat_options(3, &two)[1].key(), "max-repeat");
        assert_eq!(Fit::default().repeat_options(6, &two), []);
        let given = crate::cli::common::PrecisionArgs {
            max_repeat: Some(3),
            ..two
        };
        assert_eq!(fit(8).repeat_options(3, &given), []);
    }
}
