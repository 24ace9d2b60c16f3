//! The reference tools' servers that `net serve --references` starts for a client: what a
//! client asks for ([`ToolRequest`]) and what starts them on the server ([`ToolServers`],
//! which the reference module implements); the client's session that holds them up is
//! [`client::start_tools`](super::client::start_tools).

use super::net_test::limits;
use crate::results::params::Proto;
use serde::{Deserialize, Serialize};
use std::net::IpAddr;

/// A reference tool whose servers `net serve --references` starts for one test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RefTool {
    Iperf3,
    Sockperf,
}

impl RefTool {
    pub fn name(self) -> &'static str {
        match self {
            RefTool::Iperf3 => "iperf3",
            RefTool::Sockperf => "sockperf",
        }
    }
}

/// What a client asks of `net serve --references`: `instances` servers of `tool` for `proto`,
/// for at most `seconds` (the run and its warm-up; the server stops them then, or when the
/// client says it is done or goes away).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolRequest {
    pub tool: RefTool,
    pub proto: Proto,
    pub instances: u32,
    pub seconds: u32,
}

impl ToolRequest {
    /// Checks every field against [`limits`]: iperf3 serves all of a test's streams with one
    /// server; sockperf gets one server per stream.
    pub fn validate(&self) -> Result<(), String> {
        use limits::*;
        let most = match self.tool {
            RefTool::Iperf3 => 1,
            RefTool::Sockperf => MAX_STREAMS,
        };
        if self.instances == 0 || self.instances > most {
            return Err(format!(
                "{} {} servers is out of range: 1 to {most}",
                self.instances,
                self.tool.name()
            ));
        }
        if self.seconds == 0 || u64::from(self.seconds) * 1000 > MAX_TEST_MS {
            return Err(format!(
                "a reference run of {} s is out of range: 1 to {} s",
                self.seconds,
                MAX_TEST_MS / 1000
            ));
        }
        Ok(())
    }
}

/// Starts a reference tool's servers for one test (`net serve --references`); the server
/// knows nothing of the tools themselves.
pub trait ToolServers: Send + Sync + std::fmt::Debug {
    /// Starts what `request` asks for, bound to `ip` (the address the client reached): the
    /// ports the servers listen on, and a guard that stops them (and waits for them) when
    /// dropped. The error is one line for the client.
    fn start(&self, request: &ToolRequest, ip: IpAddr)
    -> Result<(Vec<u16>, Box<dyn Send>), String>;

    /// What it can start, for the server's first lines.
    fn describe(&self) -> String;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reference tool's request is bounded: one iperf3 server, up to MAX_STREAMS sockperf
    /// servers, and no run longer than a test.
    #[test]
    fn tool_requests_are_bounded() {
        let ok = ToolRequest {
            tool: RefTool::Sockperf,
            proto: Proto::Tcp,
            instances: limits::MAX_STREAMS,
            seconds: 600,
        };
        assert!(ok.validate().is_ok());
        for bad in [
            ToolRequest { instances: 0, ..ok },
            ToolRequest {
                instances: limits::MAX_STREAMS + 1,
                ..ok
            },
            ToolRequest {
                tool: RefTool::Iperf3,
                instances: 2,
                ..ok
            },
            ToolRequest { seconds: 0, ..ok },
            ToolRequest { seconds: 601, ..ok },
            ToolRequest {
                seconds: u32::MAX,
                ..ok
            },
        ] {
            assert!(bad.validate().is_err(), "{bad:?}");
        }
    }
}
