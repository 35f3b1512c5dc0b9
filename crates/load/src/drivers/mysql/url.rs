//! The server a `mysql://USER:PASS@HOST:PORT/DB` URL names: user, password
//! and database percent-decoded, the port 3306 unless given, and a unix
//! socket instead of TCP with `?socket=/path/to/mysqld.sock` (the host is
//! then only a name). A TCP URL stays on TCP: the server is not asked for
//! its socket.

use std::path::PathBuf;

use crate::drivers::dburl::{decode, split_port};

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
        let (host, port) = split_port(hostport, 3306)?;
        if host.is_empty() {
            return Err("it names no host".to_owned());
        }
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
        let t =
            Target::parse("mysql://root@localhost/d?socket=%2Frun%2Fmysqld%2Fmysqld.sock").unwrap();
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
}
