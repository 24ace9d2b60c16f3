//! The CPU's burst: one thread's DP throughput in a control group of the run's with no limit,
//! then, [`SWITCH_AFTER`] after its command began (its calibration done, its timed round under
//! way), a quota of half a CPU switched on (cpu.max, or cpu.cfs_quota_us) — a burstable
//! instance's credit spent. The point's phases (from its per-interval series) must find the
//! rate after the switch at the quota's share of the rate before it (±10 %).
//!
//! The kernel's own burst allowance (`cpu.max.burst`, `cpu.cfs_burst_us`) is no burst to find:
//! it may not exceed the quota, so it is spent within one period (1 s at most), shorter than a
//! phase (a second and three intervals).

use crate::app::setting::Setting;
use crate::results::phases::burst;
use crate::results::verify::Check;
use crate::results::{Metric, Subsystem, Unit};
use crate::verify::cgroups;
use crate::verify::checks::{
    Checks, Group, Judge, dp_thread, failed, interrupted, judged, ratio_read, skipped, twice,
};
use crate::verify::cpu::{PERIOD_US, QUOTA_US, free_group};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// When the quota goes on, from the command's start: its calibration and clock readings are
/// done (2.4 s on a KVM guest at 8 s rounds), and two seconds or so of the timed round ran
/// free. The round's iterations are fixed by the calibration: under the quota they take twice
/// as long, so the round lasts about 10 s.
const SWITCH_AFTER: Duration = Duration::from_millis(4500);

/// The round's measured time at the calibrated rate: its intervals are a twentieth, 300 ms
/// (three of the quota's 100 ms periods each, so that they read its share).
const DURATION: Duration = Duration::from_secs(6);

/// The check, not run yet.
fn base() -> Check {
    let share = QUOTA_US as f64 / PERIOD_US as f64;
    skipped(
        "cpu burst",
        Group::Burst,
        &format!("{share} CPU quota from {} s on", SWITCH_AFTER.as_secs_f64()),
        (Subsystem::Cpu, Unit::OpsPerSec),
        "",
    )
}

/// Runs the CPU's burst check (or skips it with the reason where no control group can limit
/// this process).
pub(super) fn checks(c: &mut Checks) -> anyhow::Result<()> {
    let mut group = match free_group() {
        Ok(g) => g,
        Err(why) => return c.skip_all([base()], &why),
    };
    if let Err(why) = group.join() {
        return c.skip_all([base()], &format!("cannot join a CPU control group: {why}"));
    }
    // Tried twice where off its mark (`twice`): each try begins without the quota.
    let tried = twice(c, ratio_read, |c| attempt(c, &group));
    let left = group.leave().map_err(|e| anyhow::anyhow!(e));
    c.push_tried(tried)?;
    left
}

/// One try of the check, in `group` (joined).
fn attempt(c: &mut Checks, group: &cgroups::Group) -> anyhow::Result<Check> {
    let bench = dp_thread()
        .with(Setting::Warmup(0))
        .with_all(crate::verify::checks::timing("duration", DURATION, 1));
    if let Err(why) = group.unlimit_cpu() {
        let e = anyhow::anyhow!("the quota could not be lifted before the point: {why}");
        return Ok(failed(base(), &bench, &e));
    }
    let done = AtomicBool::new(false);
    let started = Instant::now();
    let (measured, switched) = std::thread::scope(|s| {
        let switch = s.spawn(|| {
            while started.elapsed() < SWITCH_AFTER {
                if done.load(Ordering::Relaxed) {
                    return Err("the point ended before the quota was due".to_string());
                }
                std::thread::sleep(Duration::from_millis(10));
            }
            group.limit_cpu(QUOTA_US, PERIOD_US)
        });
        let measured = c.measure(&bench);
        done.store(true, Ordering::Relaxed);
        let switched = switch
            .join()
            .unwrap_or_else(|_| Err("the switch of the quota failed".into()));
        (measured, switched)
    });
    let points = match measured {
        Ok(p) => p,
        Err(e) if interrupted(&e) => return Err(e),
        Err(e) => return Ok(failed(base(), &bench, &e)),
    };
    if let Err(why) = switched {
        let e = anyhow::anyhow!("the quota could not be switched on: {why}");
        return Ok(failed(base(), &bench, &e));
    }
    let share = QUOTA_US as f64 / PERIOD_US as f64;
    let found = c
        .find(&points, |r| r.metric == Metric::Throughput)
        .and_then(|i| c.record(i))
        .and_then(|r| {
            let (b, then) = burst(r.phases.as_deref()?)?;
            Some((b.value, b.end_s, then.value))
        });
    let Some((free, until, limited)) = found else {
        let e =
            anyhow::anyhow!("the point's phases show no burst: the quota's switch was not found");
        return Ok(failed(base(), &bench, &e));
    };
    let expected = share * free;
    let how = format!(
        "the phases found {} GOPS until {:.1} s, then {} GOPS",
        crate::units::format_sig(free / 1e9),
        until,
        crate::units::format_sig(limited / 1e9)
    );
    let check = judged(
        base(),
        &bench,
        points,
        Some(limited),
        Judge {
            expected,
            tolerance: 0.10 * expected,
            tolerance_text: "±10 %".into(),
            reason: format!(
                "{how}; expected: {share} × the rate before the quota went on ({}); measured: the last phase's median",
                if group.v2 {
                    "cpu.max"
                } else {
                    "cpu.cfs_quota_us"
                }
            ),
        },
    );
    Ok(check)
}
