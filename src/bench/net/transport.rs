//! The data transports, TCP and UDP, behind one small interface with capability flags (as
//! iperf3's protocol table): the stream loops ask the flags, never the protocol's name.
//!
//! Data sockets exist only during a test: the server opens them on ephemeral ports of the
//! address the control connection arrived on and announces the ports in `Ready` (as netperf
//! does); it attaches only peers from the control connection's address that show the test's
//! cookie: the first 8 bytes of a TCP data connection, or a UDP hello (`UDP_HELLO` then the
//! cookie). The server then `connect`s a UDP socket to the hello's source, and the stream loops
//! drop every datagram without the cookie, so that nothing else can join or feed the test.

use super::protocol::Proto;
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

/// How long the server waits for a new TCP data connection's cookie.
const COOKIE_WAIT: Duration = Duration::from_millis(500);

/// The server's data sockets of one test, before the client has attached.
pub enum Pending {
    Tcp(TcpListener),
    Udp(Vec<UdpSocket>),
}

/// The attached data sockets of one test.
pub enum Attached {
    Tcp(Vec<TcpStream>),
    Udp(Vec<UdpSocket>),
}

impl Pending {
    /// Opens the data sockets of a test on `ip` (the control connection's local address).
    pub fn open(proto: Proto, ip: IpAddr, streams: usize) -> io::Result<Pending> {
        let any = SocketAddr::new(ip, 0);
        Ok(match proto {
            Proto::Tcp => Pending::Tcp(TcpListener::bind(any)?),
            Proto::Udp => Pending::Udp(
                (0..streams)
                    .map(|_| UdpSocket::bind(any))
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

    /// Waits until `streams` peers from `peer` that show `cookie` have attached, or
    /// `deadline`; strangers are turned away and do not count. `nodelay` turns Nagle's
    /// algorithm off (ping-pong).
    pub fn attach(
        self,
        peer: IpAddr,
        streams: usize,
        deadline: Instant,
        nodelay: bool,
        cookie: u64,
    ) -> io::Result<Attached> {
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
            Pending::Tcp(listener) => {
                listener.set_nonblocking(true)?;
                let mut out = Vec::with_capacity(streams);
                while out.len() < streams {
                    left()?;
                    match listener.accept() {
                        Ok((s, from)) if from.ip() == peer => {
                            s.set_nonblocking(false)?;
                            s.set_nodelay(nodelay)?;
                            s.set_read_timeout(Some(left()?.min(COOKIE_WAIT)))?;
                            let mut got = [0u8; 8];
                            if (&s).read_exact(&mut got).is_ok() && got == cookie.to_be_bytes() {
                                s.set_read_timeout(None)?;
                                out.push(s);
                            }
                        }
                        Ok(_) => {}
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                            std::thread::sleep(Duration::from_millis(2));
                        }
                        Err(e) => return Err(e),
                    }
                }
                Ok(Attached::Tcp(out))
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

/// The client's side: connects one data socket per stream to the announced ports (a TCP
/// connection starts with the test's `cookie`).
pub fn connect(
    proto: Proto,
    server: IpAddr,
    ports: &[u16],
    streams: usize,
    nodelay: bool,
    cookie: u64,
) -> io::Result<Attached> {
    let bad = || {
        io::Error::new(
            io::ErrorKind::InvalidData,
            "the server announced the wrong number of data ports",
        )
    };
    Ok(match proto {
        Proto::Tcp => {
            let [port] = ports else { return Err(bad()) };
            let to = SocketAddr::new(server, *port);
            Attached::Tcp(
                (0..streams)
                    .map(|_| {
                        let mut s = TcpStream::connect_timeout(&to, Duration::from_secs(5))?;
                        s.set_nodelay(nodelay)?;
                        s.set_write_timeout(Some(Duration::from_secs(5)))?;
                        s.write_all(&cookie.to_be_bytes())?;
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
                    .map(|p| {
                        let s = UdpSocket::bind(local)?;
                        s.connect(SocketAddr::new(server, *p))?;
                        Ok(s)
                    })
                    .collect::<io::Result<_>>()?,
            )
        }
    })
}

/// A socket's buffer size option (`SO_SNDBUF`, `SO_RCVBUF`) as the kernel holds it (Linux
/// reports twice what was asked: its bookkeeping included).
fn buffer_size(fd: RawFd, option: libc::c_int) -> Option<u64> {
    let mut value: libc::c_int = 0;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: getsockopt writes at most `len` bytes into the c_int it is given.
    let rc = unsafe {
        libc::getsockopt(
            fd,
            libc::SOL_SOCKET,
            option,
            (&mut value as *mut libc::c_int).cast(),
            &mut len,
        )
    };
    (rc == 0 && value > 0).then_some(value as u64)
}

/// The first data socket of a test, kept to read its buffers after the test (TCP grows them
/// as it goes).
pub struct BufferProbe(std::os::fd::OwnedFd);

impl BufferProbe {
    /// (send, receive) buffer bytes now.
    pub fn read(&self) -> Option<(u64, u64)> {
        let fd = self.0.as_raw_fd();
        Some((
            buffer_size(fd, libc::SO_SNDBUF)?,
            buffer_size(fd, libc::SO_RCVBUF)?,
        ))
    }
}

impl Attached {
    /// A probe of the first data socket's buffers (a duplicate of its descriptor).
    pub fn probe(&self) -> Option<BufferProbe> {
        let fd = match self {
            Attached::Tcp(v) => std::os::fd::AsFd::as_fd(v.first()?).try_clone_to_owned(),
            Attached::Udp(v) => std::os::fd::AsFd::as_fd(v.first()?).try_clone_to_owned(),
        };
        fd.ok().map(BufferProbe)
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
