//! The event loop for stream protocols (redis, memcached, http): each
//! thread drives its share of the connections with `mio` (epoll), like
//! wrk and redis-benchmark, so thousands of clients cost one thread each
//! core rather than one each.
//!
//! Open-loop (`rate`) requests are scheduled per connection at fixed
//! intended times and their latency is measured from that time, not from
//! when the request could be sent (wrk2's correction for coordinated
//! omission): a stalled server shows its stall in the tail.

use std::collections::VecDeque;
use std::io::{self, Read, Write};
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result};
use mio::net::TcpStream;
use mio::{Events, Interest, Poll, Token};

use super::failure::Failure;
use super::protocol::{Protocol, Reply};
use super::recorder::Recorder;
use super::request::Generator;
use super::{Pace, Share};

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
}

/// Bytes read from a connection and not yet parsed: `buf[start..end]`.
/// The socket reads straight into `buf[end..]`, so no byte is copied on
/// its way to the parser.
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
    out: Vec<u8>,
    written: usize,
    input: Inbox,
    /// Each request in flight, oldest first.
    inflight: VecDeque<Pending>,
    /// Rate model: the intended start of this connection's next request.
    due: Instant,
    /// No connection until then, after a failure.
    retry_at: Option<Instant>,
}

/// Drive `share` of the load against `addr` until it is done; `from` is
/// the end of the warmup, `start` when the schedule begins.
#[allow(clippy::too_many_lines)]
pub fn run(
    protocol: &dyn Protocol,
    mut generator: Generator,
    addr: SocketAddr,
    share: &Share,
    start: Instant,
    mut recorder: Recorder,
) -> Result<Recorder> {
    let mut poll = Poll::new().context("creating an epoll instance")?;
    let mut events = Events::with_capacity(1024);
    let open_loop = matches!(share.pace, Pace::Rate { .. });
    let mut timer = if open_loop {
        Some(Timer::new(&poll).context("creating a timerfd")?)
    } else {
        None
    };
    let mut conns: Vec<Conn> = (0..share.clients)
        .map(|i| Conn {
            stream: None,
            out: Vec::with_capacity(4096),
            written: 0,
            input: Inbox::new(),
            inflight: VecDeque::new(),
            due: start + share.offset(i),
            retry_at: None,
        })
        .collect();
    for (i, conn) in conns.iter_mut().enumerate() {
        if let Err(error) = connect(&poll, conn, i, addr) {
            let now = Instant::now();
            conn.retry_at = Some(now + RECONNECT_AFTER);
            recorder.error(now, now, &Failure::Connection(error));
        }
    }
    let mut remaining = share.requests;
    // A closed loop sends nothing while every connection is down, so a
    // count-bounded one against a dead server would never end.
    let mut all_down_since: Option<Instant> = None;
    let mut last_error = String::new();
    // Every thread starts its schedule at the same instant.
    std::thread::sleep(start.saturating_duration_since(Instant::now()));
    loop {
        crate::interrupt::check()?;
        let now = Instant::now();
        let issuing = share.end.is_none_or(|end| now < end) && remaining != Some(0);
        // Send what is due.
        for (i, conn) in conns.iter_mut().enumerate() {
            if conn.retry_at.is_some_and(|t| now >= t) {
                conn.retry_at = None;
                if let Err(error) = connect(&poll, conn, i, addr) {
                    conn.retry_at = Some(now + RECONNECT_AFTER);
                    recorder.error(now, now, &Failure::Connection(error.clone()));
                    last_error = error;
                }
            }
            let mut sent = false;
            while issuing_for(share, issuing, conn, now, remaining) {
                let intended = match share.pace {
                    Pace::Closed => now,
                    Pace::Rate { per_conn } => {
                        let due = conn.due;
                        conn.due += per_conn;
                        due
                    }
                };
                if recorder.counts(intended) {
                    if let Some(r) = remaining.as_mut() {
                        *r -= 1;
                    }
                }
                if conn.stream.is_none() {
                    // No connection: a due request fails now rather than
                    // vanishing from the schedule.
                    recorder.error(
                        intended,
                        now,
                        &Failure::Connection("no connection to the server".to_owned()),
                    );
                    if share.pace == Pace::Closed {
                        break;
                    }
                    continue;
                }
                let words = generator.next_request();
                protocol.encode(words, &mut conn.out);
                conn.inflight.push_back(Pending {
                    start: intended,
                    lookups: protocol.lookups(words),
                });
                sent = true;
            }
            if sent {
                if let Err(error) = flush(conn, &mut recorder) {
                    fail(
                        conn,
                        &poll,
                        &mut recorder,
                        now,
                        &Failure::Connection(format!("write: {error}")),
                    );
                }
            }
        }
        // Requests past their timeout: started at or before `expired`
        // (one subtraction here, not one per connection: this loop and the
        // next run on every wakeup).
        let expired = now.checked_sub(share.timeout);
        for conn in &mut conns {
            if conn
                .inflight
                .front()
                .zip(expired)
                .is_some_and(|(p, expired)| p.start <= expired)
            {
                for pending in conn.inflight.drain(..) {
                    recorder.timeout(pending.start, now);
                }
                drop_stream(conn, &poll);
                conn.retry_at = Some(now);
            }
        }
        let waiting = conns.iter().any(|c| !c.inflight.is_empty());
        if !issuing && !waiting {
            break;
        }
        if share.pace == Pace::Closed && conns.iter().all(|c| c.stream.is_none()) {
            let since = *all_down_since.get_or_insert(now);
            let patience = share.timeout.max(Duration::from_secs(1));
            if now.saturating_duration_since(since) >= patience {
                anyhow::bail!(
                    "no connection to the server for {:.1} s (last error: {})",
                    patience.as_secs_f64(),
                    if last_error.is_empty() {
                        "none"
                    } else {
                        &last_error
                    }
                );
            }
        } else {
            all_down_since = None;
        }
        // Sleep until the next event or the next thing due.
        let mut wake = now + Duration::from_millis(100);
        let mut oldest: Option<Instant> = None;
        for conn in &conns {
            if let Some(t) = conn.retry_at {
                wake = wake.min(t);
            }
            if let Some(p) = conn.inflight.front() {
                oldest = Some(oldest.map_or(p.start, |o| o.min(p.start)));
            }
            if issuing
                && matches!(share.pace, Pace::Rate { .. })
                && conn.inflight.len() < share.depth
            {
                wake = wake.min(conn.due);
            }
        }
        if let Some(oldest) = oldest {
            wake = wake.min(oldest + share.timeout);
        }
        if let Some(end) = share.end.filter(|_| issuing) {
            wake = wake.min(end);
        }
        let mut timeout = wake.saturating_duration_since(now);
        if let Some(timer) = timer.as_mut() {
            timer.arm(wake, now).context("arming the timerfd")?;
            // epoll's own timeout is only a backstop now.
            timeout += Duration::from_millis(5);
        }
        match poll.poll(&mut events, Some(timeout)) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e).context("waiting for replies"),
        }
        for event in &events {
            if event.token() == TIMER {
                if let Some(timer) = timer.as_mut() {
                    timer.clear();
                }
                continue;
            }
            let conn = &mut conns[event.token().0];
            if conn.stream.is_none() {
                continue;
            }
            if event.is_writable() {
                if let Err(error) = flush(conn, &mut recorder) {
                    fail(
                        conn,
                        &poll,
                        &mut recorder,
                        Instant::now(),
                        &Failure::Connection(format!("write: {error}")),
                    );
                    continue;
                }
            }
            let closing = event.is_read_closed() || event.is_error();
            if event.is_readable() || closing {
                if let Err(why) = read_replies(conn, protocol, closing, &mut recorder) {
                    fail(conn, &poll, &mut recorder, Instant::now(), &why);
                }
            }
        }
    }
    Ok(recorder)
}

/// Whether `conn` should send another request now.
fn issuing_for(
    share: &Share,
    issuing: bool,
    conn: &Conn,
    now: Instant,
    remaining: Option<u64>,
) -> bool {
    if !issuing || remaining == Some(0) || conn.inflight.len() >= share.depth {
        return false;
    }
    match share.pace {
        Pace::Closed => conn.stream.is_some(),
        Pace::Rate { .. } => conn.due <= now && share.end.is_none_or(|end| conn.due < end),
    }
}

fn connect(poll: &Poll, conn: &mut Conn, index: usize, addr: SocketAddr) -> Result<(), String> {
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
    conn.stream = Some(stream);
    conn.out.clear();
    conn.written = 0;
    conn.input.clear();
    Ok(())
}

fn drop_stream(conn: &mut Conn, poll: &Poll) {
    if let Some(mut stream) = conn.stream.take() {
        let _ = poll.registry().deregister(&mut stream);
    }
    conn.out.clear();
    conn.written = 0;
    conn.input.clear();
}

/// The connection broke: every request in flight failed; reconnect soon.
fn fail(conn: &mut Conn, poll: &Poll, recorder: &mut Recorder, now: Instant, why: &Failure) {
    for pending in conn.inflight.drain(..) {
        recorder.error(pending.start, now, why);
    }
    drop_stream(conn, poll);
    conn.retry_at = Some(now + RECONNECT_AFTER);
}

/// Write as much of the pending output as the socket takes, counting the
/// bytes sent.
fn flush(conn: &mut Conn, recorder: &mut Recorder) -> io::Result<()> {
    let Some(stream) = conn.stream.as_mut() else {
        return Ok(());
    };
    while conn.written < conn.out.len() {
        match stream.write(&conn.out[conn.written..]) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => {
                conn.written += n;
                recorder.bytes(0, n as u64);
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
/// reading goes on to the end of the stream.
fn read_replies(
    conn: &mut Conn,
    protocol: &dyn Protocol,
    closing: bool,
    recorder: &mut Recorder,
) -> Result<(), Failure> {
    loop {
        let Some(stream) = conn.stream.as_mut() else {
            return Ok(());
        };
        let room = conn.input.space();
        let asked = room.len();
        match stream.read(room) {
            Ok(0) => {
                return Err(Failure::Connection(
                    "the server closed the connection".to_owned(),
                ))
            }
            Ok(n) => {
                conn.input.end += n;
                recorder.bytes(n as u64, 0);
                if n == asked {
                    // More may be waiting: read it in bigger pieces.
                    conn.input.widen();
                }
                record_replies(conn, protocol, recorder)?;
                if n < asked && !closing {
                    return Ok(());
                }
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(Failure::Connection(format!("read: {e}"))),
        }
    }
}

/// Record every complete reply in the inbox, oldest request first.
fn record_replies(
    conn: &mut Conn,
    protocol: &dyn Protocol,
    recorder: &mut Recorder,
) -> Result<(), Failure> {
    let now = Instant::now();
    let inbox = &mut conn.input;
    while inbox.start < inbox.end {
        let input = &inbox.buf[inbox.start..inbox.end];
        let reply = protocol.parse(input).map_err(|e| Failure::Protocol(e.0))?;
        let len = match reply {
            Reply::Incomplete => break,
            Reply::Complete { len, .. } | Reply::Values { len, .. } => len,
        };
        let pending = conn.inflight.pop_front().ok_or_else(|| {
            Failure::Protocol("a reply arrived with no request in flight".to_owned())
        })?;
        match reply {
            Reply::Complete { ok: false, .. } => {
                recorder.error_reply(pending.start, now, || first_line(&input[..len]));
            }
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
        inbox.start += len;
    }
    Ok(())
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
}
