//! `peakbench net` once its arguments are read: the request (the benchmark's options, the
//! vocabulary the command line builds it from), checked, estimated and run point by point into
//! a recorder; and `net serve`.

use super::Recorder;
use crate::bench::net::server::Server;
use crate::bench::net::{NetPoint, NetSession, points, resolve};
use crate::error::UsageError;
use crate::runner::stop;
use crate::units::format_bytes_binary;
use crate::wire::client::{NetError, Target};
use std::net::SocketAddr;

pub use crate::bench::net::server::ServerConfig;
pub use crate::bench::net::sockopt::check_congestion;
pub use crate::bench::net::{NetOptions, NetWorkload, Proto, estimate};
pub use crate::results::socket::SocketOptions;
pub use crate::wire::net_test::limits;
pub use crate::wire::protocol::{DEFAULT_PORT, PROTOCOL_VERSION};
pub use crate::wire::tools::ToolServers;

/// A user error (2), a failure (1) or an interruption (130).
fn classify(e: NetError) -> anyhow::Error {
    if matches!(e, NetError::Interrupted) {
        anyhow::Error::new(crate::error::Interrupted)
    } else if e.is_usage() {
        anyhow::Error::new(UsageError(e.to_string()))
    } else {
        anyhow::Error::new(e)
    }
}

/// Checks every point of `opts` against the protocol's limits (nothing is sent) and resolves
/// the server's address (it is not contacted).
pub fn validate(opts: &NetOptions, server: Option<&str>) -> anyhow::Result<()> {
    for p in &points(opts) {
        p.params.validate().map_err(UsageError)?;
    }
    if let Some(s) = server {
        resolve(s).map_err(classify)?;
    }
    Ok(())
}

/// Serves tests on `addr` until Ctrl-C.
pub fn serve(addr: SocketAddr, config: ServerConfig) -> anyhow::Result<()> {
    let server = Server::bind(addr, config).map_err(|e| {
        UsageError(format!(
            "cannot listen on {addr}: {e}; choose another --port or --bind"
        ))
    })?;
    stop::graceful();
    eprintln!(
        "peakbench net serve: listening on {} (protocol version {PROTOCOL_VERSION}); Ctrl-C stops",
        server.local_addr()?,
    );
    if let Some(tools) = &server.config().tools {
        eprintln!(
            "peakbench net serve: starts for a client's --reference: {}",
            tools.describe()
        );
    }
    server.serve(stop::flag())?;
    eprintln!("peakbench net serve: stopped");
    Ok(())
}

/// A network client's request: the points, the server (None: a server in this process, on
/// loopback) and the shared secret.
pub struct NetRequest {
    pub opts: NetOptions,
    pub server: Option<String>,
    pub token: Option<String>,
    /// `--diagnose`: each point below 90 % of its peak measured once more with the knob of its
    /// first cause changed.
    pub diagnose: bool,
}

impl super::Request for NetRequest {
    /// The server's address is resolved, not contacted.
    fn check(&self, _: &crate::sysinfo::SystemInfo) -> anyhow::Result<std::time::Duration> {
        validate(&self.opts, self.server.as_deref())?;
        Ok(estimate(&self.opts))
    }

    fn run(self: Box<Self>, rec: &mut Recorder) -> anyhow::Result<()> {
        let from = rec.results().len();
        run(
            self.opts.clone(),
            self.server.as_deref(),
            self.token.clone(),
            rec,
        )?;
        if self.diagnose {
            diagnose_again(&self, rec, from)?;
        }
        Ok(())
    }

    /// Its duration (a fixed amount ends sooner, as the user asked).
    fn least_timed(&self, _: &crate::sysinfo::SystemInfo) -> Option<std::time::Duration> {
        Some(self.opts.duration)
    }

    fn planned(&self, _: &crate::sysinfo::SystemInfo) -> Vec<crate::results::ResultRecord> {
        super::planned::net(&self.opts, self.server.as_deref())
    }
}

/// `--diagnose` ([`super::diagnose`]): a TCP stream's `window` asked with `--window` measured
/// again with the kernel's own (autotuned) window, on the point alone (its receiver's record
/// stands for the point).
fn diagnose_again(req: &NetRequest, rec: &mut Recorder, from: usize) -> anyhow::Result<()> {
    let asked = req.opts.socket.window_bytes;
    let knob = |r: &crate::results::ResultRecord, cause: &str| {
        let (crate::workload::Workload::Net(w), Some(n)) = (r.workload, r.params.net()) else {
            return None;
        };
        let receiver = n.side == Some(crate::results::params::Side::Receiver);
        (cause == "window" && asked.is_some() && receiver).then(|| {
            (
                "the kernel's own window (no --window)".to_string(),
                NetRequest {
                    opts: NetOptions {
                        workloads: vec![w],
                        protocols: vec![n.protocol],
                        streams: vec![n.streams],
                        message_sizes: Some(vec![n.message_size_bytes]),
                        socket: SocketOptions {
                            window_bytes: None,
                            ..req.opts.socket
                        },
                        ..req.opts.clone()
                    },
                    server: req.server.clone(),
                    token: req.token.clone(),
                    diagnose: false,
                },
            )
        })
    };
    super::diagnose::again(rec, from, "net", knob, |r: &NetRequest, rec| {
        run(r.opts.clone(), r.server.as_deref(), r.token.clone(), rec)
    })
}

/// Measures the client points of `opts` against `server` (None: a server in this process, on
/// loopback) into `rec`.
fn run(
    opts: NetOptions,
    server: Option<&str>,
    token: Option<String>,
    rec: &mut Recorder,
) -> anyhow::Result<()> {
    let pts = points(&opts);
    rec.set_net_token(token.clone());
    let session = match server {
        Some(s) => NetSession::remote(
            opts.clone(),
            Target {
                addr: resolve(s).map_err(classify)?,
                token,
            },
        ),
        None => NetSession::loopback(opts.clone(), token)
            .map_err(|e| anyhow::anyhow!("cannot start the loopback server: {e}"))?,
    };
    rec.system();
    rec.announce(
        "net",
        &format!(
            "server {}{}, link {}, {} of {} {}",
            session.target().addr,
            if server.is_none() {
                " (in this process)"
            } else {
                ""
            },
            match session.link() {
                Ok(l) => format!(
                    "{} (MTU {})",
                    l.interface,
                    l.mtu.map_or("unknown".into(), |m| m.to_string())
                ),
                Err(e) => format!("unknown ({e})"),
            },
            super::repetitions(opts.repeat, opts.precision),
            match (opts.total_bytes, opts.count) {
                (None, None) => match opts.sustain {
                    Some(d) => format!(
                        "~{:?} (THROUGHPUT: {})",
                        opts.duration,
                        super::repetition_time(d, true).trim_end_matches(',')
                    ),
                    None => super::repetition_time(opts.duration, false),
                },
                (bytes, trips) => format!(
                    "{}{}{} (each at most {:?}){}",
                    bytes.map_or(String::new(), |b| format!(
                        "{} of payload",
                        format_bytes_binary(b)
                    )),
                    if bytes.is_some() && trips.is_some() {
                        ", "
                    } else {
                        ""
                    },
                    trips.map_or(String::new(), |n| format!("{n} round trips")),
                    opts.amount_bound.unwrap_or_else(|| {
                        std::time::Duration::from_millis(limits::MAX_TEST_MS)
                            .saturating_sub(opts.omit)
                    }),
                    // The workloads without an amount run by time.
                    if opts
                        .workloads
                        .iter()
                        .any(|w| opts.amount_per_stream(*w, 1) == 0)
                    {
                        format!(", the others {:?}", opts.duration)
                    } else {
                        String::new()
                    }
                ),
            },
            if opts.omit.is_zero()
                || (opts.total_bytes.is_some() && !opts.workloads.contains(&NetWorkload::Latency))
            {
                "with no warm-up".to_string()
            } else if opts.total_bytes.is_some() {
                format!("(LATENCY after a {:?} warm-up)", opts.omit)
            } else {
                format!("after a {:?} warm-up", opts.omit)
            }
        ),
        Some(estimate(&opts)),
    );
    let server = session.target().addr.to_string();
    let mut run = NetRun { session, server };
    rec.drive(&pts, &mut run)
}

/// A network run's points as the recorder drives them.
struct NetRun {
    session: NetSession,
    /// The server's address, as the records name it.
    server: String,
}

impl super::session::Session for NetRun {
    type Point = NetPoint;

    fn rounds(&self, _: &NetPoint) -> u64 {
        self.session.opts().repeat as u64
    }

    fn repeat(&self) -> usize {
        self.session.opts().repeat
    }

    fn set_repeat(&mut self, repeat: usize) {
        self.session.set_repeat(repeat);
    }

    fn precision(&self) -> Option<crate::measure::precision::Precision> {
        self.session.opts().precision
    }

    fn planned(&self, p: &NetPoint) -> Vec<crate::results::ResultRecord> {
        super::planned::net_point(
            self.session.as_run(*p),
            self.session.opts(),
            Some(&self.server),
        )
    }

    fn run(
        &mut self,
        p: NetPoint,
        tick: &mut dyn FnMut(),
    ) -> anyhow::Result<Vec<crate::results::ResultRecord>> {
        self.session.run(p, tick).map_err(classify)
    }
}
