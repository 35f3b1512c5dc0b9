//! MySQL and MariaDB over the binary protocol, spoken by the driver
//! itself (`mysql/`): one thread per client with a blocking socket, as
//! libmariadb's clients (sysbench) have, so a reply costs one `recv` and
//! no event loop. Each client connects once, prepares the statement once
//! (`COM_STMT_PREPARE`) and executes it with each request's values bound
//! as parameters (`COM_STMT_EXECUTE`), reading each result set to its end.
//! Every step (connect, login, prepare, execute) has the load's timeout: a
//! server that accepts connections and never answers costs a timeout, not
//! a hang. In the request text `{name}` becomes `?` (MySQL's parameters
//! are positional: a name used twice is bound twice, from the one value
//! the request drew for it). A value that reads as an integer is sent as
//! one, anything else as a string (MySQL converts it as the statement
//! needs; the server tells no parameter types).
//!
//! The URL is the address: `mysql://USER:PASS@HOST:PORT/DB`, or a unix
//! socket with `?socket=/path/to/mysqld.sock`. A TCP URL stays on TCP.

mod auth;
mod session;
mod url;
mod wire;

use std::time::Duration;

use self::session::{Error, Session, Statement};
use self::url::{Target, FORM};
use super::dburl::redact;
use super::kind::{Client, ClientSpec, DriverKind};
use crate::engine::blocking::Call;
use crate::engine::failure::Failure;
use crate::request::sql::{Sql, Style};
use crate::request::Words;

/// The `mysql` driver.
pub struct MysqlDriver;

impl DriverKind for MysqlDriver {
    fn name(&self) -> &'static str {
        "mysql"
    }

    fn url_form(&self) -> &'static str {
        FORM
    }

    fn default_port(&self) -> u16 {
        3306
    }

    fn url_is_address(&self) -> bool {
        true
    }

    fn default_request(&self, _path: &str) -> Option<String> {
        Some("SELECT 1".to_owned())
    }

    fn syntax(&self) -> &'static str {
        "one SQL statement, prepared once per client; each {NAME} becomes a\nparameter (?), an integer where the value is one, else a string:\n  -r \"SELECT c FROM sbtest1 WHERE id = {k}\""
    }

    fn sql(&self) -> bool {
        true
    }

    fn blocking(&self) -> bool {
        true
    }

    fn client<'a>(&self, spec: &ClientSpec<'a>) -> anyhow::Result<Client<'a>> {
        let sql = Sql::parse(spec.requests.statement(self.name())?, Style::Positional);
        let url = spec.address.unwrap_or_default().to_owned();
        let timeout = spec.timeout;
        Ok(Client::Blocking(Box::new(move || {
            Ok(Box::new(Mysql::connect(&url, &sql, timeout)?) as Box<dyn Call>)
        })))
    }
}

/// One client connection with its prepared statement.
pub struct Mysql {
    /// `None` only while being dropped.
    session: Option<Session>,
    statement: Statement,
    /// For each `?`, which of the request's words it binds.
    slots: Vec<usize>,
    url: String,
}

impl Mysql {
    /// Connect to `url` (`mysql://user:pass@host:port/db`, optionally
    /// `?socket=PATH`) and prepare `sql`, each step within `timeout`.
    pub fn connect(url: &str, sql: &Sql, timeout: Duration) -> Result<Self, Failure> {
        let shown = redact(url);
        let target = Target::parse(url).map_err(|why| {
            Failure::Fatal(format!(
                "MySQL URL `{shown}`: {why}\nhint: write {FORM} (a unix socket: append ?socket=/path/to/mysqld.sock)"
            ))
        })?;
        let mut session = Session::open(&target, timeout).map_err(|e| match e {
            Error::TimedOut => Failure::Connection(format!(
                "MySQL ({shown}): no answer to the handshake within {timeout:?}"
            )),
            Error::Unsupported(why) => Failure::Fatal(format!("MySQL ({shown}): {why}")),
            // Access denied (to the server, the database), an unknown
            // database: no retry mends them.
            Error::Server(e) if matches!(e.code, 1044 | 1045 | 1049 | 1698) => {
                Failure::Fatal(format!("MySQL ({shown}): {e}"))
            }
            e => Failure::Connection(format!("MySQL ({shown}): {e}")),
        })?;
        let text = sql.text.as_str();
        // A statement the server refuses will never work: stop this client.
        let statement = session.prepare(text).map_err(|e| match e {
            Error::Server(e) => Failure::Fatal(format!("prepare `{text}`: {e}")),
            Error::TimedOut => {
                Failure::Connection(format!("prepare `{text}`: no answer within {timeout:?}"))
            }
            e => Failure::Connection(format!("prepare `{text}`: {e}")),
        })?;
        if statement.params() != sql.slots.len() {
            let _ = session.quit();
            return Err(Failure::Fatal(format!(
                "prepare `{text}`: the server counts {} parameters (?) where the request binds {}\nhint: write each parameter as {{NAME}} with a --var NAME, and no ? of your own",
                statement.params(),
                sql.slots.len()
            )));
        }
        Ok(Self {
            session: Some(session),
            statement,
            slots: sql.slots.clone(),
            url: shown,
        })
    }
}

impl Call for Mysql {
    fn call(&mut self, words: &Words, timeout: Duration) -> Result<bool, Failure> {
        if let Some(&missing) = self.slots.iter().find(|&&i| i >= words.len()) {
            return Err(Failure::Fatal(format!(
                "the request has no value for parameter {}",
                missing + 1
            )));
        }
        let Some(session) = self.session.as_mut() else {
            return Err(Failure::Connection(format!(
                "MySQL ({}): the connection is closed",
                self.url
            )));
        };
        let slots = &self.slots;
        let answer = session
            .set_timeout(timeout)
            .and_then(|()| session.execute(&mut self.statement, |k| words.get(slots[k])));
        match answer {
            Ok(_rows) => Ok(true),
            // The server answered with an error: a failed request on a
            // connection that still works.
            Err(Error::Server(e)) => Err(Failure::Server(e.to_string())),
            // What the connection is waiting for is unknown now: the
            // engine drops it (a timeout drops the connection).
            Err(Error::TimedOut) => Err(Failure::Timeout(format!(
                "no answer to the query within {timeout:?}"
            ))),
            Err(Error::Protocol(why)) => {
                Err(Failure::Protocol(format!("MySQL ({}): {why}", self.url)))
            }
            Err(e) => Err(Failure::Connection(format!("MySQL ({}): {}", self.url, e))),
        }
    }
}

impl Drop for Mysql {
    /// Say goodbye (`COM_QUIT`) so the server logs no aborted connection;
    /// a server that does not take it within a second is left to notice.
    fn drop(&mut self) {
        if let Some(mut session) = self.session.take() {
            if session.set_timeout(Duration::from_secs(1)).is_ok() {
                let _ = session.quit();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_become_positional_parameters() {
        let sql = Sql::parse(
            "SELECT c FROM t WHERE id = {id} OR id = {id} + {step} -- {x y}",
            Style::Positional,
        );
        assert_eq!(
            sql.text,
            "SELECT c FROM t WHERE id = ? OR id = ? + ? -- {x y}"
        );
        assert_eq!(sql.params, ["id", "step"]);
        assert_eq!(sql.slots, [0, 0, 1]);
        assert!(Sql::parse("SELECT 1", Style::Positional).params.is_empty());
    }

    #[test]
    fn integers_are_sent_as_integers_and_the_rest_as_strings() {
        assert_eq!(session::integer(b"42"), Some(42));
        assert_eq!(session::integer(b"-7"), Some(-7));
        assert_eq!(session::integer(b"4.5"), None);
        assert_eq!(session::integer(b"key:1"), None);
        // Beyond a signed 64-bit integer: a string.
        assert_eq!(session::integer(b"18446744073709551615"), None);
    }

    #[test]
    fn a_bad_url_is_fatal_and_names_the_form() {
        let Err(Failure::Fatal(why)) = Mysql::connect(
            "mysql://[::1",
            &Sql::parse("SELECT 1", Style::Positional),
            Duration::from_secs(1),
        ) else {
            panic!("a bad URL must be fatal");
        };
        assert!(why.contains("mysql://USER:PASS@HOST:PORT/DB"), "{why}");
    }

    /// A listener that takes the connection and never greets: the
    /// handshake's read times out, it does not hang.
    #[test]
    fn a_server_that_never_greets_costs_the_timeout() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let url = format!("mysql://root@127.0.0.1:{port}/db");
        let began = std::time::Instant::now();
        let sql = Sql::parse("SELECT 1", Style::Positional);
        match Mysql::connect(&url, &sql, Duration::from_millis(300)) {
            Err(Failure::Connection(why)) => {
                assert!(
                    why.contains("no answer to the handshake within 300ms"),
                    "{why}"
                );
            }
            Err(other) => panic!("expected a connection failure, got {other:?}"),
            Ok(_) => panic!("nothing greets on {port}"),
        }
        let took = began.elapsed();
        assert!(
            took >= Duration::from_millis(300) && took < Duration::from_secs(3),
            "{took:?}"
        );
        drop(listener);
    }

    #[test]
    fn a_port_nobody_listens_on_is_a_connection_failure() {
        // Bind then drop: a port that refuses.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_or(1, |a| a.port());
        let url = format!("mysql://root:pw@127.0.0.1:{port}/db");
        match Mysql::connect(
            &url,
            &Sql::parse("SELECT 1", Style::Positional),
            Duration::from_secs(2),
        ) {
            Err(Failure::Connection(why)) => {
                assert!(why.contains("root:***@127.0.0.1"), "{why}");
                assert!(!why.contains("pw"), "{why}");
            }
            Err(other) => panic!("expected a connection failure, got {other:?}"),
            Ok(_) => panic!("nothing listens on {port}"),
        }
    }
}
