//! GEMM micro-kernels: C[0..MR, 0..NR] += α · Ã · B̃ over `kc` steps, where Ã is a packed
//! MR-row panel of A (MR values per step) and B̃ a packed NR-column panel of B (NR values per
//! step). Each kernel keeps the whole MR × NR tile of C in registers (AVX-512: 24 × 8 in 24 of
//! the 32 zmm registers; AVX2: 8 × 6 in 12 of the 16 ymm), so that every step is MR/lanes loads
//! of Ã, NR broadcasts of B̃ (folded into the FMAs' memory operands) and MR·NR/lanes FMAs.

/// One micro-kernel: its tile and its code.
#[derive(Debug, Clone, Copy)]
pub struct MicroKernel {
    pub mr: usize,
    pub nr: usize,
    /// The instruction set, for the report.
    pub isa: &'static str,
    /// `(kc, a, b, c, ldc, alpha)`: see the module's documentation.
    run: unsafe fn(usize, *const f64, *const f64, *mut f64, usize, f64),
}

impl MicroKernel {
    /// Runs the kernel on one tile.
    ///
    /// # Safety
    /// `a` holds `kc · mr` values, `b` holds `kc · nr`, and `c` addresses an `mr × nr` tile with
    /// leading dimension `ldc ≥ mr`, none of it aliased; the CPU has the kernel's ISA (which
    /// [`best`] guarantees).
    pub unsafe fn run(
        &self,
        kc: usize,
        a: *const f64,
        b: *const f64,
        c: *mut f64,
        ldc: usize,
        alpha: f64,
    ) {
        // SAFETY: the caller's promise, passed on.
        unsafe { (self.run)(kc, a, b, c, ldc, alpha) }
    }
}

/// The widest kernel this CPU runs.
pub fn best() -> MicroKernel {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") {
            return MicroKernel {
                mr: 24,
                nr: 8,
                isa: "AVX-512",
                run: x86::dgemm_24x8_avx512,
            };
        }
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
        {
            return MicroKernel {
                mr: 8,
                nr: 6,
                isa: "AVX2+FMA",
                run: x86::dgemm_8x6_avx2,
            };
        }
    }
    portable()
}

/// The kernel without vector intrinsics (any CPU; the compiler vectorises what it can).
pub fn portable() -> MicroKernel {
    MicroKernel {
        mr: 8,
        nr: 4,
        isa: "portable",
        run: dgemm_8x4_portable,
    }
}

/// # Safety
/// As [`MicroKernel::run`] with MR = 8, NR = 4.
unsafe fn dgemm_8x4_portable(
    kc: usize,
    a: *const f64,
    b: *const f64,
    c: *mut f64,
    ldc: usize,
    alpha: f64,
) {
    let mut acc = [[0.0f64; 8]; 4];
    for p in 0..kc {
        // SAFETY: p < kc; the panels hold kc · 8 and kc · 4 values.
        let (ap, bp) = unsafe {
            (
                &*a.add(p * 8).cast::<[f64; 8]>(),
                &*b.add(p * 4).cast::<[f64; 4]>(),
            )
        };
        for (j, col) in acc.iter_mut().enumerate() {
            for (i, v) in col.iter_mut().enumerate() {
                *v = ap[i].mul_add(bp[j], *v);
            }
        }
    }
    for (j, col) in acc.iter().enumerate() {
        for (i, v) in col.iter().enumerate() {
            // SAFETY: the tile is 8 × 4 with leading dimension ldc.
            unsafe { *c.add(i + j * ldc) += alpha * v };
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use core::arch::x86_64::*;

    /// How far ahead (in values of the packed A panel) the AVX-512 kernel prefetches.
    const PREFETCH_A: usize = 24 * 8;

    /// 24 × 8: three zmm of Ã per step, eight broadcasts of B̃, 24 FMAs.
    ///
    /// # Safety
    /// As [`MicroKernel::run`](super::MicroKernel::run) with MR = 24, NR = 8, on a CPU with
    /// AVX-512F.
    #[target_feature(enable = "avx512f")]
    pub unsafe fn dgemm_24x8_avx512(
        kc: usize,
        a: *const f64,
        b: *const f64,
        c: *mut f64,
        ldc: usize,
        alpha: f64,
    ) {
        // SAFETY: every pointer stays inside the panels (kc steps of 24 and 8 values) and the
        // 24 × 8 tile of C, as the caller promises.
        unsafe {
            let mut acc = [[_mm512_setzero_pd(); 3]; 8];
            // The tile of C, wanted at the end, on its way to L1 meanwhile.
            for j in 0..8 {
                for r in 0..3 {
                    _mm_prefetch::<_MM_HINT_T0>(c.add(j * ldc + r * 8).cast());
                }
            }
            let (mut a, mut b) = (a, b);
            for _ in 0..kc {
                // The panel of A streams from L2: fetch it a few steps ahead.
                _mm_prefetch::<_MM_HINT_T0>(a.wrapping_add(PREFETCH_A).cast());
                _mm_prefetch::<_MM_HINT_T0>(a.wrapping_add(PREFETCH_A + 8).cast());
                _mm_prefetch::<_MM_HINT_T0>(a.wrapping_add(PREFETCH_A + 16).cast());
                let a0 = _mm512_loadu_pd(a);
                let a1 = _mm512_loadu_pd(a.add(8));
                let a2 = _mm512_loadu_pd(a.add(16));
                for (j, col) in acc.iter_mut().enumerate() {
                    let bj = _mm512_set1_pd(*b.add(j));
                    col[0] = _mm512_fmadd_pd(a0, bj, col[0]);
                    col[1] = _mm512_fmadd_pd(a1, bj, col[1]);
                    col[2] = _mm512_fmadd_pd(a2, bj, col[2]);
                }
                a = a.add(24);
                b = b.add(8);
            }
            let al = _mm512_set1_pd(alpha);
            for (j, col) in acc.iter().enumerate() {
                let cj = c.add(j * ldc);
                for (r, v) in col.iter().enumerate() {
                    let p = cj.add(r * 8);
                    _mm512_storeu_pd(p, _mm512_fmadd_pd(*v, al, _mm512_loadu_pd(p)));
                }
            }
        }
    }

    /// 8 × 6: two ymm of Ã per step, six broadcasts of B̃, 12 FMAs.
    ///
    /// # Safety
    /// As [`MicroKernel::run`](super::MicroKernel::run) with MR = 8, NR = 6, on a CPU with AVX2
    /// and FMA.
    #[target_feature(enable = "avx2,fma")]
    pub unsafe fn dgemm_8x6_avx2(
        kc: usize,
        a: *const f64,
        b: *const f64,
        c: *mut f64,
        ldc: usize,
        alpha: f64,
    ) {
        // SAFETY: as above, with 8- and 6-value steps and an 8 × 6 tile.
        unsafe {
            let mut acc = [[_mm256_setzero_pd(); 2]; 6];
            let (mut a, mut b) = (a, b);
            for _ in 0..kc {
                let a0 = _mm256_loadu_pd(a);
                let a1 = _mm256_loadu_pd(a.add(4));
                for (j, col) in acc.iter_mut().enumerate() {
                    let bj = _mm256_broadcast_sd(&*b.add(j));
                    col[0] = _mm256_fmadd_pd(a0, bj, col[0]);
                    col[1] = _mm256_fmadd_pd(a1, bj, col[1]);
                }
                a = a.add(8);
                b = b.add(6);
            }
            let al = _mm256_set1_pd(alpha);
            for (j, col) in acc.iter().enumerate() {
                let cj = c.add(j * ldc);
                for (r, v) in col.iter().enumerate() {
                    let p = cj.add(r * 4);
                    _mm256_storeu_pd(p, _mm256_fmadd_pd(*v, al, _mm256_loadu_pd(p)));
                }
            }
        }
    }
}
