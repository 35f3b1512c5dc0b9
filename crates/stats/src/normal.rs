//! The standard normal distribution's upper tail and its inverse, on the C
//! library's `erfc`: the large-sample approximations of the rank tests and
//! Student's t, and the sequential plan's boundaries, all read it here.

extern "C" {
    // From the C math library, which Rust's std already links on every
    // platform it supports; accurate to an ulp or so, which the p-values'
    // 1e-9 agreement with SciPy needs.
    fn erfc(x: f64) -> f64;
}

/// The complementary error function, from the C library.
pub(super) fn erfc_safe(x: f64) -> f64 {
    // SAFETY: erfc is a pure function of a double, defined for every input.
    unsafe { erfc(x) }
}

/// P(Z > z) for a standard normal Z.
pub(super) fn normal_sf(z: f64) -> f64 {
    0.5 * erfc_safe(z / std::f64::consts::SQRT_2)
}

/// The z with P(Z > z) = `p` for a standard normal Z and p in [0, ½] (∞ for
/// 0), by bisection on [`normal_sf`]: 200 halvings of [0, 40] reach the
/// precision of erfc.
pub(super) fn normal_upper_quantile(p: f64) -> f64 {
    if p <= 0.0 {
        return f64::INFINITY;
    }
    let (mut low, mut high) = (0.0_f64, 40.0_f64);
    for _ in 0..200 {
        let middle = f64::midpoint(low, high);
        if normal_sf(middle) > p {
            low = middle;
        } else {
            high = middle;
        }
    }
    f64::midpoint(low, high)
}
