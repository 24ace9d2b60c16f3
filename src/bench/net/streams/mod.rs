//! The data loops that run on every stream's thread: send, receive, ping and echo. Generic over
//! the transport (no dynamic dispatch in the hot loop, no allocation, no logging).
//!
//! Timing. Each side starts its window when the test starts (`Start` for the server, just
//! before sending it for the client); the first `omit` is a warm-up that is not counted, the
//! next `duration` is measured. A sender counts what it wrote inside its window; a TCP receiver
//! counts what it read inside its own window (one that was not running as it opened starts it at
//! its first read, without the backlog: [`recv_loop`]); a UDP receiver counts the datagrams that the
//! sender flagged as measured (so that loss is exact), or, for datagrams too short to carry the
//! header, what arrived inside its own window.
//!
//! UDP datagrams start with a 32-byte header (big-endian): sequence number (8), send time in ns
//! since the sender's start (8), flags (4; bit 0: sent inside the measured window), a magic (4)
//! and the test's cookie (8); a datagram without the cookie is not counted. A UDP ping carries
//! its sequence number and the cookie in its first 16 bytes. Jitter is RFC 3550's interarrival jitter: for consecutive measured datagrams i, j,
//! D = (Rj − Ri) − (Sj − Si) and J += (|D| − J) / 16; the clocks' offset cancels in D.

use super::sockopt::{ZEROCOPY_WAIT, ZeroCopy};
use super::transport::Channel;
use crate::measure::steady::Steady;
use crate::measure::timeline::MAX_INTERVALS;
use crate::wire::net_test::{SideStats, TestParams};
use hdrhistogram::Histogram;
use std::io;
use std::os::fd::RawFd;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Bytes of the UDP data header.
pub const HEADER_BYTES: usize = 32;
/// Bytes of a UDP ping's header: its sequence number and the cookie.
pub const PING_HEADER_BYTES: usize = 16;
/// The magic of a UDP data header ("PBN1").
pub const MAGIC: u32 = 0x5042_4e31;
/// The header flag of a datagram sent inside the measured window.
pub const MEASURED: u32 = 1;
/// How long a UDP receiver keeps listening after its window for datagrams still in flight.
pub const UDP_GRACE: Duration = Duration::from_millis(250);
/// How long a UDP ping waits for its pong before counting it lost.
pub const PING_TIMEOUT: Duration = Duration::from_millis(200);
/// How long a TCP receive may block before the loop checks for a stop or a vanished peer.
const POLL: Duration = Duration::from_millis(100);
/// A TCP peer silent this long after the window's end has vanished.
const DRAIN: Duration = Duration::from_secs(10);
/// A TCP receiver whose last look at its socket before its window opened is older than this may
/// hold a backlog from before the window (see [`recv_loop`]).
const LATE_LOOK: Duration = Duration::from_millis(1);
/// The longest a send may block before the loop looks at the clock and `stop` again.
const SEND_SLICE: Duration = Duration::from_millis(100);
/// How long after its window a ping-pong side goes on trying to send to a peer that does not
/// read, before it gives up.
pub const STUCK: Duration = Duration::from_secs(5);

/// Whether a stream's loop ends before its window does: `stop` (a stream of the test failed,
/// or its server stops), or a signal cut the point short ([`crate::runner::stop::cut_short`]:
/// verify's client and its server in the same process both end within a loop's turn).
pub fn halted(stop: &AtomicBool) -> bool {
    stop.load(Ordering::Relaxed) || crate::runner::stop::cut_short()
}

/// One side's time window.
#[derive(Debug, Clone, Copy)]
pub struct Window {
    pub start: Instant,
    pub omit: Duration,
    pub duration: Duration,
}

impl Window {
    pub fn measure_from(&self) -> Instant {
        self.start + self.omit
    }
    pub fn end(&self) -> Instant {
        self.start + self.omit + self.duration
    }
}

/// What a stream is asked beyond its window.
#[derive(Debug, Clone, Copy, Default)]
pub struct Plan {
    /// A UDP sender's pace, bit/s; 0: as fast as it can.
    pub rate_bps: u64,
    /// Fixed work after the warm-up: a TCP sender's payload bytes, a pinger's round trips; 0:
    /// the window decides (it bounds the work in any case).
    pub amount: u64,
    /// A TCP sender sends with MSG_ZEROCOPY.
    pub zerocopy: bool,
    /// A pinger's round trips per second; 0: back to back.
    pub mps: u32,
    /// `--sustain`: a TCP sender ends once its side's goodput is steady (its timeline's watch,
    /// [`Timeline::watched`]); a receiver's window ends with its last byte.
    pub sustain: bool,
}

impl Plan {
    pub fn of(p: &TestParams) -> Plan {
        Plan {
            rate_bps: p.rate_bps,
            amount: p.amount_per_stream,
            zerocopy: p.socket.zerocopy,
            mps: p.mps,
            sustain: p.sustain,
        }
    }
}

/// Paces a loop's rounds (a ping, a connection) by a plan: at its rate from the window's start
/// (round k is due a 1/rate after round k − 1, or at once when that one ended late: a late
/// round does not bunch the next ones up), and no more than its amount.
pub struct Pacer {
    gap: Option<Duration>,
    due: Instant,
    amount: u64,
}

/// What a paced loop does next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Turn {
    /// Start the round now.
    Go,
    /// It has slept towards the round's time: look again.
    Wait,
    /// The plan's amount is done.
    Done,
}

impl Pacer {
    /// The plan's `mps` rounds a second (0: back to back) from `start`, at most its `amount`
    /// (0: no bound).
    pub fn new(plan: Plan, start: Instant) -> Pacer {
        Pacer {
            gap: (plan.mps > 0).then(|| Duration::from_secs_f64(1.0 / plan.mps as f64)),
            due: start,
            amount: plan.amount,
        }
    }

    /// The turn at `t` of a loop that has done `done` measured rounds (sleeping never past
    /// `end`).
    pub fn turn(&mut self, t: Instant, end: Instant, done: u64) -> Turn {
        if self.amount > 0 && done >= self.amount {
            return Turn::Done;
        }
        let Some(gap) = self.gap else {
            return Turn::Go;
        };
        if self.due > t {
            let ahead = self.due - t;
            if ahead > Duration::from_micros(50) {
                std::thread::sleep((ahead - Duration::from_micros(20)).min(end - t));
            }
            return Turn::Wait;
        }
        self.due = (self.due + gap).max(t);
        Turn::Go
    }
}

/// Sends on `ch` with MSG_ZEROCOPY through `zc`, or plainly.
fn send_via<C: Channel>(ch: &mut C, zc: &mut Option<ZeroCopy>, buf: &[u8]) -> io::Result<usize> {
    match zc {
        Some(z) => z.send(ch.fd(), buf),
        None => ch.send(buf),
    }
}

/// Waits (until `until`) for a zero-copy sender's last completions and counts them into `st`.
fn settle(fd: std::os::fd::RawFd, zc: Option<ZeroCopy>, st: &mut SideStats, until: Instant) {
    if let Some(mut z) = zc {
        z.finish(fd, until);
        st.zerocopy_sends += z.completed;
        st.zerocopy_copied += z.copied;
    }
}

/// Payload bytes per interval of the measured window, a thread's own (merged after the test),
/// for the per-interval chart, as iperf3's per-second lines; under `--sustain`, a sending
/// thread's watch too ([`Timeline::watched`]).
#[derive(Debug, Clone, Default)]
pub struct Timeline {
    pub interval: Duration,
    pub bytes: Vec<u64>,
    watch: Option<Watch>,
}

/// A sending thread's part in its side's steady watch: each interval it has passed is
/// reported with the bytes its streams' peers acknowledged in it ([`super::transport::bytes_acked`]:
/// what reached the receivers; the bytes written count what the send buffers took, and a send
/// buffer that grows after a burst reads as a rate that moves), or with the bytes written where
/// TCP does not say.
#[derive(Debug, Clone)]
struct Watch {
    steady: Arc<Steady>,
    /// The intervals reported.
    published: usize,
    /// When the next interval begins; None before the first look in the window.
    next: Option<Instant>,
    /// The bytes acknowledged at the last look.
    acked: Option<u64>,
}

impl Timeline {
    /// A twentieth of the window's measured time, between 10 ms and 1 s (iperf3's default).
    pub fn for_window(w: &Window) -> Timeline {
        Timeline {
            interval: crate::measure::timeline::interval_of(w.duration),
            ..Timeline::default()
        }
    }

    /// Reports each interval to `steady` (shared by the side's sending threads) once it has
    /// passed ([`Self::look`]).
    pub fn watched(self, steady: Option<Arc<Steady>>) -> Timeline {
        Timeline {
            watch: steady.map(|steady| Watch {
                steady,
                published: 0,
                next: None,
                acked: None,
            }),
            ..self
        }
    }

    /// Whether the side's goodput is steady (never without a watch).
    pub fn steady(&self) -> bool {
        (self.watch.as_ref()).is_some_and(|w| w.steady.steady_at().is_some())
    }

    /// Whether a watched sender is due to look at its streams ([`Self::look`]): at its first
    /// write in the window and once an interval has passed (one comparison a write).
    fn due(&self, from: Instant, now: Instant) -> bool {
        (self.watch.as_ref()).is_some_and(|w| now >= w.next.unwrap_or(from))
    }

    /// Reports the intervals passed since the last look, with the bytes acknowledged on `fds`
    /// since then split evenly between them (the bytes written where TCP does not say).
    fn look(&mut self, from: Instant, now: Instant, fds: impl Iterator<Item = RawFd>) {
        let width = self.interval.as_nanos().max(1);
        let at = (now.saturating_duration_since(from).as_nanos() / width) as usize;
        let acked = fds
            .map(super::transport::bytes_acked)
            .try_fold(0u64, |sum, a| Some(sum.saturating_add(a?)));
        let Some(w) = &mut self.watch else { return };
        let edge = |k: usize| {
            from + self
                .interval
                .saturating_mul(u32::try_from(k).unwrap_or(u32::MAX))
        };
        if w.next.is_some() && at > w.published {
            let passed = (at - w.published) as u64;
            let per = match (acked, w.acked) {
                (Some(now), Some(before)) => Some(now.saturating_sub(before) / passed),
                _ => None,
            };
            for k in w.published..at.min(MAX_INTERVALS) {
                let written = self.bytes.get(k).copied().unwrap_or(0);
                w.steady.report(k, per.unwrap_or(written));
            }
            w.published = at;
        }
        w.acked = acked;
        w.next = Some(edge(at + 1));
    }

    /// Counts `n` bytes at `now` (from the start of the measured window `from`).
    fn add(&mut self, from: Instant, now: Instant, n: u64) {
        let at = (now.saturating_duration_since(from).as_nanos() / self.interval.as_nanos().max(1))
            as usize;
        if at < MAX_INTERVALS {
            if self.bytes.len() <= at {
                self.bytes.resize(at + 1, 0);
            }
            self.bytes[at] += n;
        }
    }

    /// Adds another thread's timeline of the same test.
    pub fn merge(&mut self, other: &Timeline) {
        if self.bytes.len() < other.bytes.len() {
            self.bytes.resize(other.bytes.len(), 0);
        }
        for (a, b) in self.bytes.iter_mut().zip(&other.bytes) {
            *a += b;
        }
        if self.interval.is_zero() {
            self.interval = other.interval;
        }
    }
}

fn is_timeout(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut | io::ErrorKind::Interrupted
    )
}

fn is_gone(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::ConnectionReset
            | io::ErrorKind::BrokenPipe
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionRefused
    )
}

/// Sends `buf` until the window ends (or `stop`, or the plan's amount is sent), paced to the
/// plan's rate when above 0. A send that blocks (a peer that does not read) is retried until
/// the window's end, never past it.
pub fn send_loop<C: Channel>(
    ch: &mut C,
    buf: &mut [u8],
    w: Window,
    plan: Plan,
    cookie: u64,
    stop: &AtomicBool,
    tl: &mut Timeline,
) -> io::Result<SideStats> {
    let (from, end) = (w.measure_from(), w.end());
    ch.set_send_timeout(Some(SEND_SLICE))?;
    let header = !C::CAPS.reliable && buf.len() >= HEADER_BYTES;
    if header {
        buf[20..24].copy_from_slice(&MAGIC.to_be_bytes());
        buf[24..32].copy_from_slice(&cookie.to_be_bytes());
    }
    // Pacing: datagram k is due at start + k × (bits per datagram / rate).
    let gap = (plan.rate_bps > 0)
        .then(|| Duration::from_secs_f64((buf.len() as f64 * 8.0 / plan.rate_bps as f64).min(1.0)));
    let mut zc = plan.zerocopy.then(ZeroCopy::default);
    let mut due = w.start;
    let mut st = SideStats::default();
    let mut seq = 0u64;
    let mut now = Instant::now();
    while now < end && !halted(stop) && !tl.steady() {
        if let Some(gap) = gap {
            if due > now {
                let ahead = due - now;
                if ahead > Duration::from_micros(50) {
                    std::thread::sleep(ahead.min(end - now));
                }
                now = Instant::now();
                continue;
            }
            due += gap;
        }
        let measured = now >= from;
        // A fixed amount: its last write is cut to what is left.
        let len = if plan.amount > 0 && measured {
            (plan.amount.saturating_sub(st.bytes_sent)).min(buf.len() as u64) as usize
        } else {
            buf.len()
        };
        if len == 0 {
            break;
        }
        if header {
            buf[0..8].copy_from_slice(&seq.to_be_bytes());
            let sent_ns = now.duration_since(w.start).as_nanos() as u64;
            buf[8..16].copy_from_slice(&sent_ns.to_be_bytes());
            let flags = if measured { MEASURED } else { 0 };
            buf[16..20].copy_from_slice(&flags.to_be_bytes());
        }
        match send_via(ch, &mut zc, &buf[..len]) {
            Ok(n) => {
                if measured {
                    st.bytes_sent += n as u64;
                    st.messages_sent += 1;
                    tl.add(from, now, n as u64);
                }
                seq += 1;
            }
            // A full socket buffer (ENOBUFS): the datagram was not sent; try again.
            Err(e) if !C::CAPS.reliable && e.raw_os_error() == Some(libc::ENOBUFS) => {}
            Err(e) if is_timeout(&e) => {}
            Err(e) => return Err(e),
        }
        now = Instant::now();
        // A stalled write (its send timeout) looks too: a stall's intervals are reported as
        // they pass, not spread over when the stream went on.
        if now >= from && tl.due(from, now) {
            tl.look(from, now, std::iter::once(ch.fd()));
        }
    }
    st.window_ns = now.saturating_duration_since(from).as_nanos() as u64;
    settle(ch.fd(), zc, &mut st, Instant::now() + ZEROCOPY_WAIT);
    ch.finish();
    Ok(st)
}

/// Sends `buf` on every stream of `chs` from this one thread until the window ends (or
/// `stop`, or every stream has sent the plan's amount): non-blocking writes in turn, and poll()
/// only when no stream could take data, as iperf3's single thread does. Used when there are
/// more streams than CPUs to run their threads: threads sharing a CPU would sleep on full send
/// buffers and be woken one by one, which on a VM cost a third of the throughput of two streams
/// on one CPU. Reliable transports only (no pacing, no datagram header). A partial write counts
/// its bytes and as one message.
pub fn send_many<C: Channel>(
    chs: &mut [C],
    buf: &[u8],
    w: Window,
    plan: Plan,
    stop: &AtomicBool,
    tl: &mut Timeline,
) -> io::Result<SideStats> {
    debug_assert!(C::CAPS.reliable);
    let (from, end) = (w.measure_from(), w.end());
    for ch in chs.iter_mut() {
        ch.set_nonblocking(true)?;
    }
    let mut pfds: Vec<libc::pollfd> = chs
        .iter()
        .map(|c| libc::pollfd {
            fd: c.fd(),
            events: libc::POLLOUT,
            revents: 0,
        })
        .collect();
    let mut zcs: Vec<Option<ZeroCopy>> = chs
        .iter()
        .map(|_| plan.zerocopy.then(ZeroCopy::default))
        .collect();
    // Each stream's measured bytes (for its amount).
    let mut sent = vec![0u64; chs.len()];
    let mut st = SideStats::default();
    let mut now = Instant::now();
    while now < end && !halted(stop) && !tl.steady() {
        let mut wrote = false;
        let mut open = false;
        for (i, ch) in chs.iter_mut().enumerate() {
            let measured = now >= from;
            let len = if plan.amount > 0 && measured {
                (plan.amount.saturating_sub(sent[i])).min(buf.len() as u64) as usize
            } else {
                buf.len()
            };
            if len == 0 {
                continue;
            }
            open = true;
            match send_via(ch, &mut zcs[i], &buf[..len]) {
                Ok(n) => {
                    wrote = true;
                    if measured {
                        sent[i] += n as u64;
                        st.bytes_sent += n as u64;
                        st.messages_sent += 1;
                        tl.add(from, now, n as u64);
                    }
                }
                Err(e) if is_timeout(&e) => {}
                Err(e) => return Err(e),
            }
        }
        if !open {
            break;
        }
        if now >= from && tl.due(from, now) {
            tl.look(from, now, chs.iter().map(|c| c.fd()));
        }
        if !wrote {
            // Completions waiting would make poll() return at once (POLLERR).
            for (ch, zc) in chs.iter().zip(zcs.iter_mut()) {
                if let Some(z) = zc {
                    z.drain(ch.fd());
                }
            }
            let wait = (end - now).min(POLL).as_millis().max(1) as libc::c_int;
            // SAFETY: `pfds` is a valid array of pollfds for sockets that outlive the call.
            unsafe { libc::poll(pfds.as_mut_ptr(), pfds.len() as libc::nfds_t, wait) };
        }
        now = Instant::now();
    }
    st.window_ns = now.saturating_duration_since(from).as_nanos() as u64;
    // One wait for all the streams' last completions.
    let until = Instant::now() + ZEROCOPY_WAIT;
    for (ch, zc) in chs.iter_mut().zip(zcs) {
        settle(ch.fd(), zc, &mut st, until);
        // Back to blocking: the shutdown's FIN must not be cut short.
        let _ = ch.set_nonblocking(false);
        ch.finish();
    }
    Ok(st)
}

/// Receives until the sender has finished: EOF on a reliable transport, the window's end plus
/// [`UDP_GRACE`] on a datagram one; or `stop`.
///
/// After finding its socket empty the receiver keeps polling it for `busy_poll` (yielding the
/// CPU in between) before it sleeps until data arrives. A receiver that sleeps whenever it has
/// caught up must be woken for the next data, and on a VM that wake-up (an IPI) is paid by the
/// sender's CPU: with two streams over loopback it cost 40 % of TCP goodput, as much for iperf3
/// as for peakbench. The window is the kernel's SO_BUSY_POLL idea in user space; 0 sleeps at
/// once, as iperf3 does.
#[allow(clippy::too_many_arguments)]
pub fn recv_loop<C: Channel>(
    ch: &mut C,
    buf: &mut [u8],
    w: Window,
    busy_poll: Duration,
    fixed: bool,
    cookie: u64,
    stop: &AtomicBool,
    tl: &mut Timeline,
) -> io::Result<SideStats> {
    let (from, end) = (w.measure_from(), w.end());
    let header = !C::CAPS.reliable && buf.len() >= HEADER_BYTES;
    let give_up = if C::CAPS.reliable {
        end + DRAIN
    } else {
        end + UDP_GRACE
    };
    let wait = if C::CAPS.reliable {
        POLL
    } else {
        Duration::from_millis(20)
    };
    let polling = !busy_poll.is_zero();
    if polling {
        ch.set_nonblocking(true)?;
    } else {
        ch.set_recv_timeout(Some(wait))?;
    }
    // Since when the socket has been found empty.
    let mut empty_since: Option<Instant> = None;
    let mut st = SideStats {
        window_ns: w.duration.as_nanos() as u64,
        ..Default::default()
    };
    let mut next_seq = 0u64;
    let mut last_transit: Option<i128> = None;
    // A fixed amount's window ends with its last byte.
    let mut last = from;
    // A TCP receiver that last looked at its socket well before the window opened (it was not
    // running: a bidirectional test on two busy CPUs read 103 Mbit/s through a 100 Mbit/s
    // token bucket) would count the backlog that arrived before the window as goodput: its
    // window starts at its first read inside instead, and what that read and what was still
    // queued behind it (`skip`) are not counted.
    let mut looked: Option<Instant> = None;
    let mut started: Option<Instant> = None;
    let mut skip = 0u64;
    let timed_tcp = C::CAPS.reliable && !fixed;
    loop {
        match ch.recv(buf) {
            Ok(0) if C::CAPS.reliable => break,
            Ok(n) => {
                empty_since = None;
                let now = Instant::now();
                // A peer that goes on sending (or feeding foreign datagrams) after the window
                // does not hold the stream: its deadline and `stop` hold whatever arrives.
                if halted(stop) || now >= give_up {
                    break;
                }
                if header {
                    if n < HEADER_BYTES
                        || buf[20..24] != MAGIC.to_be_bytes()
                        || buf[24..32] != cookie.to_be_bytes()
                    {
                        continue;
                    }
                    let word = |a: usize| u64::from_be_bytes(buf[a..a + 8].try_into().unwrap());
                    let flags = u32::from_be_bytes(buf[16..20].try_into().unwrap());
                    if flags & MEASURED == 0 {
                        continue;
                    }
                    let seq = word(0);
                    if seq < next_seq {
                        st.out_of_order += 1;
                    } else {
                        next_seq = seq + 1;
                    }
                    // Transit time up to the (constant) offset between the two clocks.
                    let transit = now.duration_since(w.start).as_nanos() as i128 - word(8) as i128;
                    if let Some(last) = last_transit {
                        let d = (transit - last).abs() as f64;
                        st.jitter_ns += (d - st.jitter_ns) / 16.0;
                    }
                    last_transit = Some(transit);
                    st.bytes_received += n as u64;
                    st.messages_received += 1;
                    tl.add(from, now, n as u64);
                } else if now < from {
                    looked = Some(now);
                } else if now < end || fixed {
                    let late = looked.is_some_and(|l| from - l > LATE_LOOK);
                    if timed_tcp && late && started.is_none() {
                        started = Some(now);
                        skip = super::transport::queued_bytes(ch.fd());
                        continue;
                    }
                    let counted = (n as u64).saturating_sub(skip);
                    skip = skip.saturating_sub(n as u64);
                    st.bytes_received += counted;
                    st.messages_received += 1;
                    tl.add(from, now, counted);
                    last = now;
                }
            }
            Err(e) if is_timeout(&e) => {
                let now = Instant::now();
                if halted(stop) || now >= give_up {
                    break;
                }
                if now < from {
                    looked = Some(now);
                }
                if polling {
                    let since = *empty_since.get_or_insert(now);
                    if now - since < busy_poll {
                        std::thread::yield_now();
                    } else {
                        crate::wire::frame::fd_readable(ch.fd(), wait);
                        empty_since = None;
                    }
                }
            }
            Err(e) if C::CAPS.reliable && is_gone(&e) => break,
            Err(e) => return Err(e),
        }
    }
    if polling {
        let _ = ch.set_nonblocking(false);
    }
    if fixed {
        st.window_ns = last.saturating_duration_since(from).as_nanos() as u64;
    } else if let Some(started) = started {
        st.window_ns = end.saturating_duration_since(started).as_nanos() as u64;
    }
    Ok(st)
}

/// Sends all of `buf`, however the transport splits it; a peer that stops reading is given up
/// at `deadline` or `stop` (the channel's send timeout bounds each wait).
fn send_all<C: Channel>(
    ch: &mut C,
    buf: &[u8],
    deadline: Instant,
    stop: &AtomicBool,
) -> io::Result<()> {
    let mut at = 0;
    while at < buf.len() {
        match ch.send(&buf[at..]) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => at += n,
            Err(e) if is_timeout(&e) => {
                if halted(stop) || Instant::now() >= deadline {
                    return Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        "the peer stopped reading",
                    ));
                }
            }
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Ping-pong client: one message out, the same size back, timed; round trips started inside
/// the window are recorded (ns) in `hist`. A UDP ping carries its sequence number and the
/// test's cookie in its first 16 bytes; a pong that does not match is stale or foreign and
/// skipped, one that does not come within [`PING_TIMEOUT`] is counted lost.
///
/// With the plan's `mps`, round trip k starts at the window's start + k / mps (or at once when
/// the previous one ended late), as sockperf's `under-load`; with its `amount`, the loop ends
/// after that many measured round trips.
#[allow(clippy::too_many_arguments)]
pub fn ping_loop<C: Channel>(
    ch: &mut C,
    buf: &mut [u8],
    reply: &mut [u8],
    w: Window,
    plan: Plan,
    hist: &mut Histogram<u64>,
    cookie: u64,
    stop: &AtomicBool,
) -> io::Result<SideStats> {
    let (from, end) = (w.measure_from(), w.end());
    let tagged = !C::CAPS.reliable && buf.len() >= PING_HEADER_BYTES;
    if tagged {
        buf[8..16].copy_from_slice(&cookie.to_be_bytes());
    }
    ch.set_recv_timeout(Some(if C::CAPS.reliable { POLL } else { PING_TIMEOUT }))?;
    ch.set_send_timeout(Some(SEND_SLICE))?;
    let mut st = SideStats::default();
    let mut seq = 0u64;
    let mut pacer = Pacer::new(plan, w.start);
    let mut t = Instant::now();
    while t < end && !halted(stop) {
        match pacer.turn(t, end, st.messages_sent) {
            Turn::Done => break,
            Turn::Wait => {
                t = Instant::now();
                continue;
            }
            Turn::Go => {}
        }
        if tagged {
            buf[..8].copy_from_slice(&seq.to_be_bytes());
        }
        send_all(ch, buf, end + STUCK, stop)?;
        let answered = if C::CAPS.keeps_boundaries {
            loop {
                match ch.recv(reply) {
                    Ok(n) if n == buf.len() && (!tagged || reply[..16] == buf[..16]) => break true,
                    // A stale or foreign pong: skipped, but not past the ping's own time.
                    Ok(_) if t.elapsed() >= PING_TIMEOUT => break false,
                    Ok(_) => {}
                    Err(e) if is_timeout(&e) => break false,
                    Err(e) => return Err(e),
                }
            }
        } else {
            let mut got = 0;
            let asked = Instant::now();
            while got < buf.len() {
                match ch.recv(&mut reply[got..buf.len()]) {
                    Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
                    Ok(n) => got += n,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    // A silent peer is given up after STUCK; looked at every POLL, a point cut
                    // short does not wait for the reply its echo, cut short too, never sends.
                    Err(e)
                        if is_timeout(&e)
                            && asked.elapsed() < STUCK
                            && !crate::runner::stop::cut_short() => {}
                    Err(e) => return Err(e),
                }
                // A peer that trickles its reply is given up as one that sends none.
                if Instant::now() >= end + STUCK {
                    return Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        "the peer trickles its replies",
                    ));
                }
            }
            true
        };
        let now = Instant::now();
        if t >= from {
            if answered {
                let _ = hist.record((now - t).as_nanos().max(1) as u64);
                st.messages_received += 1;
                st.bytes_received += buf.len() as u64;
            } else {
                st.lost += 1;
            }
            st.messages_sent += 1;
            st.bytes_sent += buf.len() as u64;
        }
        seq += 1;
        t = now;
    }
    st.window_ns = t.saturating_duration_since(from).as_nanos() as u64;
    ch.finish();
    Ok(st)
}

/// Ping-pong server: returns every message to its sender until EOF (TCP), `stop`, or
/// `deadline`. A UDP ping without the test's cookie is dropped, not echoed.
pub fn echo_loop<C: Channel>(
    ch: &mut C,
    buf: &mut [u8],
    deadline: Instant,
    cookie: u64,
    stop: &AtomicBool,
) -> io::Result<SideStats> {
    ch.set_recv_timeout(Some(Duration::from_millis(50)))?;
    ch.set_send_timeout(Some(SEND_SLICE))?;
    let mut st = SideStats::default();
    // A peer that pings on (or trickles a message) past the deadline is not echoed.
    let over = || halted(stop) || Instant::now() >= deadline;
    loop {
        if over() {
            return Ok(st);
        }
        let n = if C::CAPS.keeps_boundaries {
            match ch.recv(buf) {
                Ok(n) if n >= PING_HEADER_BYTES && buf[8..16] == cookie.to_be_bytes() => n,
                Ok(_) => 0,
                Err(e) if is_timeout(&e) => 0,
                Err(e) => return Err(e),
            }
        } else {
            // A whole message, then back: the peer waits for all of it.
            let mut got = 0;
            while got < buf.len() {
                match ch.recv(&mut buf[got..]) {
                    Ok(0) => return Ok(st),
                    Ok(n) => got += n,
                    Err(e) if is_timeout(&e) => {}
                    Err(e) if is_gone(&e) => return Ok(st),
                    Err(e) => return Err(e),
                }
                if over() {
                    return Ok(st);
                }
            }
            got
        };
        if n > 0 {
            send_all(ch, &buf[..n], deadline, stop)?;
            st.messages_received += 1;
            st.messages_sent += 1;
            st.bytes_received += n as u64;
            st.bytes_sent += n as u64;
        }
    }
}

#[cfg(test)]
mod tests;
