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
mod tests;

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
mod mem_tests;
