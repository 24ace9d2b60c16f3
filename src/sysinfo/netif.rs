//! Network interfaces: which one carries the route to a host, its link speed and MTU, and the
//! goodput ceiling they allow.
//!
//! The ceiling is the link's bit rate times the share of the bytes on the wire that are payload.
//! Per Ethernet frame the wire also carries 38 bytes that are not in the MTU: preamble and
//! start delimiter (8), MAC header (14), FCS (4) and the inter-frame gap (12) (IEEE 802.3).
//! Inside the MTU, IPv4 takes 20 bytes (IPv6 40); TCP 20 plus 12 of timestamp options (on by
//! default in Linux); UDP 8. So a TCP stream carries MTU − 52 (IPv4) payload bytes per
//! MTU + 38 on the wire (1448 / 1538 = 94.1 % at MTU 1500). A UDP datagram of M bytes that does
//! not fit one packet is split into IP fragments of at most MTU − 20 bytes (a multiple of 8),
//! each with its own IP header and frame overhead.

use std::io;
use std::net::{IpAddr, SocketAddr, UdpSocket};
use std::path::Path;

/// Ethernet bytes per frame outside the MTU: preamble+SFD 8, header 14, FCS 4, gap 12.
pub const ETHERNET_OVERHEAD: u32 = 38;

/// The least an Ethernet frame takes on the wire: 64 bytes (a shorter one is padded) plus the
/// preamble and the inter-frame gap.
pub const MIN_FRAME_ON_WIRE: u64 = 84;

/// What sysfs says about the interface that carries traffic to a host.
#[derive(Debug, Clone, PartialEq)]
pub struct Link {
    pub interface: String,
    pub mtu: Option<u32>,
    /// Link speed in Mbit/s, or why it is unknown.
    pub speed_mbps: Result<f64, String>,
}

/// The local address the kernel would use to reach `dest` (no packet is sent: a UDP socket
/// is connected, which only looks up the route).
pub fn route_source(dest: IpAddr) -> io::Result<IpAddr> {
    let any: IpAddr = if dest.is_ipv4() {
        [0u8, 0, 0, 0].into()
    } else {
        [0u16; 8].into()
    };
    let s = UdpSocket::bind(SocketAddr::new(any, 0))?;
    s.connect(SocketAddr::new(dest, 9))?;
    Ok(s.local_addr()?.ip())
}

/// The name of the interface that holds `addr`.
pub fn interface_of(addr: IpAddr) -> io::Result<Option<String>> {
    let mut head: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: getifaddrs fills `head` with a list that we free below with freeifaddrs.
    if unsafe { libc::getifaddrs(&mut head) } != 0 {
        return Err(io::Error::last_os_error());
    }
    let mut found = None;
    let mut at = head;
    while !at.is_null() {
        // SAFETY: `at` is a node of the list getifaddrs returned, not yet freed.
        let ifa = unsafe { &*at };
        at = ifa.ifa_next;
        if ifa.ifa_addr.is_null() {
            continue;
        }
        // SAFETY: ifa_addr points to a sockaddr whose family says which struct it is.
        let ip: Option<IpAddr> = unsafe {
            match (*ifa.ifa_addr).sa_family as i32 {
                libc::AF_INET => {
                    let sin = &*(ifa.ifa_addr as *const libc::sockaddr_in);
                    Some(IpAddr::from(
                        u32::from_be(sin.sin_addr.s_addr).to_be_bytes(),
                    ))
                }
                libc::AF_INET6 => {
                    let sin6 = &*(ifa.ifa_addr as *const libc::sockaddr_in6);
                    Some(IpAddr::from(sin6.sin6_addr.s6_addr))
                }
                _ => None,
            }
        };
        if ip == Some(addr) {
            // SAFETY: ifa_name is a NUL-terminated string owned by the list.
            let name = unsafe { std::ffi::CStr::from_ptr(ifa.ifa_name) };
            found = Some(name.to_string_lossy().into_owned());
            break;
        }
    }
    // SAFETY: `head` came from getifaddrs and is freed once.
    unsafe { libc::freeifaddrs(head) };
    Ok(found)
}

/// The link that carries traffic to `dest`, read from /sys/class/net.
pub fn link_to(dest: IpAddr) -> Result<Link, String> {
    let src = route_source(dest).map_err(|e| format!("no route to {dest}: {e}"))?;
    let name = interface_of(src)
        .map_err(|e| format!("cannot list the interfaces: {e}"))?
        .ok_or_else(|| format!("no interface holds {src}, the source address towards {dest}"))?;
    let mut link = read_link(Path::new("/sys/class/net"), &name);
    // The calling thread's namespace's own figure: /sys/class/net is the namespace's of
    // whoever mounted it, and a thread that entered another network namespace (verify's
    // client) finds its interfaces missing there, or another's of the same name.
    if let Some(mtu) = mtu_of(&name) {
        link.mtu = Some(mtu);
    }
    Ok(link)
}

/// The MTU of interface `name` in the calling thread's network namespace (SIOCGIFMTU), where
/// it can be read.
pub fn mtu_of(name: &str) -> Option<u32> {
    if name.is_empty() || name.len() >= libc::IFNAMSIZ {
        return None;
    }
    let socket = UdpSocket::bind(SocketAddr::new([0u8, 0, 0, 0].into(), 0)).ok()?;
    // SAFETY: ifreq is plain data; zeroed is a valid request with an empty name.
    let mut req: libc::ifreq = unsafe { std::mem::zeroed() };
    for (dst, src) in req.ifr_name.iter_mut().zip(name.bytes()) {
        *dst = src as libc::c_char;
    }
    use std::os::fd::AsRawFd;
    // SAFETY: SIOCGIFMTU reads the name of and writes the MTU into the ifreq `req`, which
    // lives through the call; the descriptor is the socket's, open until it is dropped.
    let rc = unsafe { libc::ioctl(socket.as_raw_fd(), libc::SIOCGIFMTU as _, &mut req) };
    if rc != 0 {
        return None;
    }
    // SAFETY: SIOCGIFMTU succeeded, so the union holds the MTU.
    let mtu = unsafe { req.ifr_ifru.ifru_mtu };
    u32::try_from(mtu).ok().filter(|m| *m > 0)
}

/// Reads one interface's MTU and speed under `root` (/sys/class/net); the speed is unknown
/// for loopback, for virtual devices (veth, bridges, tunnels: whatever speed they report is
/// nominal, not a limit) and where the driver reports none (virtio_net reports −1).
pub fn read_link(root: &Path, name: &str) -> Link {
    let dir = root.join(name);
    let read = |f: &str| {
        std::fs::read_to_string(dir.join(f))
            .ok()
            .map(|s| s.trim().to_string())
    };
    let mtu = read("mtu").and_then(|s| s.parse().ok());
    let kind: Option<u32> = read("type").and_then(|s| s.parse().ok());
    let real = std::fs::canonicalize(&dir).unwrap_or_default();
    let speed_mbps = if kind == Some(772) || name == "lo" {
        Err(format!(
            "{name} is the loopback interface: it has no link, the limit is how fast the CPU copies"
        ))
    } else if real.to_string_lossy().contains("/devices/virtual/") {
        Err(format!(
            "{name} is a virtual device (veth, bridge or tunnel): the speed it reports{} is nominal, not a limit; give --link-gbps",
            read("speed").map_or(String::new(), |s| format!(" ({s} Mb/s)"))
        ))
    } else {
        match read("speed").map(|s| s.parse::<i64>()) {
            Some(Ok(v)) if v > 0 => Ok(v as f64),
            Some(Ok(v)) => Err(format!(
                "{name}'s driver reports no link speed ({v}), as virtio_net does; give --link-gbps"
            )),
            Some(Err(_)) | None => Err(format!(
                "{name} reports no link speed (the link may be down); give --link-gbps"
            )),
        }
    };
    Link {
        interface: name.to_string(),
        mtu,
        speed_mbps,
    }
}

/// Payload bytes and wire bytes of one message of `message` bytes (UDP) or of one full
/// segment (TCP), for the formula.
pub fn shares(tcp: bool, ipv6: bool, mtu: u32, message: u32) -> (f64, f64, String) {
    let ip = if ipv6 { 40 } else { 20 };
    if tcp {
        let payload = mtu.saturating_sub(ip + 32);
        return (
            payload as f64,
            (mtu + ETHERNET_OVERHEAD) as f64,
            format!(
                "(MTU {mtu} − IP {ip} − TCP 20 − timestamps 12) / (MTU {mtu} + Ethernet {ETHERNET_OVERHEAD})"
            ),
        );
    }
    // IP payload M + 8 split into fragments of at most (MTU − IP) rounded down to 8 bytes.
    let per = ((mtu.saturating_sub(ip)) / 8 * 8).max(8) as u64;
    let data = message as u64 + 8;
    let fragments = data.div_ceil(per);
    let wire = data + fragments * (ip + ETHERNET_OVERHEAD) as u64;
    (
        message as f64,
        wire as f64,
        format!(
            "message {message} / ({message} + UDP 8 + {fragments} × (IP {ip} + Ethernet {ETHERNET_OVERHEAD}))"
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_is_unknown_with_a_reason() {
        let link = link_to("127.0.0.1".parse().unwrap()).unwrap();
        assert_eq!(link.interface, "lo");
        assert!(link.speed_mbps.unwrap_err().contains("loopback"));
        assert!(link.mtu.is_some());
    }

    #[test]
    fn speeds_from_a_fake_sysfs() {
        let root = tempfile::tempdir().unwrap();
        for (name, speed) in [("eth0", "25000"), ("ens1", "-1")] {
            std::fs::create_dir(root.path().join(name)).unwrap();
            std::fs::write(root.path().join(name).join("speed"), speed).unwrap();
            std::fs::write(root.path().join(name).join("mtu"), "9000").unwrap();
            std::fs::write(root.path().join(name).join("type"), "1").unwrap();
        }
        let eth = read_link(root.path(), "eth0");
        assert_eq!(eth.speed_mbps, Ok(25000.0));
        assert_eq!(eth.mtu, Some(9000));
        assert!(
            read_link(root.path(), "ens1")
                .speed_mbps
                .unwrap_err()
                .contains("-1")
        );
        assert!(read_link(root.path(), "gone").speed_mbps.is_err());
        // The kernel's own figure for the loopback interface (65536 on Linux); none for a
        // name no interface has, or one too long to be a name.
        assert!(mtu_of("lo").is_some_and(|m| m >= 1280));
        assert_eq!(mtu_of("pbnosuchif0"), None);
        assert_eq!(mtu_of(&"x".repeat(40)), None);
    }
}
