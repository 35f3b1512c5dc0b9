//! The server a `mysql://USER:PASS@HOST:PORT/DB` URL names: user, password
//! and database percent-decoded, the port 3306 unless given, and a unix
//! socket instead of TCP with `?socket=/path/to/mysqld.sock` (the host is
//! then only a name). A TCP URL stays on TCP: the server is not asked for
//! its socket.

use std::path::PathBuf;

/// Where and as whom to connect.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub user: String,
    pub password: String,
    pub host: String,
    pub port: u16,
    pub database: Option<String>,
    pub socket: Option<PathBuf>,
}

/// The URL form, for hints.
pub const FORM: &str = "mysql://USER:PASS@HOST:PORT/DB";

impl Target {
    /// Parse `url`; `Err` says what is wrong with it (without the
    /// password).
    pub fn parse(url: &str) -> Result<Self, String> {
        let rest = url
            .strip_prefix("mysql://")
            .ok_or("it does not begin with mysql://")?;
        let (rest, query) = rest.split_once('?').unwrap_or((rest, ""));
        let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
        let (userinfo, hostport) = match authority.rsplit_once('@') {
            Some((u, h)) => (u, h),
            None => ("", authority),
        };
        let (user, password) = userinfo.split_once(':').unwrap_or((userinfo, ""));
        let (host, port) = split_port(hostport)?;
        let database = decode(path, "the database")?;
        let mut socket = None;
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
            if name != "socket" {
                return Err(format!(
                    "unknown parameter `{name}` (the one parameter is socket=PATH)"
                ));
            }
            socket = Some(PathBuf::from(decode(value, "the socket")?));
        }
        Ok(Self {
            user: decode(user, "the user")?,
            password: decode(password, "the password")?,
            host,
            port,
            database: (!database.is_empty()).then_some(database),
            socket,
        })
    }
}

/// `HOST`, `HOST:PORT`, `[V6]` or `[V6]:PORT`.
fn split_port(hostport: &str) -> Result<(String, u16), String> {
    let (host, port) = if let Some(v6) = hostport.strip_prefix('[') {
        let (host, after) = v6
            .split_once(']')
            .ok_or_else(|| format!("`[{v6}` has no closing ]"))?;
        match after {
            "" => (host, None),
            _ => (
                host,
                Some(
                    after
                        .strip_prefix(':')
                        .ok_or_else(|| format!("`{after}` after the address"))?,
                ),
            ),
        }
    } else {
        match hostport.rsplit_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (hostport, None),
        }
    };
    if host.is_empty() {
        return Err("it names no host".to_owned());
    }
    let port = match port {
        None => 3306,
        Some(p) => p
            .parse()
            .map_err(|_| format!("the port `{p}` is not a number from 0 to 65535"))?,
    };
    Ok((host.to_owned(), port))
}

/// `%XX` escapes decoded; the result must be UTF-8.
fn decode(text: &str, what: &str) -> Result<String, String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = text
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or_else(|| format!("{what}: `%` is not followed by two hex digits"))?;
            out.push(hex);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| format!("{what} is not UTF-8 once decoded"))
}

/// The URL without its password, for messages.
pub fn redact(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let Some((auth, host)) = rest.rsplit_once('@') else {
        return url.to_owned();
    };
    match auth.split_once(':') {
        Some((user, _)) => format!("{scheme}://{user}:***@{host}"),
        None => url.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tcp_url_names_user_password_host_port_and_database() {
        let t = Target::parse("mysql://sb:p%40ss@127.0.0.1:3307/sb%20test").unwrap();
        assert_eq!(
            t,
            Target {
                user: "sb".into(),
                password: "p@ss".into(),
                host: "127.0.0.1".into(),
                port: 3307,
                database: Some("sb test".into()),
                socket: None,
            }
        );
        let t = Target::parse("mysql://root@db.example").unwrap();
        assert_eq!((t.port, t.password.as_str(), t.database), (3306, "", None));
        let t = Target::parse("mysql://u:p@[::1]:4000/d").unwrap();
        assert_eq!((t.host.as_str(), t.port), ("::1", 4000));
    }

    #[test]
    fn a_socket_parameter_is_a_decoded_path() {
        let t = Target::parse("mysql://root@localhost/d?socket=%2Frun%2Fmysqld%2Fmysqld.sock")
            .unwrap();
        assert_eq!(t.socket, Some(PathBuf::from("/run/mysqld/mysqld.sock")));
        assert_eq!(t.database.as_deref(), Some("d"));
    }

    #[test]
    fn bad_urls_say_what_is_wrong() {
        let cases = [
            ("mysql://[::1", "no closing ]"),
            ("mysql://h:port/d", "`port` is not a number"),
            ("mysql://h:99999/d", "`99999`"),
            ("mysql://u@/d", "no host"),
            ("mysql://h/d?pool_max=4", "unknown parameter `pool_max`"),
            ("mysql://u:%zz@h/d", "the password: `%`"),
            ("postgres://h/d", "mysql://"),
        ];
        for (url, says) in cases {
            let why = Target::parse(url).unwrap_err();
            assert!(why.contains(says), "{url}: {why}");
        }
        // The password is never in the message.
        let why = Target::parse("mysql://u:secret@h:x/d").unwrap_err();
        assert!(!why.contains("secret"), "{why}");
    }

    #[test]
    fn passwords_are_left_out_of_messages() {
        assert_eq!(
            redact("mysql://root:secret@127.0.0.1:3306/db"),
            "mysql://root:***@127.0.0.1:3306/db"
        );
        assert_eq!(redact("mysql://root@h/db"), "mysql://root@h/db");
    }
}
