//! The real core clock, measured: a chain of dependent integer adds retires exactly one add per
//! cycle (an ALU add has a latency of one cycle on every x86 and Arm core in the table), so the
//! rate of adds is the clock. This is what the core runs at under load, unlike /proc/cpuinfo's
//! "cpu MHz", which in a VM is the TSC rate, or the nominal frequency in the brand string.

use std::time::{Duration, Instant};

/// Adds in one pass of the loop body; the loop's own counter runs on another ALU in parallel.
pub const ADDS_PER_ITERATION: u64 = 100;

macro_rules! x10 {
    ($s:expr) => {
        concat!($s, $s, $s, $s, $s, $s, $s, $s, $s, $s)
    };
}

/// Runs `iterations` × [`ADDS_PER_ITERATION`] dependent adds.
#[cfg(target_arch = "x86_64")]
#[inline(never)]
pub fn add_chain(iterations: u64) -> u64 {
    let mut x: u64 = 0;
    let mut n = iterations.max(1);
    // SAFETY: register-only arithmetic and a counted loop; no memory is touched.
    unsafe {
        core::arch::asm!(
            "2:",
            x10!(x10!("add {x}, 1\n")),
            "dec {n}",
            "jnz 2b",
            x = inout(reg) x,
            n = inout(reg) n,
            options(nomem, nostack),
        );
    }
    let _ = n;
    x
}

/// Runs `iterations` × [`ADDS_PER_ITERATION`] dependent adds.
#[cfg(target_arch = "aarch64")]
#[inline(never)]
pub fn add_chain(iterations: u64) -> u64 {
    let mut x: u64 = 0;
    let mut n = iterations.max(1);
    // SAFETY: register-only arithmetic and a counted loop; no memory is touched.
    unsafe {
        core::arch::asm!(
            "2:",
            x10!(x10!("add {x}, {x}, #1\n")),
            "subs {n}, {n}, #1",
            "b.ne 2b",
            x = inout(reg) x,
            n = inout(reg) n,
            options(nomem, nostack),
        );
    }
    let _ = n;
    x
}

/// True where [`add_chain`] exists.
pub const SUPPORTED: bool = cfg!(any(target_arch = "x86_64", target_arch = "aarch64"));

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
pub fn add_chain(_iterations: u64) -> u64 {
    0
}

/// Measures the clock of the calling thread's core in GHz: a warm-up of `warmup`, then
/// `samples` timed runs of about `sample` each; the highest is returned, since interruptions
/// only ever lower the rate.
pub fn measure_ghz(warmup: Duration, sample: Duration, samples: usize) -> Option<f64> {
    if !SUPPORTED {
        return None;
    }
    let time = |iters: u64| {
        let t = Instant::now();
        std::hint::black_box(add_chain(iters));
        t.elapsed()
    };
    // Calibrate: double until a run is long enough to time well (>= 1 ms).
    let mut iters: u64 = 1_000;
    let mut elapsed = time(iters);
    while elapsed < Duration::from_millis(1) && iters < 1 << 40 {
        iters *= 2;
        elapsed = time(iters);
    }
    let per_iter = elapsed.as_secs_f64() / iters as f64;
    let deadline = Instant::now() + warmup;
    while Instant::now() < deadline {
        time(iters);
    }
    let n = ((sample.as_secs_f64() / per_iter) as u64).max(1);
    (0..samples.max(1))
        .map(|_| (n * ADDS_PER_ITERATION) as f64 / time(n).as_secs_f64() / 1e9)
        .max_by(f64::total_cmp)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clock_is_plausible() {
        let ghz = measure_ghz(Duration::from_millis(5), Duration::from_millis(2), 3).unwrap();
        // Any core that runs this test clocks between 0.2 and 7 GHz.
        assert!((0.2..7.0).contains(&ghz), "measured {ghz} GHz");
    }
}
