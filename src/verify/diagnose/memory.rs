//! The diagnosis's fault of the memory: arrays beyond the cache level whose rate the peak is.

use super::*;
use crate::units::{format_bytes_binary, format_sig};
use crate::workload::{Workload, mem::MemWorkload};

/// STREAM's TRIAD on one thread with arrays in memory (four times the last-level cache, 64 MiB
/// at least) against arrays that fit in L2 (three arrays of an eighth of it each: filled to
/// three quarters, L2's rate moved from 194 to 232 GB/s from run to run on a Zen 5 guest, with
/// where the pages fell among its sets; at three eighths it held 232 in four runs). A cache
/// level's rate is in no table: the peak is given (`--mem-peak-gbs`) as the rate the arrays in
/// L2 reached just before, the level's as this run sees it.
pub(super) fn working_set(c: &mut Checks, base: Check) -> anyhow::Result<Check> {
    let caches = c.rec.system().caches;
    let data = || caches.iter().filter(|x| x.kind != "Instruction");
    let l2 = data().find(|x| x.level == 2).map(|x| x.size_bytes);
    let last = data().map(|x| x.size_bytes).max();
    let (Some(l2), Some(last)) = (l2.filter(|b| *b >= 64 << 10), last) else {
        return Ok(Check {
            reason: "sysfs names no L2 data cache of 64 KiB or more on this machine".into(),
            ..base
        });
    };
    // Whole KiB and MiB, as --array-size is given.
    let small_bytes = (l2 / 8) & !((1 << 10) - 1);
    let large_bytes = (4 * last).max(64 << 20) & !((1 << 20) - 1);
    let bench = |c: &Checks, array: u64, gbs: Option<f64>| {
        Benchmark::new(Subsystem::Mem)
            .with_all([
                Setting::Workload(Workload::Mem(MemWorkload::Triad)),
                Setting::Count("threads", 1),
                Setting::Bytes("array-size", array),
            ])
            .with_all(gbs.map(|g| Setting::Number("mem-peak-gbs", thousandths(g))))
            .with_all(c.timing("duration"))
    };
    let first = bench(c, small_bytes, None);
    let level = match measure(c, &first, &base)? {
        Measured::Points(p) => p,
        Measured::Ended(check) => return Ok(check),
    };
    // GB/s, as `--mem-peak-gbs` takes it (0.01 at least).
    let gbs = rate_of(c, &level, Metric::Throughput, 1e9).filter(|v| *v >= 0.01);
    let Some(gbs) = gbs else {
        return Ok(no_figure(base, &[&first], level));
    };
    let clean_bench = bench(c, small_bytes, Some(gbs));
    let faulted_bench = bench(c, large_bytes, Some(gbs));
    let mut check = interleaved(
        c,
        base,
        (&clean_bench, &faulted_bench),
        &mut InTheLine,
        &format!(
            "TRIAD on one thread with arrays of {} each instead of {} (L2: {}), the peak given as the {} GB/s the arrays in L2 read just before",
            format_bytes_binary(large_bytes),
            format_bytes_binary(small_bytes),
            format_bytes_binary(l2),
            format_sig(gbs)
        ),
    )?;
    check.points.splice(0..0, level);
    Ok(check)
}
