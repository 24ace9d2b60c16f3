//! CONNECT, netperf's TCP_CRR: each stream opens a TCP connection, sends one request, reads the
//! response, and closes, again and again; the rate of whole connections and the time of each
//! (its connect, and the whole of it) are what a web or RPC front end lives on.
//!
//! Every connection starts with the test's cookie and its stream's index (as a data stream's
//! does), then the request; the server answers with as many bytes and closes first, so that the
//! client's ports are not held in TIME_WAIT (the client reads to the end before it closes). The
//! server accepts only from the control connection's address, at most [`MAX_CONNECT_RATE`]
//! connections per second per test whatever the client does, each connection bounded in time,
//! and waits for many requests at once (a silent connection holds nothing).

use super::streams::{Pacer, Plan, STUCK, Turn, Window, halted};
use super::transport::tcp_hello;
use crate::wire::net_test::SideStats;
pub use crate::wire::net_test::limits::{MAX_CONNECT_MESSAGE, MAX_CONNECT_RATE};
use hdrhistogram::Histogram;
use std::collections::VecDeque;
use std::io::{self, Read, Write};
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::sync::Mutex;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

/// How long the server gives one connection to send its request and read the response.
const CONNECTION_WAIT: Duration = Duration::from_secs(1);

/// A shared pace for the server's acceptors: each answer is due a 1/rate after the one before
/// (or now, if that is later): idle time earns no credit, so no burst passes the rate.
pub struct RateCap {
    gap: Duration,
    next: Mutex<Instant>,
}

impl RateCap {
    pub fn new(per_s: u64) -> RateCap {
        RateCap {
            gap: Duration::from_secs_f64(1.0 / per_s.max(1) as f64),
            next: Mutex::new(Instant::now()),
        }
    }

    /// Waits for this connection's turn (never past `deadline`).
    fn take(&self, deadline: Instant) {
        let now = Instant::now();
        let slot = {
            let mut next = self.next.lock().unwrap_or_else(|e| e.into_inner());
            let slot = (*next).max(now);
            *next = slot + self.gap;
            slot
        };
        if slot > now {
            std::thread::sleep((slot - now).min(deadline.saturating_duration_since(now)));
        }
    }
}

/// Connections a test's acceptors keep waiting for their requests, all together (each its
/// share); one more drops the oldest (as sshd's MaxStartups), so that silent connections hold
/// neither an acceptor nor the server's descriptors.
const MAX_PENDING: usize = 512;
/// Connections an acceptor takes from the listener between two looks at its deadline.
const ACCEPTS_PER_PASS: usize = 64;

/// An accepted connection that has not sent all of its hello and request yet.
struct Waiting {
    s: TcpStream,
    hello: [u8; 12],
    got: usize,
    until: Instant,
}

/// The server's side, one of the test's acceptor threads: accepts connections from `peer` on
/// the shared non-blocking `listener` until `deadline` or `stop`, and waits for their requests
/// all at once (poll), each for at most [`CONNECTION_WAIT`]; each that shows `cookie` with its
/// request of `message` bytes gets as many bytes back, then the server closes it.
pub fn accept_loop(
    listener: &TcpListener,
    peer: IpAddr,
    message: usize,
    deadline: Instant,
    cookie: u64,
    stop: &AtomicBool,
    bounds: &Bounds,
) -> io::Result<SideStats> {
    let (cap, pending) = (&bounds.rate, bounds.pending);
    let response: Vec<u8> = (0..message).map(|i| (i * 131 + 7) as u8).collect();
    let mut scratch = vec![0u8; message.clamp(1, 64 * 1024)];
    // Kept across passes: no allocation per pass.
    let mut waiting: VecDeque<Waiting> = VecDeque::new();
    let mut kept: VecDeque<Waiting> = VecDeque::new();
    let mut fds: Vec<libc::pollfd> = Vec::new();
    let mut st = SideStats::default();
    let over = || halted(stop) || Instant::now() >= deadline;
    while !over() {
        accept_some(listener, peer, pending, &mut waiting)?;
        fds.clear();
        fds.extend(
            std::iter::once(listener.as_raw_fd())
                .chain(waiting.iter().map(|w| w.s.as_raw_fd()))
                .map(|fd| libc::pollfd {
                    fd,
                    events: libc::POLLIN,
                    revents: 0,
                }),
        );
        // SAFETY: `fds` is a valid array of pollfds for sockets that outlive the call.
        unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, 20) };
        let now = Instant::now();
        kept.clear();
        for (mut w, fd) in waiting.drain(..).zip(&fds[1..]) {
            if over() {
                break;
            }
            if fd.revents == 0 {
                if now < w.until {
                    kept.push_back(w);
                }
                continue;
            }
            match read_request(&mut w, message, &mut scratch) {
                Ok(false) if now < w.until => kept.push_back(w),
                Ok(true) if w.hello[..8] == cookie.to_be_bytes() => {
                    cap.take(deadline);
                    if respond(&w.s, &response).is_ok() {
                        st.messages_received += 1;
                        st.messages_sent += 1;
                        st.bytes_received += message as u64;
                        st.bytes_sent += message as u64;
                    }
                }
                // A stranger's, a late one, or one that failed: closed.
                _ => {}
            }
        }
        std::mem::swap(&mut waiting, &mut kept);
    }
    Ok(st)
}

/// Takes the connections waiting on the listener (from `peer` only; at most
/// [`ACCEPTS_PER_PASS`]), keeping at most `pending` waiting.
fn accept_some(
    listener: &TcpListener,
    peer: IpAddr,
    pending: usize,
    waiting: &mut VecDeque<Waiting>,
) -> io::Result<()> {
    for _ in 0..ACCEPTS_PER_PASS {
        match listener.accept() {
            Ok((s, from)) if from.ip() == peer => {
                s.set_nonblocking(true)?;
                if waiting.len() >= pending.max(1) {
                    waiting.pop_front();
                }
                waiting.push_back(Waiting {
                    s,
                    hello: [0; 12],
                    got: 0,
                    until: Instant::now() + CONNECTION_WAIT,
                });
            }
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
            Err(e) if e.kind() == io::ErrorKind::ConnectionAborted => {}
            // Out of descriptors or memory for a moment: the next round may do better.
            Err(e)
                if e.raw_os_error().is_some_and(|c| {
                    [libc::EMFILE, libc::ENFILE, libc::ENOBUFS, libc::ENOMEM].contains(&c)
                }) =>
            {
                std::thread::sleep(Duration::from_millis(10));
                return Ok(());
            }
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// What a test's acceptors share: the rate of answers, and each one's share of the waiting
/// connections.
pub struct Bounds {
    pub rate: RateCap,
    pub pending: usize,
}

impl Bounds {
    /// The bounds of a test with `acceptors` acceptors.
    pub fn of(acceptors: u32) -> Bounds {
        Bounds {
            rate: RateCap::new(MAX_CONNECT_RATE),
            pending: (MAX_PENDING / acceptors.max(1) as usize).max(4),
        }
    }
}

/// Reads what a waiting connection has sent (its hello into `hello`, its request into
/// `scratch`); whether it has all of it.
fn read_request(w: &mut Waiting, message: usize, scratch: &mut [u8]) -> io::Result<bool> {
    let whole = 12 + message;
    while w.got < whole {
        let n = if w.got < 12 {
            (&w.s).read(&mut w.hello[w.got..])
        } else {
            let left = (whole - w.got).min(scratch.len());
            (&w.s).read(&mut scratch[..left])
        };
        match n {
            Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
            Ok(n) => w.got += n,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
            Err(e) => return Err(e),
        }
    }
    Ok(true)
}

/// Sends the response in one write that does not wait: the socket's buffer is made large
/// enough for it, and a connection whose buffer still cannot take it all is dropped (a client
/// that does not read holds nothing; the kernel sends what it took after the close).
fn respond(s: &TcpStream, response: &[u8]) -> io::Result<()> {
    s.set_nodelay(true)?;
    if response.len() > 8 * 1024 {
        socket2::SockRef::from(s).set_send_buffer_size(4 * response.len())?;
    }
    let mut w = s;
    match w.write(response)? {
        n if n == response.len() => Ok(()),
        _ => Err(io::ErrorKind::WouldBlock.into()),
    }
}

/// What a connecting stream measured: its figures, and the time of each connect and of each
/// whole connection (ns).
pub struct Connections {
    pub stats: SideStats,
    pub connect: Histogram<u64>,
    pub whole: Histogram<u64>,
}

/// The client's side, one stream: connections to `to`, one after the other (paced by the
/// plan's `mps`, at most its `amount`), until the window ends or `stop`. Those started inside
/// the window are counted; a connection refused, reset or timed out is counted lost.
pub fn connect_loop(
    to: SocketAddr,
    message: usize,
    index: u32,
    w: Window,
    plan: Plan,
    cookie: u64,
    stop: &AtomicBool,
) -> io::Result<Connections> {
    let (from, end) = (w.measure_from(), w.end());
    let mut request = tcp_hello(cookie, index).to_vec();
    request.extend((0..message).map(|i| (i * 131 + 7) as u8));
    let mut reply = vec![0u8; message.max(1)];
    let mut out = Connections {
        stats: SideStats::default(),
        connect: crate::measure::latency::histogram(),
        whole: crate::measure::latency::histogram(),
    };
    let st = &mut out.stats;
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
        let measured = t >= from;
        let done = one_connection(to, &request, &mut reply[..message], end + STUCK);
        let now = Instant::now();
        if measured {
            st.messages_sent += 1;
            match done {
                Ok(connected) => {
                    let _ = out.connect.record((connected - t).as_nanos().max(1) as u64);
                    let _ = out.whole.record((now - t).as_nanos().max(1) as u64);
                    st.messages_received += 1;
                    st.bytes_sent += message as u64;
                    st.bytes_received += message as u64;
                }
                Err(_) => st.lost += 1,
            }
        }
        t = now;
    }
    st.window_ns = t.saturating_duration_since(from).as_nanos() as u64;
    Ok(out)
}

/// Connects, sends the request, reads the response and then the server's close, all by
/// `until`; the time the connection was made. Anything after the response is an error.
fn one_connection(
    to: SocketAddr,
    request: &[u8],
    reply: &mut [u8],
    until: Instant,
) -> io::Result<Instant> {
    let left = || {
        until
            .checked_duration_since(Instant::now())
            .filter(|d| !d.is_zero())
            .ok_or(io::ErrorKind::TimedOut)
    };
    let s = TcpStream::connect_timeout(&to, left()?.min(STUCK))?;
    let connected = Instant::now();
    s.set_nodelay(true)?;
    s.set_write_timeout(Some(left()?.min(STUCK)))?;
    let mut s = s;
    s.write_all(request)?;
    let mut got = 0;
    while got < reply.len() {
        s.set_read_timeout(Some(left()?))?;
        match s.read(&mut reply[got..])? {
            0 => return Err(io::ErrorKind::UnexpectedEof.into()),
            n => got += n,
        }
    }
    // The server closes first: wait for its FIN, so that TIME_WAIT is the server's.
    s.set_read_timeout(Some(left()?))?;
    let mut rest = [0u8; 1];
    match s.read(&mut rest)? {
        0 => Ok(connected),
        _ => Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "the server sent more than the response",
        )),
    }
}
