//! The event loop for stream protocols (redis, memcached, http): each
//! thread drives its share of the connections with `mio` (epoll), like
//! wrk and redis-benchmark, so thousands of clients cost one thread each
//! core rather than one each.
//!
//! Open-loop (`rate`) requests are scheduled per connection at fixed
//! intended times and their latency is measured from that time, not from
//! when the request could be sent (wrk2's correction for coordinated
//! omission): a stalled server shows its stall in the tail.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::io::{self, Read, Write};
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result};
use mio::net::TcpStream;
use mio::{Events, Interest, Poll, Token};

use super::connect;
use super::failure::Failure;
use super::gate::{Arrival, Gate};
use super::protocol::{Protocol, Reply};
use super::recorder::{Recorder, Tallied};
use super::share::{Pace, Share};
use crate::request::Generator;
use afterburner_leaves::rng::Rng;

/// How long a failed connection waits before trying again.
const RECONNECT_AFTER: Duration = Duration::from_millis(100);

/// The token of the schedule's timer; connections use their index.
const TIMER: Token = Token(usize::MAX);

/// A `timerfd` in the poll set: epoll's own timeout has millisecond
/// resolution, which would add up to 1 ms to every open-loop request's
/// latency (measured from its intended start). The timer wakes the loop
/// within microseconds of the next due request.
struct Timer {
    fd: std::os::fd::OwnedFd,
    armed: Option<Instant>,
}

impl Timer {
    fn new(poll: &Poll) -> io::Result<Self> {
        use std::os::fd::{AsRawFd, FromRawFd};
        // SAFETY: timerfd_create takes a clock id and flags, returns an fd or -1.
        let raw = unsafe {
            libc::timerfd_create(
                libc::CLOCK_MONOTONIC,
                libc::TFD_NONBLOCK | libc::TFD_CLOEXEC,
            )
        };
        if raw < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: the fd was just created and nothing else owns it.
        let fd = unsafe { std::os::fd::OwnedFd::from_raw_fd(raw) };
        poll.registry().register(
            &mut mio::unix::SourceFd(&fd.as_raw_fd()),
            TIMER,
            Interest::READABLE,
        )?;
        Ok(Self { fd, armed: None })
    }

    /// Fire at `when` (re-arming only when it changed).
    fn arm(&mut self, when: Instant, now: Instant) -> io::Result<()> {
        use std::os::fd::AsRawFd;
        if self.armed == Some(when) {
            return Ok(());
        }
        // A zero value would disarm the timer: fire after 1 ns instead.
        let after = when
            .saturating_duration_since(now)
            .max(Duration::from_nanos(1));
        let spec = libc::itimerspec {
            it_interval: libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            },
            it_value: libc::timespec {
                tv_sec: libc::time_t::try_from(after.as_secs()).unwrap_or(libc::time_t::MAX),
                tv_nsec: libc::c_long::from(after.subsec_nanos()),
            },
        };
        // SAFETY: a valid fd and a valid itimerspec; the old value is not wanted.
        let rc = unsafe {
            libc::timerfd_settime(
                self.fd.as_raw_fd(),
                0,
                &raw const spec,
                std::ptr::null_mut(),
            )
        };
        if rc < 0 {
            return Err(io::Error::last_os_error());
        }
        self.armed = Some(when);
        Ok(())
    }

    /// Consume the expiry, so the edge-triggered poll reports the next one.
    fn clear(&mut self) {
        use std::os::fd::AsRawFd;
        let mut count = [0u8; 8];
        // SAFETY: reads at most 8 bytes into an 8-byte buffer.
        let _ = unsafe { libc::read(self.fd.as_raw_fd(), count.as_mut_ptr().cast(), 8) };
        self.armed = None;
    }
}

/// A request in flight.
#[derive(Debug, Clone, Copy)]
struct Pending {
    /// Its (intended) start.
    start: Instant,
    /// How many keys it looks up ([`Protocol::lookups`]).
    lookups: u32,
    /// Which request of the mix it is.
    template: u32,
}

/// Bytes read from a connection and not yet parsed: `buf[start..end]`,
/// the start of a reply whose end has not arrived. Most reads end on a
/// reply's end: they go into the thread's scratch buffer and are parsed
/// there, and only a partial reply's bytes are kept here; further reads
/// for it go straight into `buf[end..]`. Emptied, it gives its memory
/// back, so an idle connection costs no buffer.
struct Inbox {
    buf: Vec<u8>,
    start: usize,
    end: usize,
}

/// An inbox's first size: room for dozens of short replies; a longer one
/// grows it.
const INBOX: usize = 4096;

/// An inbox grows to this to read a backlog in fewer, bigger reads.
const WIDE_INBOX: usize = 64 * 1024;

impl Inbox {
    fn new() -> Self {
        Self {
            buf: Vec::new(),
            start: 0,
            end: 0,
        }
    }

    fn clear(&mut self) {
        self.start = 0;
        self.end = 0;
    }

    /// Room to read into, at least a quarter of the buffer: unparsed
    /// bytes move to the front, or the buffer doubles when they fill it.
    fn space(&mut self) -> &mut [u8] {
        if self.start == self.end {
            self.clear();
        }
        if self.buf.len() - self.end < self.buf.len() / 4 || self.buf.is_empty() {
            if self.start > 0 {
                self.buf.copy_within(self.start..self.end, 0);
                self.end -= self.start;
                self.start = 0;
            }
            if self.buf.len() - self.end < self.buf.len() / 4 || self.buf.is_empty() {
                let grown = (self.buf.len() * 2).max(INBOX);
                self.buf.resize(grown, 0);
            }
        }
        &mut self.buf[self.end..]
    }

    /// Whether a partial reply waits here.
    fn holds(&self) -> bool {
        self.start < self.end
    }

    /// Keep `bytes`, the start of a reply, in place of nothing.
    fn keep(&mut self, bytes: &[u8]) {
        self.clear();
        let _ = self.space();
        if self.buf.len() < bytes.len() {
            self.buf.resize(bytes.len().next_power_of_two(), 0);
        }
        self.buf[..bytes.len()].copy_from_slice(bytes);
        self.end = bytes.len();
    }

    /// Give the buffer back once everything in it was parsed.
    fn release_if_empty(&mut self) {
        if !self.holds() {
            *self = Self::new();
        }
    }

    /// A read filled all the room it had: double the buffer (up to
    /// [`WIDE_INBOX`]) so a backlog takes fewer reads.
    fn widen(&mut self) {
        if self.buf.len() < WIDE_INBOX {
            self.buf.resize((self.buf.len() * 2).min(WIDE_INBOX), 0);
        }
    }
}

struct Conn {
    stream: Option<TcpStream>,
    /// Requests encoded and not yet written; empty (no allocation) while
    /// the connection is idle, so an idle connection costs its struct.
    out: Vec<u8>,
    written: usize,
    input: Inbox,
    /// Each request in flight, oldest first.
    inflight: VecDeque<Pending>,
    /// Open loop: the intended start of this connection's next request.
    due: Instant,
    /// Open loop: this connection's draws of its gaps.
    draws: Rng,
    /// Rate model: a request is due but the connection's pipeline is full;
    /// its next reply schedules it again.
    stalled: bool,
    /// Counted requests answered successfully on this client (over its
    /// reconnections).
    answered: u64,
    /// The oldest request's reply runs to the close ([`Reply::UntilClose`]):
    /// its body is read and dropped, and the request counted when the
    /// server closes; `Err` holds the status line of a failure.
    until_close: Option<Result<(), Box<str>>>,
}

/// How a read left the connection.
#[derive(Debug, PartialEq, Eq)]
enum Stream {
    Open,
    /// The server closed it, ending a reply that ran to the close.
    Closed,
}

/// Due times (rate model) and reconnect times, soonest first.
type Schedule = BinaryHeap<Reverse<(Instant, usize)>>;

/// One thread's loop: its connections and what is due on them. Work per
/// wakeup is proportional to the events and the requests due, not to the
/// number of connections: a closed loop sends on the connection whose
/// reply just arrived, an open loop keeps each connection's next due
/// time in a heap, reconnects wait in a heap, and timeouts are found by
/// a sweep every [`sweep_every`] (one pass over the connections per
/// sweep, not per event).
struct Driver<'a> {
    protocol: &'a dyn Protocol,
    generator: Generator,
    share: &'a Share,
    poll: Poll,
    recorder: Recorder,
    conns: Vec<Conn>,
    addr: SocketAddr,
    end: Option<Instant>,
    remaining: Option<u64>,
    /// Requests in flight over every connection.
    inflight: usize,
    /// Connections up.
    up: usize,
    due: Schedule,
    reconnect: Schedule,
    /// Closed loop: connections that may send (a reply came, or they
    /// just connected).
    ready: Vec<usize>,
    last_error: String,
    /// Where reads land and replies are parsed, shared by the thread's
    /// connections.
    scratch: Vec<u8>,
}

/// How often in-flight requests are checked against the timeout: a tenth
/// of it, between 1 and 100 ms.
fn sweep_every(timeout: Duration) -> Duration {
    (timeout / 10).clamp(Duration::from_millis(1), Duration::from_millis(100))
}

/// How long a thread waits for the others to connect.
const GATE_PATIENCE: Duration = Duration::from_mins(10);

/// Drive `share` of the load against `addr` until it is done: connect
/// every client first, then wait at `gate` for the other threads, whose
/// clock gives the start, the end of the warmup and the end.
pub fn run(
    protocol: &dyn Protocol,
    generator: Generator,
    addr: SocketAddr,
    share: &Share,
    gate: &Gate,
    mut recorder: Recorder,
) -> Result<Recorder> {
    let mut poll = Poll::new().context("creating an epoll instance")?;
    let mut events = Events::with_capacity(1024);
    // Each connection is confirmed by an answer before the clock: to the
    // protocol's probe, else to this thread's first request (a copy of the
    // generator draws it, so the counted sequence is the same).
    let mut first = Vec::new();
    let (what, request) = protocol.probe().unwrap_or_else(|| {
        protocol.encode(generator.clone().next_request(), &mut first);
        ("the load's first request", &first[..])
    });
    let wanted = connect::Wanted {
        addr,
        count: share.clients,
        patience: share.timeout,
        probe: connect::Probe {
            request,
            protocol,
            what,
        },
    };
    let connected = connect::connect_all(&mut poll, &mut events, &wanted, &mut recorder);
    let (streams, arrival) = match connected {
        Ok(streams) => (
            streams,
            Arrival {
                made: share.clients,
                wanted: share.clients,
                why: None,
                fatal: false,
            },
        ),
        Err(short) => (
            Vec::new(),
            Arrival {
                made: short.made,
                wanted: short.wanted,
                why: Some(short.why),
                fatal: false,
            },
        ),
    };
    let clock = gate.arrive(arrival, GATE_PATIENCE)?;
    recorder.begin(clock.from);
    let conns = streams
        .into_iter()
        .enumerate()
        .map(|(i, stream)| {
            let mut draws = share.draws(i);
            let first = match share.pace {
                Pace::Open { per_conn, arrivals } => {
                    arrivals.first(share.offset(i), per_conn, &mut draws)
                }
                Pace::Closed => share.offset(i),
            };
            Conn {
                stream,
                out: Vec::new(),
                written: 0,
                input: Inbox::new(),
                inflight: VecDeque::new(),
                due: clock.start + first,
                draws,
                stalled: false,
                answered: 0,
                until_close: None,
            }
        })
        .collect::<Vec<_>>();
    // A connection its probe's answer closed is made again as the clock
    // starts.
    let closed: Vec<usize> = (0..conns.len())
        .filter(|&i| conns[i].stream.is_none())
        .collect();
    let up = conns.len() - closed.len();
    let mut driver = Driver {
        protocol,
        generator,
        share,
        poll,
        recorder,
        conns,
        addr,
        end: clock.end,
        remaining: share.requests,
        inflight: 0,
        up,
        due: BinaryHeap::new(),
        reconnect: closed.iter().map(|&i| Reverse((clock.start, i))).collect(),
        ready: Vec::new(),
        last_error: String::new(),
        scratch: vec![0; WIDE_INBOX],
    };
    driver.drive(clock.start, &mut events)?;
    let answered: Vec<u64> = driver.conns.iter().map(|c| c.answered).collect();
    driver.recorder.clients(answered);
    Ok(driver.recorder)
}

impl Driver<'_> {
    fn open_loop(&self) -> bool {
        matches!(self.share.pace, Pace::Open { .. })
    }

    fn issuing(&self, now: Instant) -> bool {
        self.end.is_none_or(|end| now < end) && self.remaining != Some(0)
    }

    #[allow(clippy::too_many_lines)]
    fn drive(&mut self, start: Instant, events: &mut Events) -> Result<()> {
        let mut timer = if self.open_loop() {
            Some(Timer::new(&self.poll).context("creating a timerfd")?)
        } else {
            None
        };
        for i in 0..self.conns.len() {
            if self.open_loop() {
                self.due.push(Reverse((self.conns[i].due, i)));
            } else {
                self.ready.push(i);
            }
        }
        let sweep = sweep_every(self.share.timeout);
        let mut next_sweep = start + sweep;
        // A closed loop sends nothing while every connection is down, so a
        // count-bounded one against a dead server would never end.
        let mut all_down_since: Option<Instant> = None;
        // Every thread starts its schedule at the same instant.
        std::thread::sleep(start.saturating_duration_since(Instant::now()));
        loop {
            afterburner_leaves::interrupt::check()?;
            let now = Instant::now();
            self.reconnect_due(now);
            if self.open_loop() {
                while let Some(Reverse((at, i))) = self.due.peek().copied() {
                    if at > now {
                        break;
                    }
                    self.due.pop();
                    self.send_due(i, now);
                }
            } else if self.issuing(now) {
                while let Some(i) = self.ready.pop() {
                    self.send_closed(i, now);
                }
            }
            if now >= next_sweep {
                self.sweep_timeouts(now);
                next_sweep = now + sweep;
            }
            let issuing = self.issuing(now);
            if !issuing && !self.owes_counted_replies() {
                break;
            }
            if !self.open_loop() && self.up == 0 {
                let since = *all_down_since.get_or_insert(now);
                let patience = self.share.timeout.max(Duration::from_secs(1));
                if now.saturating_duration_since(since) >= patience {
                    anyhow::bail!(
                        "no connection to the server for {:.1} s (last error: {})",
                        patience.as_secs_f64(),
                        if self.last_error.is_empty() {
                            "none"
                        } else {
                            &self.last_error
                        }
                    );
                }
            } else {
                all_down_since = None;
            }
            // Sleep until the next event or the next thing due.
            let mut wake = (now + Duration::from_millis(100)).min(next_sweep);
            if let Some(Reverse((at, _))) = self.reconnect.peek() {
                wake = wake.min(*at);
            }
            if issuing {
                if let Some(Reverse((at, _))) = self.due.peek() {
                    wake = wake.min(*at);
                }
                if let Some(end) = self.end {
                    wake = wake.min(end);
                }
            }
            let mut timeout = wake.saturating_duration_since(now);
            if let Some(timer) = timer.as_mut() {
                timer.arm(wake, now).context("arming the timerfd")?;
                // epoll's own timeout is only a backstop now.
                timeout += Duration::from_millis(5);
            }
            match self.poll.poll(events, Some(timeout)) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e).context("waiting for replies"),
            }
            for event in events.iter() {
                if event.token() == TIMER {
                    if let Some(timer) = timer.as_mut() {
                        timer.clear();
                    }
                    continue;
                }
                self.on_event(event);
            }
        }
        Ok(())
    }

    fn on_event(&mut self, event: &mio::event::Event) {
        let i = event.token().0;
        let Some(conn) = self.conns.get_mut(i) else {
            return;
        };
        if conn.stream.is_none() {
            return;
        }
        if event.is_writable() {
            if let Err(error) = flush(conn, &mut self.recorder, Instant::now()) {
                self.fail(
                    i,
                    Instant::now(),
                    &Failure::Connection(format!("write: {error}")),
                );
                return;
            }
        }
        let closing = event.is_read_closed() || event.is_error();
        if event.is_readable() || closing {
            let before = conn.inflight.len();
            let read = read_replies(
                conn,
                self.protocol,
                closing,
                &mut self.recorder,
                &mut self.scratch,
            );
            let answered = before - conn.inflight.len();
            self.inflight -= answered;
            match read {
                Err(why) => {
                    self.fail(i, Instant::now(), &why);
                    return;
                }
                Ok(Stream::Closed) => {
                    // Made again at once: a server that closes after each
                    // reply (HTTP/1.0) is not paced by the pause a broken
                    // connection waits.
                    let now = Instant::now();
                    self.drop_inflight(
                        i,
                        now,
                        &Failure::Connection(
                            "the server closed the connection after a reply that ran to its close"
                                .to_owned(),
                        ),
                    );
                    self.down(i, now);
                    return;
                }
                Ok(Stream::Open) => {}
            }
            if answered > 0 {
                let open_loop = self.open_loop();
                let conn = &mut self.conns[i];
                if open_loop {
                    if conn.stalled {
                        conn.stalled = false;
                        self.due.push(Reverse((conn.due, i)));
                    }
                } else {
                    // The next request goes out at once, before the other
                    // ready connections are read: the server has work while
                    // the client reads on (sending after the whole batch is
                    // read leaves a server on another core idle meanwhile).
                    let now = Instant::now();
                    if self.issuing(now) {
                        self.send_closed(i, now);
                    }
                }
            }
        }
    }

    /// Whether a request the results count still waits for its reply. Once
    /// nothing more is sent, requests of the warmup are not waited for: a
    /// connection the server never accepted (its full listen backlog
    /// dropped the handshake's last ACK, so only the client thinks it is
    /// up) would hold the load until its timeout for a reply no figure
    /// uses. Each connection's requests are in order, so its newest tells.
    fn owes_counted_replies(&self) -> bool {
        self.inflight > 0
            && self.conns.iter().any(|c| {
                c.inflight
                    .back()
                    .is_some_and(|p| self.recorder.counts(p.start))
            })
    }

    /// Closed loop: fill connection `i`'s pipeline.
    fn send_closed(&mut self, i: usize, now: Instant) {
        let depth = self.share.depth;
        let mut sent = false;
        while self.conns[i].stream.is_some()
            && self.conns[i].inflight.len() < depth
            && self.remaining != Some(0)
        {
            if self.recorder.counts(now) {
                if let Some(r) = self.remaining.as_mut() {
                    *r -= 1;
                }
            }
            self.encode(i, now);
            sent = true;
        }
        if sent {
            self.flush_or_fail(i, now);
        }
    }

    /// Open loop: send every request of connection `i` due by `now`, then
    /// schedule its next one (or stall it until a reply frees its pipeline).
    fn send_due(&mut self, i: usize, now: Instant) {
        let Pace::Open { per_conn, arrivals } = self.share.pace else {
            return;
        };
        let mut sent = false;
        loop {
            let due = self.conns[i].due;
            if due > now || self.end.is_some_and(|end| due >= end) {
                break;
            }
            if self.conns[i].stream.is_some() && self.conns[i].inflight.len() >= self.share.depth {
                self.conns[i].stalled = true;
                break;
            }
            let conn = &mut self.conns[i];
            conn.due += arrivals.next(per_conn, &mut conn.draws);
            if self.recorder.counts(due) {
                if let Some(r) = self.remaining.as_mut() {
                    *r = r.saturating_sub(1);
                }
            }
            if self.conns[i].stream.is_none() {
                // No connection: a due request fails now rather than
                // vanishing from the schedule.
                self.recorder.error(
                    due,
                    now,
                    &Failure::Connection("no connection to the server".to_owned()),
                );
                continue;
            }
            self.encode(i, due);
            sent = true;
        }
        if sent {
            self.flush_or_fail(i, now);
        }
        let conn = &self.conns[i];
        if !conn.stalled && self.end.is_none_or(|end| conn.due < end) {
            self.due.push(Reverse((conn.due, i)));
        }
    }

    fn encode(&mut self, i: usize, intended: Instant) {
        let words = self.generator.next_request();
        let conn = &mut self.conns[i];
        self.protocol.encode(words, &mut conn.out);
        let lookups = self.protocol.lookups(words);
        conn.inflight.push_back(Pending {
            start: intended,
            lookups,
            template: u32::try_from(self.generator.chosen()).unwrap_or(u32::MAX),
        });
        self.inflight += 1;
    }

    fn flush_or_fail(&mut self, i: usize, now: Instant) {
        if let Err(error) = flush(&mut self.conns[i], &mut self.recorder, now) {
            self.fail(i, now, &Failure::Connection(format!("write: {error}")));
        }
    }

    /// Requests past their timeout: a connection whose oldest request
    /// started at or before `now - timeout` times out all it has in
    /// flight and reconnects.
    fn sweep_timeouts(&mut self, now: Instant) {
        let Some(expired) = now.checked_sub(self.share.timeout) else {
            return;
        };
        if self.inflight == 0 {
            return;
        }
        for i in 0..self.conns.len() {
            let conn = &mut self.conns[i];
            if conn.inflight.front().is_some_and(|p| p.start <= expired) {
                self.inflight -= conn.inflight.len();
                for pending in conn.inflight.drain(..) {
                    self.recorder.timeout(pending.start, now);
                    self.recorder
                        .tally(pending.template as usize, pending.start, Tallied::Timeout);
                }
                self.down(i, now);
            }
        }
    }

    /// The connection broke: every request in flight failed; reconnect soon.
    fn fail(&mut self, i: usize, now: Instant, why: &Failure) {
        self.drop_inflight(i, now, why);
        self.down(i, now + RECONNECT_AFTER);
    }

    /// Every request in flight on connection `i` failed, `why`.
    fn drop_inflight(&mut self, i: usize, now: Instant, why: &Failure) {
        let conn = &mut self.conns[i];
        self.inflight -= conn.inflight.len();
        for pending in conn.inflight.drain(..) {
            self.recorder.error(pending.start, now, why);
            self.recorder
                .tally(pending.template as usize, pending.start, Tallied::Error);
        }
    }

    /// Close connection `i` and reconnect it at `at`.
    fn down(&mut self, i: usize, at: Instant) {
        let conn = &mut self.conns[i];
        if let Some(mut stream) = conn.stream.take() {
            let _ = self.poll.registry().deregister(&mut stream);
            self.up -= 1;
        }
        conn.out.clear();
        conn.written = 0;
        conn.input.clear();
        conn.until_close = None;
        // Its due requests fail while it is down, rather than wait.
        if std::mem::take(&mut conn.stalled) {
            self.due.push(Reverse((conn.due, i)));
        }
        self.reconnect.push(Reverse((at, i)));
    }

    /// Reconnect the connections whose time came.
    fn reconnect_due(&mut self, now: Instant) {
        while let Some(Reverse((at, i))) = self.reconnect.peek().copied() {
            if at > now {
                break;
            }
            self.reconnect.pop();
            if self.conns[i].stream.is_some() {
                continue;
            }
            match reconnect(&self.poll, self.addr, i) {
                Ok(stream) => {
                    self.conns[i].stream = Some(stream);
                    self.up += 1;
                    if !self.open_loop() {
                        self.ready.push(i);
                    }
                }
                Err(error) => {
                    self.recorder
                        .error(now, now, &Failure::Connection(error.clone()));
                    self.last_error = error;
                    self.reconnect.push(Reverse((now + RECONNECT_AFTER, i)));
                }
            }
        }
    }
}

/// A connection made again after it broke, mid-run (blocking, at most 1 s:
/// a rare path; the first connections are made before the clock).
fn reconnect(poll: &Poll, addr: SocketAddr, index: usize) -> Result<TcpStream, String> {
    let stream = std::net::TcpStream::connect_timeout(&addr, Duration::from_secs(1))
        .map_err(|e| format!("connect to {addr}: {e}"))?;
    stream
        .set_nodelay(true)
        .and_then(|()| stream.set_nonblocking(true))
        .map_err(|e| format!("socket options: {e}"))?;
    let mut stream = TcpStream::from_std(stream);
    poll.registry()
        .register(
            &mut stream,
            Token(index),
            Interest::READABLE | Interest::WRITABLE,
        )
        .map_err(|e| format!("epoll register: {e}"))?;
    Ok(stream)
}

/// Write as much of the pending output as the socket takes, counting the
/// bytes sent at `now`.
fn flush(conn: &mut Conn, recorder: &mut Recorder, now: Instant) -> io::Result<()> {
    let Some(stream) = conn.stream.as_mut() else {
        return Ok(());
    };
    while conn.written < conn.out.len() {
        match stream.write(&conn.out[conn.written..]) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => {
                conn.written += n;
                recorder.bytes_at(now, 0, n as u64);
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    conn.out.clear();
    conn.written = 0;
    Ok(())
}

/// Read what arrived and record every complete reply.
///
/// A read that fills less than the room it was given emptied the socket
/// (stream sockets under edge-triggered epoll, epoll(7) Q&A 9), so the
/// loop stops there instead of paying one more read for `EAGAIN`: one
/// read per batch of replies rather than two. Data arriving after it
/// raises a new edge. When the event said the peer closed (`closing`),
/// reading goes on to the end of the stream. Reads land in `scratch`
/// unless a partial reply waits in the connection's inbox. While a reply
/// runs to the close its body is counted and dropped, and the close ends
/// it ([`Stream::Closed`]).
fn read_replies(
    conn: &mut Conn,
    protocol: &dyn Protocol,
    closing: bool,
    recorder: &mut Recorder,
    scratch: &mut [u8],
) -> Result<Stream, Failure> {
    loop {
        let Some(stream) = conn.stream.as_mut() else {
            return Ok(Stream::Open);
        };
        let partial = conn.input.holds();
        let room = if partial {
            conn.input.space()
        } else {
            &mut *scratch
        };
        let asked = room.len();
        match stream.read(room) {
            Ok(0) => {
                if let Some(outcome) = conn.until_close.take() {
                    end_at_close(conn, outcome, recorder, Instant::now());
                    return Ok(Stream::Closed);
                }
                return Err(Failure::Connection(
                    "the server closed the connection".to_owned(),
                ));
            }
            Ok(n) => {
                // One clock read for the bytes and the replies they end.
                let now = Instant::now();
                recorder.bytes_at(now, n as u64, 0);
                let until_close = &mut conn.until_close;
                if until_close.is_some() {
                    // The body of a reply that ends at the close.
                } else if partial {
                    conn.input.end += n;
                    if n == asked {
                        // More may be waiting: read it in bigger pieces.
                        conn.input.widen();
                    }
                    let inbox = &mut conn.input;
                    let used = parse_replies(
                        &inbox.buf[inbox.start..inbox.end],
                        (&mut conn.inflight, &mut conn.answered, until_close),
                        protocol,
                        recorder,
                        now,
                    )?;
                    inbox.start += used;
                    inbox.release_if_empty();
                } else {
                    let used = parse_replies(
                        &scratch[..n],
                        (&mut conn.inflight, &mut conn.answered, until_close),
                        protocol,
                        recorder,
                        now,
                    )?;
                    if used < n {
                        conn.input.keep(&scratch[used..n]);
                    }
                }
                if n < asked && !closing {
                    return Ok(Stream::Open);
                }
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(Stream::Open),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(Failure::Connection(format!("read: {e}"))),
        }
    }
}

/// The connection's state that replies move on: its requests in flight,
/// its counted successes, and a reply that runs to the close.
type Replies<'c> = (
    &'c mut VecDeque<Pending>,
    &'c mut u64,
    &'c mut Option<Result<(), Box<str>>>,
);

/// Record every complete reply in `input`, which arrived at `now`,
/// oldest request first of the connection's `inflight`, adding the counted
/// successes to its `answered`; the bytes they took (the rest is the start
/// of a reply). A reply that runs to the close takes all the bytes and is
/// left to [`end_at_close`].
fn parse_replies(
    input: &[u8],
    (inflight, answered, until_close): Replies<'_>,
    protocol: &dyn Protocol,
    recorder: &mut Recorder,
    now: Instant,
) -> Result<usize, Failure> {
    let no_request = || Failure::Protocol("a reply arrived with no request in flight".to_owned());
    let mut used = 0;
    while used < input.len() {
        let rest = &input[used..];
        let reply = protocol.parse(rest).map_err(|e| Failure::Protocol(e.0))?;
        let len = match reply {
            Reply::Incomplete => break,
            Reply::UntilClose { head, ok } => {
                if inflight.is_empty() {
                    return Err(no_request());
                }
                *until_close = Some(if ok {
                    Ok(())
                } else {
                    Err(first_line(&rest[..head]).into())
                });
                return Ok(input.len());
            }
            Reply::Complete { len, .. } | Reply::Values { len, .. } => len,
        };
        let pending = inflight.pop_front().ok_or_else(no_request)?;
        record(pending, reply, answered, recorder, now, || {
            first_line(protocol.error_words(&rest[..len]))
        });
        used += len;
    }
    Ok(used)
}

/// The server closed the connection, ending the oldest request's reply
/// that ran to the close: record it now.
fn end_at_close(
    conn: &mut Conn,
    outcome: Result<(), Box<str>>,
    recorder: &mut Recorder,
    now: Instant,
) {
    let Some(pending) = conn.inflight.pop_front() else {
        return;
    };
    let reply = Reply::Complete {
        len: 0,
        ok: outcome.is_ok(),
    };
    record(pending, reply, &mut conn.answered, recorder, now, || {
        outcome.err().map(String::from).unwrap_or_default()
    });
}

/// Record the reply to `pending`, arrived at `now`; `text` is an error
/// reply's words.
fn record(
    pending: Pending,
    reply: Reply,
    answered: &mut u64,
    recorder: &mut Recorder,
    now: Instant,
    text: impl FnOnce() -> String,
) {
    let late = recorder.late(pending.start, now);
    let outcome = if let Reply::Complete { ok: false, .. } = reply {
        Tallied::Error
    } else if late {
        // Found after its deadline (expired requests are swept only
        // every tenth of the timeout): a timeout, not an answer.
        Tallied::Timeout
    } else {
        *answered += u64::from(recorder.counts(pending.start));
        Tallied::Answered
    };
    recorder.tally(pending.template as usize, pending.start, outcome);
    match reply {
        Reply::Complete { ok: false, .. } => recorder.error_reply(pending.start, now, text),
        _ if late => recorder.timeout(pending.start, now),
        Reply::Values { values, .. } if pending.lookups > 0 => {
            let hits = values.min(pending.lookups);
            recorder.reply(pending.start, now, true);
            recorder.lookups(
                pending.start,
                u64::from(hits),
                u64::from(pending.lookups - hits),
            );
        }
        _ => recorder.reply(pending.start, now, true),
    }
}

/// An error reply's first line, as the server wrote it (`-ERR unknown
/// command`, `CLIENT_ERROR bad data chunk`, `HTTP/1.1 500 Internal Server
/// Error`), at most 200 characters.
fn first_line(reply: &[u8]) -> String {
    let end = reply
        .iter()
        .position(|b| *b == b'\r' || *b == b'\n')
        .unwrap_or(reply.len());
    let text = String::from_utf8_lossy(&reply[..end]);
    let text = text.trim();
    match text.char_indices().nth(200) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pretend a read put `bytes` into the inbox.
    fn fill(inbox: &mut Inbox, bytes: &[u8]) {
        let room = inbox.space();
        room[..bytes.len()].copy_from_slice(bytes);
        inbox.end += bytes.len();
    }

    #[test]
    fn an_inbox_keeps_unparsed_bytes_in_order_as_it_moves_and_grows() {
        let mut inbox = Inbox::new();
        assert_eq!(inbox.space().len(), INBOX);
        fill(&mut inbox, &[1; 3500]);
        // Parsed all but 10 bytes, less than a quarter free: the 10 bytes
        // move to the front.
        inbox.start = 3490;
        assert_eq!(inbox.space().len(), INBOX - 10);
        assert_eq!((inbox.start, inbox.end), (0, 10));
        fill(&mut inbox, &[2; 4000]);
        // Full and nothing parsed: the buffer doubles, the bytes stay.
        assert_eq!(inbox.space().len(), 2 * INBOX - 4010);
        assert_eq!(&inbox.buf[..10], &[1; 10]);
        assert_eq!(&inbox.buf[10..4010], &[2; 4000][..]);
        inbox.widen();
        assert_eq!(inbox.buf.len(), 4 * INBOX);
        inbox.start = inbox.end;
        // All parsed: the next read starts at the front.
        assert_eq!(inbox.space().len(), 4 * INBOX);
    }

    /// A partial reply is kept with the room to complete it; once parsed,
    /// the inbox gives its memory back (an idle connection holds none).
    #[test]
    fn a_partial_reply_is_kept_then_its_memory_given_back() {
        let mut inbox = Inbox::new();
        assert!(!inbox.holds());
        inbox.keep(b"$5\r\nhel");
        assert!(inbox.holds());
        assert_eq!(&inbox.buf[inbox.start..inbox.end], b"$5\r\nhel");
        fill(&mut inbox, b"lo\r\n");
        assert_eq!(&inbox.buf[inbox.start..inbox.end], b"$5\r\nhello\r\n");
        inbox.start = inbox.end;
        inbox.release_if_empty();
        assert_eq!(inbox.buf.capacity(), 0);
        let big = vec![7u8; 3 * INBOX];
        inbox.keep(&big);
        assert_eq!(&inbox.buf[..inbox.end], &big[..]);
    }
}
