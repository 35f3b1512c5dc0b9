//! memcached text protocol. Requests are written as words: retrievals and
//! the rest as the protocol has them (`get KEY…`, `gets KEY…`, `delete KEY`,
//! `incr KEY 1`, `touch KEY 60`), and the storage commands (`set`, `add`,
//! `replace`, `append`, `prepend`) with their value in place of the data
//! block: `set KEY VALUE` (flags and expiry 0) or `set KEY FLAGS EXPTIME
//! VALUE`; the byte count and the data line are composed. `ERROR`,
//! `CLIENT_ERROR` and `SERVER_ERROR` replies count as failed requests.

use super::driver::{Client, DriverKind};
use super::protocol::{integer, line, Malformed, Protocol, Reply};
use super::request::Words;
use super::LoadSpec;

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

    fn client<'a>(&self, _spec: &'a LoadSpec) -> anyhow::Result<Client<'a>> {
        Ok(Client::Engine(Box::new(Memcached)))
    }
}

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
            out.extend_from_slice(format!(" {}\r\n", value.len()).as_bytes());
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
        loop {
            let Some((text, len)) = line(&buf[at..]) else {
                return Ok(Reply::Incomplete);
            };
            if let Some(rest) = text.strip_prefix(b"VALUE ") {
                // VALUE <key> <flags> <bytes> [<cas>]
                let bytes = rest
                    .split(|b| *b == b' ')
                    .nth(2)
                    .ok_or_else(|| Malformed("VALUE line without a length".to_owned()))?;
                let bytes = usize::try_from(integer(bytes)?)
                    .map_err(|_| Malformed("negative VALUE length".to_owned()))?;
                at += len + bytes + 2;
                if buf.len() < at {
                    return Ok(Reply::Incomplete);
                }
                continue;
            }
            if text.starts_with(b"STAT ") {
                at += len;
                continue;
            }
            let ok = match text {
                b"END" | b"STORED" | b"DELETED" | b"TOUCHED" | b"OK" | b"RESET" => true,
                b"NOT_STORED" | b"EXISTS" | b"NOT_FOUND" | b"ERROR" => false,
                _ if text.starts_with(b"CLIENT_ERROR") || text.starts_with(b"SERVER_ERROR") => {
                    false
                }
                _ if text.starts_with(b"VERSION ") => true,
                // incr/decr answer the new value.
                _ if !text.is_empty() && text.iter().all(u8::is_ascii_digit) => true,
                _ => {
                    return Err(Malformed(format!(
                        "not a memcached reply: {:?}",
                        String::from_utf8_lossy(&text[..text.len().min(60)])
                    )))
                }
            };
            return Ok(Reply::Complete { len: at + len, ok });
        }
    }
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
            Reply::Complete { len: 42, ok: true }
        );
        assert_eq!(
            Memcached.parse(b"VALUE k 0 5\r\nhel").unwrap(),
            Reply::Incomplete
        );
        assert_eq!(
            Memcached.parse(b"VALUE k 0 5\r\nhello\r\n").unwrap(),
            Reply::Incomplete
        );
        assert_eq!(
            Memcached.parse(b"END\r\n").unwrap(),
            Reply::Complete { len: 5, ok: true }
        );
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
            (b"STAT pid 1\r\nSTAT uptime 2\r\nEND\r\n", true),
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
    fn anything_else_is_not_memcached() {
        let err = Memcached.parse(b"\x00\xffNOT A PROTOCOL\r\n").unwrap_err();
        assert!(err.0.contains("not a memcached reply"), "{err}");
        assert!(Memcached.parse(b"HTTP/1.1 200 OK\r\n").is_err());
        assert!(Memcached.parse(b"\r\n").is_err());
    }
}
