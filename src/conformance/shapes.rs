//! The known distributions the suite draws run times from, seeded with
//! [`crate::rng::Rng`]: one [`Shape`] per line of [`SHAPES`], each a noise
//! law, a shared round drift, bursts, one variant noisier than the rest,
//! and the true effect of the changed variants.
//!
//! The truth a procedure is held to is the shape's `effect`: every shape
//! draws the baseline and an unchanged variant from one law (their
//! per-round log ratio is symmetric about 0, so its median, mean and the
//! ratio of means all agree on 1), a changed variant from the same law
//! times `effect`, and a noisier variant with symmetric linear noise of the
//! same mean (its median and mean still 1).

use crate::rng::Rng;

/// How one run's time scatters about its true value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Noise {
    /// 1 + cv·z, z standard normal.
    Normal,
    /// exp(cv·z): right-skewed in time, symmetric in its logarithm.
    Lognormal,
    /// 1 + cv·t/√3, t Student's with 3 degrees of freedom (unit variance,
    /// no fourth moment).
    HeavyTails,
}

/// A law of run times for a bench of several variants.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Shape {
    /// Its name in the docs table.
    pub name: &'static str,
    pub noise: Noise,
    /// The noise's scale: a coefficient of variation (`Normal`, `HeavyTails`)
    /// or the log's standard deviation (`Lognormal`).
    pub cv: f64,
    /// Each round's drift, shared by every run in it: a factor uniform in
    /// [1, 1 + drift] (a busy neighbour).
    pub drift: f64,
    /// The share of runs delayed by a burst (each run alone).
    pub burst: f64,
    /// The last variant's noise, as a multiple of the others' (1: as noisy).
    pub noisier: f64,
    /// The changed variants' true ratio to the baseline (1.05: 5% slower).
    pub effect: f64,
}

/// A burst's delay: the run takes this factor longer.
pub const BURST_DELAY: f64 = 1.3;

const BASE: Shape = Shape {
    name: "",
    noise: Noise::Normal,
    cv: 0.03,
    drift: 0.0,
    burst: 0.0,
    noisier: 1.0,
    effect: 1.0,
};

/// Every shape the suite knows; a procedure's rows name theirs from here.
pub const SHAPES: &[Shape] = &[
    Shape {
        name: "equal normal noise (CV 3%)",
        ..BASE
    },
    Shape {
        name: "lognormal skew (σ 0.25)",
        noise: Noise::Lognormal,
        cv: 0.25,
        ..BASE
    },
    Shape {
        name: "heavy tails (t, 3 df, 3%)",
        noise: Noise::HeavyTails,
        ..BASE
    },
    Shape {
        name: "bursts (a tenth of runs +30%)",
        burst: 0.1,
        cv: 0.02,
        ..BASE
    },
    Shape {
        name: "shared round drift (0–20%)",
        drift: 0.2,
        ..BASE
    },
    Shape {
        name: "lognormal 8% + drift + bursts",
        noise: Noise::Lognormal,
        cv: 0.08,
        drift: 0.2,
        burst: 0.1,
        ..BASE
    },
    Shape {
        name: "one variant 3× as noisy (2%)",
        cv: 0.02,
        noisier: 3.0,
        ..BASE
    },
    Shape {
        name: "one variant 5× as noisy (2%)",
        cv: 0.02,
        noisier: 5.0,
        ..BASE
    },
    Shape {
        name: "true effect 2% (CV 3%)",
        effect: 1.02,
        ..BASE
    },
    Shape {
        name: "true effect 5% (CV 3%)",
        effect: 1.05,
        ..BASE
    },
    Shape {
        name: "true effect 7% (CV 3%)",
        effect: 1.07,
        ..BASE
    },
    Shape {
        name: "a doubling (CV 3%)",
        effect: 2.0,
        ..BASE
    },
    Shape {
        name: "quiet, 1% noise",
        cv: 0.01,
        ..BASE
    },
];

/// The shape named `name` in [`SHAPES`].
///
/// # Panics
///
/// If there is none: a row names a shape that is not in the list.
pub fn shape(name: &str) -> Shape {
    *SHAPES
        .iter()
        .find(|s| s.name.starts_with(name))
        .unwrap_or_else(|| panic!("invariant: no shape named {name:?} in SHAPES"))
}

impl Shape {
    /// Run times of `variants` variants (the first the baseline) over
    /// `rounds` rounds: `[variant][round]`, about 1 (a unit of time).
    /// Variants whose index is in `changed` carry the effect; the last
    /// variant carries `noisier`.
    pub fn draw(
        &self,
        rng: &mut Rng,
        variants: usize,
        rounds: u32,
        changed: &[usize],
    ) -> Vec<Vec<f64>> {
        let mut out = vec![Vec::with_capacity(rounds as usize); variants];
        for _ in 0..rounds {
            let drift = 1.0 + self.drift * rng.next_f64();
            for (v, times) in out.iter_mut().enumerate() {
                let scale = if v + 1 == variants { self.noisier } else { 1.0 };
                let effect = if changed.contains(&v) {
                    self.effect
                } else {
                    1.0
                };
                times.push(drift * effect * self.run(rng, scale));
            }
        }
        out
    }

    /// One run's factor: its noise (scaled by `scale`) and maybe a burst.
    fn run(&self, rng: &mut Rng, scale: f64) -> f64 {
        let cv = self.cv * scale;
        let noise = match (self.noise, scale > 1.0) {
            // A noisier variant keeps its mean and median at 1.
            (Noise::Lognormal, false) => (cv * rng.normal()).exp(),
            (Noise::Normal | Noise::Lognormal, _) => 1.0 + cv * rng.normal(),
            (Noise::HeavyTails, _) => 1.0 + cv * student_t3(rng) / 3.0_f64.sqrt(),
        };
        let burst = if rng.next_f64() < self.burst {
            BURST_DELAY
        } else {
            1.0
        };
        // A run never takes less than a twentieth of its time.
        noise.max(0.05) * burst
    }
}

/// A draw of Student's t with 3 degrees of freedom: z / √(χ²₃ / 3).
fn student_t3(rng: &mut Rng) -> f64 {
    let chi2: f64 = (0..3).map(|_| rng.normal().powi(2)).sum();
    rng.normal() / (chi2 / 3.0).sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The draws have the moments their law says: a check that the
    /// generators are what the table's rows are named after.
    #[test]
    fn draws_have_their_laws_moments() {
        let mut rng = Rng::new(7);
        let draws = 20_000;
        let mean_sd = |xs: &[f64]| {
            let mu = xs.iter().sum::<f64>() / xs.len() as f64;
            let var = xs.iter().map(|y| (y - mu).powi(2)).sum::<f64>() / (xs.len() - 1) as f64;
            (mu, var.sqrt())
        };
        let heavy = shape("heavy tails").draw(&mut rng, 1, draws, &[]);
        let (mean, sd) = mean_sd(&heavy[0]);
        assert!(
            (mean - 1.0).abs() < 0.002 && (sd - 0.03).abs() < 0.004,
            "{mean} {sd}"
        );
        let skewed = shape("lognormal skew").draw(&mut rng, 1, draws, &[]);
        let logs: Vec<f64> = skewed[0].iter().map(|x| x.ln()).collect();
        let (mean, sd) = mean_sd(&logs);
        assert!(mean.abs() < 0.01 && (sd - 0.25).abs() < 0.01, "{mean} {sd}");
        let delayed = shape("bursts").draw(&mut rng, 1, draws, &[]);
        let share = delayed[0].iter().filter(|x| **x > 1.15).count() as f64 / f64::from(draws);
        assert!((share - 0.1).abs() < 0.01, "{share}");
        let noisier = shape("one variant 5×").draw(&mut rng, 2, draws, &[]);
        let (mean, sd) = mean_sd(&noisier[1]);
        assert!(
            (mean - 1.0).abs() < 0.003 && (sd - 0.10).abs() < 0.005,
            "{mean} {sd}"
        );
        let changed = shape("true effect 5%").draw(&mut rng, 2, draws, &[1]);
        let ratio = mean_sd(&changed[1]).0 / mean_sd(&changed[0]).0;
        assert!((ratio - 1.05).abs() < 0.003, "{ratio}");
    }
}
