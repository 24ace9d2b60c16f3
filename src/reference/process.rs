//! Running the tools: PATH lookup, a run bounded in time (killed when it overruns), servers
//! (on loopback, or on the address `net serve --references` was reached at) that are killed
//! when dropped, free ports, and temporary files removed when dropped.
//!
//! Every tool started here dies with the thread that started it ([`die_with_parent`]): a
//! peakbench killed outright (SIGKILL, a crash) leaves no tool or tool's server behind.

use super::{RefError, Tool};
use std::ffi::OsStr;
use std::io::Read;
use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpListener, UdpSocket};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// The loopback address every server binds and every client talks to; no other is ever used.
pub const LOOPBACK: Ipv4Addr = Ipv4Addr::LOCALHOST;

/// A regular file with an execute bit.
pub fn is_executable(path: &Path) -> bool {
    path.metadata()
        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// The first executable `name` in the directories of `path` (PATH syntax); empty entries are
/// skipped (they would mean the current directory).
pub fn find_in_path(name: &OsStr, path: &OsStr) -> Option<PathBuf> {
    std::env::split_paths(path)
        .filter(|dir| !dir.as_os_str().is_empty())
        .map(|dir| dir.join(name))
        .find(|p| is_executable(p))
}

/// What a finished run printed.
#[derive(Debug)]
pub struct Output {
    pub stdout: String,
    pub stderr: String,
    pub status: ExitStatus,
}

impl Output {
    /// The last lines of standard error (or output), for an error message.
    pub fn tail(&self) -> String {
        let text = if self.stderr.trim().is_empty() {
            &self.stdout
        } else {
            &self.stderr
        };
        let lines: Vec<&str> = text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect();
        lines[lines.len().saturating_sub(3)..].join(" / ")
    }

    /// An error for a run that exited unsuccessfully.
    pub fn failure(&self, tool: Tool) -> RefError {
        RefError::failed(tool, format!("{} ({})", self.tail(), self.status))
    }
}

/// Makes the process `cmd` starts receive SIGKILL when the thread that starts it ends
/// (Linux's `PR_SET_PDEATHSIG`): when peakbench exits, is killed or crashes, every thread ends
/// and its tools die with it. The signal follows the *thread* that forked, not the process, so
/// the thread that starts a tool must outlive it: here each one is started by the thread that
/// waits for it or holds its [`Server`] (the control connection's thread in `net serve`). A
/// parent that died before the child could ask is caught too: the child then exits at once.
pub fn die_with_parent(cmd: &mut Command) {
    let parent = std::process::id() as libc::pid_t;
    // SAFETY: the hook runs in the child between fork and exec; it calls only prctl and
    // getppid, which are async-signal-safe, and allocates nothing (the errors are raw).
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(
                libc::PR_SET_PDEATHSIG,
                libc::SIGKILL as libc::c_ulong,
                0,
                0,
                0,
            ) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
            // Re-parented already: the parent ended before the line above took effect.
            if libc::getppid() != parent {
                return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
            }
            Ok(())
        })
    };
}

/// The most of a tool's standard output one run may print: 16 MiB. The largest any tool
/// prints is fio's JSON with the latency percentiles of many jobs, a few MB; a run that
/// prints more is stopped and fails, saying so, rather than held in memory.
pub const STDOUT_CAP: usize = 16 << 20;

/// The most of a tool's standard error kept: its last 64 KiB (where its error message is);
/// what came before is dropped as it is read.
pub const STDERR_CAP: usize = 64 << 10;

/// What a reader kept of a pipe.
struct Captured {
    text: String,
    /// Bytes dropped: beyond the cap (standard output), or before the kept tail (standard
    /// error).
    dropped: u64,
}

/// Reads `pipe` to its end in a thread of its own, keeping at most `cap` bytes: the first
/// ones, `over` raised as soon as more come (the caller then stops the tool), or with
/// `tail`, the last ones. What is not kept is read and dropped, so that the tool never
/// blocks on a full pipe.
fn reader(
    mut pipe: impl Read + Send + 'static,
    cap: usize,
    tail: bool,
    over: Arc<AtomicBool>,
) -> std::thread::JoinHandle<Captured> {
    std::thread::spawn(move || {
        let mut kept = Vec::new();
        let mut dropped = 0u64;
        let mut buf = vec![0u8; 64 << 10];
        loop {
            let n = match pipe.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(_) => break,
            };
            if tail {
                kept.extend_from_slice(&buf[..n]);
                // Drops the front in large steps, not at every read.
                if kept.len() > 2 * cap {
                    let cut = kept.len() - cap;
                    kept.drain(..cut);
                    dropped += cut as u64;
                }
            } else {
                let room = cap.saturating_sub(kept.len()).min(n);
                kept.extend_from_slice(&buf[..room]);
                if room < n {
                    dropped += (n - room) as u64;
                    over.store(true, Ordering::Relaxed);
                }
            }
        }
        if tail && kept.len() > cap {
            let cut = kept.len() - cap;
            kept.drain(..cut);
            dropped += cut as u64;
        }
        Captured {
            text: String::from_utf8_lossy(&kept).into_owned(),
            dropped,
        }
    })
}

/// The error of a run whose standard output went past [`STDOUT_CAP`].
fn too_much_output(tool: Tool) -> RefError {
    RefError::failed(
        tool,
        format!(
            "its output was larger than {} and it was stopped (no run of it prints that much)",
            crate::units::format_bytes_binary(STDOUT_CAP as u64)
        ),
    )
}

/// The most of one run's output a transcript keeps (its end: where the figures are).
pub const OUTPUT_KEPT: usize = 8 << 10;

/// What the tool runs of one reference measurement were: each command line, and the end of
/// what each printed (standard output, then standard error), as evidence beside the figure.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Transcript {
    pub commands: Vec<String>,
    pub output: String,
}

thread_local! {
    static TRANSCRIPT: std::cell::RefCell<Option<Transcript>> = const { std::cell::RefCell::new(None) };
}

/// Runs `f` with a transcript of the commands it runs on this thread ([`run_bounded`] and
/// [`record`]), and returns both.
pub fn transcribed<T>(f: impl FnOnce() -> T) -> (T, Transcript) {
    TRANSCRIPT.with(|t| *t.borrow_mut() = Some(Transcript::default()));
    let out = f();
    let transcript = TRANSCRIPT
        .with(|t| t.borrow_mut().take())
        .unwrap_or_default();
    (out, transcript)
}

/// A command line as a person would type it (arguments with spaces or quotes quoted), its
/// text made printable.
pub fn command_line(cmd: &Command) -> String {
    let quote = |a: &std::ffi::OsStr| {
        let a = a.to_string_lossy();
        if a.is_empty() || a.contains(|c: char| c.is_whitespace() || "'\"\\$`".contains(c)) {
            format!("'{}'", a.replace('\'', "'\\''"))
        } else {
            a.into_owned()
        }
    };
    let envs: Vec<String> = cmd
        .get_envs()
        .filter_map(|(k, v)| Some(format!("{}={}", k.to_string_lossy(), quote(v?))))
        .collect();
    let words: Vec<String> = std::iter::once(quote(cmd.get_program()))
        .chain(cmd.get_args().map(quote))
        .collect();
    let line = envs.into_iter().chain(words).collect::<Vec<_>>().join(" ");
    crate::text::printable(&line)
}

/// Adds a command and what it printed to this thread's transcript, if one is being kept (a
/// tool run on other threads is recorded by the thread that waits for it).
pub fn record(cmd: &Command, out: &Output) {
    TRANSCRIPT.with(|t| {
        if let Some(t) = t.borrow_mut().as_mut() {
            let line = command_line(cmd);
            let text = format!("{}{}", out.stdout, out.stderr);
            let cut = text.len().saturating_sub(OUTPUT_KEPT);
            let cut = (cut..=text.len())
                .find(|&i| text.is_char_boundary(i))
                .unwrap_or(text.len());
            t.output.push_str(&format!("$ {line}\n"));
            if cut > 0 {
                t.output.push_str(&format!("[… {cut} bytes before]\n"));
            }
            t.output
                .push_str(&crate::text::printable_lines(&text[cut..]));
            if !t.output.ends_with('\n') {
                t.output.push('\n');
            }
            t.commands.push(line);
        }
    });
}

/// Adds a server's command line to this thread's transcript (its output is not kept).
fn record_server(cmd: &Command) {
    TRANSCRIPT.with(|t| {
        if let Some(t) = t.borrow_mut().as_mut() {
            let line = command_line(cmd);
            t.output.push_str(&format!(
                "$ {line} &   (the server, stopped after the run)\n"
            ));
            t.commands.push(line);
        }
    });
}

/// Runs `cmd` to completion, its standard input empty and its output captured; kills it when
/// it runs past `timeout`. The command and its output go to the thread's transcript.
pub fn run_bounded(tool: Tool, mut cmd: Command, timeout: Duration) -> Result<Output, RefError> {
    let out = run_to_end(tool, &mut cmd, timeout)?;
    record(&cmd, &out);
    Ok(out)
}

fn run_to_end(tool: Tool, cmd: &mut Command, timeout: Duration) -> Result<Output, RefError> {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    die_with_parent(cmd);
    let mut child = cmd
        .spawn()
        .map_err(|e| RefError::failed(tool, format!("cannot start: {e}")))?;
    let (Some(out), Some(err)) = (child.stdout.take(), child.stderr.take()) else {
        let _ = child.kill();
        let _ = child.wait();
        return Err(RefError::failed(tool, "its output could not be captured"));
    };
    let over = Arc::new(AtomicBool::new(false));
    let (out, err) = (
        reader(out, STDOUT_CAP, false, over.clone()),
        reader(err, STDERR_CAP, true, over.clone()),
    );
    let start = Instant::now();
    let status = loop {
        match child.try_wait() {
            // Stopped as soon as it prints too much; its readers drain what is left and end.
            _ if over.load(Ordering::Relaxed) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(too_much_output(tool));
            }
            Ok(Some(status)) => break status,
            Ok(None) if start.elapsed() >= timeout => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(RefError::Timeout {
                    tool: tool.name().into(),
                    seconds: timeout.as_secs_f64(),
                });
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(RefError::failed(tool, format!("cannot wait for it: {e}")));
            }
        }
    };
    let (Ok(stdout), Ok(stderr)) = (out.join(), err.join()) else {
        return Err(RefError::failed(tool, "its output could not be read"));
    };
    // It may have ended before the flag was seen.
    if stdout.dropped > 0 {
        return Err(too_much_output(tool));
    }
    let stderr = match stderr.dropped {
        0 => stderr.text,
        n => format!("[… {n} bytes before]\n{}", stderr.text),
    };
    Ok(Output {
        stdout: stdout.text,
        stderr,
        status,
    })
}

/// Runs `n` commands (`command(i)`) at once, each bounded by `timeout`, each one's output
/// parsed by `parse`; records every command and its output in this thread's transcript (in
/// order) and returns what each parsed, or the first error.
pub fn run_at_once<T: Send>(
    tool: Tool,
    n: u64,
    command: &(dyn Fn(u64) -> Command + Sync),
    timeout: Duration,
    parse: &(dyn Fn(&Output) -> Result<T, String> + Sync),
) -> Result<Vec<T>, RefError> {
    let outputs: Vec<Result<(Output, T), RefError>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..n)
            .map(|i| {
                s.spawn(move || {
                    let out = run_bounded(tool, command(i), timeout)?;
                    if !out.status.success() {
                        return Err(out.failure(tool));
                    }
                    let r = parse(&out).map_err(|m| RefError::parse(tool, m))?;
                    Ok((out, r))
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(RefError::failed(tool, "its thread panicked")))
            })
            .collect()
    });
    let mut parsed = Vec::new();
    for (i, o) in outputs.into_iter().enumerate() {
        let (out, r) = o?;
        record(&command(i as u64), &out);
        parsed.push(r);
    }
    Ok(parsed)
}

/// The transport a server listens on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    Tcp,
    Udp,
}

/// A server process, killed and reaped when dropped.
#[derive(Debug)]
pub struct Server {
    child: Child,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A network namespace of its own, with only its loopback up, for a tool's server and client
/// (root and iproute2's `ip` needed); deleted when dropped. A server that cannot be bound to
/// one address (qperf's listens on every address of the host) is then reachable from nowhere
/// but the client run beside it. Loopback in a namespace is the same kernel path as the host's.
pub struct NetNamespace {
    name: String,
    ip: PathBuf,
}

impl NetNamespace {
    /// A fresh namespace, or None where one cannot be made (not root, no `ip`, or `ip` fails).
    pub fn create(tool: Tool) -> Option<NetNamespace> {
        // SAFETY: geteuid has no preconditions and cannot fail.
        if unsafe { libc::geteuid() } != 0 {
            return None;
        }
        let ip = find_in_path(OsStr::new("ip"), &std::env::var_os("PATH")?)
            .or_else(|| Some(PathBuf::from("/usr/sbin/ip")).filter(|p| is_executable(p)))?;
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let name = format!(
            "peakbench-{}-{}-{nanos:08x}",
            tool.program(),
            std::process::id()
        );
        let ok = |ip: &Path, args: &[&str]| {
            let mut cmd = Command::new(ip);
            cmd.args(args);
            run_bounded(tool, cmd, Duration::from_secs(10)).is_ok_and(|o| o.status.success())
        };
        // `ip netns add` refuses a name that exists: nothing of anyone else's is reused.
        if !ok(&ip, &["netns", "add", &name]) {
            return None;
        }
        let ns = NetNamespace { name, ip };
        ok(&ns.ip, &["-n", &ns.name, "link", "set", "lo", "up"]).then_some(ns)
    }

    /// `cmd` (its program and arguments) run inside the namespace.
    pub fn wrap(&self, cmd: &Command) -> Command {
        let mut inside = Command::new(&self.ip);
        inside
            .args(["netns", "exec", &self.name])
            .arg(cmd.get_program())
            .args(cmd.get_args());
        inside
    }

    /// Its name under /run/netns.
    #[cfg(test)]
    pub fn name(&self) -> &str {
        &self.name
    }
}

impl Drop for NetNamespace {
    fn drop(&mut self) {
        let _ = Command::new(&self.ip)
            .args(["netns", "delete", &self.name])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
}

impl Server {
    /// Starts the server `command(port)` makes on a free port of `ip`; another port is tried
    /// when the one found free was taken before the server could bind it.
    pub fn start_on_free_port(
        tool: Tool,
        ip: IpAddr,
        command: impl Fn(u16) -> Command,
        transport: Transport,
    ) -> Result<(Server, u16), RefError> {
        let mut last = None;
        for _ in 0..3 {
            let port = free_port(tool, ip)?;
            match Server::start(tool, command(port), (ip, port).into(), transport) {
                Ok(server) => return Ok((server, port)),
                Err(e) => last = Some(e),
            }
        }
        Err(last.unwrap_or_else(|| RefError::failed(tool, "its server did not start")))
    }

    /// Starts `cmd` and waits (at most 5 s) until a socket is bound to `at` in /proc/net
    /// (listening, for TCP). Reading /proc rather than connecting keeps the probe from counting
    /// as a client.
    pub fn start(
        tool: Tool,
        mut cmd: Command,
        at: SocketAddr,
        transport: Transport,
    ) -> Result<Server, RefError> {
        cmd.stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        die_with_parent(&mut cmd);
        let child = cmd
            .spawn()
            .map_err(|e| RefError::failed(tool, format!("cannot start its server: {e}")))?;
        record_server(&cmd);
        let mut server = Server { child };
        // IPv4 sockets, and IPv6 ones (a dual-stack wildcard, as qperf's server binds), in the
        // server's own network namespace (ours, or one made for it: see [`NetNamespace`]).
        let pid = server.child.id();
        let tables = match transport {
            Transport::Tcp => ["tcp", "tcp6"],
            Transport::Udp => ["udp", "udp6"],
        }
        .map(|t| format!("/proc/{pid}/net/{t}"));
        let start = Instant::now();
        loop {
            if let Ok(Some(status)) = server.child.try_wait() {
                return Err(RefError::failed(
                    tool,
                    format!("its server on {at} exited at once ({status})"),
                ));
            }
            let bound = tables.iter().any(|table| {
                std::fs::read_to_string(table)
                    .is_ok_and(|t| proc_net_bound(&t, at, transport == Transport::Tcp))
            });
            if bound {
                return Ok(server);
            }
            if start.elapsed() > Duration::from_secs(5) {
                return Err(RefError::failed(
                    tool,
                    format!("its server did not bind {at} within 5 s"),
                ));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// `ip` as /proc/net/{tcp,udp}[6] print it: each 32-bit word of the address in the host's
/// byte order, in hex.
fn proc_hex(ip: IpAddr) -> String {
    let word = |b: &[u8]| format!("{:08X}", u32::from_ne_bytes([b[0], b[1], b[2], b[3]]));
    match ip {
        IpAddr::V4(v4) => word(&v4.octets()),
        IpAddr::V6(v6) => v6.octets().chunks(4).map(word).collect(),
    }
}

/// Whether a /proc/net/tcp, udp, tcp6 or udp6 table has a socket bound to `at`'s port on its
/// address or a wildcard (an IPv4 address also as IPv4-mapped IPv6; 127.0.0.1 also as ::1),
/// in LISTEN state (0A) when `listening`.
pub fn proc_net_bound(table: &str, at: SocketAddr, listening: bool) -> bool {
    let mut ips = vec![
        at.ip(),
        Ipv4Addr::UNSPECIFIED.into(),
        std::net::Ipv6Addr::UNSPECIFIED.into(),
    ];
    if let IpAddr::V4(v4) = at.ip() {
        ips.push(v4.to_ipv6_mapped().into());
        if v4 == LOOPBACK {
            ips.push(std::net::Ipv6Addr::LOCALHOST.into());
        }
    }
    let port = at.port();
    let want: Vec<String> = ips
        .into_iter()
        .map(|ip| format!("{}:{port:04X}", proc_hex(ip)))
        .collect();
    table.lines().skip(1).any(|line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        fields.len() > 3 && want.iter().any(|w| w == fields[1]) && (!listening || fields[3] == "0A")
    })
}

/// A port free on `ip` for both TCP and UDP (iperf3 uses the same number for both).
pub fn free_port(tool: Tool, ip: IpAddr) -> Result<u16, RefError> {
    for _ in 0..50 {
        let tcp = TcpListener::bind((ip, 0))
            .map_err(|e| RefError::failed(tool, format!("no free port on {ip}: {e}")))?;
        let port = tcp
            .local_addr()
            .map_err(|e| RefError::failed(tool, e.to_string()))?
            .port();
        if UdpSocket::bind((ip, port)).is_ok() {
            return Ok(port);
        }
    }
    Err(RefError::failed(
        tool,
        format!("no port free for both TCP and UDP on {ip}"),
    ))
}

/// A path for a temporary file, removed (if it exists) when dropped.
#[derive(Debug)]
pub struct TempPath(pub PathBuf);

impl TempPath {
    /// A fresh name in `dir`, `prefix.PID.N`; the file itself is not created.
    pub fn new(dir: &Path, prefix: &str) -> TempPath {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        loop {
            let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let p = dir.join(format!("{prefix}.{}.{n}", std::process::id()));
            if !p.exists() {
                return TempPath(p);
            }
        }
    }
}

impl Drop for TempPath {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Whole seconds for a tool that takes only whole seconds: at least `min`, rounded up.
pub fn whole_seconds(seconds: f64, min: u64) -> u64 {
    if seconds.is_finite() && seconds > 0.0 {
        (seconds.ceil() as u64).max(min)
    } else {
        min
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A qperf server in a namespace of its own: the host cannot reach it on the port it
    /// listens on (it listens on every address it has), the client beside it can, and the
    /// namespace is gone afterwards. Skipped, saying so, without root, `ip` or qperf.
    #[test]
    fn a_server_in_its_own_namespace_is_out_of_the_hosts_reach() {
        let Some(qperf) = find_in_path("qperf".as_ref(), &std::env::var_os("PATH").unwrap()) else {
            eprintln!("SKIPPED: qperf is not installed (apt-get install qperf)");
            return;
        };
        let Some(ns) = NetNamespace::create(Tool::Qperf) else {
            eprintln!("SKIPPED: no network namespace could be made (root and iproute2 needed)");
            return;
        };
        let name = ns.name().to_string();
        let server = |port: u16| {
            let mut cmd = Command::new(&qperf);
            cmd.args(["--listen_port", &port.to_string()]);
            ns.wrap(&cmd)
        };
        let (server, port) =
            Server::start_on_free_port(Tool::Qperf, LOOPBACK.into(), server, Transport::Tcp)
                .expect("the server starts inside the namespace");
        let from_host = std::net::TcpStream::connect_timeout(
            &(LOOPBACK, port).into(),
            Duration::from_millis(500),
        );
        assert!(
            from_host.is_err(),
            "the host reached the namespace's server"
        );
        let mut client = Command::new(&qperf);
        client.args([
            "127.0.0.1",
            "--listen_port",
            &port.to_string(),
            "--time",
            "1",
            "tcp_lat",
        ]);
        let out = run_bounded(Tool::Qperf, ns.wrap(&client), Duration::from_secs(20)).unwrap();
        assert!(out.status.success(), "{}", out.tail());
        assert!(out.stdout.contains("latency"), "{}", out.stdout);
        drop(server);
        drop(ns);
        assert!(
            !Path::new("/run/netns").join(&name).exists(),
            "the namespace {name} was left behind"
        );
    }

    #[test]
    fn path_lookup_skips_missing_and_empty_entries() {
        assert_eq!(find_in_path("sh".as_ref(), "".as_ref()), None);
        assert_eq!(find_in_path("sh".as_ref(), "/nonexistent::".as_ref()), None);
        let found = find_in_path("sh".as_ref(), "/nonexistent:/bin:/usr/bin".as_ref());
        assert!(found.is_some_and(|p| p.ends_with("sh")));
    }

    #[test]
    fn proc_net_tables() {
        let tcp = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n   0: 0100007F:14B5 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 1 1 0 100 0 0 10 0\n   1: 0100007F:9C40 0100007F:14B5 01 00000000:00000000 00:00000000 00000000  1000        0 2 1 0 20 4 30 10 -1\n";
        let lo = |port: u16| SocketAddr::from((LOOPBACK, port));
        assert!(proc_net_bound(tcp, lo(5301), true));
        assert!(!proc_net_bound(tcp, lo(40000), true));
        assert!(proc_net_bound(tcp, lo(40000), false));
        assert!(!proc_net_bound("garbage\nmore garbage", lo(5301), false));
        assert!(!proc_net_bound("", lo(5301), false));
        // Bound to 127.0.0.1: not to another address.
        assert!(!proc_net_bound(
            tcp,
            "10.231.0.1:5301".parse().unwrap(),
            true
        ));
        let veth = "  sl  local_address rem_address   st\n   0: 0100E70A:14B5 00000000:0000 0A 0\n";
        assert!(proc_net_bound(
            veth,
            "10.231.0.1:5301".parse().unwrap(),
            true
        ));
        assert!(!proc_net_bound(veth, lo(5301), true));
        // A dual-stack wildcard listener, as qperf's server binds, in /proc/net/tcp6.
        let tcp6 = "  sl  local_address                         remote_address                        st
   0: 00000000000000000000000000000000:4E1E 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1 1 0 100 0 0 10 0
";
        assert!(proc_net_bound(tcp6, lo(19998), true));
        assert!(!proc_net_bound(tcp6, lo(19999), true));
        assert!(proc_net_bound(
            tcp6,
            "[fd00::1]:19998".parse().unwrap(),
            true
        ));
        assert_eq!(
            proc_hex("::1".parse().unwrap()),
            "00000000000000000000000001000000"
        );
    }

    #[test]
    fn a_run_past_its_timeout_is_killed() {
        let mut cmd = Command::new("sleep");
        cmd.arg("30");
        let start = Instant::now();
        let err = run_bounded(Tool::Fio, cmd, Duration::from_millis(200)).unwrap_err();
        assert!(start.elapsed() < Duration::from_secs(5));
        assert!(matches!(err, RefError::Timeout { .. }), "{err}");
    }

    #[test]
    fn output_and_status_are_kept() {
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "echo out; echo err >&2; exit 3"]);
        let out = run_bounded(Tool::Fio, cmd, Duration::from_secs(10)).unwrap();
        assert_eq!(out.stdout, "out\n");
        assert_eq!(out.stderr, "err\n");
        assert_eq!(out.status.code(), Some(3));
        assert_eq!(out.tail(), "err");
        let cmd = Command::new("/nonexistent/tool");
        let err = run_bounded(Tool::Fio, cmd, Duration::from_secs(1)).unwrap_err();
        assert!(
            err.to_string().starts_with("fio failed: cannot start"),
            "{err}"
        );
    }

    /// Finding 7: a tool that prints more than [`STDOUT_CAP`] (40 MiB of empty lines, made
    /// by the shell, never held here) is stopped and its run fails in one line that says so;
    /// of a long standard error only its last [`STDERR_CAP`] bytes are kept, its end whole.
    #[test]
    fn output_beyond_the_cap_is_refused_and_stderr_keeps_its_tail() {
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "head -c 40M /dev/zero | tr '\\0' '\\n'; echo '{}'"]);
        let start = Instant::now();
        let err = run_bounded(Tool::Iperf3, cmd, Duration::from_secs(60)).unwrap_err();
        assert!(start.elapsed() < Duration::from_secs(50), "{err}");
        let text = err.to_string();
        assert!(
            text.starts_with("iperf3 failed: its output was larger than 16 MiB"),
            "{text}"
        );
        assert!(!text.contains('\n'), "{text}");
        // Less than the cap is read whole.
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "head -c 1M /dev/zero | tr '\\0' 'x'"]);
        let out = run_bounded(Tool::Iperf3, cmd, Duration::from_secs(60)).unwrap();
        assert_eq!(out.stdout.len(), 1 << 20);
        let mut cmd = Command::new("sh");
        cmd.args([
            "-c",
            "head -c 1M /dev/zero | tr '\\0' 'x' >&2; echo >&2; echo the last line >&2; exit 3",
        ]);
        let out = run_bounded(Tool::Iperf3, cmd, Duration::from_secs(60)).unwrap();
        assert!(out.stderr.len() <= STDERR_CAP + 64, "{}", out.stderr.len());
        assert!(out.stderr.starts_with("[… "), "{}", &out.stderr[..40]);
        assert!(out.stderr.ends_with("the last line\n"));
        assert_eq!(out.tail().rsplit(" / ").next(), Some("the last line"));
    }

    #[test]
    fn whole_seconds_round_up() {
        assert_eq!(whole_seconds(0.25, 1), 1);
        assert_eq!(whole_seconds(2.1, 1), 3);
        assert_eq!(whole_seconds(0.0, 0), 0);
        assert_eq!(whole_seconds(f64::NAN, 1), 1);
    }

    #[test]
    fn temp_paths_are_removed() {
        let dir = std::env::temp_dir();
        let path = {
            let t = TempPath::new(&dir, "peakbench-test");
            std::fs::write(&t.0, b"x").unwrap();
            t.0.clone()
        };
        assert!(!path.exists());
    }

    #[test]
    fn a_free_port_is_found() {
        // Whether it is still free a moment later depends on the rest of the machine.
        assert_ne!(free_port(Tool::Iperf3, LOOPBACK.into()).unwrap(), 0);
    }

    /// A tool whose starting thread ends is killed, though the process goes on and nobody
    /// kills it: what takes every tool with peakbench when peakbench is killed outright.
    #[test]
    fn a_tool_dies_with_the_thread_that_started_it() {
        let mut child = std::thread::spawn(|| {
            let mut cmd = Command::new("sleep");
            cmd.arg("30");
            die_with_parent(&mut cmd);
            cmd.spawn().unwrap()
        })
        .join()
        .unwrap();
        let until = Instant::now() + Duration::from_secs(10);
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break Some(status);
            }
            if Instant::now() > until {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(
            status.and_then(|s| s.signal()),
            Some(libc::SIGKILL),
            "the tool outlived the thread that started it"
        );
    }

    #[test]
    fn a_server_that_exits_at_once_is_an_error() {
        let err = Server::start_on_free_port(
            Tool::Sockperf,
            LOOPBACK.into(),
            |_| Command::new("true"),
            Transport::Tcp,
        )
        .unwrap_err();
        assert!(err.to_string().contains("exited at once"), "{err}");
    }
}
