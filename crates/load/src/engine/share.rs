//! One thread's share of a load's clients and the pace they send at, as a
//! load model plans it and the event loop or the blocking threads run it.

use std::time::Duration;

use afterburner_leaves::rng::Rng;

/// When an open loop's connection sends: the gap before each request,
/// drawn from the mean gap (a model's; the engine knows none).
pub trait Arrivals: Sync {
    /// The gap before this connection's first request; `offset` staggers
    /// the connections evenly.
    fn first(&self, offset: Duration, _mean: Duration, _draw: &mut Rng) -> Duration {
        offset
    }

    /// The gap from one request's intended start to the next.
    fn next(&self, mean: Duration, draw: &mut Rng) -> Duration;
}

/// A request every mean gap exactly (the `rate` model's).
pub struct Even;

impl Arrivals for Even {
    fn next(&self, mean: Duration, _draw: &mut Rng) -> Duration {
        mean
    }
}

/// How one thread's share of the clients sends.
#[derive(Clone, Copy)]
pub enum Pace {
    /// Each client sends its next request when the last is answered.
    Closed,
    /// Open loop: each connection sends on its own schedule, a request
    /// every `per_conn` on average, the gaps drawn by `arrivals`.
    Open {
        per_conn: Duration,
        arrivals: &'static dyn Arrivals,
    },
}

impl std::fmt::Debug for Pace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Pace::Closed => f.write_str("Closed"),
            Pace::Open { per_conn, .. } => write!(f, "Open every {per_conn:?}"),
        }
    }
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
    /// Seed of the open loop's gaps (see [`Share::draws`]).
    pub seed: u64,
}

impl Share {
    /// When client `i`'s schedule starts, so all clients together send at
    /// an even pace.
    pub fn offset(&self, i: usize) -> Duration {
        self.spacing * u32::try_from(self.first + i).unwrap_or(u32::MAX)
    }

    /// Client `i`'s draws of its gaps: its own stream, from a state the
    /// seed's first draw puts far from another seed's (so that the loads of
    /// seeds 1 and 2 share no connection's gaps).
    pub fn draws(&self, i: usize) -> Rng {
        let base = Rng::new(self.seed).next_u64();
        Rng::new(base.wrapping_add((self.first + i) as u64))
    }
}
