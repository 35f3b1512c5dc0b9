//! How a load paces its requests. A model — `iterations` (one client, a
//! count in a row), `closed` (each client sends when its last request is
//! answered) or `rate` (open loop, at intended times) — becomes each
//! engine thread's share of the clients and their pace ([`plan`]). The
//! `sla` model searches for the highest rate whose latency holds, by runs
//! of the `rate` model ([`sla`]).

pub mod sla;

use std::time::Duration;

use anyhow::{bail, Result};
use serde::{Deserialize, Serialize};

use crate::load::engine::share::{Pace, Share};

/// How requests are paced.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase", tag = "model")]
pub enum Model {
    /// One client, `requests` in a row.
    Iterations { requests: u64 },
    /// `clients` each sending the next request when the last is answered,
    /// for a duration or a count.
    Closed {
        clients: usize,
        duration: Option<Duration>,
        requests: Option<u64>,
    },
    /// Open loop: `rate` requests/s spread over `clients` connections.
    Rate {
        clients: usize,
        rate: f64,
        duration: Duration,
    },
}

impl Model {
    /// This model for a warmup of `duration` run as a load of its own: the
    /// same clients for that long (one client's iterations become a closed
    /// loop).
    #[must_use]
    pub fn for_warmup(&self, duration: Duration) -> Model {
        match *self {
            Model::Rate { clients, rate, .. } => Model::Rate {
                clients,
                rate,
                duration,
            },
            Model::Closed { clients, .. } => Model::Closed {
                clients,
                duration: Some(duration),
                requests: None,
            },
            Model::Iterations { .. } => Model::Closed {
                clients: 1,
                duration: Some(duration),
                requests: None,
            },
        }
    }
}

/// How long a load runs and each thread's share; when it starts is
/// decided once every thread has connected (the engine's gate).
pub struct Plan {
    /// How long the counted part runs, for a model that runs for a time.
    pub duration: Option<Duration>,
    /// The rate asked for, requests/s, for an open-loop model.
    pub rate: Option<f64>,
    /// Each thread's share of the clients.
    pub shares: Vec<Share>,
}

/// How a load of `model` runs: each thread's clients and pace. A driver
/// whose calls block (`blocking`) runs a thread per client, the others
/// `threads` event loops; `depth` requests in flight per connection, each
/// a timeout after `timeout`.
pub fn plan(
    model: &Model,
    blocking: bool,
    threads: usize,
    depth: usize,
    timeout: Duration,
) -> Result<Plan> {
    let (clients, requests, duration, rate) = match *model {
        Model::Iterations { requests } => (1, Some(requests), None, None),
        Model::Closed {
            clients,
            duration,
            requests,
        } => (clients, requests, duration, None),
        Model::Rate {
            clients,
            rate,
            duration,
        } => (clients, None, Some(duration), Some(rate)),
    };
    if clients == 0 {
        bail!("the load needs at least one client");
    }
    if requests.is_none() && duration.is_none() {
        bail!("the load needs a duration or a number of requests");
    }
    if rate.is_some_and(|r| !(r > 0.0 && r.is_finite())) {
        bail!("the rate must be a positive number of requests per second");
    }
    let spacing = rate.map_or(Duration::ZERO, |r| Duration::from_secs_f64(1.0 / r));
    let pace = match rate {
        Some(_) => Pace::Rate {
            per_conn: spacing * u32::try_from(clients).unwrap_or(u32::MAX),
        },
        None => Pace::Closed,
    };
    let workers = if blocking {
        clients
    } else {
        threads.clamp(1, clients)
    };
    let shares = (0..workers)
        .map(|w| {
            let (first, count) = split(clients, workers, w);
            Share {
                clients: count,
                first,
                requests: requests.map(|n| {
                    let (_, mine) = split(usize::try_from(n).unwrap_or(usize::MAX), workers, w);
                    mine as u64
                }),
                pace,
                depth: depth.max(1),
                timeout,
                spacing,
            }
        })
        .collect();
    Ok(Plan {
        duration,
        rate,
        shares,
    })
}

/// `count` items over `parts`: (first index, how many) of part `index`.
fn split(count: usize, parts: usize, index: usize) -> (usize, usize) {
    let base = count / parts;
    let extra = count % parts;
    let first = index * base + index.min(extra);
    (first, base + usize::from(index < extra))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_clients_and_counts_evenly() {
        assert_eq!(split(10, 3, 0), (0, 4));
        assert_eq!(split(10, 3, 1), (4, 3));
        assert_eq!(split(10, 3, 2), (7, 3));
        assert_eq!((0..4).map(|i| split(7, 4, i).1).sum::<usize>(), 7);
    }
}
