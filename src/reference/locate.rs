//! Where the reference tools are: each found on PATH (STREAM also by `PEAKBENCH_STREAM`, BLIS,
//! a library, where Debian's alternatives put it), with its version, and what each covers —
//! `peakbench reference check`.

use super::{Availability, Found, STREAM_ENV, ToolStatus, blis, hpcc, process};
use super::{dd, fio, iperf3, likwid, ping, qperf, sockperf, stream, sysbench};
use crate::ids::Tool;
use crate::results::Subsystem;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Where tools are looked up: a PATH-like list of directories and the STREAM binary's name.
#[derive(Debug, Clone, Default)]
pub struct Locator {
    /// Directories separated by `:`, as in PATH.
    pub path: OsString,
    /// PEAKBENCH_STREAM: a path, or a name looked up in `path`.
    pub stream: Option<OsString>,
    /// BLIS's library: PEAKBENCH_BLIS, or where Debian's alternatives put it.
    pub blis: Option<PathBuf>,
}

impl Locator {
    /// This process's PATH and PEAKBENCH_STREAM.
    pub fn from_env() -> Locator {
        Locator {
            path: std::env::var_os("PATH").unwrap_or_default(),
            stream: std::env::var_os(STREAM_ENV).filter(|s| !s.is_empty()),
            blis: blis::library(),
        }
    }

    /// Finds `tool` and asks its version.
    pub fn availability(&self, tool: Tool) -> Availability {
        if tool == Tool::Blis {
            return match self.blis.clone() {
                Some(path) if path.is_file() => Availability::Found(Found {
                    version: version_of(tool, &path).unwrap_or_else(|| "unknown".into()),
                    path,
                }),
                Some(path) => Availability::Unusable {
                    reason: format!("{}={} is not a file", blis::BLIS_ENV, path.display()),
                    path,
                },
                None => Availability::Missing,
            };
        }
        let path = match (tool, &self.stream) {
            (Tool::Stream, Some(named)) => {
                let named = Path::new(named);
                let path = if named.components().count() > 1 {
                    Some(named.to_path_buf())
                } else {
                    process::find_in_path(named.as_os_str(), &self.path)
                };
                match path {
                    Some(p) if process::is_executable(&p) => p,
                    Some(p) => {
                        return Availability::Unusable {
                            reason: format!(
                                "{STREAM_ENV}={} is not an executable file",
                                p.display()
                            ),
                            path: p,
                        };
                    }
                    None => {
                        return Availability::Unusable {
                            path: named.to_path_buf(),
                            reason: format!("{STREAM_ENV}={} is not on PATH", named.display()),
                        };
                    }
                }
            }
            _ => match process::find_in_path(tool.program().as_ref(), &self.path) {
                Some(p) => p,
                None => return Availability::Missing,
            },
        };
        let version = version_of(tool, &path);
        if tool == Tool::Stream && version.is_none() {
            // Another program of that name: ImageMagick installs a `stream` too.
            return Availability::Unusable {
                reason: format!(
                    "{} is not McCalpin's STREAM (no 'STREAM version' in it); build stream.c and set {STREAM_ENV}",
                    path.display()
                ),
                path,
            };
        }
        if tool == Tool::Hpcc {
            if let Some(lib) = hpcc::blas_library().filter(|l| hpcc::is_reference_blas(l)) {
                return Availability::Unusable {
                    reason: format!(
                        "it would call Debian's reference BLAS ({}), a few GFLOP/s: apt-get install libopenblas0-serial",
                        lib.display()
                    ),
                    path,
                };
            }
            if process::find_in_path("mpirun".as_ref(), &self.path).is_none() {
                return Availability::Unusable {
                    reason: "mpirun is not on PATH: apt-get install openmpi-bin".into(),
                    path,
                };
            }
        }
        let version = version.unwrap_or_else(|| "unknown".into());
        Availability::Found(Found { path, version })
    }
}

/// Asks a tool its version (STREAM's is read from its binary: run, it would benchmark).
fn version_of(tool: Tool, path: &Path) -> Option<String> {
    let flag = match tool {
        Tool::Stream => return stream::version_in_binary(&std::fs::read(path).ok()?),
        // hpcc states its version only in its output (run, it would benchmark): the package's,
        // and the BLAS it calls, which matters more.
        Tool::Hpcc => {
            let mut cmd = std::process::Command::new("dpkg-query");
            cmd.args(["-W", "-f=${Version}", "hpcc"]);
            let package = process::run_bounded(tool, cmd, Duration::from_secs(5))
                .ok()
                .filter(|o| o.status.success())
                .map(|o| o.stdout.trim().to_string())
                .filter(|v| !v.is_empty())
                .unwrap_or_else(|| "unknown".into());
            return Some(match hpcc::blas_library() {
                Some(lib) => format!("{package} (BLAS {})", lib.display()),
                None => package,
            });
        }
        // mbw states no version, nor BLIS's library file: their packages'.
        Tool::Mbw | Tool::Blis => {
            let mut cmd = std::process::Command::new("dpkg-query");
            let package = if tool == Tool::Mbw {
                "mbw".to_string()
            } else {
                // The package that holds the file the alternatives link to.
                let file = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
                let mut search = std::process::Command::new("dpkg-query");
                search.arg("-S").arg(&file);
                let owner = process::run_bounded(tool, search, Duration::from_secs(5)).ok()?;
                owner.stdout.split(':').next()?.trim().to_string()
            };
            cmd.args(["-W", "-f=${Version}", &package]);
            return process::run_bounded(tool, cmd, Duration::from_secs(5))
                .ok()
                .filter(|o| o.status.success())
                .map(|o| o.stdout.trim().to_string())
                .filter(|v| !v.is_empty());
        }
        Tool::LikwidBench => "-v",
        Tool::Fio | Tool::Iperf3 | Tool::Sockperf | Tool::Qperf | Tool::Sysbench | Tool::Dd => {
            "--version"
        }
        Tool::Ping => "-V",
    };
    let mut cmd = std::process::Command::new(path);
    cmd.arg(flag);
    let out = process::run_bounded(tool, cmd, Duration::from_secs(5)).ok()?;
    let text = format!("{}\n{}", out.stdout, out.stderr);
    match tool {
        Tool::LikwidBench => likwid::parse_version(&text),
        Tool::Fio => fio::parse_version(&text),
        Tool::Iperf3 => iperf3::parse_version(&text),
        Tool::Sockperf => sockperf::parse_version(&text),
        Tool::Qperf => qperf::parse_version(&text),
        Tool::Ping => ping::parse_version(&text),
        Tool::Sysbench => sysbench::parse_version(&text),
        Tool::Dd => dd::parse_version(&text),
        Tool::Stream | Tool::Hpcc | Tool::Mbw | Tool::Blis => None,
    }
}

/// The records `tool` gives a reference figure for: the workloads whose spec names it, by
/// subsystem, and what of them it measures.
pub fn covers(tool: Tool) -> String {
    let specs = crate::workload::registry::all();
    let parts: Vec<String> = Subsystem::ALL
        .iter()
        .filter_map(|sub| {
            let names: Vec<&str> = specs
                .iter()
                .filter(|s| s.subsystem == *sub && s.references.contains(&tool))
                .map(|s| s.name)
                .collect();
            (!names.is_empty()).then(|| format!("{sub} {}", names.join(", ")))
        })
        .collect();
    let what = match tool {
        Tool::LikwidBench => "peakflops; copy, stream and sum kernels",
        Tool::Stream => "its four kernels",
        Tool::Fio => "MB/s, IOPS, latency",
        Tool::Iperf3 => "goodput, UDP loss, jitter; loopback or `net serve --references`",
        Tool::Sockperf => {
            "round trip, trans/s, a ping-pong per stream, ≥ 14 B; loopback or `serve --references`"
        }
        Tool::Qperf => {
            "round trip, trans/s, a ping-pong per stream; where sockperf is missing or under 14 B"
        }
        Tool::Ping => {
            "round trip over ICMP, payloads of 16 B or more, where sockperf and qperf are missing"
        }
        Tool::Hpcc => "HPL; StarDGEMM; STREAM, arrays sized by HPL's N",
        Tool::Sysbench => "memory blocks and 8-byte loads; fileio beside fio",
        Tool::Mbw => "memcpy block by block, in sequence",
        Tool::Dd => "a file copied block by block to another: MB/s, IOPS, latency",
        Tool::Blis => "its dgemm_/sgemm_ at the point's N and threads, through `--blas system`",
    };
    format!("{} ({what})", parts.join("; "))
}

/// The tools the assignment's reports and engineers use that peakbench has no adapter for,
/// because no binary can be had on a Debian machine to record real output from: each with what
/// stands in for it.
pub const UNAVAILABLE: [&str; 3] = [
    "Not available: IOzone and pmbw are not in Debian's main archive, so peakbench has no adapter for them (it would have no real output to test one on); fio measures IOzone's operations, mbw and sysbench memory pmbw's.",
    "Not available: netperf and lmbench are not in Debian's main archive; iperf3, sockperf and qperf measure their network figures, and CONNECT (netperf's TCP_CRR) is checked against a stand-alone connect loop by bench/net-connect-check.sh.",
    "Not available: Intel MLC is closed, Intel-only and not packaged; peakbench's own LATENCY staircase stands in for its idle latency.",
];

/// Every tool: found (with version and path) or missing (with the install command).
pub fn check() -> Vec<ToolStatus> {
    check_with(&Locator::from_env())
}

/// [`check`] with an explicit PATH and STREAM name.
pub fn check_with(locator: &Locator) -> Vec<ToolStatus> {
    Tool::ALL
        .iter()
        .map(|&tool| ToolStatus {
            tool,
            name: tool.name(),
            availability: locator.availability(tool),
            covers: covers(tool),
            install: tool.install(),
        })
        .collect()
}
