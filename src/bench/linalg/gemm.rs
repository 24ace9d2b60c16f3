//! C = α·A·B + β·C in double precision, BLIS-style: B is packed in KC × NC blocks (kept in the
//! last-level cache), A in MC × KC blocks (kept in L2), and the micro-kernel multiplies an MR-row
//! panel of the one by an NR-column panel of the other with the tile of C in registers (the
//! KC × NR panel of B stays in L1). Threads share the work in a grid ([`super::grid`]).

use super::kernels::{self, Element, MicroKernel};
use super::pack::{pack_a, pack_b};
use super::tiles::{Tiles, scale_column};

/// A read-only column-major matrix: `rows × cols`, element (i, j) at `data[i + j·ld]`.
#[derive(Debug, Clone, Copy)]
pub struct MatRef<'a, T = f64> {
    pub data: &'a [T],
    pub rows: usize,
    pub cols: usize,
    pub ld: usize,
}

/// A writable column-major matrix.
#[derive(Debug)]
pub struct MatMut<'a, T = f64> {
    pub data: &'a mut [T],
    pub rows: usize,
    pub cols: usize,
    pub ld: usize,
}

/// Why a multiply cannot be done.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShapeError {
    #[error("a {rows} × {cols} matrix with leading dimension {ld} does not fit its {len} values")]
    Storage {
        rows: usize,
        cols: usize,
        ld: usize,
        len: usize,
    },
    #[error("cannot multiply {0} × {1} by {2} × {3} into {4} × {5}")]
    Mismatch(usize, usize, usize, usize, usize, usize),
}

/// Whether a `rows × cols` matrix with leading dimension `ld` fits `len` values (overflow
/// checked).
pub(super) fn fits(rows: usize, cols: usize, ld: usize, len: usize) -> Result<(), ShapeError> {
    let need = match cols {
        0 => Some(0),
        _ if rows == 0 => Some(0),
        _ => ld.checked_mul(cols - 1).and_then(|x| x.checked_add(rows)),
    };
    if ld < rows.max(1) || need.is_none_or(|n| n > len) {
        return Err(ShapeError::Storage {
            rows,
            cols,
            ld,
            len,
        });
    }
    Ok(())
}

impl<T: Copy> MatRef<'_, T> {
    fn check(&self) -> Result<(), ShapeError> {
        fits(self.rows, self.cols, self.ld, self.data.len())
    }
    fn at(&self, i: usize, j: usize) -> T {
        self.data[i + j * self.ld]
    }
}

impl<T> MatMut<'_, T> {
    fn check(&self) -> Result<(), ShapeError> {
        fits(self.rows, self.cols, self.ld, self.data.len())
    }
}

/// The cache blocking of one multiply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Blocking {
    pub mc: usize,
    pub kc: usize,
    pub nc: usize,
}

impl Blocking {
    /// From the cache sizes one thread may use (bytes; None: unknown, a common size is
    /// assumed): the KC × NR panel of B in half of L1 (KC at most the kernel's
    /// [`MicroKernel::kc_max`]), the MC × KC block of A in half of L2
    /// (as BLIS's skx and zen3 blocks, 47 and 56 %: the rest of L2 holds the panels of B and
    /// tiles of C on their way; with three quarters, a 16-core Emerald Rapids multiplied at
    /// 0.65 of its rate with half on 16 threads, while 1 or 2 threads of a Zen 5 read the same
    /// with either), the KC × NC block of B in half of the thread's share of the last-level
    /// cache.
    pub fn for_caches<T>(
        k: &MicroKernel<T>,
        l1: Option<u64>,
        l2: Option<u64>,
        l3_share: Option<u64>,
    ) -> Blocking {
        let l1 = l1.unwrap_or(32 << 10) as usize;
        let l2 = l2.unwrap_or(1 << 20) as usize;
        let l3 = l3_share.unwrap_or(4 << 20) as usize;
        let size = std::mem::size_of::<T>();
        let kc = (l1 / 2 / (size * k.nr)).clamp(64, k.kc_max.max(64)) / 8 * 8;
        let mc = ((l2 / 2 / (size * kc)) / k.mr).clamp(1, 64) * k.mr;
        let nc = ((l3 / 2 / (size * kc)) / k.nr).clamp(1, 1024) * k.nr;
        Blocking { mc, kc, nc }
    }
}

/// One multiply's plan: the micro-kernel, the blocking and the threads.
#[derive(Debug, Clone, Copy)]
pub struct Gemm<T = f64> {
    pub kernel: MicroKernel<T>,
    pub blocking: Blocking,
    pub threads: usize,
}

impl<T: Element> Gemm<T> {
    /// The best kernel of this CPU with the default blocking, on `threads` threads.
    pub fn new(threads: usize) -> Gemm<T> {
        let kernel = kernels::best::<T>();
        Gemm {
            kernel,
            blocking: Blocking::for_caches(&kernel, None, None, None),
            threads: threads.max(1),
        }
    }

    /// C = α·A·B + β·C. The threads share C's columns and rows ([`super::grid::Grid`]).
    pub fn run(
        &self,
        alpha: T,
        a: MatRef<T>,
        b: MatRef<T>,
        beta: T,
        c: MatMut<T>,
    ) -> Result<(), ShapeError> {
        a.check()?;
        self.run_src(alpha, Src::Plain(a), b, beta, c)
    }

    /// C = α·A·B + β·C with A packed beforehand ([`Gemm::pack`]): for several multiplies by
    /// the same A, which is then packed once.
    pub fn run_packed(
        &self,
        alpha: T,
        a: &PackedA<T>,
        b: MatRef<T>,
        beta: T,
        c: MatMut<T>,
    ) -> Result<(), ShapeError> {
        if a.mr != self.kernel.mr || a.kc != self.blocking.kc || a.mc != self.blocking.mc {
            return Err(ShapeError::Mismatch(
                a.rows, a.cols, b.rows, b.cols, c.rows, c.cols,
            ));
        }
        self.run_src(alpha, Src::Packed(a), b, beta, c)
    }

    /// Packs A in the layout the multiply reads (MR-row panels, KC-deep blocks), on the plan's
    /// threads.
    pub fn pack(&self, a: MatRef<T>) -> Result<PackedA<T>, ShapeError> {
        a.check()?;
        let (mr, kc) = (self.kernel.mr, self.blocking.kc);
        let (m, k) = (a.rows, a.cols);
        let padded = m.div_ceil(mr) * mr;
        let mut data = Aligned::new(padded * k);
        let all = data.slice(padded * k);
        let panels = padded / mr;
        let threads = self.threads.clamp(1, panels.max(1));
        let per = panels.div_ceil(threads).max(1);
        let mut rest = all;
        for pc in (0..k).step_by(kc.max(1)) {
            let kb = kc.min(k - pc);
            let (block, tail) = std::mem::take(&mut rest).split_at_mut(padded * kb);
            rest = tail;
            // On one thread, no thread: spawning one took as long as packing a LINPACK
            // step's L21 (about 0.1 ms under KVM).
            if threads == 1 {
                pack_a(a.data, a.ld, 0, m, pc, kb, mr, block);
                continue;
            }
            std::thread::scope(|s| {
                for (t, out) in block.chunks_mut(per * mr * kb).enumerate() {
                    let ic = t * per * mr;
                    let mb = (per * mr).min(m.saturating_sub(ic));
                    s.spawn(move || pack_a(a.data, a.ld, ic, mb, pc, kb, mr, out));
                }
            });
        }
        Ok(PackedA {
            data,
            rows: m,
            cols: k,
            mr,
            kc,
            mc: self.blocking.mc,
        })
    }

    fn run_src(
        &self,
        alpha: T,
        a: Src<T>,
        b: MatRef<T>,
        beta: T,
        c: MatMut<T>,
    ) -> Result<(), ShapeError> {
        b.check()?;
        c.check()?;
        let (a_rows, a_cols) = a.shape();
        if a_rows != c.rows || b.cols != c.cols || a_cols != b.rows {
            return Err(ShapeError::Mismatch(
                a_rows, a_cols, b.rows, b.cols, c.rows, c.cols,
            ));
        }
        let tiles = c.rows.div_ceil(self.kernel.mr) * c.cols.div_ceil(self.kernel.nr);
        let threads = self.threads.clamp(1, tiles.max(1));
        if threads == 1 {
            self.serial(alpha, a, b, beta, c);
        } else {
            self.run_grid(alpha, a, b, beta, c, threads);
        }
        Ok(())
    }

    /// The scratch values one thread's multiply of an m × n × k product needs: the packed
    /// block of B, the packed block of A (none where A is packed beforehand) and an edge tile,
    /// each with room to start on a cache line.
    pub(super) fn scratch_len(&self, packed: bool, m: usize, n: usize, k: usize) -> usize {
        let (mr, nr) = (self.kernel.mr, self.kernel.nr);
        let Blocking { mc, kc, .. } = self.blocking;
        let alen = if packed {
            0
        } else {
            kc.min(k) * mc.min(m).div_ceil(mr) * mr
        };
        mr * nr + self.b_block_len(n, k) + alen + 2 * (64 / std::mem::size_of::<T>())
    }

    /// The values of the largest packed block of B of an n-column, k-deep B.
    pub(super) fn b_block_len(&self, n: usize, k: usize) -> usize {
        let Blocking { kc, nc, .. } = self.blocking;
        kc.min(k) * nc.min(n).div_ceil(self.kernel.nr) * self.kernel.nr
    }

    /// One thread's multiply (shapes already checked), in this thread's scratch buffer.
    fn serial(&self, alpha: T, a: Src<T>, b: MatRef<T>, beta: T, c: MatMut<T>) {
        let (m, n, k) = (c.rows, c.cols, a.shape().1);
        if m == 0 || n == 0 {
            return;
        }
        for j in 0..n {
            scale_column(&mut c.data[j * c.ld..j * c.ld + m], beta);
        }
        if k == 0 || alpha == T::ZERO {
            return;
        }
        // The packing buffers are the thread's scratch, only as large as this multiply needs:
        // small multiplies (a panel's, a chunk's) are many, and allocating and zeroing
        // buffers for each cost more than some of their work.
        let len = self.scratch_len(matches!(a, Src::Packed(_)), m, n, k);
        T::with_scratch(len, |scratch| {
            let extra = 64 / std::mem::size_of::<T>();
            let (edge, rest) = scratch.split_at_mut(self.kernel.mr * self.kernel.nr);
            let (bs, as_) = rest.split_at_mut(self.b_block_len(n, k) + extra);
            let (bbuf, abuf) = (aligned(bs), aligned(as_));
            self.blocks(alpha, a, b, c, bbuf, abuf, edge);
        });
    }

    /// The blocked loops of [`Gemm::serial`], packing B into `bbuf` and A into `abuf`; the
    /// kernel writes edge tiles into `edge` (MR × NR values).
    #[allow(clippy::too_many_arguments)]
    fn blocks(
        &self,
        alpha: T,
        a: Src<T>,
        b: MatRef<T>,
        c: MatMut<T>,
        bbuf: &mut [T],
        abuf: &mut [T],
        edge: &mut [T],
    ) {
        let (m, n, k) = (c.rows, c.cols, a.shape().1);
        let nr = self.kernel.nr;
        let Blocking { kc, nc, .. } = self.blocking;
        let tiles = Tiles::new(c.data, c.ld);
        for jc in (0..n).step_by(nc) {
            let nb = nc.min(n - jc);
            for pc in (0..k).step_by(kc) {
                let kb = kc.min(k - pc);
                let bp = &mut bbuf[..kb * nb.div_ceil(nr) * nr];
                pack_b(b.data, b.ld, pc, kb, jc, nb, nr, bp);
                self.row_blocks(alpha, a, (pc, kb), (jc, nb), bp, (0, m), &tiles, abuf, edge);
            }
        }
    }

    /// C's rows r0..r1 (whole MR panels from r0) of columns jc..jc+nb += α · A's same rows of
    /// columns pc..pc+kb · the block of B packed in `bp` (those kb rows of B, those nb columns),
    /// A's blocks packed into `abuf`; the kernel writes edge tiles into `edge`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn row_blocks(
        &self,
        alpha: T,
        a: Src<T>,
        (pc, kb): (usize, usize),
        (jc, nb): (usize, usize),
        bp: &[T],
        (r0, r1): (usize, usize),
        c: &Tiles<T>,
        abuf: &mut [T],
        edge: &mut [T],
    ) {
        let kern = &self.kernel;
        let (mr, nr) = (kern.mr, kern.nr);
        let ldc = c.ld;
        for ic in (r0..r1).step_by(self.blocking.mc) {
            let mb = self.blocking.mc.min(r1 - ic);
            let len = kb * mb.div_ceil(mr) * mr;
            let ap: &[T] = match a {
                Src::Plain(a) => {
                    let ap = &mut abuf[..len];
                    pack_a(a.data, a.ld, ic, mb, pc, kb, mr, ap);
                    ap
                }
                // The packed blocks of depth kb start at pc · padded rows.
                Src::Packed(p) => {
                    let at = pc * p.rows.div_ceil(mr) * mr + ic * kb;
                    &p.data.get()[at..at + len]
                }
            };
            let calls = mb.div_ceil(mr);
            for jr in (0..nb).step_by(nr) {
                let nrr = nr.min(nb - jr);
                let bpanel = &bp[jr * kb..(jr + nr) * kb];
                // The next panel of B, a share of it before each tile: it comes from the
                // last-level cache, and the first tile that reads it would wait.
                let bnext = bp.get((jr + nr) * kb..(jr + 2 * nr) * kb).unwrap_or(&[]);
                for ir in (0..mb).step_by(mr) {
                    let mrr = mr.min(mb - ir);
                    prefetch_part(bnext, ir / mr, calls);
                    let apanel = &ap[ir * kb..(ir + mr) * kb];
                    let (i, j) = (ic + ir, jc + jr);
                    if mrr == mr && nrr == nr {
                        // SAFETY: the panels hold kb·mr and kb·nr values, the tile is mr × nr
                        // with leading dimension ldc inside C (checked by `part`), this
                        // thread's alone (its rows of its columns), and the kernel is the
                        // CPU's own (kernels::best).
                        unsafe {
                            let tile = c.part(i + j * ldc, mr, nr);
                            kern.run(kb, apanel.as_ptr(), bpanel.as_ptr(), tile, ldc, alpha)
                        };
                    } else {
                        edge.fill(T::ZERO);
                        // SAFETY: as above, into the mr × nr buffer `edge` (ld = mr).
                        unsafe {
                            kern.run(
                                kb,
                                apanel.as_ptr(),
                                bpanel.as_ptr(),
                                edge.as_mut_ptr(),
                                mr,
                                alpha,
                            )
                        };
                        for jj in 0..nrr {
                            // SAFETY: this thread's rows of its columns (as above).
                            let col = unsafe { c.column(i, j + jj, mrr) };
                            for (x, e) in col.iter_mut().zip(&edge[jj * mr..]) {
                                *x += *e;
                            }
                        }
                    }
                }
            }
        }
    }
}

/// The A operand of a multiply: as it is, or packed once for several multiplies.
#[derive(Clone, Copy)]
pub(super) enum Src<'a, T> {
    Plain(MatRef<'a, T>),
    Packed(&'a PackedA<T>),
}

impl<T> Src<'_, T> {
    pub(super) fn shape(&self) -> (usize, usize) {
        match self {
            Src::Plain(a) => (a.rows, a.cols),
            Src::Packed(p) => (p.rows, p.cols),
        }
    }
}

/// A matrix packed for [`Gemm::run_packed`] by the plan that reads it.
pub struct PackedA<T = f64> {
    data: Aligned<T>,
    rows: usize,
    cols: usize,
    mr: usize,
    kc: usize,
    mc: usize,
}

impl<T> PackedA<T> {
    pub fn rows(&self) -> usize {
        self.rows
    }
}

/// Prefetches the `part`-th of `parts` equal shares of the cache lines of `data` (none past
/// its end; a no-op where the architecture has no prefetch instruction in stable Rust).
#[inline(always)]
fn prefetch_part<T>(data: &[T], part: usize, parts: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        let bytes = std::mem::size_of_val(data);
        let per = bytes.div_ceil(64).div_ceil(parts.max(1));
        let base = data.as_ptr().cast::<i8>();
        for line in part * per..((part + 1) * per).min(bytes.div_ceil(64)) {
            // SAFETY: a prefetch never faults, and the address is inside `data`.
            unsafe {
                core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(
                    base.add(line * 64),
                )
            };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (data, part, parts);
}

/// `buf` from its first value on a 64-byte boundary (within its first 64 bytes).
pub(super) fn aligned<T>(buf: &mut [T]) -> &mut [T] {
    let len = buf.len();
    let offset = buf
        .as_ptr()
        .align_offset(64)
        .min(64 / std::mem::size_of::<T>().max(1));
    &mut buf[offset.min(len)..]
}

/// A buffer whose slices start on a 64-byte boundary (whole cache lines, aligned vector loads).
struct Aligned<T> {
    buf: Vec<T>,
    offset: usize,
}

impl<T: Element> Aligned<T> {
    fn new(len: usize) -> Aligned<T> {
        let extra = 64 / std::mem::size_of::<T>();
        let buf = vec![T::ZERO; len + extra];
        let offset = buf.as_ptr().align_offset(64).min(extra);
        Aligned { buf, offset }
    }

    fn slice(&mut self, len: usize) -> &mut [T] {
        &mut self.buf[self.offset..self.offset + len]
    }

    fn get(&self) -> &[T] {
        &self.buf[self.offset..]
    }
}

/// C = α·A·B + β·C the plain way: the reference of the tests.
pub fn naive<T: Element>(alpha: T, a: MatRef<T>, b: MatRef<T>, beta: T, c: &mut MatMut<T>) {
    for j in 0..c.cols {
        for i in 0..c.rows {
            let mut s = T::ZERO;
            for p in 0..a.cols {
                s += a.at(i, p) * b.at(p, j);
            }
            let x = &mut c.data[i + j * c.ld];
            let mut v = alpha * s;
            if beta != T::ZERO {
                v += beta * *x;
            }
            *x = v;
        }
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use proptest::prelude::*;

    /// `len` values in [-0.5, 0.5) from `seed` (xorshift): the tests' matrices.
    pub(in crate::bench::linalg) fn random(len: usize, seed: u64) -> Vec<f64> {
        let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        (0..len)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x >> 11) as f64 / (1u64 << 53) as f64 - 0.5
            })
            .collect()
    }

    /// Runs `g` and the naive multiply on the same random problem; the largest difference.
    #[allow(clippy::too_many_arguments)]
    fn max_error(
        g: &Gemm,
        m: usize,
        n: usize,
        k: usize,
        pad: usize,
        alpha: f64,
        beta: f64,
        seed: u64,
    ) -> f64 {
        let (lda, ldb, ldc) = (m + pad, k + pad, m + pad);
        let a = random(lda * k.max(1), seed);
        let b = random(ldb * n.max(1), seed + 1);
        let c0 = random(ldc * n.max(1), seed + 2);
        let (mut c1, mut c2) = (c0.clone(), c0.clone());
        let ar = MatRef {
            data: &a,
            rows: m,
            cols: k,
            ld: lda.max(1),
        };
        let br = MatRef {
            data: &b,
            rows: k,
            cols: n,
            ld: ldb.max(1),
        };
        g.run(
            alpha,
            ar,
            br,
            beta,
            MatMut {
                data: &mut c1,
                rows: m,
                cols: n,
                ld: ldc.max(1),
            },
        )
        .unwrap();
        naive(
            alpha,
            ar,
            br,
            beta,
            &mut MatMut {
                data: &mut c2,
                rows: m,
                cols: n,
                ld: ldc.max(1),
            },
        );
        // Padding rows below each column are untouched.
        for j in 0..n {
            for i in m..ldc {
                assert_eq!(c1[i + j * ldc], c0[i + j * ldc], "padding at ({i}, {j})");
            }
        }
        c1.iter()
            .zip(&c2)
            .map(|(x, y)| (x - y).abs())
            .fold(0.0, f64::max)
    }

    fn plans() -> Vec<Gemm> {
        let mut out = Vec::new();
        for kernel in kernels::available::<f64>() {
            // Tiny blocks, so that every loop of the blocking runs several times.
            let tiny = Blocking {
                mc: kernel.mr * 2,
                kc: 16,
                nc: kernel.nr * 3,
            };
            for threads in [1, 3] {
                out.push(Gemm {
                    kernel,
                    blocking: tiny,
                    threads,
                });
                out.push(Gemm {
                    kernel,
                    blocking: Blocking::for_caches(&kernel, None, None, None),
                    threads,
                });
            }
        }
        out
    }

    #[test]
    fn matches_the_naive_multiply_on_awkward_shapes() {
        for g in plans() {
            for (m, n, k) in [
                (1, 1, 1),
                (0, 5, 3),
                (5, 0, 3),
                (5, 3, 0),
                (25, 9, 17),
                (48, 16, 33),
                (61, 37, 70),
                (130, 70, 200),
            ] {
                for (alpha, beta) in [(1.0, 0.0), (-1.0, 1.0), (0.5, -2.0), (0.0, 3.0)] {
                    let e = max_error(&g, m, n, k, 3, alpha, beta, (m * n + k) as u64);
                    assert!(
                        e < 1e-12 * (k as f64 + 1.0),
                        "{} {m}×{n}×{k} α={alpha} β={beta} threads {}: {e}",
                        g.kernel.isa,
                        g.threads
                    );
                }
            }
        }
    }

    /// A packed once and used for several multiplies gives what the plain multiply gives, with
    /// several KC blocks, edge panels and threads; a packing of another plan is refused.
    #[test]
    fn a_packed_a_multiplies_as_the_plain_one() {
        for g in plans() {
            for (m, n, k) in [(61, 37, 70), (25, 9, 17), (130, 70, 200)] {
                let a = random(m * k, 3);
                let b = random(k * n, 4);
                let ar = MatRef {
                    data: &a,
                    rows: m,
                    cols: k,
                    ld: m,
                };
                let br = MatRef {
                    data: &b,
                    rows: k,
                    cols: n,
                    ld: k,
                };
                let packed = g.pack(ar).unwrap();
                let (mut c1, mut c2) = (random(m * n, 5), random(m * n, 5));
                g.run(
                    -1.0,
                    ar,
                    br,
                    1.0,
                    MatMut {
                        data: &mut c1,
                        rows: m,
                        cols: n,
                        ld: m,
                    },
                )
                .unwrap();
                g.run_packed(
                    -1.0,
                    &packed,
                    br,
                    1.0,
                    MatMut {
                        data: &mut c2,
                        rows: m,
                        cols: n,
                        ld: m,
                    },
                )
                .unwrap();
                assert_eq!(c1, c2, "{} {m}×{n}×{k} threads {}", g.kernel.isa, g.threads);
                let other = Gemm {
                    blocking: Blocking {
                        kc: g.blocking.kc + 8,
                        ..g.blocking
                    },
                    ..g
                };
                let r = other.run_packed(
                    1.0,
                    &packed,
                    br,
                    0.0,
                    MatMut {
                        data: &mut c2,
                        rows: m,
                        cols: n,
                        ld: m,
                    },
                );
                assert!(r.is_err());
            }
        }
    }

    #[test]
    fn bad_shapes_are_refused() {
        let g = Gemm::new(1);
        let v = vec![0.0; 10];
        let mut w = vec![0.0; 10];
        let a = MatRef {
            data: &v,
            rows: 3,
            cols: 4,
            ld: 3,
        };
        let r = g.run(
            1.0,
            a,
            a,
            0.0,
            MatMut {
                data: &mut w,
                rows: 3,
                cols: 4,
                ld: 3,
            },
        );
        assert!(matches!(r, Err(ShapeError::Storage { .. })), "{r:?}");
        let a = MatRef {
            data: &v,
            rows: 2,
            cols: 2,
            ld: 2,
        };
        let b = MatRef {
            data: &v,
            rows: 3,
            cols: 2,
            ld: 3,
        };
        let r = g.run(
            1.0,
            a,
            b,
            0.0,
            MatMut {
                data: &mut w,
                rows: 2,
                cols: 2,
                ld: 2,
            },
        );
        assert!(matches!(r, Err(ShapeError::Mismatch(..))), "{r:?}");
        let huge = MatRef {
            data: &v,
            rows: 2,
            cols: usize::MAX,
            ld: usize::MAX,
        };
        assert!(huge.check().is_err());
    }

    #[test]
    fn blocking_follows_the_caches() {
        let k = kernels::best::<f64>();
        let small = Blocking::for_caches(&k, Some(32 << 10), Some(512 << 10), Some(2 << 20));
        let big = Blocking::for_caches(&k, Some(48 << 10), Some(2 << 20), Some(32 << 20));
        assert!(
            small.kc <= big.kc && small.mc <= big.mc && small.nc <= big.nc,
            "{small:?} {big:?}"
        );
        for b in [small, big] {
            assert!(b.mc % k.mr == 0 && b.nc % k.nr == 0 && b.kc >= 64, "{b:?}");
            // The KC × NR panel of B fits half of L1.
            assert!(b.kc * k.nr * 8 <= 48 << 10);
        }
        // The MC × KC block of A fits half of L2.
        for (b, l2) in [(small, 512 << 10), (big, 2 << 20)] {
            assert!(b.mc * b.kc * 8 <= l2 / 2, "{b:?}");
        }
        // A kernel's longest panels bound KC where L1 has room for longer ones (the AVX2
        // tiles' 256), and the A block grows into the room left in L2.
        let mut narrow = kernels::portable::<f64>();
        let caches = (Some(48 << 10), Some(1 << 20), Some(16 << 20));
        narrow.kc_max = 512;
        let long = Blocking::for_caches(&narrow, caches.0, caches.1, caches.2);
        narrow.kc_max = 256;
        let short = Blocking::for_caches(&narrow, caches.0, caches.1, caches.2);
        assert_eq!((long.kc, short.kc), (512, 256));
        assert!(short.mc > long.mc, "{short:?} {long:?}");
    }

    /// The single-precision multiply, every kernel and threads, against the product computed
    /// in double precision from the same f32 values: within k · ε_f32 of each element's size.
    #[test]
    fn single_precision_matches_the_double_precision_product() {
        for kernel in kernels::available::<f32>() {
            for (threads, blocking) in [
                (1, Blocking::for_caches(&kernel, None, None, None)),
                (
                    3,
                    Blocking {
                        mc: kernel.mr * 2,
                        kc: 16,
                        nc: kernel.nr * 3,
                    },
                ),
            ] {
                let g = Gemm {
                    kernel,
                    blocking,
                    threads,
                };
                for (m, n, k) in [(61, 37, 70), (130, 70, 200), (1, 1, 1)] {
                    let a: Vec<f32> = random(m * k, 7).iter().map(|&x| x as f32).collect();
                    let b: Vec<f32> = random(k * n, 8).iter().map(|&x| x as f32).collect();
                    let mut c = vec![1.0f32; m * n];
                    g.run(
                        2.0,
                        MatRef {
                            data: &a,
                            rows: m,
                            cols: k,
                            ld: m,
                        },
                        MatRef {
                            data: &b,
                            rows: k,
                            cols: n,
                            ld: k,
                        },
                        -1.0,
                        MatMut {
                            data: &mut c,
                            rows: m,
                            cols: n,
                            ld: m,
                        },
                    )
                    .unwrap();
                    for j in 0..n {
                        for i in 0..m {
                            let want: f64 = (0..k)
                                .map(|p| f64::from(a[i + p * m]) * f64::from(b[p + j * k]))
                                .sum::<f64>()
                                * 2.0
                                - 1.0;
                            let got = f64::from(c[i + j * m]);
                            assert!(
                                (got - want).abs()
                                    < 4.0 * (k as f64 + 2.0) * f64::from(f32::EPSILON),
                                "{} {m}×{n}×{k} threads {threads} ({i}, {j}): {got} vs {want}",
                                kernel.isa
                            );
                        }
                    }
                }
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        #[test]
        fn any_small_shape_matches(m in 0usize..40, n in 0usize..30, k in 0usize..40, pad in 0usize..3, threads in 1usize..4) {
            let kernel = kernels::best::<f64>();
            let g = Gemm { kernel, blocking: Blocking { mc: kernel.mr, kc: 8, nc: kernel.nr }, threads };
            let e = max_error(&g, m, n, k, pad, 1.5, 0.5, (m + 7 * n + 13 * k) as u64);
            prop_assert!(e < 1e-12 * (k as f64 + 1.0), "{e}");
        }
    }
}
