//! The disk's checks: IOPS and bandwidth caps of the block I/O controller on a loop device over
//! a tmpfs of the run's.

use super::checks::{
    Checks, Group, Judge, failed, interrupted, judged, ratio_read, skipped, twice,
};
use crate::app::setting::{Benchmark, Setting};
use crate::results::params::EngineKind;
use crate::results::{Metric, Subsystem, Unit};
use crate::workload::{Workload, disk::DiskWorkload};
use std::time::Duration;

/// The disk's caps and size.
pub(super) const IOPS_CAP: u64 = 2000;

pub(super) const BPS_CAP: u64 = 50_000_000;

pub(super) const DISK_BYTES: u64 = 64 << 20;

/// The disk's checks: read IOPS and write bandwidth under the block I/O controller's caps.
pub(super) fn disk(c: &mut Checks) -> anyhow::Result<()> {
    let iops_imposed = format!("{IOPS_CAP} read IOPS");
    let bps_imposed = format!("{} MB/s writes", BPS_CAP / 1_000_000);
    let iops_base = skipped(
        "disk iops",
        Group::Disk,
        &iops_imposed,
        (Subsystem::Disk, Unit::Iops),
        "",
    );
    let bps_base = skipped(
        "disk bandwidth",
        Group::Disk,
        &bps_imposed,
        (Subsystem::Disk, Unit::BytesPerSec),
        "",
    );
    let skip_both =
        |c: &mut Checks, why: &str| c.skip_all([iops_base.clone(), bps_base.clone()], why);
    let disk = match super::loop_disk::LoopDisk::new(DISK_BYTES) {
        Ok(d) => d,
        Err(why) => return skip_both(c, &format!("no loop device over tmpfs: {why}")),
    };
    let name = super::names::group(std::process::id());
    let mut group = match super::cgroups::Group::new(super::cgroups::Controller::Io, &name) {
        Ok(g) => g,
        Err(why) => return skip_both(c, &format!("no block I/O control group: {why}")),
    };
    let caps = cap(&group, &disk.number, Cap::ReadIops(IOPS_CAP))
        .and_then(|()| cap(&group, &disk.number, Cap::WriteBytes(BPS_CAP)));
    if let Err(why) = caps.and_then(|()| group.join()) {
        return skip_both(c, &format!("cannot cap the loop device: {why}"));
    }
    // The controller keeps what a stalled writer did not use of its slice and lets it go at
    // once when the writer resumes: a stall just before the window puts up to a slice's worth
    // more in it (a loaded runner read 1.032 × the cap over 1.5 s); three seconds at least
    // make that a third of what it is over one. Reads of 4 KiB are too small to show it.
    let bps_least = std::time::Duration::from_secs(3);
    for (base, workload, block, metric, cap, least) in [
        (
            &iops_base,
            DiskWorkload::Rr,
            4 << 10,
            Metric::Iops,
            IOPS_CAP as f64,
            Default::default(),
        ),
        // Blocks small enough that a second holds hundreds of them.
        (
            &bps_base,
            DiskWorkload::Ws,
            64 << 10,
            Metric::Throughput,
            BPS_CAP as f64,
            bps_least,
        ),
    ] {
        // The controller lets a group start with a slice's worth at once and takes it back
        // after: past a second it runs at its cap.
        let bench = one_thread(&disk.device, workload, block, Duration::from_secs(1))
            .with_all(c.timing_at_least("runtime", least));
        // Tried twice where off its mark ([`twice`]).
        let tried = twice(c, ratio_read, |c| match c.measure(&bench) {
            Ok(points) => {
                let unit = base.unit;
                let at = c.find(&points, |r| r.metric == metric && r.unit == unit);
                let measured = at.and_then(|i| c.record(i)).map(|r| r.summary.mean);
                Ok(judged(
                    base.clone(),
                    &bench,
                    points,
                    measured,
                    Judge {
                        expected: cap,
                        tolerance: 0.03 * cap,
                        tolerance_text: "±3 %".into(),
                        reason: format!(
                            "the block I/O controller caps this process on a loop device over a file in a tmpfs of the run's, which is far faster uncapped; expected: the cap ({})",
                            if group.v2 { "io.max" } else { "blkio.throttle" }
                        ),
                    },
                ))
            }
            Err(e) if interrupted(&e) => Err(e),
            Err(e) => Ok(failed(base.clone(), &bench, &e)),
        });
        c.push_tried(tried)?;
    }
    group.leave().map_err(|e| anyhow::anyhow!(e))?;
    Ok(())
}

/// A point of one thread at queue depth 1 (psync) on the loop device `device`, with its ramp
/// and without its runtime and repetitions.
pub(super) fn one_thread(
    device: &std::path::Path,
    workload: DiskWorkload,
    block: u64,
    ramp: Duration,
) -> Benchmark {
    Benchmark::new(Subsystem::Disk).with_all([
        Setting::Path("file", device.to_path_buf()),
        Setting::Flag("destructive"),
        Setting::Bytes("size", 64 << 20),
        Setting::Workload(Workload::Disk(workload)),
        Setting::Bytes("block-size", block),
        Setting::Count("threads", 1),
        Setting::Count("iodepth", 1),
        Setting::Engine(EngineKind::Psync),
        Setting::Time("ramp", ramp),
    ])
}

/// A cap of the block I/O controller.
#[derive(Debug, Clone, Copy)]
pub(super) enum Cap {
    /// Read I/Os a second.
    ReadIops(u64),
    /// Bytes written a second.
    WriteBytes(u64),
}

/// Caps device `number` ("7:0") for `group`'s processes: cgroup v2's io.max, or v1's
/// blkio.throttle file of the same meaning.
pub(super) fn cap(group: &super::cgroups::Group, number: &str, cap: Cap) -> Result<(), String> {
    let (key, file, value) = match cap {
        Cap::ReadIops(v) => ("riops", "blkio.throttle.read_iops_device", v),
        Cap::WriteBytes(v) => ("wbps", "blkio.throttle.write_bps_device", v),
    };
    if group.v2 {
        group.set("io.max", &format!("{number} {key}={value}"))
    } else {
        group.set(file, &format!("{number} {value}"))
    }
}

/// Lifts `group`'s cap on device `number`'s writes: v2's "wbps=max", v1's rule of 0 (which
/// deletes it).
pub(super) fn uncap_writes(group: &super::cgroups::Group, number: &str) -> Result<(), String> {
    if group.v2 {
        group.set("io.max", &format!("{number} wbps=max"))
    } else {
        group.set("blkio.throttle.write_bps_device", &format!("{number} 0"))
    }
}
