//! Ctrl-C and SIGTERM: the handler only raises a flag; the disk benchmark's I/O loops and file
//! layout check it, stop and unwind (the temporary file is removed, the points already
//! measured are written), and `net serve` stops accepting and exits.

use std::sync::atomic::{AtomicBool, Ordering};

static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    // Async-signal-safe: one atomic store.
    STOP.store(true, Ordering::SeqCst);
}

/// Installs the handler for SIGINT and SIGTERM (idempotent).
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
