//! Student's t distribution for real (not only whole) degrees of freedom:
//! its upper tail, from the regularized incomplete beta function, and the
//! quantile that intervals need, by bisection on that tail.
//!
//! `P(T > t) = ½·I_x(ν/2, ½)` with `x = ν / (ν + t²)` for t ≥ 0 (Abramowitz
//! & Stegun 26.7.1 with 26.5.27); `I_x` is evaluated by its continued
//! fraction (DLMF 8.17.22), on the side of the symmetry `I_x(a, b) = 1 −
//! I_{1−x}(b, a)` where it converges fast (DLMF 8.17.4).

use std::os::raw::c_int;

use super::normal::normal_upper_quantile;

/// Degrees of freedom beyond which the t distribution is taken as the
/// standard normal: at 10⁷ their quantiles differ in the 8th digit.
const NORMAL_BEYOND: f64 = 1e7;
/// Continued-fraction terms before giving up (never reached for a ≤ 5·10⁶
/// at the precision asked; convergence takes O(√a) terms).
const MAX_TERMS: usize = 100_000;

extern "C" {
    // From the C math library, which Rust's std links on every platform it
    // supports; the re-entrant form, since plain lgamma writes the global
    // `signgam` and tests run on several threads.
    fn lgamma_r(x: f64, sign: *mut c_int) -> f64;
}

/// ln |Γ(x)|, from the C library.
pub(super) fn ln_gamma(x: f64) -> f64 {
    let mut sign: c_int = 0;
    // SAFETY: lgamma_r is a pure function of a double that writes the sign
    // of Γ(x) through the pointer, which points to a live local.
    unsafe { lgamma_r(x, &raw mut sign) }
}

/// The regularized incomplete beta function `I_x(a, b)` for a, b > 0 and x in
/// [0, 1].
fn incomplete_beta(x: f64, a: f64, b: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    // The continued fraction converges fast for x < (a + 1) / (a + b + 2);
    // beyond it, the mirror image does.
    if x > (a + 1.0) / (a + b + 2.0) {
        return 1.0 - incomplete_beta(1.0 - x, b, a);
    }
    let ln_front =
        a * x.ln() + b * (1.0 - x).ln() - (ln_gamma(a) + ln_gamma(b) - ln_gamma(a + b)) - a.ln();
    ln_front.exp() * beta_fraction(x, a, b)
}

/// 1 / (1 + d₁ / (1 + d₂ / (1 + …))) with DLMF 8.17.22's coefficients
/// d₂ₘ = m(b − m)x / ((a + 2m − 1)(a + 2m)) and
/// d₂ₘ₊₁ = −(a + m)(a + b + m)x / ((a + 2m)(a + 2m + 1)), evaluated
/// forwards by the modified Lentz method (Lentz 1976; Thompson & Barnett
/// 1986), which keeps each partial quotient away from 0.
fn beta_fraction(x: f64, a: f64, b: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let guard = |v: f64| if v.abs() < TINY { TINY } else { v };
    // The fraction b₀ + a₁/(b₁ + a₂/(b₂ + …)) with b₀ = 0 is not
    // Lentz-friendly, so evaluate 1 + d₁/(1 + d₂/(1 + …)) and invert it.
    let mut value = 1.0;
    let (mut upper, mut lower) = (1.0, 0.0);
    for term in 1..=MAX_TERMS {
        let half = (term / 2) as f64;
        let coefficient = if term % 2 == 0 {
            half * (b - half) * x / ((a + 2.0 * half - 1.0) * (a + 2.0 * half))
        } else {
            -(a + half) * (a + b + half) * x / ((a + 2.0 * half) * (a + 2.0 * half + 1.0))
        };
        lower = 1.0 / guard(1.0 + coefficient * lower);
        upper = guard(1.0 + coefficient / upper);
        let step = upper * lower;
        value *= step;
        if (step - 1.0).abs() < 1e-15 {
            break;
        }
    }
    1.0 / value
}

/// P(T > t) for Student's t with `df` degrees of freedom (df > 0; an
/// infinite df is the standard normal).
pub fn sf(t: f64, df: f64) -> f64 {
    if df >= NORMAL_BEYOND {
        return super::normal::normal_sf(t);
    }
    let tail = 0.5 * incomplete_beta(df / (df + t * t), df / 2.0, 0.5);
    if t >= 0.0 {
        tail
    } else {
        1.0 - tail
    }
}

/// The t with P(T > t) = `p` for p in (0, ½] (∞ for p ≤ 0), by bisection
/// on [`sf`]: e.g. `upper_quantile(0.025, 9.0)` is the 97.5% quantile that
/// a 95% interval with 9 degrees of freedom uses.
pub fn upper_quantile(p: f64, df: f64) -> f64 {
    if p <= 0.0 {
        return f64::INFINITY;
    }
    if df >= NORMAL_BEYOND {
        return normal_upper_quantile(p);
    }
    let mut high = 1.0_f64;
    // One degree of freedom at p = 10⁻¹⁰ needs t ≈ 3·10⁹: doubling gets
    // there in 32 steps.
    while sf(high, df) > p && high < 1e300 {
        high *= 2.0;
    }
    let mut low = 0.0_f64;
    while high - low > 1e-14 * high {
        let middle = f64::midpoint(low, high);
        if sf(middle, df) > p {
            low = middle;
        } else {
            high = middle;
        }
    }
    f64::midpoint(low, high)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tolerance: f64) -> bool {
        (a - b).abs() <= tolerance * b.abs().max(1e-300)
    }

    // SciPy 1.17.1: for each (p, df),
    //   print(repr(float(scipy.stats.t.isf(p, df))))
    // whole and fractional degrees of freedom (Satterthwaite's are
    // fractional), p from 0.25 to 10⁻⁶.
    #[test]
    fn upper_quantile_matches_scipy() {
        let cases: [(f64, f64, f64); 10] = [
            (0.025, 1.0, 12.706_204_736_174_705),
            (0.025, 2.0, 4.302_652_729_749_464),
            (0.025, 9.0, 2.262_157_162_798_205),
            (0.025, 4.37, 2.686_148_100_040_886),
            (0.025, 27.5, 2.050_086_345_720_724),
            (0.005, 15.0, 2.946_712_883_475_238_5),
            (0.25, 3.0, 0.764_892_328_404_344_4),
            (1e-6, 5.0, 24.771_029_720_515_948),
            (0.025, 1e5, 1.959_987_707_534_61),
            (0.05, 0.5, 41.136_000_092_878_26),
        ];
        for (p, df, expected) in cases {
            let got = upper_quantile(p, df);
            assert!(
                close(got, expected, 1e-9),
                "t({df}) upper {p}: {got} != {expected}"
            );
        }
        // Beyond 10⁷ degrees of freedom the normal quantile stands in.
        assert!(close(
            upper_quantile(0.025, 1e8),
            1.959_964_008_262_766_7,
            1e-7
        ));
        assert!(upper_quantile(0.0, 3.0).is_infinite());
        assert!(close(upper_quantile(0.5, 7.0) + 1.0, 1.0, 1e-12));
    }

    // SciPy 1.17.1: print(repr(float(scipy.stats.t.sf(t, df)))) for each
    // (t, df).
    #[test]
    fn sf_matches_scipy() {
        let cases: [(f64, f64, f64); 6] = [
            (2.0, 3.0, 0.069_662_984_279_421_52),
            (-1.5, 7.5, 0.912_759_714_706_768),
            (0.0, 4.0, 0.5),
            (10.0, 2.2, 0.003_552_231_855_129_221),
            (3.0, 120.0, 0.001_641_950_860_117_079_9),
            (40.0, 1.0, 0.007_956_089_912_025_812),
        ];
        for (t, df, expected) in cases {
            let got = sf(t, df);
            assert!(
                close(got, expected, 1e-10),
                "t({df}) sf {t}: {got} != {expected}"
            );
        }
    }
}
