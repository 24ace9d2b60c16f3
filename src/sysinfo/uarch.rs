//! The table of microarchitectures: per-core, per-cycle throughput of the instructions the CPU
//! kernels use, keyed by vendor, family and model (x86) or implementer and part (Arm).
//!
//! Hypervisors mask the brand string ("AMD EPYC"), so the key is the CPUID signature, never the
//! name. Figures are instructions per cycle per core for each vector width, from the vendors'
//! optimisation manuals, Agner Fog's instruction tables and uops.info measurements:
//! * `fma`: fused multiply-add instructions (FP32/FP64) per cycle;
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

const fn r(width_bits: u32, per_cycle: f64) -> Rate {
    Rate {
        width_bits,
        per_cycle,
    }
}

/// One microarchitecture's entry.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Uarch {
    pub name: &'static str,
    /// FMA instructions per cycle per core, by vector width.
    pub fma: &'static [Rate],
    /// Vector integer add instructions per cycle per core, by vector width.
    pub int_add: &'static [Rate],
    /// What a reader should know about the entry (SKU variation, hybrid cores).
    pub note: &'static str,
}

const HASWELL: Uarch = Uarch {
    name: "Intel Haswell/Broadwell",
    fma: &[r(256, 2.0), r(128, 2.0)],
    int_add: &[r(256, 2.0), r(128, 2.0)],
    note: "FMA on ports 0 and 1; vector integer add on ports 1 and 5",
};
const SKYLAKE: Uarch = Uarch {
    name: "Intel Skylake (client: Kaby/Coffee/Comet Lake)",
    fma: &[r(256, 2.0), r(128, 2.0)],
    int_add: &[r(256, 3.0), r(128, 3.0)],
    note: "FMA on ports 0 and 1; vector integer add on ports 0, 1 and 5",
};
const SKYLAKE_SP: Uarch = Uarch {
    name: "Intel Skylake-SP/Cascade Lake/Cooper Lake",
    fma: &[r(512, 2.0), r(256, 2.0), r(128, 2.0)],
    int_add: &[r(512, 2.0), r(256, 3.0), r(128, 3.0)],
    note: "two 512-bit FMA units (Xeon Gold 6xxx/Platinum); Silver, Bronze and some Gold 5xxx have one: override with --ops-per-cycle",
};
const ICELAKE_SP: Uarch = Uarch {
    name: "Intel Ice Lake-SP",
    fma: &[r(512, 2.0), r(256, 2.0), r(128, 2.0)],
    int_add: &[r(512, 2.0), r(256, 3.0), r(128, 3.0)],
    note: "two 512-bit FMA units",
};
const ICELAKE_CLIENT: Uarch = Uarch {
    name: "Intel Ice Lake/Tiger Lake/Rocket Lake (client)",
    fma: &[r(512, 1.0), r(256, 2.0), r(128, 2.0)],
    int_add: &[r(512, 2.0), r(256, 3.0), r(128, 3.0)],
    note: "one 512-bit FMA (ports 0+1 fused), two 256-bit",
};
const ALDER_LAKE: Uarch = Uarch {
    name: "Intel Alder Lake/Raptor Lake (Golden/Raptor Cove P-core)",
    fma: &[r(256, 2.0), r(128, 2.0)],
    int_add: &[r(256, 3.0), r(128, 3.0)],
    note: "P-core figures; E-cores (Gracemont) have lower rates and the table does not split hybrid CPUs",
};
const SAPPHIRE_RAPIDS: Uarch = Uarch {
    name: "Intel Sapphire Rapids/Emerald Rapids",
    fma: &[r(512, 2.0), r(256, 2.0), r(128, 2.0)],
    int_add: &[r(512, 2.0), r(256, 3.0), r(128, 3.0)],
    note: "two 512-bit FMA units (Golden/Raptor Cove server core)",
};
const GRANITE_RAPIDS: Uarch = Uarch {
    name: "Intel Granite Rapids",
    fma: &[r(512, 2.0), r(256, 2.0), r(128, 2.0)],
    int_add: &[r(512, 2.0), r(256, 3.0), r(128, 3.0)],
    note: "two 512-bit FMA units (Redwood Cove core)",
};
const ZEN1: Uarch = Uarch {
    name: "AMD Zen/Zen+",
    fma: &[r(256, 1.0), r(128, 2.0)],
    int_add: &[r(256, 1.5), r(128, 3.0)],
    note: "128-bit datapath: a 256-bit instruction is split in two",
};
const ZEN2: Uarch = Uarch {
    name: "AMD Zen 2",
    fma: &[r(256, 2.0), r(128, 2.0)],
    int_add: &[r(256, 3.0), r(128, 3.0)],
    note: "FMA on pipes FP0 and FP1; vector integer add on three pipes",
};
const ZEN3: Uarch = Uarch {
    name: "AMD Zen 3",
    fma: &[r(256, 2.0), r(128, 2.0)],
    int_add: &[r(256, 4.0), r(128, 4.0)],
    note: "FMA on pipes FP0 and FP1; vector integer add on four pipes",
};
const ZEN4: Uarch = Uarch {
    name: "AMD Zen 4",
    fma: &[r(512, 1.0), r(256, 2.0), r(128, 2.0)],
    int_add: &[r(512, 2.0), r(256, 4.0), r(128, 4.0)],
    note: "256-bit datapath: AVX-512 instructions execute as two 256-bit halves",
};
const ZEN5: Uarch = Uarch {
    name: "AMD Zen 5",
    fma: &[r(512, 2.0), r(256, 2.0), r(128, 2.0)],
    int_add: &[r(512, 4.0), r(256, 4.0), r(128, 4.0)],
    note: "full 512-bit datapath on desktop and server parts; mobile parts (Strix) execute AVX-512 as two halves",
};
const NEOVERSE_N1: Uarch = Uarch {
    name: "Arm Neoverse N1",
    fma: &[r(128, 2.0)],
    int_add: &[r(128, 2.0)],
    note: "two 128-bit ASIMD pipes",
};
const NEOVERSE_N2: Uarch = Uarch {
    name: "Arm Neoverse N2",
    fma: &[r(128, 2.0)],
    int_add: &[r(128, 2.0)],
    note: "two 128-bit SVE2/ASIMD pipes",
};
const NEOVERSE_V1: Uarch = Uarch {
    name: "Arm Neoverse V1",
    fma: &[r(128, 4.0)],
    int_add: &[r(128, 4.0)],
    note: "four 128-bit ASIMD pipes (two 256-bit SVE)",
};
const NEOVERSE_V2: Uarch = Uarch {
    name: "Arm Neoverse V2",
    fma: &[r(128, 4.0)],
    int_add: &[r(128, 4.0)],
    note: "four 128-bit SVE2/ASIMD pipes",
};

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

impl Uarch {
    /// The best rate (bits per cycle) among the widths that some ISA in `isas` can issue.
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
