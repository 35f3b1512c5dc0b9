//! PostgreSQL over the extended query protocol, with the maintained
//! `tokio-postgres` crate on a runtime of the client's own: each client
//! connects once, prepares the statement once, and binds each request's
//! values as parameters. Every step (connect, start-up, prepare, query) has
//! the load's timeout: a server that accepts connections and never answers
//! (or answers garbage) costs a timeout, not a hang. In the request text
//! `{name}` becomes `$1`, `$2`, … (the same name, the same number).

use std::time::Duration;

use tokio::runtime::Runtime;
use tokio_postgres::types::Type;
use tokio_postgres::{Client, NoTls, Statement};

use super::blocking::Call;
use super::driver::DriverKind;
use super::failure::Failure;
use super::request::Words;
use super::sql::{runtime, within, Sql, Style};
use super::LoadSpec;

/// The `postgres` driver.
pub struct PostgresDriver;

impl DriverKind for PostgresDriver {
    fn name(&self) -> &'static str {
        "postgres"
    }

    fn url_form(&self) -> &'static str {
        "postgres://USER@HOST:PORT/DB"
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

    fn client<'a>(&self, spec: &'a LoadSpec) -> anyhow::Result<super::driver::Client<'a>> {
        let sql = Sql::parse(spec.requests.statement(self.name())?, Style::Numbered).text;
        let conninfo = spec.address.clone().unwrap_or_default();
        let timeout = spec.timeout;
        Ok(super::driver::Client::Blocking(Box::new(move || {
            Ok(Box::new(Postgres::connect(&conninfo, &sql, timeout)?) as Box<dyn Call>)
        })))
    }
}

/// One client connection with its prepared statement.
pub struct Postgres {
    runtime: Runtime,
    client: Client,
    statement: Statement,
}

impl Postgres {
    /// Connect with a libpq-style connection string (`host=… port=… user=…`
    /// or `postgres://user@host:port/db`) and prepare `sql`, each step
    /// within `timeout`.
    pub fn connect(conninfo: &str, sql: &str, timeout: Duration) -> Result<Self, Failure> {
        let mut config: tokio_postgres::Config = conninfo
            .parse()
            .map_err(|e| Failure::Fatal(format!("connection string `{conninfo}`: {e}")))?;
        config.connect_timeout(timeout);
        let runtime = runtime("postgres")?;
        let (client, connection) = within(&runtime, timeout, config.connect(NoTls))
            .ok_or_else(|| {
                Failure::Connection(format!(
                    "PostgreSQL ({conninfo}): no answer to the start-up within {timeout:?}"
                ))
            })?
            .map_err(|e| Failure::Connection(format!("PostgreSQL ({conninfo}): {e}")))?;
        // The connection's task runs whenever the client waits on it.
        runtime.spawn(connection);
        let set = format!("SET statement_timeout = {}", timeout.as_millis());
        within(&runtime, timeout, client.batch_execute(&set))
            .ok_or_else(|| {
                Failure::Connection(format!(
                    "SET statement_timeout: no answer within {timeout:?}"
                ))
            })?
            .map_err(|e| Failure::Connection(format!("SET statement_timeout: {e}")))?;
        // A statement the server refuses will never work: stop this client.
        let statement = within(&runtime, timeout, client.prepare(sql))
            .ok_or_else(|| {
                Failure::Connection(format!("prepare `{sql}`: no answer within {timeout:?}"))
            })?
            .map_err(|e| Failure::Fatal(format!("prepare `{sql}`: {}", describe(&e))))?;
        Ok(Self {
            runtime,
            client,
            statement,
        })
    }
}

/// The server's own words for an error, with its SQLSTATE.
fn describe(e: &tokio_postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => format!("{} (SQLSTATE {})", db.message(), db.code().code()),
        None => e.to_string(),
    }
}

/// A boxed SQL parameter value.
type Param = Box<dyn tokio_postgres::types::ToSql + Sync>;

fn convert(value: &[u8], ty: &Type) -> Result<Param, String> {
    let text = std::str::from_utf8(value).map_err(|e| e.to_string())?;
    let bad = |e: &dyn std::fmt::Display| format!("`{text}` as {ty}: {e}");
    Ok(match *ty {
        Type::INT2 => Box::new(text.parse::<i16>().map_err(|e| bad(&e))?),
        Type::INT4 => Box::new(text.parse::<i32>().map_err(|e| bad(&e))?),
        Type::INT8 => Box::new(text.parse::<i64>().map_err(|e| bad(&e))?),
        Type::FLOAT4 => Box::new(text.parse::<f32>().map_err(|e| bad(&e))?),
        Type::FLOAT8 => Box::new(text.parse::<f64>().map_err(|e| bad(&e))?),
        Type::BOOL => Box::new(text.parse::<bool>().map_err(|e| bad(&e))?),
        _ => Box::new(text.to_owned()),
    })
}

impl Call for Postgres {
    fn call(&mut self, words: &Words, timeout: Duration) -> Result<bool, Failure> {
        let types = self.statement.params();
        let values: Vec<Param> = words
            .iter()
            .zip(types)
            .map(|(w, ty)| convert(w, ty))
            .collect::<Result<_, _>>()
            .map_err(Failure::Fatal)?;
        let refs: Vec<&(dyn tokio_postgres::types::ToSql + Sync)> =
            values.iter().map(AsRef::as_ref).collect();
        let Some(answer) = within(
            &self.runtime,
            timeout,
            self.client.query(&self.statement, &refs),
        ) else {
            // What the connection is waiting for is unknown now: drop it
            // (a timeout drops the connection).
            return Err(Failure::Timeout(format!(
                "no answer to the query within {timeout:?}"
            )));
        };
        match answer {
            Ok(_) => Ok(true),
            // Classified by SQLSTATE: 57014 is the statement_timeout.
            Err(e) if e.code() == Some(&tokio_postgres::error::SqlState::QUERY_CANCELED) => Err(
                Failure::Server(format!("statement_timeout: {}", describe(&e))),
            ),
            // The server answered with an error: a failed request on a
            // connection that still works.
            Err(e) if e.as_db_error().is_some() => Err(Failure::Server(describe(&e))),
            Err(e) => Err(Failure::Connection(format!("PostgreSQL: {e}"))),
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
}
