//! Running a point: threads pinned one per CPU, started together on a barrier, a warm-up round
//! then the timed repetitions. A round's time is from the earliest thread's start to the latest
//! thread's end, so a straggler counts against the rate.

pub mod affinity;
pub mod stop;

use std::sync::Barrier;
use std::time::{Duration, Instant};

/// How a point is repeated.
#[derive(Debug, Clone, Copy)]
pub struct Repetition {
    pub warmup: usize,
    pub repeat: usize,
}

/// Runs `work(thread_index)` on one thread per entry of `cpus`, each pinned to its CPU, for
/// `warmup + repeat` rounds; returns the wall time of each timed round. `after(thread_index)`
/// runs on each thread right after its timed region (for a side measurement under the same
/// conditions, such as the clock); `between` is called on the coordinating thread after every
/// round, outside the timed region (for progress).
pub fn run_rounds<W, A, B>(
    cpus: &[usize],
    reps: Repetition,
    work: W,
    after: A,
    between: B,
) -> std::io::Result<Vec<Duration>>
where
    W: Fn(usize) + Sync,
    A: Fn(usize) + Sync,
    B: FnMut(usize),
{
    run_rounds_per_thread(cpus, reps, work, after, between).map(|r| r.wall)
}

/// The timed rounds of [`run_rounds_per_thread`]: each round's wall time (earliest start to
/// latest end) and each thread's own time in each round.
#[derive(Debug, Clone)]
pub struct Rounds {
    pub wall: Vec<Duration>,
    /// `threads[i][round]`: thread `i`'s time in that timed round.
    pub threads: Vec<Vec<Duration>>,
}

/// [`run_rounds`], keeping each thread's own time too (for per-thread rates).
pub fn run_rounds_per_thread<W, A, B>(
    cpus: &[usize],
    reps: Repetition,
    work: W,
    after: A,
    mut between: B,
) -> std::io::Result<Rounds>
where
    W: Fn(usize) + Sync,
    A: Fn(usize) + Sync,
    B: FnMut(usize),
{
    let threads = cpus.len();
    let rounds = reps.warmup + reps.repeat;
    let barrier = Barrier::new(threads + 1);
    let spans: Vec<Vec<(Instant, Instant)>> = std::thread::scope(|scope| {
        let handles: Vec<_> = cpus
            .iter()
            .enumerate()
            .map(|(index, &cpu)| {
                let (barrier, work, after) = (&barrier, &work, &after);
                scope.spawn(move || {
                    let pinned = affinity::pin_current_thread(cpu);
                    let mut spans = Vec::with_capacity(rounds);
                    for _ in 0..rounds {
                        barrier.wait();
                        let start = Instant::now();
                        work(index);
                        let end = Instant::now();
                        spans.push((start, end));
                        after(index);
                        barrier.wait();
                    }
                    pinned.map(|_| spans)
                })
            })
            .collect();
        for round in 0..rounds {
            barrier.wait();
            barrier.wait();
            between(round);
        }
        handles
            .into_iter()
            .map(|h| h.join().expect("benchmark thread panicked"))
            .collect::<std::io::Result<Vec<_>>>()
    })?;
    let threads = spans
        .iter()
        .map(|s| s[reps.warmup..].iter().map(|(a, b)| *b - *a).collect())
        .collect();
    let wall = (reps.warmup..rounds)
        .map(|round| {
            let start = spans
                .iter()
                .map(|s| s[round].0)
                .min()
                .expect("at least one thread");
            let end = spans
                .iter()
                .map(|s| s[round].1)
                .max()
                .expect("at least one thread");
            end - start
        })
        .collect();
    Ok(Rounds { wall, threads })
}

/// Runs `f` on a thread pinned to `cpu` and returns its result: for work that must happen where
/// it will be measured (first-touch allocation, calibration, a clock reading).
pub fn on_cpu<T: Send>(cpu: usize, f: impl FnOnce() -> T + Send) -> std::io::Result<T> {
    std::thread::scope(|s| {
        s.spawn(|| affinity::pin_current_thread(cpu).map(|_| f()))
            .join()
            .expect("pinned thread panicked")
    })
}

/// Finds how many iterations of `kernel` take about `target` on the calling thread: doubles from
/// one until a run lasts at least `target / 20` (and 1 ms), times that size once more, and
/// scales by the faster of the two timings (a run that lost its core for a time slice would
/// otherwise shrink every round that follows). A point cut short by a signal
/// ([`stop::cut_short`]) stops doubling: its figures are dropped.
pub fn calibrate(target: Duration, kernel: impl Fn(u64)) -> u64 {
    let floor = (target / 20).max(Duration::from_millis(1));
    let time = |iterations| {
        let t = Instant::now();
        kernel(iterations);
        t.elapsed()
    };
    let mut iterations: u64 = 1;
    loop {
        let elapsed = time(iterations);
        if stop::cut_short() {
            return iterations;
        }
        if elapsed >= floor || iterations >= 1 << 50 {
            return scale(iterations, elapsed.min(time(iterations)), target);
        }
        iterations *= 2;
    }
}

/// The iteration count that takes `target` if `iterations` took `elapsed` (at least 1).
fn scale(iterations: u64, elapsed: Duration, target: Duration) -> u64 {
    let factor = target.as_secs_f64() / elapsed.as_secs_f64().max(1e-9);
    ((iterations as f64 * factor) as u64).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn rounds_run_every_thread_every_time() {
        let count = AtomicUsize::new(0);
        let mut ticks = 0;
        let cpus = vec![affinity::allowed_cpus()[0]; 3];
        let times = run_rounds(
            &cpus,
            Repetition {
                warmup: 1,
                repeat: 4,
            },
            |_| {
                count.fetch_add(1, Ordering::Relaxed);
                std::thread::sleep(Duration::from_millis(2));
            },
            |_| {
                count.fetch_add(100, Ordering::Relaxed);
            },
            |_| ticks += 1,
        )
        .unwrap();
        assert_eq!(times.len(), 4);
        assert_eq!(count.load(Ordering::Relaxed), 3 * 5 * 101);
        assert_eq!(ticks, 5);
        assert!(times.iter().all(|t| *t >= Duration::from_millis(2)));
    }

    #[test]
    fn calibration_scales_and_stops() {
        assert_eq!(
            scale(1000, Duration::from_millis(10), Duration::from_millis(250)),
            25_000
        );
        assert_eq!(
            scale(10, Duration::from_secs(1), Duration::from_millis(1)),
            1
        );
        // Doubling stops once a run reaches the floor (here: 1 ms of sleep at most per call).
        let calls = AtomicUsize::new(0);
        let n = calibrate(Duration::from_millis(2), |n| {
            calls.fetch_add(1, Ordering::Relaxed);
            if n >= 8 {
                std::thread::sleep(Duration::from_millis(1));
            }
        });
        assert!(n >= 1);
        assert_eq!(
            calls.load(Ordering::Relaxed),
            5,
            "1, 2, 4, then 8 sleeps, timed twice"
        );
        // The faster timing at the final size counts: a first one slowed 50 times (a lost time
        // slice) does not shrink the count to a fiftieth.
        let slow = AtomicUsize::new(0);
        let n = calibrate(Duration::from_millis(20), |n| {
            if n >= 8 {
                let first = slow.fetch_add(1, Ordering::Relaxed) == 0;
                std::thread::sleep(Duration::from_millis(if first { 50 } else { 1 }));
            }
        });
        assert!(n > 16, "scaled by the 1 ms timing, not the 50 ms one: {n}");
    }
}
