//! The diagnosis's faults of the disk: one I/O in flight, reads served from the page cache.

use super::*;
use crate::results::params::EngineKind;
use crate::units::format_sig;
use crate::workload::{Workload, disk::DiskWorkload};

/// The queue-depth fault's deep queue, and the size of the disk faults' file.
const DEEP_QUEUE: u32 = 32;
const DISK_FILE: u64 = 256 << 20;

/// Random 4 KiB reads of a file of the run's at queue depth 1 against queue depth 32 (io_uring
/// both, O_DIRECT).
pub(super) fn queue_depth(c: &mut Checks, base: Check) -> anyhow::Result<Check> {
    let bench = [
        Setting::Workload(Workload::Disk(DiskWorkload::Rr)),
        Setting::Bytes("block-size", 4 << 10),
        Setting::Engine(EngineKind::IoUring),
    ];
    let depth = |n: u32| Setting::Count("iodepth", n as usize);
    let clean = [&bench[..], &[depth(DEEP_QUEUE)]].concat();
    let faulted = [&bench[..], &[depth(1)]].concat();
    disk_fault(
        c,
        base,
        (&clean, &faulted),
        &format!(
            "4 KiB random reads (O_DIRECT, io_uring) at queue depth 1 instead of {DEEP_QUEUE}"
        ),
    )
}

/// Sequential 1 MiB rereads of a file of the run's (read once before each repetition, IOzone's
/// reread) through the page cache (`--buffered`), which holds the file, against the same with
/// O_DIRECT: the device's.
pub(super) fn page_cache(c: &mut Checks, base: Check) -> anyhow::Result<Check> {
    let bench = [
        Setting::Workload(Workload::Disk(DiskWorkload::Reread)),
        Setting::Bytes("block-size", 1 << 20),
        Setting::Engine(EngineKind::Psync),
    ];
    let faulted = [&bench[..], &[Setting::Flag("buffered")]].concat();
    disk_fault(
        c,
        base,
        (&bench, &faulted),
        "1 MiB sequential rereads through the page cache (--buffered) instead of O_DIRECT",
    )
}

/// A disk fault: one thread's `clean` and `faulted` options (each with the file's: a file of
/// the run's under [`disk_dir`]). A virtio or cloud disk's rated figures are nowhere to be
/// read: its peak is given (`--disk-peak-read-iops` and `--disk-peak-read-mbps`) as the rates
/// the clean point reached in a run just before, the device's limit as this run sees it.
fn disk_fault(
    c: &mut Checks,
    base: Check,
    (clean, faulted): (&[Setting], &[Setting]),
    how: &str,
) -> anyhow::Result<Check> {
    let dir = disk_dir();
    let bench = |c: &Checks, options: &[Setting], peak: Option<(f64, f64)>| {
        let peaks = peak.map(|(iops, mbps)| {
            [
                Setting::Number("disk-peak-read-iops", iops.round()),
                Setting::Number("disk-peak-read-mbps", thousandths(mbps)),
            ]
        });
        Benchmark::new(Subsystem::Disk)
            .with_all([
                Setting::Path("dir", dir.clone()),
                Setting::Bytes("size", DISK_FILE),
                Setting::Count("threads", 1),
            ])
            .with_all(options.iter().cloned())
            .with_all(peaks.into_iter().flatten())
            .with_all(c.timing("runtime"))
    };
    let first = bench(c, clean, None);
    let limit = match measure(c, &first, &base)? {
        Measured::Points(p) => p,
        Measured::Ended(check) => return Ok(check),
    };
    let on_tmpfs = limit
        .iter()
        .filter_map(|i| c.record(*i))
        .filter_map(|r| r.params.disk()?.file_system.clone())
        .any(|fs| matches!(fs.as_str(), "tmpfs" | "ramfs"));
    if on_tmpfs {
        return Ok(Check {
            reason: format!("{} is on a tmpfs: no disk under it", dir.display()),
            points: limit,
            ..base
        });
    }
    let peak =
        rate_of(c, &limit, Metric::Iops, 1.0).zip(rate_of(c, &limit, Metric::Throughput, 1e6));
    let Some(peak) = peak else {
        return Ok(no_figure(base, &[&first], limit));
    };
    let clean_bench = bench(c, clean, Some(peak));
    let faulted_bench = bench(c, faulted, Some(peak));
    let mut check = interleaved(
        c,
        base,
        (&clean_bench, &faulted_bench),
        &mut InTheLine,
        &format!(
            "{how}, one thread, of a file of the run's in {}; the disk's peak given as the {:.0} IOPS and {} MB/s the clean point read just before",
            dir.display(),
            peak.0,
            format_sig(peak.1)
        ),
    )?;
    check.points.splice(0..0, limit);
    Ok(check)
}

/// The directory of the disk faults' file: /var/tmp, which the FHS keeps on persistent
/// storage (a disk, where /tmp may be a tmpfs), else the system's temporary directory.
fn disk_dir() -> std::path::PathBuf {
    let var = std::path::Path::new("/var/tmp");
    if var.is_dir() {
        var.to_path_buf()
    } else {
        std::env::temp_dir()
    }
}
