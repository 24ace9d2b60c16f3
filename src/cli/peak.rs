//! `peakbench peak`: the theoretical peaks of a machine described on the command line — its
//! CPU, memory, disk and network — for the "theoretical" column of machines not at hand, each
//! with its formula. Nothing is measured.

use super::common::{UsageError, bounds, count_in};
use super::peak_others::OtherPeaks;
use crate::app::peak::{self, CpuDescribed, Described};
use crate::files::check_output_file;
use crate::report;
use crate::sysinfo::uarch;
use anyhow::Context;
use clap::Args;
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

pub fn run(args: PeakArgs) -> anyhow::Result<()> {
    let cpu = match (&args.uarch, args.cores, args.ghz) {
        (Some(name), Some(cores), Some(ghz)) => Some(CpuDescribed {
            uarch: uarch::lookup(name).map_err(UsageError)?,
            cores,
            sockets: args.sockets,
            ghz,
        }),
        _ => None,
    };
    let doc = peak::document(&Described {
        cpu,
        ..args.others.described()
    });
    if doc.is_empty() {
        return Err(super::peak_others::nothing_given().into());
    }
    if let Some(path) = &args.json {
        check_output_file(path)?;
        let mut text = serde_json::to_string_pretty(&doc)?;
        text.push('\n');
        crate::files::write_output(path, text.as_bytes())
            .with_context(|| format!("cannot write {}", path.display()))?;
        if path.as_os_str() == "-" {
            return Ok(());
        }
    }
    crate::files::print(&report::peaks::render(&doc, crate::text::terminal_width()))
}
