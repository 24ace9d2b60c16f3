//! Memory bandwidth kernels: copy, scale, add, triad (the STREAM kernels), add3 (three reads to
//! a write), fill and read, over f64 elements, with regular or non-temporal stores, for AVX-512,
//! AVX2 and portable code.
//!
//! Each kernel streams through its ranges once: a scalar head until the destination is aligned
//! to the vector width, a body unrolled by four vectors, a scalar tail. Non-temporal stores bypass
//! the caches (no read-for-ownership of the destination line), which is what lets a copy move
//! only the bytes STREAM counts; an `sfence` ends every call, as the ISA requires before the data
//! may be read by another thread.
//!
//! All functions are `unsafe`: the caller guarantees that every range is valid, that `n`
//! elements fit, and that the kernel's ISA is supported by the machine.

/// The kernels of one ISA and store mode.
#[derive(Clone, Copy)]
pub struct Kernels {
    /// dst[i] = src[i]
    pub copy: unsafe fn(*mut f64, *const f64, usize),
    /// dst[i] = s × src[i]
    pub scale: unsafe fn(*mut f64, *const f64, f64, usize),
    /// dst[i] = a[i] + b[i]
    pub add: unsafe fn(*mut f64, *const f64, *const f64, usize),
    /// dst[i] = b[i] + s × c[i]
    pub triad: unsafe fn(*mut f64, *const f64, *const f64, f64, usize),
    /// dst[i] = a[i] + b[i] + c[i]: three reads to a write (MLC's 3:1 mix).
    pub add3: unsafe fn(*mut f64, *const f64, *const f64, *const f64, usize),
    /// dst[i] = v
    pub fill: unsafe fn(*mut f64, f64, usize),
    /// Sum of the 64-bit words (so the loads cannot be dropped).
    pub read: unsafe fn(*const f64, usize) -> u64,
}

/// Portable kernels (the compiler vectorises them for the baseline ISA), regular stores.
mod portable {
    pub unsafe fn copy(d: *mut f64, s: *const f64, n: usize) {
        // SAFETY: the caller guarantees both ranges hold n elements and do not overlap.
        unsafe { std::ptr::copy_nonoverlapping(s, d, n) }
    }
    pub unsafe fn scale(d: *mut f64, s: *const f64, k: f64, n: usize) {
        for i in 0..n {
            // SAFETY: i < n, within both ranges.
            unsafe { *d.add(i) = k * *s.add(i) }
        }
    }
    pub unsafe fn add(d: *mut f64, a: *const f64, b: *const f64, n: usize) {
        for i in 0..n {
            // SAFETY: i < n, within all ranges.
            unsafe { *d.add(i) = *a.add(i) + *b.add(i) }
        }
    }
    pub unsafe fn triad(d: *mut f64, b: *const f64, c: *const f64, k: f64, n: usize) {
        for i in 0..n {
            // SAFETY: i < n, within all ranges.
            unsafe { *d.add(i) = *b.add(i) + k * *c.add(i) }
        }
    }
    pub unsafe fn add3(d: *mut f64, a: *const f64, b: *const f64, c: *const f64, n: usize) {
        for i in 0..n {
            // SAFETY: i < n, within all ranges.
            unsafe { *d.add(i) = *a.add(i) + *b.add(i) + *c.add(i) }
        }
    }
    pub unsafe fn fill(d: *mut f64, v: f64, n: usize) {
        for i in 0..n {
            // SAFETY: i < n, within the range.
            unsafe { *d.add(i) = v }
        }
    }
    pub unsafe fn read(s: *const f64, n: usize) -> u64 {
        let s = s as *const u64;
        let mut acc = [0u64; 4];
        let mut i = 0;
        while i + 4 <= n {
            for (k, a) in acc.iter_mut().enumerate() {
                // SAFETY: i + k < n, within the range.
                *a = a.wrapping_add(unsafe { *s.add(i + k) });
            }
            i += 4;
        }
        while i < n {
            // SAFETY: i < n.
            acc[0] = acc[0].wrapping_add(unsafe { *s.add(i) });
            i += 1;
        }
        acc.iter().fold(0, |x, y| x.wrapping_add(*y))
    }
}

/// Orders the non-temporal stores issued so far before any later store (x86 `sfence`); a no-op
/// elsewhere.
pub fn fence() {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: SFENCE is part of SSE, present on every x86_64 CPU; it has no operands.
    unsafe {
        core::arch::x86_64::_mm_sfence()
    }
}

pub const PORTABLE: Kernels = Kernels {
    copy: portable::copy,
    scale: portable::scale,
    add: portable::add,
    triad: portable::triad,
    add3: portable::add3,
    fill: portable::fill,
    read: portable::read,
};

/// Runs `scalar(i)` for the head (until the destination is vector-aligned) and the tail, and
/// `vector(j)` for the aligned middle, unrolled by four; ends with `sfence` after NT stores.
/// Used inside the generated modules, where `head`, `L` and `NT` are defined.
#[cfg(target_arch = "x86_64")]
macro_rules! sweep {
    ($d:expr, $n:expr, |$i:ident| $scalar:expr, |$j:ident| $vector:expr) => {{
        let n = $n;
        let h = head($d, n);
        for $i in 0..h {
            $scalar
        }
        let mut $j = h;
        while $j + 4 * L <= n {
            $vector;
            $j += L;
            $vector;
            $j += L;
            $vector;
            $j += L;
            $vector;
            $j += L;
        }
        while $j + L <= n {
            $vector;
            $j += L;
        }
        for $i in $j..n {
            $scalar
        }
    }};
}

/// Generates the kernels of one x86 vector ISA.
#[cfg(target_arch = "x86_64")]
macro_rules! x86_kernels {
    ($m:ident, $feat:literal, $lanes:expr, $vt:ty, $it:ty,
     $loadu:ident, $store:ident, $stream:ident, $set1:ident, $addpd:ident, $mulpd:ident,
     $fmadd:ident, $iload:ident, $iadd:ident, $izero:ident) => {
        mod $m {
            use core::arch::x86_64::*;
            const L: usize = $lanes;
            const ALIGN: usize = L * 8;

            /// Elements before `d` reaches the vector alignment (at most n).
            #[inline(always)]
            fn head(d: *const f64, n: usize) -> usize {
                (((ALIGN - (d as usize % ALIGN)) % ALIGN) / 8).min(n)
            }

            #[inline]
            #[target_feature(enable = $feat)]
            unsafe fn put<const NT: bool>(p: *mut f64, v: $vt) {
                // SAFETY: p is vector-aligned and within the destination (the caller's loop).
                unsafe { if NT { $stream(p, v) } else { $store(p, v) } }
            }

            #[target_feature(enable = $feat)]
            pub unsafe fn copy<const NT: bool>(d: *mut f64, s: *const f64, n: usize) {
                // SAFETY: indices stay below n, within the caller's ranges.
                unsafe {
                    sweep!(d, n, |i| *d.add(i) = *s.add(i), |j| put::<NT>(
                        d.add(j),
                        $loadu(s.add(j))
                    ))
                }
            }
            #[target_feature(enable = $feat)]
            pub unsafe fn scale<const NT: bool>(d: *mut f64, s: *const f64, k: f64, n: usize) {
                let kv = $set1(k);
                // SAFETY: indices stay below n, within the caller's ranges.
                unsafe {
                    sweep!(d, n, |i| *d.add(i) = k * *s.add(i), |j| put::<NT>(
                        d.add(j),
                        $mulpd(kv, $loadu(s.add(j)))
                    ))
                }
            }
            #[target_feature(enable = $feat)]
            pub unsafe fn add<const NT: bool>(d: *mut f64, a: *const f64, b: *const f64, n: usize) {
                // SAFETY: indices stay below n, within the caller's ranges.
                unsafe {
                    sweep!(d, n, |i| *d.add(i) = *a.add(i) + *b.add(i), |j| put::<NT>(
                        d.add(j),
                        $addpd($loadu(a.add(j)), $loadu(b.add(j)))
                    ))
                }
            }
            #[target_feature(enable = $feat)]
            pub unsafe fn triad<const NT: bool>(
                d: *mut f64,
                b: *const f64,
                c: *const f64,
                k: f64,
                n: usize,
            ) {
                let kv = $set1(k);
                // SAFETY: indices stay below n, within the caller's ranges.
                unsafe {
                    sweep!(
                        d,
                        n,
                        |i| *d.add(i) = *b.add(i) + k * *c.add(i),
                        |j| put::<NT>(d.add(j), $fmadd(kv, $loadu(c.add(j)), $loadu(b.add(j))))
                    )
                }
            }
            #[target_feature(enable = $feat)]
            pub unsafe fn add3<const NT: bool>(
                d: *mut f64,
                a: *const f64,
                b: *const f64,
                c: *const f64,
                n: usize,
            ) {
                // SAFETY: indices stay below n, within the caller's ranges.
                unsafe {
                    sweep!(
                        d,
                        n,
                        |i| *d.add(i) = *a.add(i) + *b.add(i) + *c.add(i),
                        |j| put::<NT>(
                            d.add(j),
                            $addpd($addpd($loadu(a.add(j)), $loadu(b.add(j))), $loadu(c.add(j)))
                        )
                    )
                }
            }
            #[target_feature(enable = $feat)]
            pub unsafe fn fill<const NT: bool>(d: *mut f64, v: f64, n: usize) {
                let vv = $set1(v);
                // SAFETY: indices stay below n, within the caller's range.
                unsafe { sweep!(d, n, |i| *d.add(i) = v, |j| put::<NT>(d.add(j), vv)) }
            }
            #[target_feature(enable = $feat)]
            pub unsafe fn read(s: *const f64, n: usize) -> u64 {
                let (mut a0, mut a1, mut a2, mut a3): ($it, $it, $it, $it) =
                    ($izero(), $izero(), $izero(), $izero());
                let mut j = 0;
                let mut tail = 0u64;
                // SAFETY: indices stay below n, within the caller's range.
                unsafe {
                    let p = s as *const $it;
                    while j + 4 * L <= n {
                        let q = p.add(j / L);
                        a0 = $iadd(a0, $iload(q));
                        a1 = $iadd(a1, $iload(q.add(1)));
                        a2 = $iadd(a2, $iload(q.add(2)));
                        a3 = $iadd(a3, $iload(q.add(3)));
                        j += 4 * L;
                    }
                    for i in j..n {
                        tail = tail.wrapping_add(*(s as *const u64).add(i));
                    }
                }
                let sum = $iadd($iadd(a0, a1), $iadd(a2, a3));
                // SAFETY: a vector of 64-bit lanes reinterpreted as its lanes.
                let lanes: [u64; L] = unsafe { core::mem::transmute(sum) };
                lanes.iter().fold(tail, |x, y| x.wrapping_add(*y))
            }
        }
    };
}

#[cfg(target_arch = "x86_64")]
x86_kernels!(
    avx512,
    "avx512f",
    8,
    __m512d,
    __m512i,
    _mm512_loadu_pd,
    _mm512_store_pd,
    _mm512_stream_pd,
    _mm512_set1_pd,
    _mm512_add_pd,
    _mm512_mul_pd,
    _mm512_fmadd_pd,
    _mm512_loadu_si512,
    _mm512_add_epi64,
    _mm512_setzero_si512
);
#[cfg(target_arch = "x86_64")]
x86_kernels!(
    avx2,
    "avx2,fma",
    4,
    __m256d,
    __m256i,
    _mm256_loadu_pd,
    _mm256_store_pd,
    _mm256_stream_pd,
    _mm256_set1_pd,
    _mm256_add_pd,
    _mm256_mul_pd,
    _mm256_fmadd_pd,
    _mm256_loadu_si256,
    _mm256_add_epi64,
    _mm256_setzero_si256
);

/// Builds the kernel table of `$m` with NT or regular stores.
#[cfg(target_arch = "x86_64")]
macro_rules! table {
    ($m:ident, $nt:literal) => {
        Kernels {
            copy: $m::copy::<$nt>,
            scale: $m::scale::<$nt>,
            add: $m::add::<$nt>,
            triad: $m::triad::<$nt>,
            add3: $m::add3::<$nt>,
            fill: $m::fill::<$nt>,
            read: $m::read,
        }
    };
}

/// The kernels for `isa` (AVX-512 and AVX2 have their own; others use portable code, which has
/// no non-temporal stores) and whether they use non-temporal stores.
/// Whether `isa` has kernels of its own here (others would run the portable ones).
pub fn has_kernels(isa: crate::sysinfo::Isa) -> bool {
    isa == crate::sysinfo::Isa::Scalar
        || (cfg!(target_arch = "x86_64")
            && matches!(isa, crate::sysinfo::Isa::Avx512 | crate::sysinfo::Isa::Avx2))
}

pub fn kernels(isa: crate::sysinfo::Isa, nt: bool) -> (Kernels, bool) {
    match (isa, nt) {
        #[cfg(target_arch = "x86_64")]
        (crate::sysinfo::Isa::Avx512, true) => (table!(avx512, true), true),
        #[cfg(target_arch = "x86_64")]
        (crate::sysinfo::Isa::Avx512, false) => (table!(avx512, false), false),
        #[cfg(target_arch = "x86_64")]
        (crate::sysinfo::Isa::Avx2, true) => (table!(avx2, true), true),
        #[cfg(target_arch = "x86_64")]
        (crate::sysinfo::Isa::Avx2, false) => (table!(avx2, false), false),
        _ => (PORTABLE, false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sysinfo::Isa;

    /// Every kernel of every ISA this machine runs computes the right values, for lengths and
    /// offsets that exercise head, body and tail.
    #[test]
    fn kernels_are_correct() {
        #[cfg_attr(not(target_arch = "x86_64"), allow(unused_mut))]
        let mut isas = vec![Isa::Scalar];
        #[cfg(target_arch = "x86_64")]
        {
            if std::is_x86_feature_detected!("avx512f") {
                isas.push(Isa::Avx512);
            }
            if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma") {
                isas.push(Isa::Avx2);
            }
        }
        for isa in isas {
            for nt in [false, true] {
                let (k, _) = kernels(isa, nt);
                for (off, n) in [(0, 0), (0, 1), (1, 37), (3, 200), (0, 256), (5, 1000)] {
                    let src: Vec<f64> = (0..n + 8).map(|i| i as f64).collect();
                    let b: Vec<f64> = (0..n + 8).map(|i| 2.0 * i as f64).collect();
                    let mut dst = vec![-1.0; n + 8];
                    let (s, bp, d) = (
                        src[off..].as_ptr(),
                        b[off..].as_ptr(),
                        dst[off..].as_mut_ptr(),
                    );
                    // SAFETY: every range holds n elements from `off`.
                    unsafe {
                        (k.copy)(d, s, n);
                        fence();
                        assert_eq!(&dst[off..off + n], &src[off..off + n], "{isa} copy {n}");
                        (k.scale)(d, s, 3.0, n);
                        assert!((0..n).all(|i| dst[off + i] == 3.0 * src[off + i]));
                        (k.add)(d, s, bp, n);
                        assert!((0..n).all(|i| dst[off + i] == src[off + i] + b[off + i]));
                        (k.triad)(d, bp, s, 3.0, n);
                        assert!((0..n).all(|i| dst[off + i] == b[off + i] + 3.0 * src[off + i]));
                        (k.add3)(d, s, bp, s, n);
                        assert!((0..n).all(|i| dst[off + i] == 2.0 * src[off + i] + b[off + i]));
                        (k.fill)(d, 7.0, n);
                        assert!((0..n).all(|i| dst[off + i] == 7.0));
                        let words: u64 = src[off..off + n]
                            .iter()
                            .fold(0u64, |x, v| x.wrapping_add(v.to_bits()));
                        assert_eq!((k.read)(s, n), words, "{isa} read {n}");
                    }
                    assert_eq!(dst[off + n], -1.0, "{isa} wrote past the end");
                    if off > 0 {
                        assert_eq!(dst[off - 1], -1.0, "{isa} wrote before the start");
                    }
                }
            }
        }
    }
}
