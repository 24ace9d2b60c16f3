//! What a client may ask of a server for one test ([`TestParams`]), the bounds the server checks
//! it against ([`limits`]), and what each side counts ([`SideStats`]).

use crate::results::params::Proto;
use crate::results::socket::SocketOptions;
use serde::{Deserialize, Serialize};

/// Limits on what a client may ask for, checked by the server and by the client's parser.
pub mod limits {
    /// Parallel streams (each one a thread on both sides); with `--bidir`, both ways together.
    pub const MAX_STREAMS: u32 = 128;
    /// The largest TCP message (one write).
    pub const MAX_TCP_MESSAGE: u32 = 16 * 1024 * 1024;
    /// The largest UDP payload over IPv4 (65 535 − 20 IP − 8 UDP).
    pub const MAX_UDP_MESSAGE: u32 = 65_507;
    /// The smallest UDP throughput datagram: its header (sequence number, send time, flags,
    /// magic and the test's cookie).
    pub const MIN_UDP_MESSAGE: u32 = 32;
    /// The smallest UDP ping: its sequence number and the test's cookie.
    pub const MIN_UDP_PING: u32 = 16;
    /// Buffers of all streams together: streams × message size.
    pub const MAX_BUFFER_BYTES: u64 = 256 * 1024 * 1024;
    /// One test's measured time plus its omitted warm-up.
    pub const MAX_TEST_MS: u64 = 600_000;
    /// A receiver's busy-poll window.
    pub const MAX_BUSY_POLL_US: u32 = 10_000;
    /// A socket's asked buffer (`--window`): the kernel caps it at net.core.[rw]mem_max anyway,
    /// and charges it to the machine's TCP memory.
    pub const MIN_WINDOW: u32 = 1024;
    pub const MAX_WINDOW: u32 = 256 * 1024 * 1024;
    /// TCP_MAXSEG as Linux accepts it (TCP_MIN_MSS to MAX_TCP_WINDOW).
    pub const MIN_MSS: u32 = 88;
    pub const MAX_MSS: u32 = 32_767;
    /// A fixed amount of a throughput stream (1 PiB) and of a ping-pong stream (round trips);
    /// the test's time bounds both anyway.
    pub const MAX_AMOUNT_BYTES: u64 = 1 << 50;
    pub const MAX_AMOUNT_ROUND_TRIPS: u64 = 10_000_000_000;
    /// A paced ping-pong's round trips per second per stream.
    pub const MAX_MPS: u32 = 1_000_000;
    /// The most connections per second a server accepts for one CONNECT test, all streams
    /// together (a client's `--mps` is refused above it; a client that just connects as fast
    /// as it can is slowed to it).
    pub const MAX_CONNECT_RATE: u64 = 100_000;
    /// The largest request and response of a CONNECT test.
    pub const MAX_CONNECT_MESSAGE: u32 = 64 * 1024;
}

/// What is measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TestKind {
    /// Streams of messages one way: goodput, and for UDP loss and jitter.
    Throughput,
    /// Ping-pong of one message at a time: round-trip time.
    Latency,
    /// A connection per request (netperf TCP_CRR): connect, request, response, close. Since
    /// version 4.
    Connect,
}

/// One test's parameters, chosen by the client and validated by the server.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TestParams {
    pub kind: TestKind,
    pub proto: Proto,
    /// Streams (with `bidir`, each way).
    pub streams: u32,
    pub message_bytes: u32,
    /// Measured time (with a fixed amount, the most it may take).
    pub duration_ms: u64,
    /// Warm-up before the measured time, not counted.
    pub omit_ms: u64,
    /// The server sends (throughput only).
    pub reverse: bool,
    /// UDP target rate per stream in bits per second; 0 = as fast as possible.
    pub rate_bps: u64,
    /// How long a receiving stream keeps polling its socket after finding it empty before it
    /// sleeps until data arrives (µs; 0: sleep at once). Since version 2.
    pub busy_poll_us: u32,
    /// Both ways at once (throughput): `streams` streams each way, the first half sent by the
    /// client, the second by the server. Since version 4.
    #[serde(default)]
    pub bidir: bool,
    /// What both ends ask of every data socket. Since version 4.
    #[serde(default)]
    pub socket: SocketOptions,
    /// Fixed work per stream instead of a time (iperf3 `-n`, `-k`): the payload bytes a TCP
    /// sender sends (no warm-up), or a pinger's round trips after the warm-up; 0: the duration
    /// decides.
    /// Since version 4.
    #[serde(default)]
    pub amount_per_stream: u64,
    /// A pinging stream's round trips per second, paced (sockperf `--mps`); 0: back to back.
    /// Since version 4.
    #[serde(default)]
    pub mps: u32,
    /// A ping-pong under load: this many bulk streams from the client to the server beside the
    /// pings, on the same link, of [`TestParams::load_message`] bytes a write. Since version 4.
    #[serde(default)]
    pub load_streams: u32,
    /// `--sustain` (TCP throughput): the senders end once their goodput is steady
    /// ([`crate::measure::steady`]), `duration_ms` at most, and the receivers' window ends
    /// with the last byte. Sent only when set: a server of a build before it refuses the
    /// field, and only then.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub sustain: bool,
}

impl TestParams {
    /// The data connections of the test: its streams, twice with `bidir`, and the bulk
    /// streams of a ping-pong under load after its own.
    pub fn channels(&self) -> u32 {
        if self.bidir {
            self.streams.saturating_mul(2)
        } else {
            self.streams.saturating_add(self.load_streams)
        }
    }

    /// A load stream's write: iperf3's default for TCP, a datagram that fits an Ethernet MTU
    /// for UDP.
    pub fn load_message(&self) -> u32 {
        match self.proto {
            Proto::Tcp => 128 * 1024,
            Proto::Udp => 1400,
        }
    }

    /// The bulk streams beside a ping-pong under load, as a test of their own.
    pub fn load(&self) -> TestParams {
        TestParams {
            kind: TestKind::Throughput,
            streams: self.load_streams,
            message_bytes: self.load_message(),
            load_streams: 0,
            amount_per_stream: 0,
            mps: 0,
            sustain: false,
            ..*self
        }
    }

    /// Checks every field against [`limits`]; the message says what is wrong and the bound.
    pub fn validate(&self) -> Result<(), String> {
        use limits::*;
        if self.streams == 0 || self.channels() > MAX_STREAMS {
            return Err(format!(
                "{} streams{} is out of range: 1 to {MAX_STREAMS} in all",
                self.streams,
                if self.bidir { " each way" } else { "" }
            ));
        }
        let (min_message, max_message) = self.message_range();
        if self.message_bytes < min_message || self.message_bytes > max_message {
            return Err(format!(
                "a {}-byte {} message is out of range: {min_message} to {max_message} bytes{}",
                self.message_bytes,
                self.proto.name(),
                if self.proto == Proto::Udp {
                    " (every datagram carries the test's cookie and its sequence number)"
                } else {
                    ""
                }
            ));
        }
        if self.load_streams > 0 && self.kind != TestKind::Latency {
            return Err("only a ping-pong (LATENCY) runs under load".into());
        }
        // A message buffer per stream (bulk streams under load: their own size).
        let (streams, load) = (u64::from(self.streams), u64::from(self.load_streams));
        let buffers = if self.bidir {
            2 * streams * u64::from(self.message_bytes)
        } else {
            streams * u64::from(self.message_bytes) + load * u64::from(self.load_message())
        };
        if buffers > MAX_BUFFER_BYTES {
            return Err(format!(
                "{} streams × {} bytes exceeds the server's {} MiB of buffers; use fewer streams or smaller messages",
                self.channels(),
                self.message_bytes,
                MAX_BUFFER_BYTES >> 20
            ));
        }
        // Checked: a peer's u64s must not wrap past the limit.
        let total = self.duration_ms.checked_add(self.omit_ms);
        if self.duration_ms == 0 || total.is_none_or(|t| t > MAX_TEST_MS) {
            return Err(format!(
                "duration {} ms + omit {} ms is out of range: at most {} s in all, duration above 0",
                self.duration_ms,
                self.omit_ms,
                MAX_TEST_MS / 1000
            ));
        }
        if self.kind != TestKind::Throughput && (self.reverse || self.bidir) {
            return Err(
                "a latency or connect test has no --reverse or --bidir: both sides send".into(),
            );
        }
        if self.kind == TestKind::Connect {
            self.validate_connect()?;
        }
        if self.bidir && self.reverse {
            return Err("--bidir sends both ways already: drop --reverse".into());
        }
        if self.busy_poll_us > MAX_BUSY_POLL_US {
            return Err(format!(
                "a busy-poll window of {} µs is out of range: at most {} ms",
                self.busy_poll_us,
                MAX_BUSY_POLL_US / 1000
            ));
        }
        if self.proto == Proto::Tcp && self.rate_bps != 0 {
            return Err("--rate applies to UDP only".into());
        }
        self.validate_socket()?;
        self.validate_amount()
    }

    fn validate_connect(&self) -> Result<(), String> {
        if self.proto != Proto::Tcp {
            return Err("CONNECT opens TCP connections: --protocol tcp".into());
        }
        if self.socket.any() {
            return Err(
                "CONNECT's connections take the kernel's socket options: drop --window, --congestion, --mss, --no-delay and --zerocopy"
                    .into(),
            );
        }
        let rate = u64::from(self.mps).saturating_mul(u64::from(self.streams));
        if rate > limits::MAX_CONNECT_RATE {
            return Err(format!(
                "{rate} connections per second ({} per stream × {} streams) is out of range: at most {} per test",
                self.mps,
                self.streams,
                limits::MAX_CONNECT_RATE
            ));
        }
        Ok(())
    }

    fn validate_socket(&self) -> Result<(), String> {
        use limits::*;
        let s = &self.socket;
        if let Some(w) = s.window_bytes
            && !(MIN_WINDOW..=MAX_WINDOW).contains(&w)
        {
            return Err(format!(
                "a {w}-byte window is out of range: {MIN_WINDOW} bytes to {} MiB",
                MAX_WINDOW >> 20
            ));
        }
        if let Some(m) = s.mss_bytes
            && !(MIN_MSS..=MAX_MSS).contains(&m)
        {
            return Err(format!(
                "a {m}-byte MSS is out of range: {MIN_MSS} to {MAX_MSS} bytes"
            ));
        }
        let tcp_only = [
            (s.congestion.is_some(), "--congestion"),
            (s.mss_bytes.is_some(), "--mss"),
            (s.nodelay.is_some(), "--no-delay"),
            (s.zerocopy, "--zerocopy"),
        ];
        if self.proto == Proto::Udp
            && let Some((_, name)) = tcp_only.iter().find(|(asked, _)| *asked)
        {
            return Err(format!("{name} applies to TCP only"));
        }
        if s.zerocopy && self.kind != TestKind::Throughput {
            return Err("--zerocopy applies to THROUGHPUT (its senders)".into());
        }
        Ok(())
    }

    fn validate_amount(&self) -> Result<(), String> {
        use limits::*;
        let n = self.amount_per_stream;
        match self.kind {
            TestKind::Throughput if n > 0 && self.proto == Proto::Udp => Err(
                "a fixed amount applies to TCP streams and ping-pongs (a UDP receiver cannot tell the end from a loss)".into(),
            ),
            // The receiver counts every byte to the end: bytes queued in the warm-up would be
            // counted too.
            TestKind::Throughput if n > 0 && self.omit_ms > 0 => Err(
                "a stream's fixed amount is measured whole, from its first byte: no warm-up (--omit 0)".into(),
            ),
            TestKind::Throughput if n > MAX_AMOUNT_BYTES => Err(format!(
                "{n} bytes per stream is out of range: at most {} TiB",
                MAX_AMOUNT_BYTES >> 40
            )),
            TestKind::Latency | TestKind::Connect if n > MAX_AMOUNT_ROUND_TRIPS => Err(format!(
                "{n} round trips per stream is out of range: at most {MAX_AMOUNT_ROUND_TRIPS}"
            )),
            _ if self.sustain && (self.kind != TestKind::Throughput || self.proto != Proto::Tcp) => {
                Err("--sustain ends TCP streams once their goodput is steady (a UDP receiver cannot tell the end of a stream from a loss; a ping-pong has no goodput)".into())
            }
            _ if self.sustain && n > 0 => {
                Err("--sustain runs until steady, a fixed amount until it is moved: drop one".into())
            }
            TestKind::Throughput if self.mps > 0 => {
                Err("--mps paces ping-pongs (LATENCY); use --rate for UDP streams".into())
            }
            _ if self.mps > MAX_MPS => Err(format!(
                "{} round trips per second is out of range: at most {MAX_MPS} per stream",
                self.mps
            )),
            _ => Ok(()),
        }
    }

    /// The smallest and largest message of this test's transport and kind.
    pub fn message_range(&self) -> (u32, u32) {
        use limits::*;
        match (self.proto, self.kind) {
            (Proto::Tcp, TestKind::Connect) => (1, limits::MAX_CONNECT_MESSAGE),
            (Proto::Tcp, _) => (1, MAX_TCP_MESSAGE),
            (Proto::Udp, TestKind::Throughput) => (MIN_UDP_MESSAGE, MAX_UDP_MESSAGE),
            (Proto::Udp, TestKind::Latency) => (MIN_UDP_PING, MAX_UDP_MESSAGE),
            (Proto::Udp, TestKind::Connect) => (1, MAX_UDP_MESSAGE),
        }
    }
}

/// What one side measured in one test (one direction of a `bidir` test).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SideStats {
    /// Payload bytes sent and received in the measured window.
    pub bytes_sent: u64,
    pub bytes_received: u64,
    /// Messages (writes, datagrams or round trips) sent and received in the measured window.
    pub messages_sent: u64,
    pub messages_received: u64,
    /// Length of the measured window by this side's clock.
    pub window_ns: u64,
    /// UDP receiver: datagrams that arrived with a lower sequence number than one before them.
    pub out_of_order: u64,
    /// UDP receiver: RFC 3550 interarrival jitter at the end of the window, nanoseconds.
    pub jitter_ns: f64,
    /// UDP pings that got no pong in time.
    #[serde(default)]
    pub lost: u64,
    /// Zero-copy sends the kernel completed, and those of them it copied after all.
    #[serde(default)]
    pub zerocopy_sends: u64,
    #[serde(default)]
    pub zerocopy_copied: u64,
    /// `--sustain`, a sending side: when its streams' goodput was steady (the end of its first
    /// steady window, ns of its measured window); absent where it never was, and without
    /// `--sustain`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steady_ns: Option<u64>,
}

use crate::workload::net::MAX_BITS_PER_S;

/// Time beyond a test's warm-up and measured window that a peer's window or jitter may take
/// (a receiver draining its socket, a late sender's last write): generous.
const WINDOW_SLACK_MS: u64 = 60_000;

impl SideStats {
    /// Checks one side's figures that came from the peer, for the test `p`: a window no longer
    /// than the test (and, for a side whose rates are taken over its window, `windowed`, not
    /// empty when it counted bytes), jitter a time within it, and bytes and messages (each
    /// message at least one byte) at no more than [`MAX_BITS_PER_S`] over the window (over
    /// the whole test for a side that measures none: an echo, an acceptor).
    pub fn validate(&self, p: &TestParams, windowed: bool) -> Result<(), String> {
        let test_ns = p
            .omit_ms
            .saturating_add(p.duration_ms)
            .saturating_add(WINDOW_SLACK_MS)
            .saturating_mul(1_000_000);
        if self.window_ns > test_ns {
            return Err(format!(
                "a window of {:.3} s in a test of at most {:.3} s",
                self.window_ns as f64 / 1e9,
                test_ns as f64 / 1e9
            ));
        }
        if !(self.jitter_ns.is_finite() && (0.0..=test_ns as f64).contains(&self.jitter_ns)) {
            return Err(format!(
                "a jitter of {} ns in a test of at most {:.3} s",
                self.jitter_ns,
                test_ns as f64 / 1e9
            ));
        }
        let counts = [
            ("bytes sent", self.bytes_sent),
            ("bytes received", self.bytes_received),
            ("messages sent", self.messages_sent),
            ("messages received", self.messages_received),
            ("datagrams out of order", self.out_of_order),
            ("messages lost", self.lost),
            ("zero-copy sends", self.zerocopy_sends),
        ];
        let window_ns = match (self.window_ns, windowed) {
            (0, true) => {
                if let Some((what, n)) = counts.iter().find(|c| c.1 > 0) {
                    return Err(format!("{n} {what} in a window of 0 ns"));
                }
                return Ok(());
            }
            (0, false) => test_ns,
            (ns, _) => ns,
        };
        for (what, n) in counts {
            let bps = n as f64 * 8.0 / (window_ns as f64 / 1e9);
            if bps > MAX_BITS_PER_S {
                return Err(format!(
                    "{n} {what} in {:.9} s, {bps:.3e} bit/s: above {:.0e} bit/s, faster than any link or machine",
                    window_ns as f64 / 1e9,
                    MAX_BITS_PER_S
                ));
            }
        }
        if self.zerocopy_copied > self.zerocopy_sends {
            return Err("more zero-copy sends copied than sent".into());
        }
        if let Some(ns) = self.steady_ns {
            let most = p.duration_ms.saturating_mul(1_000_000);
            if !p.sustain || ns == 0 || ns > most {
                return Err(format!(
                    "a steady time of {:.3} s in a test of {:.3} s{}",
                    ns as f64 / 1e9,
                    most as f64 / 1e9,
                    if p.sustain { "" } else { " without --sustain" }
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
pub(super) fn sample() -> TestParams {
    TestParams {
        kind: TestKind::Throughput,
        proto: Proto::Udp,
        streams: 2,
        message_bytes: 1400,
        duration_ms: 1000,
        omit_ms: 100,
        reverse: true,
        rate_bps: 1_000_000,
        busy_poll_us: 50,
        bidir: false,
        socket: SocketOptions::default(),
        amount_per_stream: 0,
        mps: 0,
        load_streams: 0,
        sustain: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::socket::CcName;

    /// A peer's duration and omit that wrap around when added are refused, not let through
    /// under the 600 s limit (or a panic in a debug build).
    #[test]
    fn durations_that_overflow_are_refused() {
        for (duration_ms, omit_ms) in [(u64::MAX, 1), (1, u64::MAX), (u64::MAX - 5, 10)] {
            let p = TestParams {
                duration_ms,
                omit_ms,
                ..sample()
            };
            assert!(p.validate().is_err(), "{duration_ms} + {omit_ms}");
        }
        assert!(sample().validate().is_ok());
    }

    /// A peer's figures for its side: what real streams count passes (1.6 Tbit/s, an echo
    /// that measures no window), what no link or machine can do is refused with the figure.
    #[test]
    fn a_peers_side_figures_are_bounded() {
        let p = tcp();
        let second = 1_000_000_000;
        let honest = SideStats {
            bytes_received: 200_000_000_000,
            messages_received: 2_000_000,
            window_ns: second,
            jitter_ns: 0.0,
            ..Default::default()
        };
        assert_eq!(honest.validate(&p, true), Ok(()));
        let echo = SideStats {
            bytes_sent: 64_000_000,
            bytes_received: 64_000_000,
            messages_sent: 1_000_000,
            messages_received: 1_000_000,
            ..Default::default()
        };
        assert_eq!(echo.validate(&ping(), false), Ok(()));
        assert_eq!(SideStats::default().validate(&p, true), Ok(()));
        // 1.5×10^29 bit/s: every byte a u64 holds in one nanosecond.
        let absurd = SideStats {
            bytes_received: u64::MAX,
            window_ns: 1,
            ..honest
        };
        let lies = [
            absurd,
            SideStats {
                bytes_received: 2_000_000_000_000,
                ..honest
            },
            SideStats {
                window_ns: 0,
                ..honest
            },
            SideStats {
                window_ns: u64::MAX,
                ..honest
            },
            SideStats {
                jitter_ns: f64::NAN,
                ..honest
            },
            SideStats {
                jitter_ns: -1.0,
                ..honest
            },
            SideStats {
                messages_sent: u64::MAX,
                ..echo
            },
            SideStats {
                zerocopy_sends: 1,
                zerocopy_copied: 2,
                ..honest
            },
        ];
        for lie in lies {
            assert!(lie.validate(&p, true).is_err(), "{lie:?}");
        }
        let e = absurd.validate(&p, true).unwrap_err();
        assert!(
            e.contains("bytes received") && e.contains("1.476e29"),
            "{e}"
        );
        assert!(echo.validate(&ping(), true).is_err(), "a window of 0 ns");
        // --sustain's steady time: within the test's duration, and only under --sustain.
        let sustained = TestParams { sustain: true, ..p };
        let steady = |ns| SideStats {
            steady_ns: Some(ns),
            ..honest
        };
        assert_eq!(steady(second / 2).validate(&sustained, true), Ok(()));
        for (stats, params) in [
            (steady(second / 2), p),
            (steady(0), sustained),
            (steady(u64::MAX), sustained),
            (steady(p.duration_ms * 1_000_000 + 1), sustained),
        ] {
            assert!(stats.validate(&params, true).is_err(), "{stats:?}");
        }
    }

    /// `--sustain` is TCP throughput's, without a fixed amount; a test without it sends no
    /// field an older server would refuse.
    #[test]
    fn sustain_is_tcp_throughputs_and_sent_only_when_set() {
        let p = TestParams {
            sustain: true,
            ..tcp()
        };
        assert_eq!(p.validate(), Ok(()));
        let udp = TestParams {
            proto: Proto::Udp,
            message_bytes: 1400,
            ..p
        };
        let fixed = TestParams {
            amount_per_stream: 1 << 20,
            ..p
        };
        for bad in [udp, ping(), fixed].map(|t| TestParams { sustain: true, ..t }) {
            assert!(bad.validate().unwrap_err().contains("--sustain"), "{bad:?}");
        }
        let text = serde_json::to_string(&tcp()).unwrap();
        assert!(!text.contains("sustain"), "{text}");
        assert!(
            serde_json::to_string(&p)
                .unwrap()
                .contains("\"sustain\":true")
        );
    }

    /// A TCP stream without a warm-up, and a ping-pong.
    fn tcp() -> TestParams {
        TestParams {
            proto: Proto::Tcp,
            rate_bps: 0,
            reverse: false,
            omit_ms: 0,
            message_bytes: 128 << 10,
            ..sample()
        }
    }

    fn ping() -> TestParams {
        TestParams {
            kind: TestKind::Latency,
            streams: 1,
            reverse: false,
            message_bytes: 64,
            ..sample()
        }
    }

    #[test]
    fn validation_bounds_every_field() {
        let (tcp, ping) = (tcp(), ping());
        let opts = |socket: SocketOptions| TestParams { socket, ..tcp };
        let good = [
            sample(),
            tcp,
            ping,
            TestParams { bidir: true, ..tcp },
            TestParams {
                amount_per_stream: 1 << 30,
                omit_ms: 0,
                ..tcp
            },
            TestParams {
                amount_per_stream: 1_000_000,
                mps: 10_000,
                ..ping
            },
            opts(SocketOptions {
                window_bytes: Some(4 << 20),
                congestion: Some(CcName::new("cubic").unwrap()),
                mss_bytes: Some(1000),
                nodelay: Some(true),
                zerocopy: true,
            }),
        ];
        for p in good {
            assert!(p.validate().is_ok(), "{p:?}: {:?}", p.validate());
        }
        let bad = [
            TestParams {
                streams: 0,
                ..sample()
            },
            TestParams {
                streams: 10_000,
                ..sample()
            },
            TestParams {
                streams: 65,
                bidir: true,
                ..tcp
            },
            TestParams {
                message_bytes: 0,
                ..sample()
            },
            TestParams {
                message_bytes: 70_000,
                ..sample()
            },
            TestParams {
                message_bytes: u32::MAX,
                ..tcp
            },
            TestParams {
                streams: 128,
                message_bytes: 16 << 20,
                ..tcp
            },
            TestParams {
                streams: 64,
                bidir: true,
                message_bytes: 16 << 20,
                ..tcp
            },
            TestParams {
                duration_ms: 0,
                ..sample()
            },
            TestParams {
                duration_ms: u64::MAX / 2,
                ..sample()
            },
            TestParams {
                proto: Proto::Tcp,
                ..sample()
            },
            TestParams {
                kind: TestKind::Latency,
                ..sample()
            },
            TestParams {
                bidir: true,
                ..ping
            },
            TestParams {
                bidir: true,
                reverse: true,
                ..tcp
            },
            TestParams {
                busy_poll_us: 1_000_000,
                ..sample()
            },
            // Too short for the header and the cookie.
            TestParams {
                message_bytes: limits::MIN_UDP_MESSAGE - 1,
                ..sample()
            },
            TestParams {
                message_bytes: limits::MIN_UDP_PING - 1,
                ..ping
            },
        ];
        for p in bad {
            assert!(p.validate().is_err(), "{p:?}");
        }
    }

    #[test]
    fn socket_options_amounts_and_rates_are_bounded() {
        let (tcp, ping) = (tcp(), ping());
        let opts = |socket: SocketOptions| TestParams { socket, ..tcp };
        let bad = [
            // An absurd window, MSS, amount or rate.
            opts(SocketOptions {
                window_bytes: Some(u32::MAX),
                ..Default::default()
            }),
            opts(SocketOptions {
                window_bytes: Some(1),
                ..Default::default()
            }),
            opts(SocketOptions {
                mss_bytes: Some(65_536),
                ..Default::default()
            }),
            opts(SocketOptions {
                mss_bytes: Some(10),
                ..Default::default()
            }),
            TestParams {
                amount_per_stream: u64::MAX,
                ..tcp
            },
            TestParams {
                amount_per_stream: u64::MAX,
                ..ping
            },
            TestParams {
                amount_per_stream: 1 << 20,
                ..sample()
            },
            TestParams {
                amount_per_stream: 1 << 20,
                omit_ms: 1,
                ..tcp
            },
            TestParams {
                mps: u32::MAX,
                ..ping
            },
            TestParams { mps: 100, ..tcp },
            // TCP's options over UDP; zero-copy without a sender.
            TestParams {
                socket: SocketOptions {
                    congestion: Some(CcName::new("bbr").unwrap()),
                    ..Default::default()
                },
                ..sample()
            },
            TestParams {
                socket: SocketOptions {
                    nodelay: Some(false),
                    ..Default::default()
                },
                ..sample()
            },
            TestParams {
                socket: SocketOptions {
                    zerocopy: true,
                    ..Default::default()
                },
                proto: Proto::Tcp,
                ..ping
            },
        ];
        for p in bad {
            assert!(p.validate().is_err(), "{p:?}");
        }
    }
}
