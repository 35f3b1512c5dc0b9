//! Latencies and outcomes of one load run: an `HdrHistogram` of every
//! request's latency (µs), counts of errors and timeouts, and one bucket
//! per interval (1 s by default) for the time series.
//!
//! A request that timed out is in the latency histogram at its deadline
//! (the load's timeout), as wrk2 and k6 count one: a variant whose slowest
//! requests time out must not get a better tail for failing them. A reply
//! that came after the deadline (the engine looks for expired requests
//! only every tenth of the timeout) is a timeout too, not an answer.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Arc;
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use super::failure::{Failure, FailureKind};
use crate::request::mix::RequestMix;

/// Longest latency the totals resolve: one hour, in µs.
const MAX_US: u64 = 3_600_000_000;

/// Intervals a byte count may open (the series' own bound, as
/// `limits` keeps it for latencies).
const MAX_BUCKETS: usize = 1_000_000;

#[derive(Debug, Clone)]
struct Bucket {
    latency: Histogram<u64>,
    errors: u64,
    timeouts: u64,
    /// Bytes received and sent in the interval.
    rx: u64,
    tx: u64,
}

impl Bucket {
    fn new() -> Self {
        Self {
            // Two significant digits: a 1 s bucket of 100 intervals stays small.
            latency: Histogram::new_with_max(MAX_US, 2).expect("invariant: valid bounds"),
            errors: 0,
            timeouts: 0,
            rx: 0,
            tx: 0,
        }
    }
}

/// Records what happened to each request whose (intended) start is at or
/// after `from`; earlier ones were warmup.
#[derive(Debug, Clone)]
pub struct Recorder {
    from: Instant,
    interval: Duration,
    /// How long a request may wait for its reply; a timed-out request is
    /// recorded at this latency (`None`: at the time it was found).
    deadline: Option<Duration>,
    latency: Histogram<u64>,
    errors: u64,
    timeouts: u64,
    buckets: Vec<Bucket>,
    /// When the last counted request finished.
    last: Option<Instant>,
    /// The first error's description, to say why requests failed.
    pub first_error: Option<String>,
    /// Failed requests by kind of failure (timeouts are counted apart).
    by_kind: BTreeMap<FailureKind, u64>,
    /// Keys looked up by retrievals that were answered: found, not found.
    hits: u64,
    misses: u64,
    /// Bytes received and sent since the warmup ended.
    rx: u64,
    tx: u64,
    /// How long each connection took to make, from its first attempt
    /// (retries included), in µs; connections made before the clock.
    connect: Histogram<u64>,
    /// Connection attempts that failed (refused, timed out) and were
    /// retried or given up: not request errors.
    connect_failures: u64,
    /// Why the first connection attempt failed.
    connect_error: Option<String>,
    /// A mix's requests (text, weight) and what became of the counted
    /// requests that drew each; both empty for a load of one request.
    mix: Arc<[(String, u32)]>,
    tallies: Vec<Tally>,
    /// The clients that ran and the counted requests each had answered.
    clients: Option<Clients>,
    /// The bucket the last instant fell in, `(start, end, index)`: most
    /// instants fall in the same one as the last, found by two
    /// comparisons instead of a 128-bit division.
    current: Option<(Instant, Instant, usize)>,
}

impl Recorder {
    pub fn new(from: Instant, interval: Duration) -> Self {
        Self {
            from,
            interval,
            deadline: None,
            latency: Histogram::new_with_max(MAX_US, 3).expect("invariant: valid bounds"),
            errors: 0,
            timeouts: 0,
            buckets: Vec::new(),
            last: None,
            first_error: None,
            by_kind: BTreeMap::new(),
            hits: 0,
            misses: 0,
            rx: 0,
            tx: 0,
            connect: Histogram::new_with_max(MAX_US, 3).expect("invariant: valid bounds"),
            connect_failures: 0,
            connect_error: None,
            mix: Arc::new([]),
            tallies: Vec::new(),
            clients: None,
            current: None,
        }
    }

    /// Requests wait at most `timeout` for their reply: one unanswered by
    /// then is a timeout, in the latency histogram at `timeout`.
    #[must_use]
    pub fn with_deadline(mut self, timeout: Duration) -> Self {
        self.deadline = Some(timeout);
        self
    }

    /// Whether a reply at `done` to a request started at `start` came
    /// after its deadline (and so is a timeout, not an answer).
    pub fn late(&self, start: Instant, done: Instant) -> bool {
        self.deadline
            .is_some_and(|d| done.saturating_duration_since(start) > d)
    }

    /// Count what becomes of each request of `mix` apart, where it is one.
    #[must_use]
    pub fn for_mix(mut self, mix: &RequestMix) -> Self {
        if mix.is_mix() {
            self.mix = mix.entries().map(|(t, w)| (t.to_owned(), w)).collect();
            self.tallies = vec![Tally::default(); self.mix.len()];
        }
        self
    }

    /// The clients of this recorder's thread, each by the counted requests
    /// it had answered.
    pub fn clients(&mut self, answered: impl IntoIterator<Item = u64>) {
        for n in answered {
            let c = self.clients.get_or_insert(Clients {
                count: 0,
                without_reply: 0,
                min_requests: u64::MAX,
                max_requests: 0,
            });
            c.count += 1;
            c.without_reply += u64::from(n == 0);
            c.min_requests = c.min_requests.min(n);
            c.max_requests = c.max_requests.max(n);
        }
    }

    /// What became of a counted request that drew template `template` of
    /// the mix (nothing for a load of one request).
    pub fn tally(&mut self, template: usize, start: Instant, outcome: Tallied) {
        if self.tallies.is_empty() || !self.counts(start) {
            return;
        }
        if let Some(t) = self.tallies.get_mut(template) {
            match outcome {
                Tallied::Answered => t.requests += 1,
                Tallied::Error => t.errors += 1,
                Tallied::Timeout => t.timeouts += 1,
            }
        }
    }

    /// The counted part starts at `from` (the clock starts once every
    /// connection is made, after the recorder was).
    pub fn begin(&mut self, from: Instant) {
        self.from = from;
        self.current = None;
    }

    /// A connection made, `took` after its first attempt.
    pub fn connected(&mut self, took: Duration) {
        let us = u64::try_from(took.as_micros()).unwrap_or(MAX_US).max(1);
        self.connect.saturating_record(us);
    }

    /// A connection attempt that failed.
    pub fn connect_failed(&mut self, why: &str) {
        self.connect_failures += 1;
        if self.connect_error.is_none() {
            self.connect_error = Some(why.to_owned());
        }
    }

    /// Bytes received (`rx`) and sent (`tx`) on a connection at `now`;
    /// those of the warmup are not counted.
    pub fn bytes_at(&mut self, now: Instant, rx: u64, tx: u64) {
        if now < self.from {
            return;
        }
        self.rx += rx;
        self.tx += tx;
        let Some(index) = self.index(now) else {
            return;
        };
        if index < self.buckets.len() || index < MAX_BUCKETS {
            if self.buckets.len() <= index {
                self.buckets.resize_with(index + 1, Bucket::new);
            }
            self.buckets[index].rx += rx;
            self.buckets[index].tx += tx;
        }
    }

    /// The index of the bucket `at` falls in; `None` before `from`.
    fn index(&mut self, at: Instant) -> Option<usize> {
        if let Some((start, end, index)) = self.current {
            if start <= at && at < end {
                return Some(index);
            }
        }
        let since = at.checked_duration_since(self.from)?;
        let interval = self.interval.as_nanos().max(1);
        let index = usize::try_from(since.as_nanos() / interval).unwrap_or(usize::MAX);
        let start = u64::try_from(interval * index as u128)
            .ok()
            .and_then(|ns| self.from.checked_add(Duration::from_nanos(ns)));
        let end = start.and_then(|s| s.checked_add(self.interval.max(Duration::from_nanos(1))));
        self.current = start.zip(end).map(|(s, e)| (s, e, index));
        Some(index)
    }

    /// Whether a request started at `start` counts (is past the warmup).
    pub fn counts(&self, start: Instant) -> bool {
        start >= self.from
    }

    fn bucket(&mut self, at: Instant) -> Option<&mut Bucket> {
        let index = self.index(at)?;
        if index == usize::MAX {
            return None;
        }
        if self.buckets.len() <= index {
            self.buckets.resize_with(index + 1, Bucket::new);
        }
        self.last = Some(self.last.map_or(at, |l| l.max(at)));
        Some(&mut self.buckets[index])
    }

    /// A reply: `ok` or an error reply, finished at `done`; a good reply
    /// after the deadline is a timeout.
    pub fn reply(&mut self, start: Instant, done: Instant, ok: bool) {
        if !self.counts(start) {
            return;
        }
        if ok && self.late(start, done) {
            self.timeout(start, done);
            return;
        }
        if !ok {
            self.error(start, done, &Failure::Server("an error reply".to_owned()));
            return;
        }
        self.answered(start, done);
    }

    /// An error reply in the server's own words, which `text` gives (called
    /// only for the first error, so the others cost no formatting).
    pub fn error_reply(&mut self, start: Instant, done: Instant, text: impl FnOnce() -> String) {
        if self.first_error.is_none() && self.counts(start) {
            self.first_error = Some(format!("the server answered: {}", text()));
        }
        self.error(start, done, &Failure::Server("an error reply".to_owned()));
    }

    /// A retrieval's answer (recorded as a reply too): of the keys it
    /// looked up, `hits` had a value and `misses` did not.
    pub fn lookups(&mut self, start: Instant, hits: u64, misses: u64) {
        if self.counts(start) {
            self.hits += hits;
            self.misses += misses;
        }
    }

    fn answered(&mut self, start: Instant, done: Instant) {
        let us = u64::try_from(done.saturating_duration_since(start).as_micros())
            .unwrap_or(MAX_US)
            .max(1);
        self.latency.saturating_record(us);
        if let Some(bucket) = self.bucket(done) {
            bucket.latency.saturating_record(us);
        }
    }

    /// A request that failed (connection lost, refused, error reply).
    pub fn error(&mut self, start: Instant, at: Instant, why: &Failure) {
        if !self.counts(start) {
            return;
        }
        self.errors += 1;
        *self.by_kind.entry(why.kind()).or_default() += 1;
        if self.first_error.is_none() {
            self.first_error = Some(why.to_string());
        }
        if let Some(bucket) = self.bucket(at) {
            bucket.errors += 1;
        }
    }

    /// A request with no reply within the timeout, found at `at`: in the
    /// latency histogram at its deadline.
    pub fn timeout(&mut self, start: Instant, at: Instant) {
        if !self.counts(start) {
            return;
        }
        let waited = self
            .deadline
            .unwrap_or_else(|| at.saturating_duration_since(start));
        let us = u64::try_from(waited.as_micros()).unwrap_or(MAX_US).max(1);
        self.timeouts += 1;
        self.latency.saturating_record(us);
        if let Some(bucket) = self.bucket(at) {
            bucket.timeouts += 1;
            bucket.latency.saturating_record(us);
        }
    }

    /// Fold another thread's recorder (same `from` and interval) into this one.
    pub fn merge(&mut self, other: &Recorder) {
        let _ = self.latency.add(&other.latency);
        self.errors += other.errors;
        self.timeouts += other.timeouts;
        if self.buckets.len() < other.buckets.len() {
            self.buckets.resize_with(other.buckets.len(), Bucket::new);
        }
        for (mine, theirs) in self.buckets.iter_mut().zip(&other.buckets) {
            let _ = mine.latency.add(&theirs.latency);
            mine.errors += theirs.errors;
            mine.timeouts += theirs.timeouts;
            mine.rx += theirs.rx;
            mine.tx += theirs.tx;
        }
        self.rx += other.rx;
        self.tx += other.tx;
        self.last = match (self.last, other.last) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        if self.first_error.is_none() {
            self.first_error.clone_from(&other.first_error);
        }
        for (kind, n) in &other.by_kind {
            *self.by_kind.entry(*kind).or_default() += n;
        }
        self.hits += other.hits;
        self.misses += other.misses;
        let _ = self.connect.add(&other.connect);
        self.connect_failures += other.connect_failures;
        if self.connect_error.is_none() {
            self.connect_error.clone_from(&other.connect_error);
        }
        self.clients = match (self.clients, other.clients) {
            (Some(a), Some(b)) => Some(Clients {
                count: a.count + b.count,
                without_reply: a.without_reply + b.without_reply,
                min_requests: a.min_requests.min(b.min_requests),
                max_requests: a.max_requests.max(b.max_requests),
            }),
            (a, b) => a.or(b),
        };
        if self.tallies.len() < other.tallies.len() {
            self.mix = other.mix.clone();
            self.tallies.resize(other.tallies.len(), Tally::default());
        }
        for (mine, theirs) in self.tallies.iter_mut().zip(&other.tallies) {
            mine.requests += theirs.requests;
            mine.errors += theirs.errors;
            mine.timeouts += theirs.timeouts;
        }
    }

    /// The summary over a measured period of `measured` (the load's
    /// duration, or up to the last reply when the load was a count).
    pub fn summary(&self, measured: Option<Duration>, requested_rps: Option<f64>) -> Summary {
        let measured = measured
            .or_else(|| self.last.map(|l| l.saturating_duration_since(self.from)))
            .unwrap_or_default();
        let h = &self.latency;
        let ms = |us: u64| us as f64 / 1000.0;
        let q = |p: f64| ms(h.value_at_quantile(p));
        // Timed-out requests are in the histogram at their deadline; the
        // answered ones are the rest.
        let requests = h.len().saturating_sub(self.timeouts);
        let empty = h.is_empty();
        let looked_up = self.hits + self.misses;
        Summary {
            requests,
            errors: self.errors,
            timeouts: self.timeouts,
            duration_s: measured.as_secs_f64(),
            requested_rps,
            achieved_rps: if measured.is_zero() {
                0.0
            } else {
                requests as f64 / measured.as_secs_f64()
            },
            latency_ms: Latency {
                min: if empty { 0.0 } else { ms(h.min()) },
                mean: h.mean() / 1000.0,
                p50: q(0.50),
                p90: q(0.90),
                p95: q(0.95),
                p99: q(0.99),
                p999: q(0.999),
                max: ms(h.max()),
            },
            percentiles: PERCENTILES
                .iter()
                .map(|p| Percentile {
                    percentile: *p,
                    ms: q(p / 100.0),
                })
                .collect(),
            first_error: self.first_error.clone(),
            errors_by_kind: self.by_kind.clone(),
            hits: (looked_up > 0).then_some(self.hits),
            misses: (looked_up > 0).then_some(self.misses),
            hit_rate: (looked_up > 0).then(|| self.hits as f64 / looked_up as f64),
            bytes_rx: (self.rx + self.tx > 0).then_some(self.rx),
            bytes_tx: (self.rx + self.tx > 0).then_some(self.tx),
            connects: self.connects(),
            clients: self.clients,
            mix: self
                .mix
                .iter()
                .zip(&self.tallies)
                .map(|((request, weight), t)| MixCount {
                    request: request.clone(),
                    weight: *weight,
                    requests: t.requests,
                    errors: t.errors,
                    timeouts: t.timeouts,
                })
                .collect(),
        }
    }

    /// The connections made before the clock; `None` when none was
    /// counted (a driver that connects per request).
    fn connects(&self) -> Option<Connects> {
        let h = &self.connect;
        if h.is_empty() && self.connect_failures == 0 {
            return None;
        }
        let ms = |us: u64| us as f64 / 1000.0;
        Some(Connects {
            made: h.len(),
            failed_attempts: self.connect_failures,
            mean_ms: h.mean() / 1000.0,
            p50_ms: ms(h.value_at_quantile(0.50)),
            p99_ms: ms(h.value_at_quantile(0.99)),
            max_ms: ms(h.max()),
            first_error: self.connect_error.clone(),
        })
    }

    /// One row per interval, from the end of the warmup. Replies that came
    /// after a `measured` period (to requests sent within it) go in its
    /// last interval rather than in a short one of their own.
    pub fn series(&self, requested_rps: Option<f64>, measured: Option<Duration>) -> Vec<SeriesRow> {
        let seconds = self.interval.as_secs_f64();
        let mut buckets = self.buckets.clone();
        if let Some(measured) = measured {
            let count = usize::try_from(
                measured
                    .as_nanos()
                    .div_ceil(self.interval.as_nanos().max(1)),
            )
            .unwrap_or(usize::MAX)
            .max(1);
            if buckets.len() > count {
                let tail = buckets.split_off(count);
                let last = buckets.last_mut().expect("invariant: count >= 1");
                for b in tail {
                    let _ = last.latency.add(&b.latency);
                    last.errors += b.errors;
                    last.timeouts += b.timeouts;
                    last.rx += b.rx;
                    last.tx += b.tx;
                }
            }
        }
        buckets
            .iter()
            .enumerate()
            .map(|(i, b)| {
                let q = |p: f64| b.latency.value_at_quantile(p) as f64 / 1000.0;
                let answered = b.latency.len().saturating_sub(b.timeouts);
                SeriesRow {
                    time_s: (i + 1) as f64 * seconds,
                    requested_rps,
                    achieved_rps: answered as f64 / seconds,
                    requests: answered,
                    errors: b.errors,
                    timeouts: b.timeouts,
                    p50_ms: q(0.50),
                    p90_ms: q(0.90),
                    p95_ms: q(0.95),
                    p99_ms: q(0.99),
                    max_ms: b.latency.max() as f64 / 1000.0,
                    min_ms: if b.latency.is_empty() {
                        0.0
                    } else {
                        b.latency.min() as f64 / 1000.0
                    },
                    mean_ms: b.latency.mean() / 1000.0,
                    p999_ms: q(0.999),
                    bytes_rx: b.rx,
                    bytes_tx: b.tx,
                }
            })
            .collect()
    }
}

/// Percentiles kept for latency curves.
const PERCENTILES: [f64; 12] = [
    0.0, 10.0, 25.0, 50.0, 75.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.99, 100.0,
];

/// What a load run measured: its summary and its time series.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Outcome {
    pub summary: Summary,
    pub series: Vec<SeriesRow>,
}

/// What a load run measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Requests answered successfully (the histogram's count).
    pub requests: u64,
    /// Requests that failed: error replies, refused or lost connections.
    pub errors: u64,
    /// Requests with no reply within the timeout.
    pub timeouts: u64,
    /// The measured period (after warmup), in seconds.
    pub duration_s: f64,
    /// The rate asked for (open-loop models), requests/s.
    pub requested_rps: Option<f64>,
    /// Successful requests per second over the measured period.
    pub achieved_rps: f64,
    /// Latency of the answered requests and of the timed-out ones, each of
    /// those at its deadline (the load's timeout): a request that timed
    /// out is not left out of the tail (wrk2, k6). Error replies and lost
    /// connections are not in it.
    pub latency_ms: Latency,
    /// The latency curve: percentile → ms (timeouts at their deadline).
    pub percentiles: Vec<Percentile>,
    /// Why the first failed request failed.
    pub first_error: Option<String>,
    /// Failed requests by kind: connection, protocol (a reply not of the
    /// protocol), server (an error reply), fatal.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub errors_by_kind: BTreeMap<FailureKind, u64>,
    /// Keys that answered retrievals found (memcached `VALUE` blocks);
    /// absent when the load looked nothing up (every driver but memcached).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hits: Option<u64>,
    /// Keys that answered retrievals did not find (a `get` answered by a
    /// bare `END`): not errors, the request worked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub misses: Option<u64>,
    /// hits / (hits + misses), a fraction from 0 to 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hit_rate: Option<f64>,
    /// Bytes received from the server after the warmup; absent where the
    /// driver does not count them (exec, postgres).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes_rx: Option<u64>,
    /// Bytes sent to the server after the warmup.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes_tx: Option<u64>,
    /// The connections, made before the clock started: how long each
    /// took and how many attempts failed on the way. Not requests: their
    /// failures are not in `errors`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connects: Option<Connects>,
    /// The clients (connections; a blocking driver's threads) and the
    /// counted requests each had answered: every client that connected
    /// works in the measured window, so `without_reply` is 0 unless the
    /// load was shorter than its clients.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clients: Option<Clients>,
    /// A mix of requests (`-r A -r B --mix 9:1`): each request, its
    /// weight, and the counted requests that drew it; absent for a load of
    /// one request. A request that was never sent (its connection down)
    /// drew none and is in `errors` only.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mix: Vec<MixCount>,
}

/// The clients of a load and how evenly the counted requests were
/// answered over them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Clients {
    /// Clients that ran.
    pub count: u64,
    /// Clients with no counted request answered.
    pub without_reply: u64,
    /// The fewest and the most counted requests one client had answered.
    pub min_requests: u64,
    pub max_requests: u64,
}

/// One request of a mix and what became of the counted requests that
/// drew it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct MixCount {
    /// The request template, as written.
    pub request: String,
    /// Its weight in the mix (its share is weight / the sum of weights).
    pub weight: u32,
    /// Answered successfully.
    pub requests: u64,
    /// Failed (an error reply, a lost connection).
    pub errors: u64,
    /// Unanswered within the timeout.
    pub timeouts: u64,
}

/// A mix request's counts in a [`Recorder`].
#[derive(Debug, Clone, Copy, Default)]
struct Tally {
    requests: u64,
    errors: u64,
    timeouts: u64,
}

/// What became of one request, for its mix's tally.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tallied {
    Answered,
    Error,
    Timeout,
}

/// How the load's connections were made, before the measured window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Connects {
    /// Connections made, each confirmed by the server's answer.
    pub made: u64,
    /// Attempts that failed (refused, timed out, a probe the server never
    /// took) and were retried.
    pub failed_attempts: u64,
    /// Time from a connection's first attempt until the server answered
    /// on it (its probe), in ms.
    pub mean_ms: f64,
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
    /// Why the first failed attempt failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_error: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Latency {
    pub min: f64,
    pub mean: f64,
    pub p50: f64,
    pub p90: f64,
    pub p95: f64,
    pub p99: f64,
    pub p999: f64,
    pub max: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Percentile {
    pub percentile: f64,
    pub ms: f64,
}

/// One interval of the time series (a CSV row).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SeriesRow {
    /// End of the interval, seconds after the warmup.
    pub time_s: f64,
    pub requested_rps: Option<f64>,
    pub achieved_rps: f64,
    pub requests: u64,
    pub errors: u64,
    pub timeouts: u64,
    pub p50_ms: f64,
    pub p90_ms: f64,
    pub p95_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
    /// The interval's fastest reply, in ms.
    #[serde(default)]
    pub min_ms: f64,
    /// Its mean latency, in ms.
    #[serde(default)]
    pub mean_ms: f64,
    #[serde(default)]
    pub p999_ms: f64,
    /// Bytes received and sent in the interval (0 where the driver does
    /// not count them).
    #[serde(default)]
    pub bytes_rx: u64,
    #[serde(default)]
    pub bytes_tx: u64,
}

/// FeedSim's per-interval CSV (seed 004's `feedsim_results_N.txt`), one
/// row per interval of one instance: its length, queries, the rates
/// asked and achieved, bytes and MB/s each way, and latency from the
/// fastest to p99.9.
pub fn feedsim_csv(rows: &[SeriesRow]) -> String {
    let mut out = String::from(
        "duration_secs,total_queries,requested_qps,achieved_qps,total_bytes_rx,total_bytes_tx,rx_MBps,tx_MBps,min_ms,avg_ms,50p_ms,90p_ms,95p_ms,99p_ms,99.9p_ms\n",
    );
    let mut previous = 0.0;
    for r in rows {
        let seconds = (r.time_s - previous).max(f64::MIN_POSITIVE);
        previous = r.time_s;
        let mbps = |bytes: u64| bytes as f64 / seconds / 1e6;
        let _ = writeln!(
            out,
            "{:.0},{},{:.2},{:.2},{},{},{:.2},{:.2},{:.3},{:.3},{:.3},{:.3},{:.3},{:.3},{:.3}",
            seconds,
            r.requests,
            r.requested_rps.unwrap_or(0.0),
            r.achieved_rps,
            r.bytes_rx,
            r.bytes_tx,
            mbps(r.bytes_rx),
            mbps(r.bytes_tx),
            r.min_ms,
            r.mean_ms,
            r.p50_ms,
            r.p90_ms,
            r.p95_ms,
            r.p99_ms,
            r.p999_ms,
        );
    }
    out
}

/// The time series as CSV.
pub fn series_csv(rows: &[SeriesRow]) -> String {
    let mut out = String::from(
        "time_s,requested_rps,achieved_rps,requests,errors,timeouts,p50_ms,p90_ms,p95_ms,p99_ms,max_ms\n",
    );
    for r in rows {
        let _ = writeln!(
            out,
            "{:.3},{},{:.1},{},{},{},{:.3},{:.3},{:.3},{:.3},{:.3}",
            r.time_s,
            r.requested_rps
                .map(|v| format!("{v:.1}"))
                .unwrap_or_default(),
            r.achieved_rps,
            r.requests,
            r.errors,
            r.timeouts,
            r.p50_ms,
            r.p90_ms,
            r.p95_ms,
            r.p99_ms,
            r.max_ms
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bucket an instant falls in is cached; instants on either side
    /// of a boundary, and going back to an earlier bucket, still land in
    /// their own.
    #[test]
    fn bytes_land_in_the_interval_of_their_instant() {
        let t0 = Instant::now();
        let second = Duration::from_secs(1);
        let ns = Duration::from_nanos(1);
        // The load's clock starts a second after t0.
        let mut r = Recorder::new(t0 + second, second);
        for (after_t0, rx) in [
            (second, 1),
            (Duration::from_nanos(1_999_999_999), 2),
            (2 * second, 4),
            (4 * second + ns, 8),
            (2 * second + ns, 16),
            (Duration::from_nanos(999_999_999), 32),
        ] {
            r.bytes_at(t0 + after_t0, rx, 0);
        }
        let rx: Vec<u64> = r.buckets.iter().map(|b| b.rx).collect();
        assert_eq!(rx, [3, 20, 0, 8]);
        assert_eq!(r.rx, 31);
        r.reply(t0 + second, t0 + 2 * second + ns, true);
        assert_eq!(r.buckets[1].latency.len(), 1);
    }

    #[test]
    fn warmup_requests_are_not_counted_and_buckets_follow_completion_time() {
        let t0 = Instant::now();
        let from = t0 + Duration::from_secs(1);
        let mut r = Recorder::new(from, Duration::from_secs(1));
        r.reply(t0, t0 + Duration::from_millis(5), true); // warmup
        r.reply(from, from + Duration::from_millis(2), true);
        r.reply(
            from + Duration::from_millis(1500),
            from + Duration::from_millis(1510),
            true,
        );
        r.error(
            from,
            from + Duration::from_millis(3),
            &Failure::Connection("refused".to_owned()),
        );
        r.timeout(from, from + Duration::from_millis(2100));
        let s = r.summary(Some(Duration::from_secs(2)), None);
        assert_eq!((s.requests, s.errors, s.timeouts), (2, 1, 1));
        assert!((s.achieved_rps - 1.0).abs() < 1e-9);
        // The timeout is in the latency at the time it was found (no
        // deadline given here), the error is not.
        assert!(
            (s.latency_ms.max - 2100.0).abs() < 2.0,
            "{:?}",
            s.latency_ms
        );
        assert!((s.latency_ms.p50 - 10.0).abs() < 0.1, "{:?}", s.latency_ms);
        assert_eq!(s.first_error.as_deref(), Some("connection: refused"));
        assert_eq!(s.errors_by_kind.get(&FailureKind::Connection), Some(&1));
        assert_eq!(s.errors_by_kind.len(), 1);
        let series = r.series(None, None);
        assert_eq!(series.len(), 3);
        assert_eq!((series[0].requests, series[0].errors), (1, 1));
        assert_eq!((series[1].requests, series[2].timeouts), (1, 1));
        let csv = series_csv(&series);
        assert!(csv.starts_with("time_s,requested_rps,achieved_rps"));
        assert_eq!(csv.lines().count(), 4);
    }

    /// A variant whose slowest requests time out must not get a better
    /// tail for it: 10 of 100 requests timed out (found a sweep after their
    /// 100 ms deadline) are in the latency at 100 ms, not left out, and a
    /// reply after the deadline is a timeout, not an answer.
    #[test]
    fn timed_out_requests_are_in_the_latency_at_their_deadline() {
        let from = Instant::now();
        let ms = Duration::from_millis;
        let mut r = Recorder::new(from, Duration::from_secs(1)).with_deadline(ms(100));
        for i in 0..89 {
            r.reply(from + ms(i), from + ms(i) + ms(2), true);
        }
        for i in 0..10 {
            // The sweep runs every tenth of the timeout: found up to 10 ms late.
            r.timeout(from + ms(i), from + ms(i) + ms(108));
        }
        // Its reply came 5 ms after the deadline, before a sweep found it.
        assert!(r.late(from, from + ms(105)));
        assert!(!r.late(from, from + ms(100)));
        r.reply(from, from + ms(105), true);
        let s = r.summary(Some(Duration::from_secs(1)), None);
        assert_eq!((s.requests, s.errors, s.timeouts), (89, 0, 11));
        assert!((s.achieved_rps - 89.0).abs() < 1e-9, "{}", s.achieved_rps);
        // 11% timed out: p90 and p99 are the deadline, not 2 ms.
        assert!((s.latency_ms.p99 - 100.0).abs() < 0.1, "{:?}", s.latency_ms);
        assert!((s.latency_ms.max - 100.0).abs() < 0.1, "{:?}", s.latency_ms);
        assert!(s.latency_ms.p50 < 2.1, "{:?}", s.latency_ms);
        let series = r.series(None, Some(Duration::from_secs(1)));
        assert_eq!((series[0].requests, series[0].timeouts), (89, 11));
        // The interval's histogram keeps two significant digits.
        assert!((series[0].p99_ms - 100.0).abs() < 1.0, "{:?}", series[0]);
    }

    #[test]
    fn hits_and_misses_give_a_hit_rate_only_when_something_was_looked_up() {
        let t0 = Instant::now();
        let from = t0 + Duration::from_secs(1);
        let mut a = Recorder::new(from, Duration::from_secs(1));
        assert_eq!(a.summary(None, None).hit_rate, None);
        a.lookups(t0, 5, 0); // warmup
        a.lookups(from, 3, 1);
        let mut b = Recorder::new(from, Duration::from_secs(1));
        b.lookups(from, 0, 4);
        a.merge(&b);
        let s = a.summary(None, None);
        assert_eq!(
            (s.hits, s.misses, s.hit_rate),
            (Some(3), Some(5), Some(0.375))
        );
        assert_eq!(s.errors, 0);
    }

    #[test]
    fn merging_adds_counts_and_histograms() {
        let from = Instant::now();
        let mut a = Recorder::new(from, Duration::from_secs(1));
        let mut b = Recorder::new(from, Duration::from_secs(1));
        a.reply(from, from + Duration::from_millis(1), true);
        b.reply(from, from + Duration::from_millis(100), true);
        b.reply(from, from + Duration::from_millis(1200), false);
        a.merge(&b);
        let s = a.summary(None, Some(10.0));
        assert_eq!((s.requests, s.errors), (2, 1));
        assert!(s.latency_ms.max >= 99.0 && s.latency_ms.min <= 1.01);
        assert_eq!(a.series(None, None).len(), 2);
        assert_eq!(a.series(None, Some(Duration::from_millis(900))).len(), 1);
    }
}
