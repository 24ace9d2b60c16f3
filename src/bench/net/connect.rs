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

use super::params::SideStats;
pub use super::params::limits::{MAX_CONNECT_MESSAGE, MAX_CONNECT_RATE};
use super::streams::{Plan, STUCK, Window};
use super::transport::tcp_hello;
use hdrhistogram::Histogram;
use std::collections::VecDeque;
use std::io::{self, Read, Write};
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// How long the server gives one connection to send its request and read the response.
const CONNECTION_WAIT: Duration = Duration::from_secs(1);

/// A shared pace for the server's acceptors: the n-th connection of a test is due at the
/// test's start + n / rate.
pub struct RateCap {
    start: Instant,
    per_s: u64,
    taken: AtomicU64,
}

impl RateCap {
    pub fn new(per_s: u64) -> RateCap {
        RateCap {
            start: Instant::now(),
            per_s: per_s.max(1),
            taken: AtomicU64::new(0),
        }
    }

    /// Waits for this connection's turn (never past `deadline`).
    fn take(&self, deadline: Instant) {
        let n = self.taken.fetch_add(1, Ordering::Relaxed);
        let due = self.start + Duration::from_secs_f64(n as f64 / self.per_s as f64);
        let now = Instant::now();
        if due > now {
            std::thread::sleep((due - now).min(deadline.saturating_duration_since(now)));
        }
    }
}

/// Connections an acceptor keeps waiting for their request at once; one more drops the
/// oldest (as sshd's MaxStartups), so that silent connections cannot hold it.
const MAX_PENDING: usize = 256;

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
    cap: &RateCap,
) -> io::Result<SideStats> {
    let response: Vec<u8> = (0..message).map(|i| (i * 131 + 7) as u8).collect();
    let mut scratch = vec![0u8; message.clamp(1, 64 * 1024)];
    let mut waiting: VecDeque<Waiting> = VecDeque::new();
    let mut st = SideStats::default();
    while !stop.load(Ordering::Relaxed) && Instant::now() < deadline {
        accept_all(listener, peer, &mut waiting)?;
        let mut fds: Vec<libc::pollfd> = std::iter::once(listener.as_raw_fd())
            .chain(waiting.iter().map(|w| w.s.as_raw_fd()))
            .map(|fd| libc::pollfd {
                fd,
                events: libc::POLLIN,
                revents: 0,
            })
            .collect();
        // SAFETY: `fds` is a valid array of pollfds for sockets that outlive the call.
        unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, 20) };
        let now = Instant::now();
        let mut kept = VecDeque::with_capacity(waiting.len());
        for (mut w, fd) in waiting.into_iter().zip(&fds[1..]) {
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
        waiting = kept;
    }
    Ok(st)
}

/// Takes every connection waiting on the listener (from `peer` only).
fn accept_all(
    listener: &TcpListener,
    peer: IpAddr,
    waiting: &mut VecDeque<Waiting>,
) -> io::Result<()> {
    loop {
        match listener.accept() {
            Ok((s, from)) if from.ip() == peer => {
                s.set_nonblocking(true)?;
                if waiting.len() >= MAX_PENDING {
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

/// Sends the response, blocking for at most a tenth of [`CONNECTION_WAIT`] (a client that
/// does not read its response holds the acceptor no longer).
fn respond(s: &TcpStream, response: &[u8]) -> io::Result<()> {
    s.set_nonblocking(false)?;
    s.set_nodelay(true)?;
    s.set_write_timeout(Some(CONNECTION_WAIT / 10))?;
    let mut w = s;
    w.write_all(response)
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
    let gap = (plan.mps > 0).then(|| Duration::from_secs_f64(1.0 / plan.mps as f64));
    let mut due = w.start;
    let mut t = Instant::now();
    while t < end && !stop.load(Ordering::Relaxed) {
        if plan.amount > 0 && st.messages_sent >= plan.amount {
            break;
        }
        if let Some(gap) = gap {
            if due > t {
                std::thread::sleep((due - t).min(end - t));
                t = Instant::now();
                continue;
            }
            due = (due + gap).max(t);
        }
        let measured = t >= from;
        let done = one_connection(to, &request, &mut reply[..message]);
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

/// Connects, sends the request, reads the response and then to the server's close; the time
/// the connection was made.
fn one_connection(to: SocketAddr, request: &[u8], reply: &mut [u8]) -> io::Result<Instant> {
    let s = TcpStream::connect_timeout(&to, STUCK)?;
    let connected = Instant::now();
    s.set_nodelay(true)?;
    s.set_read_timeout(Some(STUCK))?;
    s.set_write_timeout(Some(STUCK))?;
    let mut s = s;
    s.write_all(request)?;
    s.read_exact(reply)?;
    // The server closes first: wait for its FIN, so that TIME_WAIT is the server's.
    let mut rest = [0u8; 64];
    while s.read(&mut rest)? > 0 {}
    Ok(connected)
}
