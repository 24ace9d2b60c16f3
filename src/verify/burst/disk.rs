//! The disk's burst: sequential writes to a loop device over a tmpfs (as fast as memory) with
//! no cap until [`SWITCH_AFTER`] after the first write reaches the device, then the block I/O
//! controller's cap of [`BPS_CAP`] switched on mid-run (io.max or blkio.throttle) — a
//! cloud disk's credit spent — under `--sustain` ([`crate::measure::steady`]). The point's
//! phases must find the switch where it was made (±1 s) and the rate it settled to at the cap
//! (±3 %), and the repetition must end within 2 intervals of the first window wholly at the
//! cap.

use crate::results::phases::burst;
use crate::results::verify::Check;
use crate::results::{Metric, Subsystem, Unit};
use crate::verify::checks::{
    Checks, Group, Judge, failed_all, interrupted, judged, ratio_read, skipped, twice_all,
};
use crate::verify::disk::{BPS_CAP, Cap, DISK_BYTES, cap, one_thread, uncap_writes};
use crate::verify::{cgroups, loop_disk::LoopDisk, names};
use crate::workload::disk::DiskWorkload;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// When the cap goes on, from the point's first write: inside an interval, not at its edge,
/// and before a steady window (5 intervals, 2.5 s) fits in the burst, which would end the
/// point before the cap (`--sustain` sees through a burst shorter than its window only); three
/// whole intervals and more of burst, the least a phase is.
const SWITCH_AFTER: Duration = Duration::from_millis(1750);

/// The point's longest time (`--sustain`): its intervals are a twentieth of it, 500 ms (five of
/// the controller's 100 ms slices each, so that they read its rate), its steady window 2.5 s.
const SUSTAIN: Duration = Duration::from_secs(10);

/// How long the watch waits for the point's first write before it gives up.
const FIRST_WRITE_WAIT: Duration = Duration::from_secs(60);

/// The three checks, none run yet.
fn bases() -> [Check; 3] {
    let imposed = format!(
        "{} MB/s writes from {} s on",
        BPS_CAP / 1_000_000,
        SWITCH_AFTER.as_secs_f64()
    );
    [
        skipped(
            "disk burst switch",
            Group::Burst,
            &imposed,
            (Subsystem::Disk, Unit::Seconds),
            "",
        ),
        skipped(
            "disk burst baseline",
            Group::Burst,
            &imposed,
            (Subsystem::Disk, Unit::BytesPerSec),
            "",
        ),
        skipped(
            "disk sustain",
            Group::Burst,
            &imposed,
            (Subsystem::Disk, Unit::Seconds),
            "",
        ),
    ]
}

/// Runs the disk's burst checks (or skips them with the reason where the loop device or the
/// control group cannot be had).
pub(super) fn checks(c: &mut Checks) -> anyhow::Result<()> {
    let skip_both = |c: &mut Checks, why: String| c.skip_all(bases(), &why);
    let disk = match LoopDisk::new(DISK_BYTES) {
        Ok(d) => d,
        Err(why) => return skip_both(c, format!("no loop device over tmpfs: {why}")),
    };
    let name = names::group(std::process::id());
    let mut group = match cgroups::Group::new(cgroups::Controller::Io, &name) {
        Ok(g) => g,
        Err(why) => return skip_both(c, format!("no block I/O control group: {why}")),
    };
    if let Err(why) = group.join() {
        return skip_both(c, format!("cannot join a block I/O control group: {why}"));
    }
    let stat = match disk.device.file_name() {
        Some(n) => Path::new("/sys/block").join(n).join("stat"),
        None => return skip_both(c, "the loop device has no name".into()),
    };
    // Tried twice where one is off its mark (`twice_all`): each try begins without the cap.
    let tried = twice_all(c, ratio_read, |c| attempt(c, &disk, &group, &stat));
    let left = group.leave().map_err(|e| anyhow::anyhow!(e));
    c.push_tried(tried)?;
    left
}

/// One try of the three checks: the point on `disk`, capped for `group` (joined) after its
/// first write, whose statistics are `stat`.
fn attempt(
    c: &mut Checks,
    disk: &LoopDisk,
    group: &cgroups::Group,
    stat: &Path,
) -> anyhow::Result<Vec<Check>> {
    let [switch, baseline, sustain] = bases();
    // No ramp: the window begins with the first write, which the watch sees. Its own time,
    // whatever --duration says: its intervals must be short beside the burst.
    let bench = one_thread(&disk.device, DiskWorkload::Ws, 64 << 10, Duration::ZERO)
        .with_all(crate::verify::checks::timing("sustain", SUSTAIN, 1));
    if let Err(why) = uncap_writes(group, &disk.number) {
        let e = anyhow::anyhow!("the cap could not be lifted before the point: {why}");
        return Ok(failed_all([switch, baseline, sustain], &bench, &e));
    }
    let done = AtomicBool::new(false);
    let (measured, switched) = std::thread::scope(|s| {
        let watch = s.spawn(|| switch_after_first_write(stat, group, &disk.number, &done));
        let measured = c.measure(&bench);
        done.store(true, Ordering::Relaxed);
        let switched = watch
            .join()
            .unwrap_or_else(|_| Err("the watch of the loop device failed".into()));
        (measured, switched)
    });
    let points = match measured {
        Ok(p) => p,
        Err(e) if interrupted(&e) => return Err(e),
        Err(e) => {
            return Ok(failed_all([switch, baseline, sustain], &bench, &e));
        }
    };
    let switched = match switched {
        Ok(s) => s,
        Err(why) => {
            let e = anyhow::anyhow!("the cap could not be switched on: {why}");
            return Ok(failed_all([switch, baseline, sustain], &bench, &e));
        }
    };
    let at = c.find(&points, |r| r.metric == Metric::Throughput);
    let rec = at.and_then(|i| c.record(i));
    let phases = rec.and_then(|r| r.phases.clone()).unwrap_or_default();
    // The repetition's measured time: its whole intervals.
    let interval_s = crate::measure::timeline::interval_of(SUSTAIN).as_secs_f64();
    let ran_s = rec.and_then(crate::results::ResultRecord::intervals_s);
    let steady_s = rec.and_then(crate::results::ResultRecord::last_steady_s);
    let found = burst(&phases).map(|(b, then)| (b.clone(), then.clone()));
    let how = match &found {
        Some((b, then)) => format!(
            "the phases found {} MB/s until {:.1} s, then {} MB/s from {:.1} s",
            crate::units::format_sig(b.value / 1e6),
            b.end_s,
            crate::units::format_sig(then.value / 1e6),
            then.start_s
        ),
        None => "the point's phases show no burst".into(),
    };
    let switch_check = judged(
        switch,
        &bench,
        points.clone(),
        found.as_ref().map(|(_, then)| then.start_s),
        Judge {
            expected: switched.as_secs_f64(),
            tolerance: 1.0,
            tolerance_text: "±1 s".into(),
            reason: format!(
                "{how}; expected: the time the cap went on, after the point's first write reached the loop device; measured: when the phase the point settled to began"
            ),
        },
    );
    let cap_bps = BPS_CAP as f64;
    let baseline_check = judged(
        baseline,
        &bench,
        points.clone(),
        found.as_ref().map(|(_, then)| then.value),
        Judge {
            expected: cap_bps,
            tolerance: 0.03 * cap_bps,
            tolerance_text: "±3 %".into(),
            reason: format!(
                "{how}; expected: the cap ({}); measured: the median of the last phase's intervals",
                if group.v2 { "io.max" } else { "blkio.throttle" }
            ),
        },
    );
    // The first window wholly at the cap ends `steady::WINDOW` intervals after the first whole
    // interval after the switch; the repetition ends at the end of the interval it learns it in:
    // between that window's end and 2 intervals after the switch plus the window.
    let window_s = crate::measure::steady::WINDOW as f64 * interval_s;
    let sustain_check = judged(
        sustain,
        &bench,
        points,
        ran_s,
        Judge {
            expected: switched.as_secs_f64() + window_s + interval_s,
            tolerance: interval_s,
            tolerance_text: format!("±{} s", crate::units::format_sig(interval_s)),
            reason: format!(
                "expected: the switch plus the steady window ({} intervals of {} s), and at most 2 intervals more; measured: the repetition's measured time (steady after {})",
                crate::measure::steady::WINDOW,
                crate::units::format_sig(interval_s),
                steady_s.map_or("— it never was".into(), |s| format!(
                    "{} s",
                    crate::units::format_sig(s)
                ))
            ),
        },
    );
    Ok(vec![switch_check, baseline_check, sustain_check])
}

/// Waits for the first write to reach the device whose statistics are `stat`, then for
/// [`SWITCH_AFTER`], and caps `number`'s writes for `group`: how long after that first write
/// the cap went on. Ends early, with an error, when `done` is set first (the point ended or
/// failed) or no write comes within [`FIRST_WRITE_WAIT`].
fn switch_after_first_write(
    stat: &Path,
    group: &cgroups::Group,
    number: &str,
    done: &AtomicBool,
) -> Result<Duration, String> {
    let before = sectors_written(stat)?;
    let waiting = Instant::now();
    let first = loop {
        if done.load(Ordering::Relaxed) {
            return Err("the point ended before its first write was seen".into());
        }
        if waiting.elapsed() > FIRST_WRITE_WAIT {
            return Err(format!(
                "no write reached the loop device within {} s",
                FIRST_WRITE_WAIT.as_secs()
            ));
        }
        if sectors_written(stat)? > before {
            break Instant::now();
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    while first.elapsed() < SWITCH_AFTER {
        if done.load(Ordering::Relaxed) {
            return Err("the point ended before the cap was due".into());
        }
        std::thread::sleep(
            SWITCH_AFTER
                .saturating_sub(first.elapsed())
                .min(Duration::from_millis(10)),
        );
    }
    let asked = first.elapsed();
    cap(group, number, Cap::WriteBytes(BPS_CAP))?;
    // Between the request and its return.
    Ok((asked + first.elapsed()) / 2)
}

/// The sectors written to a block device so far, from its `stat` file (the seventh field).
fn sectors_written(stat: &Path) -> Result<u64, String> {
    let text = std::fs::read_to_string(stat)
        .map_err(|e| format!("cannot read {}: {e}", stat.display()))?;
    text.split_whitespace()
        .nth(6)
        .and_then(|f| f.parse().ok())
        .ok_or_else(|| format!("{} has no count of sectors written", stat.display()))
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_sectors_written_are_the_seventh_field() {
        let dir = tempfile::tempdir().unwrap();
        let stat = dir.path().join("stat");
        std::fs::write(
            &stat,
            "  120 0 960 4 5371 0 687104 1902 0 76 1906 0 0 0 0\n",
        )
        .unwrap();
        assert_eq!(super::sectors_written(&stat), Ok(687_104));
        std::fs::write(&stat, "1 2 3\n").unwrap();
        assert!(super::sectors_written(&stat).is_err());
    }
}
