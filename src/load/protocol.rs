//! What a stream protocol must do for the load engine: write one request's
//! bytes, and find where one reply ends in the bytes read so far. Adding a
//! protocol is one file implementing [`Protocol`].

use std::fmt;

use super::request::Words;

/// How much of the buffer one reply takes, once it is all there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reply {
    /// More bytes are needed.
    Incomplete,
    /// The first `len` bytes are one reply; `ok` is false for an error reply
    /// (RESP `-ERR`, HTTP status >= 400, memcached `SERVER_ERROR`).
    Complete { len: usize, ok: bool },
}

/// The peer sent something that is not a reply of this protocol: the
/// connection can't be trusted any more.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Malformed(pub String);

impl fmt::Display for Malformed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "malformed reply: {}", self.0)
    }
}

/// A request/reply protocol over one byte stream.
pub trait Protocol: Send + Sync {
    /// Append the request made of `words` to `out`.
    fn encode(&self, words: &Words, out: &mut Vec<u8>);
    /// Where the first reply in `buf` ends, if it is complete.
    fn parse(&self, buf: &[u8]) -> Result<Reply, Malformed>;
}

/// The line at the start of `buf` without its `\r\n`, and the length
/// including it; `None` until the `\r\n` arrives.
pub(super) fn line(buf: &[u8]) -> Option<(&[u8], usize)> {
    let end = buf.windows(2).position(|w| w == b"\r\n")?;
    Some((&buf[..end], end + 2))
}

/// An ASCII decimal integer, possibly negative.
pub(super) fn integer(bytes: &[u8]) -> Result<i64, Malformed> {
    std::str::from_utf8(bytes)
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .ok_or_else(|| {
            Malformed(format!(
                "expected a number, got {:?}",
                String::from_utf8_lossy(bytes)
            ))
        })
}
