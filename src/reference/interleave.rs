//! A point's tool runs alternated with its own repetitions: after each of the point's rounds
//! (outside its timed regions), the runs then due of each tool that will measure it, so that
//! peakbench and the tool see the same machine, minute by minute. The runs go in the context's
//! cache, where the records' figures are taken from once the point is measured
//! ([`super::measure_all`]); a point whose records ask for other jobs than its plan did (or a
//! tool that cannot share the machine with the point) gets its runs after it, as without this.

use super::process::{self, Transcript};
use super::{Availability, Job, MAX_RUNS, Outcome, RefContext, RefError, Runs};
use crate::results::ResultRecord;
use crate::results::params::Params;
use std::path::PathBuf;

impl Job {
    /// The job with what only sizes its run left out (likwid-bench's iterations and mbw's
    /// copies come from a rate, peakbench's or the tool's previous run's): equal keys measure
    /// the same point, for as long as the context gives a run.
    pub fn key(&self) -> Job {
        match self {
            Job::Likwid(j) => Job::Likwid(super::likwid::Job {
                expected_per_thread: None,
                ..j.clone()
            }),
            Job::Mbw(j) => Job::Mbw(super::mbw::Job {
                copies: 0,
                expected_ms: 0,
                ..j.clone()
            }),
            j => j.clone(),
        }
    }

    /// The job sized from what its previous run measured: a planned point has no rate to
    /// size likwid-bench's iterations or mbw's copies from.
    fn resized(&self, previous: &Outcome, ctx: &RefContext) -> Job {
        match (self, previous) {
            (Job::Likwid(j), Outcome::Likwid(r)) => Job::Likwid(super::likwid::resized(j, r)),
            (Job::Mbw(j), Outcome::Mbw(r)) => {
                Job::Mbw(super::mbw::resized(j, r, ctx.own_seconds()))
            }
            (j, _) => j.clone(),
        }
    }

    /// The memory a run holds while it runs, bytes; `None` where it is not known (STREAM's
    /// arrays are compiled in: it runs after its point).
    pub fn memory_bytes(&self) -> Option<u64> {
        match self {
            Job::Likwid(j) => Some(j.size_bytes),
            Job::Sysbench(j) => Some(j.buffer_bytes.saturating_mul(j.threads)),
            Job::Mbw(j) => Some((j.array_mib << 21).saturating_mul(j.processes)),
            // HPL's matrix, and the suite's other tests sized from it.
            Job::Hpcc(j) => Some((j.n as u64).saturating_mul(j.n as u64).saturating_mul(24)),
            // The three matrices of the multiply (and BLIS's packed blocks, a few MiB).
            Job::Blis(j) => Some(
                (j.n as u64)
                    .saturating_mul(j.n as u64)
                    .saturating_mul(3 * j.workload.element_bytes()),
            ),
            // Files and sockets: a few buffers.
            Job::Fio(_)
            | Job::SysbenchFileio(_)
            | Job::Dd(_)
            | Job::Iperf3(_)
            | Job::Sockperf(_)
            | Job::Qperf(_)
            | Job::Ping(_) => Some(0),
            Job::Stream(_) => None,
        }
    }
}

/// The memory a point's record holds while it runs (its arrays), bytes.
fn footprint(rec: &ResultRecord) -> u64 {
    match &rec.params {
        Params::Mem(m) => m.kernel.as_ref().map_or(0, |k| k.working_set_bytes),
        Params::MemLatency(l) => {
            let chase = l.chase.as_ref().map_or(0, |c| c.working_set_bytes);
            let op = l.op.as_ref().map_or(0, |o| o.working_set_bytes);
            chase.max(op)
        }
        Params::Cpu(c) => c.linalg.as_ref().map_or(0, |l| {
            // The matrix and its copy for the residual check.
            (l.n as u64).saturating_mul(l.n as u64).saturating_mul(16)
        }),
        Params::Disk(_) | Params::Net(_) => 0,
    }
}

/// How many runs of `wanted` are due after `ticked` of `ticks` rounds: spread evenly, the last
/// after the last round (a point's warm-up rounds come first, so its first tool run follows
/// its first timed round where there are as many rounds as runs).
pub fn due(ticked: u64, ticks: u64, wanted: usize) -> usize {
    if ticks == 0 || ticked >= ticks {
        return wanted;
    }
    (ticked as u128 * wanted as u128 / ticks as u128) as usize
}

/// One job's runs during a point.
struct Pending {
    /// The job as it runs now (sized from its previous run after the first).
    job: Job,
    key: Job,
    program: PathBuf,
    wanted: usize,
    outcomes: Vec<Outcome>,
    transcript: Transcript,
    failed: Option<RefError>,
}

impl Pending {
    fn run_one(&mut self, ctx: &RefContext) {
        let (outcome, t) = process::transcribed(|| self.job.run(&self.program, ctx));
        self.transcript.commands.extend(t.commands);
        self.transcript.output.push_str(&t.output);
        match outcome {
            Ok(o) => {
                if self.outcomes.is_empty() {
                    self.job = self.job.resized(&o, ctx);
                }
                self.outcomes.push(o);
            }
            Err(e) => self.failed = Some(e),
        }
    }

    fn done(&self) -> bool {
        self.failed.is_some() || self.outcomes.len() >= self.wanted
    }
}

/// The tool runs of one point, made as its rounds go ([`RefContext::interleave`]).
pub struct Interleave<'a> {
    ctx: &'a RefContext,
    pending: Vec<Pending>,
    ticks: u64,
    ticked: u64,
}

impl RefContext {
    /// The runs of the jobs that will measure the point of `planned` (its records as planned,
    /// before it runs), to be made between its `rounds` rounds: each job's tool found, within
    /// the context's limits (its runs, its longest run, the other tools or not), not measured
    /// already, and small enough that the point's arrays and the tool's fit in half of
    /// `available` bytes of memory together.
    pub fn interleave(
        &self,
        planned: &[ResultRecord],
        rounds: u64,
        available: Option<u64>,
    ) -> Interleave<'_> {
        let limits = self.limits();
        let ours = planned.iter().map(footprint).max().unwrap_or(0);
        let mut pending: Vec<Pending> = Vec::new();
        for rec in planned {
            let Some(Ok(jobs)) = super::jobs(rec, self) else {
                continue;
            };
            let found = jobs
                .into_iter()
                .filter_map(|j| match self.availability(j.tool()) {
                    Availability::Found(f) => Some((j, f.path)),
                    _ => None,
                });
            let wanted = rec.samples.len().clamp(1, limits.runs.clamp(1, MAX_RUNS));
            for (job, program) in found.take(if limits.others { usize::MAX } else { 1 }) {
                let key = job.key();
                let fits = job
                    .memory_bytes()
                    .is_some_and(|m| available.is_none_or(|a| m.saturating_add(ours) <= a / 2));
                if !fits || self.has_runs(&key) || pending.iter().any(|p| p.key == key) {
                    continue;
                }
                pending.push(Pending {
                    job,
                    key,
                    program,
                    wanted,
                    outcomes: Vec::new(),
                    transcript: Transcript::default(),
                    failed: None,
                });
            }
        }
        Interleave {
            ctx: self,
            pending,
            ticks: rounds,
            ticked: 0,
        }
    }
}

impl Interleave<'_> {
    /// The jobs whose runs alternate with the point's rounds.
    pub fn jobs(&self) -> impl Iterator<Item = &Job> {
        self.pending.iter().map(|p| &p.job)
    }

    /// After one of the point's rounds: each job's runs now due.
    pub fn tick(&mut self) {
        self.ticked = self.ticked.saturating_add(1);
        for p in &mut self.pending {
            while !p.done() && p.outcomes.len() < due(self.ticked, self.ticks, p.wanted) {
                p.run_one(self.ctx);
            }
        }
    }

    /// After the point: where it was measured, the runs not made yet (a point with fewer
    /// rounds than planned), then every job's runs in the context's cache, marked as
    /// interleaved where all of them were made between the point's rounds. A point that
    /// failed or was interrupted keeps nothing.
    pub fn finish(mut self, measured: bool) {
        if !measured {
            return;
        }
        for p in &mut self.pending {
            let interleaved = p.done();
            while !p.done() {
                p.run_one(self.ctx);
            }
            let runs = match p.failed.take() {
                Some(e) => Err(e),
                None => Ok(Runs {
                    outcomes: std::mem::take(&mut p.outcomes),
                    transcript: std::mem::take(&mut p.transcript),
                    interleaved,
                }),
            };
            self.ctx.cache(p.key.clone(), runs);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs spread over a point's rounds: none before its first timed round where warm-up
    /// comes first, one after each timed round, all of them by the last round.
    #[test]
    fn runs_follow_the_timed_rounds() {
        // One warm-up round and three timed ones, three runs.
        let after: Vec<usize> = (1..=4).map(|t| due(t, 4, 3)).collect();
        assert_eq!(after, [0, 1, 2, 3]);
        // As many rounds as runs: one after each.
        assert_eq!((1..=3).map(|t| due(t, 3, 3)).collect::<Vec<_>>(), [1, 2, 3]);
        // Many rounds (a staircase): spread, the last at the end.
        let spread: Vec<usize> = (1..=10).map(|t| due(t, 10, 2)).collect();
        assert_eq!(spread, [0, 0, 0, 0, 1, 1, 1, 1, 1, 2]);
        // More rounds than planned, or none planned: all of them.
        assert_eq!(due(7, 4, 3), 3);
        assert_eq!(due(0, 0, 3), 3);
        // Huge counts do not overflow.
        assert_eq!(due(u64::MAX - 1, u64::MAX, 10), 9);
    }

    /// Sizing is not part of a job's key, the point's parameters are.
    #[test]
    fn keys_leave_out_the_runs_size_only() {
        let mbw = |copies, array_mib| {
            Job::Mbw(super::super::mbw::Job {
                processes: 1,
                array_mib,
                block_bytes: 1 << 20,
                copies,
                expected_ms: copies * 10,
            })
        };
        assert_eq!(mbw(3, 64).key(), mbw(50, 64).key());
        assert_ne!(mbw(3, 64).key(), mbw(3, 128).key());
        let likwid = |expected, threads| {
            Job::Likwid(super::super::likwid::Job {
                kernel: "copy_avx512".into(),
                size_bytes: 1 << 24,
                threads,
                counted: super::super::likwid::Counted::Bytes,
                target_ms: 1000,
                expected_per_thread: expected,
            })
        };
        assert_eq!(
            likwid(Some(1), 1).key(),
            likwid(Some(20_000_000_000), 1).key()
        );
        assert_ne!(likwid(None, 1).key(), likwid(None, 2).key());
    }

    /// A later run is sized from the first's rate: likwid-bench's iterations and mbw's copies.
    #[test]
    fn later_runs_are_sized_from_the_first() {
        let ctx = RefContext::new(std::env::temp_dir());
        let likwid = Job::Likwid(super::super::likwid::Job {
            kernel: "copy_avx512".into(),
            size_bytes: 1 << 24,
            threads: 2,
            counted: super::super::likwid::Counted::Bytes,
            target_ms: 1000,
            expected_per_thread: Some(0),
        });
        let measured = Outcome::Likwid(super::super::likwid::LikwidResult {
            test: "copy_avx512".into(),
            threads: Some(2),
            time_s: Some(0.001),
            mflops_per_s: None,
            mbytes_per_s: Some(40_000.0),
        });
        match likwid.resized(&measured, &ctx) {
            Job::Likwid(j) => assert_eq!(j.expected_per_thread, Some(20_000_000_000)),
            j => panic!("{j:?}"),
        }
        let mbw = Job::Mbw(super::super::mbw::Job {
            processes: 2,
            array_mib: 64,
            block_bytes: 1 << 20,
            copies: 3,
            expected_ms: 30,
        });
        // 2 × 2560 MiB/s copied: each process reads and writes 64 MiB in 50 ms, so 20 copies
        // fill the context's second.
        let rate = Outcome::Mbw(super::super::mbw::MbwResult {
            copy_mib_s: 2.0 * 1280.0,
            processes: 2,
        });
        match mbw.resized(&rate, &ctx) {
            Job::Mbw(j) => assert_eq!((j.copies, j.expected_ms), (20, 1000)),
            j => panic!("{j:?}"),
        }
        // A failed rate leaves the job as it was.
        let zero = Outcome::Mbw(super::super::mbw::MbwResult {
            copy_mib_s: 0.0,
            processes: 2,
        });
        assert_eq!(mbw.resized(&zero, &ctx), mbw);
    }
}
