//! The open files rank 0 needs: a connection from every rank to its coordinator, besides its
//! own part (its connection, its network server and tests, its output files). A soft limit of
//! 1,024 — the usual default — stops a run of a thousand ranks at accept() ("Too many open
//! files"), where the ranks left out look as if they could not reach it. Rank 0 raises its soft
//! limit as far as the hard one allows before it listens, as servers do, and refuses a world
//! size that even the hard limit cannot hold, saying how to raise it.

/// Files rank 0 keeps open beyond one connection per rank.
pub const MARGIN: u64 = 64;

/// The files `world_size` ranks need at rank 0.
pub fn needed(world_size: u32) -> u64 {
    u64::from(world_size) + MARGIN
}

/// The process's limit of open files, (soft, hard).
fn limits() -> std::io::Result<(u64, u64)> {
    let mut l = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes one rlimit through a valid pointer to a local.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut l) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok((l.rlim_cur, l.rlim_max))
}

/// The soft limit to set to have `needed` files under limits (soft, hard): None where the
/// soft one is enough; Err(hard) where even the hard one is not.
pub fn raise_to(needed: u64, soft: u64, hard: u64) -> Result<Option<u64>, u64> {
    if soft >= needed {
        return Ok(None);
    }
    if hard < needed {
        return Err(hard);
    }
    Ok(Some(needed))
}

/// Makes room for `world_size` ranks' connections at rank 0: raises the soft limit of open
/// files where it is lower than they need; an error (what to do) where the hard limit is.
pub fn make_room(world_size: u32) -> Result<(), String> {
    let need = needed(world_size);
    let (soft, hard) = limits().map_err(|e| format!("cannot read the limit of open files: {e}"))?;
    match raise_to(need, soft, hard) {
        Ok(None) => Ok(()),
        Ok(Some(to)) => {
            let l = libc::rlimit {
                rlim_cur: to,
                rlim_max: hard,
            };
            // SAFETY: setrlimit reads one rlimit through a valid pointer to a local.
            if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &l) } != 0 {
                return Err(format!(
                    "{world_size} ranks need {need} open files at rank 0 and its limit is {soft}: cannot raise it ({}); raise it with ulimit -n {need}",
                    std::io::Error::last_os_error()
                ));
            }
            Ok(())
        }
        Err(hard) => Err(format!(
            "{world_size} ranks need {need} open files at rank 0 (a connection from each) and its hard limit is {hard}: raise it (ulimit -Hn {need} as root, LimitNOFILE= for a service, nofile in /etc/security/limits.conf), or run fewer ranks"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_soft_limit_is_raised_within_the_hard_one() {
        assert_eq!(needed(4096), 4160);
        assert_eq!(raise_to(4160, 1024, 1_048_576), Ok(Some(4160)));
        assert_eq!(raise_to(100, 1024, 4096), Ok(None));
        assert_eq!(raise_to(4160, 1024, 4096), Err(4096));
    }

    /// Raising to what is already there changes nothing; a world beyond any hard limit is
    /// refused with what to do.
    #[test]
    fn room_is_made_or_refused() {
        let (soft, _) = limits().unwrap();
        make_room(1).unwrap();
        assert_eq!(limits().unwrap().0, soft.max(needed(1)));
        let e = make_room(u32::MAX).unwrap_err();
        assert!(e.contains("open files at rank 0"), "{e}");
    }
}
