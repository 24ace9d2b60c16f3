//! The real core clock, measured so that no core can fool it.
//!
//! A dependent chain of one instruction runs at one instruction per *latency* cycles, so its rate
//! × the latency is the clock — provided the core really spends that latency on every link. An
//! add-immediate chain does not qualify: Golden Cove folds `add reg, 1` chains at rename and ran
//! such a chain at "8–17 GHz" on a 2.8 GHz Sapphire Rapids (`../shared/hardware`). Multiplies and
//! fused multiply-adds are never folded, and vector integer adds are not either, so peakbench
//! times chains of several *kinds* (see [`Probe`]), each with its latency from the
//! microarchitecture table, and believes the clock only when they agree within
//! [`AGREEMENT`] and the value is plausible ([`decide`]). Otherwise the clock is unknown, with the
//! reason and every reading, and no efficiency is computed from it.
//!
//! Probes are interleaved in short samples, so that a frequency change (an AVX-512 licence, a
//! turbo step) affects them alike; the best sample of each is kept, since interruptions only ever
//! lower a rate.

use super::uarch::Latencies;
use serde::{Deserialize, Serialize};
use std::time::{Duration, Instant};

/// Two readings agree when the larger is at most this much above the smaller (3 %).
pub const AGREEMENT: f64 = 0.03;
/// A clock above this multiple of the TSC (or nominal) rate is implausible: no turbo reaches it.
pub const MAX_OVER_NOMINAL: f64 = 2.5;
/// Instructions in one pass of a probe's loop; the loop counter runs beside them on another port.
pub const CHAIN_LENGTH: u64 = 100;

/// A dependent chain of one instruction kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Probe {
    /// 64-bit integer multiply (`imul r64, r64`; `mul x, x, x` on Arm).
    Imul,
    /// fp64 fused multiply-add at this vector width (64 = scalar).
    Fma { width_bits: u32 },
    /// 32-bit vector integer add at this vector width.
    VecAdd { width_bits: u32 },
}

impl Probe {
    /// The instruction as a person reads it.
    pub fn instruction(self) -> String {
        let arm = cfg!(target_arch = "aarch64");
        match (self, arm) {
            (Probe::Imul, false) => "imul r64".into(),
            (Probe::Imul, true) => "mul x".into(),
            (Probe::Fma { width_bits: 64 }, false) => "vfmadd213sd".into(),
            (Probe::Fma { width_bits: 64 }, true) => "fmadd d".into(),
            (Probe::Fma { width_bits }, false) => format!("vfmadd213pd {}", reg(width_bits)),
            (Probe::Fma { .. }, true) => "fmla v.2d".into(),
            (Probe::VecAdd { width_bits }, false) => format!("vpaddd {}", reg(width_bits)),
            (Probe::VecAdd { .. }, true) => "add v.4s".into(),
        }
    }

    /// The chain's latency in cycles per instruction, from the table.
    pub fn latency(self, lat: &Latencies) -> f64 {
        match self {
            Probe::Imul => lat.imul,
            Probe::Fma { .. } => lat.fma,
            Probe::VecAdd { .. } => lat.vec_add,
        }
    }
}

fn reg(width_bits: u32) -> &'static str {
    match width_bits {
        512 => "zmm",
        256 => "ymm",
        _ => "xmm",
    }
}

/// One probe's reading.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProbeReading {
    /// The instruction timed ("imul r64", "vfmadd213pd zmm").
    pub probe: String,
    /// Its latency from the table, cycles.
    pub latency_cycles: f64,
    /// The clock it implies: instructions per second × latency, GHz.
    pub ghz: f64,
}

/// What a clock reading is checked against.
#[derive(Debug, Clone, Default)]
pub struct Plausibility {
    /// The TSC or nominal rate, GHz, and what it is ("TSC").
    pub nominal: Option<(f64, String)>,
    /// The highest turbo of any part with this microarchitecture, GHz, and the entry's name.
    pub max_turbo: Option<(f64, String)>,
}

/// The clock, or why it is unknown; with every reading either way.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClockDecision {
    /// The agreed clock, GHz.
    pub ghz: Option<f64>,
    /// Why `ghz` is null.
    pub unknown_reason: Option<String>,
    pub readings: Vec<ProbeReading>,
}

fn list(readings: &[ProbeReading]) -> String {
    readings
        .iter()
        .map(|r| format!("{} chain {:.2} GHz", r.probe, r.ghz))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Decides the clock from probe readings: known only when at least two readings exist, all
/// agree within [`AGREEMENT`], and their mean is neither above [`MAX_OVER_NOMINAL`] × the nominal
/// rate nor above the table's highest turbo (with the agreement tolerance).
pub fn decide(readings: Vec<ProbeReading>, limits: &Plausibility) -> ClockDecision {
    let unknown = |reason: String, readings: Vec<ProbeReading>| ClockDecision {
        ghz: None,
        unknown_reason: Some(reason),
        readings,
    };
    if readings.len() < 2 {
        return unknown(
            format!(
                "two probes of different kinds are needed and {} gave a reading{}",
                readings.len(),
                if readings.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", list(&readings))
                }
            ),
            readings,
        );
    }
    if let Some(bad) = readings
        .iter()
        .find(|r| !(r.ghz.is_finite() && r.ghz > 0.0))
    {
        let reason = format!("the {} chain did not run", bad.probe);
        return unknown(reason, readings);
    }
    let lo = readings.iter().map(|r| r.ghz).fold(f64::INFINITY, f64::min);
    let hi = readings.iter().map(|r| r.ghz).fold(0.0, f64::max);
    if hi > lo * (1.0 + AGREEMENT) {
        let reason = format!(
            "the probes disagree by more than {:.0} % ({}): one of them is not timed at its table latency",
            AGREEMENT * 100.0,
            list(&readings)
        );
        return unknown(reason, readings);
    }
    let ghz = readings.iter().map(|r| r.ghz).sum::<f64>() / readings.len() as f64;
    if let Some((nominal, what)) = &limits.nominal
        && ghz > nominal * MAX_OVER_NOMINAL
    {
        let reason = format!(
            "{ghz:.2} GHz is above {MAX_OVER_NOMINAL} × the {what} rate ({nominal:.2} GHz), which no core reaches ({})",
            list(&readings)
        );
        return unknown(reason, readings);
    }
    if let Some((turbo, uarch)) = &limits.max_turbo
        && ghz > turbo * (1.0 + AGREEMENT)
    {
        let reason = format!(
            "{ghz:.2} GHz is above the highest turbo of any {uarch} part ({turbo:.1} GHz) ({})",
            list(&readings)
        );
        return unknown(reason, readings);
    }
    ClockDecision {
        ghz: Some(ghz),
        unknown_reason: None,
        readings,
    }
}

macro_rules! x10 {
    ($s:expr) => {
        concat!($s, $s, $s, $s, $s, $s, $s, $s, $s, $s)
    };
}

#[cfg(target_arch = "x86_64")]
mod chains {
    //! The x86 chains: [`super::CHAIN_LENGTH`] dependent instructions per loop pass.
    use core::arch::asm;

    pub fn imul(iterations: u64) {
        // SAFETY: register-only arithmetic and a counted loop; no memory is touched.
        unsafe {
            asm!(
                "2:",
                x10!(x10!("imul {x}, {m}\n")),
                "dec {n}",
                "jnz 2b",
                x = inout(reg) 3u64 => _,
                m = in(reg) 5u64,
                n = inout(reg) iterations.max(1) => _,
                options(nomem, nostack),
            );
        }
    }

    /// `acc = acc × m + a` with m = 1 − 1e-6, a = 1e-6: converges to 1, never denormal.
    macro_rules! fma_chain {
        ($name:ident, $feature:literal, $insn:literal, $reg:literal) => {
            #[target_feature(enable = $feature)]
            pub unsafe fn $name(iterations: u64) {
                // SAFETY: register-only arithmetic and a counted loop; the vector registers it
                // writes are caller-saved and declared by clobber_abi("C").
                unsafe {
                    asm!(
                        concat!("vmovq ", "xmm1, rsi"),
                        concat!("vmovq ", "xmm2, rdx"),
                        concat!("vmovq ", "xmm0, rdx"),
                        concat!("vbroadcastsd ", $reg, "1, xmm1"),
                        concat!("vbroadcastsd ", $reg, "2, xmm2"),
                        concat!("vbroadcastsd ", $reg, "0, xmm0"),
                        "2:",
                        x10!(x10!(concat!($insn, " ", $reg, "0, ", $reg, "1, ", $reg, "2\n"))),
                        "dec rdi",
                        "jnz 2b",
                        "vzeroupper",
                        in("rsi") (1.0f64 - 1e-6).to_bits(),
                        in("rdx") 1e-6f64.to_bits(),
                        inout("rdi") iterations.max(1) => _,
                        clobber_abi("C"),
                        options(nomem, nostack),
                    );
                }
            }
        };
    }
    fma_chain!(fma_zmm, "avx512f", "vfmadd213pd", "zmm");
    fma_chain!(fma_ymm, "avx2,fma", "vfmadd213pd", "ymm");

    #[target_feature(enable = "fma")]
    pub unsafe fn fma_scalar(iterations: u64) {
        // SAFETY: register-only arithmetic and a counted loop; clobbers declared by the ABI.
        unsafe {
            asm!(
                "vmovq xmm1, rsi",
                "vmovq xmm2, rdx",
                "vmovq xmm0, rdx",
                "2:",
                x10!(x10!("vfmadd213sd xmm0, xmm1, xmm2\n")),
                "dec rdi",
                "jnz 2b",
                in("rsi") (1.0f64 - 1e-6).to_bits(),
                in("rdx") 1e-6f64.to_bits(),
                inout("rdi") iterations.max(1) => _,
                clobber_abi("C"),
                options(nomem, nostack),
            );
        }
    }

    /// Integer adds wrap and never fault, so the start value does not matter.
    macro_rules! add_chain {
        ($name:ident, $feature:literal, $insn:literal) => {
            #[target_feature(enable = $feature)]
            pub unsafe fn $name(iterations: u64) {
                // SAFETY: register-only arithmetic and a counted loop; clobbers declared by the ABI.
                unsafe {
                    asm!(
                        "2:",
                        x10!(x10!(concat!($insn, "\n"))),
                        "dec rdi",
                        "jnz 2b",
                        inout("rdi") iterations.max(1) => _,
                        clobber_abi("C"),
                        options(nomem, nostack),
                    );
                }
            }
        };
    }
    add_chain!(add_zmm, "avx512f", "vpaddd zmm0, zmm0, zmm1");
    add_chain!(add_ymm, "avx2", "vpaddd ymm0, ymm0, ymm1");
    add_chain!(add_xmm, "sse2", "paddd xmm0, xmm1");
}

#[cfg(target_arch = "aarch64")]
mod chains {
    //! The aarch64 chains: [`super::CHAIN_LENGTH`] dependent instructions per loop pass.
    use core::arch::asm;

    pub fn imul(iterations: u64) {
        // SAFETY: register-only arithmetic and a counted loop; no memory is touched.
        unsafe {
            asm!(
                "2:",
                x10!(x10!("mul {x}, {x}, {m}\n")),
                "subs {n}, {n}, #1",
                "b.ne 2b",
                x = inout(reg) 3u64 => _,
                m = in(reg) 5u64,
                n = inout(reg) iterations.max(1) => _,
                options(nomem, nostack),
            );
        }
    }

    pub fn fma_scalar(iterations: u64) {
        // SAFETY: register-only arithmetic and a counted loop; clobbers declared by the ABI.
        unsafe {
            asm!(
                "fmov d1, x1",
                "fmov d2, x2",
                "fmov d0, x2",
                "2:",
                x10!(x10!("fmadd d0, d0, d1, d2\n")),
                "subs x0, x0, #1",
                "b.ne 2b",
                in("x1") (1.0f64 - 1e-6).to_bits(),
                in("x2") 1e-6f64.to_bits(),
                inout("x0") iterations.max(1) => _,
                clobber_abi("C"),
                options(nomem, nostack),
            );
        }
    }

    pub fn fma_vector(iterations: u64) {
        // SAFETY: register-only arithmetic and a counted loop; clobbers declared by the ABI.
        // Neoverse N2/V1/V2 forward an `fmla` accumulator late (2 cycles), so the chain runs
        // through the multiplicand instead: v3 += v0 × v1, then v0 += v3 × v1, each waiting for
        // the other's full latency. v1 is tiny, so the values stay normal and finite.
        unsafe {
            asm!(
                "dup v1.2d, x1",
                "dup v0.2d, x2",
                "dup v3.2d, x2",
                "2:",
                x10!(concat!(
                    "fmla v3.2d, v0.2d, v1.2d\nfmla v0.2d, v3.2d, v1.2d\n",
                    "fmla v3.2d, v0.2d, v1.2d\nfmla v0.2d, v3.2d, v1.2d\n",
                    "fmla v3.2d, v0.2d, v1.2d\nfmla v0.2d, v3.2d, v1.2d\n",
                    "fmla v3.2d, v0.2d, v1.2d\nfmla v0.2d, v3.2d, v1.2d\n",
                    "fmla v3.2d, v0.2d, v1.2d\nfmla v0.2d, v3.2d, v1.2d\n",
                )),
                "subs x0, x0, #1",
                "b.ne 2b",
                in("x1") 1e-9f64.to_bits(),
                in("x2") 1e-6f64.to_bits(),
                inout("x0") iterations.max(1) => _,
                clobber_abi("C"),
                options(nomem, nostack),
            );
        }
    }

    pub fn add_vector(iterations: u64) {
        // SAFETY: register-only arithmetic and a counted loop; clobbers declared by the ABI.
        unsafe {
            asm!(
                "2:",
                x10!(x10!("add v0.4s, v0.4s, v1.4s\n")),
                "subs x0, x0, #1",
                "b.ne 2b",
                inout("x0") iterations.max(1) => _,
                clobber_abi("C"),
                options(nomem, nostack),
            );
        }
    }
}

/// The probes this machine can run: imul, the scalar FMA where the machine has FMA, then for each
/// vector instruction set its FMA chain (where it has FMA) and its integer-add chain.
pub fn available(isas: &[super::Isa]) -> Vec<Probe> {
    use super::Isa;
    if !cfg!(any(target_arch = "x86_64", target_arch = "aarch64")) {
        return Vec::new();
    }
    let mut out = vec![Probe::Imul];
    if isas.iter().any(|i| i.has_fma()) {
        out.push(Probe::Fma { width_bits: 64 });
    }
    for &isa in isas.iter().filter(|i| **i != Isa::Scalar) {
        let width_bits = isa.width_bits();
        if isa.has_fma() {
            out.push(Probe::Fma { width_bits });
        }
        out.push(Probe::VecAdd { width_bits });
    }
    let mut seen = Vec::new();
    out.retain(|p| {
        let new = !seen.contains(p);
        seen.push(*p);
        new
    });
    out
}

/// The chain for `probe`, if this build and machine have it. `available` guards the ISA.
pub(super) fn chain(probe: Probe) -> Option<fn(u64)> {
    #[cfg(target_arch = "x86_64")]
    {
        macro_rules! checked {
            ($f:ident) => {{
                fn run(n: u64) {
                    // SAFETY: handed out only for probes that `available` listed, i.e. for an
                    // ISA the CPU and OS support (CPUID and XCR0 checked in sysinfo).
                    unsafe { chains::$f(n) }
                }
                run as fn(u64)
            }};
        }
        Some(match probe {
            Probe::Imul => chains::imul,
            Probe::Fma { width_bits: 64 } => checked!(fma_scalar),
            Probe::Fma { width_bits: 256 } => checked!(fma_ymm),
            Probe::Fma { width_bits: 512 } => checked!(fma_zmm),
            Probe::VecAdd { width_bits: 128 } => checked!(add_xmm),
            Probe::VecAdd { width_bits: 256 } => checked!(add_ymm),
            Probe::VecAdd { width_bits: 512 } => checked!(add_zmm),
            _ => return None,
        })
    }
    #[cfg(target_arch = "aarch64")]
    {
        Some(match probe {
            Probe::Imul => chains::imul,
            Probe::Fma { width_bits: 64 } => chains::fma_scalar,
            Probe::Fma { .. } => chains::fma_vector,
            Probe::VecAdd { .. } => chains::add_vector,
        })
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        let _ = probe;
        None
    }
}

/// How long the probes run.
#[derive(Debug, Clone, Copy)]
pub struct ProbeBudget {
    /// Spent running the probes before any sample is kept.
    pub warmup: Duration,
    /// Length of one sample of one probe.
    pub sample: Duration,
    /// Samples per probe (interleaved); the best is kept.
    pub samples: usize,
}

/// The environment variable of the clock's test double: with `PEAKBENCH_MOCK_CLOCK_GHZ=F` (F
/// from 0.1 to 10) no probe runs and every probe reads F GHz, named "mock" in the record. As
/// hyperfine's mock executor, it lets tests of parsing and reporting run without waiting for
/// the probes (about 0.6 s a process, more per CPU point); it is not in `--help`.
pub const MOCK_ENV: &str = "PEAKBENCH_MOCK_CLOCK_GHZ";

/// The clock the test double reads, where [`MOCK_ENV`] holds one.
fn mocked() -> Option<f64> {
    std::env::var(MOCK_ENV)
        .ok()?
        .trim()
        .parse::<f64>()
        .ok()
        .filter(|g| (0.1..=10.0).contains(g))
}

/// Times each probe on the calling thread (interleaved rounds; [`best_readings`]) and returns
/// the clock each implies with its table latency. Probes this build cannot run are left out.
pub fn measure(probes: &[Probe], lat: &Latencies, budget: ProbeBudget) -> Vec<ProbeReading> {
    if let Some(ghz) = mocked() {
        return probes
            .iter()
            .filter(|p| chain(**p).is_some())
            .map(|p| ProbeReading {
                probe: format!("{} (mock)", p.instruction()),
                latency_cycles: p.latency(lat),
                ghz,
            })
            .collect();
    }
    let time = |run: fn(u64), iters: u64| {
        let t = Instant::now();
        run(iters);
        t.elapsed()
    };
    /// A probe, its chain and the iterations of one sample.
    type Calibrated = (Probe, fn(u64), u64);
    let runs: Vec<Calibrated> = probes
        .iter()
        .filter_map(|&p| chain(p).map(|run| (p, run)))
        .map(|(p, run)| {
            // Calibrate: double until one run lasts at least 20 µs, then scale to a sample
            // (short, so that the samples follow the benchmark kernel before the clock can move).
            let mut iters: u64 = 64;
            let mut elapsed = time(run, iters);
            while elapsed < Duration::from_micros(20) && iters < 1 << 40 {
                iters *= 2;
                elapsed = time(run, iters);
            }
            let per_iter = elapsed.as_secs_f64() / iters as f64;
            let n = ((budget.sample.as_secs_f64() / per_iter) as u64).max(1);
            (p, run, n)
        })
        .collect();
    let deadline = Instant::now() + budget.warmup;
    while Instant::now() < deadline && !runs.is_empty() {
        for &(_, run, n) in &runs {
            time(run, n);
        }
    }
    let rounds: Vec<Vec<f64>> = (0..budget.samples.max(1))
        .map(|_| {
            runs.iter()
                .map(|&(p, run, n)| {
                    let secs = time(run, n).as_secs_f64();
                    (n * CHAIN_LENGTH) as f64 * p.latency(lat) / secs / 1e9
                })
                .collect()
        })
        .collect();
    let best = best_readings(&rounds);
    runs.iter()
        .zip(best)
        .map(|(&(p, _, _), ghz)| ProbeReading {
            probe: p.instruction(),
            latency_cycles: p.latency(lat),
            ghz,
        })
        .collect()
}

/// Each probe's reading from `rounds` (one reading per probe per round, interleaved): the
/// best of each, since interruptions only ever lower a rate — unless those disagree, which a
/// clock that moved between rounds (a turbo step in a shared guest) does to probes that all
/// tell the truth: then the round in which every probe agreed and the slowest was fastest,
/// where there is one.
fn best_readings(rounds: &[Vec<f64>]) -> Vec<f64> {
    let probes = rounds.first().map_or(0, Vec::len);
    let best: Vec<f64> = (0..probes)
        .map(|i| rounds.iter().map(|r| r[i]).fold(0.0, f64::max))
        .collect();
    let spread = |r: &[f64]| {
        let lo = r.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = r.iter().copied().fold(0.0, f64::max);
        (lo, hi <= lo * (1.0 + AGREEMENT))
    };
    if spread(&best).1 {
        return best;
    }
    rounds
        .iter()
        .filter(|r| spread(r).1)
        .max_by(|a, b| spread(a).0.total_cmp(&spread(b).0))
        .cloned()
        .unwrap_or(best)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The best of each probe where they agree; where the clock moved between rounds (imul
    /// caught a 3.31 GHz round, the FMA only 3.18), the fastest round in which both agreed —
    /// the guest of this session read 3.31 against 3.18 GHz and called the clock unknown.
    #[test]
    fn a_clock_that_moves_between_rounds_is_read_from_one_round() {
        let steady = [vec![2.79, 2.77], vec![2.70, 2.78]];
        assert_eq!(best_readings(&steady), [2.79, 2.78]);
        let moving = [vec![3.31, 3.10], vec![3.17, 3.18], vec![3.12, 3.13]];
        assert_eq!(best_readings(&moving), [3.17, 3.18]);
        // No round agrees: the best of each, which decide() calls a disagreement.
        let never = [vec![3.3, 3.0], vec![3.2, 2.9]];
        assert_eq!(best_readings(&never), [3.3, 3.0]);
        assert_eq!(best_readings(&[]), Vec::<f64>::new());
    }

    fn reading(probe: &str, latency: f64, ghz: f64) -> ProbeReading {
        ProbeReading {
            probe: probe.into(),
            latency_cycles: latency,
            ghz,
        }
    }

    /// The readings recorded on the 16-core Sapphire Rapids guest (../shared/hardware): the
    /// probes that cannot be folded agree on 2.7–2.9 GHz; the add-immediate chain read 8–17 GHz.
    fn sapphire_rapids() -> Plausibility {
        Plausibility {
            nominal: Some((2.1, "TSC".into())),
            max_turbo: Some((4.8, "Intel Sapphire Rapids/Emerald Rapids".into())),
        }
    }

    #[test]
    fn sapphire_rapids_unfoldable_probes_agree() {
        let d = decide(
            vec![
                reading("imul r64", 3.0, 2.79),
                reading("vfmadd213sd", 4.0, 2.77),
                reading("vfmadd213pd zmm", 4.0, 2.74),
            ],
            &sapphire_rapids(),
        );
        let ghz = d.ghz.unwrap();
        assert!((ghz - 2.7667).abs() < 0.01, "{ghz}");
        assert!(d.unknown_reason.is_none());
    }

    #[test]
    fn sapphire_rapids_folded_add_chain_is_refused_with_both_readings() {
        // An add-immediate chain "at latency 1" beside the imul chain: 8.4 vs 2.8 GHz.
        let d = decide(
            vec![
                reading("add r64, 1", 1.0, 8.4),
                reading("imul r64", 3.0, 2.8),
            ],
            &sapphire_rapids(),
        );
        assert_eq!(d.ghz, None);
        let why = d.unknown_reason.unwrap();
        assert!(why.contains("disagree"), "{why}");
        assert!(
            why.contains("8.40 GHz") && why.contains("2.80 GHz"),
            "{why}"
        );
        // Even if both probes were fooled alike, 17 GHz is above 2.5 × TSC and the turbo.
        let d = decide(
            vec![
                reading("add r64, 1", 1.0, 17.0),
                reading("add r32, 1", 1.0, 16.9),
            ],
            &sapphire_rapids(),
        );
        assert!(d.unknown_reason.unwrap().contains("2.5 × the TSC"));
        let turbo_only = Plausibility {
            nominal: None,
            ..sapphire_rapids()
        };
        let d = decide(
            vec![reading("a", 1.0, 5.3), reading("b", 1.0, 5.25)],
            &turbo_only,
        );
        assert!(d.unknown_reason.unwrap().contains("highest turbo"));
    }

    #[test]
    fn one_probe_is_not_enough_and_agreement_is_3_percent() {
        let limits = Plausibility::default();
        let d = decide(vec![reading("imul r64", 3.0, 3.0)], &limits);
        assert!(d.unknown_reason.unwrap().contains("two probes"));
        let d = decide(
            vec![reading("a", 3.0, 3.0), reading("b", 4.0, 3.089)],
            &limits,
        );
        assert!(d.ghz.is_some());
        let d = decide(
            vec![reading("a", 3.0, 3.0), reading("b", 4.0, 3.091)],
            &limits,
        );
        assert!(d.ghz.is_none());
        let d = decide(
            vec![reading("a", 3.0, 0.0), reading("b", 4.0, 3.0)],
            &limits,
        );
        assert!(d.unknown_reason.unwrap().contains("did not run"));
    }

    #[test]
    fn this_machine_probes_run() {
        #[cfg(target_arch = "x86_64")]
        let isas = super::super::x86::identify().isas;
        #[cfg(not(target_arch = "x86_64"))]
        let isas = vec![super::super::Isa::Scalar];
        let probes = available(&isas);
        let lat = Latencies::native_default();
        let r = measure(
            &probes,
            &lat,
            ProbeBudget {
                warmup: Duration::from_millis(5),
                sample: Duration::from_millis(1),
                samples: 3,
            },
        );
        assert_eq!(r.len(), probes.len());
        // Any core that runs this test clocks between 0.2 and 7 GHz (imul is 3 cycles on every
        // x86-64 core since Nehalem and Zen 1; mul 2 on the Neoverse cores).
        assert!((0.2..7.0).contains(&r[0].ghz), "{r:?}");
    }
}
