//! LU factorisation with partial pivoting (P·A = L·U) and the solve of A·x = b, as HPL does it:
//! a blocked right-looking factorisation whose trailing update is the blocked [`Gemm`], each
//! panel factored recursively (LAPACK's dgetrf2: in halves, so that most of the panel's work is
//! a multiply too, its triangular solves recursive as well). The update's U12 = L11⁻¹ · A12 is
//! a multiply by the panel's inverse ([`pack_inverse`]).
//!
//! The trailing update needs U12 (rows of the same columns as A22) as a separate operand: it is
//! made in a workspace of NB × N values, which the multiply packs anyway.

use super::gemm::{Gemm, MatMut, MatRef, PackedA, ShapeError};

/// Why a factorisation failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LuError {
    #[error(transparent)]
    Shape(#[from] ShapeError),
    #[error("the matrix is singular: column {0} has no non-zero pivot")]
    Singular(usize),
}

/// Panels this narrow are factored column by column; triangles this small are solved directly.
const BASE: usize = 8;

/// The least work (flops) of a chunk of the trailing update a thread takes: about 0.3 ms of one
/// core, so that the threads of a step end within that of each other, while the per-chunk cost
/// (a lock, packing its part of U12) stays small beside it.
const MIN_CHUNK_FLOPS: usize = 16 << 20;

/// Factors the `n × n` matrix `a` (leading dimension `ld`) in place: L below the diagonal (its
/// unit diagonal not stored), U on and above; row i was swapped with row `ipiv[i]` at step i.
/// `nb` is the block of the right-looking loop (HPL's NB).
pub fn factor(
    g: &Gemm,
    a: &mut [f64],
    n: usize,
    ld: usize,
    nb: usize,
    ipiv: &mut [usize],
) -> Result<(), LuError> {
    factor_carrying(g, a, n, n, ld, nb, ipiv, true)
}

/// Factors the first `n` of the `cols ≥ n` columns of `a` and applies the same row swaps and
/// eliminations to the others (right-hand sides carried along). With `swap_left`, each panel's
/// row swaps are applied to the columns left of it at the end, so that P·A = L·U.
///
/// Look-ahead of depth one: once panel k is factored, one thread brings the columns of panel
/// k+1 up to date and factors that panel while the others update the rest of the trailing
/// matrix in column chunks, and the panel's thread joins them when it is done.
#[allow(clippy::too_many_arguments)]
pub(super) fn factor_carrying(
    g: &Gemm,
    a: &mut [f64],
    n: usize,
    cols: usize,
    ld: usize,
    nb: usize,
    ipiv: &mut [usize],
    swap_left: bool,
) -> Result<(), LuError> {
    super::gemm::fits(n, cols, ld, a.len())?;
    super::gemm::fits(n, 1, n.max(1), ipiv.len())?;
    if n == 0 {
        return Ok(());
    }
    let nb = nb.max(1);
    let one = Gemm { threads: 1, ..*g };
    let threads = g.threads.max(1);
    let nr = g.kernel.nr;
    let mut work = Vec::new();
    let jb0 = nb.min(n);
    getrf2(&one, a, n, jb0, ld, 0, &mut ipiv[..jb0], &mut work)?;
    let mut j = 0;
    let mut jb = jb0;
    loop {
        let next = j + jb;
        if next >= cols {
            break;
        }
        // The next panel's width; 0 once only carried columns are left.
        let jb2 = nb.min(n.saturating_sub(next));
        // L21 of the factored panel, packed once for every update of this step.
        let l21 = g.pack(MatRef {
            data: &a[next + j * ld..],
            rows: n - next,
            cols: jb,
            ld,
        })?;
        let (left, right) = a.split_at_mut(next * ld);
        let split = (jb2 * ld).min(right.len());
        let (panel, rest) = right.split_at_mut(split);
        let rest_cols = cols - next - jb2;
        // Guided self-scheduling: each grab takes half of what is left per thread (at least
        // MIN_CHUNK_FLOPS of work, whole NR panels), so the threads finish within a small chunk
        // of each other whatever the panel's thread costs.
        let min_width = MIN_CHUNK_FLOPS.div_ceil((2 * (n - next) * jb).max(1));
        let queue = std::sync::Mutex::new((0usize, rest));
        let grab = || -> Option<(usize, &mut [f64])> {
            let mut q = queue.lock().unwrap_or_else(|e| e.into_inner());
            let (first, ref mut left) = *q;
            let remaining = rest_cols - first;
            if remaining == 0 {
                return None;
            }
            let width =
                (remaining.div_ceil(2 * threads).max(min_width).div_ceil(nr) * nr).min(remaining);
            let take = (width * ld).min(left.len());
            let (mine, tail) = std::mem::take(left).split_at_mut(take);
            *q = (first + width, tail);
            Some((width, mine))
        };
        let (done, todo) = ipiv.split_at_mut(next);
        let piv = &done[j..next];
        // A 64 × 64 pack is not worth the plan's threads.
        let l11 = pack_inverse(&one, &left[j + j * ld..], jb, ld)?;
        let drain = |work: &mut Vec<f64>| -> Result<(), LuError> {
            while let Some((width, cols)) = grab() {
                update_columns(&one, &l11, &l21, cols, width, j, jb, ld, piv, work)?;
            }
            Ok(())
        };
        std::thread::scope(|s| -> Result<(), LuError> {
            let helpers: Vec<_> = (1..threads)
                .map(|_| {
                    s.spawn(|| {
                        let mut work = Vec::new();
                        drain(&mut work)
                    })
                })
                .collect();
            let mut mine = || -> Result<(), LuError> {
                if jb2 > 0 {
                    update_columns(&one, &l11, &l21, panel, jb2, j, jb, ld, piv, &mut work)?;
                    getrf2(
                        &one,
                        &mut panel[next..],
                        n - next,
                        jb2,
                        ld,
                        next,
                        &mut todo[..jb2],
                        &mut work,
                    )?;
                }
                drain(&mut work)
            };
            let mine = mine();
            for h in helpers {
                h.join().unwrap_or_else(|p| std::panic::resume_unwind(p))?;
            }
            mine
        })?;
        if jb2 == 0 {
            break;
        }
        for p in &mut ipiv[next..next + jb2] {
            *p += next;
        }
        j = next;
        jb = jb2;
    }
    if !swap_left {
        return Ok(());
    }
    // Every panel's swaps on the columns left of it, in order; the threads take column chunks.
    let per = n.div_ceil(threads).max(1);
    let ipiv = &*ipiv;
    let factored = (n * ld).min(a.len());
    std::thread::scope(|s| {
        for (t, cols) in a[..factored].chunks_mut(per * ld).enumerate() {
            let first = t * per;
            s.spawn(move || {
                let width = per.min(n - first);
                let mut start = 0;
                while start < n {
                    let w = nb.min(n - start);
                    // This chunk's columns left of the panel at `start`.
                    let end = start.min(first + width);
                    if end > first {
                        swap_rows(cols, ld, 0..end - first, start, &ipiv[start..start + w]);
                    }
                    start += w;
                }
            });
        }
    });
    Ok(())
}

/// L11⁻¹ of a factored panel (`jb` wide, `l11` from its L11's first element), packed for the
/// multiplies that apply it: each update takes U12 = L11⁻¹ · A12 as a multiply instead of a
/// triangular solve. That is twice the solve's operations, at the multiply's rate: the solve's
/// recursion ends in 16-row triangles solved an element at a time and multiplies only 16 or
/// 32 deep, and took a sixth of a one-thread factorisation at N = 1000 (Zen 4). HPL's NB keeps
/// L11 small, and partial pivoting bounds its elements by 1.
pub(super) fn pack_inverse(
    g: &Gemm,
    l11: &[f64],
    jb: usize,
    ld: usize,
) -> Result<PackedA, ShapeError> {
    super::gemm::fits(jb, jb, ld, l11.len())?;
    // Column c of L11⁻¹ solves L11·x = e_c by forward substitution (x is 0 above row c).
    let mut inv = vec![0.0; jb * jb];
    for c in 0..jb {
        let x = &mut inv[c * jb..(c + 1) * jb];
        x[c] = 1.0;
        for i in c..jb {
            let xi = x[i];
            if xi != 0.0 {
                let li = &l11[i * ld + i + 1..i * ld + jb];
                for (xr, l) in x[i + 1..].iter_mut().zip(li) {
                    *xr -= l * xi;
                }
            }
        }
    }
    g.pack(MatRef {
        data: &inv,
        rows: jb,
        cols: jb,
        ld: jb,
    })
}

/// Brings `width` columns (`cols`, starting at the matrix's column 0 of `cols`) up to date with
/// the factored panel at `j` (`jb` wide, its pivots `piv`, its L11⁻¹ and L21 packed): the
/// panel's row swaps, U12 = L11⁻¹ · A12, A22 −= L21 · U12.
#[allow(clippy::too_many_arguments)]
pub(super) fn update_columns(
    g: &Gemm,
    l11_inv: &PackedA,
    l21: &PackedA,
    cols: &mut [f64],
    width: usize,
    j: usize,
    jb: usize,
    ld: usize,
    piv: &[usize],
    work: &mut Vec<f64>,
) -> Result<(), ShapeError> {
    if width == 0 || jb == 0 {
        return Ok(());
    }
    // A12 and U12 side by side in `work`, each jb × width (every value written before it is
    // read: A12 copied, U12 the multiply's output with β = 0).
    let need = 2 * jb * width;
    if work.len() < need {
        work.resize(need, 0.0);
    }
    let (a12, u12) = work[..need].split_at_mut(jb * width);
    // A column's swaps, then its rows of A12 while they are in the L1 cache.
    for c in 0..width {
        swap_rows(cols, ld, c..c + 1, j, piv);
        a12[c * jb..(c + 1) * jb].copy_from_slice(&cols[j + c * ld..j + c * ld + jb]);
    }
    let a12 = MatRef {
        data: a12,
        rows: jb,
        cols: width,
        ld: jb,
    };
    let u = MatMut {
        data: &mut *u12,
        rows: jb,
        cols: width,
        ld: jb,
    };
    g.run_packed(1.0, l11_inv, a12, 0.0, u)?;
    for c in 0..width {
        cols[j + c * ld..j + c * ld + jb].copy_from_slice(&u12[c * jb..(c + 1) * jb]);
    }
    let rows = l21.rows();
    if rows == 0 {
        return Ok(());
    }
    let u12 = MatRef {
        data: u12,
        rows: jb,
        cols: width,
        ld: jb,
    };
    let a22 = MatMut {
        data: &mut cols[j + jb..],
        rows,
        cols: width,
        ld,
    };
    g.run_packed(-1.0, l21, u12, 1.0, a22)
}

/// Rows `top..top+k` of the `cols` columns of `b` into `work`, as a k × cols matrix.
fn copy_rows<'w>(
    b: &[f64],
    top: usize,
    k: usize,
    cols: usize,
    ld: usize,
    work: &'w mut Vec<f64>,
) -> MatRef<'w> {
    if work.len() < k * cols {
        work.resize(k * cols, 0.0);
    }
    let work = &mut work[..k * cols];
    for c in 0..cols {
        work[c * k..(c + 1) * k].copy_from_slice(&b[top + c * ld..top + c * ld + k]);
    }
    MatRef {
        data: work,
        rows: k,
        cols,
        ld: k,
    }
}

/// B2 -= L · B1 where B1 is rows `top..top+k` and B2 the `rows` rows below them, of the
/// `cols = l.rows` columns of `b` (leading dimension `ld`); B1 is copied to `work` first.
#[allow(clippy::too_many_arguments)]
fn update(
    g: &Gemm,
    l: MatRef,
    b: &mut [f64],
    top: usize,
    k: usize,
    cols: usize,
    ld: usize,
    work: &mut Vec<f64>,
) -> Result<(), ShapeError> {
    let rows = l.rows;
    if rows == 0 || cols == 0 || k == 0 {
        return Ok(());
    }
    let b1 = copy_rows(b, top, k, cols, ld, work);
    let b2 = MatMut {
        data: &mut b[top + k..],
        rows,
        cols,
        ld,
    };
    g.run(-1.0, l, b1, 1.0, b2)
}

/// Factors the `m × n` panel `p` (leading dimension `ld`, m ≥ n) recursively; `ipiv` relative
/// to the panel's first row; `col0` is the panel's first column in the matrix (for errors).
#[allow(clippy::too_many_arguments)]
pub(super) fn getrf2(
    g: &Gemm,
    p: &mut [f64],
    m: usize,
    n: usize,
    ld: usize,
    col0: usize,
    ipiv: &mut [usize],
    work: &mut Vec<f64>,
) -> Result<(), LuError> {
    if n <= BASE {
        return unblocked(p, m, n, ld, col0, ipiv);
    }
    let n1 = n / 2;
    let n2 = n - n1;
    let (left, right) = p.split_at_mut(n1 * ld);
    getrf2(g, left, m, n1, ld, col0, &mut ipiv[..n1], work)?;
    swap_rows(right, ld, 0..n2, 0, &ipiv[..n1]);
    let l11 = MatRef {
        data: left,
        rows: n1,
        cols: n1,
        ld,
    };
    trsm(g, l11, right, n2, ld, work)?;
    let l21 = MatRef {
        data: &left[n1..],
        rows: m - n1,
        cols: n1,
        ld,
    };
    update(g, l21, right, 0, n1, n2, ld, work)?;
    getrf2(
        g,
        &mut right[n1..],
        m - n1,
        n2,
        ld,
        col0 + n1,
        &mut ipiv[n1..],
        work,
    )?;
    for q in &mut ipiv[n1..] {
        *q += n1;
    }
    swap_rows(left, ld, 0..n1, n1, &ipiv[n1..]);
    Ok(())
}

/// Column by column: pivot, swap within the panel, scale, rank-1 update.
fn unblocked(
    p: &mut [f64],
    m: usize,
    n: usize,
    ld: usize,
    col0: usize,
    ipiv: &mut [usize],
) -> Result<(), LuError> {
    for k in 0..n.min(m) {
        let col = &p[k + k * ld..k * ld + m];
        let (best, _) = col
            .iter()
            .enumerate()
            .fold((0, -1.0f64), |(bi, bv), (i, v)| {
                if v.abs() > bv { (i, v.abs()) } else { (bi, bv) }
            });
        let piv = k + best;
        ipiv[k] = piv;
        if p[piv + k * ld] == 0.0 {
            return Err(LuError::Singular(col0 + k));
        }
        if piv != k {
            for c in 0..n {
                p.swap(k + c * ld, piv + c * ld);
            }
        }
        let inv = 1.0 / p[k + k * ld];
        for x in &mut p[k + 1 + k * ld..k * ld + m] {
            *x *= inv;
        }
        for c in k + 1..n {
            let u = p[k + c * ld];
            if u != 0.0 {
                let (lcol, rest) = p.split_at_mut(c * ld);
                let l = &lcol[k + 1 + k * ld..k * ld + m];
                for (x, li) in rest[k + 1..m].iter_mut().zip(l) {
                    *x -= li * u;
                }
            }
        }
    }
    Ok(())
}

/// Solves L·X = B in place for the unit lower triangle L (`l.rows × l.rows`) and the
/// `l.rows × cols` matrix `b` (leading dimension `ld`), recursively in halves.
fn trsm(
    g: &Gemm,
    l: MatRef,
    b: &mut [f64],
    cols: usize,
    ld: usize,
    work: &mut Vec<f64>,
) -> Result<(), ShapeError> {
    let n = l.rows;
    if n <= 2 * BASE {
        for c in 0..cols {
            let col = &mut b[c * ld..c * ld + n];
            for i in 0..n {
                let x = col[i];
                if x != 0.0 {
                    let li = &l.data[i * l.ld + i + 1..i * l.ld + n];
                    for (c, lk) in col[i + 1..].iter_mut().zip(li) {
                        *c -= lk * x;
                    }
                }
            }
        }
        return Ok(());
    }
    let n1 = n / 2;
    let l11 = MatRef {
        data: l.data,
        rows: n1,
        cols: n1,
        ld: l.ld,
    };
    trsm(g, l11, b, cols, ld, work)?;
    let l21 = MatRef {
        data: &l.data[n1..],
        rows: n - n1,
        cols: n1,
        ld: l.ld,
    };
    update(g, l21, b, 0, n1, cols, ld, work)?;
    let l22 = MatRef {
        data: &l.data[n1 + n1 * l.ld..],
        rows: n - n1,
        cols: n - n1,
        ld: l.ld,
    };
    trsm(g, l22, &mut b[n1..], cols, ld, work)
}

/// Swaps row `first + k` with row `piv[k]` (k in order) in the columns `cols`.
fn swap_rows(a: &mut [f64], ld: usize, cols: std::ops::Range<usize>, first: usize, piv: &[usize]) {
    for c in cols {
        let col = &mut a[c * ld..];
        for (k, &p) in piv.iter().enumerate() {
            if p != first + k {
                col.swap(first + k, p);
            }
        }
    }
}

/// Solves U·x = y for the upper triangle U of `u` (`n × n`, leading dimension `ld`); `y`
/// becomes x.
pub(super) fn back_substitute(u: &[f64], n: usize, ld: usize, y: &mut [f64]) {
    for j in (0..n).rev() {
        y[j] /= u[j + j * ld];
        let x = y[j];
        for (yi, uij) in y[..j].iter_mut().zip(&u[j * ld..j * ld + j]) {
            *yi -= uij * x;
        }
    }
}

/// Solves A·x = b with the factors of [`factor`]; `b` becomes x.
pub fn solve(lu: &[f64], n: usize, ld: usize, ipiv: &[usize], b: &mut [f64]) {
    for (i, &p) in ipiv.iter().enumerate().take(n) {
        b.swap(i, p);
    }
    for j in 0..n {
        let x = b[j];
        for (bi, l) in b[j + 1..n].iter_mut().zip(&lu[j + 1 + j * ld..j * ld + n]) {
            *bi -= l * x;
        }
    }
    back_substitute(lu, n, ld, b);
}
