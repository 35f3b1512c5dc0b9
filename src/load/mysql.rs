//! MySQL and MariaDB over the binary protocol, with the maintained
//! `mysql_async` crate on a runtime of the client's own (as the postgres
//! driver does): each client connects once, prepares the statement once
//! (`COM_STMT_PREPARE`) and executes it with each request's values bound as
//! parameters (`COM_STMT_EXECUTE`). Every step (connect, prepare, execute)
//! has the load's timeout: a server that accepts connections and never
//! answers costs a timeout, not a hang. In the request text `{name}`
//! becomes `?` (MySQL's parameters are positional: a name used twice is
//! bound twice, from the one value the request drew for it). A value that reads as an integer is sent as one, anything
//! else as a string (MySQL converts it as the statement needs; the server
//! tells no parameter types).
//!
//! The URL is the address: `mysql://USER:PASS@HOST:PORT/DB`, or a unix
//! socket with `?socket=/path/to/mysqld.sock`. A TCP URL stays on TCP
//! (`mysql_async` would otherwise ask the server for its socket and move
//! there, measuring another path than the one named).

use std::time::Duration;

use mysql_async::prelude::Queryable as _;
use mysql_async::{Conn, Opts, OptsBuilder, Statement, Value};
use tokio::runtime::Runtime;

use super::blocking::Call;
use super::driver::DriverKind;
use super::failure::Failure;
use super::request::Words;
use super::sql::{runtime, within, Sql, Style};
use super::LoadSpec;

/// The `mysql` driver.
pub struct MysqlDriver;

impl DriverKind for MysqlDriver {
    fn name(&self) -> &'static str {
        "mysql"
    }

    fn url_form(&self) -> &'static str {
        "mysql://USER:PASS@HOST:PORT/DB"
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

    fn client<'a>(&self, spec: &'a LoadSpec) -> anyhow::Result<super::driver::Client<'a>> {
        let sql = Sql::parse(spec.requests.statement(self.name())?, Style::Positional);
        let url = spec.address.clone().unwrap_or_default();
        let timeout = spec.timeout;
        Ok(super::driver::Client::Blocking(Box::new(move || {
            Ok(Box::new(Mysql::connect(&url, &sql, timeout)?) as Box<dyn Call>)
        })))
    }
}

/// One client connection with its prepared statement.
pub struct Mysql {
    runtime: Runtime,
    /// `None` only while being dropped.
    conn: Option<Conn>,
    statement: Statement,
    /// For each `?`, which of the request's words it binds.
    slots: Vec<usize>,
    url: String,
}

/// The URL without its password, for messages.
fn redact(url: &str) -> String {
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

impl Mysql {
    /// Connect to `url` (`mysql://user:pass@host:port/db`, optionally
    /// `?socket=PATH`) and prepare `sql`, each step within `timeout`.
    pub fn connect(url: &str, sql: &Sql, timeout: Duration) -> Result<Self, Failure> {
        let shown = redact(url);
        let slots = sql.slots.clone();
        let sql = sql.text.as_str();
        let opts = Opts::from_url(url).map_err(|e| {
            Failure::Fatal(format!(
                "MySQL URL `{shown}`: {e}\nhint: write mysql://USER:PASS@HOST:PORT/DB (a unix socket: append ?socket=/path/to/mysqld.sock)"
            ))
        })?;
        let opts = OptsBuilder::from_opts(opts).prefer_socket(false);
        let runtime = runtime("mysql")?;
        let mut conn = within(&runtime, timeout, Conn::new(opts))
            .ok_or_else(|| {
                Failure::Connection(format!(
                    "MySQL ({shown}): no answer to the handshake within {timeout:?}"
                ))
            })?
            .map_err(|e| Failure::Connection(format!("MySQL ({shown}): {}", describe(&e))))?;
        // A statement the server refuses will never work: stop this client.
        let prepared = within(&runtime, timeout, conn.prep(sql));
        let statement = match prepared {
            Some(Ok(statement)) => statement,
            Some(Err(e)) if matches!(e, mysql_async::Error::Server(_)) => {
                return Err(Failure::Fatal(format!("prepare `{sql}`: {}", describe(&e))))
            }
            Some(Err(e)) => {
                return Err(Failure::Connection(format!(
                    "prepare `{sql}`: {}",
                    describe(&e)
                )))
            }
            None => {
                return Err(Failure::Connection(format!(
                    "prepare `{sql}`: no answer within {timeout:?}"
                )))
            }
        };
        Ok(Self {
            runtime,
            conn: Some(conn),
            statement,
            slots,
            url: shown,
        })
    }
}

/// The server's own words for an error, with its code and SQLSTATE.
fn describe(e: &mysql_async::Error) -> String {
    match e {
        mysql_async::Error::Server(s) => {
            format!("{} (error {}, SQLSTATE {})", s.message, s.code, s.state)
        }
        other => other.to_string(),
    }
}

/// A request's value as a parameter: an integer where it reads as one.
fn value(word: &[u8]) -> Value {
    std::str::from_utf8(word)
        .ok()
        .and_then(|text| text.parse::<i64>().ok())
        .map_or_else(|| Value::Bytes(word.to_vec()), Value::Int)
}

impl Call for Mysql {
    fn call(&mut self, words: &Words, timeout: Duration) -> Result<bool, Failure> {
        let params = self
            .slots
            .iter()
            .map(|&i| {
                if i < words.len() {
                    Ok(value(words.get(i)))
                } else {
                    Err(Failure::Fatal(format!(
                        "the request has no value for parameter {}",
                        i + 1
                    )))
                }
            })
            .collect::<Result<Vec<Value>, Failure>>()?;
        let Some(conn) = self.conn.as_mut() else {
            return Err(Failure::Connection(format!(
                "MySQL ({}): the connection is closed",
                self.url
            )));
        };
        let Some(answer) = within(
            &self.runtime,
            timeout,
            conn.exec_drop(&self.statement, params),
        ) else {
            // What the connection is waiting for is unknown now: drop it
            // (a timeout drops the connection).
            return Err(Failure::Timeout(format!(
                "no answer to the query within {timeout:?}"
            )));
        };
        match answer {
            Ok(()) => Ok(true),
            // The server answered with an error: a failed request on a
            // connection that still works.
            Err(e @ mysql_async::Error::Server(_)) => Err(Failure::Server(describe(&e))),
            Err(e) => Err(Failure::Connection(format!(
                "MySQL ({}): {}",
                self.url,
                describe(&e)
            ))),
        }
    }
}

impl Drop for Mysql {
    /// Say goodbye (`COM_QUIT`) so the server logs no aborted connection;
    /// a server that does not take it within a second is left to notice.
    fn drop(&mut self) {
        if let Some(conn) = self.conn.take() {
            let _ = within(&self.runtime, Duration::from_secs(1), conn.disconnect());
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
        assert_eq!(value(b"42"), Value::Int(42));
        assert_eq!(value(b"-7"), Value::Int(-7));
        assert_eq!(value(b"4.5"), Value::Bytes(b"4.5".to_vec()));
        assert_eq!(value(b"key:1"), Value::Bytes(b"key:1".to_vec()));
    }

    #[test]
    fn passwords_are_left_out_of_messages() {
        assert_eq!(
            redact("mysql://root:secret@127.0.0.1:3306/db"),
            "mysql://root:***@127.0.0.1:3306/db"
        );
        assert_eq!(redact("mysql://root@h/db"), "mysql://root@h/db");
    }

    #[test]
    fn a_bad_url_is_fatal_and_names_the_form() {
        let Err(Failure::Fatal(why)) = Mysql::connect("mysql://[::1", &Sql::parse("SELECT 1", Style::Positional), Duration::from_secs(1))
        else {
            panic!("a bad URL must be fatal");
        };
        assert!(why.contains("mysql://USER:PASS@HOST:PORT/DB"), "{why}");
    }

    #[test]
    fn a_port_nobody_listens_on_is_a_connection_failure() {
        // Bind then drop: a port that refuses.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_or(1, |a| a.port());
        let url = format!("mysql://root:pw@127.0.0.1:{port}/db");
        match Mysql::connect(&url, &Sql::parse("SELECT 1", Style::Positional), Duration::from_secs(2)) {
            Err(Failure::Connection(why)) => {
                assert!(why.contains("root:***@127.0.0.1"), "{why}");
                assert!(!why.contains("pw"), "{why}");
            }
            Err(other) => panic!("expected a connection failure, got {other:?}"),
            Ok(_) => panic!("nothing listens on {port}"),
        }
    }
}
