//! x86_64 CPU kernels in inline assembly, so that the instructions timed are exactly the ones
//! counted: the compiler can neither fold repeated integer adds into one multiply nor drop
//! "useless" arithmetic.
//!
//! Every kernel runs `iterations` passes of a loop body with independent dependency chains, one
//! per register, enough to cover the instruction's latency × throughput (FMA: 4 cycles × 2 per
//! cycle = 8 in flight; 12 chains in 16 registers, 24 in the 32 of AVX-512). The loop counter
//! (`dec`/`jnz`, one fused op) runs beside them. Floating-point chains compute
//! `acc = acc × m + a` with m = 1 − 1e-6 and a = 1e-6 (1e-4 for fp32), which converges to 1:
//! no overflow, no denormals, no slow paths.

use super::regs::{CONSTS, Consts};
use super::{AddMix, Kernel, Op};
use crate::sysinfo::Isa;
use core::arch::asm;

/// Defines a kernel: `$setup` once, then `iterations` × `$body`.
macro_rules! kernel {
    ($name:ident, $feature:literal, $setup:expr, $body:expr, $tail:literal) => {
        #[target_feature(enable = $feature)]
        #[inline(never)]
        unsafe fn $name(iterations: u64) {
            let consts: *const Consts = &CONSTS;
            // SAFETY: reads only the static CONSTS (64-byte aligned, 448 bytes); every vector
            // register it writes is caller-saved and declared by clobber_abi("C").
            unsafe {
                asm!(
                    $setup,
                    "2:",
                    $body,
                    "dec rdi",
                    "jnz 2b",
                    $tail,
                    inout("rdi") iterations.max(1) => _,
                    in("rsi") consts,
                    clobber_abi("C"),
                    options(nostack, readonly),
                );
            }
        }
    };
}

// ---- floating point: fp64 at [p], [p+64]; fp32 at [p+128], [p+192] ----
kernel!(
    dp_avx512,
    "avx512f",
    concat!(
        "vmovupd zmm30, [rsi]\n",
        "vmovupd zmm31, [rsi+64]\n",
        r24!(each1!("vmovapd zmm", ", zmm31"))
    ),
    r24!(each1!("vfmadd213pd zmm", ", zmm30, zmm31")),
    "vzeroupper"
);
kernel!(
    sp_avx512,
    "avx512f",
    concat!(
        "vmovups zmm30, [rsi+128]\n",
        "vmovups zmm31, [rsi+192]\n",
        r24!(each1!("vmovaps zmm", ", zmm31"))
    ),
    r24!(each1!("vfmadd213ps zmm", ", zmm30, zmm31")),
    "vzeroupper"
);
kernel!(
    dp_avx2,
    "avx2,fma",
    concat!(
        "vmovupd ymm12, [rsi]\n",
        "vmovupd ymm13, [rsi+64]\n",
        r12!(each1!("vmovapd ymm", ", ymm13"))
    ),
    r12!(each1!("vfmadd213pd ymm", ", ymm12, ymm13")),
    "vzeroupper"
);
kernel!(
    sp_avx2,
    "avx2,fma",
    concat!(
        "vmovups ymm12, [rsi+128]\n",
        "vmovups ymm13, [rsi+192]\n",
        r12!(each1!("vmovaps ymm", ", ymm13"))
    ),
    r12!(each1!("vfmadd213ps ymm", ", ymm12, ymm13")),
    "vzeroupper"
);
kernel!(
    dp_sse2,
    "sse2",
    concat!(
        "movupd xmm12, [rsi]\n",
        "movupd xmm13, [rsi+64]\n",
        r12!(each1!("movapd xmm", ", xmm13"))
    ),
    r12!(each2!("mulpd xmm", ", xmm12\naddpd xmm", ", xmm13")),
    ""
);
kernel!(
    sp_sse2,
    "sse2",
    concat!(
        "movups xmm12, [rsi+128]\n",
        "movups xmm13, [rsi+192]\n",
        r12!(each1!("movaps xmm", ", xmm13"))
    ),
    r12!(each2!("mulps xmm", ", xmm12\naddps xmm", ", xmm13")),
    ""
);
kernel!(
    dp_scalar,
    "sse2",
    concat!(
        "movsd xmm12, [rsi]\n",
        "movsd xmm13, [rsi+64]\n",
        r12!(each1!("movapd xmm", ", xmm13"))
    ),
    r12!(each2!("mulsd xmm", ", xmm12\naddsd xmm", ", xmm13")),
    ""
);
kernel!(
    sp_scalar,
    "sse2",
    concat!(
        "movss xmm12, [rsi+128]\n",
        "movss xmm13, [rsi+192]\n",
        r12!(each1!("movaps xmm", ", xmm13"))
    ),
    r12!(each2!("mulss xmm", ", xmm12\naddss xmm", ", xmm13")),
    ""
);

// fp16 at [p+320], [p+384] (AVX512-FP16: Sapphire Rapids and later)
kernel!(
    hp_fp16_avx512,
    "avx512fp16,avx512f",
    concat!(
        "vmovdqu16 zmm30, [rsi+320]\n",
        "vmovdqu16 zmm31, [rsi+384]\n",
        r24!(each1!("vmovdqa64 zmm", ", zmm31"))
    ),
    r24!(each1!("vfmadd213ph zmm", ", zmm30, zmm31")),
    "vzeroupper"
);

// ---- FMAs and adds together (the FP issue ceiling): 14 FMA chains x = 0.5·x + 0.5 (which
// stays at 1), and adds of 0.5 to a chain's value written to a scratch register, off the
// chains' paths (each reads a chain written an instruction group earlier): the adds need no
// chains of their own, so that 16 registers hold enough FMA chains for two FMA pipes of
// latency 4 with room for the adds to take their own pipes (Golden Cove: 3.0 instructions a
// cycle on ymm, against 2.66 with the adds on chains of their own). `half`: an add for every
// two FMAs (Golden Cove's one adder beside two FMA pipes); `equal`: one for each (Zen's two
// add pipes beside two FMA pipes).
macro_rules! fma_add_kernel {
    ($name:ident, $feature:literal, $width:literal, $setup:literal, $body:expr) => {
        kernel!(
            $name,
            $feature,
            concat!(
                $setup,
                r14!(each1!(
                    concat!("vmovaps ", $width),
                    concat!(", ", $width, "15")
                ))
            ),
            $body,
            "vzeroupper"
        );
    };
}
// On AVX-512's 32 registers the 1:1 kernels give the adds 14 chains of their own (zmm16-29,
// x += 0.5, which never overflows: fp32 stops growing at 2^24) beside the 14 FMA chains, in
// pairs of FMAs then pairs of adds: on Zen 4 that issues 1.99 instructions a cycle of 2,
// against 1.89-1.92 for adds into a scratch register read from the FMA chains (C
// microbenchmark, interleaved rounds).
macro_rules! fma_add_equal_avx512 {
    ($name:ident, $setup:literal, $p:literal) => {
        kernel!(
            $name,
            "avx512f",
            concat!(
                $setup,
                r14!(each1!("vmovaps zmm", ", zmm15")),
                each1!("vmovaps zmm", ", zmm15"; "16" "17" "18" "19" "20" "21" "22" "23" "24" "25" "26" "27" "28" "29")
            ),
            concat!(
                "vfmadd213", $p, " zmm0, zmm15, zmm15\n",
                "vfmadd213", $p, " zmm1, zmm15, zmm15\n",
                "vadd", $p, " zmm16, zmm16, zmm15\n",
                "vadd", $p, " zmm17, zmm17, zmm15\n",
                "vfmadd213", $p, " zmm2, zmm15, zmm15\n",
                "vfmadd213", $p, " zmm3, zmm15, zmm15\n",
                "vadd", $p, " zmm18, zmm18, zmm15\n",
                "vadd", $p, " zmm19, zmm19, zmm15\n",
                "vfmadd213", $p, " zmm4, zmm15, zmm15\n",
                "vfmadd213", $p, " zmm5, zmm15, zmm15\n",
                "vadd", $p, " zmm20, zmm20, zmm15\n",
                "vadd", $p, " zmm21, zmm21, zmm15\n",
                "vfmadd213", $p, " zmm6, zmm15, zmm15\n",
                "vfmadd213", $p, " zmm7, zmm15, zmm15\n",
                "vadd", $p, " zmm22, zmm22, zmm15\n",
                "vadd", $p, " zmm23, zmm23, zmm15\n",
                "vfmadd213", $p, " zmm8, zmm15, zmm15\n",
                "vfmadd213", $p, " zmm9, zmm15, zmm15\n",
                "vadd", $p, " zmm24, zmm24, zmm15\n",
                "vadd", $p, " zmm25, zmm25, zmm15\n",
                "vfmadd213", $p, " zmm10, zmm15, zmm15\n",
                "vfmadd213", $p, " zmm11, zmm15, zmm15\n",
                "vadd", $p, " zmm26, zmm26, zmm15\n",
                "vadd", $p, " zmm27, zmm27, zmm15\n",
                "vfmadd213", $p, " zmm12, zmm15, zmm15\n",
                "vfmadd213", $p, " zmm13, zmm15, zmm15\n",
                "vadd", $p, " zmm28, zmm28, zmm15\n",
                "vadd", $p, " zmm29, zmm29, zmm15\n",
            ),
            "vzeroupper"
        );
    };
}
fma_add_kernel!(
    dp_add_half_avx512,
    "avx512f",
    "zmm",
    "mov rax, 0x3FE0000000000000\nvmovq xmm15, rax\nvbroadcastsd zmm15, xmm15\n",
    concat!(
        "vaddpd zmm14, zmm1, zmm15\n",
        "vfmadd213pd zmm0, zmm15, zmm15\n",
        "vfmadd213pd zmm1, zmm15, zmm15\n",
        "vaddpd zmm14, zmm3, zmm15\n",
        "vfmadd213pd zmm2, zmm15, zmm15\n",
        "vfmadd213pd zmm3, zmm15, zmm15\n",
        "vaddpd zmm14, zmm5, zmm15\n",
        "vfmadd213pd zmm4, zmm15, zmm15\n",
        "vfmadd213pd zmm5, zmm15, zmm15\n",
        "vaddpd zmm14, zmm7, zmm15\n",
        "vfmadd213pd zmm6, zmm15, zmm15\n",
        "vfmadd213pd zmm7, zmm15, zmm15\n",
        "vaddpd zmm14, zmm9, zmm15\n",
        "vfmadd213pd zmm8, zmm15, zmm15\n",
        "vfmadd213pd zmm9, zmm15, zmm15\n",
        "vaddpd zmm14, zmm11, zmm15\n",
        "vfmadd213pd zmm10, zmm15, zmm15\n",
        "vfmadd213pd zmm11, zmm15, zmm15\n",
        "vaddpd zmm14, zmm13, zmm15\n",
        "vfmadd213pd zmm12, zmm15, zmm15\n",
        "vfmadd213pd zmm13, zmm15, zmm15\n"
    )
);
fma_add_equal_avx512!(
    dp_add_equal_avx512,
    "mov rax, 0x3FE0000000000000\nvmovq xmm15, rax\nvbroadcastsd zmm15, xmm15\n",
    "pd"
);
fma_add_kernel!(
    dp_add_half_avx2,
    "avx2,fma",
    "ymm",
    "mov rax, 0x3FE0000000000000\nvmovq xmm15, rax\nvbroadcastsd ymm15, xmm15\n",
    concat!(
        "vaddpd ymm14, ymm1, ymm15\n",
        "vfmadd213pd ymm0, ymm15, ymm15\n",
        "vfmadd213pd ymm1, ymm15, ymm15\n",
        "vaddpd ymm14, ymm3, ymm15\n",
        "vfmadd213pd ymm2, ymm15, ymm15\n",
        "vfmadd213pd ymm3, ymm15, ymm15\n",
        "vaddpd ymm14, ymm5, ymm15\n",
        "vfmadd213pd ymm4, ymm15, ymm15\n",
        "vfmadd213pd ymm5, ymm15, ymm15\n",
        "vaddpd ymm14, ymm7, ymm15\n",
        "vfmadd213pd ymm6, ymm15, ymm15\n",
        "vfmadd213pd ymm7, ymm15, ymm15\n",
        "vaddpd ymm14, ymm9, ymm15\n",
        "vfmadd213pd ymm8, ymm15, ymm15\n",
        "vfmadd213pd ymm9, ymm15, ymm15\n",
        "vaddpd ymm14, ymm11, ymm15\n",
        "vfmadd213pd ymm10, ymm15, ymm15\n",
        "vfmadd213pd ymm11, ymm15, ymm15\n",
        "vaddpd ymm14, ymm13, ymm15\n",
        "vfmadd213pd ymm12, ymm15, ymm15\n",
        "vfmadd213pd ymm13, ymm15, ymm15\n"
    )
);
fma_add_kernel!(
    dp_add_equal_avx2,
    "avx2,fma",
    "ymm",
    "mov rax, 0x3FE0000000000000\nvmovq xmm15, rax\nvbroadcastsd ymm15, xmm15\n",
    concat!(
        "vaddpd ymm14, ymm1, ymm15\n",
        "vfmadd213pd ymm0, ymm15, ymm15\n",
        "vaddpd ymm14, ymm2, ymm15\n",
        "vfmadd213pd ymm1, ymm15, ymm15\n",
        "vaddpd ymm14, ymm3, ymm15\n",
        "vfmadd213pd ymm2, ymm15, ymm15\n",
        "vaddpd ymm14, ymm4, ymm15\n",
        "vfmadd213pd ymm3, ymm15, ymm15\n",
        "vaddpd ymm14, ymm5, ymm15\n",
        "vfmadd213pd ymm4, ymm15, ymm15\n",
        "vaddpd ymm14, ymm6, ymm15\n",
        "vfmadd213pd ymm5, ymm15, ymm15\n",
        "vaddpd ymm14, ymm7, ymm15\n",
        "vfmadd213pd ymm6, ymm15, ymm15\n",
        "vaddpd ymm14, ymm8, ymm15\n",
        "vfmadd213pd ymm7, ymm15, ymm15\n",
        "vaddpd ymm14, ymm9, ymm15\n",
        "vfmadd213pd ymm8, ymm15, ymm15\n",
        "vaddpd ymm14, ymm10, ymm15\n",
        "vfmadd213pd ymm9, ymm15, ymm15\n",
        "vaddpd ymm14, ymm11, ymm15\n",
        "vfmadd213pd ymm10, ymm15, ymm15\n",
        "vaddpd ymm14, ymm12, ymm15\n",
        "vfmadd213pd ymm11, ymm15, ymm15\n",
        "vaddpd ymm14, ymm13, ymm15\n",
        "vfmadd213pd ymm12, ymm15, ymm15\n",
        "vaddpd ymm14, ymm0, ymm15\n",
        "vfmadd213pd ymm13, ymm15, ymm15\n"
    )
);
fma_add_kernel!(
    sp_add_half_avx512,
    "avx512f",
    "zmm",
    "mov eax, 0x3F000000\nvmovd xmm15, eax\nvbroadcastss zmm15, xmm15\n",
    concat!(
        "vaddps zmm14, zmm1, zmm15\n",
        "vfmadd213ps zmm0, zmm15, zmm15\n",
        "vfmadd213ps zmm1, zmm15, zmm15\n",
        "vaddps zmm14, zmm3, zmm15\n",
        "vfmadd213ps zmm2, zmm15, zmm15\n",
        "vfmadd213ps zmm3, zmm15, zmm15\n",
        "vaddps zmm14, zmm5, zmm15\n",
        "vfmadd213ps zmm4, zmm15, zmm15\n",
        "vfmadd213ps zmm5, zmm15, zmm15\n",
        "vaddps zmm14, zmm7, zmm15\n",
        "vfmadd213ps zmm6, zmm15, zmm15\n",
        "vfmadd213ps zmm7, zmm15, zmm15\n",
        "vaddps zmm14, zmm9, zmm15\n",
        "vfmadd213ps zmm8, zmm15, zmm15\n",
        "vfmadd213ps zmm9, zmm15, zmm15\n",
        "vaddps zmm14, zmm11, zmm15\n",
        "vfmadd213ps zmm10, zmm15, zmm15\n",
        "vfmadd213ps zmm11, zmm15, zmm15\n",
        "vaddps zmm14, zmm13, zmm15\n",
        "vfmadd213ps zmm12, zmm15, zmm15\n",
        "vfmadd213ps zmm13, zmm15, zmm15\n"
    )
);
fma_add_equal_avx512!(
    sp_add_equal_avx512,
    "mov eax, 0x3F000000\nvmovd xmm15, eax\nvbroadcastss zmm15, xmm15\n",
    "ps"
);
fma_add_kernel!(
    sp_add_half_avx2,
    "avx2,fma",
    "ymm",
    "mov eax, 0x3F000000\nvmovd xmm15, eax\nvbroadcastss ymm15, xmm15\n",
    concat!(
        "vaddps ymm14, ymm1, ymm15\n",
        "vfmadd213ps ymm0, ymm15, ymm15\n",
        "vfmadd213ps ymm1, ymm15, ymm15\n",
        "vaddps ymm14, ymm3, ymm15\n",
        "vfmadd213ps ymm2, ymm15, ymm15\n",
        "vfmadd213ps ymm3, ymm15, ymm15\n",
        "vaddps ymm14, ymm5, ymm15\n",
        "vfmadd213ps ymm4, ymm15, ymm15\n",
        "vfmadd213ps ymm5, ymm15, ymm15\n",
        "vaddps ymm14, ymm7, ymm15\n",
        "vfmadd213ps ymm6, ymm15, ymm15\n",
        "vfmadd213ps ymm7, ymm15, ymm15\n",
        "vaddps ymm14, ymm9, ymm15\n",
        "vfmadd213ps ymm8, ymm15, ymm15\n",
        "vfmadd213ps ymm9, ymm15, ymm15\n",
        "vaddps ymm14, ymm11, ymm15\n",
        "vfmadd213ps ymm10, ymm15, ymm15\n",
        "vfmadd213ps ymm11, ymm15, ymm15\n",
        "vaddps ymm14, ymm13, ymm15\n",
        "vfmadd213ps ymm12, ymm15, ymm15\n",
        "vfmadd213ps ymm13, ymm15, ymm15\n"
    )
);
fma_add_kernel!(
    sp_add_equal_avx2,
    "avx2,fma",
    "ymm",
    "mov eax, 0x3F000000\nvmovd xmm15, eax\nvbroadcastss ymm15, xmm15\n",
    concat!(
        "vaddps ymm14, ymm1, ymm15\n",
        "vfmadd213ps ymm0, ymm15, ymm15\n",
        "vaddps ymm14, ymm2, ymm15\n",
        "vfmadd213ps ymm1, ymm15, ymm15\n",
        "vaddps ymm14, ymm3, ymm15\n",
        "vfmadd213ps ymm2, ymm15, ymm15\n",
        "vaddps ymm14, ymm4, ymm15\n",
        "vfmadd213ps ymm3, ymm15, ymm15\n",
        "vaddps ymm14, ymm5, ymm15\n",
        "vfmadd213ps ymm4, ymm15, ymm15\n",
        "vaddps ymm14, ymm6, ymm15\n",
        "vfmadd213ps ymm5, ymm15, ymm15\n",
        "vaddps ymm14, ymm7, ymm15\n",
        "vfmadd213ps ymm6, ymm15, ymm15\n",
        "vaddps ymm14, ymm8, ymm15\n",
        "vfmadd213ps ymm7, ymm15, ymm15\n",
        "vaddps ymm14, ymm9, ymm15\n",
        "vfmadd213ps ymm8, ymm15, ymm15\n",
        "vaddps ymm14, ymm10, ymm15\n",
        "vfmadd213ps ymm9, ymm15, ymm15\n",
        "vaddps ymm14, ymm11, ymm15\n",
        "vfmadd213ps ymm10, ymm15, ymm15\n",
        "vaddps ymm14, ymm12, ymm15\n",
        "vfmadd213ps ymm11, ymm15, ymm15\n",
        "vaddps ymm14, ymm13, ymm15\n",
        "vfmadd213ps ymm12, ymm15, ymm15\n",
        "vaddps ymm14, ymm0, ymm15\n",
        "vfmadd213ps ymm13, ymm15, ymm15\n"
    )
);

// ---- dot products into 32-bit lanes: int8 (VNNI `vpdpbusd`: four u8 × s8 products added to
// each int32 lane, which wraps and never faults) and bf16 (`vdpbf16ps`: two bf16 products added
// to each fp32 lane; with inputs of 1.0 a lane grows by 2 until 2^25, then stays: no overflow,
// and the instruction flushes denormals itself) ----
kernel!(
    int8_dot_avx512,
    "avx512f,avx512vnni",
    concat!(
        "mov eax, 0x01010101\n",
        "vpbroadcastd zmm30, eax\n",
        "vmovdqa64 zmm31, zmm30\n"
    ),
    r24!(each1!("vpdpbusd zmm", ", zmm30, zmm31")),
    "vzeroupper"
);
kernel!(
    int8_dot_avx2,
    "avx2,avxvnni",
    concat!(
        "mov eax, 0x01010101\n",
        "vmovd xmm13, eax\n",
        "vpbroadcastd ymm13, xmm13\n",
        "vmovdqa ymm12, ymm13\n"
    ),
    r12!(each1!("{{vex}} vpdpbusd ymm", ", ymm12, ymm13")),
    "vzeroupper"
);
kernel!(
    bf16_dot_avx512,
    "avx512f,avx512bf16",
    concat!(
        "mov eax, 0x3F803F80\n",
        "vpbroadcastd zmm30, eax\n",
        "vmovdqa64 zmm31, zmm30\n",
        // The accumulators start at 0x3F803F80 read as fp32: about 1.0039.
        r24!(each1!("vmovdqa64 zmm", ", zmm30"))
    ),
    r24!(each1!("vdpbf16ps zmm", ", zmm30, zmm31")),
    "vzeroupper"
);

// ---- vector integer adds: increments of ones at [p+256]; the accumulators start from whatever
// the registers hold (integer adds wrap and never fault, so the start value does not matter) ----
macro_rules! int_kernels {
    ($avx512:ident, $avx2:ident, $sse2:ident, $vop:literal, $sop:literal) => {
        kernel!(
            $avx512,
            "avx512f,avx512bw",
            "vmovdqu64 zmm31, [rsi+256]",
            r24!(each2!(concat!($vop, " zmm"), ", zmm", ", zmm31")),
            "vzeroupper"
        );
        kernel!(
            $avx2,
            "avx2",
            "vmovdqu ymm13, [rsi+256]",
            r12!(each2!(concat!($vop, " ymm"), ", ymm", ", ymm13")),
            "vzeroupper"
        );
        kernel!(
            $sse2,
            "sse2",
            "movdqu xmm13, [rsi+256]",
            r12!(each1!(concat!($sop, " xmm"), ", xmm13")),
            ""
        );
    };
}
int_kernels!(qp_avx512, qp_avx2, qp_sse2, "vpaddb", "paddb");
int_kernels!(hp_avx512, hp_avx2, hp_sse2, "vpaddw", "paddw");
int_kernels!(i32_avx512, i32_avx2, i32_sse2, "vpaddd", "paddd");
int_kernels!(i64_avx512, i64_avx2, i64_sse2, "vpaddq", "paddq");

/// Scalar integer adds: eight chains in general-purpose registers at the element's width.
macro_rules! scalar_int {
    ($name:ident, $w:literal) => {
        #[inline(never)]
        fn $name(iterations: u64) {
            // SAFETY: register-only arithmetic and a counted loop; no memory is touched.
            unsafe {
                asm!(
                    "2:",
                    concat!(
                        "add {a0", $w, "}, {i", $w, "}\n", "add {a1", $w, "}, {i", $w, "}\n",
                        "add {a2", $w, "}, {i", $w, "}\n", "add {a3", $w, "}, {i", $w, "}\n",
                        "add {a4", $w, "}, {i", $w, "}\n", "add {a5", $w, "}, {i", $w, "}\n",
                        "add {a6", $w, "}, {i", $w, "}\n", "add {a7", $w, "}, {i", $w, "}\n",
                    ),
                    "dec {n}",
                    "jnz 2b",
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
scalar_int!(qp_scalar, ":l");
scalar_int!(hp_scalar, ":x");
scalar_int!(i32_scalar, ":e");
scalar_int!(i64_scalar, "");

safe_wrapper!(
    hp_fp16_avx512,
    int8_dot_avx512,
    int8_dot_avx2,
    bf16_dot_avx512,
    dp_add_half_avx512,
    dp_add_equal_avx512,
    dp_add_half_avx2,
    dp_add_equal_avx2,
    sp_add_half_avx512,
    sp_add_equal_avx512,
    sp_add_half_avx2,
    sp_add_equal_avx2,
    dp_avx512,
    sp_avx512,
    dp_avx2,
    sp_avx2,
    dp_sse2,
    sp_sse2,
    dp_scalar,
    sp_scalar,
    qp_avx512,
    qp_avx2,
    qp_sse2,
    hp_avx512,
    hp_avx2,
    hp_sse2,
    i32_avx512,
    i32_avx2,
    i32_sse2,
    i64_avx512,
    i64_avx2,
    i64_sse2
);

/// Independent chains in each kernel.
fn chains(isa: Isa, op: Op) -> u64 {
    match (isa, op) {
        (Isa::Avx512, _) => 24,
        (Isa::Scalar, Op::IntAdd { .. }) => 8,
        _ => 12,
    }
}

/// The kernel for `op` in `isa`; the caller guarantees `isa` is supported by this machine.
pub fn kernel(op: Op, isa: Isa) -> Option<Kernel> {
    let run: fn(u64) = match (op, isa) {
        (Op::Fma { element_bits: 64 }, Isa::Avx512) => checked::dp_avx512,
        (Op::Fma { element_bits: 32 }, Isa::Avx512) => checked::sp_avx512,
        // AVX512-FP16 is not implied by the Avx512 ISA (F + BW): checked here.
        (Op::Fma { element_bits: 16 }, Isa::Avx512)
            if std::is_x86_feature_detected!("avx512fp16") =>
        {
            checked::hp_fp16_avx512
        }
        (Op::Fma { element_bits: 64 }, Isa::Avx2) => checked::dp_avx2,
        (Op::Fma { element_bits: 32 }, Isa::Avx2) => checked::sp_avx2,
        (Op::Fma { element_bits: 64 }, Isa::Sse2) => checked::dp_sse2,
        (Op::Fma { element_bits: 32 }, Isa::Sse2) => checked::sp_sse2,
        (Op::Fma { element_bits: 64 }, Isa::Scalar) => checked::dp_scalar,
        (Op::Fma { element_bits: 32 }, Isa::Scalar) => checked::sp_scalar,
        // VNNI and BF16 are not implied by the ISAs (AVX-512 F + BW; AVX2 + FMA): checked here.
        (Op::Dot { element_bits: 8 }, Isa::Avx512)
            if std::is_x86_feature_detected!("avx512vnni") =>
        {
            checked::int8_dot_avx512
        }
        (Op::Dot { element_bits: 8 }, Isa::Avx2) if std::is_x86_feature_detected!("avxvnni") => {
            checked::int8_dot_avx2
        }
        (Op::Dot { element_bits: 16 }, Isa::Avx512)
            if std::is_x86_feature_detected!("avx512bf16") =>
        {
            checked::bf16_dot_avx512
        }
        // AMX: the CPU, the OS and Linux's permission decide (the tiles need no vector ISA,
        // but every AMX CPU has AVX-512).
        (Op::Matrix { .. }, Isa::Avx512) => return super::amx::kernel(op).ok(),
        (Op::IntAdd { element_bits: 8 }, Isa::Avx512) => checked::qp_avx512,
        (Op::IntAdd { element_bits: 8 }, Isa::Avx2) => checked::qp_avx2,
        (Op::IntAdd { element_bits: 8 }, Isa::Sse2) => checked::qp_sse2,
        (Op::IntAdd { element_bits: 8 }, Isa::Scalar) => qp_scalar,
        (Op::IntAdd { element_bits: 16 }, Isa::Avx512) => checked::hp_avx512,
        (Op::IntAdd { element_bits: 16 }, Isa::Avx2) => checked::hp_avx2,
        (Op::IntAdd { element_bits: 16 }, Isa::Sse2) => checked::hp_sse2,
        (Op::IntAdd { element_bits: 16 }, Isa::Scalar) => hp_scalar,
        (Op::IntAdd { element_bits: 32 }, Isa::Avx512) => checked::i32_avx512,
        (Op::IntAdd { element_bits: 32 }, Isa::Avx2) => checked::i32_avx2,
        (Op::IntAdd { element_bits: 32 }, Isa::Sse2) => checked::i32_sse2,
        (Op::IntAdd { element_bits: 32 }, Isa::Scalar) => i32_scalar,
        (Op::IntAdd { element_bits: 64 }, Isa::Avx512) => checked::i64_avx512,
        (Op::IntAdd { element_bits: 64 }, Isa::Avx2) => checked::i64_avx2,
        (Op::IntAdd { element_bits: 64 }, Isa::Sse2) => checked::i64_sse2,
        (Op::IntAdd { element_bits: 64 }, Isa::Scalar) => i64_scalar,
        _ => return None,
    };
    let (element_bits, ops_per_lane) = op.lane_bits_and_ops();
    Some(Kernel {
        run,
        ops_per_iteration: chains(isa, op) * isa.lanes(element_bits) as u64 * ops_per_lane,
        instruction: instruction(op, isa),
    })
}

/// The FMA+add kernel of `element_bits` lanes in `isa` with `mix` adds (none: the FMA kernel's
/// place, not this one's).
pub fn fma_add_kernel(element_bits: u32, isa: Isa, mix: AddMix) -> Option<Kernel> {
    let (run, instruction): (fn(u64), &'static str) = match (element_bits, isa, mix) {
        (64, Isa::Avx512, AddMix::Half) => {
            (checked::dp_add_half_avx512, "vfmadd213pd+vaddpd zmm, 2:1")
        }
        (64, Isa::Avx512, AddMix::Equal) => {
            (checked::dp_add_equal_avx512, "vfmadd213pd+vaddpd zmm, 1:1")
        }
        (64, Isa::Avx2, AddMix::Half) => (checked::dp_add_half_avx2, "vfmadd213pd+vaddpd ymm, 2:1"),
        (64, Isa::Avx2, AddMix::Equal) => {
            (checked::dp_add_equal_avx2, "vfmadd213pd+vaddpd ymm, 1:1")
        }
        (32, Isa::Avx512, AddMix::Half) => {
            (checked::sp_add_half_avx512, "vfmadd213ps+vaddps zmm, 2:1")
        }
        (32, Isa::Avx512, AddMix::Equal) => {
            (checked::sp_add_equal_avx512, "vfmadd213ps+vaddps zmm, 1:1")
        }
        (32, Isa::Avx2, AddMix::Half) => (checked::sp_add_half_avx2, "vfmadd213ps+vaddps ymm, 2:1"),
        (32, Isa::Avx2, AddMix::Equal) => {
            (checked::sp_add_equal_avx2, "vfmadd213ps+vaddps ymm, 1:1")
        }
        _ => return None,
    };
    // 14 FMA chains (two operations a lane each) and the adds beside them (one).
    let adds = match mix {
        AddMix::Half => 7,
        _ => 14,
    };
    Some(Kernel {
        run,
        ops_per_iteration: isa.lanes(element_bits) as u64 * (14 * 2 + adds),
        instruction,
    })
}

fn instruction(op: Op, isa: Isa) -> &'static str {
    match (op, isa) {
        (Op::Fma { element_bits: 64 }, Isa::Avx512) => "vfmadd213pd zmm",
        (Op::Fma { element_bits: 32 }, Isa::Avx512) => "vfmadd213ps zmm",
        (Op::Fma { element_bits: 16 }, Isa::Avx512) => "vfmadd213ph zmm",
        (Op::Fma { element_bits: 64 }, Isa::Avx2) => "vfmadd213pd ymm",
        (Op::Fma { element_bits: 32 }, Isa::Avx2) => "vfmadd213ps ymm",
        (Op::Fma { element_bits: 64 }, Isa::Sse2) => "mulpd+addpd xmm",
        (Op::Fma { element_bits: 32 }, Isa::Sse2) => "mulps+addps xmm",
        (Op::Fma { element_bits: 64 }, _) => "mulsd+addsd",
        (Op::Fma { .. }, _) => "mulss+addss",
        (Op::IntAdd { .. }, Isa::Avx512) => "vpadd zmm",
        (Op::IntAdd { .. }, Isa::Avx2) => "vpadd ymm",
        (Op::IntAdd { .. }, Isa::Sse2) => "padd xmm",
        (Op::IntAdd { .. }, _) => "add r64",
        (Op::Dot { element_bits: 8 }, Isa::Avx512) => "vpdpbusd zmm",
        (Op::Dot { element_bits: 8 }, Isa::Avx2) => "vpdpbusd ymm (AVX-VNNI)",
        (Op::Dot { element_bits: 16 }, Isa::Avx512) => "vdpbf16ps zmm",
        (Op::Dot { .. } | Op::FmaAdd { .. } | Op::Matrix { .. }, _) => "no kernel",
    }
}
