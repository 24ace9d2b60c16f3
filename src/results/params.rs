//! A record's parameters: one type per kind of workload, which the benchmark fills, the record
//! stores and every reader (exporters, charts, reference adapters, the history, the multi-node
//! merge) reads by field. In the JSON document they are the flat `params` object
//! (docs/json-schema.md); which type an object is follows from the record's subsystem and
//! workload ([`Params::decode`]).

use crate::ids::Subsystem;
use crate::sysinfo::Isa;
use crate::sysinfo::clock::ProbeReading;
use crate::workload::Workload;
use crate::workload::mem::MemWorkload;
use crate::workload::spec::Work;
use serde::{Deserialize, Serialize};

pub use super::kinds::*;
pub use super::latency_params::*;
pub use super::node_tag::NodeTag;

fn is_false(b: &bool) -> bool {
    !*b
}

/// Strong scaling splits a fixed total amount of work across the threads; weak scaling gives
/// every thread the same amount.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Scaling {
    /// Fixed total work split across the threads.
    Strong,
    /// Fixed work per thread.
    Weak,
}

impl Scaling {
    pub fn name(self) -> &'static str {
        match self {
            Scaling::Strong => "strong",
            Scaling::Weak => "weak",
        }
    }
}

/// Which engine runs the disk I/Os (its capabilities: `bench::disk::engine`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum EngineKind {
    /// pread/pwrite, one I/O at a time per thread.
    Psync,
    /// io_uring with registered file and buffers, up to 256 in flight per thread.
    #[value(name = "io_uring")]
    IoUring,
    /// No I/O: the harness's own cost per I/O.
    Null,
    /// fread/fwrite: each record through a library buffer of --stream-buffer bytes, one at a
    /// time per thread, through the page cache (IOzone's fread and fwrite tests).
    Stream,
}

/// When writes are made durable, as fio's `end_fsync`, `fsync`, `sync` options: `--sync` on
/// the command line, `sync` in disk records.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, clap::ValueEnum,
)]
#[serde(rename_all = "kebab-case")]
pub enum SyncMode {
    /// No sync: writes may still be in the page cache or the device's cache at the end.
    None,
    /// fdatasync once at the end of each repetition, inside its timed window (fio's
    /// end_fsync=1).
    #[default]
    FdatasyncEnd,
    /// fsync after every write, its time part of that write's latency (fio's fsync=1).
    FsyncEach,
    /// The file opened with O_SYNC: every write returns when it and the file's metadata are
    /// durable (fio's sync=1).
    OSync,
    /// The file opened with O_DSYNC: every write returns when its data are durable (fio's
    /// sync=dsync).
    ODsync,
}

impl SyncMode {
    pub fn name(self) -> &'static str {
        match self {
            SyncMode::None => "none",
            SyncMode::FdatasyncEnd => "fdatasync-end",
            SyncMode::FsyncEach => "fsync-each",
            SyncMode::OSync => "o-sync",
            SyncMode::ODsync => "o-dsync",
        }
    }

    /// The flags the file is opened with.
    pub fn open_flags(self) -> i32 {
        match self {
            SyncMode::OSync => libc::O_SYNC,
            SyncMode::ODsync => libc::O_DSYNC,
            _ => 0,
        }
    }
}

/// The transport of a network test: `tcp`/`udp` on the command line and the wire, `TCP`/`UDP`
/// in records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum Proto {
    Tcp,
    Udp,
}

impl Proto {
    pub fn name(self) -> &'static str {
        match self {
            Proto::Tcp => "TCP",
            Proto::Udp => "UDP",
        }
    }
}

/// A protocol as records write it (`TCP`, `UDP`).
mod proto_name {
    use super::Proto;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(p: &Proto, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(p.name())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Proto, D::Error> {
        let text = String::deserialize(d)?;
        match text.to_ascii_uppercase().as_str() {
            "TCP" => Ok(Proto::Tcp),
            "UDP" => Ok(Proto::Udp),
            _ => Err(serde::de::Error::custom(format!(
                "unknown protocol '{text}'"
            ))),
        }
    }
}

/// CPU points. The NULL workload (the harness alone) has no kernel.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CpuParams {
    pub threads: usize,
    #[serde(default)]
    pub cpus: Vec<usize>,
    #[serde(default)]
    pub cores: u32,
    #[serde(default, skip_serializing_if = "is_false")]
    pub oversubscribed: bool,
    /// The CPUs' worth of time the process's control group allowed while the point ran (its
    /// CPU quota), where that was less than the point's threads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_quota: Option<f64>,
    #[serde(flatten)]
    pub kernel: Option<CpuKernel>,
    /// LINPACK and DGEMM points: the problem and how it was solved.
    #[serde(flatten)]
    pub linalg: Option<LinalgParams>,
    #[serde(flatten)]
    pub node: NodeTag,
}

/// A dense linear-algebra point (LINPACK, DGEMM): its size and engine, and for LINPACK HPL's
/// residual check.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LinalgParams {
    /// The order of the matrices (HPL's N).
    pub n: usize,
    /// The share of available memory N was sized from (`--memory-fraction`), where it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_fraction: Option<f64>,
    pub engine: LinalgEngine,
    /// The multiply's micro-kernel: built-in, its instruction set and register tile, e.g.
    /// `AVX-512 24x8`; system, the library's kernels as it names them (`OpenBLAS Cooperlake`)
    /// or `unknown (system BLAS)`.
    pub micro_kernel: String,
    /// Built-in engine: the micro-kernel's instruction set (`--isa`'s name); absent for a
    /// system library's kernels and in documents from before it was recorded. (Not `isa`: the
    /// parameters flatten a kernel's fields and a dense solve's into one object.)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub micro_kernel_isa: Option<crate::sysinfo::Isa>,
    /// System engine: the file(s) the routines came from and the library's version or
    /// configuration string; absent for the built-in engine.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub library: Option<String>,
    /// System engine: the threads the library said it would use (1 for a single-threaded
    /// build); absent when it cannot be asked (then the record has a warning).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub library_threads: Option<usize>,
    /// The factorisation's block (HPL's NB); LINPACK only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nb: Option<usize>,
    /// The operations of one solve or multiply as counted (LINPACK: HPL's 2/3·N³ + 3/2·N²;
    /// DGEMM: 2·N³).
    pub flops: f64,
    /// LINPACK: HPL's scaled residual ‖Ax−b‖∞ / (ε·(‖A‖∞·‖x‖∞ + ‖b‖∞)·N) of the last
    /// repetition, and whether every repetition passed (below 16).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub residual: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub residual_passed: Option<bool>,
}

/// What a CPU throughput point ran and the clock it ran at.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CpuKernel {
    pub scaling: Scaling,
    pub isa: Isa,
    pub instruction: String,
    /// `fp64 FMA`, `int16 add`, … (empty in documents written before it was recorded: their
    /// kernel, its ISA and scaling, is read all the same, so that their points pair).
    #[serde(default)]
    pub operation: String,
    pub ops_per_iteration: u64,
    pub iterations_per_thread: u64,
    /// Fixed work (`--total-ops`): the operations asked for, of one repetition (split between
    /// the threads with strong scaling, each thread's with weak); absent for timed points.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_ops: Option<u64>,
    /// Each thread's own rate, GOPS.
    #[serde(default)]
    pub thread_gops: Vec<f64>,
    /// Null when the probes did not agree.
    pub clock_ghz: Option<f64>,
    #[serde(default)]
    pub clock_probes: Vec<ProbeReading>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_unknown_reason: Option<String>,
}

/// Memory bandwidth points (and the memory NULL workload, which has no kernel).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemParams {
    pub threads: usize,
    /// As [`CpuParams::cpu_quota`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_quota: Option<f64>,
    #[serde(flatten)]
    pub kernel: Option<MemKernel>,
    #[serde(flatten)]
    pub node: NodeTag,
}

/// What a memory bandwidth point moved.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemKernel {
    pub cpus: Vec<usize>,
    pub isa: Isa,
    pub stores: StoreKind,
    /// MIX and LOADED's traffic: arrays read and written per element ("3:1"); absent for the
    /// fixed kernels, whose workload says it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mix: Option<Mix>,
    #[serde(flatten)]
    pub blocks: Option<MemBlocks>,
    pub array_bytes_per_thread: u64,
    pub pages: Pages,
    pub working_set_bytes: u64,
    pub bytes_read_per_pass: u64,
    pub bytes_written_per_pass: u64,
    pub passes: u64,
    /// Fixed work (`--total-bytes`): the bytes asked for, of one repetition, and how they
    /// were split between the threads; absent for timed points.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scaling: Option<Scaling>,
    pub byte_counting: ByteCounting,
}

/// The block workloads' blocks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemBlocks {
    pub block_size_bytes: u64,
    pub blocks_per_thread: u64,
    pub order: Order,
}

pub use crate::measure::cpu_usage::CpuUse;

/// Disk points: the throughput, IOPS and latency records of one point share them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DiskParams {
    pub threads: usize,
    pub iodepth: usize,
    pub block_size_bytes: u64,
    pub engine: EngineKind,
    pub io_mode: IoMode,
    /// Why a point runs `buffered` although O_DIRECT was asked for (its records are not whole
    /// logical blocks), and what was done about the page cache.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub io_mode_reason: Option<String>,
    /// When writes are made durable (points before this field ended writes with fdatasync).
    #[serde(default)]
    pub sync: SyncMode,
    /// Each thread on a file of its own (else all threads on one file, each in its region).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub file_per_thread: bool,
    pub pattern: IoPattern,
    /// A stride read's distance between two blocks it reads, in blocks (IOzone's -j).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stride_blocks: Option<u64>,
    /// The stream engine's library buffer (fread/fwrite through a buffer of this size).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream_buffer_bytes: Option<u64>,
    pub read_percent: u32,
    pub file_size_bytes: u64,
    /// The measured time of a repetition (0 where it is fixed work: `total_bytes`); with
    /// `--sustain`, the longest.
    pub runtime_s: f64,
    /// `--sustain`'s steady times as the builds of 2026-11-29 wrote them, read into the
    /// record's `sustain` ([`crate::results::phases::Sustain`]); never written.
    #[serde(default, skip_serializing)]
    pub steady_s: Option<Vec<Option<f64>>>,
    /// Fixed work (`--total-bytes`): the bytes of one repetition after its ramp, and how they
    /// were split between the threads; absent for timed points.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scaling: Option<Scaling>,
    pub ramp_s: f64,
    pub final_sync_s: f64,
    #[serde(default)]
    pub cpus: Vec<usize>,
    pub target: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<String>,
    /// The file system holding the target (`ext4`, `xfs`, `tmpfs`, …; absent on a raw device).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_system: Option<String>,
    pub littles_law: LittlesLaw,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_definition: Option<String>,
    /// What the point cost in CPU (absent in documents from before it was measured).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<CpuUse>,
    #[serde(flatten)]
    pub node: NodeTag,
}

/// Little's law: outstanding I/Os = IOPS × mean latency.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LittlesLaw {
    pub outstanding: usize,
    pub expected_iops: f64,
    pub ratio: f64,
    pub within_5_percent: bool,
}

/// Network points (goodput, loss, jitter, round trips).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NetParams {
    pub threads: usize,
    pub streams: u32,
    #[serde(with = "proto_name")]
    pub protocol: Proto,
    pub message_size_bytes: u32,
    pub duration_s: f64,
    pub omit_s: f64,
    /// The server measured (absent between the nodes of a multi-node run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sender_threads: Option<usize>,
    #[serde(flatten)]
    pub link: Option<Route>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub side: Option<Side>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub direction: Option<Direction>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_rate_bps: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub busy_poll_us: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub datagrams_sent: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub datagrams_received: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub out_of_order: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loss_definition: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// Set by versions before protocol 3 for datagrams too short for the header (loss
    /// approximate); kept so that their records still load.
    pub loss_note: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jitter_definition: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tcp_nodelay: Option<bool>,
    /// The client's socket buffers at the end of the test (its first data socket's SO_SNDBUF
    /// and SO_RCVBUF as the kernel reports them, twice what was asked; TCP grows them as it
    /// goes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub send_buffer_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub receive_buffer_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lost: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_definition: Option<String>,
    /// Round trips: each stream's own mean round-trip time, µs (mean over the repetitions).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stream_rtt_us: Vec<f64>,
    /// What the point cost in CPU on this end, from the start of each repetition's transfer to
    /// its end (absent in documents from before it was measured, and between nodes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<CpuUse>,
    /// What it cost the server's machine, as the server reported it (absent on loopback, where
    /// `cpu` is the same machine's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_cpu: Option<Box<CpuUse>>,
    /// The socket options asked of both ends (absent when none were), and each end's first
    /// data socket as its kernel held it at the end of the last repetition.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub socket_options: Option<crate::results::socket::SocketOptions>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_socket: Option<Box<crate::results::socket::SocketState>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_socket: Option<Box<crate::results::socket::SocketState>>,
    /// Fixed work per stream (iperf3 `-n`, `-k`): payload bytes, or round trips of a ping-pong;
    /// `scaling` says whether the total was split among the streams (strong) or each stream's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub amount_per_stream: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scaling: Option<Scaling>,
    /// A paced ping-pong's round trips (CONNECT: connections) per second per stream (sockperf
    /// `--mps`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mps: Option<u32>,
    /// LATENCY under load: the bulk streams from the client to the server beside the pings
    /// (0: idle), and their goodput at the server (mean over the repetitions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_streams: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_goodput_bps: Option<f64>,
    /// CONNECT's latency records: what they time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<crate::results::kinds::ConnectPhase>,
    #[serde(flatten)]
    pub between: Option<Link>,
    #[serde(flatten)]
    pub node: NodeTag,
}

/// The route to the server: its interface and MTU (null when unknown).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Route {
    pub interface: String,
    pub mtu_bytes: Option<u32>,
}

/// A test between two nodes of a multi-node run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Link {
    pub pattern: LinkPattern,
    /// The client: it sends and it pings.
    pub src_node: u32,
    /// The server.
    pub dst_node: u32,
}

/// A record's parameters.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Params {
    Cpu(CpuParams),
    Mem(MemParams),
    MemLatency(LatencyParams),
    Disk(DiskParams),
    Net(NetParams),
}

macro_rules! into_params {
    ($($t:ty => $v:ident),*) => {$(
        impl From<$t> for Params {
            fn from(p: $t) -> Params {
                Params::$v(p)
            }
        }
    )*};
}
into_params!(CpuParams => Cpu, MemParams => Mem, LatencyParams => MemLatency, DiskParams => Disk, NetParams => Net);

impl Params {
    /// The parameters of a record of `workload`, from the JSON object.
    pub fn decode(workload: Workload, value: serde_json::Value) -> Result<Params, String> {
        let what =
            |e: serde_json::Error| format!("{} {workload} parameters: {e}", workload.subsystem());
        Ok(match workload {
            Workload::Cpu(_) | Workload::Linalg(_) => {
                Params::Cpu(serde_json::from_value(value).map_err(what)?)
            }
            Workload::Mem(w) if w.spec().work == Work::Loads => {
                Params::MemLatency(serde_json::from_value(value).map_err(what)?)
            }
            Workload::Mem(_) => Params::Mem(serde_json::from_value(value).map_err(what)?),
            Workload::Disk(_) => Params::Disk(serde_json::from_value(value).map_err(what)?),
            Workload::Net(_) => Params::Net(serde_json::from_value(value).map_err(what)?),
        })
    }

    /// The parameters of a record that gives only some of them (a test's, a hand-written
    /// document's): the others take neutral values (one thread, a 4 KiB psync point, one TCP
    /// stream, a staircase step; a CPU or memory kernel only where `isa` is given).
    pub fn with_defaults(workload: Workload, given: serde_json::Value) -> Result<Params, String> {
        use serde_json::json;
        let subsystem = workload.subsystem();
        let mut all = match workload {
            Workload::Disk(_) => json!({
                "threads": 1, "iodepth": 1, "block_size_bytes": 4096, "engine": "psync",
                "io_mode": "direct", "pattern": "random", "read_percent": 100,
                "file_size_bytes": 16_777_216, "runtime_s": 1.0, "ramp_s": 0.0,
                "final_sync_s": 0.0, "cpus": [], "target": "",
                "littles_law": {"outstanding": 1, "expected_iops": 1.0, "ratio": 1.0,
                                "within_5_percent": true}
            }),
            Workload::Net(_) => json!({
                "threads": 1, "streams": 1, "protocol": "TCP", "message_size_bytes": 131072,
                "duration_s": 1.0, "omit_s": 0.0
            }),
            Workload::Mem(MemWorkload::Latency) => json!({"threads": 1, "probe": "chase"}),
            Workload::Mem(MemWorkload::C2c) => json!({
                "threads": 2, "probe": "c2c", "from_cpu": 0, "to_cpu": 1, "shared": "l3",
                "round_trips": 1
            }),
            _ => json!({"threads": 1}),
        };
        let kernel = match subsystem {
            Subsystem::Cpu if given.get("isa").is_some() => json!({
                "scaling": "weak", "instruction": "", "operation": "",
                "ops_per_iteration": 1, "iterations_per_thread": 1, "clock_ghz": null
            }),
            Subsystem::Mem if given.get("isa").is_some() => json!({
                "cpus": [0], "stores": "nt", "array_bytes_per_thread": 1, "pages": "thp",
                "working_set_bytes": 1, "bytes_read_per_pass": 1, "bytes_written_per_pass": 1,
                "passes": 1,
                "byte_counting": "STREAM: bytes read + bytes written, no write-allocate"
            }),
            Subsystem::Mem if workload == MemWorkload::Latency => {
                match given.get("probe").and_then(|p| p.as_str()) {
                    Some("chase") | None => json!({
                        "working_set_bytes": 4096, "pages": "thp", "huge_page_bytes": null,
                        "loads": 1, "clock_ghz": null
                    }),
                    Some("level") => json!({
                        "level": "L1", "pages": "thp", "plateau_from_bytes": 0, "plateau_to_bytes": 0
                    }),
                    Some(_) => json!({
                        "op_bytes": 8, "order": "sequential", "working_set_bytes": 0, "ops": 1
                    }),
                }
            }
            _ => json!({}),
        };
        for source in [kernel, given] {
            if let (Some(to), serde_json::Value::Object(from)) = (all.as_object_mut(), source) {
                to.extend(from);
            }
        }
        Params::decode(workload, all)
    }

    /// Threads (network: streams) of the point.
    pub fn threads(&self) -> usize {
        match self {
            Params::Cpu(p) => p.threads,
            Params::Mem(p) => p.threads,
            Params::MemLatency(p) => p.threads,
            Params::Disk(p) => p.threads,
            Params::Net(p) => p.threads,
        }
    }

    pub fn node(&self) -> &NodeTag {
        match self {
            Params::Cpu(p) => &p.node,
            Params::Mem(p) => &p.node,
            Params::MemLatency(p) => &p.node,
            Params::Disk(p) => &p.node,
            Params::Net(p) => &p.node,
        }
    }

    pub fn node_mut(&mut self) -> &mut NodeTag {
        match self {
            Params::Cpu(p) => &mut p.node,
            Params::Mem(p) => &mut p.node,
            Params::MemLatency(p) => &mut p.node,
            Params::Disk(p) => &mut p.node,
            Params::Net(p) => &mut p.node,
        }
    }

    /// The CPU quota a CPU or memory point (bandwidth or latency) ran under
    /// ([`CpuParams::cpu_quota`]).
    pub fn cpu_quota(&self) -> Option<f64> {
        match self {
            Params::Cpu(p) => p.cpu_quota,
            Params::Mem(p) => p.cpu_quota,
            Params::MemLatency(p) => p.cpu_quota,
            _ => None,
        }
    }

    /// Records the CPU quota a CPU or memory point ran under; other points have none.
    pub fn set_cpu_quota(&mut self, quota: f64) {
        match self {
            Params::Cpu(p) => p.cpu_quota = Some(quota),
            Params::Mem(p) => p.cpu_quota = Some(quota),
            Params::MemLatency(p) => p.cpu_quota = Some(quota),
            _ => {}
        }
    }

    pub fn cpu(&self) -> Option<&CpuParams> {
        match self {
            Params::Cpu(p) => Some(p),
            _ => None,
        }
    }

    pub fn mem(&self) -> Option<&MemParams> {
        match self {
            Params::Mem(p) => Some(p),
            _ => None,
        }
    }

    pub fn latency(&self) -> Option<&LatencyParams> {
        match self {
            Params::MemLatency(p) => Some(p),
            _ => None,
        }
    }

    /// What the point cost in CPU, where it was measured (disk and network points).
    pub fn cpu_use(&self) -> Option<&CpuUse> {
        match self {
            Params::Disk(d) => d.cpu.as_ref(),
            Params::Net(n) => n.cpu.as_ref(),
            _ => None,
        }
    }

    pub fn disk(&self) -> Option<&DiskParams> {
        match self {
            Params::Disk(p) => Some(p),
            _ => None,
        }
    }

    pub fn net(&self) -> Option<&NetParams> {
        match self {
            Params::Net(p) => Some(p),
            _ => None,
        }
    }

    pub fn net_mut(&mut self) -> Option<&mut NetParams> {
        match self {
            Params::Net(p) => Some(p),
            _ => None,
        }
    }

    /// The ISA of a CPU or memory bandwidth point.
    pub fn isa(&self) -> Option<Isa> {
        match self {
            Params::Cpu(p) => p.kernel.as_ref().map(|k| k.isa),
            Params::Mem(p) => p.kernel.as_ref().map(|k| k.isa),
            _ => None,
        }
    }

    /// The CPUs the point's threads were pinned to (a NUMA cell's: its bandwidth's, as many
    /// as its threads, not the one its chase ran on alone).
    pub fn cpus(&self) -> &[usize] {
        match self {
            Params::Cpu(p) => &p.cpus,
            Params::Mem(p) => p.kernel.as_ref().map_or(&[], |k| &k.cpus),
            Params::Disk(p) => &p.cpus,
            Params::MemLatency(p) => p.cell.as_ref().map_or(&p.cpus, |c| &c.bandwidth_cpus),
            Params::Net(_) => &[],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Every kind reads back what it writes, key for key, including the keys written as null.
    #[test]
    fn each_kind_round_trips_its_json_object() {
        let cases = [
            (
                "cpu",
                "DP",
                json!({"threads": 2, "cpus": [0, 1], "cores": 2, "scaling": "weak", "isa": "avx512",
                       "instruction": "vfmadd213pd zmm", "operation": "fp64 FMA",
                       "ops_per_iteration": 384, "iterations_per_thread": 1000,
                       "thread_gops": [60.0, 61.0], "clock_ghz": null, "clock_probes": [],
                       "clock_unknown_reason": "probes disagree", "node": 1, "host": "b"}),
            ),
            (
                "cpu",
                "NULL",
                json!({"threads": 1, "cpus": [0], "cores": 1}),
            ),
            ("mem", "NULL", json!({"threads": 1})),
            (
                "mem",
                "RWR",
                json!({"threads": 1, "cpus": [0], "isa": "avx2", "stores": "regular",
                       "block_size_bytes": 1000, "blocks_per_thread": 4, "order": "random",
                       "array_bytes_per_thread": 4000, "pages": "thp", "working_set_bytes": 8000,
                       "bytes_read_per_pass": 4000, "bytes_written_per_pass": 4000, "passes": 3,
                       "byte_counting": "STREAM: bytes read + bytes written, no write-allocate"}),
            ),
            (
                "mem",
                "LATENCY",
                json!({"threads": 1, "probe": "chase", "working_set_bytes": 4096, "pages": "4k",
                       "huge_page_bytes": null, "loads": 100, "clock_ghz": null}),
            ),
            (
                "mem",
                "LATENCY",
                json!({"threads": 1, "probe": "level", "level": "L2", "pages": "thp",
                       "plateau_from_bytes": 65536, "plateau_to_bytes": 524288,
                       "capacity_bytes": 1048576, "sysfs_size_bytes": null,
                       "latency_cycles": 14.0}),
            ),
            (
                "mem",
                "LATENCY",
                json!({"threads": 1, "probe": "memory", "level": "memory", "pages": "thp",
                       "plateau_from_bytes": 1, "plateau_to_bytes": 2}),
            ),
            (
                "mem",
                "LATENCY",
                json!({"threads": 1, "probe": "seq-8B", "op_bytes": 8, "order": "sequential",
                       "working_set_bytes": 67108864, "ops": 1000}),
            ),
            (
                "mem",
                "C2C",
                json!({"threads": 2, "probe": "c2c", "cpus": [0, 5], "from_cpu": 0, "to_cpu": 5,
                       "shared": "package", "round_trips": 400000}),
            ),
            (
                "disk",
                "RR",
                json!({"threads": 1, "iodepth": 32, "block_size_bytes": 4096, "engine": "io_uring",
                       "io_mode": "direct", "pattern": "random", "read_percent": 100,
                       "file_size_bytes": 1, "runtime_s": 1.0, "ramp_s": 0.25,
                       "final_sync_s": 0.0, "cpus": [1], "target": "/tmp/x", "device": "vda",
                       "sync": "fdatasync-end",
                       "littles_law": {"outstanding": 32, "expected_iops": 1.0, "ratio": 1.0,
                                       "within_5_percent": true}}),
            ),
            (
                "disk",
                "COPY",
                json!({"threads": 2, "iodepth": 1, "block_size_bytes": 1000, "engine": "psync",
                       "io_mode": "buffered", "io_mode_reason": "not whole blocks",
                       "sync": "fsync-each", "file_per_thread": true,
                       "pattern": "sequential", "read_percent": 50,
                       "file_size_bytes": 1, "runtime_s": 1.0, "ramp_s": 0.25,
                       "final_sync_s": 0.0, "cpus": [1], "target": "/tmp/x",
                       "littles_law": {"outstanding": 2, "expected_iops": 1.0, "ratio": 1.0,
                                       "within_5_percent": true}}),
            ),
            (
                "mem",
                "LATENCY",
                json!({"threads": 2, "probe": "random-8B", "cpus": [0, 1],
                       "thread_latency_ns": [7.5, 8.0], "ops_per_s": 2.5e8, "op_bytes": 8,
                       "order": "random", "working_set_bytes": 67108864, "ops": 1000}),
            ),
            (
                "net",
                "THROUGHPUT",
                json!({"threads": 1, "streams": 1, "protocol": "TCP", "message_size_bytes": 131072,
                       "duration_s": 1.0, "omit_s": 0.25, "interface": "lo", "mtu_bytes": null,
                       "side": "receiver", "direction": "client to server", "busy_poll_us": 50,
                       "pattern": "pairs", "src_node": 0, "dst_node": 2, "node": 0, "host": "a"}),
            ),
        ];
        for (subsystem, workload, object) in cases {
            let p = Params::decode(
                crate::results::Workload::named(subsystem.parse().unwrap(), workload).unwrap(),
                object.clone(),
            )
            .unwrap();
            assert_eq!(
                serde_json::to_value(&p).unwrap(),
                object,
                "{subsystem} {workload}"
            );
        }
        // A disk record from before --sync ended its writes with fdatasync.
        let old = Params::decode(
            crate::results::Workload::Disk(crate::workload::disk::DiskWorkload::Ws),
            json!({"threads": 1, "iodepth": 1, "block_size_bytes": 4096, "engine": "psync",
                   "io_mode": "direct", "pattern": "sequential", "read_percent": 0,
                   "file_size_bytes": 1, "runtime_s": 1.0, "ramp_s": 0.0, "final_sync_s": 0.1,
                   "target": "/tmp/x", "littles_law": {"outstanding": 1, "expected_iops": 1.0,
                   "ratio": 1.0, "within_5_percent": true}}),
        )
        .unwrap();
        assert_eq!(old.disk().unwrap().sync, SyncMode::FdatasyncEnd);
        let chase = Params::decode(
            crate::results::Workload::Mem(crate::workload::mem::MemWorkload::Latency),
            cases_chase(),
        )
        .unwrap();
        assert!(chase.latency().unwrap().chase.is_some());
        assert!(
            Params::decode(
                crate::results::Workload::Disk(crate::workload::disk::DiskWorkload::Rr),
                json!({"threads": 1})
            )
            .is_err()
        );
    }

    fn cases_chase() -> serde_json::Value {
        json!({"threads": 1, "probe": "chase", "working_set_bytes": 4096, "pages": "4k",
               "huge_page_bytes": 0, "loads": 100, "clock_ghz": 3.0, "latency_cycles": 4.0})
    }

    /// A record's workload is read with its subsystem (COPY is a memory or a disk workload by
    /// it, and its parameters are decoded as that one's); a name its subsystem does not have,
    /// or text that would drive a terminal, is refused with a printable message.
    #[test]
    fn a_records_workload_is_read_with_its_subsystem() {
        use crate::results::{Metric, ResultRecord, Unit};
        use crate::workload::disk::DiskWorkload;
        let params = Params::with_defaults(Workload::Disk(DiskWorkload::Copy), json!({})).unwrap();
        let rec = ResultRecord::new(
            DiskWorkload::Copy,
            params,
            Metric::Throughput,
            Unit::MBPerSec,
            vec![1.0, 2.0],
            Err("none".into()),
        );
        let mut doc = serde_json::to_value(&rec).unwrap();
        assert_eq!(doc["workload"], "COPY");
        let back: ResultRecord = serde_json::from_value(doc.clone()).unwrap();
        assert_eq!(back.workload, Workload::Disk(DiskWorkload::Copy));
        assert!(back.params.disk().is_some());
        for (subsystem, name) in [("net", "COPY"), ("disk", "copy"), ("disk", "X\u{1b}[2J")] {
            doc["subsystem"] = json!(subsystem);
            doc["workload"] = json!(name);
            let e = serde_json::from_value::<ResultRecord>(doc.clone()).unwrap_err();
            let e = e.to_string();
            assert!(e.contains("workload") && !e.contains('\u{1b}'), "{e}");
        }
    }
}
