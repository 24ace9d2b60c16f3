//! Where a network point's reference tool runs: over loopback, its servers are started here;
//! against a peakbench server on another address, that server starts them for the run when it
//! was started with `--references` (see the control protocol's `ToolSetup`), bound to the
//! address the client reached, and stops them after.
//!
//! Both sides start a tool's servers with [`start_servers`]: iperf3's one server serves all of
//! a point's streams (`-P`), sockperf gets one server per stream, each client against its own.

use super::process::{LOOPBACK, Server, Transport};
use super::{Availability, Locator, RefError, Tool};
use crate::results::params::{NetParams, Proto};
use crate::wire::client::{self, NetError, Target};
use crate::wire::net_test::limits::MAX_STREAMS;
use crate::wire::tools::{RefTool, ToolRequest, ToolServers};
use std::net::{IpAddr, SocketAddr};
use std::path::Path;
use std::process::Command;

/// The tool a request names.
fn tool_of(t: RefTool) -> Tool {
    match t {
        RefTool::Iperf3 => Tool::Iperf3,
        RefTool::Sockperf => Tool::Sockperf,
    }
}

/// The peakbench server a point measured against, when it is not on loopback (None: the
/// tool's servers run here, on 127.0.0.1).
pub fn remote_of(p: &NetParams, tool: Tool) -> Result<Option<SocketAddr>, RefError> {
    match p.server.as_deref() {
        None => Ok(None),
        Some(s) => match s.parse::<SocketAddr>() {
            Ok(addr) if addr.ip().is_loopback() => Ok(None),
            Ok(addr) => Ok(Some(addr)),
            Err(_) => Err(RefError::unsupported(
                tool,
                format!("the point's server {s:?} is not an address and port"),
            )),
        },
    }
}

/// The streams of a point, for a tool that runs one client per stream: 1 to the protocol's
/// most.
pub(super) fn streams_of(p: &NetParams, tool: Tool) -> Result<u64, RefError> {
    if p.streams == 0 || p.streams > MAX_STREAMS {
        return Err(RefError::unsupported(
            tool,
            format!(
                "the point ran {} streams; {} runs 1 to {MAX_STREAMS} at once",
                p.streams,
                tool.name()
            ),
        ));
    }
    Ok(p.streams.into())
}

/// The network parameters of a point that one ping-pong over loopback repeats (sockperf,
/// qperf, ping): refused over another address, and with `refusal(streams)` when the point ran
/// several streams at once.
pub(super) fn single_stream_loopback(
    rec: &crate::results::ResultRecord,
    tool: Tool,
    refusal: impl FnOnce(u32) -> String,
) -> Result<&NetParams, RefError> {
    let p = super::params_of(rec, tool, |p| p.net())?;
    require_loopback(p, tool)?;
    if p.streams > 1 {
        return Err(RefError::unsupported(tool, refusal(p.streams)));
    }
    Ok(p)
}

pub(super) fn require_loopback(p: &NetParams, tool: Tool) -> Result<(), RefError> {
    match remote_of(p, tool)? {
        None => Ok(()),
        Some(addr) => Err(RefError::unsupported(
            tool,
            format!("it runs over loopback only, and this point measured {addr}"),
        )),
    }
}

/// The arguments of the server of `tool` for `proto` on `ip`:`port`.
fn server_argv(tool: RefTool, proto: Proto, ip: IpAddr, port: u16) -> Vec<String> {
    let (ip, port) = (ip.to_string(), port.to_string());
    match tool {
        // One test, then exit (it is killed after the run in any case).
        RefTool::Iperf3 => ["-s", "-1", "-B", &ip, "-p", &port]
            .map(String::from)
            .to_vec(),
        RefTool::Sockperf => {
            let mut a = vec!["server".to_string()];
            if proto == Proto::Tcp {
                a.push("--tcp".into());
            }
            a.extend(["-i".into(), ip, "-p".into(), port]);
            a
        }
    }
}

/// Starts the servers `request` asks for, of the tool at `program`, bound to `ip`: their ports,
/// and the servers (killed and reaped when dropped).
pub fn start_servers(
    program: &Path,
    request: &ToolRequest,
    ip: IpAddr,
) -> Result<(Vec<u16>, Vec<Server>), RefError> {
    let tool = tool_of(request.tool);
    // iperf3's server takes TCP control connections whatever the test's protocol.
    let transport = match (request.tool, request.proto) {
        (RefTool::Sockperf, Proto::Udp) => Transport::Udp,
        _ => Transport::Tcp,
    };
    let mut ports = Vec::new();
    let mut servers = Vec::new();
    for _ in 0..request.instances {
        let command = |port| {
            let mut cmd = Command::new(program);
            cmd.args(server_argv(request.tool, request.proto, ip, port));
            cmd
        };
        let (server, port) = Server::start_on_free_port(tool, ip, command, transport)?;
        ports.push(port);
        servers.push(server);
    }
    Ok((ports, servers))
}

/// Runs `client(ip, ports)` against the servers of `request`: started here on 127.0.0.1
/// (`remote` None), or by the peakbench server at `remote`, proving `token` to it.
pub fn with_servers<T>(
    program: &Path,
    request: &ToolRequest,
    remote: Option<SocketAddr>,
    token: Option<&str>,
    client: impl FnOnce(IpAddr, &[u16]) -> Result<T, RefError>,
) -> Result<T, RefError> {
    let tool = tool_of(request.tool);
    let Some(addr) = remote else {
        let (ports, _servers) = start_servers(program, request, LOOPBACK.into())?;
        return client(LOOPBACK.into(), &ports);
    };
    let target = Target {
        addr,
        token: token.map(str::to_string),
    };
    let session = client::start_tools(&target, request).map_err(|e| match e {
        // The server's words are a peer's: escaped where they are kept and printed.
        NetError::Refused(m) => RefError::unsupported(
            tool,
            format!("the server at {addr}: {}", crate::text::printable(&m)),
        ),
        other => RefError::failed(
            tool,
            format!(
                "the server at {addr}: {}",
                crate::text::printable(&other.to_string())
            ),
        ),
    })?;
    let result = client(addr.ip(), &session.ports);
    // The server stops its tool's servers when told, or when the connection closes.
    let _ = session.finish();
    result
}

/// The tools' servers of `net serve --references`, found on this host's PATH.
#[derive(Debug)]
pub struct Launcher {
    locator: Locator,
}

impl Launcher {
    pub fn from_env() -> Launcher {
        Launcher {
            locator: Locator::from_env(),
        }
    }
}

impl ToolServers for Launcher {
    /// Which of the tools a client may ask for are installed here, and which are not.
    fn describe(&self) -> String {
        [RefTool::Iperf3, RefTool::Sockperf]
            .map(|t| {
                let tool = tool_of(t);
                match self.locator.availability(tool) {
                    Availability::Found(f) => format!("{} {}", tool.name(), f.version),
                    _ => format!("{} (not installed: {})", tool.name(), tool.install()),
                }
            })
            .join(", ")
    }

    fn start(
        &self,
        request: &ToolRequest,
        ip: IpAddr,
    ) -> Result<(Vec<u16>, Box<dyn Send>), String> {
        let tool = tool_of(request.tool);
        let found = match self.locator.availability(tool) {
            Availability::Found(f) => f,
            Availability::Missing => {
                return Err(format!("not installed on the server ({})", tool.install()));
            }
            Availability::Unusable { reason, .. } => return Err(reason),
        };
        let (ports, servers) =
            start_servers(&found.path, request, ip).map_err(|e| e.to_string())?;
        Ok((ports, Box::new(servers)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn servers_bind_the_address_asked_for() {
        let ip: IpAddr = "10.231.0.1".parse().unwrap();
        assert_eq!(
            server_argv(RefTool::Iperf3, Proto::Udp, ip, 40000),
            ["-s", "-1", "-B", "10.231.0.1", "-p", "40000"]
        );
        assert_eq!(
            server_argv(RefTool::Sockperf, Proto::Tcp, ip, 40000),
            ["server", "--tcp", "-i", "10.231.0.1", "-p", "40000"]
        );
        assert_eq!(
            server_argv(RefTool::Sockperf, Proto::Udp, "::1".parse().unwrap(), 1),
            ["server", "-i", "::1", "-p", "1"]
        );
    }

    #[test]
    fn loopback_points_run_here_and_others_remotely() {
        let mut p: NetParams = serde_json::from_value(serde_json::json!({
            "threads": 1, "streams": 1, "protocol": "TCP", "message_size_bytes": 64,
            "duration_s": 1.0, "omit_s": 0.0
        }))
        .unwrap();
        assert_eq!(remote_of(&p, Tool::Iperf3).unwrap(), None);
        for local in ["127.0.0.1:5301", "[::1]:5301", "127.0.0.2:1"] {
            p.server = Some(local.into());
            assert_eq!(remote_of(&p, Tool::Iperf3).unwrap(), None, "{local}");
        }
        p.server = Some("10.231.0.1:5301".into());
        assert_eq!(
            remote_of(&p, Tool::Iperf3).unwrap(),
            Some("10.231.0.1:5301".parse().unwrap())
        );
        p.server = Some("a-host-name".into());
        assert!(remote_of(&p, Tool::Iperf3).is_err());
    }
}
