//! The streams' unit tests: senders and receivers over loopback (polling or sleeping, fixed
//! amounts, a receiver stalled across its window's start), ping-pongs, pacing.

use super::*;
use std::net::{TcpListener, TcpStream, UdpSocket};

const COOKIE: u64 = 0x0123_4567_89ab_cdef;

/// A timed receiver's figures: `recv_loop` with this test's cookie, never stopped.
fn receive<C: Channel>(rx: &mut C, buf: &mut [u8], w: Window, poll: Duration) -> SideStats {
    recv_loop(
        rx,
        buf,
        w,
        poll,
        false,
        COOKIE,
        &AtomicBool::new(false),
        &mut Timeline::default(),
    )
    .unwrap()
}

fn window(ms: u64) -> Window {
    Window {
        start: Instant::now(),
        omit: Duration::from_millis(ms / 4),
        duration: Duration::from_millis(ms),
    }
}

#[test]
fn udp_receiver_counts_flagged_datagrams_and_orders() {
    let a = UdpSocket::bind("127.0.0.1:0").unwrap();
    let b = UdpSocket::bind("127.0.0.1:0").unwrap();
    a.connect(b.local_addr().unwrap()).unwrap();
    b.connect(a.local_addr().unwrap()).unwrap();
    let stop = AtomicBool::new(false);
    let w = window(200);
    let mut rx = b.try_clone().unwrap();
    let recv = std::thread::spawn(move || {
        let mut buf = vec![0u8; 1400];
        let poll = Duration::from_micros(50);
        receive(&mut rx, &mut buf, w, poll)
    });
    let mut tx = a.try_clone().unwrap();
    let mut buf = vec![0u8; 1400];
    // 10 Mbit/s: light enough that nothing is lost on loopback.
    let sent = send_loop(
        &mut tx,
        &mut buf,
        w,
        Plan {
            rate_bps: 10_000_000,
            ..Plan::default()
        },
        COOKIE,
        &stop,
        &mut Timeline::default(),
    )
    .unwrap();
    let got = recv.join().unwrap();
    assert!(sent.messages_sent > 50, "{sent:?}");
    assert_eq!(
        got.messages_received, sent.messages_sent,
        "{got:?} {sent:?}"
    );
    assert_eq!(got.bytes_received, sent.bytes_sent);
    assert_eq!(got.out_of_order, 0);
    assert!(got.jitter_ns >= 0.0 && got.jitter_ns < 50e6);
    // ~10 Mbit/s over the measured window: a pacer that catches up after a stall sends no
    // more than the whole test's schedule (its warm-up's too) in the window, and one datagram.
    let rate = sent.bytes_sent as f64 * 8.0 / (sent.window_ns as f64 / 1e9);
    let schedule = 10e6 * (w.omit + w.duration).as_secs_f64() / w.duration.as_secs_f64();
    let one = 1400.0 * 8.0 / w.duration.as_secs_f64();
    assert!(
        rate > 5e6 && rate <= schedule + one,
        "{rate} (at most {schedule} + {one})"
    );
}

#[test]
fn udp_receiver_sees_reordering_and_jitter() {
    let a = UdpSocket::bind("127.0.0.1:0").unwrap();
    let b = UdpSocket::bind("127.0.0.1:0").unwrap();
    a.connect(b.local_addr().unwrap()).unwrap();
    let w = Window {
        start: Instant::now() - Duration::from_millis(1),
        omit: Duration::ZERO,
        duration: Duration::from_millis(100),
    };
    let datagram = |seq: u64, sent_ns: u64, cookie: u64| {
        let mut d = vec![0u8; 100];
        d[0..8].copy_from_slice(&seq.to_be_bytes());
        d[8..16].copy_from_slice(&sent_ns.to_be_bytes());
        d[16..20].copy_from_slice(&MEASURED.to_be_bytes());
        d[20..24].copy_from_slice(&MAGIC.to_be_bytes());
        d[24..32].copy_from_slice(&cookie.to_be_bytes());
        d
    };
    // 0, 2, 1, 3: one datagram late; send times far apart so that transit varies.
    for (seq, ns) in [(0, 0), (2, 2_000_000), (1, 1_000_000), (3, 3_000_000)] {
        a.send(&datagram(seq, ns, COOKIE)).unwrap();
    }
    a.send(b"not a datagram of ours").unwrap();
    // Well-formed but without this test's cookie: injected by someone else.
    for seq in 4..20 {
        a.send(&datagram(seq, 4_000_000, COOKIE ^ 1)).unwrap();
    }
    let mut rx = b;
    let mut buf = vec![0u8; 100];
    let st = receive(&mut rx, &mut buf, w, Duration::ZERO);
    assert_eq!(st.messages_received, 4);
    assert_eq!(st.out_of_order, 1);
    assert!(st.jitter_ns > 0.0);
}

#[test]
fn one_thread_sends_on_several_tcp_streams() {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    let mut senders: Vec<TcpStream> = (0..3).map(|_| TcpStream::connect(addr).unwrap()).collect();
    let receivers: Vec<_> = (0..3)
        .map(|_| {
            let (mut s, _) = l.accept().unwrap();
            std::thread::spawn(move || {
                let mut buf = vec![0u8; 64 * 1024];
                let mut total = 0u64;
                loop {
                    match std::io::Read::read(&mut s, &mut buf) {
                        Ok(0) | Err(_) => return total,
                        Ok(n) => total += n as u64,
                    }
                }
            })
        })
        .collect();
    let w = Window {
        start: Instant::now(),
        omit: Duration::ZERO,
        duration: Duration::from_millis(200),
    };
    let buf = vec![7u8; 128 * 1024];
    let st = send_many(
        &mut senders,
        &buf,
        w,
        Plan::default(),
        &AtomicBool::new(false),
        &mut Timeline::default(),
    )
    .unwrap();
    // Every stream got data, the streams end with EOF, and nothing was counted twice.
    let got: Vec<u64> = receivers.into_iter().map(|r| r.join().unwrap()).collect();
    assert!(got.iter().all(|&g| g > 0), "{got:?}");
    assert_eq!(got.iter().sum::<u64>(), st.bytes_sent, "{got:?} {st:?}");
    assert!(
        st.messages_sent >= 3 && st.window_ns >= 200_000_000,
        "{st:?}"
    );
}

/// A TCP stream whose reader stalls once, for `stall`, at its second read (after one that
/// looked at the socket, however late the test's thread got there): a receiver that the
/// scheduler did not run as its window opened.
struct Stalled {
    inner: TcpStream,
    reads: u32,
    stall: Option<Duration>,
}

impl Channel for Stalled {
    const CAPS: crate::bench::net::transport::Caps = TcpStream::CAPS;
    fn send(&mut self, buf: &[u8]) -> io::Result<usize> {
        Channel::send(&mut self.inner, buf)
    }
    fn recv(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.reads += 1;
        if self.reads == 2
            && let Some(stall) = self.stall.take()
        {
            std::thread::sleep(stall);
        }
        Channel::recv(&mut self.inner, buf)
    }
    fn set_recv_timeout(&mut self, t: Option<Duration>) -> io::Result<()> {
        Channel::set_recv_timeout(&mut self.inner, t)
    }
    fn set_send_timeout(&mut self, t: Option<Duration>) -> io::Result<()> {
        Channel::set_send_timeout(&mut self.inner, t)
    }
    fn finish(&mut self) {
        Channel::finish(&mut self.inner)
    }
    fn set_nonblocking(&mut self, on: bool) -> io::Result<()> {
        Channel::set_nonblocking(&mut self.inner, on)
    }
    fn fd(&self) -> std::os::fd::RawFd {
        Channel::fd(&self.inner)
    }
    fn peer_is_loopback(&self) -> bool {
        true
    }
}

/// A receiver stalled across its window's start (its first read timed out at about 100 ms,
/// its second slept to about 500 ms; the window opens at 300 ms) does not count the 32 KB
/// that arrived at 200 ms, before the window: only the 50 KB sent at 800 ms, over the window
/// from its first read inside.
#[test]
fn a_tcp_receiver_stalled_at_the_windows_start_counts_no_backlog() {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let mut tx = TcpStream::connect(l.local_addr().unwrap()).unwrap();
    let (rx, _) = l.accept().unwrap();
    let w = Window {
        start: Instant::now(),
        omit: Duration::from_millis(300),
        duration: Duration::from_millis(900),
    };
    let sender = std::thread::spawn(move || {
        for (at, bytes) in [(200, 32_000), (800, 50_000)] {
            let due = w.start + Duration::from_millis(at);
            if let Some(ahead) = due.checked_duration_since(Instant::now()) {
                std::thread::sleep(ahead);
            }
            std::io::Write::write_all(&mut tx, &vec![7u8; bytes]).unwrap();
        }
        tx.finish();
    });
    let mut rx = Stalled {
        inner: rx,
        reads: 0,
        stall: Some(Duration::from_millis(400)),
    };
    let mut buf = vec![0u8; 64 * 1024];
    let st = receive(&mut rx, &mut buf, w, Duration::ZERO);
    sender.join().unwrap();
    assert_eq!(st.bytes_received, 50_000, "{st:?}");
    // The window from the first read inside, at about 500 ms, to its end at 1200 ms; not the
    // whole 900 ms from 300 ms.
    assert!((400_000_000..850_000_000).contains(&st.window_ns), "{st:?}");
}

#[test]
fn tcp_receiver_gets_everything_polling_or_sleeping() {
    for poll in [Duration::ZERO, Duration::from_micros(50)] {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let mut tx = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (mut rx, _) = l.accept().unwrap();
        let w = Window {
            start: Instant::now(),
            omit: Duration::ZERO,
            duration: Duration::from_secs(5),
        };
        let sender = std::thread::spawn(move || {
            // Bursts with pauses, so that the receiver finds its socket empty.
            for _ in 0..20 {
                std::io::Write::write_all(&mut tx, &[1u8; 50_000]).unwrap();
                std::thread::sleep(Duration::from_millis(2));
            }
            tx.finish();
        });
        let mut buf = vec![0u8; 64 * 1024];
        let st = receive(&mut rx, &mut buf, w, poll);
        sender.join().unwrap();
        assert_eq!(st.bytes_received, 1_000_000, "busy poll {poll:?}");
    }
}

#[test]
fn tcp_ping_pong_records_every_round_trip() {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    let server = std::thread::spawn(move || {
        let (mut s, _) = l.accept().unwrap();
        let mut buf = vec![0u8; 64];
        echo_loop(
            &mut s,
            &mut buf,
            Instant::now() + Duration::from_secs(5),
            COOKIE,
            &AtomicBool::new(false),
        )
        .unwrap()
    });
    let mut c = TcpStream::connect(addr).unwrap();
    c.set_nodelay(true).unwrap();
    let mut hist = crate::measure::latency::histogram();
    let (mut buf, mut reply) = (vec![7u8; 64], vec![0u8; 64]);
    let st = ping_loop(
        &mut c,
        &mut buf,
        &mut reply,
        window(100),
        Plan::default(),
        &mut hist,
        COOKIE,
        &AtomicBool::new(false),
    )
    .unwrap();
    drop(c);
    let echoed = server.join().unwrap();
    assert!(st.messages_received > 10, "{st:?}");
    assert_eq!(hist.len(), st.messages_received);
    assert!(echoed.messages_sent >= st.messages_received);
    assert_eq!(reply, buf);
    assert!(hist.value_at_quantile(0.5) > 0);
}

/// A UDP echo returns only pings of its own test: a stranger's pings (without the cookie)
/// get no answer.
#[test]
fn a_udp_echo_ignores_pings_without_the_cookie() {
    let server = UdpSocket::bind("127.0.0.1:0").unwrap();
    let client = UdpSocket::bind("127.0.0.1:0").unwrap();
    client.connect(server.local_addr().unwrap()).unwrap();
    server.connect(client.local_addr().unwrap()).unwrap();
    let mut ping = vec![0u8; 64];
    ping[8..16].copy_from_slice(&(COOKIE ^ 0xff).to_be_bytes());
    client.send(&ping).unwrap();
    ping[8..16].copy_from_slice(&COOKIE.to_be_bytes());
    client.send(&ping).unwrap();
    let mut rx = server;
    let mut buf = vec![0u8; 64];
    let deadline = Instant::now() + Duration::from_millis(300);
    let st = echo_loop(&mut rx, &mut buf, deadline, COOKIE, &AtomicBool::new(false)).unwrap();
    assert_eq!(st.messages_sent, 1, "{st:?}");
}

/// A sender and an echo whose peer never reads give up at their deadlines instead of
/// blocking forever in a full socket buffer (issue 16, item 7).
#[test]
fn a_peer_that_never_reads_cannot_hold_a_stream() {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    // The peer connects and never reads (kept open to the end of the test).
    let _peer = TcpStream::connect(addr).unwrap();
    let (mut tx, _) = l.accept().unwrap();
    let t0 = Instant::now();
    let w = window(200);
    let mut buf = vec![1u8; 1 << 20];
    let st = send_loop(
        &mut tx,
        &mut buf,
        w,
        Plan::default(),
        COOKIE,
        &AtomicBool::new(false),
        &mut Timeline::default(),
    )
    .unwrap();
    assert!(st.bytes_sent > 0);
    // A hang's bound (the window is 200 ms; blocked in the full buffer, it would never end).
    assert!(t0.elapsed() < Duration::from_secs(10), "{:?}", t0.elapsed());
    // An echo of 16 MiB messages to a pinger that does not read its pongs.
    let (done, held) = std::sync::mpsc::channel::<()>();
    let pinger = std::thread::spawn(move || {
        let mut p = TcpStream::connect(addr).unwrap();
        let _ = std::io::Write::write_all(&mut p, &vec![2u8; 16 << 20]);
        // Holds the connection open without reading, until the echo has given up (at most
        // 30 s: an echo that ignored its deadline would end only when this connection does).
        let _ = held.recv_timeout(Duration::from_secs(30));
    });
    let (mut echo, _) = l.accept().unwrap();
    let mut big = vec![0u8; 16 << 20];
    let t0 = Instant::now();
    let deadline = Instant::now() + Duration::from_millis(500);
    let e = echo_loop(
        &mut echo,
        &mut big,
        deadline,
        COOKIE,
        &AtomicBool::new(false),
    );
    assert!(e.is_err(), "{e:?}");
    // The deadline is 500 ms; the pinger holds its end 30 s: well before that is the deadline.
    assert!(t0.elapsed() < Duration::from_secs(15), "{:?}", t0.elapsed());
    let _ = done.send(());
    drop(echo);
    pinger.join().unwrap();
}
