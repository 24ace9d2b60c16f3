//! Plausibility of the peak inputs a user types: each user-given input of a peak is checked
//! against the machine (its microarchitecture's table entry, the memory devices SMBIOS lists,
//! the disk's link) and against physics, and a figure that neither allows gets a warning
//! naming the value expected instead. A warning, never a refusal: the user may know better
//! (a BIOS that caps the memory, a datasheet measured another way), and the peak stays theirs.
//!
//! The checks, each on the inputs of one peak:
//! * CPU: `--ops-per-cycle` against the table's operations per cycle of the workload's
//!   operation on this microarchitecture and ISA (2 FMA × 4 fp64 lanes × 2 = 16 on Haswell).
//! * Memory: `--mem-peak-gbs` against Σ over the DIMMs SMBIOS lists of transfer rate × 8 bytes
//!   (channels × MT/s × 8 B with one DIMM a channel): above it is beyond the bus; `--mem-mts`
//!   against the DIMMs' configured rate, `--mem-channels` against their count.
//! * Disk: a rated MB/s above the device's link (and, at a point of n threads, equal to n × a
//!   figure under it: a device's figure multiplied by the threads); rated IOPS of 4 KiB records
//!   needing more than the rated bandwidth; a rotating disk's rated IOPS far above
//!   1 / (seek + ½ rotation) — command queueing (NCQ) shortens its access by a few times at
//!   most ([`QUEUEING_GAIN`]).
//! * Units: a figure equal to a physics figure ÷ 1.024³ (GiB for GB) or ÷ 1.024² (MiB for MB)
//!   is that figure in binary units, labelled decimal.

use super::{OpClass, Peak, PeakInput, cpu_peak};
use crate::sysinfo::fact::Source;
use crate::sysinfo::isa::Isa;
use crate::sysinfo::smbios::MemoryDevice;
use crate::sysinfo::uarch::Uarch;
use crate::units::format_sig;

/// What the checks know of the machine measured.
#[derive(Debug, Clone, Copy, Default)]
pub struct Machine<'a> {
    pub uarch: Option<&'static Uarch>,
    pub isas: &'a [Isa],
    /// The populated DIMMs SMBIOS lists, where it could be read.
    pub dimms: Option<&'a [MemoryDevice]>,
}

impl<'a> Machine<'a> {
    pub fn of(sys: &'a crate::sysinfo::SystemInfo) -> Machine<'a> {
        Machine {
            uarch: sys.uarch(),
            isas: &sys.cpu.isas,
            dimms: sys.memory.devices.get().map(Vec::as_slice),
        }
    }
}

/// The point whose peak is checked: its workers (threads or jobs) and, for a CPU point, the
/// operation its kernel performs.
#[derive(Debug, Clone, Copy)]
pub struct Point {
    pub workers: usize,
    pub op: Option<OpClass>,
}

/// A figure within this share of its expected value agrees with it (rounding in a datasheet
/// or a report: 68.25 for 68.256 GB/s).
const AGREES: f64 = 0.02;

/// 1 GiB in GB and 1 MiB in MB: a binary figure labelled decimal is the decimal one ÷ these.
const GIB_PER_GB: f64 = 1.073_741_824;
const MIB_PER_MB: f64 = 1.048_576;

/// The record size of a datasheet's random IOPS (4 KiB, as SSD and HDD makers rate them).
const RATED_IOPS_BLOCK: f64 = 4096.0;

/// How far command queueing raises a rotating disk's random IOPS above 1 / (seek + ½
/// rotation): the drive reorders up to 32 queued commands (NCQ) to shorten seeks and rotational
/// waits, and the assignment's reports measured 180–384 % of that bound at queue depths up to
/// 128; a rated figure above 5 × is not a rotating disk's.
pub const QUEUEING_GAIN: f64 = 5.0;

/// The warnings about `peak`'s user-given inputs on `machine` at `point`, each naming the
/// value the machine or physics gives; none where no input is the user's.
pub fn check(peak: &Peak, machine: &Machine, point: Point) -> Vec<String> {
    // By the inputs' own units: a record's peak is in base units (B/s), its inputs as given.
    let user = |k: &str, unit: &str| {
        peak.inputs
            .get(k)
            .filter(|i| i.source == Source::User && i.unit.starts_with(unit))
            .map(|i| i.value)
    };
    let mut out = Vec::new();
    if let (Some(given), Some(op)) = (user("ops_per_cycle", ""), point.op) {
        out.extend(ops_per_cycle(given, op, machine));
    }
    if let Some(gbs) = user("peak", "GB/s") {
        out.extend(mem_peak(gbs, machine));
    }
    if let (Some(ch), Some(mts)) = (user("channels", ""), user("transfer_rate", "")) {
        out.extend(mem_channels(ch, mts, machine));
    }
    if let Some(rated) = user("rated", "MB/s") {
        out.extend(disk_mbps(rated, peak, point));
    }
    if let Some(rated) = user("rated", "IOPS") {
        out.extend(disk_iops(rated, peak));
    }
    out
}

/// `value` in binary units labelled decimal: the `expected` figure ÷ 1.024³ (or ÷ 1.024² where
/// `mib`), to within rounding; the sentence that says so.
fn binary(value: f64, expected: f64, unit: &str, mib: bool) -> Option<String> {
    let (per, binary_unit) = if mib {
        (MIB_PER_MB, unit.replace("MB", "MiB"))
    } else {
        (GIB_PER_GB, unit.replace("GB", "GiB"))
    };
    let converted = expected / per;
    ((value - converted).abs() <= 0.002 * converted).then(|| {
        format!(
            "it is {} {unit} expressed in {binary_unit} ({} ÷ {per} = {}): peakbench's {unit} are decimal, give {}",
            format_sig(expected),
            format_sig(expected),
            format_sig(converted),
            format_sig(expected)
        )
    })
}

fn ops_per_cycle(given: f64, op: OpClass, machine: &Machine) -> Option<String> {
    let u = machine.uarch?;
    // The table's figure: the peak of one core at 1 GHz, in operations per cycle.
    let table = cpu_peak(op, 1, Ok(1.0), Some(u), machine.isas, &Default::default()).ok()?;
    let expected = table.value;
    if (given - expected).abs() <= AGREES * expected {
        return None;
    }
    let derivation = table.formula.trim_start_matches("cores × clock × ");
    Some(format!(
        "user-given --ops-per-cycle {given} is not the {} table entry's: it gives {} operations a cycle per core ({derivation}; {})",
        u.name,
        format_sig(expected),
        inputs_of(&table),
    ))
}

/// The table inputs of a peak, "fma_per_cycle 2, vector_width 256 bits".
fn inputs_of(p: &Peak) -> String {
    p.inputs
        .iter()
        .filter(|(_, i)| i.source != Source::Detected || i.unit == "bits")
        .filter(|(k, _)| k.as_str() != "clock")
        .map(|(k, i): (&String, &PeakInput)| {
            let unit = i.unit.split('/').next().unwrap_or("");
            format!("{k} {} {unit}", format_sig(i.value))
                .trim_end()
                .to_string()
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The DIMMs SMBIOS lists: their count, their rates' range and Σ rate × width, GB/s.
fn dimms(machine: &Machine) -> Option<(usize, f64, f64, f64)> {
    let rates: Vec<(f64, f64)> = machine
        .dimms?
        .iter()
        .filter_map(|d| Some((d.rate_mts()? as f64, d.data_width_bits as f64 / 8.0)))
        .collect();
    if rates.is_empty() {
        return None;
    }
    let lo = rates.iter().map(|r| r.0).fold(f64::MAX, f64::min);
    let hi = rates.iter().map(|r| r.0).fold(f64::MIN, f64::max);
    let gbs = rates.iter().map(|(r, w)| r * w).sum::<f64>() / 1000.0;
    Some((rates.len(), lo, hi, gbs))
}

fn mem_peak(gbs: f64, machine: &Machine) -> Option<String> {
    let (n, lo, hi, expected) = dimms(machine)?;
    let rate = if lo == hi {
        format!("{} MT/s", format_sig(lo))
    } else {
        format!("{}–{} MT/s", format_sig(lo), format_sig(hi))
    };
    let given = format!("user-given --mem-peak-gbs {gbs}");
    let bus = format!(
        "the {n} DIMMs SMBIOS lists at {rate} × 8 bytes give {} GB/s (channels × transfer rate × 8 B)",
        format_sig(expected)
    );
    if let Some(why) = binary(gbs, expected, "GB/s", false) {
        return Some(format!("{given} GB/s: {bus}; {why}"));
    }
    (gbs > expected * (1.0 + AGREES)).then(|| {
        format!(
            "{given} GB/s is {:.1} × what the memory bus can move: {bus}",
            gbs / expected
        )
    })
}

fn mem_channels(channels: f64, mts: f64, machine: &Machine) -> Vec<String> {
    let Some((n, lo, hi, _)) = dimms(machine) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    if channels > n as f64 {
        out.push(format!(
            "user-given --mem-channels {channels} is more than the {n} DIMMs SMBIOS lists: give {n} at most"
        ));
    }
    if mts > hi * (1.0 + AGREES) || mts < lo * (1.0 - AGREES) {
        out.push(format!(
            "user-given --mem-mts {} is not the {} MT/s the DIMMs run at (SMBIOS)",
            format_sig(mts),
            if lo == hi {
                format_sig(lo)
            } else {
                format!("{}–{}", format_sig(lo), format_sig(hi))
            }
        ));
    }
    out
}

/// A throughput peak's `rated` figure against its link (an input beside it).
fn disk_mbps(rated: f64, peak: &Peak, point: Point) -> Option<String> {
    let link = peak.inputs.get("link")?;
    let desc = link.unit.trim_start_matches("MB/s").trim();
    let given = format!("the user-given rated {rated} MB/s");
    if let Some(why) = binary(rated, link.value, "MB/s", true) {
        return Some(format!(
            "{given} is the link's {} MB/s {desc} in MiB/s: {why}",
            format_sig(link.value)
        ));
    }
    if rated <= link.value * (1.0 + AGREES) {
        return None;
    }
    let n = point.workers as f64;
    let multiplied = if n > 1.0 && rated / n <= link.value * (1.0 + AGREES) {
        format!(
            "; it is {n} × {} MB/s, a device's figure multiplied by the point's {n} threads? A device's rated figure is the device's, whatever the threads",
            format_sig(rated / n)
        )
    } else {
        String::new()
    };
    Some(format!(
        "{given} is above what the device's link carries, {} MB/s {desc}: expected at most {} MB/s{multiplied}",
        format_sig(link.value),
        format_sig(link.value)
    ))
}

/// An IOPS peak's `rated` figure against its bandwidth and, on a rotating disk, its access.
fn disk_iops(rated: f64, peak: &Peak) -> Vec<String> {
    let given = format!("the user-given rated {rated} IOPS");
    let mut out = Vec::new();
    if let Some(bw) = peak.inputs.get("bandwidth") {
        let most = bw.value * 1e6 / RATED_IOPS_BLOCK;
        if rated > most * (1.0 + AGREES) {
            out.push(format!(
                "{given} of 4 KiB records would move {} MB/s, more than the bandwidth's {} {}: expected at most {} IOPS (bandwidth / 4 KiB)",
                format_sig(rated * RATED_IOPS_BLOCK / 1e6),
                format_sig(bw.value),
                bw.unit,
                format_sig(most)
            ));
        }
    }
    if let (Some(rpm), Some(seek)) = (peak.inputs.get("rpm"), peak.inputs.get("seek")) {
        let access_ms = seek.value + 30e3 / rpm.value;
        let one = 1e3 / access_ms;
        if rated > QUEUEING_GAIN * one {
            out.push(format!(
                "{given} follow from none of the drive's figures: a {} rpm disk with {} ms seeks does 1 / (seek + ½ rotation) = 1 / {} ms = {} IOPS at queue depth 1, and command queueing (NCQ) raises that a few times at most (the reports measured 180–384 %), not {:.0} ×",
                format_sig(rpm.value),
                format_sig(seek.value),
                format_sig(access_ms),
                format_sig(one),
                rated / one
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sysinfo::Fact;
    use crate::sysinfo::peak::{DiskPeaks, MemPeakOverrides, disk_iops, disk_throughput, mem_peak};
    use crate::sysinfo::uarch;

    /// Four DDR4-2133 DIMMs, one a channel: the reports' Haswell-EP socket.
    fn ddr4_2133() -> Vec<MemoryDevice> {
        (0..4)
            .map(|i| MemoryDevice {
                locator: format!("DIMM_{i}"),
                size_bytes: 16 << 30,
                data_width_bits: 64,
                speed_mts: Some(2133),
                configured_mts: Some(2133),
            })
            .collect()
    }

    fn at(workers: usize) -> Point {
        Point { workers, op: None }
    }

    fn user_mem(gbs: f64, dimms: &[MemoryDevice]) -> Vec<String> {
        let user = MemPeakOverrides {
            gbs: Some(gbs),
            ..Default::default()
        };
        let peak = mem_peak(&Fact::unknown("not read"), &user).unwrap();
        let machine = Machine {
            dimms: Some(dimms),
            ..Default::default()
        };
        check(&peak, &machine, at(1))
    }

    /// S3's "2133e6 · 64 / 8 = 940.653 GB/s" on four DDR4-2133 channels: 68.26 GB/s expected.
    #[test]
    fn a_memory_peak_beyond_the_bus() {
        let w = user_mem(940.653, &ddr4_2133());
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(
            w[0].contains("--mem-peak-gbs 940.653 GB/s is 13.8 ×"),
            "{w:?}"
        );
        assert!(
            w[0].contains("give 68.26 GB/s") || w[0].contains("68.26 GB/s"),
            "{w:?}"
        );
        assert!(
            w[0].contains("13.8 × what the memory bus can move"),
            "{w:?}"
        );
        // S0's 68.25 GB/s (rounded) agrees; a lower figure is the user's to choose.
        assert!(user_mem(68.25, &ddr4_2133()).is_empty());
        assert!(user_mem(50.0, &ddr4_2133()).is_empty());
        // Without SMBIOS nothing is known to check against.
        let peak = mem_peak(
            &Fact::unknown("not read"),
            &MemPeakOverrides {
                gbs: Some(940.653),
                ..Default::default()
            },
        )
        .unwrap();
        assert!(check(&peak, &Machine::default(), at(1)).is_empty());
    }

    /// S1's "the same in GiB = 63.57": 68.256 GB/s ÷ 1.024³, labelled GB/s.
    #[test]
    fn a_gib_figure_labelled_gb() {
        let w = user_mem(63.57, &ddr4_2133());
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(
            w[0].contains("it is 68.26 GB/s expressed in GiB/s (68.26 ÷ 1.073741824 = 63.57)"),
            "{w:?}"
        );
        assert!(w[0].contains("give 68.26"), "{w:?}");
    }

    /// S0's "2 · 2.3 · 2 · 8" DP GFLOPS: 8 DP FLOP a cycle for Haswell, whose table gives 16
    /// (2 FMA units × 4 fp64 lanes × 2); the table's own figure raises nothing.
    #[test]
    fn operations_per_cycle_against_the_table() {
        let haswell = uarch::lookup("haswell").unwrap();
        let isas = [Isa::Avx2, Isa::Sse2, Isa::Scalar];
        let machine = Machine {
            uarch: Some(haswell),
            isas: &isas,
            dimms: None,
        };
        let dp = OpClass::Fma { element_bits: 64 };
        let user = |ops: f64| super::super::CpuPeakOverrides {
            ops_per_cycle: Some(ops),
            ..Default::default()
        };
        let peak = cpu_peak(dp, 4, Ok(2.3), Some(haswell), &isas, &user(8.0)).unwrap();
        let point = Point {
            workers: 4,
            op: Some(dp),
        };
        let w = check(&peak, &machine, point);
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(
            w[0].contains("--ops-per-cycle 8 is not the Intel Haswell/Broadwell table")
                && w[0].contains("it gives 16.00 operations a cycle"),
            "{w:?}"
        );
        assert!(w[0].contains("fma_per_cycle 2.00"), "{w:?}");
        let right = cpu_peak(dp, 4, Ok(2.3), Some(haswell), &isas, &user(16.0)).unwrap();
        assert!(check(&right, &machine, point).is_empty());
        let table = cpu_peak(dp, 4, Ok(2.3), Some(haswell), &isas, &Default::default()).unwrap();
        assert!(check(&table, &machine, point).is_empty());
    }

    /// S0's rated 540 MB/s multiplied by 4 threads, on a SATA 6 Gbit/s link (600 MB/s).
    #[test]
    fn a_disk_figure_multiplied_by_the_threads() {
        let rated = DiskPeaks {
            read_mbps: Some(540.0 * 4.0),
            ..Default::default()
        };
        let link = Some((600.0, "SATA 6.0 Gbps".to_string()));
        let peak = disk_throughput(&rated, 1.0, link.clone(), "x").unwrap();
        let w = check(&peak, &Machine::default(), at(4));
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].contains("rated 2160 MB/s"), "{w:?}");
        assert!(w[0].contains("expected at most 600.0 MB/s"), "{w:?}");
        assert!(w[0].contains("it is 4 × 540.0 MB/s"), "{w:?}");
        let right = DiskPeaks {
            read_mbps: Some(540.0),
            ..Default::default()
        };
        let peak = disk_throughput(&right, 1.0, link, "x").unwrap();
        assert!(check(&peak, &Machine::default(), at(4)).is_empty());
    }

    /// S1's "Total 5782" (5782.4991 IOPS) for a 7200 rpm Constellation.2 (4.16 ms average
    /// rotational latency, 8.5 ms read seek): 1 / (8.5 + 4.17 ms) = 78.95 IOPS.
    #[test]
    fn rated_iops_that_follow_from_none_of_the_drives_figures() {
        let hdd = DiskPeaks {
            read_iops: Some(5782.4991),
            read_mbps: Some(600.0),
            rpm: Some(7200.0),
            seek_ms: Some(8.5),
            ..Default::default()
        };
        let peak = disk_iops(&hdd, 1.0, 1024, None, true, 1).unwrap();
        let w = check(&peak, &Machine::default(), at(1));
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(
            w[0].contains("rated 5782.4991 IOPS follow from none"),
            "{w:?}"
        );
        assert!(w[0].contains("= 1 / 12.67 ms = 78.95 IOPS"), "{w:?}");
        // The first report's SSD (93 000 IOPS, 540 MB/s, 0.5 ms): consistent.
        let ssd = DiskPeaks {
            read_iops: Some(93_000.0),
            read_mbps: Some(540.0),
            latency_us: Some(500.0),
            ..Default::default()
        };
        let peak = disk_iops(&ssd, 1.0, 1024, None, true, 32).unwrap();
        assert!(check(&peak, &Machine::default(), at(1)).is_empty());
        // Rated IOPS beyond the rated bandwidth at 4 KiB: 200 000 × 4 KiB = 819 MB/s.
        let fast = DiskPeaks {
            read_iops: Some(200_000.0),
            ..ssd
        };
        let peak = disk_iops(&fast, 1.0, 4096, None, true, 1).unwrap();
        let w = check(&peak, &Machine::default(), at(1));
        assert!(w[0].contains("expected at most 131836 IOPS"), "{w:?}");
    }
}
