//! The `rate` model: an open loop at a fixed rate, each connection's
//! requests evenly spaced, latency counted from each request's intended
//! start (wrk2's).

use super::{needs, Given, Headline, Model, ModelKind};
use crate::engine::share::{Arrivals, Even};
use crate::refusal::Refusal;

/// Requests at evenly spaced intended times.
pub struct Rate;

impl ModelKind for Rate {
    fn name(&self) -> &'static str {
        "rate"
    }

    fn summary(&self) -> &'static str {
        "open loop: `rate` requests/s evenly spaced over `clients`, latency from each request's intended start"
    }

    fn read(&self, given: &Given) -> Result<Model, Refusal> {
        let rate = given
            .rate
            .ok_or_else(|| needs(self.name(), "rate", "REQUESTS_PER_SECOND", "1000"))?;
        Ok(Model::at_rate(given.clients, rate, given.duration))
    }

    fn arrivals(&self) -> Option<&'static dyn Arrivals> {
        Some(&Even)
    }

    fn headline(&self) -> Headline {
        Headline::P99
    }

    fn describe(&self, model: &Model, rate: Option<f64>) -> String {
        super::open_loop_line(model, rate, "open loop")
    }
}
