//! What a shell and `man` need, generated from the clap definitions: `peakbench completions
//! SHELL` and `peakbench man`.

use clap::Args;
use std::path::PathBuf;

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell: bash, zsh, fish, elvish or powershell. Bash: `peakbench completions bash >
    /// /etc/bash_completion.d/peakbench`; zsh: into a directory of `$fpath` as `_peakbench`;
    /// fish: `~/.config/fish/completions/peakbench.fish`.
    pub shell: clap_complete::Shell,
}

#[derive(Debug, Args)]
pub struct ManArgs {
    /// Write a page per command (peakbench.1, peakbench-cpu.1, …) into DIR (created when its
    /// parent exists) instead of printing peakbench(1): `peakbench man --out-dir
    /// /usr/local/share/man/man1`.
    #[arg(long, value_name = "DIR")]
    pub out_dir: Option<PathBuf>,
}

pub fn completions(args: CompletionsArgs) -> anyhow::Result<()> {
    let mut cmd = super::command();
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut cmd, "peakbench", &mut script);
    crate::files::write_stdout(&script)
        .map_err(|e| anyhow::Error::from(e).context("cannot write to standard output"))
}

pub fn man(args: ManArgs) -> anyhow::Result<()> {
    let cmd = super::command();
    match args.out_dir {
        None => {
            let mut page = Vec::new();
            clap_mangen::Man::new(cmd).render(&mut page)?;
            crate::files::write_stdout(&page)
                .map_err(|e| anyhow::Error::from(e).context("cannot write to standard output"))
        }
        Some(dir) => {
            crate::files::check_output_dir(&dir)?;
            crate::files::create_output_dir(&dir)?;
            write_pages(&cmd, "peakbench", &dir)?;
            eprintln!("man pages written to {}", dir.display());
            Ok(())
        }
    }
}

/// `cmd`'s page as `name.1` in `dir`, then each subcommand's as `name-sub.1`, through the
/// same atomic writer as every output.
fn write_pages(cmd: &clap::Command, name: &str, dir: &std::path::Path) -> anyhow::Result<()> {
    let mut page = Vec::new();
    let mut c = cmd.clone().name(name.to_string());
    c.build();
    clap_mangen::Man::new(c.clone()).render(&mut page)?;
    let path = dir.join(format!("{name}.1"));
    crate::files::write_output(&path, &page)
        .map_err(|e| anyhow::Error::from(e).context(format!("cannot write {}", path.display())))?;
    for sub in c.get_subcommands().filter(|s| s.get_name() != "help") {
        write_pages(sub, &format!("{name}-{}", sub.get_name()), dir)?;
    }
    Ok(())
}
