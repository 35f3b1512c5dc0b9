//! The `closed` model: each client sends its next request when its last is
//! answered, for a duration or until a count is answered.

use super::{Given, Headline, Model, ModelKind};
use crate::refusal::Refusal;

/// Clients in a closed loop.
pub struct Closed;

impl ModelKind for Closed {
    fn name(&self) -> &'static str {
        "closed"
    }

    fn summary(&self) -> &'static str {
        "`clients` each send when their last request is answered, for `duration` or `requests`"
    }

    fn read(&self, given: &Given) -> Result<Model, Refusal> {
        Ok(Model::closed(
            given.clients,
            given.requests.is_none().then_some(given.duration),
            given.requests,
        ))
    }

    fn headline(&self) -> Headline {
        Headline::Throughput
    }

    fn describe(&self, model: &Model, _rate: Option<f64>) -> String {
        match model.requests {
            Some(n) => format!("{} clients, {n} requests", model.clients),
            None => format!("{} clients, closed loop", model.clients),
        }
    }
}
