//! memcached text protocol. Requests are written as words: retrievals and
//! the rest as the protocol has them (`get KEY…`, `gets KEY…`, `delete KEY`,
//! `incr KEY 1`, `touch KEY 60`), and the storage commands (`set`, `add`,
//! `replace`, `append`, `prepend`) with their value in place of the data
//! block: `set KEY VALUE` (flags and expiry 0) or `set KEY FLAGS EXPTIME
//! VALUE`; the byte count and the data line are composed. `ERROR`,
//! `CLIENT_ERROR` and `SERVER_ERROR` replies count as failed requests (and
//! `NOT_STORED`, `EXISTS`, `NOT_FOUND`: the command did not do its work); a
//! retrieval's keys answered without a `VALUE` are misses, counted for the
//! hit rate, not as errors.

use super::kind::{Client, ClientSpec, DriverKind};
use crate::engine::protocol::{integer, line, Malformed, Protocol, Reply};
use crate::request::{push_decimal, Words};

#[derive(Debug, Default)]
pub struct Memcached;

impl DriverKind for Memcached {
    fn name(&self) -> &'static str {
        "memcached"
    }

    fn url_form(&self) -> &'static str {
        "memcached://HOST:PORT"
    }

    fn default_port(&self) -> u16 {
        11211
    }

    fn default_request(&self, _path: &str) -> Option<String> {
        Some("get key".to_owned())
    }

    fn syntax(&self) -> &'static str {
        "retrievals and the rest as the protocol has them; storage commands\n(set, add, replace, append, prepend) with the value in place of the\ndata block: KEY VALUE (flags and expiry 0) or KEY FLAGS EXPTIME VALUE:\n  -r \"set key:{k} value-{k}\"   -r \"set key:{k} 0 300 value-{k}\"\n  -r \"get key:{k}\"   -r \"get key:1 key:2 key:3\"   -r \"delete key:{k}\""
    }

    fn client<'a>(&self, _spec: &ClientSpec<'a>) -> anyhow::Result<Client<'a>> {
        Ok(Client::Engine(Box::new(Memcached)))
    }

    fn ready_form(&self) -> Option<&'static str> {
        Some("memcached")
    }

    fn ready_request(&self, arg: Option<&str>) -> Option<String> {
        arg.is_none().then(|| "version".to_owned())
    }

    fn looks_up(&self, request: &str) -> bool {
        request
            .split_whitespace()
            .next()
            .is_some_and(|command| RETRIEVALS.contains(&command.as_bytes()))
    }
}

/// The commands that look keys up, each answered by a value or a miss.
const RETRIEVALS: [&[u8]; 4] = [b"get", b"gets", b"gat", b"gats"];

const STORAGE: [&[u8]; 5] = [b"set", b"add", b"replace", b"append", b"prepend"];

impl Protocol for Memcached {
    fn encode(&self, words: &Words, out: &mut Vec<u8>) {
        let mut iter = words.iter();
        let command = iter.next().unwrap_or_default();
        if STORAGE.contains(&command) && (words.len() == 3 || words.len() == 5) {
            let key = words.get(1);
            let value = words.get(words.len() - 1);
            out.extend_from_slice(command);
            out.push(b' ');
            out.extend_from_slice(key);
            if words.len() == 5 {
                for i in [2, 3] {
                    out.push(b' ');
                    out.extend_from_slice(words.get(i));
                }
            } else {
                out.extend_from_slice(b" 0 0");
            }
            out.push(b' ');
            push_decimal(out, value.len() as u64);
            out.extend_from_slice(b"\r\n");
            out.extend_from_slice(value);
            out.extend_from_slice(b"\r\n");
            return;
        }
        out.extend_from_slice(command);
        for word in iter {
            out.push(b' ');
            out.extend_from_slice(word);
        }
        out.extend_from_slice(b"\r\n");
    }

    fn parse(&self, buf: &[u8]) -> Result<Reply, Malformed> {
        let mut at = 0;
        let mut values = 0u32;
        loop {
            let Some((text, len)) = line(&buf[at..]) else {
                return Ok(Reply::Incomplete);
            };
            if let Some(rest) = text.strip_prefix(b"VALUE ") {
                // VALUE <key> <flags> <bytes> [<cas>], then the data and \r\n.
                at += len + data_length(rest)? + 2;
                if buf.len() < at {
                    return Ok(Reply::Incomplete);
                }
                if &buf[at - 2..at] != b"\r\n" {
                    return Err(Malformed(
                        "a VALUE's data is longer than its length says".to_owned(),
                    ));
                }
                values = values.saturating_add(1);
                continue;
            }
            if text.starts_with(b"STAT ") {
                at += len;
                continue;
            }
            let len = at + len;
            if text == b"END" {
                // A retrieval's end: the keys without a VALUE were misses.
                return Ok(Reply::Values { len, values });
            }
            return Ok(Reply::Complete {
                len,
                ok: outcome(text)?,
            });
        }
    }

    fn probe(&self) -> Option<(&'static str, &'static [u8])> {
        Some(("version", b"version\r\n"))
    }

    fn lookups(&self, words: &Words) -> u32 {
        let keys = match words.iter().next().unwrap_or_default() {
            b"get" | b"gets" => words.len().saturating_sub(1),
            // gat EXPTIME KEY…
            b"gat" | b"gats" => words.len().saturating_sub(2),
            _ => 0,
        };
        u32::try_from(keys).unwrap_or(u32::MAX)
    }
}

/// The data length of a `VALUE` line (after `VALUE `): its third field.
/// The key before it (up to 250 bytes) is skipped with `memchr`: splitting
/// it a byte at a time was the costliest part of parsing a reply
/// (callgrind: 531 of the driver's 2,296 instructions per get of a 64-byte
/// key).
fn data_length(rest: &[u8]) -> Result<usize, Malformed> {
    let without = || Malformed("VALUE line without a length".to_owned());
    let key_end = memchr::memchr(b' ', rest).ok_or_else(without)?;
    let bytes = rest[key_end + 1..]
        .split(|b| *b == b' ')
        .nth(1)
        .ok_or_else(without)?;
    usize::try_from(integer(bytes)?).map_err(|_| Malformed("negative VALUE length".to_owned()))
}

/// Whether a one-line reply (other than `END`) says the request worked.
fn outcome(text: &[u8]) -> Result<bool, Malformed> {
    Ok(match text {
        b"STORED" | b"DELETED" | b"TOUCHED" | b"OK" | b"RESET" => true,
        b"NOT_STORED" | b"EXISTS" | b"NOT_FOUND" | b"ERROR" => false,
        _ if text.starts_with(b"CLIENT_ERROR") || text.starts_with(b"SERVER_ERROR") => false,
        _ if text.starts_with(b"VERSION ") => true,
        // incr/decr answer the new value.
        _ if !text.is_empty() && text.iter().all(u8::is_ascii_digit) => true,
        _ => {
            return Err(Malformed(format!(
                "not a memcached reply: {:?}",
                String::from_utf8_lossy(&text[..text.len().min(60)])
            )))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(list: &[&str]) -> Words {
        let mut words = Words::default();
        for w in list {
            words.push(w.as_bytes());
        }
        words
    }

    fn encode(list: &[&str]) -> Vec<u8> {
        let mut out = Vec::new();
        Memcached.encode(&words(list), &mut out);
        out
    }

    #[test]
    fn encodes_get_and_the_set_shorthand() {
        assert_eq!(encode(&["get", "k1", "k2"]), b"get k1 k2\r\n");
        assert_eq!(encode(&["set", "k", "hello"]), b"set k 0 0 5\r\nhello\r\n");
        assert_eq!(encode(&["incr", "n", "1"]), b"incr n 1\r\n");
        // Flags and expiry given: kept, the byte count composed.
        assert_eq!(
            encode(&["add", "k", "7", "300", "hello"]),
            b"add k 7 300 5\r\nhello\r\n"
        );
    }

    #[test]
    fn a_get_reply_ends_at_end() {
        let reply = b"VALUE k 0 5\r\nhello\r\nVALUE j 0 2\r\nab\r\nEND\r\nEND";
        assert_eq!(
            Memcached.parse(reply).unwrap(),
            Reply::Values { len: 42, values: 2 }
        );
        assert_eq!(
            Memcached.parse(b"VALUE k 0 5\r\nhel").unwrap(),
            Reply::Incomplete
        );
        assert_eq!(
            Memcached.parse(b"VALUE k 0 5\r\nhello\r\n").unwrap(),
            Reply::Incomplete
        );
        // A bare END: the key was not there, a miss.
        assert_eq!(
            Memcached.parse(b"END\r\n").unwrap(),
            Reply::Values { len: 5, values: 0 }
        );
        assert_eq!(
            Memcached
                .parse(b"VALUE k 0 5 77\r\nhello\r\nEND\r\n")
                .unwrap(),
            Reply::Values { len: 28, values: 1 }
        );
        for short in [&b"VALUE k 0\r\n"[..], b"VALUE k\r\n", b"VALUE \r\n"] {
            let err = Memcached.parse(short).unwrap_err();
            assert!(err.0.contains("without a length"), "{err}");
        }
        let err = Memcached
            .parse(b"VALUE k 0 2\r\nhello\r\nEND\r\n")
            .unwrap_err();
        assert!(err.0.contains("longer than its length"), "{err}");
    }

    #[test]
    fn retrievals_look_up_their_keys() {
        assert_eq!(Memcached.lookups(&words(&["get", "k"])), 1);
        assert_eq!(Memcached.lookups(&words(&["gets", "a", "b", "c"])), 3);
        assert_eq!(Memcached.lookups(&words(&["gat", "60", "a", "b"])), 2);
        assert_eq!(Memcached.lookups(&words(&["set", "k", "v"])), 0);
        assert_eq!(Memcached.lookups(&words(&["delete", "k"])), 0);
        assert_eq!(Memcached.lookups(&words(&["get"])), 0);
    }

    #[test]
    fn single_line_replies_and_errors() {
        assert_eq!(
            Memcached.parse(b"STORED\r\n").unwrap(),
            Reply::Complete { len: 8, ok: true }
        );
        assert_eq!(
            Memcached.parse(b"SERVER_ERROR out of memory\r\n").unwrap(),
            Reply::Complete { len: 28, ok: false }
        );
        assert_eq!(
            Memcached.parse(b"ERROR\r\n").unwrap(),
            Reply::Complete { len: 7, ok: false }
        );
        for (reply, ok) in [
            (&b"NOT_STORED\r\n"[..], false),
            (b"EXISTS\r\n", false),
            (b"NOT_FOUND\r\n", false),
            (b"CLIENT_ERROR bad data chunk\r\n", false),
            (b"DELETED\r\n", true),
            (b"TOUCHED\r\n", true),
            (b"42\r\n", true),
            (b"VERSION 1.6.18\r\n", true),
        ] {
            assert_eq!(
                Memcached.parse(reply).unwrap(),
                Reply::Complete {
                    len: reply.len(),
                    ok
                },
                "{}",
                String::from_utf8_lossy(reply)
            );
        }
    }

    #[test]
    fn stats_end_like_a_retrieval_of_nothing() {
        let reply = b"STAT pid 1\r\nSTAT uptime 2\r\nEND\r\n";
        assert_eq!(
            Memcached.parse(reply).unwrap(),
            Reply::Values {
                len: reply.len(),
                values: 0
            }
        );
    }

    #[test]
    fn anything_else_is_not_memcached() {
        let err = Memcached.parse(b"\x00\xffNOT A PROTOCOL\r\n").unwrap_err();
        assert!(err.0.contains("not a memcached reply"), "{err}");
        assert!(Memcached.parse(b"HTTP/1.1 200 OK\r\n").is_err());
        assert!(Memcached.parse(b"\r\n").is_err());
    }
}
