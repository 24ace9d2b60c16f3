//! The data sockets' options: applied on both ends as the test asks (before the connection
//! where the kernel needs it then), read back as the kernel holds them after the test, and the
//! zero-copy sends (MSG_ZEROCOPY) with the completions the kernel reports on the error queue.

use crate::results::socket::{CcName, SocketOptions, SocketState};
use socket2::SockRef;
use std::io;
use std::os::fd::{AsFd, AsRawFd, RawFd};
use std::time::{Duration, Instant};

/// `SO_ZEROCOPY` (asm-generic and x86: 60); the libc crate does not name it.
const SO_ZEROCOPY: libc::c_int = 60;
/// A zero-copy completion on the error queue, and its "the kernel copied" code.
const SO_EE_ORIGIN_ZEROCOPY: u8 = 5;
const SO_EE_CODE_ZEROCOPY_COPIED: u8 = 1;

/// Where the kernel lists the congestion controls it has loaded.
const AVAILABLE_CC: &str = "/proc/sys/net/ipv4/tcp_available_congestion_control";

/// Where the kernel lists those an unprivileged socket may choose.
const ALLOWED_CC: &str = "/proc/sys/net/ipv4/tcp_allowed_congestion_control";

/// The congestion controls this kernel has loaded (a root user may get others loaded as
/// modules by asking for them), or an empty list where it cannot be read.
pub fn available_congestion() -> Vec<String> {
    names_in(AVAILABLE_CC)
}

/// A server takes only a congestion control its kernel has loaded (or allows): a client's
/// name never makes a root server load a module.
pub fn loaded(cc: CcName) -> Result<(), String> {
    let mut known = names_in(AVAILABLE_CC);
    known.extend(names_in(ALLOWED_CC));
    if known.iter().any(|k| k == cc.as_str()) {
        return Ok(());
    }
    known.sort();
    known.dedup();
    Err(format!(
        "this server's kernel has no congestion control '{cc}' loaded; loaded: {}",
        if known.is_empty() {
            "unknown".to_string()
        } else {
            known.join(", ")
        }
    ))
}

/// The names listed in one of /proc's congestion control files (at most 4 KiB).
fn names_in(path: &str) -> Vec<String> {
    let text = crate::sysinfo::sysfs::read_bounded(path, 4096).unwrap_or_default();
    text.split_ascii_whitespace()
        .filter_map(|w| CcName::new(w).ok())
        .map(|c| c.to_string())
        .collect()
}

/// Why `cc` could not be set, with the kernel's list.
fn congestion_error(cc: CcName, e: &io::Error) -> io::Error {
    let list = available_congestion();
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!(
            "this kernel has no congestion control '{cc}' ({e}); available: {}",
            if list.is_empty() {
                "unknown".to_string()
            } else {
                list.join(", ")
            }
        ),
    )
}

/// Whether this machine's kernel lets a TCP socket use `cc` (it loads a module if it may):
/// the client asks before it sends a test, so that the user hears it in one line.
pub fn check_congestion(cc: CcName) -> io::Result<()> {
    let s = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None)?;
    s.set_tcp_congestion(cc.as_str().as_bytes())
        .map_err(|e| congestion_error(cc, &e))
}

/// Sets what must be set before a connection exists: the buffers (TCP's window scale is
/// chosen from them at the handshake), the MSS and the congestion control. On a listening
/// socket, the connections it accepts inherit them.
pub fn before_connect(s: SockRef<'_>, o: &SocketOptions, tcp: bool) -> io::Result<()> {
    if let Some(w) = o.window_bytes {
        s.set_send_buffer_size(w as usize)?;
        s.set_recv_buffer_size(w as usize)?;
    }
    if !tcp {
        return Ok(());
    }
    if let Some(m) = o.mss_bytes {
        s.set_tcp_mss(m)?;
    }
    if let Some(cc) = o.congestion {
        s.set_tcp_congestion(cc.as_str().as_bytes())
            .map_err(|e| congestion_error(cc, &e))?;
    }
    Ok(())
}

/// Sets what applies to a connected TCP socket: TCP_NODELAY (as asked, else `default_nodelay`)
/// and SO_ZEROCOPY.
pub fn after_connect(s: SockRef<'_>, o: &SocketOptions, default_nodelay: bool) -> io::Result<()> {
    s.set_tcp_nodelay(o.nodelay.unwrap_or(default_nodelay))?;
    if o.zerocopy {
        let one: libc::c_int = 1;
        // SAFETY: setsockopt reads one c_int from the pointer it is given, of the size given.
        let rc = unsafe {
            libc::setsockopt(
                s.as_raw_fd(),
                libc::SOL_SOCKET,
                SO_ZEROCOPY,
                (&one as *const libc::c_int).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            )
        };
        if rc != 0 {
            let e = io::Error::last_os_error();
            return Err(io::Error::new(
                e.kind(),
                format!("this kernel refuses SO_ZEROCOPY ({e}); it needs Linux 4.14 or later"),
            ));
        }
    }
    Ok(())
}

/// What the kernel holds for the socket `fd` now; `tcp` reads TCP's options too.
pub fn read_back(fd: impl AsFd, tcp: bool) -> SocketState {
    let s = SockRef::from(&fd);
    let tcp_opt = |ok: bool| ok && tcp;
    SocketState {
        send_buffer_bytes: s.send_buffer_size().ok().map(|b| b as u64),
        receive_buffer_bytes: s.recv_buffer_size().ok().map(|b| b as u64),
        congestion: s
            .tcp_congestion()
            .ok()
            .filter(|_| tcp_opt(true))
            .and_then(|b| {
                let name = String::from_utf8_lossy(&b);
                CcName::new(name.trim_end_matches('\0')).ok()
            }),
        mss_bytes: s.tcp_mss().ok().filter(|_| tcp_opt(true)),
        nodelay: s.tcp_nodelay().ok().filter(|_| tcp_opt(true)),
        zerocopy_sends: None,
        zerocopy_copied: None,
        ..SocketState::default()
    }
}

/// What TCP says of its connection `fd` (TCP_INFO), with the fields the kernel wrote: its
/// smoothed round trip, the window the peer advertised, and the shares of the time it was busy
/// sending that the peer's window and the send buffer held it back. All None where it cannot
/// be read (not TCP).
pub fn tcp_info(fd: impl AsFd) -> TcpInfo {
    // SAFETY: tcp_info is plain data; zeroed is a valid value to be overwritten.
    let mut info: libc::tcp_info = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::tcp_info>() as libc::socklen_t;
    // SAFETY: getsockopt writes at most `len` bytes into `info`, which is that large, and
    // the length written into `len`; the descriptor is borrowed for the call.
    let rc = unsafe {
        libc::getsockopt(
            fd.as_fd().as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_INFO,
            (&mut info as *mut libc::tcp_info).cast(),
            &mut len,
        )
    };
    if rc != 0 {
        return TcpInfo::default();
    }
    // A field counts where the kernel wrote it whole (older kernels write less).
    let wrote = |end: usize| len as usize >= end;
    macro_rules! end {
        ($f:ident) => {
            std::mem::offset_of!(libc::tcp_info, $f) + std::mem::size_of_val(&info.$f)
        };
    }
    let share = |part: u64| {
        (wrote(end!(tcpi_sndbuf_limited)) && info.tcpi_busy_time > 0)
            .then(|| (part as f64 / info.tcpi_busy_time as f64).clamp(0.0, 1.0))
    };
    TcpInfo {
        rtt_us: (wrote(end!(tcpi_rtt)) && info.tcpi_rtt > 0).then(|| f64::from(info.tcpi_rtt)),
        peer_window_bytes: (wrote(end!(tcpi_snd_wnd)) && info.tcpi_snd_wnd > 0)
            .then_some(u64::from(info.tcpi_snd_wnd)),
        window_limited: share(info.tcpi_rwnd_limited),
        send_buffer_limited: share(info.tcpi_sndbuf_limited),
    }
}

/// What [`tcp_info`] reads.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct TcpInfo {
    pub rtt_us: Option<f64>,
    pub peer_window_bytes: Option<u64>,
    pub window_limited: Option<f64>,
    pub send_buffer_limited: Option<f64>,
}

/// Zero-copy sends on one socket and the completions the kernel reported: each send's pages
/// stay pinned until the kernel says it is done with them (on the error queue), so the payload
/// must not change meanwhile (peakbench's TCP payload never does).
#[derive(Debug, Default)]
pub struct ZeroCopy {
    /// Sends issued with MSG_ZEROCOPY.
    pub issued: u64,
    /// Completions received, and those the kernel flagged as copied after all.
    pub completed: u64,
    pub copied: u64,
}

/// Completions may lag this many sends before the sender drains them (each pending one holds
/// socket option memory; too many and the kernel answers ENOBUFS).
const MAX_PENDING: u64 = 32;

impl ZeroCopy {
    /// Sends `buf` on `fd` with MSG_ZEROCOPY; the socket's send timeout bounds a blocking send.
    pub fn send(&mut self, fd: RawFd, buf: &[u8]) -> io::Result<usize> {
        if self.issued - self.completed >= MAX_PENDING {
            self.drain(fd);
        }
        for _ in 0..2 {
            // SAFETY: `buf` is valid for `buf.len()` bytes during the call; the kernel pins
            // its pages until the completion that `drain` reads.
            let rc = unsafe {
                libc::send(
                    fd,
                    buf.as_ptr().cast(),
                    buf.len(),
                    libc::MSG_ZEROCOPY | libc::MSG_NOSIGNAL,
                )
            };
            if rc >= 0 {
                self.issued += 1;
                return Ok(rc as usize);
            }
            let e = io::Error::last_os_error();
            if e.raw_os_error() != Some(libc::ENOBUFS) {
                return Err(e);
            }
            // Too many completions pending: read them and try once more.
            self.drain(fd);
        }
        Err(io::ErrorKind::WouldBlock.into())
    }

    /// Reads every completion waiting on `fd`'s error queue (without blocking).
    pub fn drain(&mut self, fd: RawFd) {
        loop {
            let mut control = [0u64; 16];
            // SAFETY: a zeroed msghdr is valid; its fields are set below.
            let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
            msg.msg_control = control.as_mut_ptr().cast();
            msg.msg_controllen = std::mem::size_of_val(&control) as _;
            // SAFETY: `msg` points at `control`, which outlives the call; no data buffers.
            let rc =
                unsafe { libc::recvmsg(fd, &mut msg, libc::MSG_ERRQUEUE | libc::MSG_DONTWAIT) };
            if rc < 0 {
                return;
            }
            // A control buffer the kernel had to cut holds nothing whole to read.
            if msg.msg_flags & libc::MSG_CTRUNC != 0 {
                continue;
            }
            // SAFETY: CMSG_LEN computes a length; it reads no memory.
            let whole =
                unsafe { libc::CMSG_LEN(std::mem::size_of::<libc::sock_extended_err>() as u32) }
                    as usize;
            // SAFETY: the CMSG macros walk the control buffer the kernel filled, within
            // `msg_controllen`.
            let mut c = unsafe { libc::CMSG_FIRSTHDR(&msg) };
            while !c.is_null() {
                // SAFETY: `c` is a header inside the control buffer (see above).
                let (level, kind, len) =
                    unsafe { ((*c).cmsg_level, (*c).cmsg_type, (*c).cmsg_len as usize) };
                let recverr = len >= whole
                    && ((level == libc::SOL_IP && kind == libc::IP_RECVERR)
                        || (level == libc::SOL_IPV6 && kind == libc::IPV6_RECVERR));
                if recverr {
                    // SAFETY: an IP(V6)_RECVERR message whose length was checked above carries
                    // a whole sock_extended_err; it may be unaligned, so it is read unaligned.
                    let ee = unsafe {
                        std::ptr::read_unaligned(
                            libc::CMSG_DATA(c) as *const libc::sock_extended_err
                        )
                    };
                    if ee.ee_errno == 0 && ee.ee_origin == SO_EE_ORIGIN_ZEROCOPY {
                        // Sends ee_info..=ee_data (a 32-bit counter) completed.
                        let n = u64::from(ee.ee_data.wrapping_sub(ee.ee_info)) + 1;
                        self.completed += n;
                        if ee.ee_code & SO_EE_CODE_ZEROCOPY_COPIED != 0 {
                            self.copied += n;
                        }
                    }
                }
                // SAFETY: as above.
                c = unsafe { libc::CMSG_NXTHDR(&msg, c) };
            }
        }
    }

    /// Waits until every send has completed, or `until`.
    pub fn finish(&mut self, fd: RawFd, until: Instant) {
        self.drain(fd);
        while self.completed < self.issued && Instant::now() < until {
            let mut pfd = libc::pollfd {
                fd,
                events: 0,
                revents: 0,
            };
            // SAFETY: one valid pollfd for a socket that outlives the call (POLLERR is always
            // reported: the error queue has something).
            unsafe { libc::poll(&mut pfd, 1, 10) };
            self.drain(fd);
        }
    }
}

/// How long a sender waits for its last zero-copy completions.
pub const ZEROCOPY_WAIT: Duration = Duration::from_millis(500);

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;
    use std::net::{TcpListener, TcpStream};

    /// Over loopback: the options are set and read back, and zero-copy sends complete, copied
    /// (loopback cannot hand pinned pages to a receiver).
    #[test]
    fn options_are_applied_read_back_and_zero_copy_completes() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let asked = SocketOptions {
            window_bytes: Some(256 * 1024),
            congestion: CcName::new("cubic").ok(),
            mss_bytes: Some(1000),
            nodelay: Some(true),
            zerocopy: true,
        };
        let s = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
        let cc_ok = available_congestion().iter().any(|c| c == "cubic");
        let asked = SocketOptions {
            congestion: asked.congestion.filter(|_| cc_ok),
            ..asked
        };
        before_connect(SockRef::from(&s), &asked, true).unwrap();
        s.connect(&l.local_addr().unwrap().into()).unwrap();
        let client: TcpStream = s.into();
        after_connect(SockRef::from(&client), &asked, false).unwrap();
        let (mut server, _) = l.accept().unwrap();
        let reader = std::thread::spawn(move || {
            let mut buf = vec![0u8; 1 << 16];
            let mut total = 0usize;
            while let Ok(n) = server.read(&mut buf) {
                if n == 0 {
                    break;
                }
                total += n;
            }
            total
        });
        let st = read_back(&client, true);
        // Linux doubles the asked buffers.
        assert_eq!(st.send_buffer_bytes, Some(512 * 1024), "{st:?}");
        assert_eq!(st.receive_buffer_bytes, Some(512 * 1024), "{st:?}");
        assert!(st.mss_bytes.is_some_and(|m| m <= 1000), "{st:?}");
        assert_eq!(st.nodelay, Some(true));
        if cc_ok {
            assert_eq!(
                st.congestion.map(|c| c.to_string()).as_deref(),
                Some("cubic")
            );
        }
        let payload = vec![7u8; 64 * 1024];
        let mut zc = ZeroCopy::default();
        let mut sent = 0;
        for _ in 0..100 {
            sent += zc.send(client.as_raw_fd(), &payload).unwrap();
        }
        zc.finish(client.as_raw_fd(), Instant::now() + Duration::from_secs(5));
        client.shutdown(std::net::Shutdown::Write).unwrap();
        assert_eq!(reader.join().unwrap(), sent);
        assert_eq!(zc.issued, 100);
        assert_eq!(zc.completed, 100, "{zc:?}");
        assert!(zc.copied <= zc.completed);
    }

    #[test]
    fn a_missing_congestion_control_is_refused_with_the_list() {
        let e = check_congestion(CcName::new("no_such_cc").unwrap()).unwrap_err();
        let msg = e.to_string();
        assert!(msg.contains("no congestion control 'no_such_cc'"), "{msg}");
        assert!(msg.contains("available:"), "{msg}");
        if available_congestion().iter().any(|c| c == "cubic") {
            assert!(check_congestion(CcName::new("cubic").unwrap()).is_ok());
        }
        // A server takes only what its kernel has loaded: no module is loaded for a client.
        let server = loaded(CcName::new("no_such_cc").unwrap()).unwrap_err();
        assert!(server.contains("loaded:"), "{server}");
        for cc in available_congestion() {
            assert!(loaded(CcName::new(&cc).unwrap()).is_ok(), "{cc}");
        }
    }
}
