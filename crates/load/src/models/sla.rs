//! The `sla` model: the highest rate whose latency percentile stays under
//! a bound, found by bisection on short `rate` runs and confirmed by a
//! final, full-length run, as `FeedSim` searches its 500 ms p95. The search
//! is given the runs to make ([`Runner`]); a load's own are
//! `load::search_sla`'s.

use std::time::Duration;

use anyhow::{bail, Result};
use serde::{Deserialize, Serialize};

use super::{Given, Headline, Model, ModelKind, Pacing};
use crate::engine::gate::Watch;
use crate::engine::recorder::{Outcome, Summary};
use crate::engine::share::{Arrivals, Even};
use crate::refusal::Refusal;

/// Runs the load at a model (a `rate`), `watch` told its measured window's
/// edges where given, and says what it measured.
pub type Runner<'r> = &'r dyn Fn(Model, Option<Watch>) -> Result<Outcome>;

/// The highest rate whose latency holds the bound, searched by `rate`
/// runs; its model paces a run at the search's first rate.
pub struct Search;

impl ModelKind for Search {
    fn name(&self) -> &'static str {
        "sla"
    }

    fn summary(&self) -> &'static str {
        "the highest rate whose latency percentile holds `sla` (\"p99<5ms\"), searched from `start_rate` by `probe`-long rate runs, then confirmed for `duration`"
    }

    fn read(&self, given: &Given) -> Result<Model, Refusal> {
        let sla = given.sla.clone().ok_or_else(|| Refusal {
            setting: "sla",
            message: "the sla model needs sla = \"pXX<BOUND\"".to_owned(),
            hint: "add sla = \"p99<5ms\", say".to_owned(),
        })?;
        Ok(Model {
            pacing: Pacing::SLA,
            rate: Some(sla.start_rps),
            sla: Some(sla),
            ..Model::at_rate(given.clients, 0.0, given.duration)
        })
    }

    /// Its probes and its confirming run are evenly paced.
    fn arrivals(&self) -> Option<&'static dyn Arrivals> {
        Some(&Even)
    }

    fn headline(&self) -> Headline {
        Headline::SlaRate
    }

    /// Its warm-up is a `rate` run at the search's first rate.
    fn for_warmup(&self, model: &Model, duration: Duration) -> Model {
        Model::at_rate(model.clients, model.rate.unwrap_or(1.0), duration)
    }

    /// Training needs traffic, not the search: a closed loop.
    fn for_training(&self, model: &Model) -> Model {
        Model::closed(model.clients, model.duration, None)
    }

    fn describe(&self, model: &Model, rate: Option<f64>) -> String {
        super::open_loop_line(model, rate, "open loop")
    }
}

/// The bound to hold.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Sla {
    /// One of 50, 90, 95, 99, 99.9.
    pub percentile: f64,
    /// The latency that percentile must stay at or under.
    pub max_ms: f64,
    /// First rate tried, requests/s.
    pub start_rps: f64,
    /// Length of each probe.
    pub probe: Duration,
    /// Stop bisecting when the bracket is narrower than this fraction.
    pub precision: f64,
}

impl Sla {
    pub const PERCENTILES: [f64; 5] = [50.0, 90.0, 95.0, 99.0, 99.9];

    /// The percentile of `summary` this bound is about.
    pub fn latency(&self, summary: &Summary) -> f64 {
        let l = &summary.latency_ms;
        match self.percentile {
            p if p <= 50.0 => l.p50,
            p if p <= 90.0 => l.p90,
            p if p <= 95.0 => l.p95,
            p if p <= 99.0 => l.p99,
            _ => l.p999,
        }
    }

    /// Whether a probe met the bound: latency under it, nothing lost, and
    /// the rate asked for actually achieved (within 5%).
    pub fn met(&self, summary: &Summary, rate: f64) -> bool {
        summary.requests > 0
            && self.latency(summary) <= self.max_ms
            && summary.errors + summary.timeouts == 0
            && summary.achieved_rps >= 0.95 * rate
    }
}

/// One probe of the search.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Probe {
    pub requested_rps: f64,
    pub achieved_rps: f64,
    /// The bounded percentile's latency.
    pub latency_ms: f64,
    pub errors: u64,
    pub timeouts: u64,
    pub met: bool,
}

/// The search's answer: the rate found and its confirming run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Found {
    pub rate_rps: f64,
    pub probes: Vec<Probe>,
    /// The full-length run at `rate_rps`.
    pub confirm: Outcome,
    /// Whether the confirming run met the bound too.
    pub confirmed: bool,
    /// The bounded percentile (95 for `p95<500ms`); absent in files of
    /// older versions.
    #[serde(default)]
    pub percentile: Option<f64>,
    /// The bound, in milliseconds.
    #[serde(default)]
    pub max_ms: Option<f64>,
}

/// Double the rate from `start_rps` until the bound breaks, bisect between
/// the last rate that held and the first that broke, then run the found
/// rate for `model`'s own duration, each run by `run`. `model` must be
/// `rate`; its rate is ignored. `watch` is told the confirming run's window
/// only: what is counted per request of an SLA workload is counted over
/// that run, never over the probes.
pub fn search(
    model: &Model,
    sla: &Sla,
    run: Runner,
    mut log: impl FnMut(&Probe),
    watch: Option<Watch>,
) -> Result<Found> {
    let (Some(duration), true) = (model.duration, model.open_loop()) else {
        bail!("the sla search drives an open loop of a set duration");
    };
    let clients = model.clients;
    let mut probes = Vec::new();
    let mut probe = |rate: f64| -> Result<bool> {
        afterburner_leaves::interrupt::check()?;
        let short = Model::at_rate(clients, rate, sla.probe);
        let summary = run(short, None)?.summary;
        let p = Probe {
            requested_rps: rate,
            achieved_rps: summary.achieved_rps,
            latency_ms: sla.latency(&summary),
            errors: summary.errors,
            timeouts: summary.timeouts,
            met: sla.met(&summary, rate),
        };
        log(&p);
        probes.push(p.clone());
        Ok(p.met)
    };
    let (mut good, mut bad) = (0.0, None);
    let mut rate = sla.start_rps;
    for _ in 0..24 {
        if probe(rate)? {
            good = rate;
            rate *= 2.0;
        } else {
            bad = Some(rate);
            break;
        }
    }
    let Some(mut bad) = bad else {
        bail!("the bound held up to {good:.0} requests/s: start from a higher rate");
    };
    // The first rate broke: halve until one holds, six times at most.
    let mut halvings = 0;
    while good == 0.0 {
        if halvings == 6 {
            bail!(
                "even {bad:.1} requests/s broke p{} <= {} ms\nhint: the bound is tighter than this server's latency when idle; raise it",
                sla.percentile,
                sla.max_ms
            );
        }
        halvings += 1;
        let lower = bad / 2.0;
        if probe(lower)? {
            good = lower;
        } else {
            bad = lower;
        }
    }
    while (bad - good) / good > sla.precision {
        let mid = f64::midpoint(good, bad);
        if probe(mid)? {
            good = mid;
        } else {
            bad = mid;
        }
    }
    let confirmed_at = Model::at_rate(clients, good, duration);
    let confirm = run(confirmed_at, watch)?;
    let confirmed = sla.met(&confirm.summary, good);
    Ok(Found {
        rate_rps: good,
        probes,
        confirm,
        confirmed,
        percentile: Some(sla.percentile),
        max_ms: Some(sla.max_ms),
    })
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;
    use std::time::Instant;

    use super::*;
    use crate::engine::gate::Edge;
    use crate::engine::recorder::Recorder;

    /// A server whose latency is 1 ms up to 1,000 requests/s and 50 ms
    /// beyond: the search doubles from 100 until 1,600 breaks, bisects to
    /// within its precision below 1,000, and confirms the rate found for
    /// the model's own duration, the only run whose window is watched.
    #[test]
    fn the_search_finds_the_highest_rate_that_holds_and_confirms_it() {
        let runs = Mutex::new(Vec::new());
        let run = |model: Model, watch: Option<Watch>| -> Result<Outcome> {
            let (Some(rate), Some(duration)) = (model.rate, model.duration) else {
                bail!("not a rate: {model:?}");
            };
            runs.lock().unwrap().push((rate, duration, watch.is_some()));
            let from = Instant::now();
            let mut recorder = Recorder::new(from, Duration::from_secs(1));
            let took = Duration::from_millis(if rate <= 1000.0 { 1 } else { 50 });
            // One second's requests at the rate asked.
            for _ in (0_u32..).take_while(|&i| f64::from(i) < rate) {
                recorder.reply(from, from + took, true);
            }
            Ok(Outcome {
                summary: recorder.summary(Some(Duration::from_secs(1)), Some(rate)),
                series: Vec::new(),
            })
        };
        let sla = Sla {
            percentile: 95.0,
            max_ms: 10.0,
            start_rps: 100.0,
            probe: Duration::from_secs(2),
            precision: 0.05,
        };
        let model = Model::at_rate(4, 1.0, Duration::from_secs(30));
        let watch = |_: Edge| {};
        let found = search(&model, &sla, &run, |_| {}, Some(&watch)).unwrap();
        assert!(
            (950.0..=1000.0).contains(&found.rate_rps),
            "{}",
            found.rate_rps
        );
        assert!(found.confirmed);
        let runs = runs.into_inner().unwrap();
        let (confirm, probes) = runs.split_last().unwrap();
        assert_eq!(
            *confirm,
            (found.rate_rps, Duration::from_secs(30), true),
            "{runs:?}"
        );
        assert!(probes
            .iter()
            .all(|&(_, d, watched)| d == sla.probe && !watched));
        assert_eq!(probes.len(), found.probes.len());
        assert_eq!(
            &probes[..5].iter().map(|p| p.0).collect::<Vec<_>>(),
            &[100.0, 200.0, 400.0, 800.0, 1600.0]
        );
    }
}
