//! The network workloads as users type them and what each is (its [`Spec`]).

use super::spec::{ChartKind, Spec, Work};
use crate::ids::{Metric, Subsystem, Tool};

super::spec::workloads! {
    /// A network workload, as users type it.
    pub enum NetWorkload ("network") {
        /// Goodput of bulk streams; UDP loss and jitter.
        Throughput = "THROUGHPUT",
        /// Ping-pong round trips.
        Latency = "LATENCY",
        /// A TCP connection per request: connect, request, response, close (netperf TCP_CRR).
        Connect = "CONNECT",
    }
}

impl NetWorkload {
    /// What it is, everything every reader needs (see [`Spec`]).
    pub const fn spec(self) -> Spec {
        let (what, metrics, references, charts, default): (
            _,
            &[Metric],
            &[Tool],
            &[ChartKind],
            bool,
        ) = match self {
            NetWorkload::Throughput => (
                "goodput; UDP loss and jitter",
                &[Metric::Throughput, Metric::Loss, Metric::Jitter],
                &[Tool::Iperf3],
                &[
                    ChartKind::Sweeps,
                    ChartKind::Intervals,
                    ChartKind::Efficiency,
                ],
                true,
            ),
            NetWorkload::Latency => (
                "ping-pong round trips",
                &[Metric::Latency, Metric::Rate],
                &[Tool::Sockperf, Tool::Qperf, Tool::Ping],
                &[
                    ChartKind::Sweeps,
                    ChartKind::Percentiles,
                    ChartKind::Efficiency,
                ],
                true,
            ),
            NetWorkload::Connect => (
                "TCP connections per second, each opened, one request and response, closed",
                &[Metric::Rate, Metric::Latency],
                &[],
                &[ChartKind::Sweeps, ChartKind::Percentiles],
                false,
            ),
        };
        Spec {
            subsystem: Subsystem::Net,
            name: self.name(),
            what,
            default,
            metrics,
            references,
            charts,
            work: Work::Messages,
        }
    }
}

/// The fastest a side's figures may say it moved data, bit/s: 10 Tbit/s. The fastest link
/// there is carries 1.6 Tbit/s (800GbE ×2), and loopback copies every byte at least twice
/// through memory, which no machine does at 2.5 TB/s; a peer that reports more is wrong or
/// lying.
pub const MAX_BITS_PER_S: f64 = 1e13;
