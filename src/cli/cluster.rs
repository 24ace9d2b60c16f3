//! `peakbench cluster`: the multi-node run. So far `cluster identity`, which shows the rank,
//! world size and local rank this process gets from its launcher, and where they came from.

use super::common::UsageError;
use crate::cluster::identity::{self, Flags};
use clap::{Args, Subcommand};

#[derive(Debug, Args)]
pub struct ClusterArgs {
    #[command(subcommand)]
    pub command: ClusterCommand,
}

#[derive(Debug, Subcommand)]
pub enum ClusterCommand {
    /// Show this process's rank, world size and local rank, and the launcher they came from
    /// (flags, Open MPI, PMI, PMIx, a Slurm step, a Kubernetes indexed Job), as JSON.
    Identity(IdentityArgs),
}

#[derive(Debug, Args)]
pub struct IdentityArgs {
    /// This process's rank (overrides the launcher's).
    #[arg(long)]
    pub rank: Option<u32>,
    /// The number of processes in the run.
    #[arg(long)]
    pub world_size: Option<u32>,
    /// This process's rank among those on its node.
    #[arg(long)]
    pub local_rank: Option<u32>,
}

pub fn run(args: ClusterArgs) -> anyhow::Result<()> {
    match args.command {
        ClusterCommand::Identity(a) => {
            let flags = Flags {
                rank: a.rank,
                world_size: a.world_size,
                local_rank: a.local_rank,
            };
            let id = identity::detect(flags, |k| std::env::var(k).ok()).map_err(UsageError)?;
            println!("{}", serde_json::to_string(&id)?);
            Ok(())
        }
    }
}
