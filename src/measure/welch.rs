//! Welch's t-test: do two sets of repetitions have different means, without assuming equal
//! variances? Used by `peakbench compare` to tell a real change from the machine's noise.
//!
//! t = (m₂ − m₁) / √(s₁²/n₁ + s₂²/n₂), with ν from the Welch–Satterthwaite equation, and the
//! two-sided p-value of Student's t distribution, P(|T| ≥ |t|) = I_{ν/(ν+t²)}(ν/2, ½), where
//! I is the regularized incomplete beta function (evaluated by its continued fraction).

/// The outcome of a test.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Welch {
    pub t: f64,
    /// Degrees of freedom (Welch–Satterthwaite).
    pub df: f64,
    /// Two-sided p-value: the probability of a difference at least this large if the means
    /// were equal.
    pub p: f64,
}

/// Mean and sample variance of `x` (NaN variance with one value).
pub fn mean_var(x: &[f64]) -> (f64, f64) {
    let n = x.len() as f64;
    let m = x.iter().sum::<f64>() / n;
    let v = x.iter().map(|v| (v - m).powi(2)).sum::<f64>() / (n - 1.0);
    (m, v)
}

/// Tests `a` against `b`; `None` when either has fewer than two finite samples (no variance
/// can be estimated). Two samples sets without any spread give p = 0 when their means differ
/// and p = 1 when they are equal.
pub fn test(a: &[f64], b: &[f64]) -> Option<Welch> {
    let d = Difference::of(a, b)?;
    if d.se2 == 0.0 {
        let p = if d.diff == 0.0 { 1.0 } else { 0.0 };
        let t = if d.diff == 0.0 { 0.0 } else { f64::INFINITY };
        return Some(Welch { t, df: f64::NAN, p });
    }
    let t = d.diff / d.se2.sqrt();
    Some(Welch {
        t,
        df: d.df,
        p: p_of(d.diff, d.se2, d.df),
    })
}

/// mean(b) − mean(a), its squared standard error s₁²/n₁ + s₂²/n₂ and its Welch–Satterthwaite
/// degrees of freedom (NaN where the error is 0); `None` as [`test`].
pub fn difference(a: &[f64], b: &[f64]) -> Option<(f64, f64, f64)> {
    Difference::of(a, b).map(|d| (d.diff, d.se2, d.df))
}

/// The difference of two sets' means and its spread, as Welch's test sees them.
struct Difference {
    /// mean(b) − mean(a).
    diff: f64,
    /// The squared standard error of `diff`: s₁²/n₁ + s₂²/n₂.
    se2: f64,
    /// Welch–Satterthwaite degrees of freedom (NaN where `se2` is 0).
    df: f64,
}

impl Difference {
    /// `None` when either set has fewer than two samples or one is not finite.
    fn of(a: &[f64], b: &[f64]) -> Option<Difference> {
        if a.len() < 2 || b.len() < 2 || a.iter().chain(b).any(|v| !v.is_finite()) {
            return None;
        }
        let (ma, va) = mean_var(a);
        let (mb, vb) = mean_var(b);
        let (qa, qb) = (va / a.len() as f64, vb / b.len() as f64);
        let se2 = qa + qb;
        let df = if se2 == 0.0 {
            f64::NAN
        } else {
            se2 * se2 / (qa * qa / (a.len() as f64 - 1.0) + qb * qb / (b.len() as f64 - 1.0))
        };
        Some(Difference {
            diff: mb - ma,
            se2,
            df,
        })
    }
}

/// The smallest difference of means that a two-sided Welch test at level `alpha` detects with
/// probability `power`, given the spread of `a` and `b` (their sample variances stand for the
/// true ones): (t₁₋α/₂,ν + t_power,ν) · √(s₁²/n₁ + s₂²/n₂), the usual power calculation with
/// Student's t in place of the normal. `None` with fewer than two finite samples on a side;
/// 0 where neither side has any spread (any difference is detected).
pub fn detectable_difference(a: &[f64], b: &[f64], alpha: f64, power: f64) -> Option<f64> {
    let d = Difference::of(a, b)?;
    Some(detectable_of(d.se2, d.df, alpha, power))
}

/// The `level` confidence interval (0.95: 95 %) of mean(b) ÷ mean(a), the ratio of two
/// machines' or runs' figures: the delta method on its logarithm, whose squared standard error
/// is s_a²/(n_a·m_a²) + s_b²/(n_b·m_b²), with Student's t at the Welch–Satterthwaite degrees of
/// freedom of those two terms; the interval is the ratio × e^(±t·se), never below 0. `None`
/// with fewer than two finite samples on a side or a mean that is not positive.
pub fn ratio_interval(a: &[f64], b: &[f64], level: f64) -> Option<(f64, f64)> {
    if a.len() < 2 || b.len() < 2 || a.iter().chain(b).any(|v| !v.is_finite()) {
        return None;
    }
    let (ma, va) = mean_var(a);
    let (mb, vb) = mean_var(b);
    if ma <= 0.0 || mb <= 0.0 {
        return None;
    }
    let ratio = mb / ma;
    let (qa, qb) = (
        va / (a.len() as f64 * ma * ma),
        vb / (b.len() as f64 * mb * mb),
    );
    let se2 = qa + qb;
    if se2 == 0.0 {
        return Some((ratio, ratio));
    }
    let df = se2 * se2 / (qa * qa / (a.len() as f64 - 1.0) + qb * qb / (b.len() as f64 - 1.0));
    let spread = (t_two_sided(1.0 - level, df) * se2.sqrt()).exp();
    Some((ratio / spread, ratio * spread))
}

/// Student's t(0.975) at `df` degrees of freedom, the factor of a 95 % interval of a mean:
/// computed once for 1 to 200 (the repetitions a point has), the normal's 1.96 with its first
/// correction beyond.
pub fn t95(df: usize) -> f64 {
    static TABLE: std::sync::OnceLock<Vec<f64>> = std::sync::OnceLock::new();
    let table = TABLE.get_or_init(|| (1..=200).map(|d| t_two_sided(0.05, d as f64)).collect());
    match df {
        0 => f64::NAN,
        d if d <= table.len() => table[d - 1],
        d => {
            let z = 1.959964;
            z + (z * z * z + z) / (4.0 * d as f64)
        }
    }
}

/// The two-sided p-value of a difference `diff` whose squared standard error is `se2`, at `df`
/// degrees of freedom: P(|T| ≥ |diff|/√se2). A difference without any spread gives 0 (or 1
/// where it is 0 too).
pub fn p_of(diff: f64, se2: f64, df: f64) -> f64 {
    if se2 <= 0.0 {
        return if diff == 0.0 { 1.0 } else { 0.0 };
    }
    let t = diff / se2.sqrt();
    incomplete_beta(df / 2.0, 0.5, df / (df + t * t)).clamp(0.0, 1.0)
}

/// The smallest difference a two-sided test at level `alpha` detects with probability `power`
/// where the difference's squared standard error is `se2` at `df` degrees of freedom, as
/// [`detectable_difference`] computes it for two sets of repetitions.
pub fn detectable_of(se2: f64, df: f64, alpha: f64, power: f64) -> f64 {
    if se2 <= 0.0 {
        return 0.0;
    }
    // t_power is the one-sided quantile: P(T > t) = 1 − power, a two-sided tail of 2(1 − power).
    let t = t_two_sided(alpha, df) + t_two_sided(2.0 * (1.0 - power).clamp(0.0, 1.0), df);
    t * se2.sqrt()
}

/// The t with P(|T| ≥ t) = `p` for Student's t with `df` degrees of freedom (bisection on the
/// tail, which falls monotonically in t; 0 for p ≥ 1).
fn t_two_sided(p: f64, df: f64) -> f64 {
    if p >= 1.0 {
        return 0.0;
    }
    let tail = |t: f64| incomplete_beta(df / 2.0, 0.5, df / (df + t * t));
    let (mut lo, mut hi) = (0.0_f64, 1.0_f64);
    // Grow the bracket: at ν = 1 and p = 1e-6 the quantile is about 3e5.
    while tail(hi) > p && hi < 1e12 {
        hi *= 4.0;
    }
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if tail(mid) > p {
            lo = mid;
        } else {
            hi = mid;
        }
        if hi - lo <= 1e-12 * hi {
            break;
        }
    }
    0.5 * (lo + hi)
}

/// ln Γ(x) for x > 0 (Lanczos, g = 7, 9 terms; ~15 significant digits).
fn ln_gamma(x: f64) -> f64 {
    const C: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        // Reflection: Γ(x)Γ(1−x) = π / sin(πx).
        return (std::f64::consts::PI / (std::f64::consts::PI * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut s = C[0];
    for (i, c) in C.iter().enumerate().skip(1) {
        s += c / (x + i as f64);
    }
    let t = x + 7.5;
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + s.ln()
}

/// The regularized incomplete beta function I_x(a, b), 0 ≤ x ≤ 1.
fn incomplete_beta(a: f64, b: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let front =
        (ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln()).exp();
    // The continued fraction converges fast for x < (a+1)/(a+b+2); use the symmetry otherwise.
    if x < (a + 1.0) / (a + b + 2.0) {
        front * beta_fraction(a, b, x) / a
    } else {
        1.0 - front * beta_fraction(b, a, 1.0 - x) / b
    }
}

/// The continued fraction of the incomplete beta function (modified Lentz's method).
fn beta_fraction(a: f64, b: f64, x: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let mut c = 1.0;
    let mut d = 1.0 - (a + b) * x / (a + 1.0);
    if d.abs() < TINY {
        d = TINY;
    }
    d = 1.0 / d;
    let mut h = d;
    for m in 1..300 {
        let m = m as f64;
        let m2 = 2.0 * m;
        for num in [
            m * (b - m) * x / ((a + m2 - 1.0) * (a + m2)),
            -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1.0)),
        ] {
            d = 1.0 + num * d;
            if d.abs() < TINY {
                d = TINY;
            }
            c = 1.0 + num / c;
            if c.abs() < TINY {
                c = TINY;
            }
            d = 1.0 / d;
            h *= d * c;
        }
        if (d * c - 1.0).abs() < 1e-15 {
            break;
        }
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The ratio's interval against a worked example (ν = 4, t₀.₉₇₅ = 2.776445), and its
    /// coverage: of 2,000 pairs of five normal repetitions with 5 % and 10 % spread, about 95 %
    /// of the intervals hold the true ratio.
    #[test]
    fn a_ratios_interval_is_worked_out_and_covers_it() {
        let (lo, hi) = ratio_interval(&[9.0, 10.0, 11.0], &[18.0, 20.0, 22.0], 0.95).unwrap();
        let spread = (2.776_445_f64 * (2.0_f64 / 300.0).sqrt()).exp();
        assert!(
            (lo - 2.0 / spread).abs() < 1e-5 && (hi - 2.0 * spread).abs() < 1e-5,
            "{lo} {hi}"
        );
        assert_eq!(
            ratio_interval(&[1.0, 1.0], &[2.0, 2.0], 0.95),
            Some((2.0, 2.0))
        );
        assert_eq!(ratio_interval(&[1.0], &[2.0, 2.0], 0.95), None);
        assert_eq!(ratio_interval(&[-1.0, 1.0], &[2.0, 2.0], 0.95), None);
        // Normal samples from a fixed linear congruential stream (Box–Muller).
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut uniform = || {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            ((state >> 11) as f64 + 0.5) / (1u64 << 53) as f64
        };
        let mut normal = || {
            let (u, v) = (uniform(), uniform());
            (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
        };
        let trials = 2000;
        let mut held = 0;
        for _ in 0..trials {
            let a: Vec<f64> = (0..5).map(|_| 100.0 * (1.0 + 0.05 * normal())).collect();
            let b: Vec<f64> = (0..5).map(|_| 80.0 * (1.0 + 0.10 * normal())).collect();
            let (lo, hi) = ratio_interval(&a, &b, 0.95).unwrap();
            if lo <= 0.8 && 0.8 <= hi {
                held += 1;
            }
        }
        let coverage = held as f64 / trials as f64;
        assert!((0.92..=0.98).contains(&coverage), "{coverage}");
    }

    #[test]
    fn ln_gamma_matches_factorials() {
        for (n, f) in [(1.0, 1.0), (2.0, 1.0), (5.0, 24.0), (10.0, 362_880.0)] {
            assert!((ln_gamma(n) - f64::ln(f)).abs() < 1e-10, "Γ({n})");
        }
        assert!((ln_gamma(0.5) - std::f64::consts::PI.sqrt().ln()).abs() < 1e-10);
    }

    #[test]
    fn p_values_match_students_t_tables() {
        // Two-sided critical values: t = 2.228 at ν = 10 and t = 12.706 at ν = 1 give p = 0.05;
        // t = 1.96… at ν → ∞ too. I_{ν/(ν+t²)}(ν/2, ½) is that p.
        for (t, df) in [
            (2.228_138_85, 10.0),
            (12.706_204_7, 1.0),
            (2.085_963_4, 20.0),
        ] {
            let p = incomplete_beta(df / 2.0, 0.5, df / (df + t * t));
            assert!((p - 0.05).abs() < 1e-6, "t={t} ν={df}: p={p}");
        }
        assert_eq!(incomplete_beta(3.0, 0.5, 1.0), 1.0);
    }

    #[test]
    fn welch_against_a_worked_example() {
        // R: t.test(c(27.5,21.0,19.0,23.6,17.0,17.9,16.9,20.1,21.9,22.6,23.1,19.6,19.0,21.7,21.4),
        //           c(27.1,22.0,20.8,23.4,23.4,23.5,25.8,22.0,24.8,20.2,21.9,22.1,22.9,20.5,24.4))
        // t = -2.4553 (a − b), df = 24.988, p-value = 0.02135
        let a = [
            27.5, 21.0, 19.0, 23.6, 17.0, 17.9, 16.9, 20.1, 21.9, 22.6, 23.1, 19.6, 19.0, 21.7,
            21.4,
        ];
        let b = [
            27.1, 22.0, 20.8, 23.4, 23.4, 23.5, 25.8, 22.0, 24.8, 20.2, 21.9, 22.1, 22.9, 20.5,
            24.4,
        ];
        let w = test(&a, &b).unwrap();
        assert!((w.t - 2.4553).abs() < 1e-3, "{w:?}");
        assert!((w.df - 24.988).abs() < 1e-2, "{w:?}");
        assert!((w.p - 0.02135).abs() < 1e-4, "{w:?}");
    }

    #[test]
    fn quantiles_and_the_detectable_difference_match_tables() {
        // Student's t tables: t(0.975, 10) = 2.228, t(0.975, 1) = 12.706, t(0.8, 10) = 0.8791.
        assert!((t_two_sided(0.05, 10.0) - 2.228_139).abs() < 1e-5);
        assert!((t_two_sided(0.05, 1.0) - 12.706_20).abs() < 1e-3);
        assert!((t_two_sided(0.4, 10.0) - 0.879_1).abs() < 1e-3);
        assert_eq!(t_two_sided(1.0, 3.0), 0.0);
        // Two sets of 11 with variance 1 each: SE = √(2/11), ν = 20;
        // (t(0.975, 20) + t(0.8, 20)) · SE = (2.0860 + 0.8600) · 0.42640 = 1.2562.
        let a: Vec<f64> = (0..11).map(|i| (i as f64 - 5.0) / 11f64.sqrt()).collect();
        let d = detectable_difference(&a, &a, 0.05, 0.8).unwrap();
        assert!((d - 1.2562).abs() < 2e-3, "{d}");
        // Fewer repetitions detect less; none of spread detect anything; one detects nothing.
        let ends = [a[0], a[10]];
        let two = detectable_difference(&ends, &ends, 0.05, 0.8).unwrap();
        assert!(two > 3.0 * d, "{two} against {d}");
        assert_eq!(
            detectable_difference(&[1.0, 1.0], &[2.0, 2.0], 0.05, 0.8),
            Some(0.0)
        );
        assert!(detectable_difference(&[1.0], &[1.0, 2.0], 0.05, 0.8).is_none());
    }

    #[test]
    fn degenerate_inputs() {
        assert!(test(&[1.0], &[1.0, 2.0]).is_none());
        assert!(test(&[1.0, f64::NAN], &[1.0, 2.0]).is_none());
        assert_eq!(test(&[2.0, 2.0], &[2.0, 2.0]).unwrap().p, 1.0);
        assert_eq!(test(&[2.0, 2.0], &[3.0, 3.0]).unwrap().p, 0.0);
        let same = test(&[10.0, 11.0, 9.0], &[10.0, 11.0, 9.0]).unwrap();
        assert!((same.p - 1.0).abs() < 1e-12 && same.t == 0.0);
    }
}
