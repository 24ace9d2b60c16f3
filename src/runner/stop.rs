//! Ctrl-C and SIGTERM. One handler, installed when the program starts, for every command.
//!
//! While something is being measured ([`graceful`] was called: a run's recorder, `net serve`,
//! a cluster rank) the handler only raises a flag: the recorder stops after the current point
//! and keeps and stores what was measured, the disk benchmark's I/O loops and file layout stop
//! and remove their temporary file, `net serve` stops accepting and stops the reference tools'
//! servers it started; the command exits with 130.
//! Otherwise (nothing to keep), or at a second signal, the process exits at once with 130.

use std::sync::atomic::{AtomicBool, Ordering};

static STOP: AtomicBool = AtomicBool::new(false);
static GRACEFUL: AtomicBool = AtomicBool::new(false);

/// The exit status of a process stopped by SIGINT or SIGTERM.
pub const EXIT_INTERRUPTED: i32 = 130;

extern "C" fn on_signal(_: libc::c_int) {
    // Async-signal-safe: atomic loads and stores, and _exit.
    if GRACEFUL.load(Ordering::SeqCst) && !STOP.swap(true, Ordering::SeqCst) {
        return;
    }
    // SAFETY: _exit is async-signal-safe; it ends the process without running destructors,
    // which is what a second Ctrl-C (or one with nothing to keep) asks for.
    unsafe { libc::_exit(EXIT_INTERRUPTED) }
}

/// From now on a signal stops what is measured after the current point, instead of ending the
/// process at once.
pub fn graceful() {
    GRACEFUL.store(true, Ordering::SeqCst);
}

/// Installs the handler for SIGINT and SIGTERM (idempotent); the binary calls it first thing.
pub fn install() {
    for sig in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: a zeroed sigaction with a plain handler, an empty mask and no flags is valid;
        // the handler only stores to an atomic, which is async-signal-safe.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_signal as *const () as libc::sighandler_t;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(sig, &action, std::ptr::null_mut());
        }
    }
}

/// True once SIGINT or SIGTERM arrived.
pub fn requested() -> bool {
    STOP.load(Ordering::Relaxed)
}

/// The flag itself, for loops that take an `&AtomicBool`.
pub fn flag() -> &'static AtomicBool {
    &STOP
}
