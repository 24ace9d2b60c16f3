//! Instruction sets the CPU kernels can be built for, and which of them this machine runs.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// A vector instruction set (or none: `Scalar`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Isa {
    /// One element per instruction, for comparison.
    Scalar,
    /// x86 SSE2, 128-bit, no FMA (multiply and add are separate instructions).
    Sse2,
    /// Arm Advanced SIMD, 128-bit, with FMA.
    Neon,
    /// Arm SVE, with the vector length this process runs at (128 to 2048 bits, read at run time).
    Sve,
    /// x86 AVX2 with FMA3, 256-bit.
    Avx2,
    /// x86 AVX-512 F+BW, 512-bit.
    Avx512,
}

impl Isa {
    pub const ALL: [Isa; 6] = [
        Isa::Avx512,
        Isa::Avx2,
        Isa::Sve,
        Isa::Neon,
        Isa::Sse2,
        Isa::Scalar,
    ];

    /// Width of one vector register in bits (64 for scalar: one 64-bit element at most).
    pub fn width_bits(self) -> u32 {
        match self {
            Isa::Avx512 => 512,
            Isa::Avx2 => 256,
            Isa::Sse2 | Isa::Neon => 128,
            Isa::Sve => sve_vector_bits(),
            Isa::Scalar => 64,
        }
    }

    /// Number of lanes of `element_bits` in one register (1 for scalar).
    pub fn lanes(self, element_bits: u32) -> u32 {
        match self {
            Isa::Scalar => 1,
            _ => self.width_bits() / element_bits,
        }
    }

    /// Whether floating-point multiply-add is one fused instruction in this ISA's kernels.
    pub fn has_fma(self) -> bool {
        matches!(self, Isa::Avx512 | Isa::Avx2 | Isa::Neon | Isa::Sve)
    }

    pub fn name(self) -> &'static str {
        match self {
            Isa::Avx512 => "avx512",
            Isa::Avx2 => "avx2",
            Isa::Sse2 => "sse2",
            Isa::Neon => "neon",
            Isa::Sve => "sve",
            Isa::Scalar => "scalar",
        }
    }
}

/// The SVE vector length of this process in bits (the kernel's `PR_SVE_GET_VL`), 128 where SVE
/// is absent or the length cannot be read (the architectural minimum).
pub fn sve_vector_bits() -> u32 {
    #[cfg(target_arch = "aarch64")]
    {
        static BITS: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
        *BITS.get_or_init(|| {
            // PR_SVE_GET_VL (linux/prctl.h): the vector length in bytes in the low 16 bits.
            const PR_SVE_GET_VL: libc::c_int = 51;
            // SAFETY: prctl with PR_SVE_GET_VL reads the calling thread's SVE configuration and
            // takes no pointer; it fails with EINVAL where SVE is absent.
            let rc = unsafe { libc::prctl(PR_SVE_GET_VL, 0, 0, 0, 0) };
            if rc > 0 {
                ((rc as u32 & 0xffff) * 8).clamp(128, 2048)
            } else {
                128
            }
        })
    }
    #[cfg(not(target_arch = "aarch64"))]
    {
        128
    }
}

impl fmt::Display for Isa {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Isa {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Isa::ALL
            .into_iter()
            .find(|i| i.name().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| {
                format!("unknown ISA '{s}'; use one of avx512, avx2, sse2, sve, neon, scalar")
            })
    }
}
