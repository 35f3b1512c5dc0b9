//! A load's copies (`instances`), each against its own services, in
//! parallel; their outcomes added up, summaries and series written beside
//! the run's logs.

use std::collections::BTreeMap;
use std::time::Instant;

use anyhow::Result;

use crate::experiment::{Bindings, Load};
use crate::load::models::sla;
use crate::load::{self, Outcome};
use crate::measure::{nanos, RunRecord};
use crate::runs::{copy_stem, write_load};

use super::remote::{Part, Step};
use super::window::ServiceWindow;
use super::{countable, server_times, step_timeout, Served, ERRORS_OF};
use crate::metric::{LoadMetric, Tally};

/// Each copy of the load against its own services, in parallel, each
/// copy's services' counters read at its measured window's edges.
pub(super) fn run_copies(
    load: &Load,
    (bindings, windows): (&[Bindings], &[ServiceWindow]),
    s: &Served,
    round: u64,
    (workload, stem): (&str, &str),
) -> Vec<Result<Ran>> {
    std::thread::scope(|scope| {
        let handles: Vec<_> = bindings
            .iter()
            .enumerate()
            .map(|(copy, b)| {
                scope.spawn(move || -> Result<Ran> {
                    let address = load.address.expand(b)?;
                    let window = &windows[copy];
                    let watch = |edge| window.edge(edge);
                    let seed = s.seed ^ round ^ ((copy as u64) << 32);
                    if let Some(remote) = s.remote {
                        // A load without its warmup is a counted window's.
                        let part = if load.warmup.is_zero() {
                            Part::Measured
                        } else {
                            Part::All
                        };
                        // Its window's edges are seen from here only: the step's.
                        window.edge(load::Edge::Opens);
                        let outcome = remote.run(&Step {
                            workload,
                            address: &address,
                            seed,
                            part,
                            stem: s.logs.join(copy_stem(stem, copy, bindings.len())),
                            timeout: step_timeout(load),
                        });
                        window.edge(load::Edge::Closes);
                        return Ok((outcome?, None, None));
                    }
                    let spec = load.spec(address, seed, &s.experiment.dir);
                    if let Some(bound) = &load.model.sla {
                        let found = load::search_sla(&spec, bound, |_| {}, Some(&watch))?;
                        Ok((found.confirm.clone(), Some(found), None))
                    } else {
                        let recorded = load::run_watched(&spec, Some(&watch))?;
                        Ok((recorded.outcome.clone(), None, Some(recorded)))
                    }
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(anyhow::anyhow!("a load thread panicked")))
            })
            .collect()
    })
}

/// What one copy of a load gave: its outcome, the SLA search's finding,
/// and its recorded latencies (not kept for an SLA search).
pub(super) type Ran = (Outcome, Option<sla::Found>, Option<load::Recorded>);

/// Run the load (one per instance, in parallel); summaries and time
/// series go beside the run's logs. Instances add up: throughput, errors
/// and timeouts are summed, latency percentiles read from their merged
/// histograms (averaged only for an SLA search's confirming runs).
pub(super) fn drive(
    load: &Load,
    copies: (&[Bindings], &[ServiceWindow]),
    s: &Served,
    stem: &str,
    record: &mut RunRecord,
) -> Result<()> {
    let (started, bindings) = (Instant::now(), copies.0);
    let round = u64::from(record.round);
    let servers_before = server_times(load, bindings);
    let results = run_copies(load, copies, s, round, (&record.workload, stem));
    let servers_after = server_times(load, bindings);
    // The time a fixed amount of work took is a measurement; the length of
    // a load that runs for a set duration is not.
    if countable(Some(load)) {
        record.wall_ns = Some(nanos(started.elapsed()));
    }
    let mut outcomes = Vec::new();
    let mut recorded = Vec::new();
    for (copy, result) in results.into_iter().enumerate() {
        let (outcome, found, kept) = match result {
            Ok(r) => r,
            Err(error) => {
                // No rate met the bound, say: this run failed, the bench goes on.
                record.error = Some(format!("load: {error:#}"));
                return Ok(());
            }
        };
        let name = copy_stem(stem, copy, bindings.len());
        write_load(s.logs, &name, &outcome, found.as_ref())?;
        outcomes.push((outcome, found.map(|f| f.rate_rps)));
        recorded.extend(kept);
    }
    let n = outcomes.len() as f64;
    let sum = |f: &dyn Fn(&load::Summary) -> f64| {
        outcomes.iter().map(|(o, _)| f(&o.summary)).sum::<f64>()
    };
    // Copies' latencies merged into one histogram before any percentile is
    // read; an SLA search's confirming runs (kept as summaries only) are
    // averaged.
    let merged = (recorded.len() == outcomes.len())
        .then(|| load::merged_summary(&recorded))
        .flatten();
    let latency = |f: &dyn Fn(&load::Summary) -> f64| merged.as_ref().map_or_else(|| sum(f) / n, f);
    let (errors, timeouts) = (sum(&|s| s.errors as f64), sum(&|s| s.timeouts as f64));
    let mut measured = vec![
        (LoadMetric::Throughput, sum(&|s| s.achieved_rps)),
        (LoadMetric::P50, latency(&|s| s.latency_ms.p50)),
        (LoadMetric::P90, latency(&|s| s.latency_ms.p90)),
        (LoadMetric::P99, latency(&|s| s.latency_ms.p99)),
        (LoadMetric::P999, latency(&|s| s.latency_ms.p999)),
    ];
    if load.model.sla.is_some() {
        let found = outcomes.iter().filter_map(|(_, r)| *r).sum();
        measured.push((LoadMetric::SlaRate, found));
    }
    if let Some(rate) = hit_rate(outcomes.iter().map(|(o, _)| &o.summary)) {
        measured.push((LoadMetric::HitRate, rate));
    }
    let mut figures: BTreeMap<String, f64> = measured
        .into_iter()
        .map(|(m, v)| (m.name().to_owned(), v))
        .chain(
            [(Tally::Errors, errors), (Tally::Timeouts, timeouts)]
                .map(|(t, v)| (t.name().to_owned(), v)),
        )
        .collect();
    let requests = sum(&|s| s.requests as f64);
    figures.insert(Tally::Requests.name().to_owned(), requests);
    figures.extend(failure_figures(outcomes.iter().map(|(o, _)| &o.summary)));
    if let (Some(before), Some(after)) = (servers_before, servers_after) {
        let sum = |v: &[load::drivers::ServerTime]| {
            v.iter().fold(load::drivers::ServerTime::default(), |a, t| {
                load::drivers::ServerTime {
                    calls: a.calls + t.calls,
                    busy_us: a.busy_us + t.busy_us,
                }
            })
        };
        if let Some(us) = sum(&before).mean_us_until(sum(&after)) {
            figures.insert(LoadMetric::ServerMean.name().to_owned(), us);
        }
    }
    record.exit = format!("{requests} requests, {errors} errors, {timeouts} timeouts");
    record.figures.extend(figures);
    if let Some((o, _)) = outcomes.iter().find(|(o, _)| o.summary.requests == 0) {
        record.error = Some(format!(
            "no request was answered: {}",
            o.summary
                .first_error
                .as_deref()
                .unwrap_or("no reason recorded")
        ));
    } else {
        record.success = true;
    }
    Ok(())
}

/// The failed requests of copies of a load as figures: `error_rate` and
/// `timeout_rate`, each a share of the requests attempted (answered,
/// failed and timed out: 0 to 1), and the count of each kind of error
/// (`errors.connection`, `errors.server`, …) that occurred. Nothing when
/// no request was attempted.
pub(super) fn failure_figures<'a>(
    summaries: impl Iterator<Item = &'a load::Summary>,
) -> BTreeMap<String, f64> {
    let mut kinds: BTreeMap<String, f64> = BTreeMap::new();
    let (mut answered, mut errors, mut timeouts) = (0u64, 0u64, 0u64);
    for s in summaries {
        answered += s.requests;
        errors += s.errors;
        timeouts += s.timeouts;
        for (kind, n) in &s.errors_by_kind {
            *kinds
                .entry(format!("{ERRORS_OF}{}", kind.name()))
                .or_default() += *n as f64;
        }
    }
    let attempted = answered + errors + timeouts;
    if attempted == 0 {
        return BTreeMap::new();
    }
    let share = |n: u64| n as f64 / attempted as f64;
    kinds.insert(LoadMetric::ErrorRate.name().to_owned(), share(errors));
    kinds.insert(LoadMetric::TimeoutRate.name().to_owned(), share(timeouts));
    kinds
}

/// The share of looked-up keys that copies of a load found, over all of
/// them; `None` when none looked anything up (only memcached gets do).
pub(super) fn hit_rate<'a>(summaries: impl Iterator<Item = &'a load::Summary>) -> Option<f64> {
    let (hits, misses) = summaries.fold((0, 0), |(h, m), s| {
        (h + s.hits.unwrap_or(0), m + s.misses.unwrap_or(0))
    });
    (hits + misses > 0).then(|| hits as f64 / (hits + misses) as f64)
}
