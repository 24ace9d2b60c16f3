//! The disk's peaks: the rated figures for the read/write mix, bounded by the link.

use super::{Peak, PeakInput, input};
use crate::ids::Unit;
use crate::sysinfo::fact::Source;
use std::collections::BTreeMap;

/// The rated figures of a disk, from the user.
#[derive(Debug, Clone, Default)]
pub struct DiskPeaks {
    pub read_mbps: Option<f64>,
    pub write_mbps: Option<f64>,
    pub read_iops: Option<f64>,
    pub write_iops: Option<f64>,
    /// The rated access latency of one I/O, µs (`--disk-latency-us`).
    pub latency_us: Option<f64>,
    /// A rotating disk's spindle speed and average seek (`--rpm`, `--seek-ms`).
    pub rpm: Option<f64>,
    pub seek_ms: Option<f64>,
}

impl DiskPeaks {
    /// The least time to reach a record before its transfer, µs, with its formula and inputs:
    /// the rated access latency, or for random I/O on a rotating disk the average seek and half
    /// a rotation (sequential I/O on it neither seeks nor waits: 0); None when neither is
    /// given.
    fn access_us(&self, random: bool) -> Option<(f64, String, BTreeMap<String, PeakInput>)> {
        let mut inputs = BTreeMap::new();
        if let Some(l) = self.latency_us {
            inputs.insert("access".into(), input(l, "µs", Source::User));
            return Some((l, "access".into(), inputs));
        }
        let (rpm, seek) = (self.rpm?, self.seek_ms?);
        inputs.insert("rpm".into(), input(rpm, "rev/min", Source::User));
        inputs.insert("seek".into(), input(seek, "ms", Source::User));
        if !random {
            return Some((
                0.0,
                "0 (sequential: no seek, no rotational wait)".into(),
                inputs,
            ));
        }
        let us = seek * 1e3 + 0.5 * 60e6 / rpm;
        Some((us, "(seek + ½ × 60 s / rpm)".into(), inputs))
    }
}

/// The rated figure for a mix with `read_share` of the bytes (or I/Os) read: the harmonic
/// mean of the read and write figures, weighted by the mix.
fn rated_mix(read: Option<f64>, write: Option<f64>, read_share: f64) -> Option<f64> {
    match (read, write) {
        (Some(r), Some(w)) => Some(1.0 / (read_share / r + (1.0 - read_share) / w)),
        (Some(r), None) if read_share >= 1.0 => Some(r),
        (None, Some(w)) if read_share <= 0.0 => Some(w),
        _ => None,
    }
}

/// A disk's throughput peak in MB/s: its rated figure (user) for the read/write mix, bounded
/// by its link (`link`: MB/s and a description); or the link alone; or unknown with the reason
/// (`no_link`: why there is no link bound).
pub fn disk_throughput(
    rated: &DiskPeaks,
    read_share: f64,
    link: Option<(f64, String)>,
    no_link: &str,
) -> Result<Peak, String> {
    let rated = rated_mix(rated.read_mbps, rated.write_mbps, read_share);
    let mut inputs = BTreeMap::new();
    let input = |v: f64, u: &str, s: Source| PeakInput {
        value: v,
        unit: u.into(),
        source: s,
    };
    match (rated, link) {
        (Some(r), Some((l, desc))) => {
            inputs.insert("rated".into(), input(r, "MB/s", Source::User));
            inputs.insert(
                "link".into(),
                input(l, &format!("MB/s ({desc})"), Source::Detected),
            );
            Ok(Peak {
                value: r.min(l),
                unit: Unit::MBPerSec,
                formula: "min(rated, link)".into(),
                inputs,
            })
        }
        (Some(r), None) => {
            inputs.insert("rated".into(), input(r, "MB/s", Source::User));
            Ok(Peak {
                value: r,
                unit: Unit::MBPerSec,
                formula: "rated".into(),
                inputs,
            })
        }
        (None, Some((l, desc))) => {
            inputs.insert(
                "link".into(),
                input(l, &format!("MB/s ({desc})"), Source::Detected),
            );
            Ok(Peak {
                value: l,
                unit: Unit::MBPerSec,
                formula: "link (the device's rated figure is not known: give --disk-peak-read-mbps/--disk-peak-write-mbps)".into(),
                inputs,
            })
        }
        (None, None) => Err(format!(
            "the device's rated throughput is not in sysfs and {no_link}; give --disk-peak-read-mbps and --disk-peak-write-mbps"
        )),
    }
}

/// What the formula of a rotating disk's IOPS bound adds: why a queue can beat it.
pub const QUEUEING_NOTE: &str = "with command queueing (NCQ/TCQ) the drive reorders queued requests to shorten its seeks and rotational waits, so above 1 I/O in flight a measured figure can exceed this: n / access holds only while the access time does not shrink with the queue";

/// A disk's IOPS peak for records of `block` bytes with `read_share` of them read and
/// `outstanding` I/Os in flight (threads × queue depth): the least of the rated IOPS (user) for
/// the mix, the bandwidth bound (the rated MB/s for the mix, or the link's, ÷ the record size)
/// and, for random I/O with a known access time, `outstanding` ÷ the access time — Little's
/// law: n I/Os in flight, each taking the access time, complete at most n / access a second.
/// The access time is the rated one (`--disk-latency-us`) or, on a rotating disk, a seek and
/// half a rotation (`--rpm`, `--seek-ms`); there command queueing can shorten it
/// ([`QUEUEING_NOTE`]). Unknown where no bound is known.
pub fn disk_iops(
    rated: &DiskPeaks,
    read_share: f64,
    block: u64,
    link: Option<(f64, String)>,
    random: bool,
    outstanding: u64,
) -> Result<Peak, String> {
    let mut bounds: Vec<(f64, &str)> = Vec::new();
    let mut inputs = BTreeMap::new();
    if let Some(r) = rated_mix(rated.read_iops, rated.write_iops, read_share) {
        inputs.insert("rated".into(), input(r, "IOPS", Source::User));
        bounds.push((r, "rated"));
    }
    let bandwidth = rated_mix(rated.read_mbps, rated.write_mbps, read_share)
        .map(|m| (m, "rated MB/s".to_string(), Source::User))
        .or(link.map(|(m, desc)| (m, format!("MB/s ({desc})"), Source::Detected)));
    if let Some((mbps, unit, source)) = bandwidth {
        inputs.insert("bandwidth".into(), input(mbps, &unit, source));
        inputs.insert(
            "block".into(),
            input(block as f64, "bytes", Source::Detected),
        );
        bounds.push((mbps * 1e6 / block.max(1) as f64, "bandwidth / block"));
    }
    let n = outstanding.max(1);
    let mut rotating = false;
    if random && let Some((us, formula, more)) = rated.access_us(true) {
        inputs.extend(more);
        inputs.insert(
            "n".into(),
            input(n as f64, "I/Os in flight", Source::Detected),
        );
        rotating = formula != "access";
        bounds.push((
            n as f64 * 1e6 / us.max(1e-9),
            if rotating {
                "n / (seek + ½ rotation)"
            } else {
                "n / access"
            },
        ));
    }
    let Some(&(value, _)) = bounds.iter().min_by(|a, b| a.0.total_cmp(&b.0)) else {
        return Err("a device's rated IOPS and bandwidth are not in sysfs and it has no link bound; give --disk-peak-read-iops and --disk-peak-write-iops (or the MB/s figures), or --rpm and --seek-ms for a rotating disk".to_string());
    };
    let mut formula = match bounds.len() {
        1 => bounds[0].1.to_string(),
        _ => format!(
            "min({})",
            bounds.iter().map(|b| b.1).collect::<Vec<_>>().join(", ")
        ),
    };
    if bounds.iter().any(|b| b.1.starts_with("n /")) {
        formula.push_str(", n = threads × queue depth (Little's law)");
    }
    if rotating {
        formula.push_str(&format!("; {QUEUEING_NOTE}"));
    }
    Ok(Peak {
        value,
        unit: Unit::Iops,
        formula,
        inputs,
    })
}

/// A disk's least latency for one record of `block` bytes, µs: the access (rated, or seek and
/// half a rotation for random I/O on a rotating disk) plus the record's transfer at the
/// bandwidth peak (rated for the mix, or the link's), where that is known; unknown without an
/// access figure.
pub fn disk_latency(
    rated: &DiskPeaks,
    read_share: f64,
    block: u64,
    link: Option<(f64, String)>,
    random: bool,
) -> Result<Peak, String> {
    let Some((access, formula, mut inputs)) = rated.access_us(random) else {
        return Err("a device's access latency is not in sysfs; give --disk-latency-us (or --rpm and --seek-ms for a rotating disk)".to_string());
    };
    let bandwidth = rated_mix(rated.read_mbps, rated.write_mbps, read_share)
        .map(|m| (m, "rated MB/s".to_string(), Source::User))
        .or(link.map(|(m, desc)| (m, format!("MB/s ({desc})"), Source::Detected)));
    let (transfer, formula) = match bandwidth {
        Some((mbps, unit, source)) => {
            inputs.insert("bandwidth".into(), input(mbps, &unit, source));
            inputs.insert(
                "block".into(),
                input(block as f64, "bytes", Source::Detected),
            );
            (
                block as f64 / mbps,
                format!("{formula} + block / bandwidth"),
            )
        }
        None => (
            0.0,
            format!("{formula} (the transfer time is not counted: the bandwidth is unknown)"),
        ),
    };
    Ok(Peak {
        value: access + transfer,
        unit: Unit::Micros,
        formula,
        inputs,
    })
}
