//! The theoretical peaks, every subsystem's in this one place: a value with its formula and
//! every input's source.
//!
//! CPU, per data type, per core and per cycle (from the microarchitecture table, `uarch.rs`):
//! * floating point: FMA instructions per cycle × lanes (vector width / element width) × 2,
//!   since one FMA is two operations (a multiply and an add);
//! * integers: vector integer add instructions per cycle × lanes, one operation per lane.
//!
//! The peak of a point is then `cores × clock (GHz) × operations per cycle per core` in GOPS,
//! where `cores` counts the distinct physical cores the point's threads are pinned to (two
//! hyper-threads of one core share its execution units) and the clock is the one the point's
//! own probes measured (`clock.rs`), or given by the user. The best vector width that the CPU
//! and OS support is used: the peak is the hardware's, whatever ISA a kernel was forced to.
//!
//! Memory: channels × transfer rate × bus width (`mem_peak`). Disk: the rated figures for the
//! read/write mix, bounded by the link (`disk_throughput`, `disk_iops`). Network: the link
//! speed times the payload's share of the bytes on the wire (`goodput`).

use super::fact::Source;
use super::isa::Isa;
use super::uarch::{Rate, Uarch};
use crate::ids::Unit;
use crate::measure::stats::nan_as_null;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

mod disk;
pub mod plausible;
pub use disk::{DiskPeaks, QUEUEING_NOTE, disk_iops, disk_latency, disk_throughput};

/// The kind of operation a CPU workload performs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum OpClass {
    /// Floating-point fused multiply-add on elements of this many bits.
    Fma { element_bits: u32 },
    /// Floating-point FMAs and adds together, as many adds as the core issues beside its FMAs
    /// (its FP issue ceiling; an add is one operation a lane, an FMA two).
    FmaAdd { element_bits: u32 },
    /// Integer add on elements of this many bits.
    IntAdd { element_bits: u32 },
    /// Dot product of 8-bit integers (VNNI, `sdot`) or bf16 values into 32-bit lanes: each lane
    /// does 32 / element_bits multiplies and as many adds.
    Dot { element_bits: u32 },
    /// Matrix multiply of int8 or bf16 inputs into 32-bit lanes (Intel AMX tiles, Arm
    /// SMMLA/BFMMLA): each lane sums many products per instruction ([`MatrixUnit`]).
    ///
    /// [`MatrixUnit`]: super::uarch::MatrixUnit
    Matrix { element_bits: u32 },
}

impl OpClass {
    /// The bits of one lane and the operations one instruction performs per lane (an FMA: 2; an
    /// add: 1; a dot product into 32-bit lanes: 2 × 32 / element_bits).
    pub fn lane_bits_and_ops(self) -> (u32, u64) {
        match self {
            // An FMA's; the adds beside them are the kernel's to count.
            OpClass::Fma { element_bits } | OpClass::FmaAdd { element_bits } => (element_bits, 2),
            OpClass::IntAdd { element_bits } => (element_bits, 1),
            OpClass::Dot { element_bits } => (32, 2 * 32 / element_bits.clamp(1, 32) as u64),
            // Arm's MMLA: 64 bits of each operand per 32-bit lane (AMX kernels count their
            // tiles' own).
            OpClass::Matrix { element_bits } => (32, 2 * 64 / element_bits.clamp(1, 32) as u64),
        }
    }
}

/// How every peak that needs the clock begins its reason when the clock is unknown; the tables
/// then say "unknown (clock)" in the efficiency column.
pub const CLOCK_UNKNOWN: &str = "the core clock is unknown";

/// One input of a peak formula.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PeakInput {
    /// `null` or absent (in a document that an earlier peakbench let overflow) reads as NaN,
    /// and the peak is then unknown ([`Peak::not_finite`]).
    #[serde(default = "nan_as_null::nan", deserialize_with = "nan_as_null::number")]
    pub value: f64,
    pub unit: String,
    pub source: Source,
}

/// A theoretical peak: value, unit, formula and inputs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Peak {
    /// A finite number (at least 0) wherever it is stored ([`Peak::not_finite`]); `null` or absent
    /// (in a document that an earlier peakbench let overflow) reads as NaN.
    #[serde(default = "nan_as_null::nan", deserialize_with = "nan_as_null::number")]
    pub value: f64,
    pub unit: Unit,
    pub formula: String,
    pub inputs: BTreeMap<String, PeakInput>,
}

impl Peak {
    /// Why this peak is no figure: its value is not a finite number (nor at least 0), or an input is
    /// not finite (an input beyond any machine overflowed it, or a document holds `null`
    /// there); `None` when it is one. JSON has no NaN or infinity, so such a peak would be
    /// written as `null` where a reader expects a number: it is stored unknown, with this
    /// reason, instead.
    pub fn not_finite(&self) -> Option<String> {
        // 0 is a floor (a sequential read's on a rotating disk: no seek, no rotation); an
        // efficiency against it that is not finite is the record's to leave unknown.
        let finite = self.value.is_finite() && self.value >= 0.0;
        if finite && self.inputs.values().all(|i| i.value.is_finite()) {
            return None;
        }
        let inputs: Vec<String> = self
            .inputs
            .iter()
            .map(|(k, i)| format!("{k} {:?} {}", i.value, i.unit))
            .collect();
        Some(format!(
            "the peak {} is not a finite number ({:?} {} from {}): an input is out of range for a machine",
            self.formula,
            self.value,
            self.unit,
            inputs.join(", ")
        ))
    }
}

/// Where the per-core figures come from and what the user overrode.
#[derive(Debug, Clone, Default)]
pub struct CpuPeakOverrides {
    /// Core clock in GHz given by the user.
    pub clock_ghz: Option<f64>,
    /// Operations per cycle per core given by the user for this workload.
    pub ops_per_cycle: Option<f64>,
    /// Peak GOPS per core given by the user for this workload.
    pub gops_per_core: Option<f64>,
}

fn input(value: f64, unit: &str, source: Source) -> PeakInput {
    PeakInput {
        value,
        unit: unit.to_string(),
        source,
    }
}

/// Computes the CPU peak of a point, or the reason it is unknown.
///
/// `cores` is the number of physical cores the point runs on; `measured_clock_ghz` the clock
/// measured under the same load, or why it is unknown; `isas` what the machine supports.
pub fn cpu_peak(
    op: OpClass,
    cores: u32,
    measured_clock_ghz: Result<f64, String>,
    uarch: Option<&Uarch>,
    isas: &[Isa],
    user: &CpuPeakOverrides,
) -> Result<Peak, String> {
    let mut inputs = BTreeMap::new();
    inputs.insert(
        "cores".into(),
        input(cores as f64, "cores", Source::Detected),
    );
    if let Some(gops) = user.gops_per_core {
        inputs.insert("peak_per_core".into(), input(gops, "GOPS", Source::User));
        return Ok(Peak {
            value: cores as f64 * gops,
            unit: Unit::Gops,
            formula: "cores × peak_per_core".into(),
            inputs,
        });
    }
    let clock = match (user.clock_ghz, measured_clock_ghz) {
        (Some(c), _) => input(c, "GHz", Source::User),
        (None, Ok(c)) => input(c, "GHz", Source::Measured),
        (None, Err(why)) => {
            return Err(format!("{CLOCK_UNKNOWN} ({why}); give it with --clock-ghz"));
        }
    };
    inputs.insert("clock".into(), clock.clone());
    let (ops_per_cycle, derivation) = match user.ops_per_cycle {
        Some(ops) => (ops, None),
        None => {
            let uarch = uarch.ok_or_else(|| {
                "the microarchitecture is not in peakbench's table, so its operations per cycle are unknown; give them with --ops-per-cycle WORKLOAD=N".to_string()
            })?;
            match op {
                OpClass::FmaAdd { element_bits } => {
                    let (ops, d) = fp_issue(uarch, isas, element_bits, &mut inputs)?;
                    (ops, Some(d))
                }

                _ => {
                    let (ops, d) = table_ops(op, uarch, isas, &mut inputs)?;
                    (ops, Some(d))
                }
            }
        }
    };
    let formula = match derivation {
        Some(d) => format!("cores × clock × {d}"),
        None => {
            inputs.insert(
                "ops_per_cycle".into(),
                input(ops_per_cycle, "ops/cycle/core", Source::User),
            );
            "cores × clock × ops_per_cycle".into()
        }
    };
    Ok(Peak {
        value: cores as f64 * clock.value * ops_per_cycle,
        unit: Unit::Gops,
        formula,
        inputs,
    })
}

/// A core's operations per cycle of `op` from the table: the instruction's rate at the best
/// usable width × lanes × operations per lane; its inputs go in `inputs`.
fn table_ops(
    op: OpClass,
    uarch: &Uarch,
    isas: &[Isa],
    inputs: &mut BTreeMap<String, PeakInput>,
) -> Result<(f64, String), String> {
    let vector: Vec<Isa> = isas.iter().copied().filter(|i| *i != Isa::Scalar).collect();
    // (rates, bits per lane, operations per lane, the rate's name, usable ISAs)
    let (rates, lane_bits, ops_per_lane, what, usable): (&[Rate], u32, f64, &str, Vec<Isa>) =
        match op {
            OpClass::Fma { element_bits } | OpClass::FmaAdd { element_bits } => (
                uarch.fma,
                element_bits,
                2.0,
                "fma_per_cycle",
                isas.iter().copied().filter(|i| i.has_fma()).collect(),
            ),
            OpClass::IntAdd { element_bits } => (
                uarch.int_add,
                element_bits,
                1.0,
                "int_add_per_cycle",
                isas.to_vec(),
            ),
            OpClass::Dot { element_bits: 8 } => {
                (uarch.int8_dot, 32, 8.0, "int8_dot_per_cycle", vector)
            }
            OpClass::Dot { .. } => (uarch.bf16_dot, 32, 4.0, "bf16_dot_per_cycle", vector),
            OpClass::Matrix { element_bits } => {
                return matrix_ops(uarch, isas, element_bits, inputs);
            }
        };
    if rates.is_empty() {
        return Err(format!(
            "the {} entry has no {what} (the core has no such instruction, or no published rate was confirmed)",
            uarch.name
        ));
    }
    let best = Uarch::best(rates, &usable).ok_or_else(|| {
        format!(
            "no vector instruction set of the {} entry is usable on this machine (ISAs: {})",
            uarch.name,
            isas.iter().map(|i| i.name()).collect::<Vec<_>>().join(", ")
        )
    })?;
    let lanes = (best.width_bits / lane_bits) as f64;
    inputs.insert(
        what.into(),
        input(best.per_cycle, "instructions/cycle/core", Source::Table),
    );
    inputs.insert(
        "vector_width".into(),
        input(best.width_bits as f64, "bits", Source::Table),
    );
    inputs.insert(
        "element_width".into(),
        input(lane_bits as f64, "bits", Source::Detected),
    );
    let ops = best.per_cycle * lanes * ops_per_lane;
    let derivation = match op {
        OpClass::Dot { .. } => format!(
            "{what} × (vector_width / element_width) × {ops_per_lane} (multiplies and adds per 32-bit lane)"
        ),
        _ if ops_per_lane == 2.0 => format!("{what} × (vector_width / element_width) × 2"),
        _ => format!("{what} × (vector_width / element_width)"),
    };
    Ok((ops, derivation))
}

/// A core's matrix-multiply operations per cycle: instructions per cycle × result lanes ×
/// 2 × products a lane.
fn matrix_ops(
    uarch: &Uarch,
    isas: &[Isa],
    element_bits: u32,
    inputs: &mut BTreeMap<String, PeakInput>,
) -> Result<(f64, String), String> {
    let unit = uarch.matrix.as_ref().ok_or_else(|| {
        format!(
            "the {} entry has no matrix-multiply instructions (AMX, SMMLA/BFMMLA)",
            uarch.name
        )
    })?;
    let (ops, rate) = unit.ops_per_cycle(element_bits, isas).ok_or_else(|| {
        format!(
            "no vector instruction set of the {} entry's {} is usable on this machine",
            uarch.name, unit.name
        )
    })?;
    let table = |v: f64, unit: &str| input(v, unit, Source::Table);
    inputs.insert(
        "matrix_per_cycle".into(),
        table(rate.per_cycle, "instructions/cycle/core"),
    );
    inputs.insert("result_width".into(), table(rate.width_bits as f64, "bits"));
    inputs.insert(
        "depth".into(),
        table(f64::from(unit.depth_bytes), "bytes/lane"),
    );
    inputs.insert(
        "element_width".into(),
        input(element_bits as f64, "bits", Source::Detected),
    );
    Ok((
        ops,
        "matrix_per_cycle × (result_width / 32) × 2 × (depth × 8 / element_width)".into(),
    ))
}

/// The FP issue ceiling of a core on `element_bits` lanes: at the width where FMAs and the adds
/// beside them (on add pipes of their own) do the most, `(2 × fma + fadd) × lanes` per cycle.
fn fp_issue(
    uarch: &Uarch,
    isas: &[Isa],
    element_bits: u32,
    inputs: &mut BTreeMap<String, PeakInput>,
) -> Result<(f64, String), String> {
    let usable: Vec<Isa> = isas.iter().copied().filter(|i| i.has_fma()).collect();
    let (fma, fadd) = uarch.fp_issue(&usable, element_bits).ok_or_else(|| {
        format!(
            "no FMA instruction set of the {} entry is usable on this machine",
            uarch.name
        )
    })?;
    let lanes = (fma.width_bits / element_bits.max(1)) as f64;
    let table = |v: f64, unit: &str| input(v, unit, Source::Table);
    inputs.insert(
        "fma_per_cycle".into(),
        table(fma.per_cycle, "instructions/cycle/core"),
    );
    inputs.insert(
        "fadd_per_cycle".into(),
        table(fadd, "instructions/cycle/core"),
    );
    inputs.insert("vector_width".into(), table(fma.width_bits as f64, "bits"));
    inputs.insert(
        "element_width".into(),
        input(element_bits as f64, "bits", Source::Detected),
    );
    Ok((
        (2.0 * fma.per_cycle + fadd) * lanes,
        "(2 × fma_per_cycle + fadd_per_cycle) × (vector_width / element_width)".into(),
    ))
}

/// The least latency of a load that hits cache level `level` (1, 2, 3): its load-to-use cycles
/// from the table ÷ the clock, in ns.
pub fn cache_latency(
    level: u32,
    uarch: Option<&Uarch>,
    clock_ghz: Result<f64, String>,
) -> Result<Peak, String> {
    let u = uarch.ok_or(
        "the microarchitecture is not in peakbench's table, so its cache latencies are unknown",
    )?;
    let cycles = u.cache_cycles.of(level).ok_or_else(|| {
        format!(
            "the table has no floor for {}'s L{level} latency (it depends on the part or on the distance to the cache slice)",
            u.name
        )
    })?;
    let clock = clock_ghz.map_err(|why| format!("{CLOCK_UNKNOWN} ({why})"))?;
    let mut inputs = BTreeMap::new();
    inputs.insert("cycles".into(), input(cycles, "cycles", Source::Table));
    inputs.insert("clock".into(), input(clock, "GHz", Source::Measured));
    Ok(Peak {
        value: cycles / clock,
        unit: Unit::Nanos,
        formula: "cycles / clock".into(),
        inputs,
    })
}

/// The least latency of a load from memory, ns: the modules' rated latency, from the user —
/// given in ns (`--mem-latency-ns`), or as the CAS latency in cycles and the transfer rate
/// (`--mem-cl`, `--mem-mts`). SMBIOS (type 17) gives their speed, not their CAS latency, which
/// is in each module's SPD.
pub fn memory_latency(user: &MemPeakOverrides) -> Result<Peak, String> {
    if let (Some(cl), Some(mts)) = (user.cl, user.mts) {
        return Ok(cas_latency(cl, mts, Source::User));
    }
    let ns = user.latency_ns.ok_or(
        "SMBIOS gives the modules' speed but not their CAS latency (it is in each module's SPD); give the rated latency with --mem-latency-ns, or --mem-cl with --mem-mts",
    )?;
    Ok(Peak {
        value: ns,
        unit: Unit::Nanos,
        formula: "rated".into(),
        inputs: BTreeMap::from([("rated".to_string(), input(ns, "ns", Source::User))]),
    })
}

/// The modules' CAS latency in ns: CL cycles of the memory clock, which runs at half the
/// transfer rate (double data rate): CL × 2000 / MT/s.
pub fn cas_latency(cl: f64, mts: f64, source: Source) -> Peak {
    Peak {
        value: cl * 2000.0 / mts,
        unit: Unit::Nanos,
        formula: "CL × 2000 / transfer_rate".into(),
        inputs: BTreeMap::from([
            ("CL".to_string(), input(cl, "cycles", source)),
            ("transfer_rate".to_string(), input(mts, "MT/s", source)),
        ]),
    }
}

/// The least round trip of a `message`-byte ping over a link of `link_mbps`: the message's
/// frames serialised on the link both ways, and the one-way propagation delay (user) twice;
/// in µs.
pub fn round_trip(
    link_mbps: (f64, Source),
    mtu: u32,
    tcp: bool,
    ipv6: bool,
    message: u32,
    propagation_us: Option<f64>,
) -> Result<Peak, String> {
    let prop = propagation_us.ok_or(
        "the propagation delay of the path is not known; give it (one way) with --propagation-us",
    )?;
    let ip = if ipv6 { 40 } else { 20 };
    // Bytes on the wire for one message: TCP segments of at most MTU − IP − TCP 32 bytes, or
    // the UDP datagram's fragments, each with its headers and Ethernet's framing.
    // A frame shorter than Ethernet's least (64 bytes, 84 with preamble and gap) is padded.
    let (wire, frames) = if tcp {
        let per = mtu.saturating_sub(ip + 32).max(1) as u64;
        let segments = (message as u64).div_ceil(per).max(1);
        let wire = message as u64 + segments * (ip + 32 + super::netif::ETHERNET_OVERHEAD) as u64;
        (wire, segments)
    } else {
        let per = ((mtu.saturating_sub(ip)) / 8 * 8).max(8) as u64;
        let fragments = (message as u64 + 8).div_ceil(per);
        (
            super::netif::shares(false, ipv6, mtu, message).1 as u64,
            fragments,
        )
    };
    let wire = wire.max(frames * super::netif::MIN_FRAME_ON_WIRE);
    let serialise_us = wire as f64 * 8.0 / (link_mbps.0 * 1e6) * 1e6;
    let mut inputs = BTreeMap::new();
    inputs.insert(
        "link_speed".into(),
        input(link_mbps.0, "Mbit/s", link_mbps.1),
    );
    inputs.insert(
        "wire_bytes".into(),
        input(wire as f64, "bytes", Source::Detected),
    );
    inputs.insert("propagation".into(), input(prop, "µs", Source::User));
    Ok(Peak {
        value: 2.0 * (serialise_us + prop),
        unit: Unit::Micros,
        formula: "2 × (wire_bytes × 8 / link_speed + propagation)".into(),
        inputs,
    })
}

/// The goodput ceiling in `unit_bits` (1e6 for Mbit/s) of a stream over a link of
/// `link_mbps` with this MTU: the link rate times the payload share.
pub fn goodput(
    link_mbps: (f64, Source),
    mtu: u32,
    tcp: bool,
    ipv6: bool,
    message: u32,
    unit: Unit,
    unit_bits: f64,
) -> Peak {
    let (payload, wire, share) = super::netif::shares(tcp, ipv6, mtu, message);
    let value = link_mbps.0 * 1e6 * payload / wire / unit_bits;
    let mut inputs = BTreeMap::new();
    inputs.insert(
        "link_speed".into(),
        PeakInput {
            value: link_mbps.0,
            unit: "Mbit/s".into(),
            source: link_mbps.1,
        },
    );
    inputs.insert(
        "mtu".into(),
        PeakInput {
            value: mtu as f64,
            unit: "bytes".into(),
            source: Source::Detected,
        },
    );
    Peak {
        value,
        unit,
        formula: format!("link speed × {share}"),
        inputs,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sysinfo::uarch::lookup_x86;

    const X86: [Isa; 4] = [Isa::Avx512, Isa::Avx2, Isa::Sse2, Isa::Scalar];

    #[test]
    fn zen4_dp_is_16_flops_per_cycle() {
        let zen4 = lookup_x86("AuthenticAMD", 25, 17);
        let p = cpu_peak(
            OpClass::Fma { element_bits: 64 },
            2,
            Ok(3.6),
            zen4,
            &X86,
            &Default::default(),
        )
        .unwrap();
        assert!((p.value - 2.0 * 3.6 * 16.0).abs() < 1e-9);
        assert_eq!(p.inputs["clock"].source, Source::Measured);
        assert_eq!(p.inputs["fma_per_cycle"].source, Source::Table);
        assert!(p.formula.contains("× 2"));
        let sp = cpu_peak(
            OpClass::Fma { element_bits: 32 },
            1,
            Ok(3.6),
            zen4,
            &X86,
            &Default::default(),
        )
        .unwrap();
        assert!((sp.value - 3.6 * 32.0).abs() < 1e-9);
        let i8 = cpu_peak(
            OpClass::IntAdd { element_bits: 8 },
            1,
            Ok(1.0),
            zen4,
            &X86,
            &Default::default(),
        )
        .unwrap();
        assert_eq!(i8.value, 128.0); // 4 × 256-bit adds = 2 × 512-bit adds = 128 bytes/cycle
    }

    /// The FP issue ceiling: FMAs and the adds on pipes of their own, at the width where they
    /// do the most; the FMA's where adds take the FMA pipes.
    #[test]
    fn fp_issue_ceilings_per_family() {
        let lookup = |k: &str| super::super::uarch::lookup(k).unwrap();
        let per_cycle = |key: &str, op: OpClass, isas: &[Isa]| {
            cpu_peak(op, 1, Ok(1.0), Some(lookup(key)), isas, &Default::default())
                .unwrap()
                .value
        };
        let avx2 = [Isa::Avx2, Isa::Sse2, Isa::Scalar];
        let fa = OpClass::FmaAdd { element_bits: 64 };
        let fma = OpClass::Fma { element_bits: 64 };
        for (key, isas, fma_only, with_adds) in [
            // Two 512-bit FMAs and two 512-bit adds a cycle.
            ("zen5", &X86[..], 32.0, 48.0),
            // One 512-bit FMA (two 256-bit) and one 512-bit add (two 256-bit).
            ("zen4", &X86[..], 16.0, 24.0),
            ("zen3", &avx2[..], 16.0, 24.0),
            // Two 256-bit FMAs (one 256-bit on Zen 1) and two 128-bit adds.
            ("zen", &avx2[..], 8.0, 12.0),
            // The port-5 adder beside two 256-bit FMAs; none beside 512-bit FMAs, which stay
            // the ceiling where AVX-512 is there.
            ("alderlake", &avx2[..], 16.0, 20.0),
            ("sapphirerapids", &X86[..], 32.0, 32.0),
            ("sapphirerapids", &avx2[..], 16.0, 20.0),
            ("skylake", &avx2[..], 16.0, 16.0),
            ("skylake-sp", &X86[..], 32.0, 32.0),
        ] {
            assert_eq!(per_cycle(key, fma, isas), fma_only, "{key} {isas:?}");
            assert_eq!(per_cycle(key, fa, isas), with_adds, "{key} {isas:?}");
        }
        let arm = [Isa::Sve, Isa::Neon, Isa::Scalar];
        assert_eq!(
            per_cycle("neoverse-v2", fa, &arm),
            per_cycle("neoverse-v2", fma, &arm)
        );
        let p = cpu_peak(
            fa,
            2,
            Ok(3.0),
            Some(lookup("zen5")),
            &X86,
            &Default::default(),
        )
        .unwrap();
        assert_eq!(p.value, 2.0 * 3.0 * 48.0);
        assert_eq!(p.inputs["fadd_per_cycle"].value, 2.0);
        assert_eq!(p.inputs["fadd_per_cycle"].source, Source::Table);
        assert!(p.formula.contains("fadd_per_cycle"), "{}", p.formula);
        // SP: twice the lanes.
        let sp = OpClass::FmaAdd { element_bits: 32 };
        assert_eq!(per_cycle("zen5", sp, &X86), 96.0);
    }

    #[test]
    fn unknown_uarch_gives_reason_and_overrides_work() {
        let op = OpClass::Fma { element_bits: 64 };
        let err = cpu_peak(op, 1, Ok(3.0), None, &X86, &Default::default()).unwrap_err();
        assert!(err.contains("--ops-per-cycle"));
        let user = CpuPeakOverrides {
            ops_per_cycle: Some(8.0),
            clock_ghz: Some(2.0),
            ..Default::default()
        };
        let p = cpu_peak(op, 2, Ok(3.0), None, &X86, &user).unwrap();
        assert_eq!(p.value, 32.0);
        assert_eq!(p.inputs["clock"].source, Source::User);
        let err = cpu_peak(
            op,
            1,
            Err("probes disagree".into()),
            None,
            &X86,
            &Default::default(),
        )
        .unwrap_err();
        assert!(
            err.starts_with(CLOCK_UNKNOWN) && err.contains("probes disagree"),
            "{err}"
        );
        assert!(err.contains("--clock-ghz"));
        let user = CpuPeakOverrides {
            gops_per_core: Some(50.0),
            ..Default::default()
        };
        assert_eq!(
            cpu_peak(op, 2, Err(String::new()), None, &X86, &user)
                .unwrap()
                .value,
            100.0
        );
    }

    #[test]
    fn fp_peak_needs_an_fma_isa() {
        let zen4 = lookup_x86("AuthenticAMD", 25, 17);
        let err = cpu_peak(
            OpClass::Fma { element_bits: 64 },
            1,
            Ok(3.0),
            zen4,
            &[Isa::Sse2, Isa::Scalar],
            &Default::default(),
        );
        assert!(err.is_err());
    }
}

/// What the user said about the memory's peak.
#[derive(Debug, Clone, Default)]
pub struct MemPeakOverrides {
    /// The peak itself, GB/s.
    pub gbs: Option<f64>,
    /// Memory channels and their transfer rate (MT/s), given together.
    pub channels: Option<u32>,
    pub mts: Option<f64>,
    /// The modules' rated latency, ns: the floor of a load from memory (`--mem-latency-ns`).
    pub latency_ns: Option<f64>,
    /// Or their CAS latency in cycles of the memory clock (`--mem-cl`, with `mts`).
    pub cl: Option<f64>,
}

/// The DRAM bandwidth peak: Σ over populated DIMMs of transfer rate × data width / 8 — that is
/// channels × MT/s × 8 bytes with one 64-bit DIMM per channel (two DIMMs on one channel share
/// it: give `--mem-channels` then). Decimal GB/s, reads and writes together.
pub fn mem_peak(
    devices: &super::Fact<Vec<super::smbios::MemoryDevice>>,
    user: &MemPeakOverrides,
) -> Result<Peak, String> {
    let mut inputs = BTreeMap::new();
    if let Some(gbs) = user.gbs {
        inputs.insert("peak".into(), input(gbs, "GB/s", Source::User));
        return Ok(Peak {
            value: gbs,
            unit: Unit::GBPerSec,
            formula: "peak".into(),
            inputs,
        });
    }
    if let (Some(ch), Some(mts)) = (user.channels, user.mts) {
        inputs.insert(
            "channels".into(),
            input(ch as f64, "channels", Source::User),
        );
        inputs.insert("transfer_rate".into(), input(mts, "MT/s", Source::User));
        inputs.insert("bus_width".into(), input(8.0, "bytes", Source::Table));
        return Ok(Peak {
            value: ch as f64 * mts * 8.0 / 1000.0,
            unit: Unit::GBPerSec,
            formula: "channels × transfer_rate × bus_width".into(),
            inputs,
        });
    }
    let devices = devices.get().ok_or_else(|| {
        format!(
            "{}; give --mem-peak-gbs, or --mem-channels with --mem-mts",
            devices
                .unknown_reason
                .as_deref()
                .unwrap_or("no memory devices known")
        )
    })?;
    let rates: Vec<(f64, f64)> = devices
        .iter()
        .filter_map(|d| {
            d.rate_mts()
                .map(|r| (r as f64, d.data_width_bits as f64 / 8.0))
        })
        .collect();
    if rates.is_empty() {
        return Err(
            "SMBIOS gives no speed for the memory devices; give --mem-mts with --mem-channels"
                .into(),
        );
    }
    let mb_per_s: f64 = rates.iter().map(|(r, w)| r * w).sum();
    inputs.insert(
        "dimms".into(),
        input(rates.len() as f64, "DIMMs", Source::Detected),
    );
    inputs.insert(
        "transfer_rate".into(),
        input(
            rates.iter().map(|r| r.0).sum::<f64>() / rates.len() as f64,
            "MT/s (mean)",
            Source::Detected,
        ),
    );
    inputs.insert(
        "data_width".into(),
        input(
            rates.iter().map(|r| r.1).sum::<f64>() / rates.len() as f64,
            "bytes (mean)",
            Source::Detected,
        ),
    );
    Ok(Peak {
        value: mb_per_s / 1000.0,
        unit: Unit::GBPerSec,
        formula: "Σ over DIMMs of transfer_rate × data_width (one DIMM per channel)".into(),
        inputs,
    })
}

#[cfg(test)]
mod mem_tests {
    use super::*;
    use crate::sysinfo::Fact;
    use crate::sysinfo::smbios::MemoryDevice;

    #[test]
    fn dimms_give_channels_times_rate() {
        let dimm = |r| MemoryDevice {
            locator: "A".into(),
            size_bytes: 1 << 34,
            data_width_bits: 64,
            speed_mts: Some(4800),
            configured_mts: r,
        };
        let devs = Fact::known(vec![dimm(Some(4400)); 12], Source::Detected);
        let p = mem_peak(&devs, &Default::default()).unwrap();
        assert!((p.value - 12.0 * 4400.0 * 8.0 / 1000.0).abs() < 1e-9);
        assert_eq!(p.inputs["dimms"].value, 12.0);
    }

    #[test]
    fn unknown_without_smbios_unless_user_says() {
        let none: Fact<Vec<MemoryDevice>> = Fact::unknown("no SMBIOS table");
        let err = mem_peak(&none, &Default::default()).unwrap_err();
        assert!(
            err.contains("no SMBIOS table") && err.contains("--mem-peak-gbs"),
            "{err}"
        );
        let user = MemPeakOverrides {
            channels: Some(2),
            mts: Some(4800.0),
            gbs: None,
            ..Default::default()
        };
        assert_eq!(mem_peak(&none, &user).unwrap().value, 76.8);
        let user = MemPeakOverrides {
            gbs: Some(50.0),
            ..Default::default()
        };
        assert_eq!(mem_peak(&none, &user).unwrap().value, 50.0);
    }

    #[test]
    fn tcp_and_udp_shares_at_mtu_1500() {
        let p = goodput(
            (10_000.0, Source::User),
            1500,
            true,
            false,
            131072,
            Unit::MbitPerSec,
            1e6,
        );
        assert!((p.value - 10_000.0 * 1448.0 / 1538.0).abs() < 1e-6);
        // 1400 B fits one packet: 1400 / (1408 + 58).
        let u = goodput(
            (1000.0, Source::User),
            1500,
            false,
            false,
            1400,
            Unit::MbitPerSec,
            1e6,
        );
        assert!(
            (u.value - 1000.0 * 1400.0 / 1466.0).abs() < 1e-9,
            "{}",
            u.value
        );
        // 8000 B: 8008 bytes in ceil(8008 / 1480) = 6 fragments.
        let f = goodput(
            (1000.0, Source::User),
            1500,
            false,
            false,
            8000,
            Unit::GbitPerSec,
            1e9,
        );
        assert!((f.value - 8000.0 / (8008.0 + 6.0 * 58.0)).abs() < 1e-9);
        assert!(f.formula.contains("6 ×"));
    }

    #[test]
    fn disk_peaks_mix_the_rated_figures_and_bound_them_by_the_link() {
        let rated = DiskPeaks {
            read_mbps: Some(3000.0),
            write_mbps: Some(1000.0),
            read_iops: Some(500_000.0),
            write_iops: None,
            ..Default::default()
        };
        // 70 % of the bytes read: 1 / (0.7 / 3000 + 0.3 / 1000).
        let p = disk_throughput(&rated, 0.7, None, "x").unwrap();
        assert!((p.value - 1.0 / (0.7 / 3000.0 + 0.3 / 1000.0)).abs() < 1e-9);
        let bound = disk_throughput(&rated, 1.0, Some((2000.0, "PCIe".into())), "x").unwrap();
        assert_eq!(
            (bound.value, bound.formula.as_str()),
            (2000.0, "min(rated, link)")
        );
        let unknown =
            disk_throughput(&DiskPeaks::default(), 1.0, None, "vda has no link").unwrap_err();
        assert!(unknown.contains("vda has no link") && unknown.contains("--disk-peak-read-mbps"));
        // 4 KiB reads: the rated IOPS (500k) are below 3000 MB/s ÷ 4 KiB (732k).
        let iops = disk_iops(&rated, 1.0, 4096, None, true, 1).unwrap();
        assert_eq!(iops.value, 500_000.0);
        assert_eq!(iops.formula, "min(rated, bandwidth / block)");
        // 1 MiB reads: the bandwidth bounds them, 3000 MB/s ÷ 1 MiB.
        let big = disk_iops(&rated, 1.0, 1 << 20, None, true, 1).unwrap();
        assert!((big.value - 3e9 / (1 << 20) as f64).abs() < 1e-6, "{big:?}");
        // Writes with no rated write IOPS: the rated write bandwidth alone (1000 MB/s).
        let w = disk_iops(&rated, 0.0, 4096, None, true, 1).unwrap();
        assert!((w.value - 1e9 / 4096.0).abs() < 1e-6);
        // Nothing known: unknown, saying what to give.
        let none = disk_iops(&DiskPeaks::default(), 0.5, 4096, None, true, 1).unwrap_err();
        assert!(none.contains("--rpm and --seek-ms"), "{none}");
        // The link alone bounds it too.
        let link = disk_iops(
            &DiskPeaks::default(),
            1.0,
            4096,
            Some((400.0, "SATA".into())),
            false,
            1,
        )
        .unwrap();
        assert!((link.value - 400e6 / 4096.0).abs() < 1e-6);
    }

    /// A rotating disk: random I/O waits for a seek and half a rotation (7200 rpm, 8.5 ms:
    /// 12.67 ms, 79 IOPS); sequential I/O neither seeks nor waits. A rated access latency
    /// takes the place of the model; the transfer adds to it where the bandwidth is known.
    #[test]
    fn a_rotating_disk_and_a_rated_access_latency() {
        let hdd = DiskPeaks {
            rpm: Some(7200.0),
            seek_ms: Some(8.5),
            ..Default::default()
        };
        let iops = disk_iops(&hdd, 1.0, 4096, None, true, 1).unwrap();
        assert!(
            (iops.value - 1e3 / (8.5 + 60e3 / 7200.0 / 2.0)).abs() < 1e-9,
            "{iops:?}"
        );
        assert!(
            disk_iops(&hdd, 1.0, 4096, None, false, 1).is_err(),
            "sequential: no model"
        );
        let lat = disk_latency(&hdd, 1.0, 4096, None, true).unwrap();
        assert!(
            (lat.value - (8500.0 + 60e6 / 7200.0 / 2.0)).abs() < 1e-6,
            "{lat:?}"
        );
        assert!(lat.formula.contains("not counted"));
        let seq = disk_latency(&hdd, 1.0, 1 << 20, Some((200.0, "SATA".into())), false).unwrap();
        // No access time, the transfer of 1 MiB at 200 MB/s.
        assert!(
            (seq.value - (1 << 20) as f64 / 200.0).abs() < 1e-6,
            "{seq:?}"
        );
        let ssd = DiskPeaks {
            latency_us: Some(80.0),
            ..Default::default()
        };
        assert_eq!(
            disk_latency(&ssd, 1.0, 4096, None, true).unwrap().value,
            80.0
        );
        assert_eq!(
            disk_iops(&ssd, 1.0, 4096, None, true, 1).unwrap().value,
            12_500.0
        );
        // n I/Os in flight: n / access (Little's law), under the rated IOPS and bandwidth.
        let queued = DiskPeaks {
            read_iops: Some(93_000.0),
            latency_us: Some(500.0),
            ..Default::default()
        };
        let qd32 = disk_iops(&queued, 1.0, 1024, None, true, 32).unwrap();
        assert_eq!(qd32.value, 64_000.0);
        assert_eq!(
            qd32.formula,
            "min(rated, n / access), n = threads × queue depth (Little's law)"
        );
        assert_eq!(qd32.inputs["n"].value, 32.0);
        assert_eq!(
            disk_iops(&queued, 1.0, 1024, None, true, 1).unwrap().value,
            2000.0
        );
        assert_eq!(
            disk_iops(&queued, 1.0, 1024, None, true, 64).unwrap().value,
            93_000.0
        );
        // A rotating disk at QD 32: 32 / (seek + ½ rotation), with why a queue can beat it.
        let hdd32 = disk_iops(&hdd, 1.0, 4096, None, true, 32).unwrap();
        assert!((hdd32.value - 32e3 / (8.5 + 60e3 / 7200.0 / 2.0)).abs() < 1e-9);
        assert!(hdd32.formula.contains("NCQ/TCQ") && hdd32.formula.contains("reorders"));
        assert!(
            disk_latency(&DiskPeaks::default(), 1.0, 4096, None, true)
                .unwrap_err()
                .contains("--disk-latency-us")
        );
    }

    /// Memory's floors: a cache level's cycles ÷ the clock (Zen 4: L1 4, L2 14 cycles), none
    /// for a last level the table cannot vouch for, memory's from the user only.
    #[test]
    fn memory_latency_floors() {
        let zen4 = super::super::uarch::lookup("zen4").unwrap();
        let l1 = cache_latency(1, Some(zen4), Ok(4.0)).unwrap();
        assert_eq!((l1.value, l1.unit.name()), (1.0, "ns"));
        assert_eq!(cache_latency(2, Some(zen4), Ok(3.5)).unwrap().value, 4.0);
        assert!(
            cache_latency(3, Some(zen4), Ok(3.5))
                .unwrap_err()
                .contains("L3")
        );
        assert!(cache_latency(1, None, Ok(3.5)).is_err());
        assert!(
            cache_latency(1, Some(zen4), Err("probes disagree".into()))
                .unwrap_err()
                .starts_with(CLOCK_UNKNOWN)
        );
        assert!(
            memory_latency(&MemPeakOverrides::default())
                .unwrap_err()
                .contains("--mem-latency-ns")
        );
        let rated = |latency_ns, cl| MemPeakOverrides {
            latency_ns,
            cl,
            mts: Some(2133.0),
            ..Default::default()
        };
        assert_eq!(
            memory_latency(&rated(Some(80.0), None)).unwrap().value,
            80.0
        );
        // The reports' DDR4-2133 CL15: 15 × 2000 / 2133 = 14.06 ns.
        let cas = memory_latency(&rated(None, Some(15.0))).unwrap();
        assert!((cas.value - 14.065).abs() < 1e-3, "{cas:?}");
        assert_eq!(cas.formula, "CL × 2000 / transfer_rate");
    }

    /// A round trip's floor: the message's frames serialised both ways and the propagation
    /// twice (a 1-byte TCP ping over 10 Gbit/s, MTU 1500: 1 + 20 + 32 + 38 = 91 bytes, 72.8 ns
    /// each way); unknown without the propagation.
    #[test]
    fn round_trip_floor() {
        let link = (10_000.0, Source::User);
        let p = round_trip(link, 1500, true, false, 1, Some(5.0)).unwrap();
        assert!(
            (p.value - 2.0 * (91.0 * 8.0 / 1e10 * 1e6 + 5.0)).abs() < 1e-9,
            "{p:?}"
        );
        // A 3000-byte TCP message: three segments of at most 1448 bytes.
        let big = round_trip(link, 1500, true, false, 3000, Some(0.0)).unwrap();
        assert_eq!(big.inputs["wire_bytes"].value, 3000.0 + 3.0 * 90.0);
        assert!(round_trip(link, 1500, false, false, 64, None).is_err());
    }
}
