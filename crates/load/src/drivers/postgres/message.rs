//! PostgreSQL's messages (protocol 3.0) on a blocking socket: a type byte,
//! then a 4-byte big-endian length that counts itself and the body (the
//! start-up message alone has no type byte). Reads go through the
//! socket's one buffer ([`Inbox`]), every exchange within its deadline;
//! the messages of one exchange are written with one `send`.

use std::time::Duration;

pub use crate::drivers::socket::WireError;
use crate::drivers::socket::{Inbox, Socket};

/// The longest message the driver takes: PostgreSQL's own limit on a
/// field is 1 GB, and a row is at most a few of them.
const MAX_MESSAGE: usize = 1 << 30;

/// Messages over a stream.
pub struct Messages<S> {
    inbox: Inbox<S>,
    /// The messages being written.
    out: Vec<u8>,
}

impl<S: Socket> Messages<S> {
    pub fn new(stream: S) -> Self {
        Self {
            inbox: Inbox::new(stream),
            out: Vec::with_capacity(256),
        }
    }

    pub fn stream(&self) -> &S {
        self.inbox.stream()
    }

    /// Start an exchange within `timeout`: the messages to write, empty.
    pub fn begin(&mut self, timeout: Duration) -> &mut Vec<u8> {
        self.inbox.begin(timeout);
        self.out.clear();
        &mut self.out
    }

    /// The messages to write, as they are so far.
    pub fn out(&mut self) -> &mut Vec<u8> {
        &mut self.out
    }

    /// Write the messages built since [`Messages::begin`] (or the last
    /// send) with one `send`.
    pub fn send(&mut self) -> Result<(), WireError> {
        self.inbox.send(&self.out)?;
        self.out.clear();
        Ok(())
    }

    /// The next message: its type and its body.
    pub fn read(&mut self) -> Result<(u8, &[u8]), WireError> {
        self.inbox.fill(5)?;
        let h = self.inbox.peek(5);
        let tag = h[0];
        let len = u32::from_be_bytes([h[1], h[2], h[3], h[4]]) as usize;
        if !(4..=MAX_MESSAGE).contains(&len) {
            return Err(WireError::Malformed(format!(
                "a message of type `{}` says it is {len} bytes long",
                tag.escape_ascii()
            )));
        }
        self.inbox.fill(1 + len)?;
        Ok((tag, &self.inbox.take(1 + len)[5..]))
    }
}

/// Append a message of type `tag` (none for the start-up) whose body
/// `body` writes.
pub fn put(out: &mut Vec<u8>, tag: Option<u8>, body: impl FnOnce(&mut Vec<u8>)) {
    out.extend(tag);
    let at = out.len();
    out.extend_from_slice(&[0; 4]);
    body(out);
    let len = u32::try_from(out.len() - at).unwrap_or(u32::MAX);
    out[at..at + 4].copy_from_slice(&len.to_be_bytes());
}

/// Append `text` and its terminating NUL.
pub fn put_str(out: &mut Vec<u8>, text: &[u8]) {
    out.extend_from_slice(text);
    out.push(0);
}

/// Reads the fields of one message body in order.
#[derive(Debug, Clone)]
pub struct Fields<'a> {
    data: &'a [u8],
    at: usize,
}

impl<'a> Fields<'a> {
    pub fn new(data: &'a [u8]) -> Self {
        Self { data, at: 0 }
    }

    pub fn bytes(&mut self, n: usize, what: &str) -> Result<&'a [u8], WireError> {
        let end = self
            .at
            .checked_add(n)
            .filter(|&end| end <= self.data.len())
            .ok_or_else(|| {
                WireError::Malformed(format!(
                    "a message of {} bytes ended before its {what}",
                    self.data.len()
                ))
            })?;
        let taken = &self.data[self.at..end];
        self.at = end;
        Ok(taken)
    }

    pub fn u8(&mut self, what: &str) -> Result<u8, WireError> {
        Ok(self.bytes(1, what)?[0])
    }

    pub fn u16(&mut self, what: &str) -> Result<u16, WireError> {
        let b = self.bytes(2, what)?;
        Ok(u16::from_be_bytes([b[0], b[1]]))
    }

    pub fn u32(&mut self, what: &str) -> Result<u32, WireError> {
        let b = self.bytes(4, what)?;
        Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// A NUL-terminated string (without its NUL).
    pub fn str(&mut self, what: &str) -> Result<&'a [u8], WireError> {
        let rest = &self.data[self.at..];
        let n = memchr::memchr(0, rest)
            .ok_or_else(|| WireError::Malformed(format!("the {what} has no terminating NUL")))?;
        self.at += n + 1;
        Ok(&rest[..n])
    }

    pub fn rest(&mut self) -> &'a [u8] {
        let rest = &self.data[self.at..];
        self.at = self.data.len();
        rest
    }
}

#[cfg(test)]
pub mod tests {
    use super::*;
    pub use crate::drivers::socket::tests::Replay;

    /// A message of type `tag` with `body`.
    pub fn message(tag: u8, body: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        put(&mut out, Some(tag), |o| o.extend_from_slice(body));
        out
    }

    #[test]
    fn a_message_is_its_type_and_a_length_that_counts_itself() {
        let mut out = Vec::new();
        put(&mut out, Some(b'Q'), |o| put_str(o, b"SELECT 1"));
        assert_eq!(out, b"Q\x00\x00\x00\x0dSELECT 1\x00");
        // The start-up message has no type byte.
        let mut out = Vec::new();
        put(&mut out, None, |o| {
            o.extend_from_slice(&196_608u32.to_be_bytes());
        });
        assert_eq!(out, b"\x00\x00\x00\x08\x00\x03\x00\x00");
    }

    #[test]
    fn messages_that_straddle_reads_come_out_whole_and_in_order() {
        let mut wire = message(b'2', b"");
        wire.extend(message(b'D', b"\x00\x01\x00\x00\x00\x011"));
        wire.extend(message(b'Z', b"I"));
        for chunk in [1, 3, 64] {
            let mut m = Messages::new(Replay::new(&wire, chunk));
            m.begin(Duration::from_secs(1));
            assert_eq!(m.read().unwrap(), (b'2', &b""[..]));
            assert_eq!(m.read().unwrap(), (b'D', &b"\x00\x01\x00\x00\x00\x011"[..]));
            assert_eq!(m.read().unwrap(), (b'Z', &b"I"[..]));
            assert!(matches!(m.read(), Err(WireError::TimedOut)));
        }
    }

    #[test]
    fn a_length_below_four_or_beyond_a_gigabyte_is_refused_before_reading_it() {
        for header in [&b"Z\x00\x00\x00\x03"[..], b"D\x7f\xff\xff\xff"] {
            let mut m = Messages::new(Replay::new(header, 64));
            m.begin(Duration::from_secs(1));
            let Err(WireError::Malformed(why)) = m.read() else {
                panic!("{header:?} must be refused");
            };
            assert!(why.contains("bytes long"), "{why}");
        }
    }

    #[test]
    fn fields_read_in_order_and_stop_at_the_end() {
        let mut f = Fields::new(b"\x00\x02ab\x00\x00\x00\x00\x07rest");
        assert_eq!(f.u16("count").unwrap(), 2);
        assert_eq!(f.str("name").unwrap(), b"ab");
        assert_eq!(f.u32("oid").unwrap(), 7);
        assert_eq!(f.rest(), b"rest");
        let Err(WireError::Malformed(why)) = f.u8("flag") else {
            panic!("past the end");
        };
        assert!(why.contains("ended before its flag"), "{why}");
        let Err(WireError::Malformed(why)) = Fields::new(b"abc").str("name") else {
            panic!("no NUL");
        };
        assert!(why.contains("no terminating NUL"), "{why}");
    }
}
