//! How a load paces its requests: a model, one file each, declared in the
//! one list [`models!`]. `iterations` (one client, a count in a row),
//! `closed` (each client sends when its last request is answered), `rate`
//! (open loop, at evenly spaced intended times), `poisson` (open loop,
//! exponentially distributed gaps) and `sla` (the highest rate whose
//! latency holds, searched by runs of `rate`). A model turns the numbers a
//! user gave ([`Given`]) into a [`Model`], and the model into each engine
//! thread's share of the clients and their pace ([`plan`]).
//!
//! To add a model: write `models/<name>.rs` with a unit struct implementing
//! [`ModelKind`] and add `<name>::<Struct> as <CONSTANT>` to `models!`
//! below. The experiment file's `model = "…"`, `afterburner load --model`,
//! their hints and the docs' list then know it.

use std::fmt::Write as _;
use std::time::Duration;

use anyhow::{bail, Result};
use serde::Serialize;

use crate::engine::share::{Arrivals, Pace, Share};
use crate::refusal::Refusal;
use sla::Sla;

/// A load model: how it reads the numbers a user gave, how its requests
/// are paced, and what a run of it is judged by.
pub trait ModelKind: Sync {
    /// Its word: `model = "…"` in the experiment file, `--model` of
    /// `afterburner load`.
    fn name(&self) -> &'static str;

    /// One line on what it does, for help and the docs' list.
    fn summary(&self) -> &'static str;

    /// The model of the numbers given, or the setting it lacks.
    fn read(&self, given: &Given) -> Result<Model, Refusal>;

    /// For an open loop, how the gaps between a connection's requests are
    /// drawn; `None` for a closed loop.
    fn arrivals(&self) -> Option<&'static dyn Arrivals> {
        None
    }

    /// The figure a run of it is judged by first.
    fn headline(&self) -> Headline;

    /// Whether a run of it lasts a set time rather than doing a set amount
    /// of work (a faster server then does more work in it).
    fn fixed_duration(&self, model: &Model) -> bool {
        model.requests.is_none()
    }

    /// The model as a warm-up of `duration` run as a load of its own: the
    /// same clients for that long.
    fn for_warmup(&self, model: &Model, duration: Duration) -> Model {
        Model {
            duration: Some(duration),
            requests: None,
            ..model.clone()
        }
    }

    /// The model a training run drives: traffic, not a search.
    fn for_training(&self, model: &Model) -> Model {
        model.clone()
    }

    /// What the model does, for a load's summary: `10 clients, closed
    /// loop`; `rate` the rate achieved where measured.
    fn describe(&self, model: &Model, rate: Option<f64>) -> String;
}

/// The figure a load model's runs are judged by first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Headline {
    /// Requests answered per second.
    Throughput,
    /// The 99th percentile of latency, from each request's intended start.
    P99,
    /// The highest rate found to hold the bound.
    SlaRate,
}

/// The numbers a user gave a load (the experiment file's keys,
/// `afterburner load`'s flags), each model reading those it needs.
#[derive(Debug, Clone, Default)]
pub struct Given {
    pub clients: usize,
    pub duration: Duration,
    pub requests: Option<u64>,
    pub rate: Option<f64>,
    pub sla: Option<Sla>,
}

/// A load model with its numbers.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Model {
    /// Which model paces the load.
    #[serde(rename = "model")]
    pub pacing: Pacing,
    pub clients: usize,
    /// How long the counted part runs; `None` for a model that runs until
    /// `requests` are answered.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration: Option<Duration>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub requests: Option<u64>,
    /// Open loop: requests per second (the `sla` model's first probe's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate: Option<f64>,
    /// The `sla` model's bound.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sla: Option<Sla>,
}

/// Declares each model's module, lists the models and names each one a
/// constant of [`Pacing`]: the one list. (rustfmt does not reach modules
/// a macro declares; `.ci/run` checks these files by name.)
macro_rules! models {
    ($($module:ident :: $model:ident as $constant:ident),* $(,)?) => {
        $(pub mod $module;)*

        /// Every load model, in the order help and hints list them.
        pub const MODELS: &[Pacing] = &[$(Pacing(&$module::$model)),*];

        impl Pacing {
            $(
                #[doc = concat!("The `", stringify!($module), "` model.")]
                pub const $constant: Pacing = Pacing(&$module::$model);
            )*
        }
    };
}

models! {
    iterations::Iterations as ITERATIONS,
    closed::Closed as CLOSED,
    rate::Rate as RATE,
    poisson::Poisson as POISSON,
    sla::Search as SLA,
}

/// A load model, compared, printed and written by its name.
#[derive(Clone, Copy)]
pub struct Pacing(pub &'static dyn ModelKind);

afterburner_leaves::named_handle!(Pacing, ModelKind, name, |name| {
    Pacing::from_name(name).ok_or_else(|| format!("unknown load model `{name}`"))
});

impl Pacing {
    /// The model named `name`.
    pub fn from_name(name: &str) -> Option<Self> {
        MODELS.iter().find(|m| m.name() == name).copied()
    }

    /// The models' names for a hint: `"iterations", "closed", … or "sla"`.
    pub fn names() -> String {
        crate::refusal::quoted_choices(MODELS.iter().map(|m| m.name()))
    }
}

/// `load --help`'s list of the models, each with its summary.
pub fn help() -> String {
    let mut out = String::from("Models (--model; `model = \"…\"` in an experiment):\n");
    for m in MODELS {
        let _ = writeln!(out, "  {:<10} {}", m.name(), m.summary());
    }
    out
}

impl Model {
    /// One client, `requests` in a row.
    pub fn iterations(requests: u64) -> Model {
        Model {
            pacing: Pacing::ITERATIONS,
            clients: 1,
            duration: None,
            requests: Some(requests),
            rate: None,
            sla: None,
        }
    }

    /// `clients` each sending when the last request is answered, for
    /// `duration` or until `requests` are answered.
    pub fn closed(clients: usize, duration: Option<Duration>, requests: Option<u64>) -> Model {
        Model {
            pacing: Pacing::CLOSED,
            clients,
            duration,
            requests,
            rate: None,
            sla: None,
        }
    }

    /// Open loop at `rate` requests/s, evenly spaced, over `clients`.
    pub fn at_rate(clients: usize, rate: f64, duration: Duration) -> Model {
        Model {
            pacing: Pacing::RATE,
            clients,
            duration: Some(duration),
            requests: None,
            rate: Some(rate),
            sla: None,
        }
    }

    /// This model as a warm-up of `duration` ([`ModelKind::for_warmup`]).
    #[must_use]
    pub fn for_warmup(&self, duration: Duration) -> Model {
        self.pacing.for_warmup(self, duration)
    }

    /// Whether a run lasts a set time ([`ModelKind::fixed_duration`]).
    pub fn fixed_duration(&self) -> bool {
        self.pacing.fixed_duration(self)
    }

    /// Whether it paces its requests in an open loop.
    pub fn open_loop(&self) -> bool {
        self.pacing.arrivals().is_some()
    }

    /// What it does, for a summary ([`ModelKind::describe`]).
    pub fn describe(&self, rate: Option<f64>) -> String {
        self.pacing.describe(self, rate)
    }
}

/// An open loop's summary line: its clients and rate (`rate` the rate
/// achieved where measured), paced `how`.
pub(crate) fn open_loop_line(model: &Model, rate: Option<f64>, how: &str) -> String {
    format!(
        "{} clients, {:.1} requests/s {how}",
        model.clients,
        rate.or(model.rate).unwrap_or(0.0)
    )
}

/// A refusal of a model that needs `setting`.
pub(crate) fn needs(model: &str, setting: &'static str, what: &str, example: &str) -> Refusal {
    Refusal {
        setting,
        message: format!("the {model} model needs {setting} = {what}"),
        hint: format!("add {setting} = {example}, say"),
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
/// a timeout after `timeout`; an open loop's gaps drawn from `seed`.
pub fn plan(
    model: &Model,
    blocking: bool,
    threads: usize,
    depth: usize,
    timeout: Duration,
    seed: u64,
) -> Result<Plan> {
    let (clients, requests, duration) = (model.clients, model.requests, model.duration);
    let arrivals = model.pacing.arrivals();
    let rate = arrivals.and(model.rate);
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
    if arrivals.is_some() && rate.is_none() {
        bail!("the {} model needs a rate", model.pacing.name());
    }
    let pace = match arrivals {
        Some(arrivals) => Pace::Open {
            per_conn: spacing * u32::try_from(clients).unwrap_or(u32::MAX),
            arrivals,
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
                seed,
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
