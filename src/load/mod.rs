//! Load on a server: a driver speaks its protocol, a model paces the
//! requests (`iterations`, `closed`, `rate`, and the `sla` search built on
//! `rate`), a recorder keeps every latency in an `HdrHistogram`.
//!
//! To add a driver: write `load/<name>.rs` with a unit struct implementing
//! [`driver::DriverKind`] — its name (the URL scheme and `driver = "…"`),
//! URL form, default port and request, request syntax, and its `client`:
//! a [`protocol::Protocol`] (encode a request, find where a reply ends) for
//! the event loop, or a blocking call per request — then declare
//! `mod <name>;` and add `<name>::<Struct>` to the `drivers!` list below. `afterburner load URL`,
//! experiments, `load --help` and every hint then know it. Written by hand
//! besides: the README's table, and a readiness check by the driver
//! (`ready = "redis"`, in `experiment/resolve/services.rs`) if it wants one.

mod blocking;
pub mod command;
mod connect;
mod dburl;
pub mod driver;
mod engine;
mod failure;
mod gate;
pub mod limits;
mod mix;
mod protocol;
mod recorder;
pub mod request;
pub mod sla;
mod socket;
mod sql;

// The drivers' modules, declared here rather than by `drivers!` so that
// rustfmt reaches them; a module left out of the list below is dead code,
// which the build refuses.
mod exec;
mod http;
mod memcached;
mod mysql;
mod postgres;
mod redis;

/// Lists the drivers: the one list of them.
macro_rules! drivers {
    ($($module:ident :: $driver:ident),* $(,)?) => {
        /// Every load driver, in the order help and hints list them.
        pub const DRIVERS: &[Driver] = &[$(Driver(&$module::$driver)),*];
    };
}

drivers! {
    redis::Redis,
    memcached::Memcached,
    http::HttpDriver,
    postgres::PostgresDriver,
    mysql::MysqlDriver,
    exec::ExecDriver,
}

use std::collections::BTreeMap;
use std::net::{SocketAddr, ToSocketAddrs};
use std::path::PathBuf;
use std::thread;
use std::time::{Duration, Instant};

use anyhow::{bail, Context as _, Result};
use serde::{Deserialize, Serialize};

pub use driver::Driver;
pub use mix::{parse_weights, MixError, RequestMix};
pub use recorder::{feedsim_csv, series_csv, Latency, MixCount, Percentile, SeriesRow, Summary};
pub use request::{RequestTemplate, Source};

use recorder::Recorder;

/// The share of a load's attempted requests that failed (an error reply,
/// a lost or refused connection), 0 to 1: a judged metric of every load.
pub const ERROR_RATE: &str = "error_rate";
/// The share of a load's attempted requests left unanswered within the
/// timeout, 0 to 1: a judged metric of every load.
pub const TIMEOUT_RATE: &str = "timeout_rate";
/// The share of the keys a load's retrievals looked up that were found
/// (memcached `get`: a `VALUE` came back), 0 to 1: a judged metric
/// (higher is better) of a load that looks keys up.
pub const HIT_RATE: &str = "hit_rate";
/// The prefix of the figures counting a load's failed requests by kind
/// (`errors.connection`, `errors.protocol`, `errors.server`,
/// `errors.fatal`): recorded, shown in the report, not judged.
pub const ERRORS_OF: &str = "errors.";

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

/// What a load run measured.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Outcome {
    pub summary: Summary,
    pub series: Vec<SeriesRow>,
}

/// The request template of `driver` from text and `NAME=SOURCE` variables.
pub fn template(
    driver: Driver,
    text: &str,
    vars: &BTreeMap<String, String>,
    dir: &std::path::Path,
) -> Result<RequestTemplate> {
    request_template(driver, text, &sources(vars, dir)?)
}

/// The variables' sources from `NAME=SOURCE` pairs; relative CSV paths
/// resolve against `dir`.
pub fn sources(
    vars: &BTreeMap<String, String>,
    dir: &std::path::Path,
) -> Result<BTreeMap<String, Source>> {
    vars.iter()
        .map(|(name, spec)| {
            Source::parse(spec, dir)
                .with_context(|| format!("variable `{name}`"))
                .map(|s| (name.clone(), s))
        })
        .collect()
}

/// A request template as `driver` reads requests: SQL for postgres and mysql,
/// shell-quoted words for the others.
pub fn request_template(
    driver: Driver,
    text: &str,
    vars: &BTreeMap<String, Source>,
) -> Result<RequestTemplate> {
    if driver.sql() {
        RequestTemplate::sql(text, vars)
    } else {
        RequestTemplate::new(text, vars)
    }
}

/// How one thread's share of the clients sends.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Pace {
    Closed,
    Rate { per_conn: Duration },
}

#[derive(Debug, Clone)]
struct Share {
    clients: usize,
    /// Global index of this share's first client.
    first: usize,
    /// Requests left to count, for count-bounded models.
    requests: Option<u64>,
    pace: Pace,
    depth: usize,
    timeout: Duration,
    /// Open loop: time between two consecutive requests over all clients.
    spacing: Duration,
}

impl Share {
    /// When client `i`'s schedule starts, so all clients together send at
    /// an even pace.
    fn offset(&self, i: usize) -> Duration {
        self.spacing * u32::try_from(self.first + i).unwrap_or(u32::MAX)
    }
}

/// How long a load runs and each thread's share; when it starts is
/// decided once every thread has connected ([`gate::Gate`]).
struct Plan {
    duration: Option<Duration>,
    rate: Option<f64>,
    shares: Vec<Share>,
}

fn plan(spec: &LoadSpec) -> Result<Plan> {
    let (clients, requests, duration, rate) = match spec.model {
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
    let workers = if spec.driver.blocking() {
        clients
    } else {
        spec.threads.clamp(1, clients)
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
                depth: spec.depth.max(1),
                timeout: spec.timeout,
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

/// An edge of a load's measured window (after its warmup, until its last
/// request is answered), as [`run_watched`] tells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Edge {
    /// The window opens: no counted request has been sent yet.
    Opens,
    /// The window has closed: every counted request is answered (or timed out).
    Closes,
}

/// Whoever reads counters at a window's edges (a bench reads its services').
pub type Watch<'w> = &'w (dyn Fn(Edge) + Sync);

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
    } = plan(spec)?;
    let workers = shares.len();
    let _raised = limits::raise_descriptor_limit(shares.iter().map(|s| s.clients).sum())?;
    // The clock starts once every thread has made its connections.
    let mut gate = gate::Gate::new(workers, spec.warmup, duration);
    if let Some(watch) = watch {
        gate = gate.watched(watch);
    }
    let gate = &gate;
    // Recorders count from the clock's `from`, set at the gate; until
    // then, from now.
    let from = Instant::now();
    // Each share runs on its own thread with its own generator and recorder;
    // a lone share runs on this one. A process of one thread makes every
    // socket call cheaper: the kernel's fdget skips the file's reference
    // count (an atomic increment and decrement per send and per read) when
    // no other thread shares the file table.
    let each = |work: &(dyn Fn(&Share, request::Generator, Recorder) -> Result<Recorder>
                      + Sync)| {
        if let [share] = shares.as_slice() {
            let generator = spec.requests.generator(spec.seed, 0, 1);
            let recorder = Recorder::new(from, spec.interval)
                .with_deadline(spec.timeout)
                .for_mix(&spec.requests);
            let done = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                work(share, generator, recorder)
            }));
            return vec![done.unwrap_or_else(|_| Err(anyhow::anyhow!("a load thread panicked")))];
        }
        thread::scope(|scope| {
            let handles: Vec<_> = shares
                .iter()
                .enumerate()
                .map(|(w, share)| {
                    let generator = spec.requests.generator(spec.seed, w as u64, workers as u64);
                    let recorder = Recorder::new(from, spec.interval)
                        .with_deadline(spec.timeout)
                        .for_mix(&spec.requests);
                    scope.spawn(move || work(share, generator, recorder))
                })
                .collect();
            handles.into_iter().map(join).collect::<Vec<_>>()
        })
    };
    let drive = || -> Result<Vec<Result<Recorder>>> {
        Ok(match spec.driver.client(spec)? {
            driver::Client::Blocking(connect) => each(&|share, generator, recorder| {
                blocking::run_client(&connect, generator, share, gate, recorder)
            }),
            driver::Client::Engine(protocol) => {
                let address = spec.address.as_deref().with_context(|| {
                    format!(
                        "the {} driver needs an address (host:port)",
                        spec.driver.name()
                    )
                })?;
                let addr = resolve(address)?;
                let protocol = &*protocol;
                each(&|share, generator, recorder| {
                    engine::run(protocol, generator, addr, share, gate, recorder)
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

/// Run `drive` with `watch` told the window's edges: the gate tells it the
/// window opened when there is no warmup; a thread of its own waits for
/// the warmup's end otherwise. It is told the window closed once `drive`
/// is done, if it was told it opened.
fn watched<T>(
    gate: &gate::Gate,
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

/// `count` items over `parts`: (first index, how many) of part `index`.
fn split(count: usize, parts: usize, index: usize) -> (usize, usize) {
    let base = count / parts;
    let extra = count % parts;
    let first = index * base + index.min(extra);
    (first, base + usize::from(index < extra))
}

fn resolve(address: &str) -> Result<SocketAddr> {
    address
        .to_socket_addrs()
        .with_context(|| format!("`{address}` is not a host:port address"))?
        .next()
        .with_context(|| format!("`{address}` resolves to no address"))
}

/// Split `scheme://host:port/path` into driver, address and path.
pub fn parse_url(url: &str) -> Result<(Driver, Option<String>, String)> {
    if url == "exec" {
        return Ok((Driver::EXEC, None, String::new()));
    }
    let forms = || {
        DRIVERS
            .iter()
            .map(|d| d.url_form())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let (scheme, rest) = url
        .split_once("://")
        .with_context(|| format!("`{url}` has no scheme\nhint: write {}", forms()))?;
    let driver = Driver::from_name(scheme).with_context(|| {
        format!(
            "unknown driver `{scheme}`\nhint: use one of {}",
            Driver::names()
        )
    })?;
    if driver.url_is_address() {
        // libpq's URL form is the connection string itself.
        return Ok((driver, Some(url.to_owned()), String::new()));
    }
    let (hostport, path) = match rest.find('/') {
        Some(i) => (&rest[..i], rest[i..].to_owned()),
        None => (rest, String::new()),
    };
    let address = if hostport.contains(':') {
        hostport.to_owned()
    } else {
        format!("{hostport}:{}", driver.default_port())
    };
    Ok((driver, Some(address), path))
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn splits_clients_and_counts_evenly() {
        assert_eq!(split(10, 3, 0), (0, 4));
        assert_eq!(split(10, 3, 1), (4, 3));
        assert_eq!(split(10, 3, 2), (7, 3));
        assert_eq!((0..4).map(|i| split(7, 4, i).1).sum::<usize>(), 7);
    }

    #[test]
    fn urls_name_the_driver_and_default_port() {
        let (d, a, p) = parse_url("redis://127.0.0.1").unwrap();
        assert_eq!(
            (d, a.as_deref(), p.as_str()),
            (Driver::REDIS, Some("127.0.0.1:6379"), "")
        );
        let (d, a, p) = parse_url("http://localhost:8080/x?y=1").unwrap();
        assert_eq!(
            (d, a.as_deref(), p.as_str()),
            (Driver::HTTP, Some("localhost:8080"), "/x?y=1")
        );
        assert!(format!("{:#}", parse_url("gopher://h").unwrap_err()).contains("unknown driver"));
        assert!(parse_url("localhost:80").is_err());
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
            model: Model::Iterations { requests: 10 },
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
        let closed = Model::Closed {
            clients: 1,
            duration: Some(Duration::from_millis(400)),
            requests: None,
        };
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
        let iterations = spec(Model::Iterations { requests: 5 }, Duration::ZERO);
        run_watched(&iterations, Some(&watch)).unwrap();
        let edges = std::mem::take(&mut *seen.lock().unwrap());
        assert_eq!(edges, [(Edge::Opens, 0), (Edge::Closes, 5)]);
    }
}
