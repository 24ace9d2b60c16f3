//! The HPL problem: a random dense system A·x = b (elements uniform in [−0.5, 0.5), each a hash
//! of its seed and position, so that A can be generated in parallel and generated again for the
//! residual instead of kept), HPL's operation count, and HPL's scaled residual check.

use super::kernels::Element;

use crate::workload::linalg::RESIDUAL_THRESHOLD;

/// Element (i, j) of the system of size `n` with `seed`; column `n` is b.
pub fn element(seed: u64, n: usize, i: usize, j: usize) -> f64 {
    // splitmix64 of the position: independent of the order elements are made in.
    let mut z = seed
        .wrapping_add((j as u64).wrapping_mul(n as u64 + 1).wrapping_add(i as u64))
        .wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    (z >> 11) as f64 / (1u64 << 53) as f64 - 0.5
}

/// The first `cols` columns of [A | b] (`cols = n`: A; `n + 1`: A with b beside it) as a
/// column-major matrix of `n` rows with leading dimension `ld`, made on `threads` threads
/// (rounded to `T`).
pub fn matrix<T: Element>(seed: u64, n: usize, cols: usize, ld: usize, threads: usize) -> Vec<T> {
    let mut a = vec![T::ZERO; ld * cols];
    // Huge pages before the first touch: the multiply's tiles of C and its packing read
    // columns a page apart (2–3 % of DGEMM at N = 4000 on 2 threads of a Zen 4).
    crate::bench::buffer::advise_huge_pages(&a);
    let per = cols.div_ceil(threads.max(1)).max(1);
    std::thread::scope(|s| {
        for (t, chunk) in a.chunks_mut(per * ld).enumerate() {
            s.spawn(move || {
                for (c, col) in chunk.chunks_mut(ld).enumerate() {
                    let j = t * per + c;
                    for (i, x) in col.iter_mut().take(n).enumerate() {
                        *x = T::from_f64(element(seed, n, i, j));
                    }
                }
            });
        }
    });
    a
}

/// b, the right-hand side.
pub fn rhs(seed: u64, n: usize) -> Vec<f64> {
    (0..n).map(|i| element(seed, n, i, n)).collect()
}

/// HPL's check of a solution.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Residual {
    /// ‖A·x − b‖∞ / (ε · (‖A‖∞ · ‖x‖∞ + ‖b‖∞) · N).
    pub scaled: f64,
    /// `scaled` < [`RESIDUAL_THRESHOLD`] (and a number).
    pub passed: bool,
}

/// The scaled residual of `x` for the system (`seed`, `n`), with A generated again, column by
/// column.
pub fn residual(seed: u64, n: usize, x: &[f64]) -> Residual {
    let b = rhs(seed, n);
    let mut r: Vec<f64> = b.iter().map(|v| -v).collect();
    let mut row_sums = vec![0.0f64; n];
    for (j, &xj) in x.iter().enumerate().take(n) {
        for i in 0..n {
            let a = element(seed, n, i, j);
            r[i] += a * xj;
            row_sums[i] += a.abs();
        }
    }
    let norm = |v: &[f64]| v.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    let eps = f64::EPSILON / 2.0;
    let scaled = norm(&r) / (eps * (norm(&row_sums) * norm(x) + norm(&b)) * n.max(1) as f64);
    Residual {
        scaled,
        passed: scaled.is_finite() && scaled < RESIDUAL_THRESHOLD,
    }
}

#[cfg(test)]
mod tests {
    use super::super::gemm::{self, Blocking, Gemm};
    use super::super::{kernels, lu, lu_team};
    use super::*;

    /// Solves the system twice, by the factors and with b carried through the factorisation
    /// (HPL's way, LINPACK's), checks that both agree to rounding and that the pivots are the
    /// same, and returns the carried solve's x.
    fn solve(g: &Gemm, seed: u64, n: usize, nb: usize) -> Vec<f64> {
        let ld = n + 3;
        let mut a = matrix(seed, n, n, ld, 2);
        let mut ipiv = vec![0; n];
        lu::factor(g, &mut a, n, ld, nb, &mut ipiv).unwrap();
        let mut x = rhs(seed, n);
        lu::solve(&a, n, ld, &ipiv, &mut x);
        let mut ab = matrix(seed, n, n + 1, ld, 3);
        let mut carried_piv = vec![0; n];
        lu_team::solve_carried(g, &mut ab, n, ld, nb, &mut carried_piv).unwrap();
        assert_eq!(ipiv, carried_piv);
        let carried = ab[n * ld..n * ld + n].to_vec();
        let scale = x.iter().fold(1.0f64, |m, v| m.max(v.abs()));
        for (c, f) in carried.iter().zip(&x) {
            assert!((c - f).abs() <= 1e-9 * scale, "n={n} nb={nb}: {c} vs {f}");
        }
        carried
    }

    /// The solve passes HPL's check for every kernel, block and thread count, and the check
    /// fails on a corrupted solution.
    #[test]
    fn a_solved_system_passes_and_a_corrupted_one_fails() {
        for kernel in kernels::available::<f64>() {
            for (threads, nb, n) in [
                (1, 16, 1),
                (1, 16, 7),
                (2, 16, 130),
                (3, 32, 200),
                (2, 64, 257),
                // Many guided chunks of the trailing update per step, NB not a multiple of NR.
                (3, 24, 600),
            ] {
                let g = Gemm {
                    kernel,
                    blocking: Blocking {
                        mc: kernel.mr * 2,
                        kc: 32,
                        nc: kernel.nr * 4,
                    },
                    threads,
                };
                let x = solve(&g, 42 + n as u64, n, nb);
                let r = residual(42 + n as u64, n, &x);
                assert!(r.passed, "{} n={n} nb={nb}: {r:?}", kernel.isa);
                assert!(r.scaled < 1.0, "{r:?}");
                if n > 1 {
                    let mut bad = x.clone();
                    bad[n / 2] += 1e-6 * bad[n / 2].abs().max(1.0);
                    let r = residual(42 + n as u64, n, &bad);
                    assert!(!r.passed, "a corrupted solution passed: {r:?}");
                }
            }
        }
    }

    /// On a known 3 × 3 system the solution is exact to rounding, and the pivots are the ones
    /// partial pivoting picks.
    #[test]
    fn a_known_system() {
        // A = [[2, 1, 1], [4, -6, 0], [-2, 7, 2]] (rows), x = [1, 2, 3]: b = [7, -8, 18].
        let mut a = vec![2.0, 4.0, -2.0, 1.0, -6.0, 7.0, 1.0, 0.0, 2.0];
        let mut ipiv = vec![0; 3];
        lu::factor(&Gemm::new(1), &mut a, 3, 3, 2, &mut ipiv).unwrap();
        // Step 0 takes row 1 (|4|); step 1 finds a tie (4 and 4) and keeps the first, as idamax.
        assert_eq!(ipiv, vec![1, 1, 2]);
        let mut b = vec![7.0, -8.0, 18.0];
        lu::solve(&a, 3, 3, &ipiv, &mut b);
        for (x, want) in b.iter().zip([1.0, 2.0, 3.0]) {
            assert!((x - want).abs() < 1e-14, "{b:?}");
        }
    }

    #[test]
    fn a_singular_matrix_is_an_error() {
        let n = 40;
        let mut a = matrix(1, n, n, n, 1);
        // Column 17 = column 3.
        let (l, r) = a.split_at_mut(17 * n);
        r[..n].copy_from_slice(&l[3 * n..4 * n]);
        let mut ipiv = vec![0; n];
        let e = lu::factor(&Gemm::new(2), &mut a, n, n, 16, &mut ipiv);
        // Exactly singular in exact arithmetic; in floating point the pivot is zero or tiny.
        match e {
            Err(lu::LuError::Singular(c)) => assert!(c >= 17, "{c}"),
            Ok(()) => {
                let mut x = rhs(1, n);
                lu::solve(&a, n, n, &ipiv, &mut x);
                assert!(x.iter().any(|v| !v.is_finite() || v.abs() > 1e6), "{x:?}");
            }
            Err(e) => panic!("{e}"),
        }
        // The same through the team of threads that carries b (its error path: the panel's
        // thread stops the team, the helpers hand their blocks back, the scope closes).
        let mut ab = matrix(1, n, n + 1, n, 1);
        let (l, r) = ab.split_at_mut(17 * n);
        r[..n].copy_from_slice(&l[3 * n..4 * n]);
        match lu_team::solve_carried(&Gemm::new(2), &mut ab, n, n, 16, &mut ipiv) {
            Err(lu::LuError::Singular(c)) => assert!(c >= 17, "{c}"),
            Ok(()) => assert!(
                ab[n * n..].iter().any(|v| !v.is_finite() || v.abs() > 1e6),
                "{:?}",
                &ab[n * n..]
            ),
            Err(e) => panic!("{e}"),
        }
        let mut short = vec![0.0; 10];
        assert!(lu::factor(&Gemm::new(1), &mut short, 4, 4, 2, &mut ipiv).is_err());
        assert!(lu_team::solve_carried(&Gemm::new(2), &mut short, 4, 4, 2, &mut ipiv).is_err());
    }

    #[test]
    fn elements_are_uniform_and_reproducible() {
        let a: Vec<f64> = matrix(7, 50, 50, 50, 3);
        assert_eq!(a, matrix::<f64>(7, 50, 50, 50, 1));
        assert!(a.iter().all(|x| (-0.5..0.5).contains(x)));
        let mean = a.iter().sum::<f64>() / a.len() as f64;
        assert!(mean.abs() < 0.05, "{mean}");
        assert_ne!(a, matrix::<f64>(8, 50, 50, 50, 1));
        // In single precision, the same values rounded.
        let single: Vec<f32> = matrix(7, 50, 50, 50, 2);
        assert!(single.iter().zip(&a).all(|(s, d)| *s == *d as f32));
        assert!((crate::workload::linalg::hpl_flops(1000) - (2.0 / 3.0 * 1e9 + 1.5e6)).abs() < 1.0);
    }

    /// The packed inverse of a panel's unit lower triangle, applied by the multiply, gives the
    /// identity: L11⁻¹ · L11 = I (the values above L11's diagonal, U's, are not read).
    #[test]
    fn a_panels_packed_inverse_undoes_its_triangle() {
        for kernel in kernels::available::<f64>() {
            let g = Gemm {
                kernel,
                blocking: Blocking::for_caches(&kernel, None, None, None),
                threads: 1,
            };
            let (jb, ld) = (37, 45);
            // Lower triangle from HPL's elements (|l| ≤ 0.5), U's place filled with 9s.
            let mut l: Vec<f64> = matrix(3, ld, jb, ld, 1);
            for c in 0..jb {
                l[c * ld..c * ld + c].fill(9.0);
            }
            let inv = lu::pack_inverse(&g, &l, jb, ld).unwrap();
            let mut unit = l.clone();
            for c in 0..jb {
                unit[c * ld..c * ld + c].fill(0.0);
                unit[c * ld + c] = 1.0;
            }
            let mut out = vec![f64::NAN; jb * jb];
            let triangle = gemm::MatRef {
                data: &unit,
                rows: jb,
                cols: jb,
                ld,
            };
            let product = gemm::MatMut {
                data: &mut out,
                rows: jb,
                cols: jb,
                ld: jb,
            };
            g.run_packed(1.0, &inv, triangle, 0.0, product).unwrap();
            for c in 0..jb {
                for r in 0..jb {
                    let want = if r == c { 1.0 } else { 0.0 };
                    let got = out[r + c * jb];
                    assert!(
                        (got - want).abs() < 1e-12,
                        "{} ({r}, {c}): {got}",
                        kernel.isa
                    );
                }
            }
        }
    }
}
