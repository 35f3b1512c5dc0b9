//! The `iterations` model: one client sends a count of requests in a row,
//! each when the last is answered.

use std::time::Duration;

use super::{Given, Headline, Model, ModelKind};
use crate::refusal::Refusal;

/// A request count in a row (1,000 unless `requests` says).
pub struct Iterations;

impl ModelKind for Iterations {
    fn name(&self) -> &'static str {
        "iterations"
    }

    fn summary(&self) -> &'static str {
        "one client sends `requests` (1000) in a row"
    }

    fn read(&self, given: &Given) -> Result<Model, Refusal> {
        Ok(Model::iterations(given.requests.unwrap_or(1000)))
    }

    fn headline(&self) -> Headline {
        Headline::Throughput
    }

    /// One client's iterations warm up as a closed loop of one client.
    fn for_warmup(&self, _model: &Model, duration: Duration) -> Model {
        Model::closed(1, Some(duration), None)
    }

    fn describe(&self, model: &Model, _rate: Option<f64>) -> String {
        format!("{} requests in a row", model.requests.unwrap_or(0))
    }
}
