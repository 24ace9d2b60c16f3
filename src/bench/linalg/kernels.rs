//! GEMM micro-kernels: C[0..MR, 0..NR] += α · Ã · B̃ over `kc` steps, where Ã is a packed
//! MR-row panel of A (MR values per step) and B̃ a packed NR-column panel of B (NR values per
//! step). Each kernel keeps the whole MR × NR tile of C in registers (AVX-512: 3 vectors × 8
//! columns in 24 of the 32 zmm registers; AVX2: 2 vectors × 6 columns in 12 of the 16 ymm), so
//! that every step is MR/lanes loads of Ã, NR broadcasts of B̃ and MR·NR/lanes FMAs. Double
//! precision (DGEMM) and single precision (SGEMM) kernels are the same code with their own
//! intrinsics and tiles: 24 × 8 and 48 × 8 (AVX-512), 8 × 6 and 16 × 6 (AVX2).

use std::fmt::Debug;
use std::ops::{AddAssign, Mul, MulAssign};

/// An element type the multiply works in (f64 or f32), with its kernels.
pub trait Element:
    Copy
    + Send
    + Sync
    + Debug
    + PartialEq
    + PartialOrd
    + Default
    + Mul<Output = Self>
    + AddAssign
    + MulAssign
    + 'static
{
    const ZERO: Self;
    const ONE: Self;
    /// Bits of the type (the peak's element width).
    const ELEMENT_BITS: u32;
    /// The vector kernels this CPU runs for the type, widest first.
    fn vector_kernels() -> Vec<MicroKernel<Self>>;
    fn mul_add(self, a: Self, b: Self) -> Self;
    fn from_f64(x: f64) -> Self;
    fn to_f64(self) -> f64;
    /// The unit roundoff as f64 (half the machine epsilon).
    fn unit_roundoff() -> f64;
    /// Runs `f` on this thread's scratch buffer of `len` values, kept between calls (grown,
    /// never zeroed again: it holds what its last user left). A nested call gets a new buffer.
    fn with_scratch<R>(len: usize, f: impl FnOnce(&mut [Self]) -> R) -> R;
}

/// The scratch buffer of [`Element::with_scratch`] for one type.
macro_rules! scratch {
    ($t:ty) => {
        fn with_scratch<R>(len: usize, f: impl FnOnce(&mut [$t]) -> R) -> R {
            thread_local! {
                static SCRATCH: std::cell::RefCell<Vec<$t>> = const { std::cell::RefCell::new(Vec::new()) };
            }
            SCRATCH.with(|cell| match cell.try_borrow_mut() {
                Ok(mut buf) => {
                    if buf.len() < len {
                        // A new buffer, huge pages asked for before its first touch (the
                        // packed block of B spans megabytes).
                        let mut grown = Vec::with_capacity(len);
                        crate::bench::buffer::advise_huge_pages(grown.spare_capacity_mut());
                        grown.resize(len, 0.0);
                        *buf = grown;
                    }
                    f(&mut buf[..len])
                }
                Err(_) => f(&mut vec![0.0; len]),
            })
        }
    };
}

/// One micro-kernel: its tile and its code.
#[derive(Debug, Clone, Copy)]
pub struct MicroKernel<T = f64> {
    pub mr: usize,
    pub nr: usize,
    /// The instruction set, for the report.
    pub isa: &'static str,
    /// The instruction set as `--isa` names it (`scalar` for the portable kernel).
    pub kind: crate::sysinfo::Isa,
    /// The longest panels (KC) the kernel is given, whatever room L1 leaves: 256 for the
    /// AVX2 tiles, as BLIS's haswell and zen3 configurations (on a Zen 5 with `--isa avx2`,
    /// N = 4000, 6 rounds of 2 sweeps interleaved: 2 threads 1.037 × the rate of the 512 that
    /// half of its L1 gave, SGEMM 1.01 ×, 1 thread 1.007 and 1.008 ×; 192 and 320 no better),
    /// 512 for the others (AVX-512's 384 and 512 as good as 256–448 there).
    pub kc_max: usize,
    /// `(kc, a, b, c, ldc, alpha)`: see the module's documentation.
    run: unsafe fn(usize, *const T, *const T, *mut T, usize, T),
}

impl<T> MicroKernel<T> {
    /// Runs the kernel on one tile.
    ///
    /// # Safety
    /// `a` holds `kc · mr` values, `b` holds `kc · nr`, and `c` addresses an `mr × nr` tile with
    /// leading dimension `ldc ≥ mr`, none of it aliased; the CPU has the kernel's ISA (which
    /// [`best`] guarantees).
    pub unsafe fn run(&self, kc: usize, a: *const T, b: *const T, c: *mut T, ldc: usize, alpha: T) {
        // SAFETY: the caller's promise, passed on.
        unsafe { (self.run)(kc, a, b, c, ldc, alpha) }
    }
}

/// The widest kernel this CPU runs for `T`.
pub fn best<T: Element>() -> MicroKernel<T> {
    T::vector_kernels()
        .into_iter()
        .next()
        .unwrap_or_else(portable)
}

/// The kernel for `T` of instruction set `isa` (`--isa`), or None where there is none or this
/// CPU cannot run it.
pub fn for_isa<T: Element>(isa: crate::sysinfo::Isa) -> Option<MicroKernel<T>> {
    available::<T>().into_iter().find(|k| k.kind == isa)
}

/// Every kernel this CPU runs for `T`, widest first, the portable one last (for tests and
/// comparisons).
pub fn available<T: Element>() -> Vec<MicroKernel<T>> {
    let mut out = T::vector_kernels();
    out.push(portable());
    out
}

/// The kernel without vector intrinsics (any CPU; the compiler vectorises what it can).
pub fn portable<T: Element>() -> MicroKernel<T> {
    MicroKernel {
        mr: 8,
        nr: 4,
        isa: "portable",
        kind: crate::sysinfo::Isa::Scalar,
        kc_max: 512,
        run: portable_8x4::<T>,
    }
}

impl Element for f64 {
    scratch!(f64);
    const ZERO: f64 = 0.0;
    const ONE: f64 = 1.0;
    const ELEMENT_BITS: u32 = 64;
    fn vector_kernels() -> Vec<MicroKernel<f64>> {
        arch::dgemm()
    }
    fn mul_add(self, a: f64, b: f64) -> f64 {
        f64::mul_add(self, a, b)
    }
    fn from_f64(x: f64) -> f64 {
        x
    }
    fn to_f64(self) -> f64 {
        self
    }
    fn unit_roundoff() -> f64 {
        f64::EPSILON / 2.0
    }
}

impl Element for f32 {
    scratch!(f32);
    const ZERO: f32 = 0.0;
    const ONE: f32 = 1.0;
    const ELEMENT_BITS: u32 = 32;
    fn vector_kernels() -> Vec<MicroKernel<f32>> {
        arch::sgemm()
    }
    fn mul_add(self, a: f32, b: f32) -> f32 {
        f32::mul_add(self, a, b)
    }
    fn from_f64(x: f64) -> f32 {
        x as f32
    }
    fn to_f64(self) -> f64 {
        f64::from(self)
    }
    fn unit_roundoff() -> f64 {
        f64::from(f32::EPSILON) / 2.0
    }
}

/// # Safety
/// As [`MicroKernel::run`] with MR = 8, NR = 4.
unsafe fn portable_8x4<T: Element>(
    kc: usize,
    a: *const T,
    b: *const T,
    c: *mut T,
    ldc: usize,
    alpha: T,
) {
    let mut acc = [[T::ZERO; 8]; 4];
    for p in 0..kc {
        // SAFETY: p < kc; the panels hold kc · 8 and kc · 4 values.
        let (ap, bp) = unsafe {
            (
                &*a.add(p * 8).cast::<[T; 8]>(),
                &*b.add(p * 4).cast::<[T; 4]>(),
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
            unsafe { *c.add(i + j * ldc) += alpha * *v };
        }
    }
}

/// No vector kernels on this architecture (yet): the portable one serves.
#[cfg(not(target_arch = "x86_64"))]
mod arch {
    use super::MicroKernel;

    pub fn dgemm() -> Vec<MicroKernel<f64>> {
        Vec::new()
    }

    pub fn sgemm() -> Vec<MicroKernel<f32>> {
        Vec::new()
    }
}

#[cfg(target_arch = "x86_64")]
mod arch {
    use super::MicroKernel;
    use core::arch::x86_64::*;

    /// Whether this CPU runs the AVX-512F kernels and the AVX2+FMA ones.
    fn levels() -> (bool, bool) {
        (
            std::arch::is_x86_feature_detected!("avx512f"),
            std::arch::is_x86_feature_detected!("avx2")
                && std::arch::is_x86_feature_detected!("fma"),
        )
    }

    /// The DGEMM kernels this CPU runs, widest first.
    pub fn dgemm() -> Vec<MicroKernel<f64>> {
        let (avx512, avx2) = levels();
        let wide = MicroKernel {
            mr: 24,
            nr: 8,
            isa: "AVX-512",
            kind: crate::sysinfo::Isa::Avx512,
            kc_max: 512,
            run: dgemm_24x8_avx512,
        };
        let narrow = MicroKernel {
            mr: 8,
            nr: 6,
            isa: "AVX2+FMA",
            kind: crate::sysinfo::Isa::Avx2,
            kc_max: 256,
            run: dgemm_8x6_avx2,
        };
        [avx512.then_some(wide), avx2.then_some(narrow)]
            .into_iter()
            .flatten()
            .collect()
    }

    /// The SGEMM kernels this CPU runs, widest first.
    pub fn sgemm() -> Vec<MicroKernel<f32>> {
        let (avx512, avx2) = levels();
        let wide = MicroKernel {
            mr: 48,
            nr: 8,
            isa: "AVX-512",
            kind: crate::sysinfo::Isa::Avx512,
            kc_max: 512,
            run: sgemm_48x8_avx512,
        };
        let narrow = MicroKernel {
            mr: 16,
            nr: 6,
            isa: "AVX2+FMA",
            kind: crate::sysinfo::Isa::Avx2,
            kc_max: 256,
            run: sgemm_16x6_avx2,
        };
        [avx512.then_some(wide), avx2.then_some(narrow)]
            .into_iter()
            .flatten()
            .collect()
    }

    /// The steps before an AVX-512 kernel's end at which it prefetches its tile of C (twice as
    /// many for AVX2's, of half the FMAs a step): about 400 cycles, a memory access's latency.
    /// Prefetched at the start, as it was, the tile was evicted by the panel of A streaming
    /// through L1 meanwhile (72 KiB of DGEMM's). On a Zen 5, medians of 4 interleaved rounds:
    /// DGEMM N = 4000 1.028 × the rate before at 1 thread and 1.015 × at 2 (AVX2 1.025, 1.024),
    /// SGEMM 1.011 and 1.015 (AVX2 1.014, 1.010); at N = 2000 0.985–1.035 (two thirds above 1).
    const LATE_C: usize = 32;

    /// A tile of C as a kernel prefetches it: `vectors` vectors of `lanes` values down each of
    /// its `cols` columns, `ldc` values apart.
    #[derive(Clone, Copy)]
    struct TileLines {
        ldc: usize,
        lanes: usize,
        vectors: usize,
        cols: usize,
    }

    impl TileLines {
        /// Every line of the tile at `c`.
        #[inline(always)]
        fn all<T>(self, c: *const T) {
            for j in 0..self.cols {
                for r in 0..self.vectors {
                    let at = c.wrapping_add(j * self.ldc + r * self.lanes);
                    // SAFETY: a prefetch never faults, whatever the address.
                    unsafe { _mm_prefetch::<_MM_HINT_T0>(at.cast()) };
                }
            }
        }

        /// Line `line` of the tile at `c`, then the next at the next call, until the tile's
        /// lines are all asked for.
        #[inline(always)]
        fn next<T>(self, c: *const T, line: &mut usize) {
            if *line < self.cols * self.vectors {
                let (j, r) = (*line / self.vectors, *line % self.vectors);
                let at = c.wrapping_add(j * self.ldc + r * self.lanes);
                // SAFETY: a prefetch never faults, whatever the address.
                unsafe { _mm_prefetch::<_MM_HINT_T0>(at.cast()) };
                *line += 1;
            }
        }
    }

    /// The AVX-512 kernel of one element type: MR = 3 vectors of `$lanes`, NR = 8; three zmm
    /// of Ã per step, eight broadcasts of B̃, 24 FMAs. The A panel streams from L2 and is
    /// prefetched 8 steps ahead (three cache lines a step for both types); the tile of C is
    /// prefetched [`LATE_C`] steps before the end, to be in L1 then, and the next tile a line
    /// at a time.
    macro_rules! avx512_kernel {
        ($name:ident, $t:ty, $lanes:literal, $zero:ident, $load:ident, $store:ident, $set1:ident, $fma:ident) => {
            /// # Safety
            /// As [`MicroKernel::run`] with MR = 3 × lanes, NR = 8,
            /// on a CPU with AVX-512F.
            #[target_feature(enable = "avx512f")]
            pub unsafe fn $name(
                kc: usize,
                a: *const $t,
                b: *const $t,
                c: *mut $t,
                ldc: usize,
                alpha: $t,
            ) {
                const MR: usize = 3 * $lanes;
                const PREFETCH_A: usize = 8 * MR;
                // SAFETY: every pointer stays inside the panels (kc steps of MR and 8 values)
                // and the MR × 8 tile of C, as the caller promises; prefetches never fault.
                unsafe {
                    let mut acc = [[$zero(); 3]; 8];
                    let (mut a, mut b) = (a, b);
                    // A multiple of 8 below kc (the loop's steps), 0 for a short panel.
                    let late = kc.saturating_sub(LATE_C) / 8 * 8;
                    // The tile below this one, which the macro-kernel multiplies next: one of
                    // its 24 cache lines every eight steps, so that it is near when that call
                    // starts and its misses never come all at once (2–3 % of DGEMM at N = 4000
                    // on Zen 4, where C comes from memory).
                    let next = c.wrapping_add(MR);
                    let tile = TileLines {
                        ldc,
                        lanes: $lanes,
                        vectors: 3,
                        cols: 8,
                    };
                    let mut line = 0;
                    for k in (0..kc).step_by(8) {
                        if k == late {
                            tile.all(c);
                        }
                        tile.next(next, &mut line);
                        for _ in k..(k + 8).min(kc) {
                            _mm_prefetch::<_MM_HINT_T0>(a.wrapping_add(PREFETCH_A).cast());
                            _mm_prefetch::<_MM_HINT_T0>(a.wrapping_add(PREFETCH_A + $lanes).cast());
                            _mm_prefetch::<_MM_HINT_T0>(
                                a.wrapping_add(PREFETCH_A + 2 * $lanes).cast(),
                            );
                            let a0 = $load(a);
                            let a1 = $load(a.add($lanes));
                            let a2 = $load(a.add(2 * $lanes));
                            for (j, col) in acc.iter_mut().enumerate() {
                                let bj = $set1(*b.add(j));
                                col[0] = $fma(a0, bj, col[0]);
                                col[1] = $fma(a1, bj, col[1]);
                                col[2] = $fma(a2, bj, col[2]);
                            }
                            a = a.add(MR);
                            b = b.add(8);
                        }
                    }
                    let al = $set1(alpha);
                    for (j, col) in acc.iter().enumerate() {
                        let cj = c.add(j * ldc);
                        for (r, v) in col.iter().enumerate() {
                            let p = cj.add(r * $lanes);
                            $store(p, $fma(*v, al, $load(p)));
                        }
                    }
                }
            }
        };
    }

    /// The AVX2 kernel of one element type: MR = 2 vectors of `$lanes`, NR = 6; two ymm of Ã
    /// per step, six broadcasts of B̃, 12 FMAs. Ã is prefetched 8 steps ahead (its one cache
    /// line a step), the tile of C late and the next tile a line every eight steps, as the
    /// AVX-512 kernel does (on a Zen 5 with `--isa avx2`, N = 4000, medians of 3 interleaved
    /// rounds against the kernel without: 1.008 × at 1 thread and 1.014 × at 2, SGEMM 1.007
    /// and 1.020).
    macro_rules! avx2_kernel {
        ($name:ident, $t:ty, $lanes:literal, $zero:ident, $load:ident, $store:ident, $set1:ident, $bcast:ident, $fma:ident) => {
            /// # Safety
            /// As [`MicroKernel::run`] with MR = 2 × lanes, NR = 6,
            /// on a CPU with AVX2 and FMA.
            #[target_feature(enable = "avx2,fma")]
            pub unsafe fn $name(
                kc: usize,
                a: *const $t,
                b: *const $t,
                c: *mut $t,
                ldc: usize,
                alpha: $t,
            ) {
                // SAFETY: as the AVX-512 kernel, with MR- and 6-value steps and an MR × 6 tile.
                unsafe {
                    const MR: usize = 2 * $lanes;
                    const PREFETCH_A: usize = 8 * MR;
                    let mut acc = [[$zero(); 2]; 6];
                    let (mut a, mut b) = (a, b);
                    // Half as many FMAs a step as the AVX-512 kernel's: twice the steps.
                    let late = kc.saturating_sub(2 * LATE_C) / 8 * 8;
                    let next = c.wrapping_add(MR);
                    let tile = TileLines {
                        ldc,
                        lanes: $lanes,
                        vectors: 2,
                        cols: 6,
                    };
                    let mut line = 0;
                    for k in (0..kc).step_by(8) {
                        if k == late {
                            tile.all(c);
                        }
                        tile.next(next, &mut line);
                        for _ in k..(k + 8).min(kc) {
                            _mm_prefetch::<_MM_HINT_T0>(a.wrapping_add(PREFETCH_A).cast());
                            let a0 = $load(a);
                            let a1 = $load(a.add($lanes));
                            for (j, col) in acc.iter_mut().enumerate() {
                                let bj = $bcast(&*b.add(j));
                                col[0] = $fma(a0, bj, col[0]);
                                col[1] = $fma(a1, bj, col[1]);
                            }
                            a = a.add(MR);
                            b = b.add(6);
                        }
                    }
                    let al = $set1(alpha);
                    for (j, col) in acc.iter().enumerate() {
                        let cj = c.add(j * ldc);
                        for (r, v) in col.iter().enumerate() {
                            let p = cj.add(r * $lanes);
                            $store(p, $fma(*v, al, $load(p)));
                        }
                    }
                }
            }
        };
    }

    avx512_kernel!(
        dgemm_24x8_avx512,
        f64,
        8,
        _mm512_setzero_pd,
        _mm512_loadu_pd,
        _mm512_storeu_pd,
        _mm512_set1_pd,
        _mm512_fmadd_pd
    );
    avx512_kernel!(
        sgemm_48x8_avx512,
        f32,
        16,
        _mm512_setzero_ps,
        _mm512_loadu_ps,
        _mm512_storeu_ps,
        _mm512_set1_ps,
        _mm512_fmadd_ps
    );
    avx2_kernel!(
        dgemm_8x6_avx2,
        f64,
        4,
        _mm256_setzero_pd,
        _mm256_loadu_pd,
        _mm256_storeu_pd,
        _mm256_set1_pd,
        _mm256_broadcast_sd,
        _mm256_fmadd_pd
    );
    avx2_kernel!(
        sgemm_16x6_avx2,
        f32,
        8,
        _mm256_setzero_ps,
        _mm256_loadu_ps,
        _mm256_storeu_ps,
        _mm256_set1_ps,
        _mm256_broadcast_ss,
        _mm256_fmadd_ps
    );
}
