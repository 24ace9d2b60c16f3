//! What the machine is: CPU identity and microarchitecture, topology, caches, instruction sets,
//! clocks, memory, operating system and virtualization. Every figure is a [`Fact`]: a value with
//! its source, or unknown with the reason.

pub mod amx;
pub mod blockdev;
pub mod cgroup;
pub mod clock;
pub mod cpuset;
pub mod fact;
pub mod fma_units;
pub mod isa;
pub mod netif;
pub mod numa;
pub mod peak;
pub mod smbios;
pub mod sysfs;
pub mod uarch;

#[cfg(target_arch = "aarch64")]
mod arm;
#[cfg(target_arch = "x86_64")]
pub mod x86;

pub use fact::{Fact, Source};
pub use isa::Isa;

use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::time::Duration;
use sysfs::{parse_cache_size, parse_cpu_list, proc_field, read_trimmed};

/// One logical CPU's place in the topology.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct LogicalCpu {
    pub cpu: usize,
    pub package: i64,
    pub core: i64,
}

/// The CPU: identity, topology, features and clocks.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CpuInfo {
    pub arch: String,
    pub vendor: Fact<String>,
    pub brand: Fact<String>,
    /// Display family (x86) or MIDR implementer (Arm).
    pub family: Fact<u32>,
    /// Display model (x86) or MIDR part number (Arm).
    pub model: Fact<u32>,
    pub stepping: Fact<u32>,
    pub microarchitecture: Fact<String>,
    pub sockets: Fact<u32>,
    pub cores: Fact<u32>,
    pub threads: u32,
    pub threads_per_core: Fact<u32>,
    /// CPUID or HWCAP features relevant to the kernels.
    pub features: Vec<String>,
    /// XCR0 in hex (x86): the vector state the OS saves.
    pub xcr0: Fact<String>,
    /// Instruction sets both the CPU and OS support, widest first.
    pub isas: Vec<Isa>,
    /// "cpu MHz" of /proc/cpuinfo: in a VM this is the TSC rate, not the core clock.
    pub cpuinfo_mhz: Fact<f64>,
    /// cpufreq's maximum frequency.
    pub max_freq_ghz: Fact<f64>,
    pub tsc_ghz: Fact<f64>,
    /// The core clock with one busy thread: probes of different kinds that agree (`clock.rs`).
    pub measured_clock_ghz: Fact<f64>,
    /// The readings behind `measured_clock_ghz`, whether or not they agreed.
    #[serde(default)]
    pub clock_probes: Vec<clock::ProbeReading>,
    /// The core clock with every allowed CPU busy at once (mean of each CPU's agreed clock).
    #[serde(default = "not_measured")]
    pub all_core_clock_ghz: Fact<f64>,
    /// 512-bit FMA units per core, measured on Skylake-SP/Cascade Lake (whose parts have one or
    /// two); unknown, with the reason, elsewhere.
    #[serde(default = "not_measured_units")]
    pub fma512_units: Fact<u32>,
    /// The CPU quota of this process's control group (cgroup v2 `cpu.max`, v1
    /// `cpu.cfs_quota_us`), the tightest on its path: the CPUs' worth of time it may use
    /// whatever CPUs it may run on; absent where there is none. The peaks stay the hardware's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cgroup_cpu_quota: Option<cgroup::CpuQuota>,
    /// The CPUs this process may run on (its affinity mask: a cpuset, `taskset`), ascending;
    /// empty in documents written before it was recorded.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allowed_cpus: Vec<usize>,
    #[serde(skip)]
    pub logical: Vec<LogicalCpu>,
}

impl CpuInfo {
    /// How many CPUs this process may run on: its affinity mask's, or every hardware thread
    /// where the document does not record the mask.
    pub fn allowed_count(&self) -> usize {
        if self.allowed_cpus.is_empty() {
            self.threads as usize
        } else {
            self.allowed_cpus.len()
        }
    }

    /// The CPUs' worth of time this process may use: its allowed CPUs, or its cgroup CPU
    /// quota where that is less (0.5 under a quota of half a CPU).
    pub fn effective_cpus(&self) -> f64 {
        let allowed = self.allowed_count() as f64;
        self.cgroup_cpu_quota
            .map_or(allowed, |q| q.cpus().min(allowed))
    }

    /// Where the process may use less than the machine: "CPU quota 0.50 CPUs (cgroup), CPUs
    /// 0 (1 of 2): effective 0.50 CPUs"; None where it may use all of it.
    pub fn share_line(&self) -> Option<String> {
        let allowed = self.allowed_count();
        let limited = allowed < self.threads as usize;
        if self.cgroup_cpu_quota.is_none() && !limited {
            return None;
        }
        let mut parts = Vec::new();
        if let Some(q) = self.cgroup_cpu_quota {
            parts.push(format!(
                "CPU quota {:.2} CPUs (cgroup: {} µs every {} µs)",
                q.cpus(),
                q.quota_us,
                q.period_us
            ));
        }
        if limited {
            parts.push(format!(
                "CPUs {} ({allowed} of {})",
                sysfs::cpu_list(&self.allowed_cpus),
                self.threads
            ));
        } else {
            parts.push(format!("{allowed} CPUs allowed"));
        }
        Some(format!(
            "{}: effective {:.2} CPUs",
            parts.join(", "),
            self.effective_cpus()
        ))
    }
}

/// One cache level as sysfs describes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cache {
    pub level: u32,
    /// "Data", "Instruction" or "Unified".
    #[serde(rename = "type")]
    pub kind: String,
    pub size_bytes: u64,
    pub line_bytes: Option<u32>,
    /// Logical CPUs sharing one instance.
    pub shared_by_cpus: u32,
    /// Number of instances in the machine.
    pub instances: u32,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MemoryInfo {
    pub total_bytes: Fact<u64>,
    /// What this process may still allocate: MemAvailable, or less where its control group
    /// (a container, a batch job) has a tighter memory limit.
    pub available_bytes: Fact<u64>,
    /// The memory limit of this process's control group; absent where there is none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cgroup_limit_bytes: Option<u64>,
    pub numa_nodes: Fact<u32>,
    /// Populated DIMMs from SMBIOS type 17.
    pub devices: Fact<Vec<smbios::MemoryDevice>>,
}

impl MemoryInfo {
    /// The bytes this process may allocate, or 4 GiB where that is unknown: what a point that
    /// sizes itself to memory (a dense solve's N) assumes.
    pub fn available_or_assumed(&self) -> u64 {
        self.available_bytes.get().copied().unwrap_or(4 << 30)
    }
}

/// The DIMMs the firmware describes, or why they are unknown.
fn memory_devices() -> Fact<Vec<smbios::MemoryDevice>> {
    match std::fs::read(smbios::DMI_TABLE) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Fact::unknown(format!(
            "no SMBIOS table ({} is missing: a VM or firmware without SMBIOS)",
            smbios::DMI_TABLE
        )),
        Err(e) => Fact::unknown(format!(
            "cannot read {}: {e} (run as root)",
            smbios::DMI_TABLE
        )),
        Ok(table) => match smbios::memory_devices(&table) {
            d if d.is_empty() => Fact::unknown("the SMBIOS table lists no populated memory device"),
            d => Fact::known(d, Source::Detected),
        },
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct OsInfo {
    pub hostname: Fact<String>,
    pub kernel: Fact<String>,
    pub distribution: Fact<String>,
    pub virtualization: Fact<String>,
}

/// Everything peakbench knows about the machine.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SystemInfo {
    pub cpu: CpuInfo,
    pub caches: Vec<Cache>,
    pub memory: MemoryInfo,
    pub os: OsInfo,
}

const SYS_CPU: &str = "/sys/devices/system/cpu";

fn topology() -> Vec<LogicalCpu> {
    let online = read_trimmed(format!("{SYS_CPU}/online"))
        .and_then(|s| parse_cpu_list(&s))
        .unwrap_or_else(|| {
            (0..std::thread::available_parallelism().map_or(1, |n| n.get())).collect()
        });
    online
        .into_iter()
        .map(|cpu| {
            let read = |f: &str| {
                read_trimmed(format!("{SYS_CPU}/cpu{cpu}/topology/{f}"))
                    .and_then(|s| s.parse::<i64>().ok())
            };
            LogicalCpu {
                cpu,
                package: read("physical_package_id").unwrap_or(-1),
                core: read("core_id").unwrap_or(cpu as i64),
            }
        })
        .collect()
}

fn caches(logical: &[LogicalCpu]) -> Vec<Cache> {
    // (level, type) -> set of distinct sharing lists, to count instances.
    let mut out: Vec<(Cache, BTreeSet<String>)> = Vec::new();
    for lc in logical {
        for index in 0..16 {
            let dir = format!("{SYS_CPU}/cpu{}/cache/index{index}", lc.cpu);
            let Some(level) = read_trimmed(format!("{dir}/level")).and_then(|s| s.parse().ok())
            else {
                break;
            };
            let kind = read_trimmed(format!("{dir}/type")).unwrap_or_else(|| "Unknown".into());
            let Some(size) = read_trimmed(format!("{dir}/size")).and_then(|s| parse_cache_size(&s))
            else {
                continue;
            };
            let shared = read_trimmed(format!("{dir}/shared_cpu_list")).unwrap_or_default();
            let shared_by = parse_cpu_list(&shared).map_or(1, |l| l.len().max(1) as u32);
            let line =
                read_trimmed(format!("{dir}/coherency_line_size")).and_then(|s| s.parse().ok());
            match out
                .iter_mut()
                .find(|(c, _)| c.level == level && c.kind == kind)
            {
                Some((_, sets)) => {
                    sets.insert(shared);
                }
                None => out.push((
                    Cache {
                        level,
                        kind,
                        size_bytes: size,
                        line_bytes: line,
                        shared_by_cpus: shared_by,
                        instances: 0,
                    },
                    BTreeSet::from([shared]),
                )),
            }
        }
    }
    out.into_iter()
        .map(|(mut c, sets)| {
            c.instances = sets.len() as u32;
            c
        })
        .collect()
}

fn not_measured_units() -> Fact<u32> {
    Fact::unknown("not measured by the peakbench that wrote this document")
}

fn not_measured() -> Fact<f64> {
    Fact::unknown("not measured by the peakbench that wrote this document")
}

fn count_distinct<T: Ord>(items: impl Iterator<Item = T>) -> usize {
    items.collect::<BTreeSet<_>>().len()
}

/// Measures the TSC rate against the monotonic clock over `window`.
#[cfg(target_arch = "x86_64")]
fn measure_tsc_ghz(window: Duration) -> Option<f64> {
    let t0 = std::time::Instant::now();
    let c0 = x86::rdtsc();
    while t0.elapsed() < window {
        std::hint::spin_loop();
    }
    let c1 = x86::rdtsc();
    let secs = t0.elapsed().as_secs_f64();
    (c1 > c0).then(|| (c1 - c0) as f64 / secs / 1e9)
}

fn meminfo_bytes(meminfo: &str, key: &str) -> Fact<u64> {
    proc_field(meminfo, key)
        .and_then(|v| v.trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or_else(
            || Fact::unknown(format!("no {key} in /proc/meminfo")),
            |kb| Fact::known(kb * 1024, Source::Detected),
        )
}

/// MemAvailable, or the control group's headroom where that is smaller.
fn available(meminfo: Fact<u64>, cgroup: Option<cgroup::MemoryLimit>) -> Fact<u64> {
    match (meminfo.value, cgroup) {
        (Some(m), Some(c)) if c.headroom < m => Fact::known(c.headroom, Source::Detected),
        (None, Some(c)) => Fact::known(c.headroom, Source::Detected),
        _ => meminfo,
    }
}

fn detected<T>(value: Option<T>, reason: &str) -> Fact<T> {
    value.map_or_else(
        || Fact::unknown(reason),
        |v| Fact::known(v, Source::Detected),
    )
}

/// How long sysinfo spends measuring the clock (each of its probes, interleaved).
pub use clock::ProbeBudget as ClockBudget;

/// Collects the system information, measuring the clock with `budget`.
pub fn collect(budget: ClockBudget) -> SystemInfo {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let mut cpu = portable_cpu(&cpuinfo);
    #[allow(unused_mut)]
    let mut virtualization = read_trimmed("/sys/hypervisor/type").map_or_else(
        || Fact::unknown("no /sys/hypervisor/type"),
        |t| Fact::known(t, Source::Detected),
    );
    #[cfg(target_arch = "x86_64")]
    {
        virtualization = identify_x86(&mut cpu, virtualization);
    }
    #[cfg(target_arch = "aarch64")]
    identify_arm(&mut cpu, &cpuinfo);

    let numa = numa_nodes();
    let distro = distribution();
    let cgroup_limit = cgroup::own_memory_limit();
    let caches = caches(&cpu.logical);
    let mut sys = SystemInfo {
        cpu,
        caches,
        memory: MemoryInfo {
            total_bytes: meminfo_bytes(&meminfo, "MemTotal"),
            available_bytes: available(meminfo_bytes(&meminfo, "MemAvailable"), cgroup_limit),
            cgroup_limit_bytes: cgroup_limit.map(|l| l.limit),
            numa_nodes: detected(numa, "no /sys/devices/system/node (kernel without NUMA)"),
            devices: memory_devices(),
        },
        os: OsInfo {
            hostname: detected(
                read_trimmed("/proc/sys/kernel/hostname"),
                "no /proc/sys/kernel/hostname",
            ),
            kernel: detected(
                read_trimmed("/proc/sys/kernel/osrelease"),
                "no /proc/sys/kernel/osrelease",
            ),
            distribution: detected(distro, "no PRETTY_NAME in /etc/os-release"),
            virtualization,
        },
    };
    sys.measure_clocks(budget);
    sys.measure_fma_units();
    sys
}

/// What every architecture tells of its CPU: the brand and clocks in /proc/cpuinfo and sysfs,
/// the topology; the rest unknown until the architecture's own identification fills it in,
/// the clocks until they are measured.
fn portable_cpu(cpuinfo: &str) -> CpuInfo {
    let logical = topology();
    let threads = logical.len() as u32;
    let topo_known = logical.iter().all(|l| l.package >= 0);
    let sockets = count_distinct(logical.iter().map(|l| l.package)) as u32;
    let cores = count_distinct(logical.iter().map(|l| (l.package, l.core))) as u32;
    let topo_reason = "no topology in /sys/devices/system/cpu/cpu*/topology";
    CpuInfo {
        arch: std::env::consts::ARCH.to_string(),
        vendor: Fact::unknown("not identified on this architecture"),
        brand: detected(
            proc_field(cpuinfo, "model name"),
            "no model name in /proc/cpuinfo",
        ),
        family: Fact::unknown("not identified on this architecture"),
        model: Fact::unknown("not identified on this architecture"),
        stepping: Fact::unknown("not identified on this architecture"),
        microarchitecture: Fact::unknown("not identified on this architecture"),
        sockets: detected(topo_known.then_some(sockets), topo_reason),
        cores: detected(topo_known.then_some(cores), topo_reason),
        threads,
        threads_per_core: detected(
            (topo_known && cores > 0).then(|| threads / cores),
            topo_reason,
        ),
        features: Vec::new(),
        xcr0: Fact::unknown("XCR0 exists only on x86"),
        isas: vec![Isa::Scalar],
        cpuinfo_mhz: detected(
            proc_field(cpuinfo, "cpu MHz").and_then(|v| v.parse().ok()),
            "no 'cpu MHz' in /proc/cpuinfo",
        ),
        max_freq_ghz: read_trimmed(format!("{SYS_CPU}/cpu0/cpufreq/cpuinfo_max_freq"))
            .and_then(|s| s.parse::<f64>().ok())
            .map_or_else(
                || Fact::unknown("no cpufreq in sysfs (a VM, or no cpufreq driver loaded)"),
                |khz| Fact::known(khz / 1e6, Source::Detected),
            ),
        tsc_ghz: Fact::unknown("no time-stamp counter on this architecture"),
        measured_clock_ghz: Fact::unknown("not measured yet"),
        clock_probes: Vec::new(),
        all_core_clock_ghz: Fact::unknown("not measured yet"),
        fma512_units: Fact::unknown(
            "measured only on Skylake-SP/Cascade Lake, whose parts have one or two 512-bit FMA units",
        ),
        cgroup_cpu_quota: cgroup::own_cpu_quota(),
        allowed_cpus: cpuset::allowed_cpus(),
        logical,
    }
}

/// What CPUID tells: the vendor, brand, family, model and stepping, the microarchitecture
/// from peakbench's table, the features, XCR0, the instruction sets and the TSC rate (measured
/// where CPUID does not give it); returns the virtualization, from the hypervisor CPUID names
/// or else `virtualization` (sysfs's).
#[cfg(target_arch = "x86_64")]
fn identify_x86(cpu: &mut CpuInfo, virtualization: Fact<String>) -> Fact<String> {
    let id = x86::identify();
    cpu.vendor = Fact::known(id.vendor.clone(), Source::Detected);
    if let Some(b) = id.brand {
        cpu.brand = Fact::known(b, Source::Detected);
    }
    cpu.family = Fact::known(id.family, Source::Detected);
    cpu.model = Fact::known(id.model, Source::Detected);
    cpu.stepping = Fact::known(id.stepping, Source::Detected);
    cpu.microarchitecture = match uarch::lookup_x86(&id.vendor, id.family, id.model) {
        Some(u) => Fact::known(u.name.to_string(), Source::Table),
        None => Fact::unknown(format!(
            "{} family {:#x} model {:#x} is not in peakbench's table",
            id.vendor, id.family, id.model
        )),
    };
    cpu.features = id.flags;
    cpu.xcr0 = id.xcr0.map_or_else(
        || Fact::unknown("OSXSAVE is clear: the OS does not enable XSAVE"),
        |x| Fact::known(format!("{x:#x}"), Source::Detected),
    );
    cpu.isas = id.isas;
    cpu.tsc_ghz = match (id.tsc_hz_cpuid, measure_tsc_ghz(Duration::from_millis(20))) {
        (Some(hz), _) => Fact::known(hz as f64 / 1e9, Source::Detected),
        (None, Some(ghz)) => Fact::known(ghz, Source::Measured),
        (None, None) => Fact::unknown("the TSC did not advance"),
    };
    match (id.hypervisor, virtualization.value.is_some()) {
        (Some(h), _) => Fact::known(h, Source::Detected),
        (None, true) => virtualization,
        (None, false) => Fact::known("none (CPUID hypervisor bit clear)".into(), Source::Detected),
    }
}

/// What /proc/cpuinfo tells on Arm: the implementer and part, the microarchitecture from
/// peakbench's table, the features and the instruction sets.
#[cfg(target_arch = "aarch64")]
fn identify_arm(cpu: &mut CpuInfo, cpuinfo: &str) {
    let id = arm::identify(cpuinfo);
    let reason = "no 'CPU implementer'/'CPU part' in /proc/cpuinfo";
    cpu.vendor = detected(id.implementer.map(|i| format!("{i:#x}")), reason);
    cpu.family = detected(id.implementer, reason);
    cpu.model = detected(id.part, reason);
    cpu.microarchitecture = match (id.implementer, id.part) {
        (Some(i), Some(p)) => match uarch::lookup_arm(i, p) {
            Some(u) => Fact::known(u.name.to_string(), Source::Table),
            None => Fact::unknown(format!(
                "implementer {i:#x} part {p:#x} is not in peakbench's table"
            )),
        },
        _ => Fact::unknown(reason),
    };
    cpu.features = id.flags;
    cpu.isas = id.isas;
}

/// The NUMA nodes sysfs lists, where it lists any.
fn numa_nodes() -> Option<u32> {
    std::fs::read_dir("/sys/devices/system/node")
        .map(|d| {
            d.filter_map(Result::ok)
                .filter(|e| {
                    let n = e.file_name();
                    let n = n.to_string_lossy();
                    n.starts_with("node") && n[4..].parse::<u32>().is_ok()
                })
                .count() as u32
        })
        .ok()
        .filter(|n| *n > 0)
}

/// The distribution's name (PRETTY_NAME in /etc/os-release).
fn distribution() -> Option<String> {
    let os_release = std::fs::read_to_string("/etc/os-release").unwrap_or_default();
    os_release.lines().find_map(|l| {
        l.strip_prefix("PRETTY_NAME=")
            .map(|v| v.trim_matches('"').to_string())
    })
}

impl ClockBudget {
    /// sysinfo's default: 100 ms of warm-up, then the best of 10 samples of 10 ms per probe.
    pub const DEFAULT: ClockBudget = ClockBudget {
        warmup: Duration::from_millis(100),
        sample: Duration::from_millis(10),
        samples: 10,
    };
}

impl Default for ClockBudget {
    fn default() -> Self {
        ClockBudget::DEFAULT
    }
}

fn decision_fact(d: &clock::ClockDecision) -> Fact<f64> {
    match (d.ghz, &d.unknown_reason) {
        (Some(ghz), _) => Fact::known(ghz, Source::Measured),
        (None, reason) => Fact::unknown(reason.clone().unwrap_or_default()),
    }
}

impl SystemInfo {
    /// The probe latencies: the table's for this core, else the architecture's usual ones.
    pub fn clock_latencies(&self) -> uarch::Latencies {
        self.uarch()
            .map_or(uarch::Latencies::native_default(), |u| u.latency)
    }

    /// What a measured clock is checked against: the TSC rate (else cpufreq's maximum, else
    /// /proc/cpuinfo's MHz) and the table's highest turbo.
    pub fn clock_limits(&self) -> clock::Plausibility {
        let c = &self.cpu;
        let nominal = c
            .tsc_ghz
            .get()
            .map(|g| (*g, "TSC".to_string()))
            .or_else(|| c.max_freq_ghz.get().map(|g| (*g, "cpufreq maximum".into())))
            .or_else(|| {
                c.cpuinfo_mhz
                    .get()
                    .map(|m| (m / 1000.0, "/proc/cpuinfo".into()))
            });
        clock::Plausibility {
            nominal,
            max_turbo: self
                .uarch()
                .and_then(|u| u.max_turbo_ghz.map(|t| (t, u.name.to_string()))),
        }
    }

    /// The probes for the machine's clock: imul and the scalar FMA (or, without FMA, the
    /// 128-bit vector add): both scalar-width, so no vector frequency licence applies.
    pub fn clock_probes(&self) -> Vec<clock::Probe> {
        let all = clock::available(&self.cpu.isas);
        let second = all
            .iter()
            .copied()
            .find(|p| matches!(p, clock::Probe::Fma { width_bits: 64 }))
            .or_else(|| {
                all.iter()
                    .copied()
                    .find(|p| matches!(p, clock::Probe::VecAdd { .. }))
            });
        all.first().copied().into_iter().chain(second).collect()
    }

    /// Measures `probes` on the calling thread and decides the clock.
    pub fn measure_clock(
        &self,
        probes: &[clock::Probe],
        budget: ClockBudget,
    ) -> clock::ClockDecision {
        clock::decide(
            clock::measure(probes, &self.clock_latencies(), budget),
            &self.clock_limits(),
        )
    }

    /// The 1-thread clock (on the first allowed CPU) and the all-core clock (every allowed CPU
    /// busy at once, started on a barrier).
    fn measure_clocks(&mut self, budget: ClockBudget) {
        let probes = self.clock_probes();
        let cpus = cpuset::allowed_cpus();
        let on = |cpu: usize| {
            let _ = cpuset::pin_current_thread(cpu);
        };
        let one = std::thread::scope(|s| {
            s.spawn(|| {
                on(cpus[0]);
                self.measure_clock(&probes, budget)
            })
            .join()
            .expect("clock probe thread panicked")
        });
        self.cpu.measured_clock_ghz = decision_fact(&one);
        self.cpu.clock_probes = one.readings;
        let barrier = std::sync::Barrier::new(cpus.len());
        let all: Vec<clock::ClockDecision> = std::thread::scope(|s| {
            let handles: Vec<_> = cpus
                .iter()
                .map(|&cpu| {
                    let (barrier, probes, this) = (&barrier, &probes, &*self);
                    s.spawn(move || {
                        on(cpu);
                        barrier.wait();
                        this.measure_clock(probes, budget)
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("clock probe thread panicked"))
                .collect()
        });
        self.cpu.all_core_clock_ghz = match all.iter().position(|d| d.ghz.is_none()) {
            Some(i) => Fact::unknown(format!(
                "on CPU {} of {} busy: {}",
                cpus[i],
                cpus.len(),
                all[i].unknown_reason.clone().unwrap_or_default()
            )),
            None => Fact::known(
                all.iter().filter_map(|d| d.ghz).sum::<f64>() / all.len() as f64,
                Source::Measured,
            ),
        };
    }

    /// On a Skylake-SP/Cascade Lake entry with AVX-512 usable, measures its 512-bit FMA units
    /// (on the first allowed CPU), which then choose the table entry.
    fn measure_fma_units(&mut self) {
        let signature = self.signature_uarch();
        if signature.is_none_or(|u| u.key != "skylake-sp") || !self.cpu.isas.contains(&Isa::Avx512)
        {
            return;
        }
        let latency = self.clock_latencies().fma;
        let cpu = cpuset::allowed_cpus()[0];
        let measured = std::thread::scope(|s| {
            s.spawn(|| {
                let _ = cpuset::pin_current_thread(cpu);
                fma_units::measure(latency)
            })
            .join()
            .expect("FMA unit probe panicked")
        });
        self.cpu.fma512_units = match measured.map(fma_units::decide) {
            Some(Ok(units)) => Fact::known(units, Source::Measured),
            Some(Err(why)) => Fact::unknown(why),
            None => Fact::unknown("AVX-512 could not be run"),
        };
    }

    /// The table entry by CPUID signature alone.
    fn signature_uarch(&self) -> Option<&'static uarch::Uarch> {
        let (family, model) = (*self.cpu.family.get()?, *self.cpu.model.get()?);
        match self.cpu.arch.as_str() {
            "x86_64" => uarch::lookup_x86(self.cpu.vendor.get()?, family, model),
            "aarch64" => uarch::lookup_arm(family, model),
            _ => None,
        }
    }

    /// The microarchitecture table entry for this machine, if any: by CPUID signature, then for
    /// Skylake-SP/Cascade Lake by its measured 512-bit FMA units or else its brand string.
    pub fn uarch(&self) -> Option<&'static uarch::Uarch> {
        let u = self.signature_uarch()?;
        Some(match self.cpu.fma512_units.get() {
            Some(&units) => uarch::with_fma512_units(u, units),
            None => uarch::refine_by_brand(u, self.cpu.brand.get().map(String::as_str)),
        })
    }

    /// The last-level cache's size, all its instances (sockets, core complexes) together, if
    /// sysfs gives it.
    pub fn llc_total_bytes(&self) -> Option<u64> {
        self.caches
            .iter()
            .filter(|c| c.kind != "Instruction")
            .max_by_key(|c| c.level)
            .map(|c| c.size_bytes * u64::from(c.instances.max(1)))
    }

    /// The last-level cache's size (one instance), if sysfs gives it.
    pub fn llc_bytes(&self) -> Option<u64> {
        self.caches
            .iter()
            .filter(|c| c.kind != "Instruction")
            .max_by_key(|c| c.level)
            .map(|c| c.size_bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn collects_this_machine() {
        let info = collect(ClockBudget {
            warmup: Duration::from_millis(1),
            sample: Duration::from_millis(1),
            samples: 1,
        });
        assert!(info.cpu.threads >= 1);
        assert!(info.cpu.isas.contains(&Isa::Scalar));
        assert!(info.memory.total_bytes.get().is_some_and(|b| *b > 0));
        // Every unknown carries a reason.
        let json = serde_json::to_value(&info).unwrap();
        fn check(v: &serde_json::Value) {
            if let Some(o) = v.as_object() {
                if o.contains_key("value") && o["value"].is_null() {
                    assert!(o["unknown_reason"].is_string(), "{v}");
                }
                o.values().for_each(check);
            }
        }
        check(&json);
    }
}
