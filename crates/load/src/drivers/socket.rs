//! The socket of a driver that blocks on it (mysql, postgres): TCP or a
//! unix socket, connected within a timeout; and the one buffer its
//! replies are read through. A reply that arrives in one segment costs
//! one `recv`, however many messages it holds; every read and write has
//! the socket's timeout, and a reply that keeps trickling in is cut off at
//! the exchange's deadline (each read after the first waits, with `poll`,
//! only for what is left of it): a silent server costs a timeout, never a
//! hang.
//! And why an exchange failed, the same for both protocols.

use std::io::{self, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::{Duration, Instant};

/// How much a read asks the kernel for at once (libmariadb's net buffer
/// is as large; libpq's starts at 16 KiB too).
const READ_CHUNK: usize = 16 * 1024;

/// The connection to the server: TCP or a unix socket.
#[derive(Debug)]
pub enum Stream {
    Tcp(TcpStream),
    Unix(UnixStream),
}

impl Stream {
    /// Connect to `host`:`port` within `timeout`, each of its addresses in
    /// turn, with `TCP_NODELAY` (a request is one write). `Err` says why,
    /// naming the address.
    pub fn tcp(host: &str, port: u16, timeout: Duration) -> Result<Self, String> {
        let addrs = (host, port)
            .to_socket_addrs()
            .map_err(|e| format!("resolve {host}: {e}"))?;
        let mut last = None;
        for addr in addrs {
            match TcpStream::connect_timeout(&addr, timeout) {
                Ok(s) => {
                    s.set_nodelay(true)
                        .map_err(|e| format!("TCP_NODELAY: {e}"))?;
                    return Ok(Stream::Tcp(s));
                }
                Err(e) => last = Some(format!("connect to {addr}: {e}")),
            }
        }
        Err(last.unwrap_or_else(|| format!("{host} has no address")))
    }

    /// Connect to the unix socket at `path` within `timeout`: a listener
    /// whose backlog is full makes a blocking `connect` wait without end,
    /// so it is made without blocking and waited for with `poll`.
    pub fn unix(path: &Path, timeout: Duration) -> Result<Self, String> {
        let connect = || -> io::Result<Self> {
            let socket = socket2::Socket::new(socket2::Domain::UNIX, socket2::Type::STREAM, None)?;
            socket.connect_timeout(&socket2::SockAddr::unix(path)?, timeout)?;
            Ok(Stream::Unix(UnixStream::from(std::os::fd::OwnedFd::from(
                socket,
            ))))
        };
        connect().map_err(|e| format!("connect to socket {}: {e}", path.display()))
    }

    /// Every later read and write waits at most `timeout`.
    pub fn set_timeout(&self, timeout: Duration) -> io::Result<()> {
        // A zero timeout would mean "wait forever" to the kernel.
        let timeout = Some(timeout.max(Duration::from_millis(1)));
        match self {
            Stream::Tcp(s) => {
                s.set_read_timeout(timeout)?;
                s.set_write_timeout(timeout)
            }
            Stream::Unix(s) => {
                s.set_read_timeout(timeout)?;
                s.set_write_timeout(timeout)
            }
        }
    }
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.read(buf),
            Stream::Unix(s) => s.read(buf),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.write(buf),
            Stream::Unix(s) => s.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A byte stream whose next read can be waited for with a limit: what
/// [`Inbox`] reads from.
pub trait Socket: Read + Write {
    /// Whether there is something to read (bytes, or the end) within
    /// `wait`.
    fn readable_within(&self, wait: Duration) -> io::Result<bool>;
}

impl Socket for Stream {
    fn readable_within(&self, wait: Duration) -> io::Result<bool> {
        use std::os::fd::AsRawFd as _;
        let fd = match self {
            Stream::Tcp(s) => s.as_raw_fd(),
            Stream::Unix(s) => s.as_raw_fd(),
        };
        let mut pollfd = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        // Rounded up: a wait of 0.4 ms is 1 ms, not none.
        let ms = libc::c_int::try_from(wait.as_micros().div_ceil(1000)).unwrap_or(libc::c_int::MAX);
        loop {
            // SAFETY: `pollfd` is one valid pollfd, ours, for the call.
            let rc = unsafe { libc::poll(&raw mut pollfd, 1, ms) };
            if rc >= 0 {
                return Ok(rc > 0);
            }
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
    }
}

/// Why reading or writing a protocol's messages failed.
#[derive(Debug)]
pub enum WireError {
    /// Nothing (or not all of a reply) came within the timeout.
    TimedOut,
    /// The server closed the connection.
    Closed,
    Io(io::Error),
    /// Bytes that are not the protocol.
    Malformed(String),
}

impl From<io::Error> for WireError {
    fn from(e: io::Error) -> Self {
        match e.kind() {
            // SO_RCVTIMEO / SO_SNDTIMEO ran out.
            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => WireError::TimedOut,
            io::ErrorKind::UnexpectedEof
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::BrokenPipe => WireError::Closed,
            _ => WireError::Io(e),
        }
    }
}

/// Why a step of a session (log in, prepare, execute) failed; `E` is the
/// server's error answer.
#[derive(Debug)]
pub enum SessionError<E> {
    /// The server answered with an error.
    Server(E),
    /// Nothing (or not enough) came within the timeout.
    TimedOut,
    /// The connection failed or closed.
    Connection(String),
    /// The server sent something that is not the protocol.
    Protocol(String),
    /// Nothing can mend it (an authentication the driver cannot do).
    Unsupported(String),
}

impl<E> From<WireError> for SessionError<E> {
    fn from(e: WireError) -> Self {
        match e {
            WireError::TimedOut => SessionError::TimedOut,
            WireError::Closed => {
                SessionError::Connection("the server closed the connection".to_owned())
            }
            WireError::Io(e) => SessionError::Connection(e.to_string()),
            WireError::Malformed(why) => SessionError::Protocol(why),
        }
    }
}

impl<E: std::fmt::Display> std::fmt::Display for SessionError<E> {
    /// What went wrong, in words (the server's own for its errors).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SessionError::Server(e) => e.fmt(f),
            SessionError::TimedOut => f.write_str("timed out"),
            SessionError::Connection(why)
            | SessionError::Protocol(why)
            | SessionError::Unsupported(why) => f.write_str(why),
        }
    }
}

/// A stream and the bytes read from it and not yet taken.
#[derive(Debug)]
pub struct Inbox<S> {
    stream: S,
    /// Bytes read and not yet taken: `buf[start..end]`.
    buf: Vec<u8>,
    start: usize,
    end: usize,
    /// When the exchange under way must be over.
    deadline: Option<Instant>,
    /// Whether this exchange has read from the socket already (a second
    /// read checks the deadline).
    read_once: bool,
}

impl<S: Socket> Inbox<S> {
    pub fn new(stream: S) -> Self {
        Self {
            stream,
            buf: vec![0; READ_CHUNK],
            start: 0,
            end: 0,
            deadline: None,
            read_once: false,
        }
    }

    pub fn stream(&self) -> &S {
        &self.stream
    }

    /// Start an exchange that must be over within `timeout`.
    pub fn begin(&mut self, timeout: Duration) {
        self.deadline = Instant::now().checked_add(timeout);
        self.read_once = false;
    }

    /// Write all of `bytes` (each write within the socket's timeout).
    pub fn send(&mut self, bytes: &[u8]) -> Result<(), WireError> {
        Ok(self.stream.write_all(bytes)?)
    }

    /// The first `n` bytes not yet taken, once [`Inbox::fill`] has them.
    pub fn peek(&self, n: usize) -> &[u8] {
        &self.buf[self.start..self.start + n]
    }

    /// Take the first `n` bytes, once [`Inbox::fill`] has them.
    pub fn take(&mut self, n: usize) -> &[u8] {
        let at = self.start;
        self.start += n;
        &self.buf[at..at + n]
    }

    /// Read until at least `need` bytes are there to take.
    pub fn fill(&mut self, need: usize) -> Result<(), WireError> {
        if self.start == self.end {
            (self.start, self.end) = (0, 0);
        }
        while self.end - self.start < need {
            if self.start + need > self.buf.len() {
                // Move what is left to the front; grow for a long message.
                self.buf.copy_within(self.start..self.end, 0);
                (self.start, self.end) = (0, self.end - self.start);
                if need > self.buf.len() {
                    self.buf.resize(need.next_power_of_two(), 0);
                }
            }
            // A reply that trickles in: each further read waits only for
            // what is left of the exchange's time.
            if let Some(deadline) = self.deadline.filter(|_| self.read_once) {
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() || !self.stream.readable_within(left)? {
                    return Err(WireError::TimedOut);
                }
            }
            match self.stream.read(&mut self.buf[self.end..]) {
                Ok(0) => return Err(WireError::Closed),
                Ok(n) => {
                    self.end += n;
                    self.read_once = true;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e.into()),
            }
        }
        Ok(())
    }
}

#[cfg(test)]
pub mod tests {
    use super::*;

    /// Bytes a server sent, replayed, and what the client wrote: a socket
    /// for parser tests. Reads hand out at most `chunk` bytes at a time, so
    /// messages straddle reads.
    pub struct Replay {
        input: Vec<u8>,
        at: usize,
        chunk: usize,
        /// Whether the server closes once its bytes are read (else it
        /// goes silent).
        closes: bool,
        pub written: Vec<u8>,
    }

    impl Replay {
        pub fn new(input: &[u8], chunk: usize) -> Self {
            Self {
                input: input.to_vec(),
                at: 0,
                chunk,
                closes: false,
                written: Vec::new(),
            }
        }

        /// A server that closes the connection after `input`.
        pub fn closing(input: &[u8], chunk: usize) -> Self {
            Self {
                closes: true,
                ..Self::new(input, chunk)
            }
        }
    }

    impl Read for Replay {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            if self.at == self.input.len() {
                if self.closes {
                    return Ok(0);
                }
                // What a socket whose timeout ran out says.
                return Err(io::ErrorKind::WouldBlock.into());
            }
            let n = buf.len().min(self.chunk).min(self.input.len() - self.at);
            buf[..n].copy_from_slice(&self.input[self.at..self.at + n]);
            self.at += n;
            Ok(n)
        }
    }

    impl Socket for Replay {
        fn readable_within(&self, _: Duration) -> io::Result<bool> {
            Ok(true)
        }
    }

    impl Socket for std::io::Cursor<Vec<u8>> {
        fn readable_within(&self, _: Duration) -> io::Result<bool> {
            Ok(true)
        }
    }

    impl Write for Replay {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.written.extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn bytes_that_straddle_reads_are_taken_whole_and_growth_keeps_them() {
        let data: Vec<u8> = (0..=255u8).cycle().take(40_000).collect();
        for chunk in [1, 7, 4096, 1 << 16] {
            let mut inbox = Inbox::new(Replay::new(&data, chunk));
            inbox.begin(Duration::from_secs(1));
            inbox.fill(3).unwrap();
            assert_eq!(inbox.peek(3), &data[..3]);
            assert_eq!(inbox.take(3), &data[..3]);
            // Longer than the buffer: it grows, and keeps what it had.
            inbox.fill(39_000).unwrap();
            assert_eq!(inbox.take(39_000), &data[3..39_003]);
            inbox.fill(997).unwrap();
            assert_eq!(inbox.take(997), &data[39_003..]);
            // Nothing more comes: the socket's timeout.
            assert!(matches!(inbox.fill(1), Err(WireError::TimedOut)));
        }
    }

    /// A server that sends a byte of its reply and then stalls: the
    /// second read waits only for what is left of the exchange's time, so
    /// the exchange ends at its deadline, not a socket timeout after it.
    #[test]
    fn a_reply_that_stalls_midway_ends_at_the_exchanges_deadline() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let server = std::thread::spawn(move || {
            let (mut conn, _) = listener.accept().unwrap();
            std::thread::sleep(Duration::from_millis(200));
            conn.write_all(b"x").unwrap();
            // Hold the connection open, silent, past the client's wait.
            std::thread::sleep(Duration::from_millis(2500));
        });
        let timeout = Duration::from_secs(1);
        let stream = Stream::tcp("127.0.0.1", port, timeout).unwrap();
        stream.set_timeout(timeout).unwrap();
        let mut inbox = Inbox::new(stream);
        let began = Instant::now();
        inbox.begin(timeout);
        assert!(matches!(inbox.fill(2), Err(WireError::TimedOut)));
        let took = began.elapsed();
        // The first read's byte came at 0.2 s; a second read with the
        // socket's whole timeout would end near 1.2 s.
        assert!(
            took >= timeout && took < Duration::from_millis(1150),
            "{took:?}"
        );
        server.join().unwrap();
    }

    #[test]
    fn a_closed_socket_and_a_full_timeout_are_told_apart() {
        let mut inbox = Inbox::new(std::io::Cursor::new(b"ab".to_vec()));
        inbox.begin(Duration::from_secs(1));
        assert!(matches!(inbox.fill(3), Err(WireError::Closed)));
        assert!(matches!(
            WireError::from(io::Error::from(io::ErrorKind::TimedOut)),
            WireError::TimedOut
        ));
        assert!(matches!(
            WireError::from(io::Error::from(io::ErrorKind::PermissionDenied)),
            WireError::Io(_)
        ));
    }
}
