//! A Go service's CPU profile from its `net/http/pprof` endpoint
//! (`/debug/pprof/profile?seconds=N`), on loopback only: the file `go build
//! -pgo` reads, as the service wrote it (gzipped `profile.proto`).

use std::io::{Read as _, Write as _};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::time::Duration;

use anyhow::{bail, Context as _, Result};

/// The endpoint's path when the address names none.
const DEFAULT_PATH: &str = "/debug/pprof/profile";
/// The most a profile may be: a bound on what a service sends.
const MAX_BYTES: u64 = 256 << 20;

/// Where to ask: a loopback address and a path.
#[derive(Debug, PartialEq, Eq)]
pub struct Endpoint {
    pub address: SocketAddr,
    pub path: String,
}

/// Parse `http://127.0.0.1:PORT[/path]` (also `localhost`, `[::1]`, or no
/// scheme); anything not on loopback is refused.
pub fn parse(url: &str) -> Result<Endpoint> {
    let hint = "hint: give the service's pprof address on this machine, e.g. http://127.0.0.1:6060";
    let rest = url.strip_prefix("http://").unwrap_or(url);
    if rest.contains("://") {
        bail!("`{url}`: only http:// is supported\n{hint}");
    }
    let (host_port, path) = rest.find('/').map_or((rest, ""), |i| rest.split_at(i));
    let host_port = host_port.replace("localhost", "127.0.0.1");
    let address: SocketAddr = host_port.parse().with_context(|| {
        format!("`{url}` is not http://HOST:PORT with HOST an IP address\n{hint}")
    })?;
    if !address.ip().is_loopback() {
        bail!(
            "`{url}` is not on loopback: afterburner fetches profiles only from this machine ({})\n{hint}",
            address.ip()
        );
    }
    let path = if path.is_empty() || path == "/" {
        DEFAULT_PATH.to_owned()
    } else {
        path.to_owned()
    };
    Ok(Endpoint { address, path })
}

/// Fetch a CPU profile of `seconds` into `out`; its size in bytes.
pub fn fetch(endpoint: &Endpoint, duration: Duration, out: &Path) -> Result<usize> {
    let seconds = duration.as_secs().max(1);
    let where_ = format!("http://{}{}", endpoint.address, endpoint.path);
    let mut stream = TcpStream::connect_timeout(&endpoint.address, Duration::from_secs(5))
        .with_context(|| format!("connecting to {where_}\nhint: is the service running, with net/http/pprof imported?"))?;
    // The service answers once it has sampled for `seconds`.
    stream.set_read_timeout(Some(Duration::from_secs(seconds + 30)))?;
    stream.set_write_timeout(Some(Duration::from_secs(5)))?;
    let separator = if endpoint.path.contains('?') {
        '&'
    } else {
        '?'
    };
    write!(
        stream,
        "GET {}{separator}seconds={seconds} HTTP/1.0\r\nHost: {}\r\nAccept-Encoding: identity\r\n\r\n",
        endpoint.path, endpoint.address
    )?;
    let mut response = Vec::new();
    stream
        .take(MAX_BYTES)
        .read_to_end(&mut response)
        .with_context(|| format!("reading the profile from {where_}"))?;
    let (status, body) =
        split_response(&response).with_context(|| format!("{where_} sent no HTTP response"))?;
    if status != 200 {
        bail!(
            "{where_} answered {status}: {}\nhint: the service needs `import _ \"net/http/pprof\"` and its path (default {DEFAULT_PATH})",
            String::from_utf8_lossy(&body[..body.len().min(300)]).trim()
        );
    }
    if !body.starts_with(&[0x1f, 0x8b]) {
        bail!(
            "{where_} sent {} bytes that are not a gzipped pprof profile",
            body.len()
        );
    }
    if let Some(parent) = out.parent().filter(|p| !p.as_os_str().is_empty()) {
        fs_err::create_dir_all(parent)?;
    }
    fs_err::write(out, body)?;
    Ok(body.len())
}

/// The status code and body of an HTTP/1.x response (no chunking: asked
/// as HTTP/1.0).
fn split_response(response: &[u8]) -> Option<(u16, &[u8])> {
    let end = memchr::memmem::find(response, b"\r\n\r\n")?;
    let head = std::str::from_utf8(&response[..end]).ok()?;
    let status = head.split_whitespace().nth(1)?.parse().ok()?;
    Some((status, &response[end + 4..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_addresses_are_accepted() {
        let e = parse("http://127.0.0.1:6060").unwrap();
        assert_eq!(e.address.port(), 6060);
        assert_eq!(e.path, DEFAULT_PATH);
        assert_eq!(
            parse("localhost:8080/x/profile").unwrap().path,
            "/x/profile"
        );
        assert!(parse("http://[::1]:6060/").is_ok());
        let err = parse("http://10.0.0.5:6060").unwrap_err().to_string();
        assert!(err.contains("not on loopback"), "{err}");
        assert!(parse("http://example.com:80").is_err());
        assert!(parse("https://127.0.0.1:6060").is_err());
    }

    #[test]
    fn a_response_splits_into_status_and_body() {
        let (status, body) = split_response(b"HTTP/1.0 200 OK\r\nA: b\r\n\r\n\x1f\x8bxy").unwrap();
        assert_eq!((status, body), (200, &b"\x1f\x8bxy"[..]));
        assert_eq!(split_response(b"garbage"), None);
    }
}
