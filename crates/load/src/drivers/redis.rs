//! Redis serialization protocol (RESP2): requests as arrays of bulk strings,
//! replies of any type, errors (`-…`) counted as failed requests, an
//! error anywhere inside an array (a `MULTI`/`EXEC` whose command failed)
//! as well.

use super::kind::{Client, ClientSpec, DriverKind};
use crate::engine::protocol::{integer, line, Malformed, Protocol, Reply};
use crate::request::{push_decimal, Words};

#[derive(Debug, Default)]
pub struct Redis;

impl DriverKind for Redis {
    fn name(&self) -> &'static str {
        "redis"
    }

    fn url_form(&self) -> &'static str {
        "redis://HOST:PORT"
    }

    fn default_port(&self) -> u16 {
        6379
    }

    fn default_request(&self, _path: &str) -> Option<String> {
        Some("PING".to_owned())
    }

    fn syntax(&self) -> &'static str {
        "a command and its arguments, sent as RESP:\n  -r \"GET key:{k}\"   -r \"SET key:{k} value-{k}\"   -r \"HSET h f{k} {k}\""
    }

    fn client<'a>(&self, _spec: &ClientSpec<'a>) -> anyhow::Result<Client<'a>> {
        Ok(Client::Engine(Box::new(Redis)))
    }

    fn keeps_server_time(&self) -> bool {
        true
    }

    fn ready_form(&self) -> Option<&'static str> {
        Some("redis")
    }

    fn ready_request(&self, arg: Option<&str>) -> Option<String> {
        arg.is_none().then(|| "PING".to_owned())
    }

    fn server_time(
        &self,
        address: &str,
        timeout: std::time::Duration,
    ) -> Option<super::kind::ServerTime> {
        use std::io::{Read as _, Write as _};
        let addr = std::net::ToSocketAddrs::to_socket_addrs(address)
            .ok()?
            .next()?;
        let mut stream = std::net::TcpStream::connect_timeout(&addr, timeout).ok()?;
        stream.set_read_timeout(Some(timeout)).ok()?;
        stream.write_all(b"INFO commandstats\r\n").ok()?;
        let mut reply = Vec::new();
        let mut buf = [0u8; 8192];
        loop {
            if let Ok(Reply::Complete { len, .. }) = Redis.parse(&reply) {
                reply.truncate(len);
                break;
            }
            let n = stream.read(&mut buf).ok()?;
            if n == 0 || reply.len() > 1 << 20 {
                return None;
            }
            reply.extend_from_slice(&buf[..n]);
        }
        Some(commandstats(&String::from_utf8_lossy(&reply)))
    }
}

/// The calls and microseconds of every command in an `INFO commandstats`
/// reply but INFO itself (which reading them runs).
fn commandstats(text: &str) -> super::kind::ServerTime {
    let mut total = super::kind::ServerTime::default();
    for line in text.lines() {
        let Some((name, fields)) = line
            .strip_prefix("cmdstat_")
            .and_then(|l| l.split_once(':'))
        else {
            continue;
        };
        if name == "info" {
            continue;
        }
        for field in fields.split(',') {
            match field.split_once('=') {
                Some(("calls", v)) => total.calls += v.trim().parse().unwrap_or(0),
                Some(("usec", v)) => total.busy_us += v.trim().parse().unwrap_or(0),
                _ => {}
            }
        }
    }
    total
}

impl Protocol for Redis {
    fn encode(&self, words: &Words, out: &mut Vec<u8>) {
        out.push(b'*');
        push_decimal(out, words.len() as u64);
        out.extend_from_slice(b"\r\n");
        for word in words.iter() {
            out.push(b'$');
            push_decimal(out, word.len() as u64);
            out.extend_from_slice(b"\r\n");
            out.extend_from_slice(word);
            out.extend_from_slice(b"\r\n");
        }
    }

    fn probe(&self) -> Option<(&'static str, &'static [u8])> {
        Some(("PING", b"*1\r\n$4\r\nPING\r\n"))
    }

    fn parse(&self, buf: &[u8]) -> Result<Reply, Malformed> {
        Ok(match value(buf, 0)? {
            None => Reply::Incomplete,
            Some(Value { len, error }) => Reply::Complete {
                len,
                ok: error.is_none(),
            },
        })
    }

    fn error_words<'r>(&self, reply: &'r [u8]) -> &'r [u8] {
        match value(reply, 0) {
            Ok(Some(Value {
                error: Some(at), ..
            })) => &reply[at..],
            _ => reply,
        }
    }
}

/// A complete RESP value: its length, and where its first error is (the
/// value itself, or an element of an array at any depth).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Value {
    len: usize,
    error: Option<usize>,
}

/// The RESP value at the start of `buf`, if complete.
fn value(buf: &[u8], depth: usize) -> Result<Option<Value>, Malformed> {
    if depth > 32 {
        return Err(Malformed("RESP nested deeper than 32".to_owned()));
    }
    let Some((head, head_len)) = line(buf) else {
        return Ok(None);
    };
    let Some((&kind, rest)) = head.split_first() else {
        return Err(Malformed("empty RESP line".to_owned()));
    };
    let plain = |len| Some(Value { len, error: None });
    match kind {
        b'+' | b':' => Ok(plain(head_len)),
        b'-' => Ok(Some(Value {
            len: head_len,
            error: Some(0),
        })),
        b'$' => {
            let n = integer(rest)?;
            if n < 0 {
                return Ok(plain(head_len));
            }
            let total = head_len + usize::try_from(n).unwrap_or(usize::MAX) + 2;
            Ok((buf.len() >= total).then_some(Value {
                len: total,
                error: None,
            }))
        }
        b'*' => {
            let n = integer(rest)?;
            let mut at = head_len;
            let mut error = None;
            for _ in 0..n.max(0) {
                match value(&buf[at..], depth + 1)? {
                    Some(element) => {
                        error = error.or(element.error.map(|e| at + e));
                        at += element.len;
                    }
                    None => return Ok(None),
                }
            }
            Ok(Some(Value { len: at, error }))
        }
        other => Err(Malformed(format!("RESP type byte {:?}", char::from(other)))),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn commandstats_sum_every_command_but_info() {
        let text = "$200\r\n# Commandstats\r\ncmdstat_get:calls=1000,usec=2500,usec_per_call=2.50,rejected_calls=0,failed_calls=0\r\ncmdstat_set:calls=10,usec=100,usec_per_call=10.00\r\ncmdstat_info:calls=3,usec=300,usec_per_call=100.00\r\n";
        let t = commandstats(text);
        assert_eq!((t.calls, t.busy_us), (1010, 2600));
        let later = super::super::kind::ServerTime {
            calls: 2010,
            busy_us: 5600,
        };
        assert_eq!(t.mean_us_until(later), Some(3.0));
        assert_eq!(later.mean_us_until(t), None);
    }

    use super::*;

    fn parse(bytes: &[u8]) -> Reply {
        Redis.parse(bytes).unwrap()
    }

    #[test]
    fn encodes_a_command_as_an_array_of_bulk_strings() {
        let mut words = Words::default();
        words.push(b"GET");
        words.push(b"key:12");
        let mut out = Vec::new();
        Redis.encode(&words, &mut out);
        assert_eq!(out, b"*2\r\n$3\r\nGET\r\n$6\r\nkey:12\r\n");
    }

    #[test]
    fn finds_the_end_of_each_reply_type() {
        assert_eq!(parse(b"+PONG\r\n+OK"), Reply::Complete { len: 7, ok: true });
        assert_eq!(parse(b"-ERR no\r\n"), Reply::Complete { len: 9, ok: false });
        assert_eq!(parse(b":42\r\n"), Reply::Complete { len: 5, ok: true });
        assert_eq!(parse(b"$-1\r\n"), Reply::Complete { len: 5, ok: true });
        assert_eq!(
            parse(b"$3\r\nabc\r\n$"),
            Reply::Complete { len: 9, ok: true }
        );
        assert_eq!(
            parse(b"*2\r\n$1\r\na\r\n:1\r\n"),
            Reply::Complete { len: 15, ok: true }
        );
    }

    /// An array holding an error (`EXEC` whose queued command failed)
    /// counted as a success: an error at any depth fails the request, and
    /// its words are the error's.
    #[test]
    fn an_error_inside_an_array_fails_the_request() {
        let exec = b"*2\r\n+OK\r\n-WRONGTYPE Operation against a key\r\n";
        assert_eq!(
            parse(exec),
            Reply::Complete {
                len: exec.len(),
                ok: false
            }
        );
        assert_eq!(
            Redis.error_words(exec),
            b"-WRONGTYPE Operation against a key\r\n"
        );
        let nested = b"*2\r\n*1\r\n$4\r\n-ERR\r\n*2\r\n:1\r\n-ERR deep\r\n";
        assert_eq!(
            parse(nested),
            Reply::Complete {
                len: nested.len(),
                ok: false
            },
            "a bulk string that reads -ERR is no error"
        );
        assert_eq!(Redis.error_words(nested), b"-ERR deep\r\n");
        assert_eq!(
            parse(b"*1\r\n$4\r\n-ERR\r\n"),
            Reply::Complete { len: 14, ok: true }
        );
    }

    #[test]
    fn waits_for_the_rest_of_a_split_reply() {
        for partial in [
            &b"+PON"[..],
            b"$3\r\nab",
            b"$3\r\nabc\r",
            b"*2\r\n$1\r\na\r\n",
        ] {
            assert_eq!(parse(partial), Reply::Incomplete, "{partial:?}");
        }
    }

    #[test]
    fn rejects_what_is_not_resp() {
        assert!(Redis.parse(b"HTTP/1.1 200 OK\r\n").is_err());
        assert!(Redis.parse(b"$x\r\n").is_err());
    }
}
