//! `--blas system`: LINPACK and DGEMM on an installed BLAS/LAPACK (OpenBLAS, BLIS, MKL, or
//! whatever Debian's alternatives select), loaded at run time with dlopen — nothing is linked at
//! build time, so peakbench builds and runs where none is installed.
//!
//! The routines are called through the Fortran reference ABI with 32-bit (LP64) integers:
//! `dgetrf_` factors, `dgetrs_` solves, `dgemm_` and `sgemm_` multiply; every argument by pointer and each
//! CHARACTER argument's length appended as a `size_t` (gfortran's convention; libraries written
//! in C ignore it). The library is searched in a fixed order (or named by `--blas-library`), and
//! the file its routines come from and its own version string are recorded, so that OpenBLAS
//! 0.3.21 with pthreads can be told from the reference BLAS.
//!
//! Threads: the library's thread count is set with its own call (`openblas_set_num_threads`,
//! `bli_thread_set_num_threads`, `MKL_Set_Num_Threads`); a library without one (or a
//! single-threaded build, such as Debian's libopenblas0-serial) says so in [`Threads`]. A
//! library may start its worker threads when it is loaded (OpenBLAS does), before any point's
//! placement exists: [`SystemBlas`] remembers the threads that appear while it loads, sets its
//! thread count or runs a point, and [`SystemBlas::pin`] restricts them to a point's CPUs.
//! Those threads are told apart from the process's own by when they appear, so a program that
//! starts threads of its own concurrently (a test harness) must not call `pin`.

use super::gemm::{ShapeError, fits};
use super::kernels::Element;
use libloading::Library;
use std::collections::BTreeSet;
use std::ffi::{CStr, OsStr, c_char, c_int, c_void};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The libraries tried, in order, when none is named: OpenBLAS, BLIS, MKL's single dynamic
/// library, then Debian's alternatives (whose LAPACK may take `dgemm_` from [`LIBBLAS`]).
pub const CANDIDATES: &[&str] = &[
    "libopenblas.so.0",
    "libblis.so.4",
    "libblis.so",
    "libmkl_rt.so",
    "libmkl_rt.so.2",
    "liblapack.so.3",
];

/// Where a LAPACK without its own `dgemm_` takes it from.
pub const LIBBLAS: &str = "libblas.so.3";

/// The command that installs a system BLAS.
pub const INSTALL: &str = "apt-get install libopenblas0-pthread";

/// Why the system BLAS cannot be used.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BlasError {
    #[error(
        "no system BLAS/LAPACK could be loaded (tried {0}); install one ({INSTALL}), name one with --blas-library PATH, or use --blas built-in"
    )]
    NotFound(String),
    #[error(
        "--blas-library {path}: {why}; name a BLAS/LAPACK shared library (e.g. libopenblas.so.0) or install one ({INSTALL})"
    )]
    Named { path: String, why: String },
    #[error(
        "N = {0} does not fit the system BLAS's 32-bit integers (at most {max}); choose a smaller --n or --blas built-in",
        max = i32::MAX
    )]
    TooLarge(usize),
    #[error("{threads} threads do not fit the system BLAS's 32-bit thread count")]
    Threads { threads: usize },
    #[error("{routine} returned info = {info}: an illegal argument (a bug in peakbench's call)")]
    Argument { routine: &'static str, info: i32 },
    #[error("the system BLAS was loaded without LAPACK (for DGEMM only): it has no {0}")]
    NoLapack(&'static str),
    #[error("the system BLAS has no {0}; use --blas built-in for this workload")]
    NoRoutine(&'static str),
    #[error(
        "dgetrf_ found the matrix singular: U({0},{0}) is exactly zero (info = {0}); no figure is reported"
    )]
    Singular(i32),
    #[error(transparent)]
    Shape(#[from] ShapeError),
}

/// `dgetrf_(m, n, a, lda, ipiv, info)`.
type Getrf = unsafe extern "C" fn(
    *const c_int,
    *const c_int,
    *mut f64,
    *const c_int,
    *mut c_int,
    *mut c_int,
);
/// `dgetrs_(trans, n, nrhs, a, lda, ipiv, b, ldb, info, len(trans))`.
type Getrs = unsafe extern "C" fn(
    *const c_char,
    *const c_int,
    *const c_int,
    *const f64,
    *const c_int,
    *const c_int,
    *mut f64,
    *const c_int,
    *mut c_int,
    usize,
);
/// `xgemm_(transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, len(transa),
/// len(transb))` for elements `T` (`dgemm_` f64, `sgemm_` f32).
type Xgemm<T> = unsafe extern "C" fn(
    *const c_char,
    *const c_char,
    *const c_int,
    *const c_int,
    *const c_int,
    *const T,
    *const T,
    *const c_int,
    *const T,
    *const c_int,
    *const T,
    *mut T,
    *const c_int,
    usize,
    usize,
);
type Dgemm = Xgemm<f64>;

/// An element type the library multiplies: its routine's name and where it is kept.
pub trait BlasElement: Element {
    /// `dgemm_` or `sgemm_`.
    const GEMM: &'static str;
    /// The loaded routine, if the library has it.
    fn routine(blas: &SystemBlas) -> Option<Xgemm<Self>>;
}

impl BlasElement for f64 {
    const GEMM: &'static str = "dgemm_";
    fn routine(blas: &SystemBlas) -> Option<Xgemm<f64>> {
        Some(blas.dgemm)
    }
}

impl BlasElement for f32 {
    const GEMM: &'static str = "sgemm_";
    fn routine(blas: &SystemBlas) -> Option<Xgemm<f32>> {
        blas.sgemm
    }
}
type GetText = unsafe extern "C" fn() -> *const c_char;
type GetInt = unsafe extern "C" fn() -> c_int;
type SetInt = unsafe extern "C" fn(c_int);
/// BLIS's `dim_t` is a 64-bit integer in its default configuration (Debian's).
type GetDim = unsafe extern "C" fn() -> i64;
type SetDim = unsafe extern "C" fn(i64);
type ArchString = unsafe extern "C" fn(c_int) -> *const c_char;
type Init = unsafe extern "C" fn();
type MklVersion = unsafe extern "C" fn(*mut c_char, c_int);
type Ilaver = unsafe extern "C" fn(*mut c_int, *mut c_int, *mut c_int);

/// How the library's thread count is set.
#[derive(Debug, Clone, Copy)]
enum Control {
    OpenBlas {
        set: SetInt,
        get: Option<GetInt>,
    },
    Blis {
        set: SetDim,
        get: Option<GetDim>,
    },
    Mkl {
        set: SetInt,
        get: Option<GetInt>,
    },
    /// A single-threaded build (OpenBLAS's `openblas_get_parallel()` = 0).
    Serial(&'static str),
    /// No call: the library picks its own count (its environment variables, its defaults).
    Own,
}

/// What the library does with a point's thread count.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Threads {
    /// The threads the library says it will use; `None` when it cannot be asked.
    pub used: Option<usize>,
    /// What a reader must know when that is not the point's count.
    pub note: Option<String>,
}

/// A loaded BLAS/LAPACK. It is never unloaded: its worker threads live as long as the process.
pub struct SystemBlas {
    /// The handles the routines come from, kept open for the process.
    _libs: Vec<Library>,
    getrf: Option<Getrf>,
    getrs: Option<Getrs>,
    dgemm: Dgemm,
    sgemm: Option<Xgemm<f32>>,
    control: Control,
    description: String,
    core: Option<String>,
    /// Threads that appeared while the library loaded, set its thread count or ran.
    workers: Mutex<BTreeSet<i32>>,
}

impl std::fmt::Debug for SystemBlas {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SystemBlas")
            .field("library", &self.description)
            .field("core", &self.core)
            .finish_non_exhaustive()
    }
}

impl SystemBlas {
    /// Loads `named` (a path, or a name the dynamic loader searches) or else the first of
    /// [`CANDIDATES`] that loads and exports `dgemm_` — and `dgetrf_` and `dgetrs_` when
    /// `lapack` (LINPACK needs them).
    pub fn load(named: Option<&Path>, lapack: bool) -> Result<SystemBlas, BlasError> {
        if let Some(path) = named {
            return SystemBlas::open(path.as_os_str(), lapack).map_err(|why| BlasError::Named {
                path: path.display().to_string(),
                why,
            });
        }
        let mut tried = Vec::new();
        for name in CANDIDATES {
            match SystemBlas::open(OsStr::new(name), lapack) {
                Ok(blas) => return Ok(blas),
                Err(why) => tried.push(format!("{name}: {why}")),
            }
        }
        Err(BlasError::NotFound(tried.join("; ")))
    }

    /// Opens one library; the error says why it cannot be used.
    fn open(name: &OsStr, lapack: bool) -> Result<SystemBlas, String> {
        let before = tasks();
        // SAFETY: loading runs the library's initialisers; a BLAS's start its thread pool and
        // read the CPU's features, which is what loading one is for. The handle is kept for the
        // process (never closed while its threads may run).
        let lib = unsafe { Library::new(name) }.map_err(|e| loader_message(&e))?;
        let getrf: Option<Getrf> = symbol(&lib, "dgetrf_");
        let getrs: Option<Getrs> = symbol(&lib, "dgetrs_");
        if lapack && (getrf.is_none() || getrs.is_none()) {
            return Err("it has no dgetrf_/dgetrs_ (a BLAS without LAPACK)".into());
        }
        let mut libs = vec![lib];
        let dgemm = match symbol::<Dgemm>(&libs[0], "dgemm_") {
            Some(f) => f,
            None if getrf.is_some() => {
                // SAFETY: as above, for the BLAS that Debian's alternatives select.
                let blas = unsafe { Library::new(LIBBLAS) }.map_err(|e| {
                    format!(
                        "it has no dgemm_, and {LIBBLAS} does not load: {}",
                        loader_message(&e)
                    )
                })?;
                let f = symbol::<Dgemm>(&blas, "dgemm_")
                    .ok_or_else(|| format!("it has no dgemm_, nor has {LIBBLAS}"))?;
                libs.push(blas);
                f
            }
            None => return Err("it has no dgemm_ (not a BLAS)".into()),
        };
        let sgemm = any_symbol::<Xgemm<f32>>(&libs, "sgemm_");
        let (description, core, control) = identify(&libs, getrf, dgemm);
        let workers = tasks().difference(&before).copied().collect();
        Ok(SystemBlas {
            _libs: libs,
            getrf,
            getrs,
            dgemm,
            sgemm,
            control,
            description,
            core,
            workers: Mutex::new(workers),
        })
    }

    /// The file(s) the routines come from and the library's own version or configuration, e.g.
    /// `/usr/lib/x86_64-linux-gnu/openblas-pthread/libopenblasp-r0.3.21.so (OpenBLAS 0.3.21
    /// NO_LAPACKE DYNAMIC_ARCH NO_AFFINITY Cooperlake MAX_THREADS=64)`.
    pub fn description(&self) -> &str {
        &self.description
    }

    /// The library's kernels as it names them (`OpenBLAS Cooperlake`, `BLIS zen3`), or
    /// `unknown (system BLAS)`.
    pub fn micro_kernel(&self) -> String {
        self.core
            .clone()
            .unwrap_or_else(|| "unknown (system BLAS)".into())
    }

    /// The micro-kernel the system BLAS's own detection chooses (as [`micro_kernel`]), the
    /// library loaded once per process; `None` where none loads.
    ///
    /// [`micro_kernel`]: SystemBlas::micro_kernel
    pub fn detected_core() -> Option<String> {
        static CORE: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
        CORE.get_or_init(|| SystemBlas::load(None, false).ok().map(|b| b.micro_kernel()))
            .clone()
    }

    /// Asks the library to use `threads` threads and says what it will use.
    pub fn set_threads(&self, threads: usize) -> Result<Threads, BlasError> {
        let c = c_int::try_from(threads).map_err(|_| BlasError::Threads { threads })?;
        let used = self.watch(|| match self.control {
            // SAFETY: the library's own prototypes: void f(int) and int f(void).
            Control::OpenBlas { set, get } | Control::Mkl { set, get } => unsafe {
                set(c);
                get.map(|g| g().max(0) as usize)
            },
            // SAFETY: BLIS's prototypes: void f(dim_t) and dim_t f(void).
            Control::Blis { set, get } => unsafe {
                set(i64::from(c));
                get.map(|g| g().max(0) as usize)
            },
            Control::Serial(_) => Some(1),
            Control::Own => None,
        });
        let note = match (self.control, used) {
            (Control::Serial(what), _) if threads > 1 => Some(format!(
                "the system BLAS is a single-threaded build ({what}): it ran on 1 thread, not {threads}"
            )),
            (Control::Own, _) => Some(format!(
                "the system BLAS has no call to set its thread count: it used its own (its environment variables and defaults), not necessarily {threads}"
            )),
            (_, Some(u)) if u != threads => Some(format!(
                "the system BLAS uses {u} threads, not the {threads} asked"
            )),
            _ => None,
        };
        Ok(Threads { used, note })
    }

    /// Runs `f` and remembers the threads that appeared meanwhile as the library's (a library
    /// may start threads on its first call with a new count).
    pub fn watch<R>(&self, f: impl FnOnce() -> R) -> R {
        let before = tasks();
        let r = f();
        let new: Vec<i32> = tasks().difference(&before).copied().collect();
        if !new.is_empty() {
            self.workers
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .extend(new);
        }
        r
    }

    /// Restricts the library's worker threads to `cpus`; the calling thread, which works too, is
    /// the caller's to place. Threads that have ended are forgotten.
    pub fn pin(&self, cpus: &[usize]) -> std::io::Result<()> {
        let mut workers = self.workers.lock().unwrap_or_else(|e| e.into_inner());
        let me = current_tid();
        workers.remove(&me);
        let mut ended = Vec::new();
        for &tid in workers.iter() {
            match crate::runner::affinity::restrict_thread(tid, cpus) {
                Ok(()) => {}
                Err(e) if e.raw_os_error() == Some(libc::ESRCH) => ended.push(tid),
                Err(e) => return Err(e),
            }
        }
        for tid in ended {
            workers.remove(&tid);
        }
        Ok(())
    }

    /// Factors the `n × n` matrix `a` (leading dimension `n`) in place with `dgetrf_`; `ipiv`
    /// gets LAPACK's 1-based pivots.
    pub fn getrf(&self, a: &mut [f64], n: usize, ipiv: &mut [i32]) -> Result<(), BlasError> {
        let getrf = self.getrf.ok_or(BlasError::NoLapack("dgetrf_"))?;
        let n32 = int(n)?;
        fits(n, n, n.max(1), a.len())?;
        fits(n, 1, n.max(1), ipiv.len())?;
        let lda = n32.max(1);
        let mut info = 0;
        // SAFETY: a holds an n × n matrix with leading dimension lda ≥ max(1, n) and ipiv n
        // values (both checked above); every argument is a valid pointer for the call.
        unsafe {
            getrf(
                &n32,
                &n32,
                a.as_mut_ptr(),
                &lda,
                ipiv.as_mut_ptr(),
                &mut info,
            )
        };
        match info {
            0 => Ok(()),
            i if i > 0 => Err(BlasError::Singular(i)),
            info => Err(BlasError::Argument {
                routine: "dgetrf_",
                info,
            }),
        }
    }

    /// Solves A·x = b with the factors of [`SystemBlas::getrf`] (`dgetrs_`); `b` becomes x.
    pub fn getrs(
        &self,
        lu: &[f64],
        n: usize,
        ipiv: &[i32],
        b: &mut [f64],
    ) -> Result<(), BlasError> {
        let getrs = self.getrs.ok_or(BlasError::NoLapack("dgetrs_"))?;
        let n32 = int(n)?;
        fits(n, n, n.max(1), lu.len())?;
        fits(n, 1, n.max(1), ipiv.len())?;
        fits(n, 1, n.max(1), b.len())?;
        let ld = n32.max(1);
        let mut info = 0;
        // SAFETY: lu holds n × n values with leading dimension ld, ipiv and b n values each
        // (checked above); 'N' is one character, its length passed as gfortran expects.
        unsafe {
            getrs(
                c"N".as_ptr(),
                &n32,
                &1,
                lu.as_ptr(),
                &ld,
                ipiv.as_ptr(),
                b.as_mut_ptr(),
                &ld,
                &mut info,
                1,
            )
        };
        match info {
            0 => Ok(()),
            info => Err(BlasError::Argument {
                routine: "dgetrs_",
                info,
            }),
        }
    }

    /// C = A·B for `n × n` matrices (leading dimension `n`) with `dgemm_` or `sgemm_`.
    pub fn gemm<T: BlasElement>(
        &self,
        n: usize,
        a: &[T],
        b: &[T],
        c: &mut [T],
    ) -> Result<(), BlasError> {
        let gemm = T::routine(self).ok_or(BlasError::NoRoutine(T::GEMM))?;
        let n32 = int(n)?;
        for len in [a.len(), b.len(), c.len()] {
            fits(n, n, n.max(1), len)?;
        }
        let ld = n32.max(1);
        // SAFETY: a, b and c hold n × n values with leading dimension ld (checked above), c
        // does not alias them (a &mut); 'N' is one character, its length passed as gfortran
        // expects.
        unsafe {
            gemm(
                c"N".as_ptr(),
                c"N".as_ptr(),
                &n32,
                &n32,
                &n32,
                &T::ONE,
                a.as_ptr(),
                &ld,
                b.as_ptr(),
                &ld,
                &T::ZERO,
                c.as_mut_ptr(),
                &ld,
                1,
                1,
            )
        };
        Ok(())
    }
}

/// `n` as the library's 32-bit integer.
fn int(n: usize) -> Result<c_int, BlasError> {
    c_int::try_from(n).map_err(|_| BlasError::TooLarge(n))
}

/// A function of the library, if it exports `name`.
fn symbol<T: Copy>(lib: &Library, name: &str) -> Option<T> {
    // SAFETY: each caller names T as the prototype the library's interface documents for
    // `name` (the Fortran reference ABI, or the vendor's C header); the library is never
    // unloaded, so the pointer outlives the Symbol's borrow.
    unsafe { lib.get::<T>(name).ok().map(|s| *s) }
}

/// The first of `libs` that exports `name`.
fn any_symbol<T: Copy>(libs: &[Library], name: &str) -> Option<T> {
    libs.iter().find_map(|l| symbol(l, name))
}

/// A C string from the library (copied), or `None` for a null pointer.
fn text(p: *const c_char) -> Option<String> {
    if p.is_null() {
        return None;
    }
    // SAFETY: the library returns a NUL-terminated string that stays valid (a static buffer).
    let s = unsafe { CStr::from_ptr(p) };
    Some(s.to_string_lossy().trim().to_string())
}

/// The files, version and kernels of a library, and how its threads are set.
fn identify(
    libs: &[Library],
    getrf: Option<Getrf>,
    dgemm: Dgemm,
) -> (String, Option<String>, Control) {
    let call_text = |name: &str| {
        any_symbol::<GetText>(libs, name).and_then(|f| {
            // SAFETY: const char *f(void), the vendor's prototype.
            text(unsafe { f() })
        })
    };
    let gemm_file = file_of(dgemm as *const c_void);
    let files = match getrf.map(|f| file_of(f as *const c_void)) {
        Some(lapack) if lapack != gemm_file => format!("dgetrf_ {lapack}, dgemm_ {gemm_file}"),
        _ => gemm_file,
    };
    let set_int = |name: &str| any_symbol::<SetInt>(libs, name);
    let get_int = |name: &str| any_symbol::<GetInt>(libs, name);
    if let Some(config) = call_text("openblas_get_config") {
        let core = call_text("openblas_get_corename").map(|c| format!("OpenBLAS {c}"));
        // SAFETY: int openblas_get_parallel(void): 0 sequential, 1 pthreads, 2 OpenMP.
        let parallel = get_int("openblas_get_parallel").map(|f| unsafe { f() });
        let control = match (parallel, set_int("openblas_set_num_threads")) {
            (Some(0), _) => Control::Serial("OpenBLAS SINGLE_THREADED"),
            (_, Some(set)) => Control::OpenBlas {
                set,
                get: get_int("openblas_get_num_threads"),
            },
            (_, None) => Control::Own,
        };
        let model = match parallel {
            Some(0) => ", sequential",
            Some(1) => ", pthreads",
            Some(2) => ", OpenMP",
            _ => "",
        };
        return (format!("{files} ({config}{model})"), core, control);
    }
    if let Some(version) = call_text("bli_info_get_version_str") {
        // BLIS reads BLIS_ARCH_TYPE (a configuration chosen by number) as it initialises, and
        // aborts where its configurations are queried before: initialised first.
        if let Some(init) = any_symbol::<Init>(libs, "bli_init") {
            // SAFETY: void bli_init(void), idempotent (BLIS initialises once).
            unsafe { init() };
        }
        let arch = any_symbol::<GetInt>(libs, "bli_arch_query_id")
            .zip(any_symbol::<ArchString>(libs, "bli_arch_string"))
            // SAFETY: arch_t bli_arch_query_id(void) and const char *bli_arch_string(arch_t).
            .and_then(|(id, name)| text(unsafe { name(id()) }));
        let control = match any_symbol::<SetDim>(libs, "bli_thread_set_num_threads") {
            Some(set) => Control::Blis {
                set,
                get: any_symbol::<GetDim>(libs, "bli_thread_get_num_threads"),
            },
            None => Control::Own,
        };
        return (
            format!("{files} (BLIS {version})"),
            arch.map(|a| format!("BLIS {a}")),
            control,
        );
    }
    if let Some(version) = any_symbol::<MklVersion>(libs, "MKL_Get_Version_String") {
        let mut buf = [0 as c_char; 256];
        // SAFETY: void MKL_Get_Version_String(char *buf, int len) writes at most len bytes,
        // NUL-terminated; the last byte stays NUL anyway.
        unsafe { version(buf.as_mut_ptr(), (buf.len() - 1) as c_int) };
        let v = text(buf.as_ptr()).unwrap_or_else(|| "Intel MKL".into());
        let control = match set_int("MKL_Set_Num_Threads") {
            Some(set) => Control::Mkl {
                set,
                get: get_int("MKL_Get_Max_Threads"),
            },
            None => Control::Own,
        };
        return (format!("{files} ({v})"), None, control);
    }
    // No vendor interface: Debian's reference BLAS and LAPACK (netlib), or another like them.
    let lapack = any_symbol::<Ilaver>(libs, "ilaver_").map(|f| {
        let (mut major, mut minor, mut patch) = (0, 0, 0);
        // SAFETY: SUBROUTINE ILAVER(VERS_MAJOR, VERS_MINOR, VERS_PATCH), three INTEGER outputs.
        unsafe { f(&mut major, &mut minor, &mut patch) };
        format!("LAPACK {major}.{minor}.{patch}, ")
    });
    (
        format!(
            "{files} ({}no vendor interface: a reference BLAS such as netlib's, or unknown)",
            lapack.unwrap_or_default()
        ),
        None,
        Control::Own,
    )
}

/// The file that holds the code at `addr`, with links resolved (Debian's alternatives), or
/// `unknown file` if the loader cannot tell.
fn file_of(addr: *const c_void) -> String {
    // SAFETY: Dl_info is plain data; zeroed is a valid value for dladdr to fill.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: addr is a function of a loaded library; dladdr only reads the loader's tables.
    let found = unsafe { libc::dladdr(addr, &mut info) } != 0;
    let name = if found { text(info.dli_fname) } else { None };
    match name {
        Some(n) => std::fs::canonicalize(&n)
            .unwrap_or_else(|_| PathBuf::from(&n))
            .display()
            .to_string(),
        None => "unknown file".into(),
    }
}

/// The threads of this process, by id.
fn tasks() -> BTreeSet<i32> {
    std::fs::read_dir("/proc/self/task")
        .map(|d| {
            d.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
                .collect()
        })
        .unwrap_or_default()
}

fn current_tid() -> i32 {
    // SAFETY: gettid has no arguments and cannot fail.
    unsafe { libc::gettid() }
}

/// The loader's own message (dlerror's, which libloading keeps as the error's source), on one
/// line.
fn loader_message(e: &libloading::Error) -> String {
    let text = std::error::Error::source(e).map_or_else(|| e.to_string(), |s| s.to_string());
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_named_library_that_does_not_exist_says_so() {
        let e =
            SystemBlas::load(Some(Path::new("/nonexistent/libopenblas.so.0")), true).unwrap_err();
        let text = e.to_string();
        assert!(matches!(e, BlasError::Named { .. }), "{e:?}");
        assert!(
            text.contains("--blas-library /nonexistent/libopenblas.so.0"),
            "{text}"
        );
        assert!(text.contains("No such file"), "{text}");
        assert!(text.contains(INSTALL), "{text}");
        assert_eq!(text.lines().count(), 1, "{text}");
    }

    #[test]
    fn a_file_that_is_not_a_library_or_not_a_blas_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let fake = dir.path().join("libfake.so");
        std::fs::write(&fake, "not an ELF file\n").unwrap();
        let text = SystemBlas::load(Some(&fake), false)
            .unwrap_err()
            .to_string();
        assert!(text.contains(&fake.display().to_string()), "{text}");
        assert!(
            text.contains("invalid ELF header") || text.contains("too short"),
            "{text}"
        );
        // A real library that is no BLAS: the C maths library.
        let text = SystemBlas::load(Some(Path::new("libm.so.6")), false)
            .unwrap_err()
            .to_string();
        assert!(text.contains("no dgemm_"), "{text}");
        let text = SystemBlas::load(Some(Path::new("libm.so.6")), true)
            .unwrap_err()
            .to_string();
        assert!(text.contains("no dgetrf_"), "{text}");
    }

    #[test]
    fn sizes_beyond_32_bits_are_refused_before_any_call() {
        assert!(matches!(int(1 << 31), Err(BlasError::TooLarge(_))));
        assert_eq!(int(2000), Ok(2000));
        let e = BlasError::TooLarge(1 << 31).to_string();
        assert!(e.contains("2147483647") && e.contains("--n"), "{e}");
    }

    /// With a system BLAS installed: a known 3 × 3 system and a product, through the library.
    #[test]
    fn the_system_library_solves_and_multiplies() {
        let blas = match SystemBlas::load(None, true) {
            Ok(b) => b,
            Err(e) => {
                eprintln!("SKIPPED the_system_library_solves_and_multiplies: {e}");
                return;
            }
        };
        assert!(blas.description().starts_with('/'), "{blas:?}");
        // A = [[2, 1, 1], [4, -6, 0], [-2, 7, 2]] (rows), x = [1, 2, 3]: b = [7, -8, 18].
        let a0 = vec![2.0, 4.0, -2.0, 1.0, -6.0, 7.0, 1.0, 0.0, 2.0];
        let mut a = a0.clone();
        let mut ipiv = vec![0; 3];
        blas.getrf(&mut a, 3, &mut ipiv).unwrap();
        assert_eq!(ipiv[0], 2, "LAPACK's pivots are 1-based: row 2 (|4|) first");
        let mut b = vec![7.0, -8.0, 18.0];
        blas.getrs(&a, 3, &ipiv, &mut b).unwrap();
        for (x, want) in b.iter().zip([1.0, 2.0, 3.0]) {
            assert!((x - want).abs() < 1e-13, "{b:?}");
        }
        let mut c = vec![0.0; 9];
        blas.gemm(3, &a0, &a0, &mut c).unwrap();
        // Row 0 of A times column 0 of A: 2·2 + 1·4 + 1·(−2) = 6.
        assert_eq!(c[0], 6.0);
        let a32: Vec<f32> = a0.iter().map(|&x| x as f32).collect();
        let mut c32 = vec![0f32; 9];
        blas.gemm(3, &a32, &a32, &mut c32).unwrap();
        assert_eq!(c32[0], 6.0);
        // A singular matrix is an error, never a solution.
        let mut s = vec![1.0, 2.0, 2.0, 4.0];
        let e = blas.getrf(&mut s, 2, &mut ipiv).unwrap_err();
        assert!(matches!(e, BlasError::Singular(2)), "{e:?}");
        assert!(blas.getrf(&mut s, 3, &mut ipiv).is_err(), "too few values");
    }
}
