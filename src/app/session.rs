//! What the recorder drives: a benchmark's points, each planned, labelled and measured.

use crate::results::ResultRecord;

/// A benchmark's points as [`Recorder::drive`](super::Recorder::drive) runs them: how many
/// rounds each has (the progress bar's steps, and the reference tools' runs between them), what
/// the progress line calls it, its records before it runs, and its measurement.
pub trait Session {
    type Point: Copy;

    /// Rounds of `point`, warm-up included.
    fn rounds(&self, point: &Self::Point) -> u64;

    /// What the progress line says while `point` runs: its planned record's label, as the
    /// tables and `compare` name the point ("RR · 4 KiB blocks · 2 threads · QD 1 · …"); a
    /// session whose points may have no planned record says something of its own.
    fn label(&self, point: &Self::Point) -> String {
        self.planned(point)
            .first()
            .map(crate::results::point::label)
            .unwrap_or_default()
    }

    /// `point`'s records before it runs, with the parameters it will run with (what the
    /// reference tools are asked for); empty where it allows none.
    fn planned(&self, point: &Self::Point) -> Vec<ResultRecord>;

    /// The timed repetitions of each point measured from now on.
    fn repeat(&self) -> usize;

    /// Sets the timed repetitions of the points measured from now on (`--precision` measures
    /// a point again with more, then sets the count back).
    fn set_repeat(&mut self, repeat: usize);

    /// `--precision`, where the request asked for it.
    fn precision(&self) -> Option<crate::measure::precision::Precision>;

    /// Measures `point`, calling `tick` after each round (outside its timed region).
    fn run(
        &mut self,
        point: Self::Point,
        tick: &mut dyn FnMut(),
    ) -> anyhow::Result<Vec<ResultRecord>>;
}
