//! Packing for the multiply ([`super::gemm`]): a block of A into MR-row panels and a block of
//! B into NR-column panels, the layouts the micro-kernels read in order ([`super::kernels`]).
//! The kernels' tile sizes are constants here where they are known, so that a whole step of a
//! panel is a copy of known size (vector registers, no call) and a block of B is transposed
//! in registers; other sizes, and the panels at a matrix's edge, take the general path.

use super::kernels::Element;

/// Packs A[ic..ic+mb, pc..pc+kb] (column-major `a`, leading dimension `ld`) into MR-row
/// panels: panel i, step p holds rows ic + i·MR .. + MR of column pc + p (zeros past the
/// matrix).
#[allow(clippy::too_many_arguments)]
pub(super) fn pack_a<T: Element>(
    a: &[T],
    ld: usize,
    ic: usize,
    mb: usize,
    pc: usize,
    kb: usize,
    mr: usize,
    out: &mut [T],
) {
    // A step of run-time length was a call to memmove (2 % of a 1000 × 1000 multiply).
    let panels = match mr {
        8 => a_panels::<T, 8>,
        16 => a_panels::<T, 16>,
        24 => a_panels::<T, 24>,
        48 => a_panels::<T, 48>,
        _ => a_panels::<T, 0>,
    };
    panels(a, ld, ic, mb, pc, kb, mr, out);
}

/// [`pack_a`]'s loops; `MR` the tile height when compiled (0: `mr` alone, at run time).
#[allow(clippy::too_many_arguments)]
fn a_panels<T: Element, const MR: usize>(
    a: &[T],
    ld: usize,
    ic: usize,
    mb: usize,
    pc: usize,
    kb: usize,
    mr: usize,
    out: &mut [T],
) {
    let panels = out.len() / (kb * mr).max(1);
    // Column by column: each column's mb rows are read in one run (the panels' steps are
    // written at a stride, in the cache the packed block lives in); panel by panel, each
    // column would be visited once a panel, a new page each time.
    for p in 0..kb {
        let col = &a[ic + (pc + p) * ld..][..mb];
        for i in 0..panels {
            let step = &mut out[(i * kb + p) * mr..][..mr];
            let r0 = i * mr;
            if MR != 0
                && r0 + MR <= mb
                && let (Some(to), Some(from)) =
                    (step.first_chunk_mut::<MR>(), col[r0..].first_chunk::<MR>())
            {
                *to = *from;
                continue;
            }
            let rows = mr.min(mb.saturating_sub(r0));
            let (to, zeros) = step.split_at_mut(rows);
            to.copy_from_slice(&col[r0..r0 + rows]);
            zeros.fill(T::ZERO);
        }
    }
}

/// Packs B[pc..pc+kb, jc..jc+nb] (column-major `b`, leading dimension `ld`) into NR-column
/// panels: panel j, step p holds row pc + p of columns jc + j·NR .. + NR (zeros past the
/// matrix).
#[allow(clippy::too_many_arguments)]
pub(super) fn pack_b<T: Element>(
    b: &[T],
    ld: usize,
    pc: usize,
    kb: usize,
    jc: usize,
    nb: usize,
    nr: usize,
    out: &mut [T],
) {
    for (j, panel) in out.chunks_exact_mut(kb * nr).enumerate() {
        let c0 = jc + j * nr;
        let cols = nr.min(jc + nb - c0);
        // A whole panel's blocks of 8 steps transposed in registers: element by element,
        // with a bounds check each, they were 3 % of a 1000 × 1000 multiply.
        let done = match nr {
            4 if cols == 4 => b_blocks::<T, 4>(b, ld, pc, c0, panel),
            6 if cols == 6 => b_blocks::<T, 6>(b, ld, pc, c0, panel),
            8 if cols == 8 => b_blocks::<T, 8>(b, ld, pc, c0, panel),
            _ => 0,
        };
        b_steps(b, ld, pc + done, c0, cols, nr, &mut panel[done * nr..]);
    }
}

/// The whole blocks of 8 steps of a panel of NR columns from c0; the steps it packed.
fn b_blocks<T: Element, const NR: usize>(
    b: &[T],
    ld: usize,
    pc: usize,
    c0: usize,
    panel: &mut [T],
) -> usize {
    let whole = panel.len() / NR / 8;
    for (g, to) in panel.chunks_exact_mut(8 * NR).take(whole).enumerate() {
        let p0 = pc + 8 * g;
        let mut block = [[T::ZERO; 8]; NR];
        for (c, col) in block.iter_mut().enumerate() {
            col.copy_from_slice(&b[p0 + (c0 + c) * ld..][..8]);
        }
        for q in 0..8 {
            for c in 0..NR {
                to[q * NR + c] = block[c][q];
            }
        }
    }
    8 * whole
}

/// The steps of a panel from row pc on, element by element: `cols` columns from c0 (zeros
/// past them, up to `nr`).
fn b_steps<T: Element>(
    b: &[T],
    ld: usize,
    pc: usize,
    c0: usize,
    cols: usize,
    nr: usize,
    panel: &mut [T],
) {
    // Eight steps at a time, so that the strided writes of each column stay in the same few
    // cache lines while the column is read in order.
    for (g, rows) in panel.chunks_mut(8 * nr).enumerate() {
        let p0 = pc + 8 * g;
        let depth = rows.len() / nr;
        for c in 0..nr {
            if c < cols {
                let col = &b[p0 + (c0 + c) * ld..][..depth];
                for (q, v) in col.iter().enumerate() {
                    rows[q * nr + c] = *v;
                }
            } else {
                for q in 0..depth {
                    rows[q * nr + c] = T::ZERO;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Panels `width` wide, `kb` steps deep, of a block `extent` wide: the value at
    /// (across, step) is `want(across, step)` inside the block and zero past it.
    fn check(
        out: &[f64],
        width: usize,
        kb: usize,
        extent: usize,
        want: impl Fn(usize, usize) -> f64,
    ) {
        for (at, got) in out.iter().enumerate() {
            let (panel, step, lane) = (at / (kb * width), at / width % kb, at % width);
            let across = panel * width + lane;
            let expected = if across < extent {
                want(across, step)
            } else {
                0.0
            };
            assert_eq!(
                *got, expected,
                "width {width}: panel {panel}, step {step}, lane {lane}"
            );
        }
    }

    /// Every tile height and width, with and without a constant's path, at blocks that end
    /// inside a panel and inside a block of 8 steps, packs what the layouts say (a matrix
    /// of 64 × 45 whose elements are all different).
    #[test]
    fn panels_hold_the_blocks_as_the_layouts_say() {
        let ld = 64;
        let a: Vec<f64> = (0..ld * 45).map(|x| x as f64 + 0.5).collect();
        let at = |i: usize, j: usize| a[i + j * ld];
        // (first row, rows, first column, columns) of the block.
        let blocks = [
            (0usize, 61usize, 0usize, 45usize),
            (3, 50, 2, 19),
            (10, 7, 40, 5),
        ];
        for (i0, rows, j0, cols) in blocks {
            for mr in [5, 8, 16, 24, 48] {
                let mut out = vec![f64::NAN; rows.div_ceil(mr) * mr * cols];
                pack_a(&a, ld, i0, rows, j0, cols, mr, &mut out);
                check(&out, mr, cols, rows, |r, p| at(i0 + r, j0 + p));
            }
            for nr in [3, 4, 6, 8] {
                let mut out = vec![f64::NAN; cols.div_ceil(nr) * nr * rows];
                pack_b(&a, ld, i0, rows, j0, cols, nr, &mut out);
                check(&out, nr, rows, cols, |c, p| at(i0 + p, j0 + c));
            }
        }
    }
}
