//! The client's side of one test: the control conversation (see `protocol.rs`) around the
//! client's streams, and both sides' figures at the end.

use super::roles::{self, SideResult};
use super::streams::{UDP_GRACE, Window};
use super::transport;
use crate::results::params::CpuUse;
use crate::results::socket::SocketState;
use crate::wire::client::{self, NetError, REPLY_TIMEOUT, Target, expect, reply};
use crate::wire::frame::{self, FrameError};
use crate::wire::net_test::{SideStats, TestKind, TestParams};
use crate::wire::protocol::{self, Msg};
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

/// Both sides' figures of one test.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub client: SideResult,
    pub server: SideStats,
    /// A `bidir` test: the figures of the streams the server sends on (`client` and `server`
    /// are those of the streams the client sends on).
    pub client_second: Option<SideResult>,
    pub server_second: Option<SideStats>,
    /// The client's first data socket as the kernel held it at the end of the test.
    pub socket: Option<SocketState>,
    /// The server's, as it reported it.
    pub server_socket: Option<Box<SocketState>>,
    /// The CPU the test cost on this machine, from the start of the transfer to its end.
    pub cpu: CpuUse,
    /// What it cost the server's machine, as the server reported it.
    pub server_cpu: Option<Box<CpuUse>>,
}

/// Runs one test against the server at `target`.
pub fn run_test(target: &Target, params: &TestParams) -> Result<Outcome, NetError> {
    let ctl = client::connect(target)?;
    let mut out = &ctl;
    protocol::send(&mut out, &Msg::Setup { params: *params })?;
    let (ports, cookie) = match reply(&ctl)? {
        Msg::Ready { data_ports, cookie } => (data_ports, cookie),
        other => return Err(expect(other, "ready")),
    };
    let attached = transport::connect(params, target.addr.ip(), &ports, cookie)?;
    protocol::send(&mut out, &Msg::Connected)?;
    // UDP hellos can be lost: resend them until the server has seen every stream.
    let until = Instant::now() + REPLY_TIMEOUT;
    loop {
        attached.hello(cookie);
        if frame::readable(&ctl, Duration::from_millis(50)) {
            match reply(&ctl)? {
                Msg::Go => break,
                other => return Err(expect(other, "go")),
            }
        }
        if Instant::now() >= until {
            return Err(FrameError::Timeout.into());
        }
    }
    let w = Window {
        start: Instant::now(),
        omit: Duration::from_millis(params.omit_ms),
        duration: Duration::from_millis(params.duration_ms),
    };
    protocol::send(&mut out, &Msg::Start)?;
    let stop = AtomicBool::new(false);
    let probe = attached.probe();
    let before = crate::measure::cpu_usage::snapshot();
    let sides = roles::run_end(attached, params, false, w, cookie, &stop);
    // Cut short, the streams ended early: the server's figures are not waited for (dropping
    // the control connection ends its side).
    if crate::runner::stop::cut_short() {
        return Err(NetError::Interrupted);
    }
    let sides = sides?;
    let cpu = before.until(&crate::measure::cpu_usage::snapshot());
    let socket = probe.map(|p| {
        p.read_with_rtt().with_zerocopy(
            params.socket.zerocopy,
            sides.first.stats.zerocopy_sends,
            sides.first.stats.zerocopy_copied,
        )
    });
    protocol::send(
        &mut out,
        &Msg::Done {
            stats: sides.first.stats,
            second: sides.second.as_ref().map(|s| s.stats),
        },
    )?;
    let results = protocol::recv_until(&ctl, Instant::now() + UDP_GRACE + REPLY_TIMEOUT)?;
    let Msg::Results {
        stats,
        second,
        cpu: server_cpu,
        socket: server_socket,
    } = results
    else {
        return Err(expect(results, "results"));
    };
    // The server's word, checked: figures no machine can have are refused.
    let lie = |what: &str, e: String| NetError::Refused(format!("the server sent {what}: {e}"));
    if let Some(c) = &server_cpu {
        c.validate().map_err(|e| lie("impossible CPU figures", e))?;
    }
    if let Some(s) = &server_socket {
        s.validate()
            .map_err(|e| lie("impossible socket figures", e))?;
    }
    if second.is_some() != (params.bidir || params.load_streams > 0) {
        return Err(lie(
            "figures of the wrong shape",
            "two sets with --bidir or a load, one otherwise".into(),
        ));
    }
    // Its streams' figures: a throughput stream's rates are taken over its window (the
    // second set is always one: --bidir's other way, or the load's bulk streams).
    stats
        .validate(params, params.kind == TestKind::Throughput)
        .map_err(|e| lie("impossible figures for its side", e))?;
    if let Some(s) = &second {
        s.validate(params, true)
            .map_err(|e| lie("impossible figures for its side", e))?;
    }
    Ok(Outcome {
        client: sides.first,
        server: stats,
        client_second: sides.second,
        server_second: second,
        socket,
        server_socket,
        cpu,
        server_cpu,
    })
}
