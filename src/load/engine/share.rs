//! One thread's share of a load's clients and the pace they send at, as a
//! load model plans it and the event loop or the blocking threads run it.

use std::time::Duration;

/// How one thread's share of the clients sends.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Pace {
    /// Each client sends its next request when the last is answered.
    Closed,
    /// Open loop: each connection sends on its own schedule, a request
    /// every `per_conn`.
    Rate { per_conn: Duration },
}

/// One thread's share of a load's clients and how they send.
#[derive(Debug, Clone)]
pub struct Share {
    /// How many clients the thread runs.
    pub clients: usize,
    /// Global index of this share's first client.
    pub first: usize,
    /// Requests left to count, for count-bounded models.
    pub requests: Option<u64>,
    pub pace: Pace,
    /// Requests in flight per connection (pipelining).
    pub depth: usize,
    /// A request unanswered for this long counts as a timeout.
    pub timeout: Duration,
    /// Open loop: time between two consecutive requests over all clients.
    pub spacing: Duration,
}

impl Share {
    /// When client `i`'s schedule starts, so all clients together send at
    /// an even pace.
    pub fn offset(&self, i: usize) -> Duration {
        self.spacing * u32::try_from(self.first + i).unwrap_or(u32::MAX)
    }
}
