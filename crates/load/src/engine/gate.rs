//! The start gate: every load thread makes its connections first, then
//! waits here; once the last one arrives, the clock starts for all of
//! them at one instant. Connection set-up is never inside the measured
//! window, and a burst of connects is never counted as the server's
//! throughput (or its errors).

use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use anyhow::{bail, Result};

/// An edge of a load's measured window (after its warmup, until its last
/// request is answered), as a watched load (`run_watched`) tells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Edge {
    /// The window opens: no counted request has been sent yet.
    Opens,
    /// The window has closed: every counted request is answered (or timed out).
    Closes,
}

/// Whoever reads counters at a window's edges (a bench reads its services').
pub type Watch<'w> = &'w (dyn Fn(Edge) + Sync);

/// When the load's schedule starts, when its counted part starts (after
/// the warmup), and when the last request may start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Clock {
    pub start: Instant,
    pub from: Instant,
    pub end: Option<Instant>,
}

/// How long after the last thread arrives the clock starts: time for every
/// thread to wake up before its first request is due.
const LEAD: Duration = Duration::from_millis(10);

#[derive(Debug, Default)]
struct State {
    arrived: usize,
    /// Connections made and wanted by the threads that arrived.
    made: usize,
    wanted: usize,
    /// Why the first thread that fell short did.
    why: Option<String>,
    /// Why the server refused a client's set-up, first seen.
    fatal: Option<String>,
    clock: Option<Clock>,
    /// Why the load cannot start, once every thread arrived.
    failed: Option<String>,
    /// Every thread is done: a window that has not opened never will.
    finished: bool,
}

/// What a thread brings to the gate: how many of its clients connected,
/// and why the others did not.
#[derive(Debug)]
pub struct Arrival {
    pub made: usize,
    pub wanted: usize,
    pub why: Option<String>,
    /// The failure was the server refusing the load's set-up (a statement
    /// it cannot prepare), not a connection: no retry mends it.
    pub fatal: bool,
}

/// A gate for `threads` load threads.
pub struct Gate<'w> {
    threads: usize,
    warmup: Duration,
    duration: Option<Duration>,
    state: Mutex<State>,
    opened: Condvar,
    /// Told when a load without warmup opens its window (see [`Gate::watched`]).
    watch: Option<Watch<'w>>,
}

impl std::fmt::Debug for Gate<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gate")
            .field("threads", &self.threads)
            .field("warmup", &self.warmup)
            .field("duration", &self.duration)
            .field("state", &self.state)
            .field("watched", &self.watch.is_some())
            .finish()
    }
}

impl<'w> Gate<'w> {
    pub fn new(threads: usize, warmup: Duration, duration: Option<Duration>) -> Self {
        Self {
            threads,
            warmup,
            duration,
            state: Mutex::new(State::default()),
            opened: Condvar::new(),
            watch: None,
        }
    }

    /// A gate that tells `watch` when the measured window opens, if that is
    /// when the clock starts (no warmup): the last thread to arrive calls
    /// it before any request is sent. With a warmup the window opens later,
    /// at the clock's `from` ([`Gate::wait_window`]).
    pub fn watched(mut self, watch: Watch<'w>) -> Self {
        self.watch = Some(watch);
        self
    }

    /// Arrive with this thread's connections; wait for the others, at
    /// most `patience`. The clock, or why the load cannot start: when a
    /// thread fell short, every thread gets one error naming how many of
    /// all the clients connected.
    pub fn arrive(&self, arrival: Arrival, patience: Duration) -> Result<Clock> {
        let mut state = self
            .state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        state.arrived += 1;
        state.made += arrival.made;
        state.wanted += arrival.wanted;
        if let Some(why) = arrival.why {
            if arrival.fatal {
                state.fatal.get_or_insert(why);
            } else {
                state.why.get_or_insert(why);
            }
        }
        if state.arrived == self.threads {
            if let Some(why) = &state.fatal {
                state.failed = Some(format!(
                    "the load could not start: the server refused a client's set-up: {why}"
                ));
            } else if let Some(why) = state
                .why
                .as_ref()
                .filter(|w| state.made == 0 && w.contains("refused"))
            {
                state.failed = Some(format!(
                    "none of {} clients could connect: {why}\nhint: nothing listens there: is the server started, and on this address and port?",
                    state.wanted
                ));
            } else if let Some(why) = &state.why {
                state.failed = Some(format!(
                    "only {} of {} clients could connect before the load's timeout: {why}\nhint: the server may refuse connections past its own limit (Redis maxclients, memcached -c, PostgreSQL max_connections) or drop them past its listen backlog; give fewer clients, or a longer timeout",
                    state.made, state.wanted
                ));
            } else {
                if let (Some(watch), true) = (self.watch, self.warmup.is_zero()) {
                    watch(Edge::Opens);
                }
                let start = Instant::now() + LEAD;
                let from = start + self.warmup;
                state.clock = Some(Clock {
                    start,
                    from,
                    end: self.duration.map(|d| from + d),
                });
            }
            self.opened.notify_all();
        }
        let deadline = Instant::now() + patience;
        loop {
            if let Some(why) = &state.failed {
                bail!("{why}");
            }
            if let Some(clock) = state.clock {
                return Ok(clock);
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                bail!(
                    "the load's threads did not all connect within {:.0} s ({} of {} ready)",
                    patience.as_secs_f64(),
                    state.arrived,
                    self.threads
                );
            }
            state = self
                .opened
                .wait_timeout(state, left)
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .0;
        }
    }

    /// Wait until the measured window opens (the clock's `from`, after the
    /// warmup): its clock, or `None` when the load ended first (it could not
    /// start, or every thread stopped during the warmup).
    pub fn wait_window(&self) -> Option<Clock> {
        let mut state = self
            .state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        loop {
            if let Some(clock) = state.clock {
                let now = Instant::now();
                if now >= clock.from {
                    return Some(clock);
                }
                if state.finished {
                    return None;
                }
                state = self
                    .opened
                    .wait_timeout(state, clock.from - now)
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .0;
            } else {
                if state.finished || state.failed.is_some() {
                    return None;
                }
                state = self
                    .opened
                    .wait(state)
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
            }
        }
    }

    /// Every load thread is done: wake [`Gate::wait_window`].
    pub fn finish(&self) {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .finished = true;
        self.opened.notify_all();
    }

    /// The clock, once the gate opened.
    pub fn clock(&self) -> Option<Clock> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clock
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(clients: usize) -> Arrival {
        Arrival {
            made: clients,
            wanted: clients,
            why: None,
            fatal: false,
        }
    }

    #[test]
    fn every_thread_gets_one_clock_after_the_last_arrives() {
        let gate = Gate::new(3, Duration::from_secs(1), Some(Duration::from_secs(2)));
        let before = Instant::now();
        let clocks: Vec<Clock> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..3)
                .map(|i| {
                    let gate = &gate;
                    s.spawn(move || {
                        std::thread::sleep(Duration::from_millis(20 * i));
                        gate.arrive(all(2), Duration::from_secs(10)).unwrap()
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert!(clocks.windows(2).all(|w| w[0] == w[1]));
        let clock = clocks[0];
        assert!(clock.start >= before + Duration::from_millis(40));
        assert_eq!(clock.from - clock.start, Duration::from_secs(1));
        assert_eq!(clock.end, Some(clock.from + Duration::from_secs(2)));
        assert_eq!(gate.clock(), Some(clock));
    }

    #[test]
    fn one_thread_that_cannot_connect_stops_them_all_with_the_count() {
        let gate = Gate::new(2, Duration::ZERO, None);
        let errors: Vec<String> = std::thread::scope(|s| {
            let a = s.spawn(|| gate.arrive(all(5), Duration::from_secs(10)));
            let b = s.spawn(|| {
                let short = Arrival {
                    made: 3,
                    wanted: 5,
                    why: Some("connect to 127.0.0.1:1: refused".to_owned()),
                    fatal: false,
                };
                gate.arrive(short, Duration::from_secs(10))
            });
            [a, b]
                .into_iter()
                .map(|h| h.join().unwrap().unwrap_err().to_string())
                .collect()
        });
        assert_eq!(errors[0], errors[1]);
        assert!(
            errors[0].starts_with("only 8 of 10 clients could connect before the load's timeout: connect to 127.0.0.1:1: refused"),
            "{}",
            errors[0]
        );
        assert_eq!(gate.clock(), None);
    }

    /// Every attempt refused: nothing listens, and the error says so
    /// rather than blaming the server's limits.
    #[test]
    fn no_client_connecting_for_refusal_says_nothing_listens() {
        let gate = Gate::new(1, Duration::ZERO, None);
        let refused = Arrival {
            made: 0,
            wanted: 4,
            why: Some("connect to 127.0.0.1:1: refused".to_owned()),
            fatal: false,
        };
        let error = gate
            .arrive(refused, Duration::from_secs(10))
            .unwrap_err()
            .to_string();
        assert!(
            error.starts_with("none of 4 clients could connect"),
            "{error}"
        );
        assert!(error.contains("nothing listens there"), "{error}");
        assert!(!error.contains("maxclients"), "{error}");
    }

    #[test]
    fn a_thread_that_never_arrives_ends_the_wait() {
        let gate = Gate::new(2, Duration::ZERO, None);
        let error = gate
            .arrive(all(1), Duration::from_millis(50))
            .unwrap_err()
            .to_string();
        assert!(error.contains("1 of 2 ready"), "{error}");
    }
}
