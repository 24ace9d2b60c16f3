//! How a multiply's threads share its work ([`super::gemm`]), as BLIS splits its jc and ic
//! loops: the threads form a grid of column groups × row shares. A group takes whole NR panels
//! of C's columns and packs each block of B once, each of its threads a part; then every
//! thread of the group multiplies its own MR panels of C's rows by the whole block, packing
//! its own blocks of A. Fewer groups pack A fewer times (each group packs all of it); the more
//! rows a thread has, the more tiles each panel of B it reads serves.
//!
//! Measured on 16 threads of an Emerald Rapids guest (N = 4000, A's block in half of L2): the
//! 4 × 4 grid multiplied 5 % faster than columns alone, each thread packing all of A (DGEMM
//! 555–635 against 532–545 GFLOP/s, SGEMM 1150–1191 against 1078–1124).

use std::sync::Barrier;

use super::gemm::{Gemm, MatMut, MatRef, Src};
use super::kernels::Element;
use super::pack::pack_b;
use super::tiles::Tiles;

/// The threads of a multiply: `cols` groups across C's columns, `rows` threads in each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Grid {
    pub cols: usize,
    pub rows: usize,
}

impl Grid {
    /// The grid for `threads` threads on an m × n product of MR × NR tiles: as many threads as
    /// there are panels to share, then each thread's part of C as square as can be (BLIS's
    /// choice: the traffic of packing A and of reading B's panels balanced), then more groups
    /// (on 2 threads of a square product, columns measured 2.7 % faster than rows).
    pub fn choose(threads: usize, m: usize, n: usize, mr: usize, nr: usize) -> Grid {
        let (row_panels, col_panels) = (m.div_ceil(mr).max(1), n.div_ceil(nr).max(1));
        let mut best = Grid { cols: 1, rows: 1 };
        let mut best_key = (0, f64::INFINITY);
        for rows in 1..=threads.min(row_panels) {
            let cols = (threads / rows).min(col_panels);
            let shape = ((m / rows) as f64 - (n / cols) as f64).abs();
            let key = (cols * rows, shape);
            if key.0 > best_key.0 || (key.0 == best_key.0 && key.1 < best_key.1) {
                best = Grid { cols, rows };
                best_key = key;
            }
        }
        best
    }

    /// Thread `t`'s share of `panels` panels among `parts`: the first and the end panel.
    fn share(panels: usize, t: usize, parts: usize) -> (usize, usize) {
        (panels * t / parts, panels * (t + 1) / parts)
    }
}

/// A group's two packed blocks of B: the group's threads pack parts of one while the last
/// is still read, and read the whole of it after the barrier that follows the packing.
struct SharedB<T> {
    ptr: *mut T,
    /// Each block's values (the two are consecutive).
    len: usize,
}

// SAFETY: each thread writes only its own panels of a block, and reads a block only between
// the barrier after its packing and the barrier after the next block's (see `group_thread`).
unsafe impl<T: Send> Send for SharedB<T> {}
// SAFETY: as above.
unsafe impl<T: Send> Sync for SharedB<T> {}

impl<T> SharedB<T> {
    /// Values `from..to` of block `which` to pack into.
    ///
    /// # Safety
    /// No other thread touches them until the next barrier.
    #[allow(clippy::mut_from_ref)]
    unsafe fn part_mut(&self, which: usize, from: usize, to: usize) -> &mut [T] {
        assert!(
            from <= to && to <= self.len && which < 2,
            "outside a block of B"
        );
        // SAFETY: inside the two blocks (checked above); the caller's promise for the rest.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.add(which * self.len + from), to - from) }
    }

    /// The first `len` values of block `which`, to read.
    ///
    /// # Safety
    /// No thread writes them while the slice lives.
    unsafe fn get(&self, which: usize, len: usize) -> &[T] {
        assert!(len <= self.len && which < 2, "outside a block of B");
        // SAFETY: as in part_mut.
        unsafe { std::slice::from_raw_parts(self.ptr.add(which * self.len), len) }
    }
}

impl<T: Element> Gemm<T> {
    /// C = α·A·B + β·C on `threads` threads (shapes checked), in the grid [`Grid::choose`]
    /// gives.
    pub(super) fn run_grid(
        &self,
        alpha: T,
        a: Src<T>,
        b: MatRef<T>,
        beta: T,
        c: MatMut<T>,
        threads: usize,
    ) {
        let grid = Grid::choose(threads, c.rows, c.cols, self.kernel.mr, self.kernel.nr);
        self.run_on(alpha, a, b, beta, c, grid);
    }

    /// C = α·A·B + β·C on the threads of `grid` (shapes checked; each group at least one
    /// panel of columns, each thread one of rows, where C has them). The packing buffers are
    /// shares of the calling thread's scratch, kept from call to call: the threads are new
    /// each call, and buffers of their own were new pages each time (faulted in, zeroed: a
    /// 1000 × 1000 multiply on 2 threads read 10–20 % below its rate in some repetitions).
    fn run_on(&self, alpha: T, a: Src<T>, b: MatRef<T>, beta: T, c: MatMut<T>, grid: Grid) {
        let (m, n, k) = (c.rows, c.cols, a.shape().1);
        let (mr, nr) = (self.kernel.mr, self.kernel.nr);
        let (row_panels, col_panels) = (m.div_ceil(mr), n.div_ceil(nr));
        let line = 64 / std::mem::size_of::<T>();
        // The widest group's blocks of B (two, each from a cache line) and the tallest
        // thread's block of A and edge tile.
        let block = self
            .b_block_len(col_panels.div_ceil(grid.cols) * nr, k)
            .next_multiple_of(line);
        let packed = matches!(a, Src::Packed(_));
        let own = self.scratch_len(packed, row_panels.div_ceil(grid.rows) * mr, 0, k);
        let tiles = Tiles::new(c.data, c.ld);
        let shared = 2 * block + line;
        T::with_scratch(grid.cols * (shared + grid.rows * own), |scratch| {
            let (bs, owns) = scratch.split_at_mut(grid.cols * shared);
            let groups: Vec<(SharedB<T>, Barrier)> = bs
                .chunks_mut(shared)
                .map(|buf| {
                    let buf = super::gemm::aligned(buf);
                    let blocks = SharedB {
                        ptr: buf.as_mut_ptr(),
                        len: block.min(buf.len() / 2),
                    };
                    (blocks, Barrier::new(grid.rows))
                })
                .collect();
            let mut owns = owns.chunks_mut(own);
            std::thread::scope(|s| {
                for (g, group) in groups.iter().enumerate() {
                    let (p0, p1) = Grid::share(col_panels, g, grid.cols);
                    let cols = (p0 * nr, (p1 * nr).min(n));
                    for t in 0..grid.rows {
                        let (q0, q1) = Grid::share(row_panels, t, grid.rows);
                        let rows = (q0 * mr, (q1 * mr).min(m));
                        let mine = owns.next().unwrap_or_default();
                        let tiles = &tiles;
                        let part = (t, grid.rows);
                        s.spawn(move || {
                            self.group_thread(
                                alpha, a, b, beta, tiles, group, part, rows, cols, mine,
                            )
                        });
                    }
                }
            });
        });
    }

    /// Thread `t` of `parts` in a group of the grid: C's rows `rows` (whole MR panels) of the
    /// group's columns `cols` (whole NR panels), its share of each block of B packed with the
    /// group's other threads into the group's blocks, its blocks of A and edge tile in `own`.
    #[allow(clippy::too_many_arguments)]
    fn group_thread(
        &self,
        alpha: T,
        a: Src<T>,
        b: MatRef<T>,
        beta: T,
        tiles: &Tiles<T>,
        (blocks, barrier): &(SharedB<T>, Barrier),
        (t, parts): (usize, usize),
        rows: (usize, usize),
        cols: (usize, usize),
        own: &mut [T],
    ) {
        // SAFETY: this thread's rows of its group's columns, which no other thread touches.
        unsafe { tiles.scale(rows, cols, beta) };
        let k = a.shape().1;
        // The same for every thread of the group: none waits at a barrier for one gone.
        if k == 0 || alpha == T::ZERO {
            return;
        }
        let (mr, nr) = (self.kernel.mr, self.kernel.nr);
        let (kc, nc) = (self.blocking.kc, self.blocking.nc);
        let (edge, rest) = own.split_at_mut(mr * nr);
        let abuf = super::gemm::aligned(rest);
        let width = cols.1 - cols.0;
        let mut step = 0;
        for jc in (0..width).step_by(nc) {
            let nb = nc.min(width - jc);
            let panels = nb.div_ceil(nr);
            for pc in (0..k).step_by(kc) {
                let kb = kc.min(k - pc);
                let which = step % 2;
                step += 1;
                let (p0, p1) = Grid::share(panels, t, parts);
                if p1 > p0 {
                    // SAFETY: this thread's panels of the block, which no other thread
                    // writes; none reads this block until the barrier below, and the last
                    // reads of it (two blocks ago) ended before the previous barrier.
                    let part = unsafe { blocks.part_mut(which, p0 * nr * kb, p1 * nr * kb) };
                    let first = cols.0 + jc + p0 * nr;
                    pack_b(
                        b.data,
                        b.ld,
                        pc,
                        kb,
                        first,
                        (p1 * nr).min(nb) - p0 * nr,
                        nr,
                        part,
                    );
                }
                barrier.wait();
                // SAFETY: packed before the barrier; written again only after the next one,
                // which no thread passes before every thread has done these reads.
                let bp = unsafe { blocks.get(which, panels * nr * kb) };
                self.row_blocks(
                    alpha,
                    a,
                    (pc, kb),
                    (cols.0 + jc, nb),
                    bp,
                    rows,
                    tiles,
                    abuf,
                    edge,
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::linalg::gemm::tests::random;
    use crate::bench::linalg::gemm::{Blocking, naive};
    use crate::bench::linalg::kernels;

    #[test]
    fn the_grid_is_as_square_as_the_threads_allow() {
        let g = |threads, m, n| Grid::choose(threads, m, n, 24, 8);
        let grid = |cols, rows| Grid { cols, rows };
        // A square product: 4 × 4 on 16 threads; columns first where rows and columns tie.
        assert_eq!(g(16, 4000, 4000), grid(4, 4));
        assert_eq!(g(2, 4000, 4000), grid(2, 1));
        assert_eq!(g(8, 4000, 4000), grid(4, 2));
        // Tall and thin: rows; short and wide: columns.
        assert_eq!(g(16, 100_000, 16), grid(1, 16));
        assert_eq!(g(16, 24, 100_000), grid(16, 1));
        // Fewer tiles than threads: one thread a tile at most.
        assert_eq!(g(16, 10, 10), grid(2, 1));
        assert_eq!(g(4, 1, 1), grid(1, 1));
        // A prime count on a square product: all of them, across the columns.
        assert_eq!(g(7, 4000, 4000), grid(7, 1));
    }

    /// Every grid, of more threads than tiles too, gives the plain product: blocks small enough
    /// that each group packs several blocks of B into its two in turn, C's rows and columns
    /// ending inside a tile, A packed beforehand or not, β zero, one and other.
    #[test]
    fn every_grid_multiplies_as_the_naive_product() {
        for kernel in kernels::available::<f64>() {
            let (mr, nr) = (kernel.mr, kernel.nr);
            let g = Gemm {
                kernel,
                blocking: Blocking {
                    mc: mr * 2,
                    kc: 16,
                    nc: nr * 3,
                },
                threads: 1,
            };
            let (m, n, k) = (mr * 5 + 3, nr * 7 + 1, 70);
            let (lda, ldb, ldc) = (m + 2, k + 1, m + 3);
            let (a, b) = (random(lda * k, 1), random(ldb * n, 2));
            let ar = MatRef {
                data: &a,
                rows: m,
                cols: k,
                ld: lda,
            };
            let br = MatRef {
                data: &b,
                rows: k,
                cols: n,
                ld: ldb,
            };
            let packed = g.pack(ar).unwrap();
            let grids = [
                (1, 2),
                (2, 1),
                (2, 2),
                (3, 2),
                (1, 5),
                (4, 3),
                (8, 1),
                (1, 9),
            ];
            for (cols, rows) in grids {
                for (alpha, beta) in [(1.0, 0.0), (-1.0, 1.0), (0.5, -2.0)] {
                    for src in [Src::Plain(ar), Src::Packed(&packed)] {
                        let c0 = random(ldc * n, 3);
                        let (mut got, mut want) = (c0.clone(), c0.clone());
                        let c = MatMut {
                            data: &mut got,
                            rows: m,
                            cols: n,
                            ld: ldc,
                        };
                        g.run_on(alpha, src, br, beta, c, Grid { cols, rows });
                        let mut c = MatMut {
                            data: &mut want,
                            rows: m,
                            cols: n,
                            ld: ldc,
                        };
                        naive(alpha, ar, br, beta, &mut c);
                        for (at, (x, y)) in got.iter().zip(&want).enumerate() {
                            let (i, j) = (at % ldc, at / ldc);
                            if i >= m {
                                assert_eq!(*x, c0[at], "padding changed at ({i}, {j})");
                            }
                            assert!(
                                (x - y).abs() < 1e-12 * k as f64,
                                "{} grid {cols}×{rows} α={alpha} β={beta}: ({i}, {j}) {x} ≠ {y}",
                                kernel.isa
                            );
                        }
                    }
                }
            }
        }
    }
}
