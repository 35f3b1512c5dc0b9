//! The server a PostgreSQL URL names, read as libpq reads the URL itself
//! (no `PG*` environment variables, no `~/.pgpass`; the host and the user
//! must be named):
//! `postgres://USER:PASS@HOST:PORT/DB?KEY=VALUE&…` (or `postgresql://`),
//! each part percent-decoded, and a keyword in the query (`host`, `port`,
//! `user`, `password`, `dbname`, …) above the part it names. A host that
//! begins with `/` is the directory of the server's unix socket
//! (`.s.PGSQL.PORT` in it), as libpq has it:
//! `postgres://USER@%2Fvar%2Frun%2Fpostgresql/DB` or
//! `postgres:///DB?host=/var/run/postgresql&user=USER`. The database is
//! the user's name unless given. The driver speaks no TLS: `sslmode`
//! `disable`, `allow` and `prefer` connect without it, the others are
//! refused.

use std::path::PathBuf;

use crate::drivers::dburl::{decode, split_port};

/// Where and as whom to connect.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub user: String,
    pub password: Option<String>,
    pub host: Host,
    pub port: u16,
    pub database: String,
    pub application_name: Option<String>,
}

/// A TCP host, or the unix socket's directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Host {
    Tcp(String),
    Socket(PathBuf),
}

/// The server's unix socket in `dir` for `port`.
pub fn socket_in(dir: &std::path::Path, port: u16) -> PathBuf {
    dir.join(format!(".s.PGSQL.{port}"))
}

/// The URL form, for hints.
pub const FORM: &str = "postgres://USER@HOST:PORT/DB";

/// The keywords this driver reads.
const KEYWORDS: &str =
    "host, port, user, password, dbname, sslmode, application_name, connect_timeout";

/// What a URL says, keyword by keyword, before defaults.
#[derive(Debug, Default)]
struct Said {
    user: Option<String>,
    password: Option<String>,
    host: Option<String>,
    port: Option<u16>,
    database: Option<String>,
    application_name: Option<String>,
}

impl Said {
    /// Take one `keyword=value`.
    fn set(&mut self, keyword: &str, value: String) -> Result<(), String> {
        match keyword {
            "host" => self.host = Some(value),
            "port" => {
                self.port = Some(
                    value
                        .parse()
                        .map_err(|_| format!("the port `{value}` is not a number from 0 to 65535"))?,
                );
            }
            "user" => self.user = Some(value),
            "password" => self.password = Some(value),
            "dbname" => self.database = Some(value),
            "application_name" => self.application_name = Some(value),
            "sslmode" => match value.as_str() {
                "disable" | "allow" | "prefer" => {}
                "require" | "verify-ca" | "verify-full" => {
                    return Err(format!(
                        "sslmode={value}: this driver speaks no TLS (load a server over loopback or its unix socket, with sslmode=disable)"
                    ))
                }
                other => {
                    return Err(format!(
                        "sslmode `{other}` is none of disable, allow, prefer, require, verify-ca, verify-full"
                    ))
                }
            },
            // Each connect has the load's timeout.
            "connect_timeout" => {}
            other => {
                return Err(format!(
                    "unknown keyword `{other}` (this driver reads {KEYWORDS})"
                ))
            }
        }
        Ok(())
    }

    fn finish(self) -> Result<Target, String> {
        let user = self
            .user
            .filter(|u| !u.is_empty())
            .ok_or("it names no user")?;
        let host = self.host.unwrap_or_default();
        if host.contains(',') {
            return Err(format!("`{host}` names several hosts; name one"));
        }
        let host = if host.is_empty() {
            return Err("it names no host (a unix socket: host=/var/run/postgresql)".to_owned());
        } else if host.starts_with('/') {
            Host::Socket(PathBuf::from(host))
        } else {
            Host::Tcp(host)
        };
        Ok(Target {
            database: self
                .database
                .filter(|d| !d.is_empty())
                .unwrap_or_else(|| user.clone()),
            user,
            password: self.password,
            host,
            port: self.port.unwrap_or(5432),
            application_name: self.application_name,
        })
    }
}

impl Target {
    /// Parse `url`; `Err` says what is wrong with it (without the
    /// password).
    pub fn parse(url: &str) -> Result<Self, String> {
        let rest = url
            .strip_prefix("postgres://")
            .or_else(|| url.strip_prefix("postgresql://"))
            .ok_or("it does not begin with postgres://")?;
        parse_url(rest)
    }
}

fn parse_url(rest: &str) -> Result<Target, String> {
    let (rest, query) = rest.split_once('?').unwrap_or((rest, ""));
    let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
    let (userinfo, hostport) = authority.rsplit_once('@').unwrap_or(("", authority));
    let (user, password) = match userinfo.split_once(':') {
        Some((u, p)) => (u, Some(p)),
        None => (userinfo, None),
    };
    let (host, port) = split_port(hostport, 5432)?;
    let mut said = Said {
        user: Some(decode(user, "the user")?),
        password: password.map(|p| decode(p, "the password")).transpose()?,
        host: Some(decode(&host, "the host")?),
        port: Some(port),
        database: Some(decode(path, "the database")?),
        application_name: None,
    };
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (keyword, value) = pair.split_once('=').unwrap_or((pair, ""));
        said.set(keyword, decode(value, keyword)?)?;
    }
    said.finish()
}

/// The URL without its password, for messages.
pub fn redact(url: &str) -> String {
    let url = crate::drivers::dburl::redact(url);
    match url.split_once('?') {
        Some((base, query)) => {
            let pairs: Vec<String> = query
                .split('&')
                .map(|p| match p.split_once('=') {
                    Some(("password", _)) => "password=***".to_owned(),
                    _ => p.to_owned(),
                })
                .collect();
            format!("{base}?{}", pairs.join("&"))
        }
        None => url,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_url_names_user_password_host_port_and_database() {
        let t = Target::parse("postgres://ab:p%40ss@127.0.0.1:5433/bench%20db").unwrap();
        assert_eq!(
            t,
            Target {
                user: "ab".into(),
                password: Some("p@ss".into()),
                host: Host::Tcp("127.0.0.1".into()),
                port: 5433,
                database: "bench db".into(),
                application_name: None,
            }
        );
        // The database defaults to the user's name, the port to 5432.
        let t = Target::parse("postgresql://postgres@db.example").unwrap();
        assert_eq!(
            (t.port, t.database.as_str(), t.password),
            (5432, "postgres", None)
        );
        let t =
            Target::parse("postgres://u@[::1]:6000/d?sslmode=disable&application_name=ab").unwrap();
        assert_eq!(t.host, Host::Tcp("::1".into()));
        assert_eq!(t.application_name.as_deref(), Some("ab"));
    }

    #[test]
    fn a_host_that_is_a_directory_is_the_unix_socket() {
        for text in [
            "postgres://postgres@%2Fvar%2Frun%2Fpostgresql:5433/d",
            "postgres:///d?host=/var/run/postgresql&port=5433&user=postgres",
        ] {
            let t = Target::parse(text).unwrap();
            let Host::Socket(dir) = &t.host else {
                panic!("{text}: {t:?}");
            };
            assert_eq!(
                socket_in(dir, t.port),
                PathBuf::from("/var/run/postgresql/.s.PGSQL.5433"),
                "{text}"
            );
            assert_eq!((t.user.as_str(), t.database.as_str()), ("postgres", "d"));
        }
    }

    #[test]
    fn bad_strings_say_what_is_wrong() {
        let cases = [
            ("postgres://h/d", "no user"),
            ("postgres://u@/d", "no host"),
            ("postgres://u@h:x/d", "`x` is not a number"),
            ("postgres://u@h/d?sslmode=require", "speaks no TLS"),
            ("postgres://u@h/d?sslmode=maybe", "sslmode `maybe`"),
            ("postgres://u@h/d?pool=4", "unknown keyword `pool`"),
            ("postgres://u@a,b/d", "several hosts"),
            ("mysql://u@h/d", "does not begin with postgres://"),
        ];
        for (text, says) in cases {
            let why = Target::parse(text).unwrap_err();
            assert!(why.contains(says), "{text}: {why}");
        }
    }

    #[test]
    fn passwords_are_left_out_of_messages() {
        assert_eq!(redact("postgres://u:secret@h/d"), "postgres://u:***@h/d");
        assert_eq!(
            redact("postgres://u@h/d?password=secret&sslmode=disable"),
            "postgres://u@h/d?password=***&sslmode=disable"
        );
    }
}
