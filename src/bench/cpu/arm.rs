//! aarch64 CPU kernels in inline assembly: NEON (128-bit), SVE (the vector length the process
//! runs at, read at run time) and scalar, so that the instructions timed are exactly the ones
//! counted.
//!
//! Every kernel runs `iterations` passes of a loop body with 24 independent chains, one per
//! register (v0–v23 or z0–z23; the constants sit in v30/v31 or z30/z31): enough for the widest
//! core in the table, Neoverse V1/V2 with four 128-bit pipes × a 4-cycle FMA = 16 in flight.
//! Floating-point chains accumulate `acc += m × a` (m = 1 − 1e-6, a = 1e-6; 1e-4 for fp32): the
//! values grow slowly, stay normal and never overflow within any run. Integer adds wrap.

use super::regs::{CONSTS, Consts};
use super::{Kernel, Op};
use crate::sysinfo::Isa;
use core::arch::asm;

/// Defines a kernel: `$setup` once, then `iterations` × `$body`. The registers it writes are
/// listed one by one (not `clobber_abi`, which would name SVE's reserved FFR).
macro_rules! kernel {
    ($name:ident, $feature:literal, $setup:expr, $body:expr) => {
        #[target_feature(enable = $feature)]
        #[inline(never)]
        unsafe fn $name(iterations: u64) {
            let consts: *const Consts = &CONSTS;
            // SAFETY: reads only the static CONSTS (64-byte aligned, 448 bytes); writes only
            // v0–v23, v30, v31 (z0–z23, z30, z31 under SVE) and p0, all declared below, so the
            // compiler saves what it needs (d8–d15 are callee-saved).
            unsafe {
                asm!(
                    $setup,
                    "2:",
                    $body,
                    "subs x0, x0, #1",
                    "b.ne 2b",
                    inout("x0") iterations.max(1) => _,
                    in("x1") consts,
                    out("v0") _, out("v1") _, out("v2") _, out("v3") _, out("v4") _,
                    out("v5") _, out("v6") _, out("v7") _, out("v8") _, out("v9") _,
                    out("v10") _, out("v11") _, out("v12") _, out("v13") _, out("v14") _,
                    out("v15") _, out("v16") _, out("v17") _, out("v18") _, out("v19") _,
                    out("v20") _, out("v21") _, out("v22") _, out("v23") _, out("v30") _,
                    out("v31") _, out("p0") _,
                    options(nostack, readonly),
                );
            }
        }
    };
}

// ---- NEON: fp64 at [x1], [x1+64]; fp32 at [x1+128], [x1+192]; ones at [x1+256] ----
kernel!(
    dp_neon,
    "neon",
    concat!(
        "ldr q30, [x1]\n",
        "ldr q31, [x1, #64]\n",
        r24!(each1!("mov v", ".16b, v31.16b"))
    ),
    r24!(each1!("fmla v", ".2d, v30.2d, v31.2d"))
);
kernel!(
    sp_neon,
    "neon",
    concat!(
        "ldr q30, [x1, #128]\n",
        "ldr q31, [x1, #192]\n",
        r24!(each1!("mov v", ".16b, v31.16b"))
    ),
    r24!(each1!("fmla v", ".4s, v30.4s, v31.4s"))
);
// fp16 at [x1+320], [x1+384] (FEAT_FP16: Neoverse N1 and later)
kernel!(
    hp_fp16_neon,
    "neon,fp16",
    concat!(
        "ldr q30, [x1, #320]\n",
        "ldr q31, [x1, #384]\n",
        r24!(each1!("mov v", ".16b, v31.16b"))
    ),
    r24!(each1!("fmla v", ".8h, v30.8h, v31.8h"))
);
macro_rules! neon_int {
    ($name:ident, $t:literal) => {
        kernel!(
            $name,
            "neon",
            "ldr q31, [x1, #256]",
            r24!(each2!(
                "add v",
                concat!(".", $t, ", v"),
                concat!(".", $t, ", v31.", $t)
            ))
        );
    };
}
neon_int!(qp_neon, "16b");
neon_int!(hp_neon, "8h");
neon_int!(i32_neon, "4s");
neon_int!(i64_neon, "2d");

// The setups of the dot-product and matrix kernels: ones (int8) or 0.5 (bf16) in the operands
// v30/v31 (z30/z31) and the 24 accumulators.
macro_rules! int8_neon_setup {
    () => {
        concat!(
            "ldr q31, [x1, #256]\n",
            "mov v30.16b, v31.16b\n",
            r24!(each1!("mov v", ".16b, v31.16b"))
        )
    };
}
macro_rules! bf16_neon_setup {
    () => {
        concat!(
            "movi v31.8h, #0x3f, lsl #8\n",
            "mov v30.16b, v31.16b\n",
            r24!(each1!("mov v", ".16b, v31.16b"))
        )
    };
}
macro_rules! int8_sve_setup {
    () => {
        concat!(
            "ptrue p0.b\n",
            "mov z31.b, #1\n",
            "mov z30.b, #1\n",
            r24!(each1!("mov z", ".b, #1"))
        )
    };
}
macro_rules! bf16_sve_setup {
    () => {
        concat!(
            "ptrue p0.b\n",
            "mov z31.h, #0x3f00\n",
            "mov z30.h, #0x3f00\n",
            r24!(each1!("mov z", ".h, #0x3f00"))
        )
    };
}

// ---- dot products into 32-bit lanes: int8 (`sdot`, FEAT_DotProd: four s8 × s8 products added
// to each int32 lane, which wraps) and bf16 (`bfdot`, FEAT_BF16: two bf16 products into each
// fp32 lane; with inputs of 0.5 a lane grows by 0.5 until 2^24, then stays) ----
kernel!(
    int8_dot_neon,
    "neon,dotprod",
    int8_neon_setup!(),
    r24!(each1!("sdot v", ".4s, v30.16b, v31.16b"))
);
kernel!(
    bf16_dot_neon,
    "neon,bf16",
    bf16_neon_setup!(),
    r24!(each1!("bfdot v", ".4s, v30.8h, v31.8h"))
);
kernel!(
    int8_dot_sve,
    "sve",
    int8_sve_setup!(),
    r24!(each1!("sdot z", ".s, z30.b, z31.b"))
);
kernel!(
    bf16_dot_sve,
    "sve,bf16",
    bf16_sve_setup!(),
    r24!(each1!("bfdot z", ".s, z30.h, z31.h"))
);

// ---- matrix multiplies into 2 × 2 blocks of 32-bit lanes per 128 bits: int8 (`smmla`,
// FEAT_I8MM: eight s8 × s8 products added to each int32 lane, which wraps) and bf16 (`bfmmla`,
// FEAT_BF16: four bf16 products into each fp32 lane; with inputs of 0.5 a lane grows by 1 until
// 2^24, then stays) ----
kernel!(
    int8_mm_neon,
    "neon,i8mm",
    int8_neon_setup!(),
    r24!(each1!("smmla v", ".4s, v30.16b, v31.16b"))
);
kernel!(
    bf16_mm_neon,
    "neon,bf16",
    bf16_neon_setup!(),
    r24!(each1!("bfmmla v", ".4s, v30.8h, v31.8h"))
);
kernel!(
    int8_mm_sve,
    "sve,i8mm",
    int8_sve_setup!(),
    r24!(each1!("smmla z", ".s, z30.b, z31.b"))
);
kernel!(
    bf16_mm_sve,
    "sve,bf16",
    bf16_sve_setup!(),
    r24!(each1!("bfmmla z", ".s, z30.h, z31.h"))
);

// ---- SVE at the process's vector length: constants broadcast from the same places ----
kernel!(
    dp_sve,
    "sve",
    concat!(
        "ptrue p0.b\n",
        "ld1rd {{ z30.d }}, p0/z, [x1]\n",
        "ld1rd {{ z31.d }}, p0/z, [x1, #64]\n",
        r24!(each1!("mov z", ".d, z31.d"))
    ),
    r24!(each1!("fmla z", ".d, p0/m, z30.d, z31.d"))
);
kernel!(
    sp_sve,
    "sve",
    concat!(
        "ptrue p0.b\n",
        "ld1rw {{ z30.s }}, p0/z, [x1, #128]\n",
        "ld1rw {{ z31.s }}, p0/z, [x1, #192]\n",
        r24!(each1!("mov z", ".d, z31.d"))
    ),
    r24!(each1!("fmla z", ".s, p0/m, z30.s, z31.s"))
);
kernel!(
    hp_fp16_sve,
    "sve",
    concat!(
        "ptrue p0.b\n",
        "ldr q30, [x1, #320]\n",
        "ldr q31, [x1, #384]\n",
        "dup z30.q, z30.q[0]\n",
        "dup z31.q, z31.q[0]\n",
        r24!(each1!("mov z", ".d, z31.d"))
    ),
    r24!(each1!("fmla z", ".h, p0/m, z30.h, z31.h"))
);
macro_rules! sve_int {
    ($name:ident, $t:literal) => {
        kernel!(
            $name,
            "sve",
            concat!("mov z31.", $t, ", #1"),
            r24!(each2!(
                "add z",
                concat!(".", $t, ", z"),
                concat!(".", $t, ", z31.", $t)
            ))
        );
    };
}
sve_int!(qp_sve, "b");
sve_int!(hp_sve, "h");
sve_int!(i32_sve, "s");
sve_int!(i64_sve, "d");

// ---- scalar: fmadd chains in d/s registers; integer adds in eight general registers ----
kernel!(
    dp_scalar,
    "neon",
    concat!(
        "ldr d30, [x1]\n",
        "ldr d31, [x1, #64]\n",
        r24!(each1!("fmov d", ", d31"))
    ),
    r24!(each2!("fmadd d", ", d30, d31, d", ""))
);
kernel!(
    sp_scalar,
    "neon",
    concat!(
        "ldr s30, [x1, #128]\n",
        "ldr s31, [x1, #192]\n",
        r24!(each1!("fmov s", ", s31"))
    ),
    r24!(each2!("fmadd s", ", s30, s31, s", ""))
);

/// Scalar integer adds: eight chains at the element's register width (`w` for 8 to 32 bits: Arm
/// has no narrower scalar add; `x` for 64).
macro_rules! scalar_int {
    ($name:ident, $w:literal) => {
        #[inline(never)]
        fn $name(iterations: u64) {
            // SAFETY: register-only arithmetic and a counted loop; no memory is touched.
            unsafe {
                asm!(
                    "2:",
                    concat!(
                        "add {a0", $w, "}, {a0", $w, "}, {i", $w, "}\n",
                        "add {a1", $w, "}, {a1", $w, "}, {i", $w, "}\n",
                        "add {a2", $w, "}, {a2", $w, "}, {i", $w, "}\n",
                        "add {a3", $w, "}, {a3", $w, "}, {i", $w, "}\n",
                        "add {a4", $w, "}, {a4", $w, "}, {i", $w, "}\n",
                        "add {a5", $w, "}, {a5", $w, "}, {i", $w, "}\n",
                        "add {a6", $w, "}, {a6", $w, "}, {i", $w, "}\n",
                        "add {a7", $w, "}, {a7", $w, "}, {i", $w, "}\n",
                    ),
                    "subs {n}, {n}, #1",
                    "b.ne 2b",
                    n = inout(reg) iterations.max(1) => _,
                    i = in(reg) 1u64,
                    a0 = inout(reg) 0u64 => _, a1 = inout(reg) 0u64 => _,
                    a2 = inout(reg) 0u64 => _, a3 = inout(reg) 0u64 => _,
                    a4 = inout(reg) 0u64 => _, a5 = inout(reg) 0u64 => _,
                    a6 = inout(reg) 0u64 => _, a7 = inout(reg) 0u64 => _,
                    options(nomem, nostack),
                );
            }
        }
    };
}
scalar_int!(i32_scalar, ":w");
scalar_int!(i64_scalar, ":x");

safe_wrapper!(
    hp_fp16_neon,
    int8_dot_neon,
    bf16_dot_neon,
    int8_dot_sve,
    bf16_dot_sve,
    int8_mm_neon,
    bf16_mm_neon,
    int8_mm_sve,
    bf16_mm_sve,
    hp_fp16_sve,
    dp_neon,
    sp_neon,
    qp_neon,
    hp_neon,
    i32_neon,
    i64_neon,
    dp_sve,
    sp_sve,
    qp_sve,
    hp_sve,
    i32_sve,
    i64_sve,
    dp_scalar,
    sp_scalar
);

/// Independent chains in each kernel.
fn chains(isa: Isa, op: Op) -> u64 {
    match (isa, op) {
        (Isa::Scalar, Op::IntAdd { .. }) => 8,
        _ => 24,
    }
}

/// The kernel for `op` in `isa`; the caller guarantees `isa` is supported by this machine.
pub fn kernel(op: Op, isa: Isa) -> Option<Kernel> {
    let (run, instruction): (fn(u64), &'static str) = match (op, isa) {
        (Op::Fma { element_bits: 64 }, Isa::Neon) => (checked::dp_neon, "fmla v.2d"),
        (Op::Fma { element_bits: 32 }, Isa::Neon) => (checked::sp_neon, "fmla v.4s"),
        // FEAT_FP16 is not implied by ASIMD: checked here (HWCAP_ASIMDHP).
        (Op::Fma { element_bits: 16 }, Isa::Neon)
            if std::arch::is_aarch64_feature_detected!("fp16") =>
        {
            (checked::hp_fp16_neon, "fmla v.8h")
        }
        (Op::Fma { element_bits: 16 }, Isa::Sve) => (checked::hp_fp16_sve, "fmla z.h"),
        // FEAT_DotProd and FEAT_BF16 are not implied by ASIMD (SVE has sdot, not bfdot).
        (Op::Dot { element_bits: 8 }, Isa::Neon)
            if std::arch::is_aarch64_feature_detected!("dotprod") =>
        {
            (checked::int8_dot_neon, "sdot v.4s")
        }
        (Op::Dot { element_bits: 16 }, Isa::Neon)
            if std::arch::is_aarch64_feature_detected!("bf16") =>
        {
            (checked::bf16_dot_neon, "bfdot v.4s")
        }
        (Op::Dot { element_bits: 8 }, Isa::Sve) => (checked::int8_dot_sve, "sdot z.s"),
        (Op::Dot { element_bits: 16 }, Isa::Sve)
            if std::arch::is_aarch64_feature_detected!("bf16") =>
        {
            (checked::bf16_dot_sve, "bfdot z.s")
        }
        // FEAT_I8MM and FEAT_BF16: not implied by ASIMD or SVE either.
        (Op::Matrix { element_bits: 8 }, Isa::Neon)
            if std::arch::is_aarch64_feature_detected!("i8mm") =>
        {
            (checked::int8_mm_neon, "smmla v.4s")
        }
        (Op::Matrix { element_bits: 16 }, Isa::Neon)
            if std::arch::is_aarch64_feature_detected!("bf16") =>
        {
            (checked::bf16_mm_neon, "bfmmla v.4s")
        }
        (Op::Matrix { element_bits: 8 }, Isa::Sve)
            if std::arch::is_aarch64_feature_detected!("i8mm") =>
        {
            (checked::int8_mm_sve, "smmla z.s")
        }
        (Op::Matrix { element_bits: 16 }, Isa::Sve)
            if std::arch::is_aarch64_feature_detected!("bf16") =>
        {
            (checked::bf16_mm_sve, "bfmmla z.s")
        }
        (Op::IntAdd { element_bits: 8 }, Isa::Neon) => (checked::qp_neon, "add v.16b"),
        (Op::IntAdd { element_bits: 16 }, Isa::Neon) => (checked::hp_neon, "add v.8h"),
        (Op::IntAdd { element_bits: 32 }, Isa::Neon) => (checked::i32_neon, "add v.4s"),
        (Op::IntAdd { element_bits: 64 }, Isa::Neon) => (checked::i64_neon, "add v.2d"),
        (Op::Fma { element_bits: 64 }, Isa::Sve) => (checked::dp_sve, "fmla z.d"),
        (Op::Fma { element_bits: 32 }, Isa::Sve) => (checked::sp_sve, "fmla z.s"),
        (Op::IntAdd { element_bits: 8 }, Isa::Sve) => (checked::qp_sve, "add z.b"),
        (Op::IntAdd { element_bits: 16 }, Isa::Sve) => (checked::hp_sve, "add z.h"),
        (Op::IntAdd { element_bits: 32 }, Isa::Sve) => (checked::i32_sve, "add z.s"),
        (Op::IntAdd { element_bits: 64 }, Isa::Sve) => (checked::i64_sve, "add z.d"),
        (Op::Fma { element_bits: 64 }, Isa::Scalar) => (checked::dp_scalar, "fmadd d"),
        (Op::Fma { element_bits: 32 }, Isa::Scalar) => (checked::sp_scalar, "fmadd s"),
        (Op::IntAdd { element_bits: 64 }, Isa::Scalar) => (i64_scalar, "add x"),
        (Op::IntAdd { .. }, Isa::Scalar) => (i32_scalar, "add w"),
        _ => return None,
    };
    let (element_bits, ops_per_lane) = op.lane_bits_and_ops();
    Some(Kernel {
        run,
        ops_per_iteration: chains(isa, op) * isa.lanes(element_bits) as u64 * ops_per_lane,
        instruction,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The SVE vector length in bits as the hardware states it (`rdvl`), to check the one the
    /// kernels' work model reads from the kernel (prctl).
    #[target_feature(enable = "sve")]
    unsafe fn rdvl_bits() -> u64 {
        let bytes: u64;
        // SAFETY: rdvl only reads the vector length into a general register.
        unsafe { asm!("rdvl {b}, #1", b = out(reg) bytes, options(nomem, nostack)) };
        bytes * 8
    }

    /// Every kernel runs (no instruction outside its ISA) and its work model is the hand-counted
    /// one: 24 chains × lanes × 2 for an FMA, × 1 for an add; eight scalar integer chains.
    #[test]
    fn every_kernel_runs_and_counts_what_it_executes() {
        // SAFETY: getauxval reads the process's auxiliary vector; no preconditions.
        let sve = unsafe { libc::getauxval(libc::AT_HWCAP) } & (1 << 22) != 0;
        let ops = [
            Op::Fma { element_bits: 64 },
            Op::Fma { element_bits: 32 },
            Op::Fma { element_bits: 16 },
            Op::IntAdd { element_bits: 8 },
            Op::IntAdd { element_bits: 16 },
            Op::IntAdd { element_bits: 32 },
            Op::IntAdd { element_bits: 64 },
            Op::Dot { element_bits: 8 },
            Op::Dot { element_bits: 16 },
            Op::Matrix { element_bits: 8 },
            Op::Matrix { element_bits: 16 },
        ];
        // Dot products: 24 chains × 32-bit lanes × 8 (int8) or 4 (bf16) operations a lane;
        // matrix multiplies (a 2 × 2 block per 128 bits, 8 or 4 products a lane): 16 or 8.
        let mut expected = vec![(
            Isa::Neon,
            [96, 192, 384, 384, 192, 96, 48, 768, 384, 1536, 768],
        )];
        if sve {
            // SAFETY: HWCAP says the CPU has SVE.
            let bits = unsafe { rdvl_bits() };
            assert_eq!(bits, crate::sysinfo::isa::sve_vector_bits() as u64);
            expected.push((
                Isa::Sve,
                [
                    24 * bits / 64 * 2,
                    24 * bits / 32 * 2,
                    24 * bits / 16 * 2,
                    24 * bits / 8,
                    24 * bits / 16,
                    24 * bits / 32,
                    24 * bits / 64,
                    24 * bits / 32 * 8,
                    24 * bits / 32 * 4,
                    24 * bits / 32 * 16,
                    24 * bits / 32 * 8,
                ],
            ));
        } else {
            eprintln!("SKIPPED: SVE kernels (this CPU has no SVE)");
        }
        for (isa, counts) in expected {
            for (op, count) in ops.into_iter().zip(counts) {
                let Some(k) = kernel(op, isa) else {
                    let optional = [
                        (Op::Fma { element_bits: 16 }, Isa::Neon, "fp16"),
                        (Op::Dot { element_bits: 8 }, Isa::Neon, "dotprod"),
                        (Op::Dot { element_bits: 16 }, Isa::Neon, "bf16"),
                        (Op::Dot { element_bits: 16 }, Isa::Sve, "bf16"),
                        (Op::Matrix { element_bits: 8 }, Isa::Neon, "i8mm"),
                        (Op::Matrix { element_bits: 16 }, Isa::Neon, "bf16"),
                        (Op::Matrix { element_bits: 8 }, Isa::Sve, "i8mm"),
                        (Op::Matrix { element_bits: 16 }, Isa::Sve, "bf16"),
                    ];
                    let Some((.., feature)) =
                        optional.iter().find(|(o, i, _)| *o == op && *i == isa)
                    else {
                        panic!("no kernel for {op:?} on {isa}");
                    };
                    eprintln!("SKIPPED: {op:?} on {isa} (this CPU has no FEAT_{feature})");
                    continue;
                };
                (k.run)(1000);
                assert_eq!(k.ops_per_iteration, count, "{isa} {op:?}");
            }
        }
        // Scalar: 24 fmadd chains (2 operations each) and eight integer-add chains.
        for (op, count) in [
            (Op::Fma { element_bits: 64 }, 48),
            (Op::Fma { element_bits: 32 }, 48),
            (Op::IntAdd { element_bits: 8 }, 8),
            (Op::IntAdd { element_bits: 64 }, 8),
        ] {
            let k = kernel(op, Isa::Scalar).unwrap();
            (k.run)(1000);
            assert_eq!(k.ops_per_iteration, count, "scalar {op:?}");
        }
        assert!(kernel(Op::Fma { element_bits: 16 }, Isa::Scalar).is_none());
    }
}
