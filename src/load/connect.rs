//! Connections before the clock, for the event loop: each thread opens
//! its share without blocking, at most [`WINDOW`] connects in flight at a
//! time (a burst of thousands would overflow the server's listen backlog,
//! 511 for Redis, and every SYN it drops costs a second), and retries a
//! refused or failed one with a growing pause until `patience` after its
//! first attempt. How long each took and the attempts that failed go to
//! the recorder; they are not requests.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use mio::net::TcpStream;
use mio::{Events, Interest, Poll, Token};

use super::recorder::Recorder;

/// Connects in flight at once, per thread.
pub const WINDOW: usize = 128;

/// The first pause after a failed attempt; each further one doubles it,
/// up to [`MAX_PAUSE`].
const FIRST_PAUSE: Duration = Duration::from_millis(10);
const MAX_PAUSE: Duration = Duration::from_millis(500);

/// Why a thread's connections could not all be made.
#[derive(Debug)]
pub struct Shortfall {
    pub made: usize,
    pub wanted: usize,
    pub why: String,
}

#[derive(Default)]
struct Slot {
    stream: Option<TcpStream>,
    /// The first attempt: the connection's deadline counts from it.
    first: Option<Instant>,
    failures: u32,
    made: bool,
}

/// One thread's connection phase.
struct Connector {
    addr: SocketAddr,
    patience: Duration,
    slots: Vec<Slot>,
    /// The next slot never tried.
    fresh: usize,
    flight: usize,
    made: usize,
    given_up: usize,
    retry: BinaryHeap<Reverse<(Instant, usize)>>,
    /// Each connection's deadline (its first attempt + patience), pushed
    /// when an attempt starts; an entry whose attempt ended is skipped.
    deadlines: BinaryHeap<Reverse<(Instant, usize)>>,
    last_error: String,
}

/// Open `count` connections to `addr`, registered with `poll` as tokens
/// `0..count` for reading and writing (the event loop's own tokens).
pub fn connect_all(
    poll: &mut Poll,
    events: &mut Events,
    addr: SocketAddr,
    count: usize,
    patience: Duration,
    recorder: &mut Recorder,
) -> Result<Vec<TcpStream>, Shortfall> {
    let mut c = Connector {
        addr,
        patience,
        slots: (0..count).map(|_| Slot::default()).collect(),
        fresh: 0,
        flight: 0,
        made: 0,
        given_up: 0,
        retry: BinaryHeap::new(),
        deadlines: BinaryHeap::new(),
        last_error: String::new(),
    };
    let short = |c: &Connector, why: String| Shortfall {
        made: c.made,
        wanted: count,
        why,
    };
    while c.made + c.given_up < count {
        if crate::interrupt::requested() {
            return Err(short(&c, "interrupted".to_owned()));
        }
        let now = Instant::now();
        c.start_attempts(poll, now, recorder);
        c.expire(poll, now, recorder);
        if c.made + c.given_up == count {
            break;
        }
        let mut wake = now + Duration::from_millis(100);
        for heap in [&c.deadlines, &c.retry] {
            if let Some(Reverse((at, _))) = heap.peek() {
                wake = wake.min(*at);
            }
        }
        match poll.poll(events, Some(wake.saturating_duration_since(now))) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(short(&c, format!("waiting for connections: {e}"))),
        }
        let now = Instant::now();
        for event in events.iter() {
            c.on_event(poll, event.token().0, now, recorder);
        }
    }
    if c.given_up > 0 {
        for slot in &mut c.slots {
            drop_attempt(poll, slot);
        }
        let why = std::mem::take(&mut c.last_error);
        return Err(short(&c, why));
    }
    Ok(c.slots.into_iter().filter_map(|s| s.stream).collect())
}

impl Connector {
    /// Start attempts, retries due first, up to the window.
    fn start_attempts(&mut self, poll: &Poll, now: Instant, recorder: &mut Recorder) {
        while self.flight < WINDOW {
            let i = match self.retry.peek() {
                Some(Reverse((at, i))) if *at <= now => {
                    let i = *i;
                    self.retry.pop();
                    i
                }
                _ if self.fresh < self.slots.len() => {
                    self.fresh += 1;
                    self.fresh - 1
                }
                _ => break,
            };
            let first = *self.slots[i].first.get_or_insert(now);
            match open(poll, self.addr, i) {
                Ok(stream) => {
                    self.slots[i].stream = Some(stream);
                    self.flight += 1;
                    self.deadlines.push(Reverse((first + self.patience, i)));
                }
                Err(why) => self.failed(i, now, &why.to_string(), recorder),
            }
        }
    }

    /// Attempts in flight past their connection's deadline give up.
    fn expire(&mut self, poll: &Poll, now: Instant, recorder: &mut Recorder) {
        while let Some(Reverse((deadline, i))) = self.deadlines.peek().copied() {
            if deadline > now {
                break;
            }
            self.deadlines.pop();
            let slot = &mut self.slots[i];
            if slot.stream.is_some() && !slot.made {
                drop_attempt(poll, slot);
                self.flight -= 1;
                self.given_up += 1;
                let why = format!(
                    "connect to {}: no answer in {:.1} s",
                    self.addr,
                    self.patience.as_secs_f64()
                );
                recorder.connect_failed(&why);
                self.last_error = why;
            }
        }
    }

    /// An event on slot `i`: its connect finished, one way or the other.
    fn on_event(&mut self, poll: &Poll, i: usize, now: Instant, recorder: &mut Recorder) {
        let Some(slot) = self.slots.get_mut(i) else {
            return;
        };
        if slot.made {
            return;
        }
        let Some(stream) = slot.stream.as_ref() else {
            return;
        };
        match outcome(stream) {
            Outcome::Pending => {}
            Outcome::Made => {
                slot.made = true;
                self.flight -= 1;
                self.made += 1;
                recorder.connected(now.saturating_duration_since(slot.first.unwrap_or(now)));
            }
            Outcome::Failed(why) => {
                drop_attempt(poll, slot);
                self.flight -= 1;
                self.failed(i, now, &why, recorder);
            }
        }
    }

    /// Attempt `i` failed: retry it after a pause, or give it up.
    fn failed(&mut self, i: usize, now: Instant, why: &str, recorder: &mut Recorder) {
        let why = format!("connect to {}: {why}", self.addr);
        recorder.connect_failed(&why);
        if give_up_or_retry(&mut self.slots[i], i, now, self.patience, &mut self.retry) {
            self.given_up += 1;
        }
        self.last_error = why;
    }
}

/// Whether the slot's connection gives up (its deadline passed);
/// otherwise its next attempt is scheduled.
fn give_up_or_retry(
    slot: &mut Slot,
    i: usize,
    now: Instant,
    patience: Duration,
    retry: &mut BinaryHeap<Reverse<(Instant, usize)>>,
) -> bool {
    slot.failures += 1;
    let first = slot.first.unwrap_or(now);
    let pause = FIRST_PAUSE
        .saturating_mul(1 << slot.failures.min(16).saturating_sub(1))
        .min(MAX_PAUSE);
    if now.saturating_duration_since(first) + pause >= patience {
        return true;
    }
    retry.push(Reverse((now + pause, i)));
    false
}

fn drop_attempt(poll: &Poll, slot: &mut Slot) {
    if let Some(mut stream) = slot.stream.take() {
        let _ = poll.registry().deregister(&mut stream);
    }
}

/// Start a non-blocking connect, registered as token `i`.
fn open(poll: &Poll, addr: SocketAddr, i: usize) -> io::Result<TcpStream> {
    let mut stream = TcpStream::connect(addr)?;
    stream.set_nodelay(true)?;
    poll.registry().register(
        &mut stream,
        Token(i),
        Interest::READABLE | Interest::WRITABLE,
    )?;
    Ok(stream)
}

enum Outcome {
    Pending,
    Made,
    Failed(String),
}

/// Where a non-blocking connect stands after an event on it.
fn outcome(stream: &TcpStream) -> Outcome {
    match stream.take_error() {
        Ok(Some(e)) | Err(e) => return Outcome::Failed(e.to_string()),
        Ok(None) => {}
    }
    match stream.peer_addr() {
        Ok(_) => Outcome::Made,
        Err(e) if e.kind() == io::ErrorKind::NotConnected => Outcome::Pending,
        Err(e) => Outcome::Failed(e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recorder() -> Recorder {
        Recorder::new(Instant::now(), Duration::from_secs(1))
    }

    /// More connections than the window: all made and each timed, none
    /// counted as a request.
    #[test]
    fn every_connection_is_made_and_timed_past_the_window() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let accepting = std::thread::spawn(move || {
            let mut kept = Vec::new();
            for _ in 0..300 {
                kept.push(listener.accept().unwrap().0);
            }
            kept
        });
        let mut poll = Poll::new().unwrap();
        let mut events = Events::with_capacity(256);
        let mut rec = recorder();
        let streams = connect_all(
            &mut poll,
            &mut events,
            addr,
            300,
            Duration::from_secs(10),
            &mut rec,
        )
        .unwrap();
        assert_eq!(streams.len(), 300);
        let summary = rec.summary(Some(Duration::from_secs(1)), None);
        let connects = summary.connects.unwrap();
        assert_eq!(connects.made, 300);
        assert_eq!(summary.errors, 0, "connects are not requests");
        assert_eq!(accepting.join().unwrap().len(), 300);
    }

    /// Nothing listens: every attempt is refused, retried with pauses,
    /// and given up at the deadline with how many were made.
    #[test]
    fn refused_connections_are_retried_then_named_with_the_count_made() {
        let addr = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap()
        };
        let mut poll = Poll::new().unwrap();
        let mut events = Events::with_capacity(64);
        let mut rec = recorder();
        let started = Instant::now();
        let shortfall = connect_all(
            &mut poll,
            &mut events,
            addr,
            3,
            Duration::from_millis(300),
            &mut rec,
        )
        .unwrap_err();
        assert!(started.elapsed() < Duration::from_secs(5));
        assert_eq!((shortfall.made, shortfall.wanted), (0, 3));
        assert!(shortfall.why.contains("refused"), "{}", shortfall.why);
        let connects = rec.summary(None, None).connects.unwrap();
        // 10 + 20 + 40 + 80 ms of pauses fit in 300 ms: several attempts each.
        assert!(connects.failed_attempts >= 3 * 3, "{connects:?}");
        assert_eq!(connects.made, 0);
    }
}
