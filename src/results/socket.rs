//! A network point's socket options: what the user asked of every data socket, and what the
//! kernel held on each end, read back after the test (a kernel may round, clamp or refuse what
//! it was asked: Linux doubles a buffer size and caps it at `net.core.wmem_max`).

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The longest round trip a socket's state may say, µs (10 minutes).
const MAX_RTT_US: f64 = 600e6;

/// The longest congestion control name (the kernel's `TCP_CA_NAME_MAX` is 16 with its NUL).
pub const MAX_CC_NAME: usize = 15;

/// A TCP congestion control's name: 1 to 15 bytes of `a-z 0-9 _ -` (as the kernel's are), kept
/// inline so that a test's parameters stay `Copy`.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct CcName {
    len: u8,
    bytes: [u8; MAX_CC_NAME],
}

impl CcName {
    /// The name, or why it cannot be one (it is checked before it reaches the kernel or a
    /// terminal).
    pub fn new(s: &str) -> Result<CcName, String> {
        let ok = |b: u8| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-';
        if s.is_empty() || s.len() > MAX_CC_NAME || !s.bytes().all(ok) {
            return Err(format!(
                "'{}' is not a congestion control name: 1 to {MAX_CC_NAME} characters of a-z, 0-9, _ and - (e.g. cubic, bbr)",
                crate::text::printable(&s.chars().take(40).collect::<String>())
            ));
        }
        let mut bytes = [0u8; MAX_CC_NAME];
        bytes[..s.len()].copy_from_slice(s.as_bytes());
        Ok(CcName {
            len: s.len() as u8,
            bytes,
        })
    }

    pub fn as_str(&self) -> &str {
        // Only ASCII is ever stored (see `new`).
        std::str::from_utf8(&self.bytes[..self.len as usize]).unwrap_or("")
    }
}

impl std::fmt::Display for CcName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::fmt::Debug for CcName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}", self.as_str())
    }
}

impl Serialize for CcName {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for CcName {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<CcName, D::Error> {
        let s = String::deserialize(d)?;
        CcName::new(&s).map_err(serde::de::Error::custom)
    }
}

/// What the user asked of every data socket of a test, on both ends (None: the kernel's
/// default, or for `nodelay` peakbench's: on for a ping-pong, off for streams).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SocketOptions {
    /// SO_SNDBUF and SO_RCVBUF, bytes (iperf3 `-w`); set before the connection is made, so
    /// that TCP's window scale follows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_bytes: Option<u32>,
    /// TCP_CONGESTION (iperf3 `-C`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub congestion: Option<CcName>,
    /// TCP_MAXSEG before the connection (iperf3 `-M`): the largest segment either end sends.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mss_bytes: Option<u32>,
    /// TCP_NODELAY (iperf3 `-N` turns it on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nodelay: Option<bool>,
    /// Sends with MSG_ZEROCOPY (iperf3 `-Z` uses sendfile): the kernel pins the pages instead
    /// of copying them. Over loopback and veth it copies them after all.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub zerocopy: bool,
}

impl SocketOptions {
    /// Whether anything was asked.
    pub fn any(&self) -> bool {
        *self != SocketOptions::default()
    }
}

/// What the kernel held for a data socket at the end of a test (getsockopt); None where it
/// does not apply (UDP has no congestion control) or could not be read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SocketState {
    /// SO_SNDBUF and SO_RCVBUF as the kernel reports them: twice what was asked (its
    /// bookkeeping), capped by net.core.wmem_max / rmem_max; TCP grows them unless asked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub send_buffer_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub receive_buffer_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub congestion: Option<CcName>,
    /// TCP_MAXSEG of the connection: the segment size in use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mss_bytes: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nodelay: Option<bool>,
    /// Zero-copy sends (MSG_ZEROCOPY) completed, and how many of them the kernel copied after
    /// all (SO_EE_CODE_ZEROCOPY_COPIED: always on loopback).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zerocopy_sends: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zerocopy_copied: Option<u64>,
    /// What TCP said of the client's own connection at the end of the test (TCP_INFO; never
    /// sent by a server): its smoothed round trip, µs (`tcpi_rtt`); the window the peer
    /// advertised, bytes (`tcpi_snd_wnd`); and the shares of the time it was busy sending that
    /// the peer's window and the send buffer held it back (`tcpi_rwnd_limited`,
    /// `tcpi_sndbuf_limited` over `tcpi_busy_time`: a sender's view, Linux 4.9 and 5.4 on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rtt_us: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peer_window_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_limited: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub send_buffer_limited: Option<f64>,
}

impl SocketState {
    /// With the zero-copy sends a sender counted, where they were asked.
    pub fn with_zerocopy(mut self, asked: bool, sends: u64, copied: u64) -> SocketState {
        if asked && sends > 0 {
            self.zerocopy_sends = Some(sends);
            self.zerocopy_copied = Some(copied);
        }
        self
    }

    /// Checks figures that came from a peer: a buffer of more than 1 TiB, a segment larger
    /// than an IP packet or more copies than sends is a lie.
    pub fn validate(&self) -> Result<(), String> {
        let big = |v: Option<u64>| v.is_some_and(|b| b > 1 << 40);
        if big(self.send_buffer_bytes) || big(self.receive_buffer_bytes) {
            return Err("a socket buffer above 1 TiB".into());
        }
        if self.mss_bytes.is_some_and(|m| m > 65_535) {
            return Err("a segment size above 65535 bytes".into());
        }
        if self
            .rtt_us
            .is_some_and(|r| !(r.is_finite() && (0.0..=MAX_RTT_US).contains(&r)))
        {
            return Err("a round trip that is negative or longer than 10 minutes".into());
        }
        let share =
            |v: Option<f64>| v.is_some_and(|x| !(x.is_finite() && (0.0..=1.0).contains(&x)));
        if share(self.window_limited) || share(self.send_buffer_limited) {
            return Err("a share of the time outside 0 to 1".into());
        }
        if big(self.peer_window_bytes) {
            return Err("a window above 1 TiB".into());
        }
        if self.zerocopy_copied > self.zerocopy_sends {
            return Err("more zero-copy sends copied than sent".into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn congestion_names_are_checked_and_travel_as_strings() {
        let bbr = CcName::new("bbr").unwrap();
        assert_eq!(bbr.as_str(), "bbr");
        assert_eq!(serde_json::to_string(&bbr).unwrap(), "\"bbr\"");
        let back: CcName = serde_json::from_str("\"cubic\"").unwrap();
        assert_eq!(back.as_str(), "cubic");
        for bad in ["", "BBR", "a b", "x\u{1b}[2J", "sixteen_chars_xx", "../etc"] {
            assert!(CcName::new(bad).is_err(), "{bad:?}");
            assert!(serde_json::from_str::<CcName>(&format!("{bad:?}")).is_err());
        }
        let msg = CcName::new("\u{1b}[31mred").unwrap_err();
        assert!(!msg.contains('\u{1b}'), "{msg}");
    }

    #[test]
    fn a_peers_socket_figures_are_bounded() {
        let ok = SocketState {
            send_buffer_bytes: Some(4 << 20),
            mss_bytes: Some(1448),
            zerocopy_sends: Some(10),
            zerocopy_copied: Some(10),
            ..Default::default()
        };
        assert!(ok.validate().is_ok());
        for bad in [
            SocketState {
                receive_buffer_bytes: Some(u64::MAX),
                ..ok
            },
            SocketState {
                mss_bytes: Some(1 << 20),
                ..ok
            },
            SocketState {
                zerocopy_copied: Some(11),
                ..ok
            },
        ] {
            assert!(bad.validate().is_err(), "{bad:?}");
        }
        assert!(!SocketOptions::default().any());
        let asked = SocketOptions {
            nodelay: Some(false),
            ..Default::default()
        };
        assert!(asked.any());
    }

    /// What TCP_INFO says of a connection is bounded: a round trip from 0 to 10 minutes
    /// (finite), shares of the busy time from 0 to 1, a window up to 1 TiB.
    #[test]
    fn tcp_info_figures_are_bounded() {
        let ok = SocketState {
            rtt_us: Some(10_000.0),
            peer_window_bytes: Some(80_000),
            window_limited: Some(0.97),
            send_buffer_limited: Some(0.0),
            ..Default::default()
        };
        assert_eq!(ok.validate(), Ok(()));
        for bad in [
            SocketState {
                rtt_us: Some(-1.0),
                ..ok
            },
            SocketState {
                rtt_us: Some(f64::NAN),
                ..ok
            },
            SocketState {
                rtt_us: Some(601e6),
                ..ok
            },
            SocketState {
                window_limited: Some(1.5),
                ..ok
            },
            SocketState {
                send_buffer_limited: Some(f64::INFINITY),
                ..ok
            },
            SocketState {
                peer_window_bytes: Some(u64::MAX),
                ..ok
            },
        ] {
            assert!(bad.validate().is_err(), "{bad:?}");
        }
    }
}
