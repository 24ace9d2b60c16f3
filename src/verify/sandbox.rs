//! The network `verify` builds for itself: two network namespaces of its own joined by a veth
//! pair, each end addressed in a private subnet, and the calls that shape it (tc tbf, iptables
//! statistic) and move threads into it (setns). Everything is named after this process, made
//! only where nothing of that name exists, and removed when the pair is dropped.

use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::Command;

/// The server's end (the first namespace).
pub const SERVER_ADDR: &str = "10.233.0.1";
/// The client's end.
pub const CLIENT_ADDR: &str = "10.233.0.2";
/// The prefix both ends share.
const PREFIX: u8 = 24;

/// Runs `program` with `args`; its error output, cut to one line, when it fails.
pub fn run(program: &str, args: &[&str]) -> Result<(), String> {
    let out = Command::new(program)
        .args(args)
        .stdin(std::process::Stdio::null())
        // Its own process group: a Ctrl-C at the terminal stops peakbench after the current
        // point (and its cleanup), not the `ip netns add` or `losetup -d` under way.
        .process_group(0)
        .output()
        .map_err(|e| format!("cannot run {program}: {e}"))?;
    if out.status.success() {
        return Ok(());
    }
    let err = String::from_utf8_lossy(&out.stderr);
    let first = err.lines().next().unwrap_or("").trim();
    Err(crate::text::printable(&format!(
        "`{program} {}` failed: {first}",
        args.join(" ")
    )))
}

/// Two namespaces and the veth pair between them; dropped, both namespaces (and with them the
/// veth pair, its qdiscs and filter rules) are removed.
pub struct NetPair {
    /// The server's namespace, then the client's.
    pub names: [String; 2],
    /// Each end's interface.
    pub links: [String; 2],
    made: Vec<String>,
}

impl NetPair {
    /// Makes the pair for process `pid`: namespaces `pbv<pid>s` and `pbv<pid>c`, their
    /// loopbacks up, a veth pair `pbv<pid>s`/`pbv<pid>c` with [`SERVER_ADDR`] and
    /// [`CLIENT_ADDR`]. A namespace of that name that exists already is not this run's: refused.
    pub fn new(pid: u32) -> Result<NetPair, String> {
        let names = super::names::namespaces(pid);
        let mut pair = NetPair {
            links: names.clone(),
            names,
            made: Vec::new(),
        };
        for n in pair.names.clone() {
            if std::path::Path::new("/run/netns").join(&n).exists() {
                return Err(format!(
                    "a network namespace named {n} exists already (not this run's): an earlier verify of a process with this id left it where `peakbench verify --cleanup` removes it; else remove it with `ip netns del {n}`"
                ));
            }
            run("ip", &["netns", "add", &n])?;
            pair.made.push(n.clone());
            run("ip", &["-n", &n, "link", "set", "lo", "up"])?;
        }
        let [s, c] = &pair.names;
        let [ls, lc] = &pair.links;
        run(
            "ip",
            &[
                "link", "add", ls, "netns", s, "type", "veth", "peer", "name", lc, "netns", c,
            ],
        )?;
        for (n, link, addr) in [(s, ls, SERVER_ADDR), (c, lc, CLIENT_ADDR)] {
            run(
                "ip",
                &[
                    "-n",
                    n,
                    "addr",
                    "add",
                    &format!("{addr}/{PREFIX}"),
                    "dev",
                    link,
                ],
            )?;
            run("ip", &["-n", n, "link", "set", link, "up"])?;
        }
        Ok(pair)
    }

    /// Shapes both ends' egress to `rate_bps` bit/s with a token bucket (tc tbf): bursts of
    /// 64 KiB, at most 20 ms queued.
    pub fn limit_rate(&self, rate_bps: u64) -> Result<(), String> {
        self.limit_rate_of(&self.links, rate_bps)
    }

    /// [`NetPair::limit_rate`] on the devices `devs`, the first in the server's namespace,
    /// the second in the client's (the delay line's TUN devices).
    pub fn limit_rate_of(&self, devs: &[String; 2], rate_bps: u64) -> Result<(), String> {
        for (n, link) in self.names.iter().zip(devs) {
            run(
                "tc",
                &[
                    "-n",
                    n,
                    "qdisc",
                    "replace",
                    "dev",
                    link,
                    "root",
                    "tbf",
                    "rate",
                    &format!("{rate_bps}bit"),
                    "burst",
                    "64kb",
                    "latency",
                    "20ms",
                ],
            )?;
        }
        Ok(())
    }

    /// Shapes the server's egress (the data of a point the client receives, `--reverse`) with
    /// a token bucket of `bucket_bytes` filled at `rate_bps` and emptied at `peak_bps` at most
    /// (tc tbf with a peak rate): a burst of about `bucket_bytes` beyond the rate at the peak
    /// rate, then the rate. At most 1 MB queued; a GSO segment of up to 64 KiB passes whole
    /// (tbf counts it as its frames, each with its headers).
    pub fn limit_burst(
        &self,
        rate_bps: u64,
        peak_bps: u64,
        bucket_bytes: u64,
    ) -> Result<(), String> {
        run(
            "tc",
            &[
                "-n",
                &self.names[0],
                "qdisc",
                "replace",
                "dev",
                &self.links[0],
                "root",
                "tbf",
                "rate",
                &format!("{rate_bps}bit"),
                "burst",
                &bucket_bytes.to_string(),
                "peakrate",
                &format!("{peak_bps}bit"),
                "mtu",
                "65536",
                "limit",
                "1000000",
            ],
        )
    }

    /// Removes the token buckets.
    pub fn unlimit_rate(&self) -> Result<(), String> {
        for (n, link) in self.names.iter().zip(&self.links) {
            run("tc", &["-n", n, "qdisc", "del", "dev", link, "root"])?;
        }
        Ok(())
    }

    /// The rule that drops each UDP datagram arriving at the server's end with probability
    /// `p` (iptables' statistic match), as `iptables` arguments after `-A`/`-D`.
    fn loss_rule(&self, p: f64) -> Vec<String> {
        [
            "INPUT",
            "-i",
            &self.links[0],
            "-p",
            "udp",
            "-m",
            "statistic",
            "--mode",
            "random",
            "--probability",
            &format!("{p:.6}"),
            "-j",
            "DROP",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    }

    /// Drops UDP datagrams arriving at the server's end with probability `p`.
    pub fn add_loss(&self, p: f64) -> Result<(), String> {
        self.loss(p, "-A")
    }

    /// Removes the rule [`NetPair::add_loss`] added.
    pub fn remove_loss(&self, p: f64) -> Result<(), String> {
        self.loss(p, "-D")
    }

    fn loss(&self, p: f64, op: &str) -> Result<(), String> {
        let rule = self.loss_rule(p);
        let mut args = vec!["netns", "exec", &self.names[0], "iptables", "-w", "5", op];
        args.extend(rule.iter().map(String::as_str));
        run("ip", &args)
    }

    /// The namespace `i` (0: the server's, 1: the client's), to enter.
    pub fn handle(&self, i: usize) -> Result<OwnedFd, String> {
        open_ns(&format!("/run/netns/{}", self.names[i]))
    }
}

impl Drop for NetPair {
    fn drop(&mut self) {
        for n in self.made.iter().rev() {
            if let Err(e) = run("ip", &["netns", "del", n]) {
                eprintln!("peakbench: warning: {e}");
            }
        }
    }
}

/// A namespace file opened to be entered.
fn open_ns(path: &str) -> Result<OwnedFd, String> {
    std::fs::File::open(path)
        .map(OwnedFd::from)
        .map_err(|e| format!("cannot open {path}: {e}"))
}

/// Moves the calling thread into the network namespace `ns` (the threads it starts from then
/// on start there).
pub fn enter(ns: &OwnedFd) -> std::io::Result<()> {
    // SAFETY: setns on an open namespace descriptor of the right type changes only the calling
    // thread's network namespace; it reads no memory of ours.
    let rc = unsafe { libc::setns(ns.as_raw_fd(), libc::CLONE_NEWNET) };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// The calling thread inside a namespace until dropped, then back in the one it was in.
pub struct Inside {
    home: OwnedFd,
}

impl Inside {
    pub fn new(ns: &OwnedFd) -> Result<Inside, String> {
        let home = open_ns("/proc/thread-self/ns/net")?;
        enter(ns).map_err(|e| format!("cannot enter the network namespace: {e}"))?;
        Ok(Inside { home })
    }
}

impl Drop for Inside {
    fn drop(&mut self) {
        if let Err(e) = enter(&self.home) {
            eprintln!(
                "peakbench: warning: cannot return to the network namespace it came from: {e}"
            );
        }
    }
}
