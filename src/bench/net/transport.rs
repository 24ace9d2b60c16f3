//! The data transports, TCP and UDP, behind one small interface with capability flags (as
//! iperf3's protocol table): the stream loops ask the flags, never the protocol's name.
//!
//! Data sockets exist only during a test: the server opens them on ephemeral ports of the
//! address the control connection arrived on and announces the ports in `Ready` (as netperf
//! does); it attaches only peers from the control connection's address that show the test's
//! cookie: the first 8 bytes of a TCP data connection (then the stream's index, 4 bytes), or a
//! UDP hello (`UDP_HELLO` then the cookie). The server then `connect`s a UDP socket to the hello's source, and the stream loops
//! drop every datagram without the cookie, so that nothing else can join or feed the test.

use super::Proto;
use super::sockopt;
use crate::results::socket::SocketState;
use crate::wire::net_test::{TestKind, TestParams};
use socket2::SockRef;
use std::io::{self, Read, Write};
use std::net::{IpAddr, Shutdown, SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::os::fd::{AsRawFd, RawFd};
use std::time::{Duration, Instant};

/// What a transport guarantees; the stream loops decide by these.
#[derive(Debug, Clone, Copy)]
pub struct Caps {
    /// Delivery is reliable and ordered (end of data is seen as EOF); otherwise datagrams carry
    /// sequence numbers and the receiver stops at a deadline.
    pub reliable: bool,
    /// Each send is delivered as one unit of the same size (datagrams).
    pub keeps_boundaries: bool,
}

/// One attached data socket: a connected TCP stream or a connected UDP socket.
pub trait Channel: Send {
    const CAPS: Caps;
    fn send(&mut self, buf: &[u8]) -> io::Result<usize>;
    fn recv(&mut self, buf: &mut [u8]) -> io::Result<usize>;
    /// Bounds every following `recv` (None: wait forever).
    fn set_recv_timeout(&mut self, t: Option<Duration>) -> io::Result<()>;
    /// Bounds every following `send`: a send that could not go on for this long returns what
    /// it sent, or WouldBlock (so that a peer that stops reading cannot hold a loop forever).
    fn set_send_timeout(&mut self, t: Option<Duration>) -> io::Result<()>;
    /// Tells the peer that no more data follows (TCP: shutdown of the write side).
    fn finish(&mut self);
    /// Makes `send` and `recv` return WouldBlock instead of waiting.
    fn set_nonblocking(&mut self, on: bool) -> io::Result<()>;
    /// The socket, for poll().
    fn fd(&self) -> RawFd;
    /// Whether its peer is this machine's loopback (127.0.0.0/8, ::1, or one mapped in IPv6).
    fn peer_is_loopback(&self) -> bool;
}

/// The payload bytes the peer has acknowledged on TCP connection `fd` (TCP_INFO's
/// `tcpi_bytes_acked`, Linux 4.1 on): what reached the receiver, where the bytes written count
/// what the send buffer took. None where it cannot be read (not TCP, an older kernel).
pub fn bytes_acked(fd: RawFd) -> Option<u64> {
    // SAFETY: tcp_info is plain data; zeroed is a valid value to be overwritten.
    let mut info: libc::tcp_info = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::tcp_info>() as libc::socklen_t;
    // SAFETY: getsockopt writes at most `len` bytes into `info`, which is that large, and the
    // length written into `len`; on a descriptor that is no TCP socket it fails.
    let rc = unsafe {
        libc::getsockopt(
            fd,
            libc::IPPROTO_TCP,
            libc::TCP_INFO,
            (&mut info as *mut libc::tcp_info).cast(),
            &mut len,
        )
    };
    let end = std::mem::offset_of!(libc::tcp_info, tcpi_bytes_acked)
        + std::mem::size_of_val(&info.tcpi_bytes_acked);
    (rc == 0 && len as usize >= end).then_some(info.tcpi_bytes_acked)
}

/// The bytes waiting in a socket's receive queue (FIONREAD); 0 where it cannot tell.
pub fn queued_bytes(fd: RawFd) -> u64 {
    let mut n: libc::c_int = 0;
    // SAFETY: FIONREAD writes one int into `n`, which lives for the call; on a descriptor that
    // is no socket it fails and writes nothing.
    let rc = unsafe { libc::ioctl(fd, libc::FIONREAD, &mut n) };
    if rc == 0 {
        u64::try_from(n).unwrap_or(0)
    } else {
        0
    }
}

/// Whether `peer` is a loopback address (an IPv4 one mapped in IPv6 too).
fn is_loopback(peer: io::Result<std::net::SocketAddr>) -> bool {
    match peer.map(|a| a.ip()) {
        Ok(std::net::IpAddr::V4(ip)) => ip.is_loopback(),
        Ok(std::net::IpAddr::V6(ip)) => ip
            .to_ipv4_mapped()
            .map_or(ip.is_loopback(), |v4| v4.is_loopback()),
        Err(_) => false,
    }
}

impl Channel for TcpStream {
    const CAPS: Caps = Caps {
        reliable: true,
        keeps_boundaries: false,
    };
    fn send(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.write(buf)
    }
    fn recv(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.read(buf)
    }
    fn set_recv_timeout(&mut self, t: Option<Duration>) -> io::Result<()> {
        self.set_read_timeout(t)
    }
    fn set_send_timeout(&mut self, t: Option<Duration>) -> io::Result<()> {
        self.set_write_timeout(t)
    }
    fn finish(&mut self) {
        let _ = self.shutdown(Shutdown::Write);
    }
    fn set_nonblocking(&mut self, on: bool) -> io::Result<()> {
        TcpStream::set_nonblocking(self, on)
    }
    fn fd(&self) -> RawFd {
        self.as_raw_fd()
    }
    fn peer_is_loopback(&self) -> bool {
        is_loopback(self.peer_addr())
    }
}

impl Channel for UdpSocket {
    const CAPS: Caps = Caps {
        reliable: false,
        keeps_boundaries: true,
    };
    fn send(&mut self, buf: &[u8]) -> io::Result<usize> {
        UdpSocket::send(self, buf)
    }
    fn recv(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        UdpSocket::recv(self, buf)
    }
    fn set_recv_timeout(&mut self, t: Option<Duration>) -> io::Result<()> {
        self.set_read_timeout(t)
    }
    fn set_send_timeout(&mut self, t: Option<Duration>) -> io::Result<()> {
        self.set_write_timeout(t)
    }
    fn finish(&mut self) {}
    fn set_nonblocking(&mut self, on: bool) -> io::Result<()> {
        UdpSocket::set_nonblocking(self, on)
    }
    fn fd(&self) -> RawFd {
        self.as_raw_fd()
    }
    fn peer_is_loopback(&self) -> bool {
        is_loopback(self.peer_addr())
    }
}

/// The first datagram of every UDP stream, followed by the test's cookie (big-endian), sent by
/// the client until the server says `Go`.
pub const UDP_HELLO: &[u8] = b"peakbench-udp-hello";

/// The hello of a UDP stream of the test with `cookie`.
fn udp_hello(cookie: u64) -> Vec<u8> {
    let mut h = UDP_HELLO.to_vec();
    h.extend_from_slice(&cookie.to_be_bytes());
    h
}

/// The first bytes of the TCP data connection `index` of the test with `cookie`.
pub fn tcp_hello(cookie: u64, index: u32) -> [u8; 12] {
    let mut h = [0u8; 12];
    h[..8].copy_from_slice(&cookie.to_be_bytes());
    h[8..].copy_from_slice(&index.to_be_bytes());
    h
}

/// How long the server waits for a new TCP data connection's cookie.
const COOKIE_WAIT: Duration = Duration::from_millis(500);

/// The server's data sockets of one test, before the client has attached.
pub enum Pending {
    Tcp(TcpListener),
    Udp(Vec<UdpSocket>),
}

/// The attached data sockets of one test; for CONNECT, the server's listener (and the only
/// address it serves) and the client's destination.
pub enum Attached {
    Tcp(Vec<TcpStream>),
    Udp(Vec<UdpSocket>),
    Accept { listener: TcpListener, peer: IpAddr },
    Connect(SocketAddr),
}

impl Pending {
    /// Opens the data sockets of a test on `ip` (the control connection's local address),
    /// with the options the test asks (a TCP listener's connections inherit them).
    pub fn open(p: &TestParams, ip: IpAddr) -> io::Result<Pending> {
        let any = SocketAddr::new(ip, 0);
        Ok(match p.proto {
            Proto::Tcp => {
                let s = socket2::Socket::new(
                    socket2::Domain::for_address(any),
                    socket2::Type::STREAM,
                    None,
                )?;
                sockopt::before_connect(SockRef::from(&s), &p.socket, true)?;
                s.bind(&any.into())?;
                s.listen(128)?;
                Pending::Tcp(s.into())
            }
            Proto::Udp => Pending::Udp(
                (0..p.channels())
                    .map(|_| {
                        let s = UdpSocket::bind(any)?;
                        sockopt::before_connect(SockRef::from(&s), &p.socket, false)?;
                        Ok(s)
                    })
                    .collect::<io::Result<_>>()?,
            ),
        })
    }

    /// The ports to announce in `Ready`.
    pub fn ports(&self) -> io::Result<Vec<u16>> {
        Ok(match self {
            Pending::Tcp(l) => vec![l.local_addr()?.port()],
            Pending::Udp(s) => s
                .iter()
                .map(|s| s.local_addr().map(|a| a.port()))
                .collect::<io::Result<_>>()?,
        })
    }

    /// Waits until every stream of the test `p` has attached from `peer` with `cookie`, or
    /// `deadline`; strangers are turned away and do not count. Each TCP stream takes the place
    /// of its index, gets the test's options, and Nagle's algorithm off for a ping-pong unless
    /// asked otherwise.
    pub fn attach(
        self,
        peer: IpAddr,
        p: &TestParams,
        deadline: Instant,
        cookie: u64,
    ) -> io::Result<Attached> {
        let streams = p.channels() as usize;
        let left = || {
            deadline
                .checked_duration_since(Instant::now())
                .filter(|d| !d.is_zero())
                .ok_or_else(|| {
                    io::Error::new(
                        io::ErrorKind::TimedOut,
                        "the client did not open its data connections in time",
                    )
                })
        };
        match self {
            // CONNECT: its connections come and go during the test.
            Pending::Tcp(listener) if p.kind == TestKind::Connect => {
                listener.set_nonblocking(true)?;
                Ok(Attached::Accept { listener, peer })
            }
            Pending::Tcp(listener) => {
                listener.set_nonblocking(true)?;
                let mut slots: Vec<Option<TcpStream>> = (0..streams).map(|_| None).collect();
                let mut attached = 0;
                while attached < streams {
                    left()?;
                    match listener.accept() {
                        Ok((s, from)) if from.ip() == peer => {
                            s.set_nonblocking(false)?;
                            s.set_read_timeout(Some(left()?.min(COOKIE_WAIT)))?;
                            let mut got = [0u8; 12];
                            if (&s).read_exact(&mut got).is_err()
                                || got[..8] != cookie.to_be_bytes()
                            {
                                continue;
                            }
                            let i = u32::from_be_bytes([got[8], got[9], got[10], got[11]]) as usize;
                            // An index out of range or taken twice is not this test's stream.
                            let Some(slot @ None) = slots.get_mut(i) else {
                                continue;
                            };
                            s.set_read_timeout(None)?;
                            let nodelay = p.kind == TestKind::Latency;
                            sockopt::after_connect(SockRef::from(&s), &p.socket, nodelay)?;
                            *slot = Some(s);
                            attached += 1;
                        }
                        Ok(_) => {}
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                            std::thread::sleep(Duration::from_millis(2));
                        }
                        Err(e) => return Err(e),
                    }
                }
                Ok(Attached::Tcp(slots.into_iter().flatten().collect()))
            }
            Pending::Udp(sockets) => {
                let hello = udp_hello(cookie);
                let mut buf = [0u8; 64];
                for s in &sockets {
                    loop {
                        s.set_read_timeout(Some(left()?.min(Duration::from_millis(100))))?;
                        match s.recv_from(&mut buf) {
                            Ok((n, from)) if from.ip() == peer && buf[..n] == hello[..] => {
                                s.connect(from)?;
                                break;
                            }
                            Ok(_) => {}
                            Err(e)
                                if matches!(
                                    e.kind(),
                                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                                ) => {}
                            Err(e) => return Err(e),
                        }
                    }
                }
                Ok(Attached::Udp(sockets))
            }
        }
    }
}

/// The client's side: connects one data socket per stream of the test `p` to the announced
/// ports, with the test's options (a TCP connection starts with the test's `cookie` and its
/// index).
pub fn connect(p: &TestParams, server: IpAddr, ports: &[u16], cookie: u64) -> io::Result<Attached> {
    let streams = p.channels() as usize;
    let bad = || {
        io::Error::new(
            io::ErrorKind::InvalidData,
            "the server announced the wrong number of data ports",
        )
    };
    Ok(match p.proto {
        Proto::Tcp if p.kind == TestKind::Connect => {
            let [port] = ports else { return Err(bad()) };
            Attached::Connect(SocketAddr::new(server, *port))
        }
        Proto::Tcp => {
            let [port] = ports else { return Err(bad()) };
            let to = SocketAddr::new(server, *port);
            let nodelay = p.kind == TestKind::Latency;
            Attached::Tcp(
                (0..streams)
                    .map(|i| {
                        let s = socket2::Socket::new(
                            socket2::Domain::for_address(to),
                            socket2::Type::STREAM,
                            None,
                        )?;
                        sockopt::before_connect(SockRef::from(&s), &p.socket, true)?;
                        s.connect_timeout(&to.into(), Duration::from_secs(5))?;
                        let mut s: TcpStream = s.into();
                        sockopt::after_connect(SockRef::from(&s), &p.socket, nodelay)?;
                        s.set_write_timeout(Some(Duration::from_secs(5)))?;
                        s.write_all(&tcp_hello(cookie, i as u32))?;
                        Ok(s)
                    })
                    .collect::<io::Result<_>>()?,
            )
        }
        Proto::Udp => {
            if ports.len() != streams {
                return Err(bad());
            }
            let local = SocketAddr::new(
                if server.is_ipv4() {
                    IpAddr::from([0, 0, 0, 0])
                } else {
                    IpAddr::from([0u16; 8])
                },
                0,
            );
            Attached::Udp(
                ports
                    .iter()
                    .map(|port| {
                        let s = UdpSocket::bind(local)?;
                        sockopt::before_connect(SockRef::from(&s), &p.socket, false)?;
                        s.connect(SocketAddr::new(server, *port))?;
                        Ok(s)
                    })
                    .collect::<io::Result<_>>()?,
            )
        }
    })
}

/// The first data socket of a test, kept to read its options after the test (TCP grows its
/// buffers as it goes).
pub struct SocketProbe {
    fd: std::os::fd::OwnedFd,
    tcp: bool,
}

impl SocketProbe {
    /// The options as the kernel holds them now.
    pub fn read(&self) -> SocketState {
        sockopt::read_back(&self.fd, self.tcp)
    }

    /// [`SocketProbe::read`] with what TCP says of the connection ([`sockopt::tcp_info`]: a
    /// client's own socket, a server never sends it).
    pub fn read_with_rtt(&self) -> SocketState {
        let info = if self.tcp {
            sockopt::tcp_info(&self.fd)
        } else {
            sockopt::TcpInfo::default()
        };
        SocketState {
            rtt_us: info.rtt_us,
            peer_window_bytes: info.peer_window_bytes,
            window_limited: info.window_limited,
            send_buffer_limited: info.send_buffer_limited,
            ..self.read()
        }
    }
}

impl Attached {
    /// A probe of the first data socket's options (a duplicate of its descriptor).
    pub fn probe(&self) -> Option<SocketProbe> {
        let (fd, tcp) = match self {
            Attached::Tcp(v) => (
                std::os::fd::AsFd::as_fd(v.first()?).try_clone_to_owned(),
                true,
            ),
            Attached::Udp(v) => (
                std::os::fd::AsFd::as_fd(v.first()?).try_clone_to_owned(),
                false,
            ),
            Attached::Accept { .. } | Attached::Connect(_) => return None,
        };
        fd.ok().map(|fd| SocketProbe { fd, tcp })
    }

    /// Splits off the streams from `at` on (a `bidir` test's second half).
    pub fn split_off(&mut self, at: usize) -> Attached {
        match self {
            Attached::Tcp(v) => Attached::Tcp(v.split_off(at.min(v.len()))),
            Attached::Udp(v) => Attached::Udp(v.split_off(at.min(v.len()))),
            Attached::Accept { .. } | Attached::Connect(_) => Attached::Tcp(Vec::new()),
        }
    }

    /// Client, UDP: (re)sends the hello of the test with `cookie` on every stream so that the
    /// server can attach them.
    pub fn hello(&self, cookie: u64) {
        if let Attached::Udp(sockets) = self {
            let hello = udp_hello(cookie);
            for s in sockets {
                let _ = s.send(&hello);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Loopback in IPv4 (all of 127/8), IPv6 and IPv4 mapped in IPv6; nothing else, and no peer
    /// is no loopback.
    #[test]
    fn loopback_peers_are_told_apart() {
        let at = |a: &str| is_loopback(Ok(a.parse().unwrap()));
        assert!(at("127.0.0.1:5201") && at("127.3.2.1:1") && at("[::1]:5201"));
        assert!(at("[::ffff:127.0.0.1]:5201"));
        assert!(!at("10.233.0.2:5201") && !at("[::ffff:10.0.0.1]:1") && !at("[fe80::1]:1"));
        assert!(!is_loopback(Err(io::ErrorKind::NotConnected.into())));
    }
}
