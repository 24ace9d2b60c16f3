//! Which machine each run measured, and how the runs' machines differ: the system diff that
//! `compare` and the comparison report show first, and whether the runs measured the same
//! hardware — what a regression verdict needs. A figure that is lower on another CPU is that
//! machine being slower, not the code regressing.
//!
//! The hardware is what the figures depend on and a run cannot change: the CPU's model and
//! microarchitecture, its sockets, cores and hardware threads, the CPUs' worth of time the run
//! could use (its affinity mask and CPU quota), the memory's size, DIMMs and NUMA nodes, and
//! whether it ran in a virtual machine. The host's name is not: two hosts of one kind (the
//! runners of a CI service) are the same kind of machine, and the development guests keep their
//! name when their CPU changes. The clock, kernel, distribution, disk and link are shown, and a
//! change of one on the same hardware stays a possible regression.

use crate::results::{Report, ResultRecord};
use crate::units::format_bytes_binary;

/// One property of the machines: its value in each run.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Property {
    /// "CPU", "cores", "kernel", …
    pub name: &'static str,
    /// Its value in each run, in the runs' order ("unknown" where the run did not record it).
    pub values: Vec<String>,
    /// The values of the runs that recorded it differ (beyond a measurement's spread for a
    /// measured one).
    pub differs: bool,
    /// Part of the hardware: runs that differ in it measured different machines.
    pub hardware: bool,
}

/// The runs' machines, property by property.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Machines {
    pub properties: Vec<Property>,
}

/// How a property's values are compared.
enum Key {
    /// Equal text.
    Text(String),
    /// Within a relative tolerance of each other.
    Near(f64, f64),
    /// Not recorded: equal to anything.
    Unknown,
}

impl Key {
    fn differs(&self, other: &Key) -> bool {
        match (self, other) {
            (Key::Text(a), Key::Text(b)) => a != b,
            (Key::Near(a, tol), Key::Near(b, _)) => {
                (a - b).abs() > tol * a.abs().max(b.abs()).max(f64::MIN_POSITIVE)
            }
            _ => false,
        }
    }
}

/// A property of one run: as shown, and as compared.
type Value = (String, Key);

/// A value as shown: the document's text made printable (a hostile host name or CPU string
/// reaches no terminal raw), and compared as shown.
fn text(shown: String) -> Value {
    let shown = crate::text::printable(&shown);
    (shown.clone(), Key::Text(shown))
}

fn unknown() -> Value {
    ("unknown".into(), Key::Unknown)
}

/// The known value of a fact, or "unknown".
fn fact<T: std::fmt::Display>(f: &crate::sysinfo::Fact<T>) -> Value {
    f.get().map_or_else(unknown, |v| text(v.to_string()))
}

/// The properties, in the order shown: (name, hardware, value in a run).
type Reader = (&'static str, bool, fn(&Report) -> Value);

const PROPERTIES: [Reader; 14] = [
    ("host", false, |r| fact(&r.system.os.hostname)),
    ("CPU", true, |r| fact(&r.system.cpu.brand)),
    ("microarchitecture", true, |r| {
        fact(&r.system.cpu.microarchitecture)
    }),
    ("cores", true, cores),
    ("CPUs used", true, cpus_used),
    ("clock (1 thread)", false, |r| {
        clock(r.system.cpu.measured_clock_ghz.get())
    }),
    ("clock (all threads)", false, |r| {
        clock(r.system.cpu.all_core_clock_ghz.get())
    }),
    ("memory", true, memory),
    ("DIMMs", true, dimms),
    ("NUMA nodes", true, |r| fact(&r.system.memory.numa_nodes)),
    ("virtualization", true, |r| {
        fact(&r.system.os.virtualization)
    }),
    ("kernel", false, |r| fact(&r.system.os.kernel)),
    ("disk", false, disk),
    ("network", false, network),
];

/// "1 socket, 16 cores, 32 threads".
fn cores(r: &Report) -> Value {
    let c = &r.system.cpu;
    let plural = |n: u32, one: &str| format!("{n} {one}{}", if n == 1 { "" } else { "s" });
    let mut parts = Vec::new();
    if let Some(s) = c.sockets.get() {
        parts.push(plural(*s, "socket"));
    }
    if let Some(n) = c.cores.get() {
        parts.push(plural(*n, "core"));
    }
    parts.push(plural(c.threads, "thread"));
    text(parts.join(", "))
}

/// The CPUs' worth of time the run could use: "all 2", or "1 of 2 (CPU quota 0.50 CPUs)".
fn cpus_used(r: &Report) -> Value {
    let c = &r.system.cpu;
    let effective = c.effective_cpus();
    let shown = if c.share_line().is_none() {
        format!("all {}", c.threads)
    } else {
        let quota = c.cgroup_cpu_quota.map_or(String::new(), |q| {
            format!(", a quota of {:.2} CPUs", q.cpus())
        });
        format!("{} of {}{quota}", c.allowed_count(), c.threads)
    };
    (shown, Key::Near(effective, 0.01))
}

/// A measured clock, equal to another within 3 % (two probes of one machine agree to about 1 %).
fn clock(ghz: Option<&f64>) -> Value {
    match ghz {
        Some(g) if g.is_finite() => (format!("{g:.2} GHz"), Key::Near(*g, 0.03)),
        _ => unknown(),
    }
}

/// The memory's size, equal to another within 2 % (the firmware and kernel keep a little, which
/// moves between boots).
fn memory(r: &Report) -> Value {
    match r.system.memory.total_bytes.get() {
        Some(&b) => (
            format!("{:.1} GiB", b as f64 / (1u64 << 30) as f64),
            Key::Near(b as f64, 0.02),
        ),
        None => unknown(),
    }
}

/// "8 × 32 GiB at 4800 MT/s" (the DIMMs the firmware lists), or unknown.
fn dimms(r: &Report) -> Value {
    let Some(devices) = r.system.memory.devices.get() else {
        return unknown();
    };
    let mut kinds: Vec<(u64, Option<u32>, usize)> = Vec::new();
    for d in devices {
        match kinds
            .iter_mut()
            .find(|(s, rate, _)| *s == d.size_bytes && *rate == d.rate_mts())
        {
            Some(k) => k.2 += 1,
            None => kinds.push((d.size_bytes, d.rate_mts(), 1)),
        }
    }
    text(
        kinds
            .iter()
            .map(|(size, rate, n)| {
                let rate = rate.map_or(String::new(), |m| format!(" at {m} MT/s"));
                format!("{n} × {}{rate}", format_bytes_binary(*size))
            })
            .collect::<Vec<_>>()
            .join(", "),
    )
}

/// The distinct values `of` gives the run's records, joined; unknown where none has one.
fn distinct(r: &Report, of: impl Fn(&ResultRecord) -> Option<String>) -> Value {
    let mut seen: Vec<String> = Vec::new();
    for v in r.results.iter().filter_map(of) {
        if !seen.contains(&v) {
            seen.push(v);
        }
    }
    if seen.is_empty() {
        unknown()
    } else {
        text(seen.join("; "))
    }
}

/// Where the disk points ran: "vda (ext4)".
fn disk(r: &Report) -> Value {
    distinct(r, |rec| {
        let d = rec.params.disk()?;
        let device = d.device.clone().unwrap_or_else(|| "unknown device".into());
        Some(match &d.file_system {
            Some(fs) => format!("{device} ({fs})"),
            None => device,
        })
    })
}

/// The network points' server (its host: a loopback server's port is new every run) and
/// route: "127.0.0.1 (lo, MTU 65536)".
fn network(r: &Report) -> Value {
    distinct(r, |rec| {
        let n = rec.params.net()?;
        let server = n.server.as_deref().map_or_else(
            || "loopback".into(),
            |s| crate::results::point_fields::host_of(s).to_string(),
        );
        Some(match &n.link {
            Some(l) => {
                let mtu = l.mtu_bytes.map_or(String::new(), |m| format!(", MTU {m}"));
                format!("{server} ({}{mtu})", l.interface)
            }
            None => server,
        })
    })
}

impl Machines {
    /// The machines of `runs`, property by property.
    pub fn of(runs: &[&Report]) -> Machines {
        let properties = PROPERTIES
            .iter()
            .map(|(name, hardware, read)| {
                let values: Vec<Value> = runs.iter().map(|r| read(r)).collect();
                let differs = values
                    .iter()
                    .enumerate()
                    .any(|(i, (_, a))| values[i + 1..].iter().any(|(_, b)| a.differs(b)));
                Property {
                    name,
                    values: values.into_iter().map(|(shown, _)| shown).collect(),
                    differs,
                    hardware: *hardware,
                }
            })
            .collect();
        Machines { properties }
    }

    /// Whether runs `a` and `b` measured different hardware (their hardware properties alone
    /// read, not the disk's and network's, which go through every record).
    pub fn hardware_differs(a: &Report, b: &Report) -> bool {
        PROPERTIES
            .iter()
            .filter(|(_, hardware, _)| *hardware)
            .any(|(_, _, read)| read(a).1.differs(&read(b).1))
    }

    /// The hardware properties in which the runs differ, in order: empty where every run
    /// measured the same kind of machine.
    pub fn hardware_differences(&self) -> Vec<&'static str> {
        self.properties
            .iter()
            .filter(|p| p.hardware && p.differs)
            .map(|p| p.name)
            .collect()
    }

    /// The properties in which the runs differ.
    pub fn differences(&self) -> impl Iterator<Item = &Property> {
        self.properties.iter().filter(|p| p.differs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(brand: &str, host: &str) -> Report {
        let mut r: Report = serde_json::from_str(include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/history/base.json"
        )))
        .unwrap();
        r.system.cpu.brand.value = Some(brand.into());
        r.system.os.hostname.value = Some(host.into());
        r
    }

    /// Another CPU is another machine; another host of the same hardware is not; a clock
    /// within a probe's spread is the same clock.
    #[test]
    fn the_hardware_decides_and_the_host_does_not() {
        let a = run("AMD EPYC", "vm");
        let b = run("Intel Xeon Platinum 8480+", "other");
        let m = Machines::of(&[&a, &b]);
        assert_eq!(m.hardware_differences(), vec!["CPU"]);
        let shown: Vec<&str> = m.differences().map(|p| p.name).collect();
        assert_eq!(shown, vec!["host", "CPU"]);
        let cpu = &m.properties[1];
        assert_eq!(cpu.values, vec!["AMD EPYC", "Intel Xeon Platinum 8480+"]);

        let mut c = run("AMD EPYC", "elsewhere");
        let clock = c.system.cpu.measured_clock_ghz.value.unwrap();
        c.system.cpu.measured_clock_ghz.value = Some(clock * 1.01);
        let m = Machines::of(&[&a, &c]);
        assert!(m.hardware_differences().is_empty());
        assert_eq!(
            m.differences().map(|p| p.name).collect::<Vec<_>>(),
            ["host"]
        );
        c.system.cpu.measured_clock_ghz.value = Some(clock * 0.9);
        c.system.memory.total_bytes.value = Some(1 << 34);
        let m = Machines::of(&[&a, &c]);
        assert_eq!(m.hardware_differences(), vec!["memory"]);
        assert!(m.differences().any(|p| p.name == "clock (1 thread)"));
    }

    /// A document's text is shown printable: no escape sequence of a hostile host name or
    /// CPU string reaches the terminal or the page.
    #[test]
    fn hostile_text_is_shown_printable() {
        let a = run("AMD EPYC", "vm");
        let b = run("Evil\u{1b}[2J\u{202e}CPU", "h\u{7}ost");
        let m = Machines::of(&[&a, &b]);
        for p in &m.properties {
            for v in &p.values {
                assert!(
                    !v.contains(['\u{1b}', '\u{7}', '\u{202e}']),
                    "{}: {v:?}",
                    p.name
                );
            }
        }
        assert_eq!(m.hardware_differences(), vec!["CPU"]);
    }

    /// A property one run did not record is no difference: older documents compare.
    #[test]
    fn what_a_run_did_not_record_differs_from_nothing() {
        let a = run("AMD EPYC", "vm");
        let mut b = run("AMD EPYC", "vm");
        b.system.cpu.microarchitecture = crate::sysinfo::Fact::unknown("not in the table");
        let m = Machines::of(&[&a, &b]);
        assert_eq!(m.differences().count(), 0);
        assert_eq!(m.properties[2].values[1], "unknown");
    }
}
