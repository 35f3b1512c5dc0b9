//! Drivers that block per request (`exec`: a command per request; the SQL
//! drivers' sessions) run one thread per client, on the same schedule as
//! the event loop: closed, or open-loop with latency measured from each
//! request's intended start.

use std::time::{Duration, Instant};

use super::failure::Failure;
use super::gate::{Arrival, Gate};
use super::recorder::{Recorder, Tallied};
use super::share::{Pace, Share};
use crate::request::{Generator, Words};

/// One blocking request: `Ok(true)` answered, `Ok(false)` an error answer,
/// `Err` why it failed.
pub trait Call: Send {
    fn call(&mut self, words: &Words, timeout: Duration) -> Result<bool, Failure>;
}

/// How long a thread waits for the others to connect.
const GATE_PATIENCE: Duration = Duration::from_mins(10);

/// The first pause after a failed connect; each further one doubles it,
/// up to half a second.
const FIRST_PAUSE: Duration = Duration::from_millis(10);

/// Connect the share's one client before the clock: retried with a
/// growing pause until `patience` after the first attempt. The client,
/// or why it could not connect.
fn connect_first(
    connect: &dyn Fn() -> Result<Box<dyn Call>, Failure>,
    patience: Duration,
    recorder: &mut Recorder,
) -> Result<Box<dyn Call>, Failure> {
    let first = Instant::now();
    let mut pause = FIRST_PAUSE;
    loop {
        match connect() {
            Ok(client) => {
                recorder.connected(first.elapsed());
                return Ok(client);
            }
            Err(why) => {
                recorder.connect_failed(&why.to_string());
                if matches!(why, Failure::Fatal(_))
                    || first.elapsed() + pause >= patience
                    || afterburner_leaves::interrupt::requested()
                {
                    return Err(why);
                }
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(500));
            }
        }
    }
}

/// Run the share's one client until the share is done: connected first,
/// then from the gate's clock.
pub fn run_client(
    connect: &dyn Fn() -> Result<Box<dyn Call>, Failure>,
    mut generator: Generator,
    share: &Share,
    gate: &Gate,
    mut recorder: Recorder,
) -> anyhow::Result<Recorder> {
    let first = connect_first(connect, share.timeout, &mut recorder);
    let arrival = Arrival {
        made: usize::from(first.is_ok()),
        wanted: 1,
        why: first.as_ref().err().map(ToString::to_string),
        fatal: matches!(first, Err(Failure::Fatal(_))),
    };
    let clock = gate.arrive(arrival, GATE_PATIENCE)?;
    recorder.begin(clock.from);
    let (start, end) = (clock.start, clock.end);
    let mut draws = share.draws(0);
    let mut due = start
        + match share.pace {
            Pace::Open { per_conn, arrivals } => {
                arrivals.first(share.offset(0), per_conn, &mut draws)
            }
            Pace::Closed => share.offset(0),
        };
    let mut remaining = share.requests;
    let mut client: Option<Box<dyn Call>> = first.ok();
    // Counted requests answered successfully by this client.
    let mut answered = 0u64;
    std::thread::sleep(start.saturating_duration_since(Instant::now()));
    loop {
        let now = Instant::now();
        if end.is_some_and(|end| now >= end)
            || remaining == Some(0)
            || afterburner_leaves::interrupt::requested()
        {
            break;
        }
        let intended = match share.pace {
            Pace::Closed => now,
            Pace::Open { per_conn, arrivals } => {
                if end.is_some_and(|end| due >= end) {
                    break;
                }
                if due > now {
                    std::thread::sleep(due - now);
                }
                let intended = due;
                due += arrivals.next(per_conn, &mut draws);
                intended
            }
        };
        if recorder.counts(intended) {
            if let Some(r) = remaining.as_mut() {
                *r -= 1;
            }
        }
        if client.is_none() {
            match connect() {
                Ok(c) => client = Some(c),
                Err(why) => {
                    recorder.error(intended, Instant::now(), &why);
                    if matches!(why, Failure::Fatal(_)) {
                        break;
                    }
                    std::thread::sleep(Duration::from_millis(100));
                    continue;
                }
            }
        }
        let words = generator.next_request();
        let Some(c) = client.as_mut() else { continue };
        let result = c.call(words, share.timeout);
        if result.as_ref().is_err_and(Failure::drops_connection) {
            client = None;
        }
        let done = Instant::now();
        let tallied = match &result {
            Ok(true) if recorder.late(intended, done) => Tallied::Timeout,
            Ok(true) => Tallied::Answered,
            Err(Failure::Timeout(_)) => Tallied::Timeout,
            _ => Tallied::Error,
        };
        recorder.tally(generator.chosen(), intended, tallied);
        answered += u64::from(tallied == Tallied::Answered && recorder.counts(intended));
        match result {
            Ok(ok) => recorder.reply(intended, done, ok),
            Err(Failure::Timeout(_)) => recorder.timeout(intended, done),
            Err(why) => {
                let fatal = matches!(why, Failure::Fatal(_));
                recorder.error(intended, done, &why);
                if fatal {
                    break;
                }
            }
        }
    }
    recorder.clients([answered]);
    Ok(recorder)
}
