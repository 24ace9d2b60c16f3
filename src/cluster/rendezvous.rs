//! How the ranks find rank 0's coordinator, in order: an explicit address (`--coordinator`),
//! the `PEAKBENCH_COORDINATOR` variable, a rendezvous file that rank 0 writes in a directory
//! every rank sees (`--rendezvous DIR`), the first host of the Slurm node list (where srun
//! starts rank 0), or this machine when the launcher says that every rank runs on it.

use std::io;
use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use std::path::{Path, PathBuf};

/// The coordinator's default TCP port (the network server's is 5301).
pub const DEFAULT_PORT: u16 = 5302;

/// Where a rank looks for the coordinator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Locator {
    /// HOST[:PORT].
    Address { addr: String, source: &'static str },
    /// A file rank 0 writes with its addresses.
    File(PathBuf),
}

impl Locator {
    pub fn describe(&self) -> String {
        match self {
            Locator::Address { addr, source } => format!("{addr} (from {source})"),
            Locator::File(p) => format!("the rendezvous file {}", p.display()),
        }
    }
}

/// The first host of a Slurm node list: `node[01-04,07],gpu1` gives `node01`.
pub fn slurm_first_host(list: &str) -> Option<String> {
    let list = list.trim();
    let first_end = {
        // The first comma outside brackets ends the first entry.
        let mut depth = 0;
        let mut end = list.len();
        for (i, c) in list.char_indices() {
            match c {
                '[' => depth += 1,
                ']' => depth -= 1,
                ',' if depth == 0 => {
                    end = i;
                    break;
                }
                _ => {}
            }
        }
        end
    };
    let entry = &list[..first_end];
    let host = match entry.split_once('[') {
        None => entry.to_string(),
        Some((prefix, rest)) => {
            let (ranges, suffix) = rest.split_once(']')?;
            let first = ranges.split(',').next()?;
            let lo = first.split('-').next()?;
            if lo.is_empty() || !lo.chars().all(|c| c.is_ascii_digit()) {
                return None;
            }
            format!("{prefix}{lo}{suffix}")
        }
    };
    (!host.is_empty()).then_some(host)
}

/// Where to look, from the flags and the environment (`env`: a lookup so tests need not touch
/// the process's environment). None: nothing says where rank 0 is.
pub fn locate(
    flag: Option<&str>,
    dir: Option<&Path>,
    run_id: &str,
    world_size: u32,
    env: impl Fn(&str) -> Option<String>,
) -> Option<Locator> {
    if let Some(a) = flag {
        return Some(Locator::Address {
            addr: a.to_string(),
            source: "--coordinator",
        });
    }
    if let Some(a) = env("PEAKBENCH_COORDINATOR").filter(|a| !a.is_empty()) {
        return Some(Locator::Address {
            addr: a,
            source: "PEAKBENCH_COORDINATOR",
        });
    }
    if let Some(d) = dir {
        return Some(Locator::File(file_in(d, run_id)));
    }
    for var in [
        "SLURM_STEP_NODELIST",
        "SLURM_JOB_NODELIST",
        "SLURM_NODELIST",
    ] {
        if let Some(host) = env(var).as_deref().and_then(slurm_first_host) {
            return Some(Locator::Address {
                addr: host,
                source: "the first host of the Slurm node list",
            });
        }
    }
    // Open MPI and MPICH say how many ranks share this node: all of them means rank 0 is here.
    for var in ["OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS"] {
        if env(var).and_then(|v| v.trim().parse::<u32>().ok()) == Some(world_size) {
            return Some(Locator::Address {
                addr: "127.0.0.1".into(),
                source: "this machine: the launcher runs every rank here",
            });
        }
    }
    None
}

/// Which run this is, so that two runs sharing a rendezvous directory do not meet: the flag,
/// else the launcher's job (Slurm job and step, the PMIx namespace of mpirun), else "default".
pub fn run_id(flag: Option<&str>, env: impl Fn(&str) -> Option<String>) -> String {
    let raw =
        flag.map(str::to_string)
            .or_else(|| match (env("SLURM_JOB_ID"), env("SLURM_STEP_ID")) {
                (Some(j), Some(s)) => Some(format!("slurm-{j}.{s}")),
                _ => env("PMIX_NAMESPACE").map(|n| format!("pmix-{n}")),
            });
    let id: String = raw
        .unwrap_or_else(|| "default".into())
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    id
}

/// The rendezvous file of run `id` in `dir`.
pub fn file_in(dir: &Path, id: &str) -> PathBuf {
    dir.join(format!("peakbench-coordinator-{id}.json"))
}

#[derive(serde::Serialize, serde::Deserialize)]
struct FileBody {
    version: u32,
    addresses: Vec<SocketAddr>,
}

/// Writes the coordinator's addresses to `path` atomically (the other ranks poll for it).
pub fn write(path: &Path, addresses: &[SocketAddr]) -> io::Result<()> {
    let body = serde_json::to_vec(&FileBody {
        version: super::messages::VERSION,
        addresses: addresses.to_vec(),
    })?;
    crate::files::write_output(path, &body)
}

/// The addresses in a rendezvous file; None while it is absent or half-written.
pub fn read(path: &Path) -> Option<Vec<SocketAddr>> {
    // A few addresses: anything larger (or not a regular file) is not a rendezvous file.
    let bytes = crate::files::read_input(path, 64 << 10, "").ok()?;
    let body: FileBody = serde_json::from_slice(&bytes).ok()?;
    (body.version == super::messages::VERSION).then_some(body.addresses)
}

/// HOST or HOST:PORT (IPv6 in brackets with a port) to addresses; `default_port` when none.
pub fn resolve(addr: &str, default_port: u16) -> Result<Vec<SocketAddr>, String> {
    if let Ok(a) = addr.parse::<SocketAddr>() {
        return Ok(vec![a]);
    }
    if let Ok(ip) = addr.trim_matches(['[', ']']).parse::<IpAddr>() {
        return Ok(vec![SocketAddr::new(ip, default_port)]);
    }
    let (host, port) = match addr.rsplit_once(':') {
        Some((h, p)) => (
            h,
            p.parse::<u16>()
                .map_err(|_| format!("'{addr}': '{p}' is not a port number (1-65535)"))?,
        ),
        None => (addr, default_port),
    };
    let found: Vec<SocketAddr> = (host, port)
        .to_socket_addrs()
        .map_err(|e| format!("cannot resolve the coordinator host '{host}': {e}"))?
        .collect();
    if found.is_empty() {
        return Err(format!("the coordinator host '{host}' has no address"));
    }
    Ok(found)
}

/// This machine's addresses that other machines may reach: IPv4 first, then global IPv6;
/// loopback only when there is nothing else.
pub fn local_addresses() -> Vec<IpAddr> {
    let mut v4 = Vec::new();
    let mut v6 = Vec::new();
    let mut head: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: getifaddrs fills `head` with a list that we walk read-only and free once.
    if unsafe { libc::getifaddrs(&mut head) } == 0 {
        let mut cur = head;
        while !cur.is_null() {
            // SAFETY: `cur` is a node of the list getifaddrs returned, not yet freed.
            let ifa = unsafe { &*cur };
            cur = ifa.ifa_next;
            if ifa.ifa_addr.is_null() || ifa.ifa_flags & libc::IFF_UP as libc::c_uint == 0 {
                continue;
            }
            // SAFETY: ifa_addr is non-null and its family says which sockaddr it is.
            let family = unsafe { (*ifa.ifa_addr).sa_family } as libc::c_int;
            if family == libc::AF_INET {
                // SAFETY: an AF_INET address is a sockaddr_in.
                let sin = unsafe { &*(ifa.ifa_addr as *const libc::sockaddr_in) };
                let ip = std::net::Ipv4Addr::from(u32::from_be(sin.sin_addr.s_addr));
                if !ip.is_loopback() {
                    v4.push(IpAddr::V4(ip));
                }
            } else if family == libc::AF_INET6 {
                // SAFETY: an AF_INET6 address is a sockaddr_in6.
                let sin6 = unsafe { &*(ifa.ifa_addr as *const libc::sockaddr_in6) };
                let ip = std::net::Ipv6Addr::from(sin6.sin6_addr.s6_addr);
                // Link-local addresses need an interface to be reached: left out.
                if !ip.is_loopback() && (ip.segments()[0] & 0xffc0) != 0xfe80 {
                    v6.push(IpAddr::V6(ip));
                }
            }
        }
        // SAFETY: frees the list getifaddrs allocated, once.
        unsafe { libc::freeifaddrs(head) };
    }
    v4.extend(v6);
    if v4.is_empty() {
        v4.push(IpAddr::V4(std::net::Ipv4Addr::LOCALHOST));
    }
    v4
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_host_of_slurm_node_lists() {
        assert_eq!(slurm_first_host("vm").as_deref(), Some("vm"));
        assert_eq!(
            slurm_first_host("node[01-04,07]").as_deref(),
            Some("node01")
        );
        assert_eq!(
            slurm_first_host("node[3,5-6],gpu1").as_deref(),
            Some("node3")
        );
        assert_eq!(slurm_first_host("a1,b2").as_deref(), Some("a1"));
        assert_eq!(slurm_first_host("rack[2-3]-n").as_deref(), Some("rack2-n"));
        assert_eq!(slurm_first_host("bad[x-y]"), None);
        assert_eq!(slurm_first_host("unclosed[1-2"), None);
        assert_eq!(slurm_first_host(""), None);
    }

    #[test]
    fn the_order_of_the_sources() {
        let env = |k: &str| match k {
            "PEAKBENCH_COORDINATOR" => Some("h0:7000".to_string()),
            "SLURM_JOB_NODELIST" => Some("n[1-2]".to_string()),
            _ => None,
        };
        let dir = Path::new("/shared");
        let got = locate(Some("x:1"), Some(dir), "r", 3, env).unwrap();
        assert_eq!(got.describe(), "x:1 (from --coordinator)");
        let got = locate(None, Some(dir), "r", 3, env).unwrap();
        assert!(matches!(got, Locator::Address { ref addr, .. } if addr == "h0:7000"));
        let no_var = |k: &str| env(k).filter(|_| k != "PEAKBENCH_COORDINATOR");
        let got = locate(None, Some(dir), "r", 3, no_var).unwrap();
        assert_eq!(
            got,
            Locator::File(PathBuf::from("/shared/peakbench-coordinator-r.json"))
        );
        let got = locate(None, None, "r", 3, no_var).unwrap();
        assert!(matches!(got, Locator::Address { ref addr, .. } if addr == "n1"));
        assert_eq!(locate(None, None, "r", 3, |_| None), None);
        let one_node = |k: &str| (k == "OMPI_COMM_WORLD_LOCAL_SIZE").then(|| "3".to_string());
        let got = locate(None, None, "r", 3, one_node).unwrap();
        assert!(matches!(got, Locator::Address { ref addr, .. } if addr == "127.0.0.1"));
        // Ranks spread over nodes: no guess.
        assert_eq!(locate(None, None, "r", 6, one_node), None);
    }

    #[test]
    fn run_ids_from_the_launcher() {
        let slurm = |k: &str| match k {
            "SLURM_JOB_ID" => Some("17".to_string()),
            "SLURM_STEP_ID" => Some("0".to_string()),
            "PMIX_NAMESPACE" => Some("99".to_string()),
            _ => None,
        };
        assert_eq!(run_id(None, slurm), "slurm-17.0");
        assert_eq!(
            run_id(None, |k| slurm(k).filter(|_| k == "PMIX_NAMESPACE")),
            "pmix-99"
        );
        assert_eq!(run_id(Some("a/b c"), slurm), "a_b_c");
        assert_eq!(run_id(None, |_| None), "default");
    }

    #[test]
    fn rendezvous_file_round_trip() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let path = file_in(dir, "t");
        assert_eq!(read(&path), None);
        let addrs: Vec<SocketAddr> = vec!["10.0.0.1:5302".parse().unwrap()];
        write(&path, &addrs).unwrap();
        assert_eq!(read(&path), Some(addrs));
        std::fs::write(&path, b"{\"half").unwrap();
        assert_eq!(read(&path), None);
    }

    #[test]
    fn resolving_addresses() {
        assert_eq!(
            resolve("127.0.0.1", 5302).unwrap(),
            vec!["127.0.0.1:5302".parse().unwrap()]
        );
        assert_eq!(
            resolve("[::1]:9", 5302).unwrap(),
            vec!["[::1]:9".parse().unwrap()]
        );
        assert!(resolve("localhost:x", 5302).unwrap_err().contains("port"));
        assert!(!local_addresses().is_empty());
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(128))]

        /// A node list from the launcher and a rendezvous file from the shared directory are
        /// read from outside: whatever they hold, no panic, and a file is addresses or nothing.
        #[test]
        fn node_lists_and_rendezvous_files_from_outside_never_panic(
            list in ".{0,80}",
            bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..256),
        ) {
            let _ = slurm_first_host(&list);
            let _ = resolve(&list, 1);
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("r.json");
            std::fs::write(&path, &bytes).unwrap();
            if let Some(addrs) = read(&path) {
                proptest::prop_assert!(serde_json::from_slice::<serde_json::Value>(&bytes).is_ok(), "{addrs:?}");
            }
        }
    }
}
