//! `peakbench peak`: the theoretical peaks of a machine described on the command line — its
//! CPU, memory, disk and network — for the "theoretical" column of machines not at hand, each
//! with its formula. Nothing is measured.

use super::common::{UsageError, bounds, count_in};
use super::peak_others::{OtherPeaks, Sections};
use crate::app::cpu::{CpuWorkload, operation};
use crate::files::check_output_file;
use crate::report;
use crate::sysinfo::peak::{CpuPeakOverrides, Peak, cpu_peak};
use crate::sysinfo::uarch::{self, Uarch};
use crate::sysinfo::{Isa, Source};
use anyhow::Context;
use clap::Args;
use serde::Serialize;
use std::path::PathBuf;

#[derive(Debug, Args)]
pub struct PeakArgs {
    /// CPU: microarchitecture, a name from the table (haswell, skylake-sp, sapphirerapids,
    /// zen4, neoverse-v2, …) or a CPUID signature FAMILY:MODEL (x86, e.g. 6:0xCF) or 0x41:PART
    /// (Arm); with --cores and --ghz.
    #[arg(long, requires_all = ["cores", "ghz"])]
    pub uarch: Option<String>,
    /// CPU: physical cores per socket.
    #[arg(long, value_parser = parse_cores, requires = "uarch")]
    pub cores: Option<u32>,
    /// CPU: core clock in GHz (all-core, under the workload's load; 0.01 to 20).
    #[arg(long, value_name = "GHZ", value_parser = bounds::CLOCK_GHZ.parser(), requires = "uarch")]
    pub ghz: Option<f64>,
    /// CPU: sockets.
    #[arg(long, default_value = "1", value_parser = parse_sockets)]
    pub sockets: u32,
    #[command(flatten)]
    pub others: OtherPeaks,
    /// Write the peaks as JSON to FILE, or `-` for stdout.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
}

fn parse_cores(s: &str) -> Result<u32, String> {
    count_in(s, 1, 4096)
}

fn parse_sockets(s: &str) -> Result<u32, String> {
    count_in(s, 1, 64)
}

/// One workload's peak, or why it has none on this core.
#[derive(Debug, Serialize)]
pub struct WorkloadPeak {
    pub workload: crate::results::Workload,
    /// What the peak counts ("fp64 FMA", "int8 dot product").
    pub operation: String,
    pub peak: Option<Peak>,
    pub unknown_reason: Option<String>,
}

/// What `peak --json` writes.
#[derive(Debug, Serialize)]
pub struct PeakSheet {
    pub microarchitecture: &'static str,
    pub table_source: &'static str,
    pub note: &'static str,
    pub sockets: u32,
    pub cores_per_socket: u32,
    pub clock_ghz: f64,
    pub peaks: Vec<WorkloadPeak>,
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

pub fn run(args: PeakArgs) -> anyhow::Result<()> {
    let cpu = match (&args.uarch, args.cores, args.ghz) {
        (Some(name), Some(cores), Some(ghz)) => {
            let u = uarch::lookup(name).map_err(UsageError)?;
            Some(sheet(u, cores, args.sockets, ghz))
        }
        _ => None,
    };
    let others = args.others.sections();
    if cpu.is_none() && others.is_empty() {
        return Err(super::peak_others::nothing_given().into());
    }
    if let Some(path) = &args.json {
        check_output_file(path)?;
    }
    let doc = PeakDocument { cpu, others };
    if let Some(path) = &args.json {
        let mut text = serde_json::to_string_pretty(&doc)?;
        text.push('\n');
        crate::files::write_output(path, text.as_bytes())
            .with_context(|| format!("cannot write {}", path.display()))?;
        if path.as_os_str() == "-" {
            return Ok(());
        }
    }
    let width = crate::text::terminal_width();
    let mut out = String::new();
    if let Some(sheet) = &doc.cpu {
        let rows: Vec<(String, Result<Peak, String>)> = sheet
            .peaks
            .iter()
            .map(|p| {
                let r = p
                    .peak
                    .clone()
                    .ok_or_else(|| p.unknown_reason.clone().unwrap_or_default());
                (format!("{} ({})", p.workload, p.operation), r)
            })
            .collect();
        let head = format!(
            "{}: {} socket{} × {} cores at {} GHz (nothing measured; table: {})",
            sheet.microarchitecture,
            sheet.sockets,
            if sheet.sockets == 1 { "" } else { "s" },
            sheet.cores_per_socket,
            sheet.clock_ghz,
            sheet.table_source,
        );
        out.push_str(&format!(
            "{}\n{}",
            crate::text::wrap(&head, width, "  "),
            report::table::render_peaks("Workload", &rows, width)
        ));
    }
    for (title, section) in doc.others.all() {
        out.push_str(&section.render(width, title));
    }
    crate::files::print(&out)
}

/// What `peak --json` writes: the CPU's sheet (its fields at the top level, as before the
/// other subsystems were added), then a section per other subsystem described.
#[derive(Debug, Serialize)]
pub struct PeakDocument {
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<PeakSheet>,
    #[serde(flatten)]
    pub others: Sections,
}

#[cfg(test)]
mod tests {
    use super::*;

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
