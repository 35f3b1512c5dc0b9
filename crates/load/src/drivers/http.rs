//! HTTP/1.1 with keep-alive, as wrk and oha speak it: requests are
//! `METHOD PATH ['Name: value'…] [BODY]` (a word that starts with a header
//! name and a colon is a header; the word after the headers is the body,
//! sent with its `Content-Length`); replies end by `Content-Length`,
//! chunked encoding or, with neither (HTTP/1.0 style), the server closing
//! the connection; only a 2xx status is a success: a redirect is not the
//! page asked for, so 3xx fails the request as 4xx and 5xx do.

use super::kind::{Client, ClientSpec, DriverKind};
use crate::engine::protocol::{integer, line, Malformed, Protocol, Reply};
use crate::request::Words;

/// The `http` driver.
pub struct HttpDriver;

impl DriverKind for HttpDriver {
    fn name(&self) -> &'static str {
        "http"
    }

    fn url_form(&self) -> &'static str {
        "http://HOST:PORT/PATH"
    }

    fn default_port(&self) -> u16 {
        80
    }

    fn default_request(&self, path: &str) -> Option<String> {
        Some(format!("GET {}", if path.is_empty() { "/" } else { path }))
    }

    fn syntax(&self) -> &'static str {
        "METHOD PATH ['Name: value'...] [BODY] (default GET of the URL's path):\n  -r \"GET /items/{k}\"\n  -r \"POST /items 'Content-Type: application/json' '{{\"id\": {k}}}'\"\n({{ and }} are literal braces)"
    }

    fn client<'a>(&self, spec: &ClientSpec<'a>) -> anyhow::Result<Client<'a>> {
        Ok(Client::Engine(Box::new(Http::new(
            spec.address.unwrap_or_default().to_owned(),
        ))))
    }

    fn ready_form(&self) -> Option<&'static str> {
        Some("http:/PATH")
    }

    fn ready_request(&self, arg: Option<&str>) -> Option<String> {
        arg.map(|path| format!("GET {path}"))
    }
}

#[derive(Debug)]
pub struct Http {
    /// `Host` header value.
    pub host: String,
    /// Finds the blank line that ends a reply's head (built once: a
    /// `memmem::find` would build its searcher for every reply).
    head_end: memchr::memmem::Finder<'static>,
}

impl Http {
    pub fn new(host: String) -> Self {
        Self {
            host,
            head_end: memchr::memmem::Finder::new(b"\r\n\r\n"),
        }
    }
}

impl Protocol for Http {
    fn encode(&self, words: &Words, out: &mut Vec<u8>) {
        let method = if words.is_empty() {
            b"GET"
        } else {
            words.get(0)
        };
        let path = if words.len() > 1 { words.get(1) } else { b"/" };
        out.extend_from_slice(method);
        out.push(b' ');
        out.extend_from_slice(path);
        out.extend_from_slice(b" HTTP/1.1\r\nHost: ");
        out.extend_from_slice(self.host.as_bytes());
        out.extend_from_slice(b"\r\n");
        let mut next = 2;
        while next < words.len() && is_header(words.get(next)) {
            out.extend_from_slice(words.get(next));
            out.extend_from_slice(b"\r\n");
            next += 1;
        }
        if next < words.len() {
            let body = words.get(next);
            out.extend_from_slice(format!("Content-Length: {}\r\n\r\n", body.len()).as_bytes());
            out.extend_from_slice(body);
        } else {
            out.extend_from_slice(b"\r\n");
        }
    }

    /// One pass over the head: the blank line found with `memmem` (SIMD),
    /// each line's end with `memchr`, and only `Content-Length` and
    /// `Transfer-Encoding` compared by name (it runs for every reply, and
    /// a small static file's reply is mostly head).
    fn parse(&self, buf: &[u8]) -> Result<Reply, Malformed> {
        let Some(end) = self.head_end.find(buf) else {
            if buf.len() > 64 * 1024 {
                return Err(Malformed("HTTP header over 64 KiB".to_owned()));
            }
            return Ok(Reply::Incomplete);
        };
        let head = &buf[..end];
        let body_at = end + 4;
        let mut from = 0;
        let mut lines = memchr::memchr_iter(b'\n', head)
            .chain(std::iter::once(head.len()))
            .map(|nl| {
                let l = &head[from..nl];
                from = nl + 1;
                l.strip_suffix(b"\r").unwrap_or(l)
            });
        let status = parse_status(lines.next().unwrap_or_default())?;
        let mut length = None;
        let mut chunked = false;
        for header in lines {
            // Only a colon right after 14 (Content-Length) or 17
            // (Transfer-Encoding) characters can matter; neither name
            // holds one, so it is the header's first.
            let (name, value) = match header.len() {
                15.. if header[14] == b':' => (&header[..14], &header[15..]),
                18.. if header[17] == b':' => (&header[..17], &header[18..]),
                _ => continue,
            };
            let value = value.trim_ascii();
            if name.eq_ignore_ascii_case(b"content-length") {
                let bad = || Malformed("bad Content-Length".to_owned());
                length =
                    Some(usize::try_from(integer(value).map_err(|_| bad())?).map_err(|_| bad())?);
            } else if name.eq_ignore_ascii_case(b"transfer-encoding")
                && value.eq_ignore_ascii_case(b"chunked")
            {
                chunked = true;
            }
        }
        let ok = (200..300).contains(&status);
        let total = if chunked {
            match chunked_len(&buf[body_at..])? {
                Some(len) => body_at + len,
                None => return Ok(Reply::Incomplete),
            }
        } else if status == 204 || status == 304 || (100..200).contains(&status) {
            body_at
        } else if let Some(length) = length {
            body_at + length
        } else {
            // Neither a length nor chunks: the body runs to the close
            // (RFC 9112 section 6.3, rule 8).
            return Ok(Reply::UntilClose { head: body_at, ok });
        };
        Ok(if buf.len() >= total {
            Reply::Complete { len: total, ok }
        } else {
            Reply::Incomplete
        })
    }
}

fn parse_status(status_line: &[u8]) -> Result<u16, Malformed> {
    let mut parts = status_line.split(|b| *b == b' ');
    let version = parts.next().unwrap_or_default();
    if !version.starts_with(b"HTTP/1.") {
        return Err(Malformed(format!(
            "status line {:?}",
            String::from_utf8_lossy(status_line)
        )));
    }
    parts
        .next()
        .and_then(|s| std::str::from_utf8(s).ok())
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| Malformed("status code".to_owned()))
}

/// Length of a chunked body, trailer included, if complete.
fn chunked_len(buf: &[u8]) -> Result<Option<usize>, Malformed> {
    let mut at = 0;
    loop {
        let Some((size_line, len)) = line(&buf[at..]) else {
            return Ok(None);
        };
        let hex = size_line
            .split(|b| *b == b';')
            .next()
            .unwrap_or_default()
            .trim_ascii();
        let size = std::str::from_utf8(hex)
            .ok()
            .and_then(|h| usize::from_str_radix(h, 16).ok())
            .ok_or_else(|| Malformed("chunk size".to_owned()))?;
        at += len;
        if size == 0 {
            // Trailer headers, then an empty line.
            loop {
                let Some((trailer, len)) = line(&buf[at..]) else {
                    return Ok(None);
                };
                at += len;
                if trailer.is_empty() {
                    return Ok(Some(at));
                }
            }
        }
        at += size + 2;
        if buf.len() < at {
            return Ok(None);
        }
    }
}

/// `Name: value` (or `Name:value`), a name of token characters (RFC 9110).
fn is_header(word: &[u8]) -> bool {
    let Some(colon) = word.iter().position(|b| *b == b':') else {
        return false;
    };
    colon > 0
        && word[..colon]
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn http() -> Http {
        Http::new("localhost:8080".to_owned())
    }

    #[test]
    fn encodes_a_keep_alive_request() {
        let mut words = Words::default();
        words.push(b"GET");
        words.push(b"/items/7");
        let mut out = Vec::new();
        http().encode(&words, &mut out);
        assert_eq!(
            out,
            b"GET /items/7 HTTP/1.1\r\nHost: localhost:8080\r\n\r\n".to_vec()
        );
    }

    #[test]
    fn headers_then_a_body() {
        let mut words = Words::default();
        for w in [
            "POST",
            "/items",
            "Content-Type: application/json",
            "X-Key:7",
            "{\"id\": 7}",
        ] {
            words.push(w.as_bytes());
        }
        let mut out = Vec::new();
        http().encode(&words, &mut out);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "POST /items HTTP/1.1\r\nHost: localhost:8080\r\nContent-Type: application/json\r\nX-Key:7\r\nContent-Length: 9\r\n\r\n{\"id\": 7}"
        );
    }

    #[test]
    fn replies_end_by_length_or_chunks() {
        let reply = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP";
        assert_eq!(
            http().parse(reply).unwrap(),
            Reply::Complete { len: 40, ok: true }
        );
        assert_eq!(
            http()
                .parse(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\no")
                .unwrap(),
            Reply::Incomplete
        );
        let chunked = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n";
        assert_eq!(
            http().parse(chunked).unwrap(),
            Reply::Complete {
                len: chunked.len(),
                ok: true
            }
        );
        assert_eq!(
            http().parse(&chunked[..chunked.len() - 1]).unwrap(),
            Reply::Incomplete
        );
    }

    /// Only whole `Content-Length` / `Transfer-Encoding` names count,
    /// whatever their case; a status line may lack its reason phrase.
    #[test]
    fn lengths_come_from_whole_header_names_in_any_case() {
        let reply = b"HTTP/1.1 200\r\nX-Content-Length: 9\r\nContent-Lengths: 7\r\ncontent-LENGTH:  3 \r\n\r\nabc";
        assert_eq!(
            http().parse(reply).unwrap(),
            Reply::Complete {
                len: reply.len(),
                ok: true
            }
        );
        let chunked = b"HTTP/1.1 200 OK\r\ntransfer-encoding: Chunked\r\n\r\n0\r\n\r\n";
        assert_eq!(
            http().parse(chunked).unwrap(),
            Reply::Complete {
                len: chunked.len(),
                ok: true
            }
        );
        assert!(http()
            .parse(b"HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n")
            .is_err());
    }

    #[test]
    fn error_statuses_fail_the_request() {
        let reply = b"HTTP/1.1 503 Busy\r\nContent-Length: 0\r\n\r\n";
        assert_eq!(
            http().parse(reply).unwrap(),
            Reply::Complete {
                len: reply.len(),
                ok: false
            }
        );
        assert!(http().parse(b"+OK\r\n\r\n").is_err());
    }

    /// A redirect was counted a success (status < 400): it is not the page
    /// asked for, so only 2xx is.
    #[test]
    fn a_redirect_fails_the_request() {
        for status in ["301 Moved Permanently", "302 Found", "304 Not Modified"] {
            let reply = format!("HTTP/1.1 {status}\r\nLocation: /x\r\nContent-Length: 0\r\n\r\n");
            assert_eq!(
                http().parse(reply.as_bytes()).unwrap(),
                Reply::Complete {
                    len: reply.len(),
                    ok: false
                },
                "{status}"
            );
        }
    }

    /// A reply with neither a length nor chunks was read as an empty body
    /// (its body then taken for the next reply): it ends at the close.
    #[test]
    fn a_reply_without_a_length_runs_to_the_close() {
        let head = b"HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\n";
        let mut reply = head.to_vec();
        reply.extend_from_slice(b"the body, until the server closes");
        assert_eq!(
            http().parse(&reply).unwrap(),
            Reply::UntilClose {
                head: head.len(),
                ok: true
            }
        );
        assert_eq!(
            http().parse(b"HTTP/1.0 404 Not Found\r\n\r\n").unwrap(),
            Reply::UntilClose {
                head: 26,
                ok: false
            }
        );
    }
}
