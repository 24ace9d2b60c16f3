//! Ctrl-C, SIGTERM and SIGHUP. One handler, installed when the program starts, for every
//! command.
//!
//! While something is being measured ([`graceful`] was called: a run's recorder, `net serve`,
//! a cluster rank) the handler only raises a flag: the recorder stops after the current point
//! and keeps and stores what was measured, the disk benchmark's I/O loops and file layout stop
//! and remove their temporary file, `net serve` stops accepting and stops the reference tools'
//! servers it started; the command exits with 130.
//! Otherwise (nothing to keep), or at a second SIGINT or SIGTERM, the process exits at once
//! with 130.
//!
//! SIGHUP (the terminal hung up: an SSH connection dropped) stops a run as Ctrl-C does, and
//! is never taken for a second, insistent signal: a shell and a `sudo` between it and
//! peakbench may each pass it on, and nobody is left to insist. Where standard output or
//! error is the terminal that hung up, it is pointed at /dev/null first, so that what the run
//! prints on its way out cannot fail; its files and the results database are written as
//! after Ctrl-C.
//!
//! Where the point under way is worth nothing unfinished ([`abandon_points`]: `verify`, whose
//! checks judge whole points), a signal cuts it short too: the loops that poll [`cut_short`]
//! end within milliseconds and the recorder drops the point.

use std::sync::atomic::{AtomicBool, Ordering};

static STOP: AtomicBool = AtomicBool::new(false);
static GRACEFUL: AtomicBool = AtomicBool::new(false);
static ABANDON: AtomicBool = AtomicBool::new(false);

/// The exit status of a process stopped by SIGINT, SIGTERM or SIGHUP.
pub const EXIT_INTERRUPTED: i32 = 130;

extern "C" fn on_signal(sig: libc::c_int) {
    // Async-signal-safe: atomic loads and stores, tcgetattr, open, dup2, close and _exit.
    if sig == libc::SIGHUP {
        silence_hung_up_terminal();
        if GRACEFUL.load(Ordering::SeqCst) {
            STOP.store(true, Ordering::SeqCst);
            return;
        }
    } else if GRACEFUL.load(Ordering::SeqCst) && !STOP.swap(true, Ordering::SeqCst) {
        return;
    }
    // SAFETY: _exit is async-signal-safe; it ends the process without running destructors,
    // which is what a second Ctrl-C (or one with nothing to keep) asks for.
    unsafe { libc::_exit(EXIT_INTERRUPTED) }
}

/// Points standard output and standard error at /dev/null where they are a terminal that has
/// hung up: the kernel fails every write and ioctl on it with EIO from then on, and a failed
/// write to standard error would end the program in a panic instead of its cleanup.
/// Async-signal-safe; errno is as it was.
fn silence_hung_up_terminal() {
    // SAFETY: errno is the calling thread's; its location is valid for the thread's life.
    let errno = unsafe { *libc::__errno_location() };
    let mut null = -1;
    for fd in [libc::STDOUT_FILENO, libc::STDERR_FILENO] {
        // SAFETY: termios is plain data; tcgetattr only writes into it, and only reads fd.
        let hung_up = unsafe {
            let mut t: libc::termios = std::mem::zeroed();
            libc::tcgetattr(fd, &mut t) != 0 && *libc::__errno_location() == libc::EIO
        };
        if !hung_up {
            continue;
        }
        if null < 0 {
            // SAFETY: open on a NUL-terminated path; the descriptor is closed below.
            null = unsafe { libc::open(c"/dev/null".as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC) };
        }
        if null >= 0 {
            // SAFETY: dup2 between two descriptors of this process; fd stays open.
            unsafe { libc::dup2(null, fd) };
        }
    }
    if null >= 0 {
        // SAFETY: null was opened above and nothing else holds it.
        unsafe { libc::close(null) };
    }
    // SAFETY: as above.
    unsafe { *libc::__errno_location() = errno };
}

/// From now on a signal stops what is measured after the current point, instead of ending the
/// process at once.
pub fn graceful() {
    GRACEFUL.store(true, Ordering::SeqCst);
}

/// From now on a signal also cuts the point under way short (see [`cut_short`]): for a command
/// whose points are worth nothing unfinished.
pub fn abandon_points() {
    ABANDON.store(true, Ordering::SeqCst);
}

/// Installs the handler for SIGINT, SIGTERM and SIGHUP (idempotent); the binary calls it first
/// thing.
pub fn install() {
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        // SAFETY: a zeroed sigaction with a plain handler, an empty mask and no flags is valid;
        // the handler is async-signal-safe (see on_signal).
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_signal as *const () as libc::sighandler_t;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(sig, &action, std::ptr::null_mut());
        }
    }
}

/// True once SIGINT, SIGTERM or SIGHUP arrived.
pub fn requested() -> bool {
    STOP.load(Ordering::Relaxed)
}

/// True once a signal arrived where points are abandoned ([`abandon_points`]): a loop that
/// measures a point polls it and ends, and the recorder drops the point.
pub fn cut_short() -> bool {
    STOP.load(Ordering::Relaxed) && ABANDON.load(Ordering::Relaxed)
}

/// The flag itself, for loops that take an `&AtomicBool`.
pub fn flag() -> &'static AtomicBool {
    &STOP
}
