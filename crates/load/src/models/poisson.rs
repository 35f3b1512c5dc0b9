//! The `poisson` model: an open loop whose requests arrive as a Poisson
//! process at a mean rate — the gaps between a connection's requests drawn
//! from the exponential distribution, so that the clients together send
//! as independent users would — with latency counted from each request's
//! intended start, as the `rate` model counts it.

use std::time::Duration;

use afterburner_leaves::rng::Rng;

use super::{needs, Given, Headline, Model, ModelKind};
use crate::engine::share::Arrivals;
use crate::refusal::Refusal;

/// Requests at exponentially distributed gaps around a mean rate.
pub struct Poisson;

impl ModelKind for Poisson {
    fn name(&self) -> &'static str {
        "poisson"
    }

    fn summary(&self) -> &'static str {
        "open loop: requests arrive as a Poisson process at a mean of `rate` requests/s (exponential gaps), latency from each request's intended start"
    }

    fn read(&self, given: &Given) -> Result<Model, Refusal> {
        let rate = given
            .rate
            .ok_or_else(|| needs(self.name(), "rate", "REQUESTS_PER_SECOND", "1000"))?;
        Ok(Model {
            pacing: super::Pacing::POISSON,
            ..Model::at_rate(given.clients, rate, given.duration)
        })
    }

    fn arrivals(&self) -> Option<&'static dyn Arrivals> {
        Some(&Exponential)
    }

    fn headline(&self) -> Headline {
        Headline::P99
    }

    fn describe(&self, model: &Model, rate: Option<f64>) -> String {
        super::open_loop_line(model, rate, "Poisson arrivals")
    }
}

/// Exponential gaps: `-ln(U)` times the mean, `U` uniform on (0, 1]. A
/// superposition of the connections' independent processes is a Poisson
/// process at the sum of their rates.
struct Exponential;

impl Arrivals for Exponential {
    /// A Poisson process has no phase: the first gap is drawn like any.
    fn first(&self, _offset: Duration, mean: Duration, draw: &mut Rng) -> Duration {
        self.next(mean, draw)
    }

    fn next(&self, mean: Duration, draw: &mut Rng) -> Duration {
        let uniform = 1.0 - draw.next_f64();
        mean.mul_f64(-uniform.ln())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The gaps' mean and spread are the exponential law's (mean = sd =
    /// the mean gap; P(gap > mean) = e⁻¹), within five standard errors of
    /// 100,000 draws.
    #[test]
    fn gaps_follow_the_exponential_law() {
        let mean = Duration::from_millis(10);
        let mut draw = Rng::new(42);
        let n = 100_000;
        let gaps: Vec<f64> = (0..n)
            .map(|_| Exponential.next(mean, &mut draw).as_secs_f64() / 0.010)
            .collect();
        let m = gaps.iter().sum::<f64>() / f64::from(n);
        let var = gaps.iter().map(|g| (g - m).powi(2)).sum::<f64>() / f64::from(n);
        let tail = gaps.iter().filter(|&&g| g > 1.0).count() as f64 / f64::from(n);
        let se = 1.0 / f64::from(n).sqrt();
        assert!((m - 1.0).abs() < 5.0 * se, "mean {m}");
        assert!((var.sqrt() - 1.0).abs() < 10.0 * se, "sd {}", var.sqrt());
        let p = (-1.0f64).exp();
        assert!(
            (tail - p).abs() < 5.0 * (p * (1.0 - p) / f64::from(n)).sqrt(),
            "P(gap > mean) {tail}"
        );
    }

    #[test]
    fn the_model_needs_a_rate() {
        let given = Given {
            clients: 4,
            duration: Duration::from_secs(2),
            ..Given::default()
        };
        let refused = Poisson.read(&given).unwrap_err();
        assert_eq!(refused.setting, "rate");
        let model = Poisson
            .read(&Given {
                rate: Some(500.0),
                ..given
            })
            .unwrap();
        assert_eq!(model.pacing.name(), "poisson");
        assert!(model.open_loop() && model.fixed_duration());
    }
}
