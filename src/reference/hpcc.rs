//! HPL, the LINPACK reference, as Debian's `hpcc` package runs it (the HPC Challenge suite: its
//! HPL and DGEMM parts are the ones compared). A LINPACK point of order N on T threads is
//! compared with HPL at the same N on T MPI processes of one thread each (`mpirun -np T`, a
//! 1 × T grid or the squarest P × Q), written `hpccinf.txt` in a temporary directory; a DGEMM
//! point with hpcc's StarDGEMM (every process multiplying at once, summed over the processes;
//! hpcc sizes that multiply itself).
//!
//! A memory COPY, SCALE, ADD or TRIAD point is compared with hpcc's STREAM (McCalpin's kernels
//! inside the suite, counted as STREAM and peakbench count them: 16 bytes an element for copy
//! and scale, 24 for add and triad; GB/s decimal, B/s = GB/s × 10⁹). hpcc has no option for
//! STREAM's arrays: it sizes them from HPL's matrix, each process's three arrays together as
//! large as its share of the matrix (`HPCC_LocalVectorSize`: N² × 8 bytes ÷ P processes ÷ 8
//! bytes ÷ 3 arrays elements, at most 2³⁰), so the point's arrays choose N ([`order_for`]). A
//! point of one thread takes SingleSTREAM (one process alone); of T threads, StarSTREAM on T
//! processes (all at once, each at the slowest one's pace: hpcc takes the longest time of the
//! processes) × T. The whole suite runs (HPL of that N too), so a large array is a long run.
//!
//! hpcc calls whatever `libblas.so.3` the system selects: with Debian's reference BLAS its
//! DGEMM reaches a few GFLOP/s instead of tens, so that BLAS makes the tool unusable (with the
//! command that installs OpenBLAS), and the library is part of the version shown.

use super::process::run_bounded;
use super::{RefContext, RefError, Tool, params_of, unit_error};
use crate::results::ResultRecord;
use crate::results::{Metric, Subsystem, Unit, Workload};
use crate::workload::linalg::LinalgWorkload;
use crate::workload::mem::MemWorkload;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

const TOOL: Tool = Tool::Hpcc;

/// Where Debian's alternatives put the BLAS that programs load.
const LIBBLAS: &str = "/usr/lib/x86_64-linux-gnu/libblas.so.3";

/// One hpcc run.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Job {
    pub n: usize,
    pub nb: usize,
    pub processes: usize,
    pub launch: Launch,
}

/// Where hpcc's MPI processes run.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Launch {
    /// On this machine (`mpirun -np P`).
    Local,
    /// Over several machines with Open MPI's `mpirun --host ADDR:SLOTS,…` (its own remote
    /// launch, usually ssh): a multi-node HPL as clusters run it.
    Hosts(Vec<(std::net::IpAddr, usize)>),
    /// Over the nodes of the current Slurm allocation (`srun --overlap`).
    Srun,
}

/// The name of hpcc's STREAM figures in a report (its HPL and DGEMM figures are the tool's).
pub const STREAM_NAME: &str = "STREAM (hpcc)";

/// The longest hpcc run a memory point is given (its estimate, [`estimate_s`]): the whole suite
/// runs for STREAM's arrays, HPL of the order they need included.
pub const STREAM_LONGEST_S: f64 = 300.0;

/// The most elements hpcc gives each STREAM array (`HPCC_LocalVectorSize`: 2³⁰).
pub const MAX_STREAM_ELEMENTS: u64 = 1 << 30;

/// The run for a LINPACK or DGEMM throughput record, or for a memory throughput record of a
/// workload whose spec names hpcc (STREAM's kernels).
pub fn job(rec: &ResultRecord, _ctx: &RefContext) -> Option<Result<Job, RefError>> {
    if rec.subsystem == Subsystem::Mem {
        return stream_job(rec);
    }
    if rec.metric != Metric::Throughput {
        return None;
    }
    Some(params_of(rec, TOOL, |p| p.cpu()).and_then(|p| {
        let l = p
            .linalg
            .as_ref()
            .ok_or_else(|| RefError::unsupported(TOOL, "the record has no matrix size (n)"))?;
        Ok(Job {
            n: l.n,
            nb: l
                .nb
                .unwrap_or(crate::workload::linalg::default_nb(l.n))
                .min(512),
            processes: p.threads.max(1),
            launch: Launch::Local,
        })
    }))
}

/// The run for a memory COPY, SCALE, ADD or TRIAD record: as many processes as the point's
/// threads, each with STREAM arrays at least as large as the point's per thread.
fn stream_job(rec: &ResultRecord) -> Option<Result<Job, RefError>> {
    if rec.metric != Metric::Throughput {
        return None;
    }
    Some(params_of(rec, TOOL, |p| p.mem().and_then(|m| m.kernel.as_ref())).and_then(|k| {
        let processes = rec.params.threads().max(1);
        let elements = (k.array_bytes_per_thread / 8).max(1);
        if elements > MAX_STREAM_ELEMENTS {
            return Err(RefError::unsupported(
                TOOL,
                format!(
                    "its STREAM arrays hold at most 2^30 elements (8 GiB) a process, and this \
                     point's hold {elements} a thread"
                ),
            ));
        }
        let n = order_for(elements, processes);
        let job = Job {
            n,
            nb: crate::workload::linalg::default_nb(n).min(512),
            processes,
            launch: Launch::Local,
        };
        let seconds = estimate_s(&job);
        if seconds > STREAM_LONGEST_S {
            return Err(RefError::unsupported(
                TOOL,
                format!(
                    "it sizes STREAM's arrays from HPL's matrix: arrays of {} a thread need HPL \
                     of order {n}, about {seconds:.0} s of suite (more than {STREAM_LONGEST_S:.0} \
                     s); give a smaller --array-size",
                    crate::units::format_bytes_binary(k.array_bytes_per_thread)
                ),
            ));
        }
        Ok(job)
    }))
}

/// The elements of each STREAM array of each process of hpcc run with HPL order `n` on
/// `processes` processes, as hpcc computes them (`HPCC_Init`, `HPCC_LocalVectorSize`): the
/// matrix's bytes (n² × 8) ÷ processes, ÷ 8 bytes, ÷ 3 arrays, whole numbers at each step;
/// 2³⁰ where that is 2³¹ or more.
pub fn stream_elements(n: usize, processes: usize) -> u64 {
    let n = n as u128;
    let per_process = n * n * 8 / processes.max(1) as u128;
    let elements = per_process / 8 / 3;
    if elements >= 2 * MAX_STREAM_ELEMENTS as u128 {
        MAX_STREAM_ELEMENTS
    } else {
        elements as u64
    }
}

/// The least HPL order whose STREAM arrays hold `elements` or more a process
/// ([`stream_elements`]): N ≈ √(3 × processes × elements).
pub fn order_for(elements: u64, processes: usize) -> usize {
    let guess = (3.0 * processes.max(1) as f64 * elements as f64).sqrt() as usize;
    let mut n = guess.saturating_sub(2).max(1);
    while stream_elements(n, processes) < elements.min(MAX_STREAM_ELEMENTS) {
        n += 1;
    }
    n
}

/// About how long one run of `job` takes, s: HPL's 2/3·N³ floating-point operations at about
/// 10 GFLOP/s a process, after the suite's other parts, whose working sets hpcc sizes from N
/// (RandomAccess, FFT, STREAM, PTRANS): about 15 s at N = 4000 and 85 s at N = 8000 on one
/// process of a Sapphire Rapids core, growing as N^2.5.
pub fn estimate_s(job: &Job) -> f64 {
    let n = job.n as f64;
    2.0 / 3.0 * n * n * n / (10e9 * job.processes.max(1) as f64) + 1.0 + 1.5e-8 * n.powf(2.5)
}

/// The squarest P × Q grid of `processes` with P ≤ Q (HPL's advice).
pub fn grid(processes: usize) -> (usize, usize) {
    let p = (1..=processes.max(1))
        .take_while(|p| p * p <= processes)
        .filter(|p| processes.is_multiple_of(*p))
        .last()
        .unwrap_or(1);
    (p, processes.max(1) / p)
}

/// Runs `job`: the input file in a temporary directory, `mpirun -np P hpcc` there (one thread
/// per process), the summary read back; the directory is removed whatever happens.
pub fn run(program: &Path, job: &Job, blas_core: Option<&str>) -> Result<HpccResult, RefError> {
    let dir = tempfile::Builder::new()
        .prefix("peakbench-hpcc.")
        .tempdir()
        .map_err(|e| RefError::failed(TOOL, format!("cannot make a temporary directory: {e}")))?;
    let (p, q) = grid(job.processes);
    std::fs::write(
        dir.path().join("hpccinf.txt"),
        input_file(job.n, job.nb, p, q),
    )
    .map_err(|e| RefError::failed(TOOL, format!("cannot write its input file: {e}")))?;
    // SAFETY: geteuid has no preconditions and cannot fail.
    let root = unsafe { libc::geteuid() } == 0;
    let cpus = crate::runner::affinity::allowed_cpus().len();
    let argv = command_line(program, job, root, cpus, openblas_coretype(blas_core));
    let mut cmd = Command::new(&argv[0]);
    cmd.args(&argv[1..]).current_dir(dir.path());
    // Under an MPI launcher itself (a `cluster run` rank), the inner launcher must not take
    // this process's MPI wiring for its own.
    for (key, _) in std::env::vars_os() {
        if launcher_wiring(&key.to_string_lossy()) {
            cmd.env_remove(&key);
        }
    }
    // HPL's own time at a pessimistic 1 GFLOP/s per process, and the suite's other parts.
    let n = job.n as f64;
    let seconds = 120.0 + 2.0 / 3.0 * n * n * n / 1e9 / job.processes.max(1) as f64;
    let out = run_bounded(TOOL, cmd, Duration::from_secs_f64(seconds.min(3600.0)))?;
    if !out.status.success() {
        return Err(out.failure(TOOL));
    }
    let text = crate::files::read_input(&dir.path().join("hpccoutf.txt"), 16 << 20, "")
        .map_err(|e| RefError::parse(TOOL, e.to_string()))?;
    parse_output(&String::from_utf8_lossy(&text)).map_err(|m| RefError::parse(TOOL, m))
}

/// Whether an environment variable is what an MPI launcher gave this process about its own job
/// (Open MPI's `OMPI_COMM_WORLD_RANK`, its ORTE and PMIx wiring, PMI's), not a setting of the
/// user's (`OMPI_MCA_btl_tcp_if_include` and the like are kept).
pub fn launcher_wiring(key: &str) -> bool {
    if key.starts_with("PMIX_") || key.starts_with("PMI_") {
        return true;
    }
    match key.strip_prefix("OMPI_MCA_") {
        Some(param) => [
            "orte_",
            "ess",
            "pmix",
            "initial_wdir",
            "mpi_oversubscribe",
            "shmem_RUNTIME_QUERY_hint",
        ]
        .iter()
        .any(|p| param.starts_with(p)),
        None => key.starts_with("OMPI_"),
    }
}

/// The launcher's command line for `job` (one thread per process; Open MPI refuses root
/// unless told). hpcc reads its input and writes its output on its first process, in the
/// launcher's working directory.
pub fn command_line(
    program: &Path,
    job: &Job,
    root: bool,
    cpus: usize,
    coretype: Option<&str>,
) -> Vec<String> {
    let mut env = vec![
        "OMP_NUM_THREADS=1".to_string(),
        "OPENBLAS_NUM_THREADS=1".into(),
    ];
    env.extend(coretype.map(|c| format!("OPENBLAS_CORETYPE={c}")));
    let np = job.processes.max(1).to_string();
    let program = program.to_string_lossy().into_owned();
    let mpirun = |hosts: Option<String>| {
        let mut v = vec!["mpirun".to_string()];
        if root {
            v.push("--allow-run-as-root".into());
        }
        v.extend(["-np".to_string(), np.clone()]);
        // A point of more threads than this machine's CPUs ran oversubscribed; so does HPL
        // (Open MPI refuses more processes than slots otherwise).
        if hosts.is_none() && job.processes > cpus {
            v.push("--oversubscribe".into());
        }
        if let Some(h) = hosts {
            v.extend(["--host".to_string(), h]);
        }
        for e in &env {
            v.extend(["-x".to_string(), e.clone()]);
        }
        v.push(program.clone());
        v
    };
    match &job.launch {
        Launch::Local => mpirun(None),
        Launch::Hosts(hosts) => mpirun(Some(
            hosts
                .iter()
                .map(|(ip, slots)| match ip {
                    std::net::IpAddr::V6(v6) => format!("[{v6}]:{slots}"),
                    v4 => format!("{v4}:{slots}"),
                })
                .collect::<Vec<_>>()
                .join(","),
        )),
        Launch::Srun => vec![
            // The MPI plugin is the site's (MpiDefault, or SLURM_MPI_TYPE=pmix for Open MPI,
            // which Debian's hpcc is built on).
            "srun".into(),
            "--overlap".into(),
            format!("--ntasks={np}"),
            "--cpus-per-task=1".into(),
            format!("--export=ALL,{}", env.join(",")),
            program,
        ],
    }
}

/// OpenBLAS's kernels for HPL where its own detection falls back to a generic core on this CPU
/// (OpenBLAS 0.3.21 takes a Sapphire Rapids guest, model 0xCF, for a Prescott and runs SSE3
/// kernels at a fifth of the machine's DGEMM rate): the kernels of the widest ISA this CPU has,
/// so that the reference is the tool at its best. None where OpenBLAS knows the CPU, or the
/// library is not OpenBLAS. `blas_core` is the kernel the library chose
/// ([`RefContext::blas_core`](super::RefContext::blas_core)).
pub fn openblas_coretype(blas_core: Option<&str>) -> Option<&'static str> {
    let (avx512, avx2) = super::x86_vectors();
    coretype_for(blas_core?, avx512, avx2)
}

/// The `OPENBLAS_CORETYPE` to ask for, given the kernel OpenBLAS chose ("OpenBLAS Prescott")
/// and the vector ISAs this CPU has: only where OpenBLAS fell back to a pre-AVX core.
pub fn coretype_for(micro_kernel: &str, avx512: bool, avx2: bool) -> Option<&'static str> {
    const GENERIC: &[&str] = &[
        "Prescott",
        "Core2",
        "Penryn",
        "Dunnington",
        "Nehalem",
        "Atom",
        "Katmai",
        "Coppermine",
        "Northwood",
        "Banias",
        "Barcelona",
        "Opteron",
        "Generic",
        "Unknown",
    ];
    let core = micro_kernel.strip_prefix("OpenBLAS ")?;
    if !GENERIC.iter().any(|g| core.eq_ignore_ascii_case(g)) {
        return None;
    }
    if avx512 {
        Some("SkylakeX")
    } else if avx2 {
        Some("Haswell")
    } else {
        None
    }
}

/// The figure for `rec`: in op/s HPL's rate for LINPACK, StarDGEMM × processes for DGEMM; in
/// B/s a memory record's STREAM kernel, SingleSTREAM's on one process, StarSTREAM's ×
/// processes on more.
pub fn figure(r: &HpccResult, rec: &ResultRecord) -> Result<f64, RefError> {
    if rec.subsystem == Subsystem::Mem {
        return stream_figure(r, rec);
    }
    if rec.unit != Unit::OpsPerSec {
        return Err(unit_error(TOOL, rec));
    }
    match rec.workload {
        Workload::Linalg(LinalgWorkload::Linpack) => Ok(r.hpl_gflops * 1e9),
        _ => r
            .star_dgemm_gflops
            .map(|g| g * r.processes as f64 * 1e9)
            .ok_or_else(|| RefError::parse(TOOL, "no StarDGEMM_Gflops in its summary")),
    }
}

fn stream_figure(r: &HpccResult, rec: &ResultRecord) -> Result<f64, RefError> {
    if rec.unit != Unit::BytesPerSec {
        return Err(unit_error(TOOL, rec));
    }
    let (rates, times) = if r.processes <= 1 {
        (&r.single_stream, 1.0)
    } else {
        (&r.star_stream, r.processes as f64)
    };
    let rates = rates
        .as_ref()
        .map_err(|m| RefError::parse(TOOL, m.clone()))?;
    let gb_s = match rec.workload.mem() {
        Some(MemWorkload::Copy) => rates.copy_gb_s,
        Some(MemWorkload::Scale) => rates.scale_gb_s,
        Some(MemWorkload::Add) => rates.add_gb_s,
        Some(MemWorkload::Triad) => rates.triad_gb_s,
        _ => return Err(unit_error(TOOL, rec)),
    };
    Ok(gb_s * times * 1e9)
}

/// The BLAS library hpcc would load (the end of the alternatives' links), if it can be told.
pub fn blas_library() -> Option<PathBuf> {
    std::fs::canonicalize(LIBBLAS).ok()
}

/// Whether `lib` is Debian's reference BLAS (netlib, unoptimised).
pub fn is_reference_blas(lib: &Path) -> bool {
    let s = lib.to_string_lossy();
    s.contains("/blas/libblas.so") && !s.contains("openblas") && !s.contains("blis")
}

/// The `hpccinf.txt` for one HPL problem of order `n`, block `nb`, on a `p × q` process grid
/// (HPL's usual choices otherwise: right-looking recursive panels, look-ahead depth 1).
pub fn input_file(n: usize, nb: usize, p: usize, q: usize) -> String {
    format!(
        "HPLinpack benchmark input file
Innovative Computing Laboratory, University of Tennessee
HPL.out      output file name (if any)
8            device out (6=stdout,7=stderr,file)
1            # of problems sizes (N)
{n}         Ns
1            # of NBs
{nb}           NBs
0            PMAP process mapping (0=Row-,1=Column-major)
1            # of process grids (P x Q)
{p}            Ps
{q}            Qs
16.0         threshold
1            # of panel fact
2            PFACTs (0=left, 1=Crout, 2=Right)
1            # of recursive stopping criterium
4            NBMINs (>= 1)
1            # of panels in recursion
2            NDIVs
1            # of recursive panel fact.
1            RFACTs (0=left, 1=Crout, 2=Right)
1            # of broadcast
1            BCASTs (0=1rg,1=1rM,2=2rg,3=2rM,4=Lng,5=LnM)
1            # of lookahead depth
1            DEPTHs (>=0)
2            SWAP (0=bin-exch,1=long,2=mix)
64           swapping threshold
0            L1 in (0=transposed,1=no-transposed) form
0            U  in (0=transposed,1=no-transposed) form
1            Equilibration (0=no,1=yes)
8            memory alignment in double (> 0)
##### This line (no. 32) is ignored (it serves as a separator). ######
0                      		Number of additional problem sizes for PTRANS
1200 10000 30000        	values of N
0                       	number of additional blocking sizes for PTRANS
40 9 8 13 13 20 16 32 64       	values of NB
"
    )
}

/// What one hpcc run says of HPL and DGEMM.
#[derive(Debug, Clone, PartialEq)]
pub struct HpccResult {
    pub version: Option<String>,
    pub processes: u32,
    pub n: u64,
    pub nb: u64,
    /// HPL's rate, GFLOP/s (its `HPL_Tflops` × 1000).
    pub hpl_gflops: f64,
    pub hpl_seconds: f64,
    /// HPL's scaled residual, computed from the summary's norms as HPL does.
    pub residual: f64,
    /// DGEMM on one process alone, and per process with all running (GFLOP/s).
    pub single_dgemm_gflops: Option<f64>,
    pub star_dgemm_gflops: Option<f64>,
    /// STREAM's elements per array and process (`STREAM_VectorSize`).
    pub stream_elements: Option<u64>,
    /// STREAM on one process alone (its SingleSTREAM section), or why it has no figures.
    pub single_stream: Result<StreamRates, String>,
    /// STREAM on every process at once, per process (its StarSTREAM section's averages).
    pub star_stream: Result<StreamRates, String>,
}

/// STREAM's four rates, GB/s (10⁹ bytes a second, bytes read plus bytes written).
#[derive(Debug, Clone, PartialEq)]
pub struct StreamRates {
    pub copy_gb_s: f64,
    pub scale_gb_s: f64,
    pub add_gb_s: f64,
    pub triad_gb_s: f64,
}

/// The text between `Begin of NAME section.` and `End of NAME section.`, if hpcc finished it.
fn section<'a>(text: &'a str, name: &str) -> Option<&'a str> {
    let (_, rest) = text.split_once(&format!("Begin of {name} section."))?;
    rest.split_once(&format!("End of {name} section."))
        .map(|(s, _)| s)
}

/// Reads STREAM's rates from one of hpcc's STREAM sections: its lines `PREFIX KERNEL GB/s
/// RATE` ("Single STREAM Copy GB/s 21.26", "Average Copy GB/s 20.74"), each kernel once, after
/// a `Node(s) with error 0` line (another count: a process's results did not validate).
fn stream_rates(text: &str, name: &str, prefix: &str) -> Result<StreamRates, String> {
    let body =
        section(text, name).ok_or_else(|| format!("no {name} section: hpcc did not finish it"))?;
    if body.contains("Failed Validation") {
        return Err(format!("its {name} results did not validate"));
    }
    match body
        .lines()
        .find_map(|l| l.trim().strip_prefix("Node(s) with error"))
    {
        Some(n) if n.trim() == "0" => {}
        Some(n) => {
            let n: String = crate::text::printable(n.trim()).chars().take(20).collect();
            return Err(format!("{name}: {n} node(s) with errors"));
        }
        None => return Err(format!("{name} does not say its nodes' errors")),
    }
    const KERNELS: [&str; 4] = ["Copy", "Scale", "Add", "Triad"];
    let mut rates = [None; 4];
    for line in body.lines() {
        let Some(rest) = line.trim().strip_prefix(prefix) else {
            continue;
        };
        let mut words = rest.split_whitespace();
        let (Some(kernel), Some("GB/s"), Some(value), None) =
            (words.next(), words.next(), words.next(), words.next())
        else {
            continue;
        };
        let Some(i) = KERNELS.iter().position(|k| *k == kernel) else {
            continue;
        };
        let rate = value
            .parse::<f64>()
            .ok()
            .and_then(super::tool_number)
            .filter(|x| *x > 0.0)
            .ok_or_else(|| {
                let v: String = crate::text::printable(value).chars().take(40).collect();
                format!("{name}'s {kernel} rate '{v}' is not a number above 0 GB/s")
            })?;
        if rates[i].replace(rate).is_some() {
            return Err(format!("{name} gives {kernel} twice"));
        }
    }
    match rates {
        [
            Some(copy_gb_s),
            Some(scale_gb_s),
            Some(add_gb_s),
            Some(triad_gb_s),
        ] => Ok(StreamRates {
            copy_gb_s,
            scale_gb_s,
            add_gb_s,
            triad_gb_s,
        }),
        _ => {
            let missing: Vec<&str> = KERNELS
                .iter()
                .zip(rates)
                .filter(|(_, r)| r.is_none())
                .map(|(k, _)| *k)
                .collect();
            Err(format!("{name} has no rate for {}", missing.join(", ")))
        }
    }
}

/// Parses the summary section (`Begin of Summary section.` … `End of Summary section.`) of
/// `hpccoutf.txt`; a message says what is missing or wrong.
pub fn parse_output(text: &str) -> Result<HpccResult, String> {
    let summary = text
        .split_once("Begin of Summary section.")
        .map(|(_, s)| s.split("End of Summary section.").next().unwrap_or(s))
        .ok_or("no summary section: hpcc did not finish")?;
    let value = |key: &str| -> Option<&str> {
        summary.lines().find_map(|l| {
            let (k, v) = l.split_once('=')?;
            (k.trim() == key).then_some(v.trim())
        })
    };
    let number = |key: &str| -> Result<f64, String> {
        let v = value(key).ok_or_else(|| format!("no {key} in the summary"))?;
        v.parse::<f64>()
            .ok()
            .and_then(super::tool_number)
            .ok_or_else(|| {
                format!(
                    "{key}={v} is not a number from 0 to {:e}",
                    super::MAX_TOOL_NUMBER
                )
            })
    };
    let whole = |key: &str| -> Result<u64, String> {
        let v = value(key).ok_or_else(|| format!("no {key} in the summary"))?;
        v.parse::<u64>()
            .ok()
            .and_then(super::tool_count)
            .ok_or_else(|| format!("{key}={v} is not a whole number"))
    };
    let optional = |key: &str| number(key).ok().filter(|x| *x > 0.0);
    let n = whole("HPL_N")?;
    let tflops = number("HPL_Tflops")?;
    if tflops <= 0.0 {
        return Err("HPL_Tflops is not above 0: HPL did not run".into());
    }
    // ‖Ax−b‖∞ / (ε·(‖A‖∞·‖x‖∞ + ‖b‖∞)·N), from the norms HPL prints.
    let residual = number("HPL_RnormI")?
        / (number("HPL_eps")?
            * (number("HPL_AnormI")? * number("HPL_XnormI")? + number("HPL_BnormI")?)
            * n as f64);
    let version = match (value("VersionMajor"), value("VersionMinor")) {
        (Some(a), Some(b)) => Some(format!("{a}.{b}")),
        _ => None,
    };
    Ok(HpccResult {
        version,
        processes: whole("CommWorldProcs")? as u32,
        n,
        nb: whole("HPL_NB")?,
        hpl_gflops: tflops * 1000.0,
        hpl_seconds: number("HPL_time")?,
        residual,
        single_dgemm_gflops: optional("SingleDGEMM_Gflops"),
        star_dgemm_gflops: optional("StarDGEMM_Gflops"),
        stream_elements: whole("STREAM_VectorSize").ok(),
        single_stream: stream_rates(text, "SingleSTREAM", "Single STREAM"),
        star_stream: stream_rates(text, "StarSTREAM", "Average"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reference::testing::{fixture, record};
    use serde_json::json;

    /// A run of hpcc 1.5.0 (OpenBLAS, serial) on the 2-core Zen 4 VM: N = 8000, NB = 192, 1 × 2.
    #[test]
    fn parses_a_recorded_run() {
        let r = parse_output(&fixture("hpcc-n8000-np2.txt")).unwrap();
        assert_eq!(r.version.as_deref(), Some("1.5"));
        assert_eq!((r.processes, r.n, r.nb), (2, 8000, 192));
        assert!((r.hpl_gflops - 88.5859).abs() < 1e-3, "{r:?}");
        assert!((r.hpl_seconds - 3.85422).abs() < 1e-6);
        // The output's own check line says 0.0029521.
        assert!((r.residual - 0.0029521).abs() < 1e-5, "{}", r.residual);
        assert!(r.single_dgemm_gflops.is_some_and(|g| g > 10.0), "{r:?}");
        assert!(r.star_dgemm_gflops.is_some_and(|g| g > 10.0), "{r:?}");
    }

    /// The same run's STREAM: SingleSTREAM's section for one process, StarSTREAM's averages
    /// for all at once; a SCALE or ADD record takes its kernel's rate, × processes for Star.
    #[test]
    fn parses_the_stream_sections_of_a_recorded_run() {
        let r = parse_output(&fixture("hpcc-n8000-np2.txt")).unwrap();
        assert_eq!(r.stream_elements, Some(10_666_666));
        assert_eq!(stream_elements(8000, 2), 10_666_666);
        let single = r.single_stream.clone().unwrap();
        assert_eq!(
            [
                single.copy_gb_s,
                single.scale_gb_s,
                single.add_gb_s,
                single.triad_gb_s
            ],
            [21.259784, 25.795140, 25.999232, 25.582472]
        );
        let star = r.star_stream.clone().unwrap();
        assert_eq!(star.copy_gb_s, 20.737376);
        let rec = |w: &str, threads: u64| {
            record(
                "mem",
                w,
                "throughput",
                "B/s",
                json!({"threads": threads, "isa": "scalar", "stores": "regular",
                       "array_bytes_per_thread": 85_333_328u64,
                       "working_set_bytes": 170_666_656u64}),
                None,
            )
        };
        let one = HpccResult {
            processes: 1,
            ..r.clone()
        };
        assert_eq!(figure(&one, &rec("SCALE", 1)).unwrap(), 25.795140e9);
        assert_eq!(figure(&one, &rec("ADD", 1)).unwrap(), 25.999232e9);
        // Two processes: each one's average with both running, × 2.
        assert_eq!(figure(&r, &rec("COPY", 2)).unwrap(), 2.0 * 20.737376e9);
        let ops = record("mem", "TRIAD", "throughput", "op/s", json!({}), None);
        assert!(figure(&r, &ops).is_err());
    }

    /// hpcc's STREAM arrays follow from HPL's N: a point's arrays choose the least N whose
    /// arrays are as large, for one process and for several; a SCALE point asks for that run,
    /// a too large one is refused with the reason, and a latency record is not hpcc's.
    #[test]
    fn a_memory_point_chooses_hpls_order() {
        for (elements, p) in [(1u64, 1usize), (131_072, 1), (10_666_666, 2), (1 << 24, 8)] {
            let n = order_for(elements, p);
            assert!(stream_elements(n, p) >= elements, "{elements} {p}: {n}");
            assert!(stream_elements(n - 1, p) < elements, "{elements} {p}: {n}");
        }
        assert_eq!(order_for(10_666_666, 2), 8000);
        assert_eq!(stream_elements(1 << 20, 1), MAX_STREAM_ELEMENTS);
        let ctx = RefContext::new(".");
        let rec = |w: &str, bytes: u64, threads: u64| {
            record(
                "mem",
                w,
                "throughput",
                "GB/s",
                json!({"threads": threads, "isa": "scalar", "stores": "regular",
                       "array_bytes_per_thread": bytes, "working_set_bytes": 2 * bytes}),
                None,
            )
        };
        let j = job(&rec("SCALE", 1 << 20, 1), &ctx).unwrap().unwrap();
        assert_eq!((j.n, j.processes), (order_for(131_072, 1), 1));
        assert_eq!(j.launch, Launch::Local);
        let j = job(&rec("ADD", 1 << 20, 4), &ctx).unwrap().unwrap();
        assert_eq!((j.n, j.processes), (order_for(131_072, 4), 4));
        let big = job(&rec("SCALE", 4 << 30, 1), &ctx).unwrap().unwrap_err();
        assert!(big.to_string().contains("--array-size"), "{big}");
        let huge = job(&rec("SCALE", 16 << 30, 1), &ctx).unwrap().unwrap_err();
        assert!(huge.to_string().contains("2^30"), "{huge}");
        let lat = record("mem", "LATENCY", "latency", "ns", json!({}), None);
        assert!(job(&lat, &ctx).is_none());
    }

    /// A STREAM section cut short, with a failed validation, an error count or a hostile rate
    /// leaves the run without STREAM figures, saying why; HPL's figures are kept.
    #[test]
    fn damaged_stream_sections_are_refused() {
        let text = fixture("hpcc-n8000-np2.txt");
        let check = |t: &str, says: &str| {
            let r = parse_output(t).unwrap();
            let e = r.single_stream.unwrap_err();
            assert!(e.contains(says), "{e}");
        };
        let cut = text.replace("Single STREAM Triad GB/s 25.582472\n", "");
        check(&cut, "no rate for Triad");
        let nan = text.replace(
            "Single STREAM Add GB/s 25.999232",
            "Single STREAM Add GB/s nan",
        );
        check(&nan, "'nan' is not a number");
        let huge = text.replace(
            "Single STREAM Add GB/s 25.999232",
            "Single STREAM Add GB/s 1e300",
        );
        check(&huge, "not a number");
        let twice = text.replace(
            "Single STREAM Copy GB/s 21.259784",
            "Single STREAM Copy GB/s 21.259784\nSingle STREAM Copy GB/s 99",
        );
        check(&twice, "twice");
        let single = section(&text, "SingleSTREAM").unwrap();
        let errors = text.replace(single, &single.replace("with error 0", "with error 1"));
        check(&errors, "1 node(s) with errors");
        let unfinished = text.replace("End of SingleSTREAM section.", "");
        check(&unfinished, "no SingleSTREAM section");
        let failed = text.replace(
            "Solution Validates: avg error",
            "Failed Validation on array c[]\nSolution Validates: avg error",
        );
        let r = parse_output(&failed).unwrap();
        assert!(r.star_stream.unwrap_err().contains("did not validate"));
        assert!(r.hpl_gflops > 0.0);
    }

    #[test]
    fn an_outer_launchers_wiring_is_not_passed_on() {
        for k in [
            "OMPI_COMM_WORLD_RANK",
            "OMPI_MCA_orte_hnp_uri",
            "OMPI_MCA_ess_base_jobid",
            "OMPI_MCA_pmix",
            "PMIX_RANK",
            "PMI_FD",
            "OMPI_FILE_LOCATION",
        ] {
            assert!(launcher_wiring(k), "{k}");
        }
        for k in [
            "OMPI_MCA_btl_tcp_if_include",
            "OMPI_MCA_btl",
            "PATH",
            "OPENBLAS_NUM_THREADS",
        ] {
            assert!(!launcher_wiring(k), "{k}");
        }
    }

    #[test]
    fn launch_command_lines() {
        let job = |launch| Job {
            n: 400,
            nb: 128,
            processes: 4,
            launch,
        };
        let hpcc = Path::new("/usr/bin/hpcc");
        assert_eq!(
            command_line(hpcc, &job(Launch::Local), false, 8, None).join(" "),
            "mpirun -np 4 -x OMP_NUM_THREADS=1 -x OPENBLAS_NUM_THREADS=1 /usr/bin/hpcc"
        );
        assert_eq!(
            command_line(hpcc, &job(Launch::Local), true, 8, None)[1],
            "--allow-run-as-root"
        );
        // More processes than CPUs: oversubscribed, as the point was.
        assert_eq!(
            command_line(hpcc, &job(Launch::Local), false, 2, None)[..4],
            ["mpirun", "-np", "4", "--oversubscribe"]
        );
        let hosts = Launch::Hosts(vec![
            ("10.0.0.1".parse().unwrap(), 2),
            ("fe80::1".parse().unwrap(), 2),
        ]);
        let argv = command_line(hpcc, &job(hosts), false, 2, None);
        let at = argv.iter().position(|a| a == "--host").unwrap();
        assert_eq!(argv[at + 1], "10.0.0.1:2,[fe80::1]:2");
        assert_eq!(
            command_line(hpcc, &job(Launch::Srun), true, 2, None).join(" "),
            "srun --overlap --ntasks=4 --cpus-per-task=1 \
             --export=ALL,OMP_NUM_THREADS=1,OPENBLAS_NUM_THREADS=1 /usr/bin/hpcc"
        );
        // OpenBLAS told which kernels to use where it does not know the CPU.
        assert_eq!(
            command_line(hpcc, &job(Launch::Local), false, 8, Some("SkylakeX")).join(" "),
            "mpirun -np 4 -x OMP_NUM_THREADS=1 -x OPENBLAS_NUM_THREADS=1 \
             -x OPENBLAS_CORETYPE=SkylakeX /usr/bin/hpcc"
        );
        assert!(
            command_line(hpcc, &job(Launch::Srun), true, 2, Some("Haswell")).contains(
                &"--export=ALL,OMP_NUM_THREADS=1,OPENBLAS_NUM_THREADS=1,OPENBLAS_CORETYPE=Haswell"
                    .to_string()
            )
        );
    }

    /// Only a fallback to a pre-AVX core is overridden, with the widest ISA the CPU has.
    #[test]
    fn openblas_is_told_its_kernels_only_where_it_fell_back() {
        assert_eq!(
            coretype_for("OpenBLAS Prescott", true, true),
            Some("SkylakeX")
        );
        assert_eq!(
            coretype_for("OpenBLAS Nehalem", false, true),
            Some("Haswell")
        );
        assert_eq!(coretype_for("OpenBLAS Prescott", false, false), None);
        assert_eq!(coretype_for("OpenBLAS SkylakeX", true, true), None);
        assert_eq!(coretype_for("OpenBLAS Zen", true, true), None);
        assert_eq!(coretype_for("BLIS 0.9 haswell", true, true), None);
    }

    #[test]
    fn unfinished_and_damaged_outputs_are_refused() {
        assert!(
            parse_output("HPL_Tflops=1")
                .unwrap_err()
                .contains("summary")
        );
        let text = fixture("hpcc-n8000-np2.txt");
        let cut = text.replace("HPL_N=8000", "HPL_N=eight");
        assert!(parse_output(&cut).unwrap_err().contains("HPL_N"));
        let failed = text.replace("HPL_Tflops=0.0885859", "HPL_Tflops=-1");
        assert!(parse_output(&failed).is_err());
        let nan = text.replace("HPL_RnormI=6.10889e-11", "HPL_RnormI=nan");
        assert!(parse_output(&nan).is_err());
    }

    #[test]
    fn grids_and_blas_libraries() {
        assert_eq!(grid(1), (1, 1));
        assert_eq!(grid(2), (1, 2));
        assert_eq!(grid(12), (3, 4));
        assert_eq!(grid(16), (4, 4));
        assert_eq!(grid(7), (1, 7));
        assert!(is_reference_blas(Path::new(
            "/usr/lib/x86_64-linux-gnu/blas/libblas.so.3.11.0"
        )));
        assert!(!is_reference_blas(Path::new(
            "/usr/lib/x86_64-linux-gnu/openblas-serial/libblas.so.3"
        )));
    }

    #[test]
    fn the_input_file_names_the_problem() {
        let f = input_file(8000, 192, 1, 2);
        let lines: Vec<&str> = f.lines().collect();
        assert!(
            lines[5].starts_with("8000 ") && lines[7].starts_with("192 "),
            "{f}"
        );
        assert!(
            lines[10].starts_with("1 ") && lines[11].starts_with("2 "),
            "{f}"
        );
        assert_eq!(lines.len(), 36);
    }
}
