//! `peakbench peak`'s options beyond the CPU: a memory's channels, transfer rate and CAS
//! latency; a disk's rated figures or its spindle; a network's link (`app::peak` computes their
//! figures).

use super::common::{UsageError, bounds, parse_propagation};
use crate::app::peak::Described;
use clap::Args;

/// What the error says when nothing is described.
pub const WHAT_TO_GIVE: &str = "--uarch, --cores and --ghz (CPU), --mem-channels and --mem-mts \
    (memory), --rpm and --seek-ms or --disk-peak-* (disk), or --link-gbps (network)";

#[derive(Debug, Args)]
pub struct OtherPeaks {
    /// Memory: channels populated (one DIMM each; with --mem-mts), e.g. 4.
    #[arg(long, value_name = "N", value_parser = parse_channels, requires = "mem_mts")]
    pub mem_channels: Option<u32>,
    /// Memory: transfer rate in MT/s (DDR4-2133: 2133; with --mem-channels; 100 to 100000).
    #[arg(long, value_name = "MTS", value_parser = bounds::MEM_MTS.parser(), requires = "mem_channels")]
    pub mem_mts: Option<f64>,
    /// Memory: the modules' CAS latency in clock cycles (CL), for the latency floor
    /// CL × 2000 / MT/s ns (with --mem-mts; 1 to 200).
    #[arg(long, value_name = "CL", value_parser = bounds::MEM_CL.parser(), requires = "mem_mts")]
    pub mem_cl: Option<f64>,
    #[command(flatten)]
    pub disk: super::disk::DiskPeakArgs,
    /// Disk: the record size of the IOPS and latency figures [default: 4K].
    #[arg(long, value_name = "SIZE", value_parser = parse_block)]
    pub block_size: Option<u64>,
    /// Disk: threads (jobs) of the IOPS figures, each with --iodepth I/Os in flight: random
    /// I/O is bounded by n / access with n = threads × iodepth (1 to 128) [default: 1].
    #[arg(long, value_name = "N", value_parser = parse_threads)]
    pub threads: Option<u32>,
    /// Disk: I/Os in flight per thread of the IOPS figures (1 to 256) [default: 1].
    #[arg(long, value_name = "N", value_parser = parse_iodepth)]
    pub iodepth: Option<u32>,
    /// Network: the link's speed in Gbit/s, e.g. 56 (0.001 to 100000).
    #[arg(long, value_name = "GBPS", value_parser = bounds::LINK_GBPS.parser())]
    pub link_gbps: Option<f64>,
    /// Network: the MTU in bytes [default: 1500].
    #[arg(long, value_name = "BYTES", value_parser = parse_mtu, requires = "link_gbps")]
    pub mtu: Option<u32>,
    /// Network: the path's one-way propagation delay in µs (cables, switches), for the
    /// round-trip floor (0 to 10000000).
    #[arg(long, value_name = "US", requires = "link_gbps", value_parser = parse_propagation)]
    pub propagation_us: Option<f64>,
    /// Network: the ping-pong message of the round-trip floor, bytes [default: 1].
    #[arg(long, value_name = "BYTES", requires = "link_gbps", value_parser = parse_message)]
    pub message_size: Option<u32>,
}

fn parse_channels(s: &str) -> Result<u32, String> {
    super::common::count_in(s, 1, 64)
}

fn parse_threads(s: &str) -> Result<u32, String> {
    super::common::count_in(s, 1, 128)
}

fn parse_iodepth(s: &str) -> Result<u32, String> {
    super::common::count_in(s, 1, crate::app::disk::MAX_DEPTH as u64)
}

fn parse_mtu(s: &str) -> Result<u32, String> {
    super::common::count_in(s, 576, 65_535)
}

fn parse_message(s: &str) -> Result<u32, String> {
    let v = crate::units::parse_size(s).map_err(|e| e.to_string())?;
    u32::try_from(v)
        .ok()
        .filter(|v| (1..=65_507).contains(v))
        .ok_or_else(|| format!("'{s}' is out of range for a ping-pong message: 1 to 65507 bytes"))
}

fn parse_block(s: &str) -> Result<u64, String> {
    let v = crate::units::parse_size(s).map_err(|e| e.to_string())?;
    if (1..=1 << 30).contains(&v) {
        Ok(v)
    } else {
        Err(format!(
            "'{s}' is out of range for a record size: 1 byte to 1 GiB"
        ))
    }
}

impl OtherPeaks {
    /// The memory, disk and network described (no CPU).
    pub fn described(&self) -> Described {
        Described {
            cpu: None,
            mem_channels: self.mem_channels,
            mem_mts: self.mem_mts,
            mem_cl: self.mem_cl,
            disk: self.disk.peaks(),
            block_size: self.block_size,
            threads: self.threads,
            iodepth: self.iodepth,
            link_gbps: self.link_gbps,
            mtu: self.mtu,
            propagation_us: self.propagation_us,
            message_size: self.message_size,
        }
    }
}

/// Refuses a `peak` with nothing to compute.
pub fn nothing_given() -> UsageError {
    UsageError(format!("give a machine to compute: {WHAT_TO_GIVE}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::results::peak_sheet::{Section, Sections};
    use crate::sysinfo::Source;

    fn value(s: &Option<Section>, figure: &str) -> f64 {
        let s = s.as_ref().expect("a section");
        let f = s.peaks.iter().find(|f| f.figure.starts_with(figure));
        f.and_then(|f| f.peak.as_ref())
            .unwrap_or_else(|| panic!("no {figure} in {s:?}"))
            .value
    }

    fn described(args: &[&str]) -> Sections {
        use clap::Parser;
        #[derive(Parser)]
        struct Cli {
            #[command(flatten)]
            others: OtherPeaks,
        }
        let line = std::iter::once("peak").chain(args.iter().copied());
        crate::app::peak::document(&Cli::try_parse_from(line).unwrap().others.described()).others
    }

    /// The reports' hand-computed figures: DDR4-2133 × 4 channels = 68.26 GB/s; a 7200 rpm
    /// disk with a 9 ms seek = 75.9 IOPS; a 56 Gbit/s link's payload rate and round-trip floor.
    #[test]
    fn peaks_reproduce_the_reports_datasheet_figures() {
        let s = described(&[
            "--mem-channels",
            "4",
            "--mem-mts",
            "2133",
            "--mem-cl",
            "15",
            "--rpm",
            "7200",
            "--seek-ms",
            "9",
            "--link-gbps",
            "56",
            "--propagation-us",
            "0",
        ]);
        assert!((value(&s.memory, "bandwidth") - 68.256).abs() < 1e-9);
        assert_eq!(format!("{:.2}", value(&s.memory, "bandwidth")), "68.26");
        // CL 15 at 1066.5 MHz: 14.06 ns.
        assert!((value(&s.memory, "latency") - 15.0 * 2000.0 / 2133.0).abs() < 1e-9);
        // One seek and half a rotation: 9 ms + 4.17 ms.
        let iops = value(&s.disk, "random read IOPS");
        assert!((iops - 1.0 / (0.009 + 0.5 * 60.0 / 7200.0)).abs() < 1e-9);
        assert!((iops - 75.9).abs() < 0.1, "{iops}");
        assert!((value(&s.disk, "random read latency") - 13_166.67).abs() < 0.01);
        // TCP: 1448 payload bytes of every 1538 on the wire (MTU 1500 and Ethernet's 38).
        let tcp = value(&s.network, "TCP goodput");
        assert!((tcp - 56.0 * 1448.0 / 1538.0).abs() < 1e-9, "{tcp}");
        // UDP: 1472 of 1538.
        assert!((value(&s.network, "UDP goodput") - 56.0 * 1472.0 / 1538.0).abs() < 1e-9);
        // A 1-byte ping-pong: 91 bytes each way at 56 Gbit/s (TCP); UDP padded to the least
        // frame, 84 bytes.
        let rtt = value(&s.network, "TCP round trip");
        assert!((rtt - 2.0 * 91.0 * 8.0 / 56e3).abs() < 1e-9, "{rtt}");
        let rtt = value(&s.network, "UDP round trip");
        assert!((rtt - 2.0 * 84.0 * 8.0 / 56e3).abs() < 1e-9, "{rtt}");
    }

    /// The first report's SSD (93 000 rated IOPS, 0.5 ms access) with 1 KiB records: at
    /// QD 1 one I/O per access, 2000 IOPS; at QD 32, min(93 000, 32 / 500 µs) = 64 000 IOPS;
    /// 4 threads × QD 32 reach the rated figure.
    #[test]
    fn the_iops_peak_counts_the_ios_in_flight() {
        let ssd = ["--disk-peak-read-iops", "93000", "--disk-latency-us", "500"];
        let with = |more: &[&str]| {
            let args: Vec<&str> = ssd.iter().chain(more).copied().collect();
            described(&args)
        };
        let qd1 = with(&["--block-size", "1K"]);
        assert_eq!(value(&qd1.disk, "random read IOPS"), 2000.0);
        let qd32 = with(&["--block-size", "1K", "--iodepth", "32"]);
        assert_eq!(value(&qd32.disk, "random read IOPS"), 64_000.0);
        let disk = qd32.disk.as_ref().unwrap();
        let f = disk
            .peaks
            .iter()
            .find(|f| f.figure.starts_with("random read IOPS"));
        let f = f.unwrap();
        assert_eq!(f.figure, "random read IOPS (1 KiB, QD 32)");
        let p = f.peak.as_ref().unwrap();
        assert_eq!(
            p.formula,
            "min(rated, n / access), n = threads × queue depth (Little's law)"
        );
        assert_eq!(
            (p.inputs["n"].value, p.inputs["n"].source),
            (32.0, Source::User)
        );
        let wide = with(&["--threads", "4", "--iodepth", "32"]);
        assert_eq!(value(&wide.disk, "random read IOPS"), 93_000.0);
        let hdd = described(&["--rpm", "7200", "--seek-ms", "9", "--iodepth", "32"]);
        let f = &hdd.disk.as_ref().unwrap().peaks[2];
        let p = f.peak.as_ref().unwrap();
        assert!((p.value - 32.0 / (0.009 + 0.5 * 60.0 / 7200.0)).abs() < 1e-9);
        assert!(p.formula.contains("NCQ/TCQ"), "{p:?}");
    }

    /// S1's "Total 5782" IOPS for a 7200 rpm disk with 8.5 ms seeks gets a warning naming
    /// 1 / (seek + ½ rotation), on the terminal too; the first report's SSD figures none.
    #[test]
    fn a_rated_figure_physics_contradicts_is_warned() {
        let s = described(&[
            "--rpm",
            "7200",
            "--seek-ms",
            "8.5",
            "--disk-peak-read-iops",
            "5782.4991",
        ]);
        let disk = s.disk.as_ref().unwrap();
        let f = &disk.peaks[2];
        assert!(f.figure.starts_with("random read IOPS"), "{f:?}");
        assert_eq!(f.warnings.len(), 1, "{f:?}");
        assert!(f.warnings[0].contains("78.95 IOPS"), "{f:?}");
        let text = crate::report::peaks::render_section(disk, 100, "Disk");
        assert!(text.contains("warning: random read IOPS (4 KiB, QD 1): the user-given"));
        assert!(text.lines().all(|l| l.chars().count() <= 100), "{text}");
        let ssd = described(&[
            "--disk-peak-read-iops",
            "93000",
            "--disk-peak-read-mbps",
            "540",
            "--disk-latency-us",
            "500",
            "--iodepth",
            "32",
        ]);
        let ssd = ssd.disk.unwrap();
        assert!(ssd.peaks.iter().all(|f| f.warnings.is_empty()), "{ssd:?}");
    }

    /// What is not given is unknown with the option to give, never a guess.
    #[test]
    fn a_figure_without_its_inputs_says_what_to_give() {
        let s = described(&[
            "--mem-channels",
            "2",
            "--mem-mts",
            "3200",
            "--link-gbps",
            "10",
        ]);
        let why = |s: &Option<Section>, figure: &str| {
            let s = s.as_ref().unwrap();
            let f = s
                .peaks
                .iter()
                .find(|f| f.figure.starts_with(figure))
                .unwrap();
            assert!(f.peak.is_none());
            f.unknown_reason.clone().unwrap()
        };
        assert!(why(&s.memory, "latency").contains("--mem-cl"));
        assert!(why(&s.network, "TCP round trip").contains("--propagation-us"));
        assert!(s.disk.is_none());
        assert!(described(&[]).is_empty());
        let s = described(&["--disk-peak-read-iops", "500000"]);
        assert_eq!(value(&s.disk, "random read IOPS"), 500000.0);
        assert!(why(&s.disk, "sequential read throughput").contains("--disk-peak-read-mbps"));
    }
}
