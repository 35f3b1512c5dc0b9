//! Running a load: its model's plan ([`plan`]), its driver's clients on the
//! engine (the event loop or a thread per blocking client), the clock
//! started at the gate and every thread's recorder merged into one outcome.

use std::net::{SocketAddr, ToSocketAddrs};
use std::thread;
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result};

use super::drivers::Client;
use super::engine::gate::{Edge, Gate, Watch};
use super::engine::recorder::{Outcome, Recorder, Summary};
use super::engine::share::Share;
use super::engine::{blocking, events};
use super::limits;
use super::models::sla::{self, Found, Probe, Sla};
use super::models::{plan, Plan};
use super::request::Generator;
use super::spec::LoadSpec;

/// Run the load; blocks until it is done.
pub fn run(spec: &LoadSpec) -> Result<Outcome> {
    run_recorded(spec).map(|r| r.outcome)
}

/// A finished load: its outcome, and every latency it recorded, so that
/// copies run side by side (`instances`) merge into one distribution.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub outcome: Outcome,
    recorder: Recorder,
    measured: Option<Duration>,
}

/// The summary of loads run side by side: their latency histograms merged
/// before any percentile is read (the p99 of two streams is not the mean of
/// their p99s: that halves a slow copy's tail), counts and throughput
/// summed. `None` for no loads.
pub fn merged_summary(runs: &[Recorded]) -> Option<Summary> {
    let (first, rest) = runs.split_first()?;
    let mut total = first.recorder.clone();
    for r in rest {
        total.merge(&r.recorder);
    }
    let requested = runs
        .iter()
        .map(|r| r.outcome.summary.requested_rps)
        .sum::<Option<f64>>();
    let mut summary = total.summary(first.measured, requested);
    // Copies of a count finish at their own times: each one's rate, added.
    summary.achieved_rps = runs.iter().map(|r| r.outcome.summary.achieved_rps).sum();
    Some(summary)
}

/// [`run`], keeping what was recorded.
pub fn run_recorded(spec: &LoadSpec) -> Result<Recorded> {
    run_watched(spec, None)
}

/// [`run_recorded`], telling `watch` the measured window's edges: when it
/// opens (as the clock starts with no warmup, before any request; at the
/// warmup's end otherwise, from a thread of its own) and when it has
/// closed. A load that fails before its window opens tells nothing; one
/// whose window opened always tells it closed.
pub fn run_watched(spec: &LoadSpec, watch: Option<Watch>) -> Result<Recorded> {
    // Checked at the edge already; again here, so no caller can get a
    // panic or an unbounded allocation instead of an error.
    limits::check(&limits::Settings {
        driver: spec.driver,
        model: spec.model.clone(),
        warmup: spec.warmup,
        timeout: spec.timeout,
        pipeline: spec.depth,
        threads: spec.threads,
        interval: spec.interval,
        instances: 1,
    })
    .map_err(|r| anyhow::anyhow!("{r}"))?;
    let Plan {
        duration,
        rate,
        shares,
    } = plan(
        &spec.model,
        spec.driver.blocking(),
        spec.threads,
        spec.depth,
        spec.timeout,
        spec.seed,
    )?;
    let workers = shares.len();
    let _raised = limits::raise_descriptor_limit(shares.iter().map(|s| s.clients).sum())?;
    // The clock starts once every thread has made its connections.
    let mut gate = Gate::new(workers, spec.warmup, duration);
    if let Some(watch) = watch {
        gate = gate.watched(watch);
    }
    let gate = &gate;
    // Recorders count from the clock's `from`, set at the gate; until
    // then, from now.
    let from = Instant::now();
    let each = |work: &Work| on_each_share(spec, &shares, from, work);
    let drive = || -> Result<Vec<Result<Recorder>>> {
        Ok(match spec.driver.client(&spec.client_spec())? {
            Client::Blocking(connect) => each(&|share, generator, recorder| {
                blocking::run_client(&connect, generator, share, gate, recorder)
            }),
            Client::Engine(protocol) => {
                let address = spec.address.as_deref().with_context(|| {
                    format!(
                        "the {} driver needs an address (host:port)",
                        spec.driver.name()
                    )
                })?;
                let addr = resolve(address)?;
                let protocol = &*protocol;
                each(&|share, generator, recorder| {
                    events::run(protocol, generator, addr, share, gate, recorder)
                })
            }
        })
    };
    let recorders = match watch {
        None => drive()?,
        Some(watch) => watched(gate, spec.warmup, watch, drive)?,
    };
    let recorders = recorders.into_iter().collect::<Result<Vec<_>>>()?;
    let from = gate.clock().map_or(from, |c| c.from);
    let mut total = Recorder::new(from, spec.interval)
        .with_deadline(spec.timeout)
        .for_mix(&spec.requests);
    for recorder in &recorders {
        total.merge(recorder);
    }
    Ok(Recorded {
        outcome: Outcome {
            summary: total.summary(duration, rate),
            series: total.series(rate, duration),
        },
        recorder: total,
        measured: duration,
    })
}

/// What runs one share of a load: its clients, their requests and what
/// they recorded.
type Work<'w> = dyn Fn(&Share, Generator, Recorder) -> Result<Recorder> + Sync + 'w;

/// Run `work` on each share, each on its own thread with its own generator
/// and recorder (counting from `from`); a lone share runs on this one. A
/// process of one thread makes every socket call cheaper: the kernel's
/// fdget skips the file's reference count (an atomic increment and
/// decrement per send and per read) when no other thread shares the file
/// table.
fn on_each_share(
    spec: &LoadSpec,
    shares: &[Share],
    from: Instant,
    work: &Work,
) -> Vec<Result<Recorder>> {
    let workers = shares.len();
    let recorder = || {
        Recorder::new(from, spec.interval)
            .with_deadline(spec.timeout)
            .for_mix(&spec.requests)
    };
    if let [share] = shares {
        let generator = spec.requests.generator(spec.seed, 0, 1);
        let done = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            work(share, generator, recorder())
        }));
        return vec![done.unwrap_or_else(|_| Err(anyhow::anyhow!("a load thread panicked")))];
    }
    thread::scope(|scope| {
        let handles: Vec<_> = shares
            .iter()
            .enumerate()
            .map(|(w, share)| {
                let generator = spec.requests.generator(spec.seed, w as u64, workers as u64);
                let recorder = recorder();
                scope.spawn(move || work(share, generator, recorder))
            })
            .collect();
        handles.into_iter().map(join).collect::<Vec<_>>()
    })
}

/// Run `drive` with `watch` told the window's edges: the gate tells it the
/// window opened when there is no warmup; a thread of its own waits for
/// the warmup's end otherwise. It is told the window closed once `drive`
/// is done, if it was told it opened.
fn watched<T>(
    gate: &Gate,
    warmup: Duration,
    watch: Watch,
    drive: impl FnOnce() -> Result<T>,
) -> Result<T> {
    thread::scope(|scope| {
        let waiter = (!warmup.is_zero()).then(|| {
            scope.spawn(|| {
                let opened = gate.wait_window().is_some();
                if opened {
                    watch(Edge::Opens);
                }
                opened
            })
        });
        let done = drive();
        gate.finish();
        let opened = match waiter {
            Some(waiter) => waiter.join().unwrap_or(false),
            None => gate.clock().is_some(),
        };
        if opened {
            watch(Edge::Closes);
        }
        done
    })
}

fn join<T>(handle: thread::ScopedJoinHandle<'_, Result<T>>) -> Result<T> {
    handle
        .join()
        .unwrap_or_else(|_| Err(anyhow::anyhow!("a load thread panicked")))
}

/// The `sla` model on `spec` ([`sla::search`]): each probe and the
/// confirming run a run of `spec` at the rate tried; `watch` is told the
/// confirming run's window. `spec.model` must be `rate`.
pub fn search_sla(
    spec: &LoadSpec,
    bound: &Sla,
    log: impl FnMut(&Probe),
    watch: Option<Watch>,
) -> Result<Found> {
    sla::search(
        &spec.model,
        bound,
        &|model, watch| {
            let mut s = spec.clone();
            s.model = model;
            run_watched(&s, watch).map(|r| r.outcome)
        },
        log,
        watch,
    )
}

fn resolve(address: &str) -> Result<SocketAddr> {
    address
        .to_socket_addrs()
        .with_context(|| format!("`{address}` is not a host:port address"))?
        .next()
        .with_context(|| format!("`{address}` resolves to no address"))
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::drivers::Driver;
    use crate::models::Model;
    use crate::request::mix::RequestMix;
    use crate::template;

    /// One fast copy (every request 1 ms) and one with a slow tail (4% at
    /// 200 ms): merged, 2% of all requests take 200 ms, so the p99 is
    /// 200 ms; the mean of the copies' p99s (1 and 200) would say ~100.
    #[test]
    fn instances_merge_their_histograms_before_percentiles() {
        let from = Instant::now();
        let copy = |slow: usize| {
            let mut r = Recorder::new(from, Duration::from_secs(1));
            for i in 0..1000 {
                let took = if i < slow { 200 } else { 1 };
                r.reply(from, from + Duration::from_millis(took), true);
            }
            Recorded {
                outcome: Outcome {
                    summary: r.summary(Some(Duration::from_secs(1)), None),
                    series: Vec::new(),
                },
                recorder: r,
                measured: Some(Duration::from_secs(1)),
            }
        };
        let (fast, tail) = (copy(0), copy(40));
        assert!(fast.outcome.summary.latency_ms.p99 < 1.1);
        assert!(tail.outcome.summary.latency_ms.p99 > 190.0);
        let merged = merged_summary(&[fast, tail]).unwrap();
        assert!(
            (190.0..=210.0).contains(&merged.latency_ms.p99),
            "{merged:?}"
        );
        assert_eq!(merged.requests, 2000);
        assert!((merged.achieved_rps - 2000.0).abs() < 1e-6, "{merged:?}");
        assert!(merged.latency_ms.p50 < 1.1);
        assert_eq!(merged_summary(&[]), None);
    }

    #[test]
    fn exec_runs_commands_and_counts_failures() {
        let spec = LoadSpec {
            driver: Driver::EXEC,
            address: None,
            requests: RequestMix::one(
                template(
                    Driver::EXEC,
                    "sh -c 'exit {code}'",
                    &BTreeMap::from([("code".to_owned(), "seq:0:1".to_owned())]),
                    std::path::Path::new("."),
                )
                .unwrap(),
            ),
            model: Model::iterations(10),
            warmup: Duration::ZERO,
            timeout: Duration::from_secs(10),
            depth: 1,
            threads: 1,
            interval: Duration::from_secs(1),
            seed: 1,
            cwd: None,
        };
        let outcome = run(&spec).unwrap();
        assert_eq!((outcome.summary.requests, outcome.summary.errors), (5, 5));
        assert!(outcome.summary.first_error.unwrap().contains("exit code 1"));
    }

    /// The window's edges fall after the warmup and after the last counted
    /// request: each request appends a line to a file, and the lines there
    /// at the edges differ by the requests counted (one in flight at the
    /// opening edge may land on either side).
    #[test]
    fn a_watched_load_tells_its_window_after_the_warmup() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("requests");
        fs_err::write(&file, "").unwrap();
        let lines = || fs_err::read_to_string(&file).unwrap().lines().count();
        let spec = |model, warmup| LoadSpec {
            driver: Driver::EXEC,
            address: None,
            requests: RequestMix::one(
                template(
                    Driver::EXEC,
                    &format!("sh -c 'echo x >> {}'", file.display()),
                    &BTreeMap::new(),
                    std::path::Path::new("."),
                )
                .unwrap(),
            ),
            model,
            warmup,
            timeout: Duration::from_secs(10),
            depth: 1,
            threads: 1,
            interval: Duration::from_millis(100),
            seed: 1,
            cwd: None,
        };
        let seen = std::sync::Mutex::new(Vec::new());
        let watch = |edge| seen.lock().unwrap().push((edge, lines()));
        let closed = Model::closed(1, Some(Duration::from_millis(400)), None);
        let outcome = run_watched(&spec(closed, Duration::from_millis(400)), Some(&watch))
            .unwrap()
            .outcome;
        let edges = std::mem::take(&mut *seen.lock().unwrap());
        let [(Edge::Opens, at_open), (Edge::Closes, at_close)] = edges[..] else {
            panic!("{edges:?}");
        };
        assert!(at_open > 0, "the warmup's requests came before: {edges:?}");
        let counted = usize::try_from(outcome.summary.requests).unwrap();
        assert!(counted > 0);
        assert!(
            (at_close - at_open).abs_diff(counted) <= 1,
            "{edges:?}, {counted} counted"
        );
        assert_eq!(at_close, lines(), "nothing after the closing edge");

        // Without a warmup the window opens before the first request.
        fs_err::write(&file, "").unwrap();
        let iterations = spec(Model::iterations(5), Duration::ZERO);
        run_watched(&iterations, Some(&watch)).unwrap();
        let edges = std::mem::take(&mut *seen.lock().unwrap());
        assert_eq!(edges, [(Edge::Opens, 0), (Edge::Closes, 5)]);
    }
}
