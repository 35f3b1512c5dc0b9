//! PostgreSQL over the extended query protocol, spoken by the driver
//! itself (`postgres/`): one thread per client with a blocking socket, as
//! pgbench's clients have, so a reply costs one `recv` and no event loop.
//! Each client connects once, parses the statement once and binds each
//! request's values as text parameters (the server types them as the
//! statement needs). Every step (connect, start-up, prepare, query) has
//! the load's timeout: a server that accepts connections and never
//! answers (or answers garbage) costs a timeout, not a hang. The server's
//! `statement_timeout` is a little longer ([`statement_timeout`]): the
//! client's deadline alone decides what is a timeout, and the server
//! cancels a query the client gave up on soon after. In the request text
//! `{name}` becomes `$1`, `$2`, … (the same name, the same number).
//!
//! The address is a libpq URL (`postgres://USER:PASS@HOST:PORT/DB`); a
//! host that begins with `/` is the unix socket's directory.

mod auth;
mod conninfo;
mod message;
mod session;

use std::time::Duration;

use self::conninfo::{redact, Target, FORM};
use self::session::{Error, Session};
use super::kind::{Client, ClientSpec, DriverKind};
use crate::engine::blocking::Call;
use crate::engine::failure::Failure;
use crate::request::sql::{Sql, Style};
use crate::request::Words;

/// The `postgres` driver.
pub struct PostgresDriver;

impl DriverKind for PostgresDriver {
    fn name(&self) -> &'static str {
        "postgres"
    }

    fn url_form(&self) -> &'static str {
        FORM
    }

    fn default_port(&self) -> u16 {
        5432
    }

    fn url_is_address(&self) -> bool {
        true
    }

    fn default_request(&self, _path: &str) -> Option<String> {
        Some("SELECT 1".to_owned())
    }

    fn syntax(&self) -> &'static str {
        "one SQL statement, prepared once per client; each {NAME} becomes a\nparameter ($1, $2, ...) typed as the statement needs:\n  -r \"SELECT abalance FROM pgbench_accounts WHERE aid = {k}\""
    }

    fn sql(&self) -> bool {
        true
    }

    fn blocking(&self) -> bool {
        true
    }

    fn client<'a>(&self, spec: &ClientSpec<'a>) -> anyhow::Result<Client<'a>> {
        let sql = Sql::parse(spec.requests.statement(self.name())?, Style::Numbered);
        let conninfo = spec.address.unwrap_or_default().to_owned();
        let timeout = spec.timeout;
        Ok(Client::Blocking(Box::new(move || {
            Ok(Box::new(Postgres::connect(&conninfo, &sql, timeout)?) as Box<dyn Call>)
        })))
    }
}

/// One client connection with its prepared statement.
pub struct Postgres {
    /// `None` only while being dropped.
    session: Option<Session>,
    /// How many of the request's words the statement binds.
    params: usize,
    shown: String,
}

impl Postgres {
    /// Connect with a libpq connection string (`postgres://user@host:port/db`
    /// or `host=… port=… user=…`), set the server's `statement_timeout`
    /// and prepare `sql`, each step within `timeout`.
    pub fn connect(conninfo: &str, sql: &Sql, timeout: Duration) -> Result<Self, Failure> {
        let shown = redact(conninfo);
        let target = Target::parse(conninfo).map_err(|why| {
            Failure::Fatal(format!(
                "connection string `{shown}`: {why}\nhint: write {FORM} (a unix socket: postgres:///DB?host=/var/run/postgresql&user=USER)"
            ))
        })?;
        let failed = |step: &str, e: Error| match e {
            Error::TimedOut => Failure::Connection(format!(
                "PostgreSQL ({shown}): no answer to the {step} within {timeout:?}"
            )),
            Error::Unsupported(why) => Failure::Fatal(format!("PostgreSQL ({shown}): {why}")),
            // A wrong password, a user without access, a database that is
            // not there: no retry mends them.
            Error::Server(e) if e.is_final() => {
                Failure::Fatal(format!("PostgreSQL ({shown}): {e}"))
            }
            e => Failure::Connection(format!("PostgreSQL ({shown}): {step}: {e}")),
        };
        let mut session = Session::open(&target, timeout).map_err(|e| failed("start-up", e))?;
        session
            .simple(&format!(
                "SET statement_timeout = {}",
                statement_timeout(timeout).as_millis()
            ))
            .map_err(|e| failed("SET statement_timeout", e))?;
        let text = sql.text.as_str();
        // A statement the server refuses will never work: stop this client.
        let params = session.prepare(text).map_err(|e| match e {
            // A lock, a deadlock, a cancel, the server short of resources:
            // another try may prepare it.
            Error::Server(e) if e.is_transient() => {
                Failure::Connection(format!("prepare `{text}`: {e}"))
            }
            Error::Server(e) => Failure::Fatal(format!("prepare `{text}`: {e}")),
            e => failed(&format!("prepare `{text}`"), e),
        })?;
        if params != sql.params.len() {
            let _ = session.terminate();
            return Err(Failure::Fatal(format!(
                "prepare `{text}`: the server counts {params} parameters where the request binds {}\nhint: write each parameter as {{NAME}} with a --var NAME, and no $N of your own",
                sql.params.len()
            )));
        }
        Ok(Self {
            session: Some(session),
            params,
            shown,
        })
    }
}

/// The server's `statement_timeout` for a load's `timeout`: a tenth
/// longer, at least 100 ms, so that the client's deadline (which starts
/// before the query is sent) always comes first.
fn statement_timeout(timeout: Duration) -> Duration {
    timeout + (timeout / 10).max(Duration::from_millis(100))
}

impl Call for Postgres {
    fn call(&mut self, words: &Words, timeout: Duration) -> Result<bool, Failure> {
        if words.len() < self.params {
            return Err(Failure::Fatal(format!(
                "the request has no value for parameter ${}",
                words.len() + 1
            )));
        }
        let Some(session) = self.session.as_mut() else {
            return Err(Failure::Connection(format!(
                "PostgreSQL ({}): the connection is closed",
                self.shown
            )));
        };
        let answer = session
            .set_timeout(timeout)
            .and_then(|()| session.execute(|i| words.get(i)));
        match answer {
            Ok(_rows) => Ok(true),
            // 57014: the server cancelled the query (an administrator, a
            // lower statement_timeout of the role's own).
            Err(Error::Server(e)) if e.code == "57014" => {
                Err(Failure::Server(format!("cancelled: {e}")))
            }
            // The server answered with an error: a failed request on a
            // connection that still works.
            Err(Error::Server(e)) => Err(Failure::Server(e.to_string())),
            // What the connection is waiting for is unknown now: the
            // engine drops it (a timeout drops the connection).
            Err(Error::TimedOut) => Err(Failure::Timeout(format!(
                "no answer to the query within {timeout:?}"
            ))),
            Err(Error::Protocol(why)) => Err(Failure::Protocol(format!(
                "PostgreSQL ({}): {why}",
                self.shown
            ))),
            Err(e) => Err(Failure::Connection(format!(
                "PostgreSQL ({}): {}",
                self.shown, e
            ))),
        }
    }
}

impl Drop for Postgres {
    /// Say goodbye (`Terminate`) so the server logs no lost connection; a
    /// server that does not take it within a second is left to notice.
    fn drop(&mut self) {
        if let Some(mut session) = self.session.take() {
            if session.set_timeout(Duration::from_secs(1)).is_ok() {
                let _ = session.terminate();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_become_numbered_parameters() {
        let sql = Sql::parse(
            "SELECT v FROM t WHERE id = {id} OR id = {id} + {step} -- {x y}",
            Style::Numbered,
        );
        assert_eq!(
            sql.text,
            "SELECT v FROM t WHERE id = $1 OR id = $1 + $2 -- {x y}"
        );
        assert_eq!(sql.params, ["id", "step"]);
        assert!(Sql::parse("SELECT 1", Style::Numbered).params.is_empty());
    }

    #[test]
    fn a_bad_url_is_fatal_and_names_the_form() {
        let sql = Sql::parse("SELECT 1", Style::Numbered);
        let Err(Failure::Fatal(why)) =
            Postgres::connect("postgres://u:secret@h:x/d", &sql, Duration::from_secs(1))
        else {
            panic!("a bad string must be fatal");
        };
        assert!(
            why.contains(FORM) && why.contains("?host=/var/run/postgresql"),
            "{why}"
        );
        assert!(!why.contains("secret"), "{why}");
    }

    /// A listener that takes the connection and never answers the
    /// start-up: the read times out, it does not hang.
    #[test]
    fn a_server_that_never_answers_costs_the_timeout() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let began = std::time::Instant::now();
        let sql = Sql::parse("SELECT 1", Style::Numbered);
        match Postgres::connect(
            &format!("postgres://u@127.0.0.1:{port}/d"),
            &sql,
            Duration::from_millis(300),
        ) {
            Err(Failure::Connection(why)) => {
                assert!(
                    why.contains("no answer to the start-up within 300ms"),
                    "{why}"
                );
            }
            Err(other) => panic!("expected a connection failure, got {other:?}"),
            Ok(_) => panic!("nothing answers on {port}"),
        }
        let took = began.elapsed();
        assert!(
            took >= Duration::from_millis(300) && took < Duration::from_secs(3),
            "{took:?}"
        );
        drop(listener);
    }
}
