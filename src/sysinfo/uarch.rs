//! The table of microarchitectures: per-core, per-cycle throughput of the instructions the CPU
//! kernels use, keyed by vendor, family and model (x86) or implementer and part (Arm).
//!
//! Hypervisors mask the brand string ("AMD EPYC"), so the key is the CPUID signature, never the
//! name. Figures are instructions per cycle per core for each vector width, from the vendors'
//! optimisation manuals, Agner Fog's instruction tables and uops.info measurements:
//! * `fma`: fused multiply-add instructions (FP32/FP64) per cycle;
//! * `fadd`: floating-point add instructions per cycle beside the FMAs, on add pipes of their
//!   own (the FP issue ceiling: FMAs and adds together);
//! * `int_add`: vector integer add instructions (`vpadd{b,w,d,q}`, `add v.4s`) per cycle.
//!
//! A width is listed once per uarch, e.g. Zen 4 executes one 512-bit FMA per cycle (two 256-bit
//! halves on its two FMA pipes) or two 256-bit FMAs: the same 512 bits of FMA per cycle. The
//! peak is the best width × rate among the ISAs the machine can run.

use super::isa::Isa;
use serde::Serialize;

/// Instructions per cycle per core at one vector width.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Rate {
    pub width_bits: u32,
    pub per_cycle: f64,
}

/// A core's matrix-multiply unit. One instruction updates `width_bits / 32` result lanes (fp32
/// or int32), each with the sum of `depth_bytes × 8 / element_bits` products: AMX's `tdpbusd`
/// a 16 × 16 tile (8192 bits) with 64 int8 products a lane, Arm's `smmla` a 2 × 2 block per
/// 128 bits with 8.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct MatrixUnit {
    pub name: &'static str,
    /// Instructions per cycle per core by result width.
    pub rates: &'static [Rate],
    pub depth_bytes: u32,
    /// Whether the operands are tiles (AMX), whose rate holds whatever vector ISA is usable.
    pub tile: bool,
}

impl MatrixUnit {
    /// Operations (multiplies and adds) per cycle per core on `element_bits` inputs, at the best
    /// rate usable with `isas`, and that rate.
    pub fn ops_per_cycle(&self, element_bits: u32, isas: &[Isa]) -> Option<(f64, Rate)> {
        let best = if self.tile {
            self.rates.first().copied()
        } else {
            Uarch::best(self.rates, isas)
        }?;
        let lanes = f64::from(best.width_bits / 32);
        let products = f64::from(self.depth_bytes * 8 / element_bits.clamp(1, 32));
        Some((best.per_cycle * lanes * 2.0 * products, best))
    }
}

/// Intel AMX on Sapphire Rapids and later: one TMUL instruction (16 × 16 result, 64 bytes
/// deep) every 16 cycles, the 2048 int8 and 1024 bf16 operations a cycle Intel states.
const AMX: MatrixUnit = MatrixUnit {
    name: "AMX TMUL (tdpbusd, tdpbf16ps)",
    rates: &[r(8192, 1.0 / 16.0)],
    depth_bytes: 64,
    tile: true,
};

/// Arm SMMLA/BFMMLA (FEAT_I8MM, FEAT_BF16) at the FMLA rate of each width (LLVM's
/// AArch64SchedNeoverse* models issue them on the same pipes, one a cycle each).
const fn mmla(rates: &'static [Rate]) -> MatrixUnit {
    MatrixUnit {
        name: "SMMLA, BFMMLA",
        rates,
        depth_bytes: 8,
        tile: false,
    }
}

const fn r(width_bits: u32, per_cycle: f64) -> Rate {
    Rate {
        width_bits,
        per_cycle,
    }
}

/// Latencies in cycles of the dependent chains that measure the clock (`clock.rs`): one result
/// per latency, never folded or eliminated by the core.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Latencies {
    /// 64-bit integer multiply (`imul r64, r64`; Arm `mul x`).
    pub imul: f64,
    /// fp64 FMA, scalar and vector alike (`vfmadd213sd/pd`; Arm `fmadd d`, `fmla v.2d`).
    pub fma: f64,
    /// 32-bit vector integer add (`vpaddd`; Arm `add v.4s`).
    pub vec_add: f64,
}

impl Latencies {
    /// For an x86 core not in the table: imul is 3 cycles on every x86-64 core since Nehalem and
    /// Zen 1, FMA 4 since Skylake and Zen 3 (5 before), a vector add 1. Where the FMA guess is
    /// wrong, the probes disagree and the clock is unknown rather than wrong.
    pub const DEFAULT_X86: Latencies = Latencies {
        imul: 3.0,
        fma: 4.0,
        vec_add: 1.0,
    };
    /// For an Arm core not in the table: the Neoverse figures (mul 2, FMA 4, vector add 2).
    pub const DEFAULT_ARM: Latencies = Latencies {
        imul: 2.0,
        fma: 4.0,
        vec_add: 2.0,
    };
    /// The default for the architecture this build runs on.
    pub const fn native_default() -> Latencies {
        if cfg!(target_arch = "aarch64") {
            Latencies::DEFAULT_ARM
        } else {
            Latencies::DEFAULT_X86
        }
    }
}

const fn lat(imul: f64, fma: f64, vec_add: f64) -> Latencies {
    Latencies { imul, fma, vec_add }
}

/// The least load-to-use latency of each cache level in core cycles (an integer load of a
/// pointer through a simple address, as the staircase's chase does): the floor of what the
/// staircase can measure there. `None` where the table has no floor it can vouch for: the
/// last level of a mesh or of a multi-chiplet part depends on the distance to the slice, and
/// the vendors give averages, which measurements beat (Zen 4 here: 44.8 cycles against the 50
/// "average" of AMD's guide).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct CacheCycles {
    pub l1: Option<f64>,
    pub l2: Option<f64>,
    pub l3: Option<f64>,
}

impl CacheCycles {
    /// The floor of cache level `level` (1, 2, 3), where the table has one.
    pub fn of(&self, level: u32) -> Option<f64> {
        match level {
            1 => self.l1,
            2 => self.l2,
            3 => self.l3,
            _ => None,
        }
    }
}

const fn cache(l1: f64, l2: Option<f64>) -> CacheCycles {
    CacheCycles {
        l1: Some(l1),
        l2,
        l3: None,
    }
}

/// Where the cache latencies come from.
pub const CACHE_SOURCE: &str = "load-to-use latencies of the vendors' optimisation manuals (Intel ORM, AMD SOG, Arm Neoverse SOG), checked against pointer-chasing measurements (peakbench here on Zen 4: L1 4.02, L2 14.1 cycles; the Sapphire Rapids readings of shared/hardware: L1 4.9, L2 16.8)";

/// One microarchitecture's entry.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Uarch {
    /// The short name `peakbench peak --uarch` takes ("sapphirerapids"); `aliases` are others.
    pub key: &'static str,
    pub aliases: &'static [&'static str],
    pub name: &'static str,
    /// FMA instructions per cycle per core, by vector width.
    pub fma: &'static [Rate],
    /// Floating-point add instructions per cycle per core that issue beside the `fma` rate of
    /// the same width, on pipes of their own (Zen's FP2/FP3, Golden Cove's port-5 adder); empty
    /// at a width where adds take the FMA pipes (Skylake, and every Intel core at 512 bits), or
    /// on a core whose FP pipes all do FMAs (Neoverse). With them the FP issue ceiling is
    /// `2 × fma + fadd` operations per lane per cycle.
    pub fadd: &'static [Rate],
    /// Vector integer add instructions per cycle per core, by vector width.
    pub int_add: &'static [Rate],
    /// Native fp16 arithmetic (AVX512-FP16; Arm FEAT_FP16): fp16 FMAs issue at the `fma` rates
    /// on the same pipes, and the HP workload measures them.
    pub fp16: bool,
    /// int8 dot-product instructions per cycle (`vpdpbusd`, AVX512-VNNI/AVX-VNNI; Arm `sdot`):
    /// each 32-bit lane does 4 multiplies and 4 adds. Empty where the core has none, or where no
    /// figure could be confirmed.
    pub int8_dot: &'static [Rate],
    /// bf16 dot-product instructions per cycle (`vdpbf16ps`; Arm `bfdot`): each 32-bit lane does
    /// 2 multiplies and 2 adds. Empty where the core has none, or no figure could be confirmed
    /// (Sapphire/Granite Rapids: not confirmed; a Sapphire Rapids guest ran `vdpbf16ps zmm` at
    /// 0.45 a cycle, the same with 6 chains as with 24, which no published rate explains).
    pub bf16_dot: &'static [Rate],
    /// Matrix-multiply instructions (int8 and bf16 alike): Intel AMX's TMUL on tiles, Arm's
    /// SMMLA/BFMMLA on vector registers; None where the core has none.
    pub matrix: Option<MatrixUnit>,
    /// Latencies of the clock probes' chains.
    pub latency: Latencies,
    /// The caches' least load-to-use latencies ([`CACHE_SOURCE`]).
    pub cache_cycles: CacheCycles,
    /// The highest maximum turbo of any part sold with this core, GHz: a measured clock above it
    /// is implausible.
    pub max_turbo_ghz: Option<f64>,
    /// What a reader should know about the entry (SKU variation, hybrid cores).
    pub note: &'static str,
    /// Where the per-cycle figures and latencies come from.
    pub source: &'static str,
}

const INTEL_ORM: &str = "Intel 64 and IA-32 Architectures Optimization Reference Manual; uops.info";
const AMD_SOG: &str = "AMD Software Optimization Guide for the family (Zen 5: pub. 58455); uops.info; Agner Fog's instruction tables; LLVM's X86ScheduleZnver*.td";

const HASWELL: Uarch = Uarch {
    key: "haswell",
    aliases: &["broadwell"],
    name: "Intel Haswell/Broadwell",
    fma: &[r(256, 2.0), r(128, 2.0)],
    fadd: &[],
    int_add: &[r(256, 2.0), r(128, 2.0)],
    fp16: false,
    int8_dot: &[],
    bf16_dot: &[],
    matrix: None,
    latency: lat(3.0, 5.0, 1.0),
    cache_cycles: cache(4.0, Some(11.0)),
    max_turbo_ghz: Some(4.4),
    note: "FMA on ports 0 and 1; vector integer add on ports 1 and 5",
    source: INTEL_ORM,
};
const SKYLAKE: Uarch = Uarch {
    key: "skylake",
    aliases: &["kabylake", "coffeelake", "cometlake"],
    name: "Intel Skylake (client: Kaby/Coffee/Comet Lake)",
    fma: &[r(256, 2.0), r(128, 2.0)],
    fadd: &[],
    int_add: &[r(256, 3.0), r(128, 3.0)],
    fp16: false,
    int8_dot: &[],
    bf16_dot: &[],
    matrix: None,
    latency: lat(3.0, 4.0, 1.0),
    cache_cycles: cache(4.0, Some(12.0)),
    max_turbo_ghz: Some(5.3),
    note: "FMA on ports 0 and 1; vector integer add on ports 0, 1 and 5",
    source: INTEL_ORM,
};
const SKYLAKE_SP: Uarch = Uarch {
    key: "skylake-sp",
    aliases: &[
        "cascadelake",
        "cascadelake-sp",
        "cooperlake",
        "skylake-x",
        "skx",
        "clx",
    ],
    name: "Intel Skylake-SP/Cascade Lake/Cooper Lake",
    fma: &[r(512, 2.0), r(256, 2.0), r(128, 2.0)],
    fadd: &[],
    int_add: &[r(512, 2.0), r(256, 3.0), r(128, 3.0)],
    fp16: false,
    int8_dot: &[r(512, 2.0), r(256, 2.0), r(128, 2.0)],
    bf16_dot: &[],
    matrix: None,
    latency: lat(3.0, 4.0, 1.0),
    cache_cycles: cache(4.0, Some(14.0)),
    max_turbo_ghz: Some(4.8),
    note: "two 512-bit FMA units (port 0+1 fused and port 5: Xeon Platinum, Gold 6xxx, Xeon W, Core X); Silver, Bronze and Gold 5xxx have one (skylake-sp-1fma)",
    source: INTEL_ORM,
};
const SKYLAKE_SP_1FMA: Uarch = Uarch {
    key: "skylake-sp-1fma",
    aliases: &["cascadelake-1fma"],
    name: "Intel Skylake-SP/Cascade Lake with one 512-bit FMA unit",
    fma: &[r(512, 1.0), r(256, 2.0), r(128, 2.0)],
    fadd: &[],
    int_add: &[r(512, 2.0), r(256, 3.0), r(128, 3.0)],
    fp16: false,
    int8_dot: &[r(512, 1.0), r(256, 2.0), r(128, 2.0)],
    bf16_dot: &[],
    matrix: None,
    latency: lat(3.0, 4.0, 1.0),
    cache_cycles: cache(4.0, Some(14.0)),
    max_turbo_ghz: Some(4.8),
    note: "Xeon Silver, Bronze and Gold 5xxx (except 5122): port 5 has no 512-bit FMA",
    source: INTEL_ORM,
};
const ICELAKE_SP: Uarch = Uarch {
    key: "icelake-sp",
    aliases: &["icx", "icelake-server"],
    name: "Intel Ice Lake-SP",
    fma: &[r(512, 2.0), r(256, 2.0), r(128, 2.0)],
    fadd: &[],
    int_add: &[r(512, 2.0), r(256, 3.0), r(128, 3.0)],
    fp16: false,
    int8_dot: &[r(512, 2.0), r(256, 2.0), r(128, 2.0)],
    bf16_dot: &[],
    matrix: None,
    latency: lat(3.0, 4.0, 1.0),
    cache_cycles: cache(5.0, Some(14.0)),
    max_turbo_ghz: Some(4.0),
    note: "two 512-bit FMA units (Sunny Cove server core)",
    source: INTEL_ORM,
};
const ICELAKE_CLIENT: Uarch = Uarch {
    key: "icelake",
    aliases: &["icelake-client", "tigerlake", "rocketlake"],
    name: "Intel Ice Lake/Tiger Lake/Rocket Lake (client)",
    fma: &[r(512, 1.0), r(256, 2.0), r(128, 2.0)],
    fadd: &[],
    int_add: &[r(512, 2.0), r(256, 3.0), r(128, 3.0)],
    fp16: false,
    int8_dot: &[r(512, 1.0), r(256, 2.0), r(128, 2.0)],
    bf16_dot: &[],
    matrix: None,
    latency: lat(3.0, 4.0, 1.0),
    cache_cycles: cache(5.0, Some(13.0)),
    max_turbo_ghz: Some(5.3),
    note: "one 512-bit FMA (ports 0+1 fused), two 256-bit",
    source: INTEL_ORM,
};
const ALDER_LAKE: Uarch = Uarch {
    key: "alderlake",
    aliases: &["raptorlake", "goldencove"],
    name: "Intel Alder Lake/Raptor Lake (Golden/Raptor Cove P-core)",
    fma: &[r(256, 2.0), r(128, 2.0)],
    fadd: &[r(256, 1.0), r(128, 1.0)],
    int_add: &[r(256, 3.0), r(128, 3.0)],
    fp16: false,
    int8_dot: &[r(256, 2.0), r(128, 2.0)],
    bf16_dot: &[],
    matrix: None,
    latency: lat(3.0, 4.0, 1.0),
    // Hybrid: a thread may run on an E-core, whose caches differ; no floor for both.
    cache_cycles: CacheCycles {
        l1: None,
        l2: None,
        l3: None,
    },
    max_turbo_ghz: Some(6.2),
    note: "P-core figures; E-cores (Gracemont) have lower rates and the table does not split hybrid CPUs",
    source: INTEL_ORM,
};
const SAPPHIRE_RAPIDS: Uarch = Uarch {
    key: "sapphirerapids",
    aliases: &["spr", "emeraldrapids", "emr"],
    name: "Intel Sapphire Rapids/Emerald Rapids",
    fma: &[r(512, 2.0), r(256, 2.0), r(128, 2.0)],
    fadd: &[r(256, 1.0), r(128, 1.0)],
    int_add: &[r(512, 2.0), r(256, 3.0), r(128, 3.0)],
    fp16: true,
    int8_dot: &[r(512, 2.0), r(256, 2.0), r(128, 2.0)],
    bf16_dot: &[],
    matrix: Some(AMX),
    latency: lat(3.0, 4.0, 1.0),
    cache_cycles: cache(5.0, Some(16.0)),
    max_turbo_ghz: Some(4.8),
    note: "two 512-bit FMA units (Golden/Raptor Cove server core); Golden Cove folds add-immediate chains, so only multiply/FMA chains time its clock; a third FP add a cycle beside two 256-bit FMAs (port 5's adder: 3.0 instructions a cycle measured with 14 FMA chains and 7 adds on ymm), none beside 512-bit FMAs (1.85 a cycle with any mix of adds on zmm)",
    source: INTEL_ORM,
};
const GRANITE_RAPIDS: Uarch = Uarch {
    key: "graniterapids",
    aliases: &["gnr"],
    name: "Intel Granite Rapids",
    fma: &[r(512, 2.0), r(256, 2.0), r(128, 2.0)],
    fadd: &[r(256, 1.0), r(128, 1.0)],
    int_add: &[r(512, 2.0), r(256, 3.0), r(128, 3.0)],
    fp16: true,
    int8_dot: &[r(512, 2.0), r(256, 2.0), r(128, 2.0)],
    bf16_dot: &[],
    matrix: Some(AMX),
    latency: lat(3.0, 4.0, 1.0),
    cache_cycles: cache(5.0, Some(16.0)),
    max_turbo_ghz: Some(4.8),
    note: "two 512-bit FMA units (Redwood Cove core)",
    source: INTEL_ORM,
};
const ZEN1: Uarch = Uarch {
    key: "zen",
    aliases: &["zen1", "zen+", "zenplus", "naples"],
    name: "AMD Zen/Zen+",
    fma: &[r(256, 1.0), r(128, 2.0)],
    fadd: &[r(256, 1.0), r(128, 2.0)],
    int_add: &[r(256, 1.5), r(128, 3.0)],
    fp16: false,
    int8_dot: &[],
    bf16_dot: &[],
    matrix: None,
    latency: lat(3.0, 5.0, 1.0),
    cache_cycles: cache(4.0, Some(17.0)),
    max_turbo_ghz: Some(4.4),
    note: "128-bit datapath: a 256-bit instruction is split in two",
    source: AMD_SOG,
};
const ZEN2: Uarch = Uarch {
    key: "zen2",
    aliases: &["rome"],
    name: "AMD Zen 2",
    fma: &[r(256, 2.0), r(128, 2.0)],
    fadd: &[r(256, 2.0), r(128, 2.0)],
    int_add: &[r(256, 3.0), r(128, 3.0)],
    fp16: false,
    int8_dot: &[],
    bf16_dot: &[],
    matrix: None,
    latency: lat(3.0, 5.0, 1.0),
    cache_cycles: cache(4.0, Some(12.0)),
    max_turbo_ghz: Some(4.7),
    note: "FMA on pipes FP0 and FP1; vector integer add on three pipes",
    source: AMD_SOG,
};
const ZEN3: Uarch = Uarch {
    key: "zen3",
    aliases: &["milan"],
    name: "AMD Zen 3",
    fma: &[r(256, 2.0), r(128, 2.0)],
    fadd: &[r(256, 2.0), r(128, 2.0)],
    int_add: &[r(256, 4.0), r(128, 4.0)],
    fp16: false,
    int8_dot: &[],
    bf16_dot: &[],
    matrix: None,
    latency: lat(3.0, 4.0, 1.0),
    cache_cycles: cache(4.0, Some(12.0)),
    max_turbo_ghz: Some(5.0),
    note: "FMA on pipes FP0 and FP1; vector integer add on four pipes",
    source: AMD_SOG,
};
const ZEN4: Uarch = Uarch {
    key: "zen4",
    aliases: &["genoa", "bergamo"],
    name: "AMD Zen 4",
    fma: &[r(512, 1.0), r(256, 2.0), r(128, 2.0)],
    fadd: &[r(512, 1.0), r(256, 2.0), r(128, 2.0)],
    int_add: &[r(512, 2.0), r(256, 4.0), r(128, 4.0)],
    fp16: false,
    int8_dot: &[r(512, 1.0), r(256, 2.0), r(128, 2.0)],
    bf16_dot: &[r(512, 1.0), r(256, 2.0), r(128, 2.0)],
    matrix: None,
    latency: lat(3.0, 4.0, 1.0),
    cache_cycles: cache(4.0, Some(14.0)),
    max_turbo_ghz: Some(5.7),
    note: "256-bit datapath: AVX-512 instructions execute as two 256-bit halves",
    source: AMD_SOG,
};
const ZEN5: Uarch = Uarch {
    key: "zen5",
    aliases: &["turin"],
    name: "AMD Zen 5",
    fma: &[r(512, 2.0), r(256, 2.0), r(128, 2.0)],
    fadd: &[r(512, 2.0), r(256, 2.0), r(128, 2.0)],
    int_add: &[r(512, 4.0), r(256, 4.0), r(128, 4.0)],
    fp16: false,
    int8_dot: &[r(512, 2.0), r(256, 2.0), r(128, 2.0)],
    bf16_dot: &[],
    matrix: None,
    latency: lat(3.0, 4.0, 2.0),
    cache_cycles: cache(4.0, Some(14.0)),
    max_turbo_ghz: Some(5.7),
    note: "full 512-bit datapath on desktop and server parts; mobile parts (Strix) execute AVX-512 as two halves; simple vector integer ops have a 2-cycle latency (1 on Zen 4)",
    source: AMD_SOG,
};
const ARM_SOG: &str = "Arm Neoverse Software Optimization Guide for the core; LLVM's AArch64SchedNeoverse*.td (latencies: the chains run through a multiplicand, since N2/V1/V2 forward an FMA accumulator after 2 cycles)";
const NEOVERSE_N1: Uarch = Uarch {
    key: "neoverse-n1",
    aliases: &["n1", "graviton2", "altra"],
    name: "Arm Neoverse N1",
    fma: &[r(128, 2.0)],
    fadd: &[],
    int_add: &[r(128, 2.0)],
    fp16: true,
    int8_dot: &[r(128, 2.0)],
    bf16_dot: &[],
    matrix: None,
    latency: lat(4.0, 4.0, 2.0),
    cache_cycles: cache(4.0, None),
    max_turbo_ghz: Some(3.3),
    note: "two 128-bit ASIMD pipes; a 64-bit multiply (X-form MADD) has a 4-cycle latency",
    source: ARM_SOG,
};
const NEOVERSE_N2: Uarch = Uarch {
    key: "neoverse-n2",
    aliases: &["n2", "cobalt100", "yitian710"],
    name: "Arm Neoverse N2",
    fma: &[r(128, 2.0)],
    fadd: &[],
    int_add: &[r(128, 2.0)],
    fp16: true,
    int8_dot: &[r(128, 2.0)],
    bf16_dot: &[r(128, 2.0)],
    matrix: Some(mmla(&[r(128, 2.0)])),
    latency: lat(2.0, 4.0, 2.0),
    cache_cycles: cache(4.0, None),
    max_turbo_ghz: None,
    note: "two 128-bit SVE2/ASIMD pipes",
    source: ARM_SOG,
};
const NEOVERSE_V1: Uarch = Uarch {
    key: "neoverse-v1",
    aliases: &["v1", "graviton3"],
    name: "Arm Neoverse V1",
    fma: &[r(256, 2.0), r(128, 4.0)],
    fadd: &[],
    int_add: &[r(256, 2.0), r(128, 4.0)],
    fp16: true,
    int8_dot: &[r(256, 2.0), r(128, 4.0)],
    bf16_dot: &[r(256, 2.0), r(128, 4.0)],
    matrix: Some(mmla(&[r(256, 2.0), r(128, 4.0)])),
    latency: lat(2.0, 4.0, 2.0),
    cache_cycles: cache(4.0, None),
    max_turbo_ghz: Some(3.0),
    note: "four 128-bit ASIMD pipes (two 256-bit SVE)",
    source: ARM_SOG,
};
const NEOVERSE_V2: Uarch = Uarch {
    key: "neoverse-v2",
    aliases: &["v2", "grace", "graviton4", "axion"],
    name: "Arm Neoverse V2",
    fma: &[r(128, 4.0)],
    fadd: &[],
    int_add: &[r(128, 4.0)],
    fp16: true,
    int8_dot: &[r(128, 4.0)],
    bf16_dot: &[r(128, 4.0)],
    matrix: Some(mmla(&[r(128, 4.0)])),
    latency: lat(2.0, 4.0, 2.0),
    cache_cycles: cache(4.0, None),
    max_turbo_ghz: None,
    note: "four 128-bit SVE2/ASIMD pipes",
    source: ARM_SOG,
};

/// Every entry, for `peakbench peak --uarch` and the tests.
pub const ALL: &[&Uarch] = &[
    &HASWELL,
    &SKYLAKE,
    &SKYLAKE_SP,
    &SKYLAKE_SP_1FMA,
    &ICELAKE_SP,
    &ICELAKE_CLIENT,
    &ALDER_LAKE,
    &SAPPHIRE_RAPIDS,
    &GRANITE_RAPIDS,
    &ZEN1,
    &ZEN2,
    &ZEN3,
    &ZEN4,
    &ZEN5,
    &NEOVERSE_N1,
    &NEOVERSE_N2,
    &NEOVERSE_V1,
    &NEOVERSE_V2,
];

/// Looks up an x86 CPU by vendor string and display family/model.
pub fn lookup_x86(vendor: &str, family: u32, model: u32) -> Option<&'static Uarch> {
    match (vendor, family) {
        ("GenuineIntel", 6) => match model {
            0x3C | 0x3F | 0x45 | 0x46 | 0x3D | 0x47 | 0x4F | 0x56 => Some(&HASWELL),
            0x4E | 0x5E | 0x8E | 0x9E | 0xA5 | 0xA6 => Some(&SKYLAKE),
            0x55 => Some(&SKYLAKE_SP),
            0x6A | 0x6C => Some(&ICELAKE_SP),
            0x7D | 0x7E | 0x8C | 0x8D | 0xA7 => Some(&ICELAKE_CLIENT),
            0x97 | 0x9A | 0xB7 | 0xBA | 0xBF => Some(&ALDER_LAKE),
            0x8F | 0xCF => Some(&SAPPHIRE_RAPIDS),
            0xAD | 0xAE => Some(&GRANITE_RAPIDS),
            _ => None,
        },
        ("AuthenticAMD" | "HygonGenuine", 0x17) => match model {
            0x00..=0x2F => Some(&ZEN1),
            0x30..=0xAF => Some(&ZEN2),
            _ => None,
        },
        ("AuthenticAMD", 0x19) => match model {
            0x00..=0x0F | 0x20..=0x5F => Some(&ZEN3),
            0x10..=0x1F | 0x60..=0x7F | 0xA0..=0xAF => Some(&ZEN4),
            _ => None,
        },
        ("AuthenticAMD", 0x1A) => match model {
            0x00..=0x7F => Some(&ZEN5),
            _ => None,
        },
        _ => None,
    }
}

/// Looks up an Arm CPU by MIDR implementer and part number.
pub fn lookup_arm(implementer: u32, part: u32) -> Option<&'static Uarch> {
    match (implementer, part) {
        (0x41, 0xD0C) => Some(&NEOVERSE_N1),
        (0x41, 0xD49) => Some(&NEOVERSE_N2),
        (0x41, 0xD40) => Some(&NEOVERSE_V1),
        (0x41, 0xD4F) => Some(&NEOVERSE_V2),
        _ => None,
    }
}

/// Skylake-SP and Cascade Lake parts differ in their count of 512-bit FMA units, which CPUID does
/// not tell: Xeon Silver, Bronze and Gold 5xxx (but the 5122) have one. The brand string says
/// which where the hypervisor has not masked it.
pub fn refine_by_brand(uarch: &'static Uarch, brand: Option<&str>) -> &'static Uarch {
    let Some(brand) = brand else { return uarch };
    let one_fma = brand.contains("Silver")
        || brand.contains("Bronze")
        || (brand.contains("Gold 5") && !brand.contains("Gold 5122"));
    // By key: the entries are consts, so two references to one need not share an address (a
    // release build's did not, and the measured FMA units were ignored).
    if uarch.key == SKYLAKE_SP.key && one_fma {
        &SKYLAKE_SP_1FMA
    } else {
        uarch
    }
}

/// The Skylake-SP entry for a measured count of 512-bit FMA units (other entries unchanged).
pub fn with_fma512_units(uarch: &'static Uarch, units: u32) -> &'static Uarch {
    let skx = uarch.key == SKYLAKE_SP.key || uarch.key == SKYLAKE_SP_1FMA.key;
    match units {
        1 if skx => &SKYLAKE_SP_1FMA,
        2 if skx => &SKYLAKE_SP,
        _ => uarch,
    }
}

/// Finds an entry by its key or an alias (case and `-`/`_`/space ignored), or by a CPUID
/// signature: `FAMILY:MODEL` or `VENDOR:FAMILY:MODEL` for x86 (decimal or 0x hex; family 6 is
/// Intel, 0x17 and above AMD), `IMPLEMENTER:PART` with 0x41 for Arm.
pub fn lookup(spec: &str) -> Result<&'static Uarch, String> {
    let norm = |s: &str| {
        s.chars()
            .filter(|c| !matches!(c, '-' | '_' | ' '))
            .collect::<String>()
            .to_ascii_lowercase()
    };
    let want = norm(spec);
    if let Some(u) = ALL
        .iter()
        .find(|u| norm(u.key) == want || u.aliases.iter().any(|a| norm(a) == want))
    {
        return Ok(u);
    }
    let num = |s: &str| {
        let s = s.trim();
        match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
            Some(h) => u32::from_str_radix(h, 16).ok(),
            None => s.parse().ok(),
        }
    };
    let parts: Vec<&str> = spec.split([':', '/']).collect();
    let found = match parts.as_slice() {
        [vendor, f, m] => num(f)
            .zip(num(m))
            .and_then(|(f, m)| lookup_x86(vendor.trim(), f, m)),
        [f, m] => match (num(f), num(m)) {
            (Some(0x41), Some(part)) => lookup_arm(0x41, part),
            (Some(6), Some(m)) => lookup_x86("GenuineIntel", 6, m),
            (Some(f), Some(m)) => lookup_x86("AuthenticAMD", f, m),
            _ => None,
        },
        _ => None,
    };
    found.ok_or_else(|| {
        let keys: Vec<&str> = ALL.iter().map(|u| u.key).collect();
        format!(
            "--uarch {spec}: not in peakbench's table; use one of {}, or a signature FAMILY:MODEL (x86) or 0x41:PART (Arm)",
            keys.join(", ")
        )
    })
}

/// The rate of `rates` at `width_bits`, 0 where none is listed.
fn per_cycle_at(rates: &[Rate], width_bits: u32) -> f64 {
    rates
        .iter()
        .find(|r| r.width_bits == width_bits)
        .map_or(0.0, |r| r.per_cycle)
}

impl Uarch {
    /// Whether the entry is an Arm core (else x86).
    pub fn is_arm(&self) -> bool {
        self.key.starts_with("neoverse")
    }

    /// The best rate (bits per cycle) among the widths that some ISA in `isas` can issue.
    /// FP add instructions per cycle beside the FMAs at `width_bits` (0 where adds take the FMA
    /// pipes).
    pub fn fadd_at(&self, width_bits: u32) -> f64 {
        per_cycle_at(self.fadd, width_bits)
    }

    /// FMA instructions per cycle at `width_bits` (0 where the table lists none).
    pub fn fma_at(&self, width_bits: u32) -> f64 {
        per_cycle_at(self.fma, width_bits)
    }

    /// The FP issue ceiling among the widths of `isas`: the FMA rate and the adds beside it at
    /// the width where `(2 × fma + fadd) × lanes` of `lane_bits` is the most.
    pub fn fp_issue(&self, isas: &[Isa], lane_bits: u32) -> Option<(Rate, f64)> {
        let ops = |(f, a): &(Rate, f64)| {
            (2.0 * f.per_cycle + a) * (f.width_bits / lane_bits.max(1)) as f64
        };
        self.fma
            .iter()
            .filter(|rate| {
                isas.iter()
                    .any(|i| *i != Isa::Scalar && i.width_bits() == rate.width_bits)
            })
            .map(|f| (*f, self.fadd_at(f.width_bits)))
            .max_by(|a, b| ops(a).total_cmp(&ops(b)))
    }

    pub fn best(rates: &[Rate], isas: &[Isa]) -> Option<Rate> {
        rates
            .iter()
            .filter(|rate| {
                isas.iter()
                    .any(|i| *i != Isa::Scalar && i.width_bits() == rate.width_bits)
            })
            .copied()
            .max_by(|a, b| {
                (a.width_bits as f64 * a.per_cycle).total_cmp(&(b.width_bits as f64 * b.per_cycle))
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_vm_is_zen4() {
        let u = lookup_x86("AuthenticAMD", 25, 17).unwrap();
        assert_eq!(u.name, "AMD Zen 4");
        let best = Uarch::best(u.fma, &[Isa::Avx512, Isa::Avx2, Isa::Sse2]).unwrap();
        assert_eq!(best.width_bits as f64 * best.per_cycle, 512.0);
    }

    #[test]
    fn families_covered() {
        assert_eq!(
            lookup_x86("GenuineIntel", 6, 0x3F).unwrap().name,
            HASWELL.name
        );
        assert_eq!(
            lookup_x86("GenuineIntel", 6, 0x55).unwrap().name,
            SKYLAKE_SP.name
        );
        assert_eq!(
            lookup_x86("GenuineIntel", 6, 0xAD).unwrap().name,
            GRANITE_RAPIDS.name
        );
        assert_eq!(
            lookup_x86("AuthenticAMD", 0x17, 0x01).unwrap().name,
            ZEN1.name
        );
        assert_eq!(
            lookup_x86("AuthenticAMD", 0x17, 0x31).unwrap().name,
            ZEN2.name
        );
        assert_eq!(
            lookup_x86("AuthenticAMD", 0x19, 0x01).unwrap().name,
            ZEN3.name
        );
        assert_eq!(
            lookup_x86("AuthenticAMD", 0x1A, 0x02).unwrap().name,
            ZEN5.name
        );
        assert_eq!(lookup_arm(0x41, 0xD0C).unwrap().name, NEOVERSE_N1.name);
        assert_eq!(lookup_arm(0x41, 0xD4F).unwrap().name, NEOVERSE_V2.name);
        assert!(lookup_x86("GenuineIntel", 6, 0x01).is_none());
        assert!(lookup_x86("CentaurHauls", 6, 0x0F).is_none());
    }

    /// DP FLOP/cycle/core and int32 adds/cycle/core at the best width, as published (vendor
    /// optimisation manuals; the Sapphire Rapids record in ../shared/hardware: two 512-bit FMA
    /// ports, three 256-bit or two 512-bit integer adds), and the probe latencies.
    #[test]
    fn entries_match_published_per_cycle_figures() {
        let x86 = [Isa::Avx512, Isa::Avx2, Isa::Sse2];
        let arm = [Isa::Neon];
        let per_cycle = |u: &Uarch, rates: &[Rate], element: u32| {
            let isas: &[Isa] = if u.is_arm() { &arm } else { &x86 };
            let b = Uarch::best(rates, isas).unwrap();
            b.per_cycle * (b.width_bits / element) as f64
        };
        // (key, DP FLOP/cycle, int32 adds/cycle, imul, FMA, vector add latency)
        let published = [
            ("haswell", 16.0, 16.0, 3.0, 5.0, 1.0),
            ("skylake", 16.0, 24.0, 3.0, 4.0, 1.0),
            ("skylake-sp", 32.0, 32.0, 3.0, 4.0, 1.0),
            ("skylake-sp-1fma", 16.0, 32.0, 3.0, 4.0, 1.0),
            ("icelake-sp", 32.0, 32.0, 3.0, 4.0, 1.0),
            ("icelake", 16.0, 32.0, 3.0, 4.0, 1.0),
            ("alderlake", 16.0, 24.0, 3.0, 4.0, 1.0),
            ("sapphirerapids", 32.0, 32.0, 3.0, 4.0, 1.0),
            ("graniterapids", 32.0, 32.0, 3.0, 4.0, 1.0),
            ("zen", 8.0, 12.0, 3.0, 5.0, 1.0),
            ("zen2", 16.0, 24.0, 3.0, 5.0, 1.0),
            ("zen3", 16.0, 32.0, 3.0, 4.0, 1.0),
            ("zen4", 16.0, 32.0, 3.0, 4.0, 1.0),
            ("zen5", 32.0, 64.0, 3.0, 4.0, 2.0),
            ("neoverse-n1", 8.0, 8.0, 4.0, 4.0, 2.0),
            ("neoverse-n2", 8.0, 8.0, 2.0, 4.0, 2.0),
            ("neoverse-v1", 16.0, 16.0, 2.0, 4.0, 2.0),
            ("neoverse-v2", 16.0, 16.0, 2.0, 4.0, 2.0),
        ];
        assert_eq!(published.len(), ALL.len());
        for (key, dp, int32, imul, fma, add) in published {
            let u = lookup(key).unwrap();
            assert_eq!(per_cycle(u, u.fma, 64) * 2.0, dp, "{key} DP");
            assert_eq!(per_cycle(u, u.int_add, 32), int32, "{key} INT32");
            assert_eq!(u.latency, lat(imul, fma, add), "{key} latencies");
            assert!(!u.source.is_empty(), "{key}");
        }
        assert!(
            ALL.iter()
                .all(|u| u.max_turbo_ghz.is_none_or(|t| (2.0..7.0).contains(&t)))
        );
    }

    #[test]
    fn brand_string_picks_the_one_fma_skylake() {
        let sp = lookup_x86("GenuineIntel", 6, 0x55).unwrap();
        let silver = refine_by_brand(sp, Some("Intel(R) Xeon(R) Silver 4114 CPU @ 2.20GHz"));
        assert_eq!(silver.key, "skylake-sp-1fma");
        assert_eq!(
            refine_by_brand(sp, Some("Intel(R) Xeon(R) Gold 5122")).key,
            "skylake-sp"
        );
        assert_eq!(
            refine_by_brand(sp, Some("Intel(R) Xeon(R) Gold 6148")).key,
            "skylake-sp"
        );
        assert_eq!(refine_by_brand(sp, None).key, "skylake-sp");
        // A measured count wins over the brand, and leaves other entries alone.
        assert_eq!(with_fma512_units(sp, 1).key, "skylake-sp-1fma");
        assert_eq!(with_fma512_units(silver, 2).key, "skylake-sp");
        assert_eq!(with_fma512_units(&ZEN4, 1).key, "zen4");
    }

    #[test]
    fn best_rate_respects_isa() {
        // Skylake-SP without AVX-512 enabled by the OS: 2 x 256-bit FMA.
        let best = Uarch::best(SKYLAKE_SP.fma, &[Isa::Avx2, Isa::Sse2]).unwrap();
        assert_eq!((best.width_bits, best.per_cycle), (256, 2.0));
        // Integer adds: 3 x 256 = 768 bits beat nothing, 2 x 512 = 1024 bits win with AVX-512.
        let best = Uarch::best(SKYLAKE_SP.int_add, &[Isa::Avx512, Isa::Avx2]).unwrap();
        assert_eq!((best.width_bits, best.per_cycle), (512, 2.0));
        assert!(Uarch::best(ZEN4.fma, &[Isa::Scalar]).is_none());
    }
}
