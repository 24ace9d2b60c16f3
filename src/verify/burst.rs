//! The bursts `verify` imposes (`--only burst`), each to be found in a point's phases
//! ([`crate::results::phases`]): a token bucket with a large bucket on the network namespace
//! pair ([`net`]), a cap on a loop device switched on mid-run ([`disk`]), and a CPU quota
//! switched on mid-run ([`cpu`]).

mod cpu;
mod disk;
mod net;

use super::checks::Checks;

/// Runs the burst checks, the network's, the disk's, then the CPU's (each skipped with its
/// reason where the machine cannot impose it).
pub(super) fn checks(c: &mut Checks) -> anyhow::Result<()> {
    let groups: [fn(&mut Checks) -> anyhow::Result<()>; 3] =
        [net::checks, disk::checks, cpu::checks];
    for (i, group) in groups.into_iter().enumerate() {
        if i > 0 && crate::runner::stop::requested() {
            return Err(crate::error::Interrupted.into());
        }
        group(c)?;
    }
    Ok(())
}
