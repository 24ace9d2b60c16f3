//! A delay line between two network namespaces for kernels without `sch_netem`: a TUN device
//! in each, and a thread per direction that reads each IP packet from one device and writes it
//! to the other `delay` later. Every packet between the two addresses takes it, whatever its
//! protocol or port, so a round trip through it takes the path's own time plus twice the delay.

use std::collections::VecDeque;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Packets held at once per direction; a packet beyond is dropped (a queue's limit).
const MAX_QUEUED: usize = 8192;
/// The largest packet a TUN device gives at the default MTU, with room to spare.
const MAX_PACKET: usize = 65_536;
/// How long before a packet is due its thread stops sleeping and spins.
const SPIN: Duration = Duration::from_micros(300);
/// The longest a thread waits before looking at its stop flag.
const TICK: Duration = Duration::from_millis(20);

/// Creates the TUN device `name` (no packet information, IPv4 and IPv6 as they are) in the
/// calling thread's network namespace; the descriptor reads and writes its packets and does
/// not block.
pub fn open_tun(name: &str) -> std::io::Result<OwnedFd> {
    if name.is_empty() || name.len() >= libc::IFNAMSIZ {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("interface name {name} is too long"),
        ));
    }
    let path = c"/dev/net/tun";
    // SAFETY: open on a NUL-terminated path; the descriptor returned is owned below.
    let fd = unsafe {
        libc::open(
            path.as_ptr(),
            libc::O_RDWR | libc::O_NONBLOCK | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: fd was just opened and is owned by nothing else.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    // SAFETY: ifreq is plain data; zeroed is a valid request with an empty name.
    let mut req: libc::ifreq = unsafe { std::mem::zeroed() };
    for (dst, src) in req.ifr_name.iter_mut().zip(name.bytes()) {
        *dst = src as libc::c_char;
    }
    req.ifr_ifru.ifru_flags = (libc::IFF_TUN | libc::IFF_NO_PI | libc::IFF_TUN_EXCL) as i16;
    // SAFETY: TUNSETIFF reads and writes an ifreq, which `req` is, for the descriptor's life.
    let rc = unsafe { libc::ioctl(fd.as_raw_fd(), libc::TUNSETIFF as _, &mut req) };
    if rc < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(fd)
}

/// The two directions' threads; dropped, they stop and close the devices.
pub struct DelayLine {
    delay_ns: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
    /// Packets dropped because a direction held [`MAX_QUEUED`] already.
    dropped: Arc<AtomicU64>,
}

impl DelayLine {
    /// Carries packets between devices `a` and `b` (each from [`open_tun`]), holding each
    /// for the delay ([`DelayLine::set_delay`]; none at first).
    pub fn start(a: OwnedFd, b: OwnedFd) -> std::io::Result<DelayLine> {
        let a = Arc::new(a);
        let b = Arc::new(b);
        let mut line = DelayLine {
            delay_ns: Arc::new(AtomicU64::new(0)),
            stop: Arc::new(AtomicBool::new(false)),
            threads: Vec::new(),
            dropped: Arc::new(AtomicU64::new(0)),
        };
        for (from, to) in [(a.clone(), b.clone()), (b, a)] {
            let (delay, stop, dropped) = (
                line.delay_ns.clone(),
                line.stop.clone(),
                line.dropped.clone(),
            );
            line.threads.push(
                std::thread::Builder::new()
                    .name("delay-line".into())
                    .spawn(move || carry(&from, &to, &delay, &stop, &dropped))?,
            );
        }
        Ok(line)
    }

    /// Holds every packet `delay` from now on.
    pub fn set_delay(&self, delay: Duration) {
        self.delay_ns.store(
            delay.as_nanos().min(u64::MAX as u128) as u64,
            Ordering::SeqCst,
        );
    }

    /// Packets dropped so far because a direction's queue was full.
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }
}

impl Drop for DelayLine {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

/// Waits until `fd` is readable or `timeout` has passed, to the microsecond (ppoll).
fn wait_readable(fd: &OwnedFd, timeout: Duration) {
    let mut pfd = libc::pollfd {
        fd: fd.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    let ts = libc::timespec {
        tv_sec: timeout.as_secs() as libc::time_t,
        tv_nsec: timeout.subsec_nanos() as libc::c_long,
    };
    // SAFETY: one valid pollfd, a valid timespec and no signal mask; both outlive the call.
    unsafe { libc::ppoll(&mut pfd, 1, &ts, std::ptr::null()) };
}

/// One direction: reads every packet `from` gives, writes each to `to` once it has waited
/// the delay, until `stop`.
fn carry(from: &OwnedFd, to: &OwnedFd, delay: &AtomicU64, stop: &AtomicBool, dropped: &AtomicU64) {
    // Wake at the due time, not up to the default 50 µs of timer slack after it.
    // SAFETY: PR_SET_TIMERSLACK takes a number and changes only this thread's slack.
    unsafe {
        libc::prctl(
            libc::PR_SET_TIMERSLACK,
            1 as libc::c_ulong,
            0 as libc::c_ulong,
            0 as libc::c_ulong,
            0 as libc::c_ulong,
        )
    };
    let mut queue: VecDeque<(Instant, Vec<u8>)> = VecDeque::new();
    let mut spare: Vec<Vec<u8>> = Vec::new();
    let mut scratch = vec![0u8; MAX_PACKET];
    while !stop.load(Ordering::Relaxed) {
        let now = Instant::now();
        // Sleep until shortly before the next packet is due, then spin to its time: a timer's
        // wake-up in a VM comes tens of microseconds late, each way.
        let wait = queue.front().map_or(TICK, |(due, _)| {
            due.saturating_duration_since(now)
                .saturating_sub(SPIN)
                .min(TICK)
        });
        if !wait.is_zero() {
            wait_readable(from, wait);
        }
        let held = Duration::from_nanos(delay.load(Ordering::Relaxed));
        loop {
            // SAFETY: scratch has MAX_PACKET writable bytes; the descriptor does not block.
            let n =
                unsafe { libc::read(from.as_raw_fd(), scratch.as_mut_ptr().cast(), scratch.len()) };
            if n <= 0 {
                break;
            }
            if queue.len() >= MAX_QUEUED {
                dropped.fetch_add(1, Ordering::Relaxed);
                continue;
            }
            let mut packet = spare.pop().unwrap_or_default();
            packet.clear();
            packet.extend_from_slice(&scratch[..n as usize]);
            queue.push_back((Instant::now() + held, packet));
        }
        let now = Instant::now();
        while queue.front().is_some_and(|(due, _)| *due <= now) {
            let Some((_, buf)) = queue.pop_front() else {
                break;
            };
            // SAFETY: buf holds buf.len() initialised bytes; a failed write drops the packet,
            // as a link would.
            unsafe { libc::write(to.as_raw_fd(), buf.as_ptr().cast(), buf.len()) };
            spare.push(buf);
        }
        spare.truncate(64);
    }
}
