//! Connections before the clock, for the event loop: each thread opens
//! its share without blocking, at most [`WINDOW`] connects in flight at a
//! time (a burst of thousands would overflow the server's listen backlog,
//! 511 for Redis, and every SYN it drops costs a second), and retries a
//! refused or failed one with a growing pause until `patience` after its
//! first attempt.
//!
//! A connection counts only once the server has answered on it: a
//! connect that completes sends the protocol's probe (Redis `PING`,
//! memcached `version`; for HTTP the load's first request, uncounted) and
//! waits for its answer. A full listen backlog can drop the handshake's
//! last ACK after the server's SYN-ACK (a SYN cookie) was answered: the
//! client holds a connection the server knows nothing of, and its first
//! request would retransmit with exponential backoff inside the measured
//! window, a client fewer than asked for. A probe the server has not
//! even acknowledged after [`probe_wait`] (well under the timeout) marks
//! such a connection: it is closed and made again, a failed attempt like
//! a refused one. A probe acknowledged but not yet answered is a slow
//! server, and is waited for up to the connection's deadline. How long
//! each connection took, probe included, and the attempts that failed go
//! to the recorder; they are not requests.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io::{self, Read as _, Write as _};
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use mio::net::TcpStream;
use mio::{Events, Interest, Poll, Token};

use super::protocol::{Protocol, Reply};
use super::recorder::Recorder;

/// Connects in flight at once, per thread.
pub const WINDOW: usize = 128;

/// The first pause after a failed attempt; each further one doubles it,
/// up to [`MAX_PAUSE`].
const FIRST_PAUSE: Duration = Duration::from_millis(10);
const MAX_PAUSE: Duration = Duration::from_millis(500);

/// How long a probe may go unacknowledged before its connection is taken
/// for one the server never held: a tenth of the load's timeout, between
/// 50 and 500 ms. Loopback acknowledges data within microseconds, and a
/// lost segment is first sent again after 200 ms (Linux's minimum
/// retransmission timeout), so a connection the server merely accepted
/// late is confirmed by then.
pub fn probe_wait(timeout: Duration) -> Duration {
    (timeout / 10).clamp(Duration::from_millis(50), Duration::from_millis(500))
}

/// The exchange that confirms a connection: `request` sent, any reply of
/// `protocol` back. `what` names it in messages (`PING`).
pub struct Probe<'a> {
    pub request: &'a [u8],
    pub protocol: &'a dyn Protocol,
    pub what: &'a str,
}

/// One thread's connections to make: `count` to `addr`, each within
/// `patience` of its first attempt, each confirmed by `probe`.
pub struct Wanted<'a> {
    pub addr: SocketAddr,
    pub count: usize,
    pub patience: Duration,
    pub probe: Probe<'a>,
}

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
    /// Attempts started, so a stale probe timer is told from the current one.
    attempt: u32,
    /// The connect completed and the probe is out, not yet answered.
    probing: Option<Probing>,
    /// The server answered the probe.
    made: bool,
}

/// A probe on its way: bytes written so far, the answer read so far.
struct Probing {
    written: usize,
    reply: Vec<u8>,
}

/// What became of a probe after an event.
enum Answer {
    Waiting,
    Answered,
    /// Answered by a reply that ran to the close ([`Reply::UntilClose`]):
    /// the server answers, and the connection is gone.
    AnsweredAndClosed,
    Failed(String),
}

type Timers = BinaryHeap<Reverse<(Instant, usize, u32)>>;

/// One thread's connection phase.
struct Connector<'a> {
    wanted: &'a Wanted<'a>,
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
    /// When each probe out must have been acknowledged, by attempt.
    probes: Timers,
    last_error: String,
}

/// Open `wanted.count` connections, registered with `poll` as tokens
/// `0..count` for reading and writing (the event loop's own tokens), each
/// confirmed by an answer to the probe; `None` for one the server closed
/// with its answer (a reply that runs to the close), to be made again.
pub fn connect_all(
    poll: &mut Poll,
    events: &mut Events,
    wanted: &Wanted<'_>,
    recorder: &mut Recorder,
) -> Result<Vec<Option<TcpStream>>, Shortfall> {
    let count = wanted.count;
    let mut c = Connector {
        wanted,
        slots: (0..count).map(|_| Slot::default()).collect(),
        fresh: 0,
        flight: 0,
        made: 0,
        given_up: 0,
        retry: BinaryHeap::new(),
        deadlines: BinaryHeap::new(),
        probes: BinaryHeap::new(),
        last_error: String::new(),
    };
    let short = |c: &Connector, why: String| Shortfall {
        made: c.made,
        wanted: count,
        why,
    };
    while c.made + c.given_up < count {
        if afterburner_leaves::interrupt::requested() {
            return Err(short(&c, "interrupted".to_owned()));
        }
        let now = Instant::now();
        c.start_attempts(poll, now, recorder);
        c.expire(poll, now, recorder);
        c.check_probes(poll, now, recorder);
        if c.made + c.given_up == count {
            break;
        }
        let mut wake = now + Duration::from_millis(100);
        for heap in [&c.deadlines, &c.retry] {
            if let Some(Reverse((at, _))) = heap.peek() {
                wake = wake.min(*at);
            }
        }
        if let Some(Reverse((at, ..))) = c.probes.peek() {
            wake = wake.min(*at);
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
    Ok(c.slots.into_iter().map(|s| s.stream).collect())
}

impl Connector<'_> {
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
            self.slots[i].attempt += 1;
            match open(poll, self.wanted.addr, i) {
                Ok(stream) => {
                    self.slots[i].stream = Some(stream);
                    self.flight += 1;
                    self.deadlines
                        .push(Reverse((first + self.wanted.patience, i)));
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
                let waited = if slot.probing.is_some() {
                    format!("no answer to {}", self.wanted.probe.what)
                } else {
                    "no answer".to_owned()
                };
                drop_attempt(poll, slot);
                self.flight -= 1;
                self.given_up += 1;
                let why = format!(
                    "connect to {}: {waited} in {:.1} s",
                    self.wanted.addr,
                    self.wanted.patience.as_secs_f64()
                );
                recorder.connect_failed(&why);
                self.last_error = why;
            }
        }
    }

    /// Probes unacknowledged after [`probe_wait`]: the server never held
    /// their connection; each is closed and made again.
    fn check_probes(&mut self, poll: &Poll, now: Instant, recorder: &mut Recorder) {
        while let Some(Reverse((at, i, attempt))) = self.probes.peek().copied() {
            if at > now {
                break;
            }
            self.probes.pop();
            let slot = &mut self.slots[i];
            let (Some(stream), Some(probing)) = (slot.stream.as_ref(), slot.probing.as_ref())
            else {
                continue;
            };
            if slot.attempt != attempt || slot.made {
                continue;
            }
            let sent = probing.written == self.wanted.probe.request.len();
            if sent && unacknowledged(stream) == Some(0) {
                // Taken by the server, not answered yet: a slow server,
                // waited for until the deadline.
                continue;
            }
            drop_attempt(poll, slot);
            self.flight -= 1;
            let why = format!(
                "the server did not take {} within {} ms (the connection was up on this side only: a full listen backlog drops a handshake's last ACK)",
                self.wanted.probe.what,
                probe_wait(self.wanted.patience).as_millis()
            );
            self.failed(i, now, &why, recorder);
        }
    }

    /// An event on slot `i`: its connect finished, or its probe moved on.
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
        if slot.probing.is_none() {
            match outcome(stream) {
                Connecting::Pending => return,
                Connecting::Made => {
                    slot.probing = Some(Probing {
                        written: 0,
                        reply: Vec::new(),
                    });
                    let wait = probe_wait(self.wanted.patience);
                    self.probes.push(Reverse((now + wait, i, slot.attempt)));
                }
                Connecting::Failed(why) => {
                    drop_attempt(poll, slot);
                    self.flight -= 1;
                    self.failed(i, now, &why, recorder);
                    return;
                }
            }
        }
        let answer = probe(slot, &self.wanted.probe);
        match answer {
            Answer::Waiting => {}
            Answer::Answered | Answer::AnsweredAndClosed => {
                if matches!(answer, Answer::AnsweredAndClosed) {
                    drop_attempt(poll, slot);
                }
                slot.probing = None;
                slot.made = true;
                self.flight -= 1;
                self.made += 1;
                recorder.connected(now.saturating_duration_since(slot.first.unwrap_or(now)));
            }
            Answer::Failed(why) => {
                drop_attempt(poll, slot);
                self.flight -= 1;
                self.failed(i, now, &why, recorder);
            }
        }
    }

    /// Attempt `i` failed: retry it after a pause, or give it up.
    fn failed(&mut self, i: usize, now: Instant, why: &str, recorder: &mut Recorder) {
        let why = format!("connect to {}: {why}", self.wanted.addr);
        recorder.connect_failed(&why);
        let slot = &mut self.slots[i];
        slot.probing = None;
        if give_up_or_retry(slot, i, now, self.wanted.patience, &mut self.retry) {
            self.given_up += 1;
        }
        self.last_error = why;
    }
}

/// Write what is left of the probe and read what came back: answered once
/// the bytes hold a whole reply of the protocol (or bytes that are none:
/// the server answered, and the load's requests will say what is wrong);
/// a reply that runs to the close is whole when the server closes.
fn probe(slot: &mut Slot, probe: &Probe<'_>) -> Answer {
    let (Some(stream), Some(probing)) = (slot.stream.as_mut(), slot.probing.as_mut()) else {
        return Answer::Waiting;
    };
    while probing.written < probe.request.len() {
        match stream.write(&probe.request[probing.written..]) {
            Ok(0) => {
                return Answer::Failed(format!("writing {}: the connection closed", probe.what))
            }
            Ok(n) => probing.written += n,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Answer::Failed(format!("writing {}: {e}", probe.what)),
        }
    }
    let mut buf = [0u8; 4096];
    loop {
        match stream.read(&mut buf) {
            Ok(0) => {
                if let Ok(Reply::UntilClose { .. }) = probe.protocol.parse(&probing.reply) {
                    return Answer::AnsweredAndClosed;
                }
                return Answer::Failed(format!(
                    "the server closed the connection before answering {}",
                    probe.what
                ));
            }
            Ok(n) => probing.reply.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Answer::Failed(format!("reading the answer to {}: {e}", probe.what)),
        }
    }
    if probing.reply.is_empty() {
        return Answer::Waiting;
    }
    match probe.protocol.parse(&probing.reply) {
        Ok(Reply::Incomplete | Reply::UntilClose { .. }) => Answer::Waiting,
        Ok(_) | Err(_) => Answer::Answered,
    }
}

/// Bytes sent on `stream` that its peer has not acknowledged (`SIOCOUTQ`);
/// `None` where the kernel does not say.
fn unacknowledged(stream: &TcpStream) -> Option<usize> {
    use std::os::fd::AsRawFd as _;
    let mut queued: libc::c_int = 0;
    // SAFETY: TIOCOUTQ (SIOCOUTQ for TCP) writes one int, the bytes in the
    // socket's send queue not yet acknowledged, into `queued`.
    let rc = unsafe { libc::ioctl(stream.as_raw_fd(), libc::TIOCOUTQ, &raw mut queued) };
    if rc == 0 {
        usize::try_from(queued).ok()
    } else {
        None
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
    slot.probing = None;
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

enum Connecting {
    Pending,
    Made,
    Failed(String),
}

/// Where a non-blocking connect stands after an event on it.
fn outcome(stream: &TcpStream) -> Connecting {
    match stream.take_error() {
        Ok(Some(e)) | Err(e) => return Connecting::Failed(e.to_string()),
        Ok(None) => {}
    }
    match stream.peer_addr() {
        Ok(_) => Connecting::Made,
        Err(e) if e.kind() == io::ErrorKind::NotConnected => Connecting::Pending,
        Err(e) => Connecting::Failed(e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use std::io::{Read as _, Write as _};

    use super::*;
    use crate::drivers::memcached::Memcached;

    fn recorder() -> Recorder {
        Recorder::new(Instant::now(), Duration::from_secs(1))
    }

    fn wanted(addr: SocketAddr, count: usize, patience: Duration) -> Wanted<'static> {
        Wanted {
            addr,
            count,
            patience,
            probe: Probe {
                request: b"version\r\n",
                protocol: &Memcached,
                what: "version",
            },
        }
    }

    /// More connections than the window: all made, each confirmed by the
    /// server's answer to the probe and timed, none counted as a request.
    #[test]
    fn every_connection_is_made_answered_and_timed_past_the_window() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let accepting = std::thread::spawn(move || {
            let mut kept = Vec::new();
            for _ in 0..300 {
                let mut stream = listener.accept().unwrap().0;
                let mut probe = [0u8; 9];
                stream.read_exact(&mut probe).unwrap();
                assert_eq!(&probe, b"version\r\n");
                stream.write_all(b"VERSION 1.6\r\n").unwrap();
                kept.push(stream);
            }
            kept
        });
        let mut poll = Poll::new().unwrap();
        let mut events = Events::with_capacity(256);
        let mut rec = recorder();
        let wanted = wanted(addr, 300, Duration::from_secs(10));
        let streams = connect_all(&mut poll, &mut events, &wanted, &mut rec).unwrap();
        assert_eq!(streams.iter().flatten().count(), 300);
        let summary = rec.summary(Some(Duration::from_secs(1)), None);
        let connects = summary.connects.unwrap();
        assert_eq!((connects.made, connects.failed_attempts), (300, 0));
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
        let wanted = wanted(addr, 3, Duration::from_millis(300));
        let shortfall = connect_all(&mut poll, &mut events, &wanted, &mut rec).unwrap_err();
        assert!(started.elapsed() < Duration::from_secs(5));
        assert_eq!((shortfall.made, shortfall.wanted), (0, 3));
        assert!(shortfall.why.contains("refused"), "{}", shortfall.why);
        let connects = rec.summary(None, None).connects.unwrap();
        // 10 + 20 + 40 + 80 ms of pauses fit in 300 ms: several attempts each.
        assert!(connects.failed_attempts >= 3 * 3, "{connects:?}");
        assert_eq!(connects.made, 0);
    }

    /// A server that holds the connections (the kernel completes them and
    /// acknowledges the probe in its accept queue) and never answers: a
    /// slow server, waited for until the deadline, not reconnected; then
    /// no connection counts, and the reason names the probe.
    #[test]
    fn a_connection_whose_probe_is_never_answered_does_not_count() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let mut poll = Poll::new().unwrap();
        let mut events = Events::with_capacity(64);
        let mut rec = recorder();
        let started = Instant::now();
        let wanted = wanted(addr, 2, Duration::from_millis(600));
        let shortfall = connect_all(&mut poll, &mut events, &wanted, &mut rec).unwrap_err();
        assert!(started.elapsed() < Duration::from_secs(5));
        assert_eq!((shortfall.made, shortfall.wanted), (0, 2));
        assert!(
            shortfall.why.contains("no answer to version in 0.6 s"),
            "{}",
            shortfall.why
        );
        let connects = rec.summary(None, None).connects.unwrap();
        // Acknowledged probes are waited for: one attempt each, given up.
        assert_eq!((connects.made, connects.failed_attempts), (0, 2));
        drop(listener);
    }

    #[test]
    fn the_probe_waits_a_tenth_of_the_timeout_within_bounds() {
        assert_eq!(
            probe_wait(Duration::from_secs(5)),
            Duration::from_millis(500)
        );
        assert_eq!(
            probe_wait(Duration::from_mins(1)),
            Duration::from_millis(500)
        );
        assert_eq!(
            probe_wait(Duration::from_secs(1)),
            Duration::from_millis(100)
        );
        assert_eq!(
            probe_wait(Duration::from_millis(1)),
            Duration::from_millis(50)
        );
    }
}
