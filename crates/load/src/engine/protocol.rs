//! What a stream protocol must do for the load engine: write one request's
//! bytes, and find where one reply ends in the bytes read so far. Adding a
//! protocol is one file implementing [`Protocol`].

use std::fmt;

use crate::request::Words;

/// How much of the buffer one reply takes, once it is all there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reply {
    /// More bytes are needed.
    Incomplete,
    /// The first `len` bytes are one reply; `ok` is false for an error reply
    /// (RESP `-ERR`, or an array holding one; an HTTP status other than
    /// 2xx; memcached `SERVER_ERROR`).
    Complete { len: usize, ok: bool },
    /// The first `head` bytes begin a reply whose body ends only when the
    /// server closes the connection (HTTP without `Content-Length` or
    /// chunked encoding, as HTTP/1.0 servers send it): every byte after
    /// them up to the close is its body, and the connection ends with it.
    UntilClose { head: usize, ok: bool },
    /// The first `len` bytes are the answer to a retrieval (memcached
    /// `VALUE …` blocks then `END`), carrying `values` of the keys asked
    /// for: a key without one was a miss, which is no error.
    Values { len: usize, values: u32 },
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
    /// How many keys the request made of `words` looks up, each answered
    /// by a value (a hit) or not (a miss): the keys of a memcached `get`.
    /// 0 where the request is no retrieval or the protocol has no misses.
    fn lookups(&self, words: &Words) -> u32 {
        let _ = words;
        0
    }
    /// The part of an error `reply` that says what went wrong (its first
    /// line is shown): the whole reply, or the error inside it (an element
    /// of a Redis array).
    fn error_words<'r>(&self, reply: &'r [u8]) -> &'r [u8] {
        reply
    }
    /// A cheap request every server of the protocol answers, its name and
    /// its bytes (Redis `PING`, memcached `version`), sent once on each new
    /// connection before the clock to confirm that the server holds it;
    /// `None`: the load's first request is sent instead, its answer not
    /// counted.
    fn probe(&self) -> Option<(&'static str, &'static [u8])> {
        None
    }
}

/// The line at the start of `buf` without its `\r\n`, and the length
/// including it; `None` until the `\r\n` arrives.
/// It runs once or more for every reply, so it looks for `\n` with
/// `memchr` (a word at a time) rather than comparing every pair of bytes.
pub fn line(buf: &[u8]) -> Option<(&[u8], usize)> {
    let mut from = 0;
    loop {
        let at = from + memchr::memchr(b'\n', &buf[from..])?;
        if at > 0 && buf[at - 1] == b'\r' {
            return Some((&buf[..at - 1], at + 1));
        }
        from = at + 1;
    }
}

/// An ASCII decimal integer, possibly negative, with optional spaces
/// around it. Read by hand: the standard parser's UTF-8 check and
/// trimming cost more than the digits in a reply's length field.
pub fn integer(bytes: &[u8]) -> Result<i64, Malformed> {
    let not_a_number = || {
        Malformed(format!(
            "expected a number, got {:?}",
            String::from_utf8_lossy(bytes)
        ))
    };
    let text = bytes.trim_ascii();
    let (negative, digits) = match text.split_first() {
        Some((b'-', rest)) => (true, rest),
        Some((b'+', rest)) => (false, rest),
        _ => (false, text),
    };
    if digits.is_empty() {
        return Err(not_a_number());
    }
    let mut value: i64 = 0;
    for &b in digits {
        if !b.is_ascii_digit() {
            return Err(not_a_number());
        }
        let digit = i64::from(b - b'0');
        value = value
            .checked_mul(10)
            .and_then(|v| {
                if negative {
                    v.checked_sub(digit)
                } else {
                    v.checked_add(digit)
                }
            })
            .ok_or_else(not_a_number)?;
    }
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_ends_at_the_first_crlf_only() {
        assert_eq!(line(b"END\r\nrest"), Some((&b"END"[..], 5)));
        assert_eq!(line(b"a\nb\r\n"), Some((&b"a\nb"[..], 5)));
        assert_eq!(line(b"\r\n"), Some((&b""[..], 2)));
        assert_eq!(line(b"END\r"), None);
        assert_eq!(line(b"\nEND"), None);
    }

    #[test]
    fn integers_as_the_standard_parser_reads_them() {
        for text in [
            "0",
            "42",
            "-1",
            "+7",
            " 12 ",
            "9223372036854775807",
            "-9223372036854775808",
        ] {
            assert_eq!(
                integer(text.as_bytes()).unwrap(),
                text.trim().parse::<i64>().unwrap(),
                "{text}"
            );
        }
        for bad in ["", "-", "1x", "9223372036854775808", "1 2", "\u{e9}"] {
            assert!(integer(bad.as_bytes()).is_err(), "{bad}");
        }
    }
}
