//! What a load is: its driver and address, its requests, the model that
//! paces them and how it is measured.

use std::path::PathBuf;
use std::time::Duration;

use super::drivers::{ClientSpec, Driver};
use super::models::Model;
use super::request::mix::RequestMix;

/// One load run, fully specified.
#[derive(Debug, Clone)]
pub struct LoadSpec {
    pub driver: Driver,
    /// `host:port` for network drivers.
    pub address: Option<String>,
    /// The request, or a mix of them each drawn by its weight.
    pub requests: RequestMix,
    pub model: Model,
    /// Requests started in the warmup are sent but not counted.
    pub warmup: Duration,
    /// A request unanswered for this long counts as a timeout.
    pub timeout: Duration,
    /// Requests in flight per connection (pipelining); 1 by default.
    pub depth: usize,
    /// Event-loop threads for network drivers.
    pub threads: usize,
    /// Time-series interval.
    pub interval: Duration,
    pub seed: u64,
    /// Working directory of `exec` requests.
    pub cwd: Option<PathBuf>,
}

impl LoadSpec {
    /// What its driver's clients read of it.
    pub fn client_spec(&self) -> ClientSpec<'_> {
        ClientSpec {
            address: self.address.as_deref(),
            requests: &self.requests,
            timeout: self.timeout,
            cwd: self.cwd.as_deref(),
        }
    }

    /// Its warmup as a load of its own: its model for the warmup's
    /// duration ([`Model::for_warmup`]), no warmup.
    #[must_use]
    pub fn warmup_only(mut self) -> Self {
        let duration = self.warmup;
        self.model = self.model.for_warmup(duration);
        self.warmup = Duration::ZERO;
        self.interval = self.interval.min(duration);
        self
    }
}
