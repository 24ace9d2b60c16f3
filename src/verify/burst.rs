//! The bursts `verify` imposes (`--only burst`), each to be found in a point's phases
//! ([`crate::results::phases`]): a token bucket with a large bucket on the network namespace
//! pair ([`net`]) and a cap on a loop device switched on mid-run ([`disk`]).

mod disk;
mod net;

use super::checks::Checks;

/// Runs the burst checks, the network's then the disk's (each skipped with its reason where
/// the machine cannot impose it).
pub(super) fn checks(c: &mut Checks) -> anyhow::Result<()> {
    net::checks(c)?;
    if crate::runner::stop::requested() {
        return Err(crate::error::Interrupted.into());
    }
    disk::checks(c)
}
