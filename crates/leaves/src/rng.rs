//! A small deterministic PRNG (`SplitMix64`, Vigna's `splitmix64.c`): the same
//! seed gives the same round orders and bootstrap resamples on every machine
//! and every version, so a recorded seed reproduces a run's plan.
//!
//! The output sequence for a seed is part of the results format: changing the
//! algorithm, or how `below`, `shuffle` and `next_f64` consume it, changes
//! what a recorded seed means. The reference test below pins it.

/// `SplitMix64` generator (<https://prng.di.unimi.it/splitmix64.c>): 64 bits of
/// state, advanced by a Weyl sequence and mixed by a variant of `MurmurHash3`'s
/// finalizer. Not cryptographic; plenty for shuffles and bootstraps.
#[derive(Debug, Clone)]
pub struct Rng {
    state: u64,
}

impl Rng {
    /// A generator whose whole future is fixed by `seed` (any value, 0 included).
    pub fn new(seed: u64) -> Self {
        Self { state: seed }
    }

    /// The next 64 uniformly distributed bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` without modulo bias (Lemire's multiply-and-reject,
    /// "Fast Random Integer Generation in an Interval", 2019).
    ///
    /// # Panics
    ///
    /// If `n` is 0: an empty range has nothing to draw.
    pub fn below(&mut self, n: usize) -> usize {
        assert!(n > 0, "invariant: below() needs a non-empty range");
        let n = n as u64;
        // 2^64 mod n: products whose low half falls below it would make some
        // results one draw more likely than others, so they are redrawn.
        let threshold = n.wrapping_neg() % n;
        loop {
            let product = u128::from(self.next_u64()) * u128::from(n);
            #[allow(clippy::cast_possible_truncation)] // the low 64 bits, on purpose
            let low = product as u64;
            if low >= threshold {
                #[allow(clippy::cast_possible_truncation)] // the high half is < n
                return (product >> 64) as usize;
            }
        }
    }

    /// Uniform in `[0, 1)` with 53 bits of precision (the top bits of a draw).
    pub fn next_f64(&mut self) -> f64 {
        let top = (self.next_u64() >> 11) as f64;
        top / (1u64 << 53) as f64
    }

    /// A standard normal draw (mean 0, standard deviation 1), by Box-Muller;
    /// for tests and simulations. Uses two uniform draws per call.
    pub fn normal(&mut self) -> f64 {
        // 1 − [0, 1) is (0, 1]: ln never sees 0.
        let u1 = 1.0 - self.next_f64();
        let u2 = self.next_f64();
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    }

    /// Fisher-Yates (Durstenfeld) shuffle: every permutation equally likely.
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.below(i + 1);
            items.swap(i, j);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Reference outputs of Vigna's splitmix64.c
    // (https://prng.di.unimi.it/splitmix64.c), computed with an independent
    // Python port of it (Python 3, arbitrary-precision ints masked to 64 bits):
    //   M = 2**64 - 1
    //   def splitmix64(seed, k):
    //       s, out = seed, []
    //       for _ in range(k):
    //           s = (s + 0x9e3779b97f4a7c15) & M; z = s
    //           z = ((z ^ (z >> 30)) * 0xbf58476d1ce4e5b9) & M
    //           z = ((z ^ (z >> 27)) * 0x94d049bb133111eb) & M
    //           out.append(z ^ (z >> 31))
    //       return out
    //   splitmix64(1234567, 5); splitmix64(0, 5)
    // Seed 0's first value, 0xe220a8397b1dcdaf, is also the one widely quoted
    // for splitmix64.c.
    const REFERENCE_1234567: [u64; 5] = [
        6_457_827_717_110_365_317,
        3_203_168_211_198_807_973,
        9_817_491_932_198_370_423,
        4_593_380_528_125_082_431,
        16_408_922_859_458_223_821,
    ];
    const REFERENCE_0: [u64; 5] = [
        16_294_208_416_658_607_535,
        7_960_286_522_194_355_700,
        487_617_019_471_545_679,
        17_909_611_376_780_542_444,
        1_961_750_202_426_094_747,
    ];

    #[test]
    fn matches_reference_splitmix64() {
        for (seed, expected) in [(1_234_567, REFERENCE_1234567), (0, REFERENCE_0)] {
            let mut rng = Rng::new(seed);
            let got: Vec<u64> = (0..5).map(|_| rng.next_u64()).collect();
            assert_eq!(got, expected, "seed {seed}");
        }
        assert_eq!(REFERENCE_0[0], 0xe220_a839_7b1d_cdaf);
    }

    #[test]
    fn shuffle_is_a_seeded_permutation() {
        let mut a: Vec<u32> = (0..50).collect();
        let mut b = a.clone();
        Rng::new(7).shuffle(&mut a);
        Rng::new(7).shuffle(&mut b);
        assert_eq!(a, b, "the same seed must give the same order");
        let mut sorted = a.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..50).collect::<Vec<_>>());
        assert_ne!(
            a, sorted,
            "50 items left in order by a shuffle: astronomically unlikely"
        );
        let mut c: Vec<u32> = (0..50).collect();
        Rng::new(8).shuffle(&mut c);
        assert_ne!(a, c, "different seeds gave the same order of 50 items");
        let mut empty: [u32; 0] = [];
        Rng::new(1).shuffle(&mut empty);
    }

    #[test]
    fn below_is_in_range_and_roughly_uniform() {
        let mut rng = Rng::new(3);
        for n in 1..20 {
            assert!(rng.below(n) < n);
        }
        let mut counts = [0_u32; 6];
        for _ in 0..60_000 {
            counts[rng.below(6)] += 1;
        }
        // Each count is Binomial(60000, 1/6): sd ≈ 91, so ±500 is > 5 sd.
        for c in counts {
            assert!((9_500..=10_500).contains(&c), "{counts:?}");
        }
    }

    #[test]
    fn f64_and_normal_have_the_right_range_and_moments() {
        let mut rng = Rng::new(11);
        for _ in 0..10_000 {
            let x = rng.next_f64();
            assert!((0.0..1.0).contains(&x));
        }
        let draws: Vec<f64> = (0..20_000).map(|_| rng.normal()).collect();
        let mean = draws.iter().sum::<f64>() / draws.len() as f64;
        let var = draws.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / draws.len() as f64;
        // Standard errors: 0.007 for the mean, 0.01 for the variance.
        assert!(mean.abs() < 0.04, "mean {mean}");
        assert!((var - 1.0).abs() < 0.05, "variance {var}");
        assert!(draws.iter().all(|x| x.is_finite()));
    }
}
