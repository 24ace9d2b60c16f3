//! `peakbench reference check`: which reference tools are installed, what they cover, and how
//! to install the missing ones.

use crate::reference::{self, Availability, ToolStatus};
use clap::{Args, Subcommand};

#[derive(Debug, Args)]
pub struct ReferenceArgs {
    #[command(subcommand)]
    pub command: ReferenceCommand,
}

#[derive(Debug, Subcommand)]
pub enum ReferenceCommand {
    /// List the reference tools: found (version and path) or missing (and the install command).
    Check,
}

/// `reference`'s one-liner: every tool peakbench runs, from the registry.
pub fn about() -> String {
    let names: Vec<&str> = reference::Tool::ALL.iter().map(|t| t.name()).collect();
    format!(
        "The reference tools ({}): `reference check`",
        names.join(", ")
    )
}

/// The status column: "found VERSION at PATH", "missing", or why a named tool cannot be used.
pub fn status(s: &ToolStatus) -> String {
    match &s.availability {
        Availability::Found(f) => format!("found {} at {}", f.version, f.path.display()),
        Availability::Missing => "missing".into(),
        Availability::Unusable { reason, .. } => format!("unusable: {reason}"),
    }
}

/// The table of `reference check`.
pub fn render(statuses: &[ToolStatus]) -> String {
    let mut t = crate::report::table::new_table(crate::text::terminal_width());
    t.set_header(["Tool", "Status", "Covers", "Install"]);
    for s in statuses {
        t.add_row([
            s.name.to_string(),
            status(s),
            s.covers.to_string(),
            s.install.to_string(),
        ]);
    }
    let mut out = format!("{t}\n");
    for line in reference::UNAVAILABLE {
        out.push_str(&crate::text::wrap(
            line,
            crate::text::terminal_width(),
            "  ",
        ));
        out.push('\n');
    }
    out
}

pub fn run(args: ReferenceArgs) -> anyhow::Result<()> {
    match args.command {
        ReferenceCommand::Check => crate::files::print(&render(&reference::check())),
    }
}
