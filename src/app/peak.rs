//! `peakbench peak`'s document: the theoretical peaks of a machine described rather than
//! detected — its CPU from the microarchitecture table, its memory from its channels,
//! transfer rate and CAS latency, its disk from its rated figures or its spindle, its network
//! from its link — each with its formula, as the reports computed them from datasheets.
//! Nothing is measured.

use super::cpu::{CpuWorkload, operation};
use crate::ids::Unit;
use crate::results::peak_sheet::{
    Figure, PeakDocument, PeakSheet, Section, Sections, WorkloadPeak,
};
use crate::sysinfo::peak::{self, CpuPeakOverrides, DiskPeaks, MemPeakOverrides, Peak, cpu_peak};
use crate::sysinfo::uarch::Uarch;
use crate::sysinfo::{Fact, Isa, Source};

/// A CPU described: its microarchitecture's entry, cores per socket, sockets and clock.
#[derive(Debug, Clone, Copy)]
pub struct CpuDescribed {
    pub uarch: &'static Uarch,
    pub cores: u32,
    pub sockets: u32,
    pub ghz: f64,
}

/// A machine as described (each part where given; a figure without its inputs is unknown,
/// saying which to give).
#[derive(Debug, Clone, Default)]
pub struct Described {
    pub cpu: Option<CpuDescribed>,
    /// Memory: channels populated, one DIMM each.
    pub mem_channels: Option<u32>,
    /// Memory: transfer rate in MT/s.
    pub mem_mts: Option<f64>,
    /// Memory: the modules' CAS latency in clock cycles.
    pub mem_cl: Option<f64>,
    /// Disk: its rated figures, or its spindle.
    pub disk: DiskPeaks,
    /// Disk: the record size of the IOPS and latency figures (4 KiB where not given).
    pub block_size: Option<u64>,
    /// Disk: threads of the IOPS figures (1 where not given).
    pub threads: Option<u32>,
    /// Disk: I/Os in flight per thread (1 where not given).
    pub iodepth: Option<u32>,
    /// Network: the link's speed in Gbit/s.
    pub link_gbps: Option<f64>,
    /// Network: the MTU in bytes (1500 where not given).
    pub mtu: Option<u32>,
    /// Network: the path's one-way propagation delay in µs.
    pub propagation_us: Option<f64>,
    /// Network: the ping-pong message of the round-trip floor, bytes (1 where not given).
    pub message_size: Option<u32>,
}

/// The peaks of the machine `d` describes.
pub fn document(d: &Described) -> PeakDocument {
    PeakDocument {
        cpu: d.cpu.map(|c| sheet(c.uarch, c.cores, c.sockets, c.ghz)),
        others: d.sections(),
    }
}

/// The instruction sets a core of `u` runs: every vector width in its entry.
fn isas_of(u: &Uarch) -> Vec<Isa> {
    let widths: Vec<u32> = u
        .fma
        .iter()
        .chain(u.int_add)
        .map(|r| r.width_bits)
        .collect();
    let mut isas: Vec<Isa> = if u.is_arm() {
        vec![Isa::Neon]
    } else {
        [(512, Isa::Avx512), (256, Isa::Avx2), (128, Isa::Sse2)]
            .into_iter()
            .filter(|(w, _)| widths.contains(w))
            .map(|(_, i)| i)
            .collect()
    };
    isas.push(Isa::Scalar);
    isas
}

/// Every CPU workload's peak on `sockets` × `cores` cores of `u` at `ghz`.
pub fn sheet(u: &'static Uarch, cores: u32, sockets: u32, ghz: f64) -> PeakSheet {
    let isas = isas_of(u);
    let total = cores.saturating_mul(sockets);
    let user = CpuPeakOverrides {
        clock_ghz: Some(ghz),
        ..Default::default()
    };
    // Every kernel's (the FP issue ceilings of SPFA and DPFA, the dot products), not NULL's.
    let workloads = CpuWorkload::ALL
        .into_iter()
        .filter_map(|w| w.op_with_fp16(u.fp16).map(|op| (w.into(), op)));
    let peaks = workloads
        .map(|(name, op)| {
            let peak = cpu_peak(op, total, Ok(ghz), Some(u), &isas, &user).map(|mut p| {
                if let Some(c) = p.inputs.get_mut("cores") {
                    c.source = Source::User;
                }
                p
            });
            WorkloadPeak {
                workload: name,
                operation: operation(op),
                unknown_reason: peak.as_ref().err().cloned(),
                peak: peak.ok(),
            }
        })
        .collect();
    PeakSheet {
        microarchitecture: u.name,
        table_source: u.source,
        note: u.note,
        sockets,
        cores_per_socket: cores,
        clock_ghz: ghz,
        peaks,
    }
}

impl Described {
    /// The memory's, disk's and network's sections, each where its inputs are given.
    pub fn sections(&self) -> Sections {
        Sections {
            memory: self.memory(),
            disk: self.disk(),
            network: self.network(),
        }
    }

    fn memory(&self) -> Option<Section> {
        let (channels, mts) = (self.mem_channels?, self.mem_mts?);
        let user = MemPeakOverrides {
            channels: Some(channels),
            mts: Some(mts),
            ..Default::default()
        };
        let bandwidth = peak::mem_peak(&Fact::unknown("described, not detected"), &user);
        let latency = match self.mem_cl {
            Some(cl) => Ok(peak::cas_latency(cl, mts, Source::User)),
            None => Err("the CAS latency is not given; give --mem-cl".to_string()),
        };
        Some(Section {
            described: format!("{channels} channels × {mts} MT/s"),
            peaks: vec![
                Figure::of("bandwidth", bandwidth),
                Figure::of("latency (CAS)", latency),
            ],
        })
    }

    fn disk(&self) -> Option<Section> {
        let rated = &self.disk;
        let given = [
            rated.read_mbps,
            rated.write_mbps,
            rated.read_iops,
            rated.write_iops,
            rated.latency_us,
            rated.rpm,
        ];
        if given.iter().all(Option::is_none) {
            return None;
        }
        let block = self.block_size.unwrap_or(4096);
        let size = crate::units::format_size(block);
        let (threads, depth) = (self.threads.unwrap_or(1), self.iodepth.unwrap_or(1));
        let n = u64::from(threads) * u64::from(depth);
        let flight = match threads {
            1 => format!("QD {depth}"),
            t => format!("{t} threads × QD {depth}"),
        };
        let no_link = "peakbench peak describes no link";
        let mut peaks = Vec::new();
        for (what, share) in [("read", 1.0), ("write", 0.0)] {
            peaks.push(Figure::of(
                format!("sequential {what} throughput"),
                peak::disk_throughput(rated, share, None, no_link),
            ));
        }
        for (what, share) in [("read", 1.0), ("write", 0.0)] {
            peaks.push(Figure::at(
                format!("random {what} IOPS ({size}, {flight})"),
                peak::disk_iops(rated, share, block, None, true, n).map(|mut p| {
                    // The I/Os in flight are the user's here, not a point's.
                    if let Some(i) = p.inputs.get_mut("n") {
                        i.source = Source::User;
                    }
                    p
                }),
                threads as usize,
            ));
        }
        peaks.push(Figure::of(
            format!("random read latency ({size})"),
            peak::disk_latency(rated, 1.0, block, None, true),
        ));
        let described = match (rated.rpm, rated.seek_ms) {
            (Some(rpm), Some(seek)) => format!("a {rpm} rpm disk, {seek} ms average seek"),
            _ => "a disk of the rated figures given".to_string(),
        };
        Some(Section { described, peaks })
    }

    fn network(&self) -> Option<Section> {
        let gbps = self.link_gbps?;
        let mtu = self.mtu.unwrap_or(1500);
        let link = (gbps * 1000.0, Source::User);
        // The MTU is the user's (or Ethernet's 1500), not detected.
        let given = |mut p: Peak| {
            if let Some(m) = p.inputs.get_mut("mtu") {
                m.source = Source::User;
            }
            p
        };
        let tcp = given(peak::goodput(
            link,
            mtu,
            true,
            false,
            128 << 10,
            Unit::GbitPerSec,
            1e9,
        ));
        // UDP: the largest datagram that one frame carries.
        let datagram = mtu.saturating_sub(28).max(1);
        let udp = given(peak::goodput(
            link,
            mtu,
            false,
            false,
            datagram,
            Unit::GbitPerSec,
            1e9,
        ));
        let message = self.message_size.unwrap_or(1);
        let rtt = |tcp| peak::round_trip(link, mtu, tcp, false, message, self.propagation_us);
        Some(Section {
            described: format!("a {gbps} Gbit/s link, MTU {mtu}, IPv4"),
            peaks: vec![
                Figure::of("TCP goodput", Ok(tcp)),
                Figure::of(format!("UDP goodput ({datagram} B datagrams)"), Ok(udp)),
                Figure::of(format!("TCP round trip ({message} B messages)"), rtt(true)),
                Figure::of(format!("UDP round trip ({message} B messages)"), rtt(false)),
            ],
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sysinfo::uarch;

    fn value(s: &PeakSheet, w: CpuWorkload) -> f64 {
        s.peaks
            .iter()
            .find(|p| p.workload == w)
            .and_then(|p| p.peak.as_ref())
            .map(|p| p.value)
            .unwrap()
    }

    /// Hand-computed: cores × GHz × per-cycle operations of the table's best width.
    #[test]
    fn peaks_match_hand_computed_values() {
        let haswell = sheet(uarch::lookup("haswell").unwrap(), 24, 1, 2.3);
        // 2 FMA × 4 fp64 lanes × 2 = 16 FLOP/cycle.
        assert!((value(&haswell, CpuWorkload::Dp) - 883.2).abs() < 1e-9);
        assert!((value(&haswell, CpuWorkload::Sp) - 1766.4).abs() < 1e-9);
        // 2 × 256-bit vpaddd = 16 int32/cycle.
        assert!((value(&haswell, CpuWorkload::Int32) - 24.0 * 2.3 * 16.0).abs() < 1e-9);
        // Sapphire Rapids, 2 sockets × 56 cores at 2.0 GHz: 2 × 8 × 2 = 32 DP FLOP/cycle.
        let spr = sheet(uarch::lookup("6:0xCF").unwrap(), 56, 2, 2.0);
        assert!((value(&spr, CpuWorkload::Dp) - 112.0 * 2.0 * 32.0).abs() < 1e-9);
        // 2 × 512-bit vpaddb = 128 int8/cycle (beats 3 × 256-bit = 96).
        assert!((value(&spr, CpuWorkload::Qp) - 112.0 * 2.0 * 128.0).abs() < 1e-9);
        // Skylake-SP with one FMA unit: 512-bit at 1/cycle = 256-bit at 2/cycle = 16 DP.
        let silver = sheet(uarch::lookup("skylake-sp-1fma").unwrap(), 10, 1, 2.0);
        assert!((value(&silver, CpuWorkload::Dp) - 10.0 * 2.0 * 16.0).abs() < 1e-9);
        // Neoverse V1: 4 × 128-bit FMA = 16 DP FLOP/cycle.
        let v1 = sheet(uarch::lookup("graviton3").unwrap(), 64, 1, 2.6);
        assert!((value(&v1, CpuWorkload::Dp) - 64.0 * 2.6 * 16.0).abs() < 1e-9);
        // Native fp16: HP is an fp16 FMA, 2 × 32 lanes × 2 = 128 per cycle; Haswell adds int16.
        assert!((value(&spr, CpuWorkload::Hp) - 112.0 * 2.0 * 128.0).abs() < 1e-9);
        assert_eq!(spr.peaks[1].operation, "fp16 FMA");
        assert_eq!(haswell.peaks[1].operation, "int16 add");
        // VNNI: 2 × vpdpbusd zmm × 16 lanes × 8 = 256 int8 ops per cycle.
        assert!((value(&spr, CpuWorkload::Int8Dot) - 112.0 * 2.0 * 256.0).abs() < 1e-9);
        // Zen 4: 1 × 512-bit = 2 × 256-bit vdpbf16ps: 16 lanes × 4 = 64 per cycle.
        let zen4 = sheet(uarch::lookup("zen4").unwrap(), 1, 1, 1.0);
        assert!((value(&zen4, CpuWorkload::Bf16Dot) - 64.0).abs() < 1e-9);
        // No figure: unknown, with the reason.
        let bf16 = spr
            .peaks
            .iter()
            .find(|p| p.workload == CpuWorkload::Bf16Dot)
            .unwrap();
        assert!(bf16.peak.is_none());
        assert!(
            bf16.unknown_reason
                .as_ref()
                .unwrap()
                .contains("bf16_dot_per_cycle")
        );
        let none = haswell
            .peaks
            .iter()
            .find(|p| p.workload == CpuWorkload::Int8Dot)
            .unwrap();
        assert!(none.peak.is_none());
        // AMX: one TMUL every 16 cycles, 16 × 16 lanes × 64 (int8) or 32 (bf16) products × 2:
        // Intel's 2048 and 1024 operations a cycle per core.
        assert!((value(&spr, CpuWorkload::Int8Mm) - 112.0 * 2.0 * 2048.0).abs() < 1e-6);
        assert!((value(&spr, CpuWorkload::Bf16Mm) - 112.0 * 2.0 * 1024.0).abs() < 1e-6);
        // Neoverse V1 MMLA: 4 × 128-bit (or 2 × 256-bit SVE) a cycle, 4 lanes × 8 (int8) or
        // 4 (bf16) products × 2 = 256 and 128 a cycle.
        assert!((value(&v1, CpuWorkload::Int8Mm) - 64.0 * 2.6 * 256.0).abs() < 1e-9);
        assert!((value(&v1, CpuWorkload::Bf16Mm) - 64.0 * 2.6 * 128.0).abs() < 1e-9);
        let no_matrix = zen4
            .peaks
            .iter()
            .find(|p| p.workload == CpuWorkload::Bf16Mm)
            .unwrap();
        assert!(
            no_matrix
                .unknown_reason
                .as_ref()
                .unwrap()
                .contains("no matrix-multiply instructions")
        );
        let clock = &haswell.peaks[0].peak.as_ref().unwrap().inputs["clock"];
        assert_eq!(clock.source, Source::User);
    }

    /// A machine described as data, no command line: each part where its inputs are given,
    /// the first report's datasheet figures (DDR4-2133 × 4 channels, a 56 Gbit/s link).
    #[test]
    fn a_machine_described_as_data_gives_its_document() {
        let doc = document(&Described {
            cpu: Some(CpuDescribed {
                uarch: uarch::lookup("haswell").unwrap(),
                cores: 24,
                sockets: 1,
                ghz: 2.3,
            }),
            mem_channels: Some(4),
            mem_mts: Some(2133.0),
            link_gbps: Some(56.0),
            ..Described::default()
        });
        assert!((value(doc.cpu.as_ref().unwrap(), CpuWorkload::Dp) - 883.2).abs() < 1e-9);
        let memory = doc.others.memory.as_ref().unwrap();
        let bandwidth = memory.peaks[0].peak.as_ref().unwrap().value;
        assert!((bandwidth - 68.256).abs() < 1e-9, "{bandwidth}");
        // No CAS latency given: unknown, saying which option gives it.
        assert!(
            memory.peaks[1]
                .unknown_reason
                .as_ref()
                .unwrap()
                .contains("--mem-cl")
        );
        let tcp = doc.others.network.as_ref().unwrap().peaks[0]
            .peak
            .as_ref()
            .unwrap();
        assert!(
            (tcp.value - 56.0 * 1448.0 / 1538.0).abs() < 1e-9,
            "{}",
            tcp.value
        );
        assert!(doc.others.disk.is_none() && !doc.is_empty());
        assert!(document(&Described::default()).is_empty());
    }

    #[test]
    fn unknown_uarch_names_the_choices() {
        let err = uarch::lookup("pentium4").unwrap_err();
        assert!(
            err.contains("haswell") && err.contains("FAMILY:MODEL"),
            "{err}"
        );
        assert!(uarch::lookup("6:0x01").is_err());
        assert_eq!(
            uarch::lookup("Sapphire Rapids").unwrap().key,
            "sapphirerapids"
        );
        assert_eq!(uarch::lookup("AuthenticAMD:0x19:0x11").unwrap().key, "zen4");
        assert_eq!(uarch::lookup("0x41:0xd0c").unwrap().key, "neoverse-n1");
    }
}
