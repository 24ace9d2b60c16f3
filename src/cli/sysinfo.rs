//! `peakbench sysinfo`.

use crate::report;
use crate::results::Report;
use crate::sysinfo::{ClockBudget, collect};
use anyhow::Context;
use clap::Args;
use std::path::PathBuf;

#[derive(Debug, Args)]
pub struct SysinfoArgs {
    /// Write the system information as a JSON document (the results schema with no results) to
    /// FILE, or `-` for stdout.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
}

pub fn run(args: SysinfoArgs, argv: Vec<String>) -> anyhow::Result<()> {
    if let Some(path) = &args.json {
        crate::files::check_output_file(path)?;
    }
    let sys = collect(ClockBudget::default());
    let report = Report::new(sys, argv);
    match &args.json {
        Some(path) => crate::files::write_output(path, &report::json::render(&report))
            .with_context(|| format!("cannot write {}", path.display()))?,
        None => crate::files::print(&report::table::render_system(
            &report.system,
            crate::text::terminal_width(),
        ))?,
    }
    if args.json.as_ref().is_some_and(|p| p.as_os_str() != "-") {
        crate::files::print(&report::table::render_system(
            &report.system,
            crate::text::terminal_width(),
        ))?;
    }
    Ok(())
}
