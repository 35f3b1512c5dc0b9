//! PostgreSQL over the extended query protocol, with the maintained
//! `postgres` crate: each client connects once, prepares the statement
//! once, and binds each request's values as parameters. In the request
//! text `{name}` becomes `$1`, `$2`, … (the same name, the same number).

use std::fmt::Write as _;
use std::time::Duration;

use postgres::types::Type;
use postgres::{Client, NoTls, Statement};

use super::blocking::{Call, CONNECTION_LOST, FATAL, TIMED_OUT};
use super::request::Words;

/// A request's SQL with `$n` parameters, and the variable names behind them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sql {
    pub text: String,
    /// Variable of `$1`, `$2`, …
    pub params: Vec<String>,
}

impl Sql {
    /// Turn `{name}` placeholders into numbered parameters.
    pub fn parse(template: &str) -> Self {
        let mut text = String::new();
        let mut params: Vec<String> = Vec::new();
        let mut rest = template;
        while let Some(open) = rest.find('{') {
            let Some(close) = rest[open..].find('}').map(|c| open + c) else {
                break;
            };
            let name = &rest[open + 1..close];
            let valid =
                !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            text.push_str(&rest[..open]);
            if valid {
                let n = params.iter().position(|p| p == name).unwrap_or_else(|| {
                    params.push(name.to_owned());
                    params.len() - 1
                });
                let _ = write!(text, "${}", n + 1);
            } else {
                text.push_str(&rest[open..=close]);
            }
            rest = &rest[close + 1..];
        }
        text.push_str(rest);
        Self { text, params }
    }
}

/// One client connection with its prepared statement.
pub struct Postgres {
    client: Client,
    statement: Statement,
}

impl Postgres {
    /// Connect with a libpq-style connection string (`host=… port=… user=…`
    /// or `postgres://user@host:port/db`) and prepare `sql`.
    pub fn connect(conninfo: &str, sql: &str, timeout: Duration) -> Result<Self, String> {
        let mut config: postgres::Config = conninfo
            .parse()
            .map_err(|e| format!("connection string `{conninfo}`: {e}"))?;
        config.connect_timeout(timeout);
        let mut client = config
            .connect(NoTls)
            .map_err(|e| format!("connect to PostgreSQL ({conninfo}): {e}"))?;
        client
            .batch_execute(&format!("SET statement_timeout = {}", timeout.as_millis()))
            .map_err(|e| format!("SET statement_timeout: {e}"))?;
        // A statement the server refuses will never work: stop this client.
        let statement = client
            .prepare(sql)
            .map_err(|e| format!("{FATAL}prepare `{sql}`: {}", describe(&e)))?;
        Ok(Self { client, statement })
    }
}

/// The server's own words for an error, with its SQLSTATE.
fn describe(e: &postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => format!("{} (SQLSTATE {})", db.message(), db.code().code()),
        None => e.to_string(),
    }
}

/// A boxed SQL parameter value.
type Param = Box<dyn postgres::types::ToSql + Sync>;

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
    fn call(&mut self, words: &Words, _timeout: Duration) -> Result<bool, String> {
        let types = self.statement.params();
        let values: Vec<Param> = words
            .iter()
            .zip(types)
            .map(|(w, ty)| convert(w, ty))
            .collect::<Result<_, _>>()?;
        let refs: Vec<&(dyn postgres::types::ToSql + Sync)> =
            values.iter().map(AsRef::as_ref).collect();
        match self.client.query(&self.statement, &refs) {
            Ok(_) => Ok(true),
            Err(e) if e.code() == Some(&postgres::error::SqlState::QUERY_CANCELED) => {
                Err(format!("the query {TIMED_OUT}"))
            }
            // The server answered with an error: a failed request on a
            // connection that still works.
            Err(e) if e.as_db_error().is_some() => Err(format!("PostgreSQL: {}", describe(&e))),
            Err(e) => Err(format!("PostgreSQL {CONNECTION_LOST} {e}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_become_numbered_parameters() {
        let sql = Sql::parse("SELECT v FROM t WHERE id = {id} OR id = {id} + {step} -- {x y}");
        assert_eq!(
            sql.text,
            "SELECT v FROM t WHERE id = $1 OR id = $1 + $2 -- {x y}"
        );
        assert_eq!(sql.params, ["id", "step"]);
        assert!(Sql::parse("SELECT 1").params.is_empty());
    }
}
