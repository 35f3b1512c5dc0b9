//! What a load driver is: its name and URL, its default port and request,
//! its request syntax (for `load --help` and the README), and how its
//! clients talk — over the event-loop engine with a [`Protocol`], or one
//! blocking call per request ([`blocking::Call`]). [`Driver`] is a handle
//! on one, compared, printed and recorded by its name.

use std::fmt::Write as _;

use anyhow::Result;

use super::blocking;
use super::failure::Failure;
use super::protocol::Protocol;
use super::LoadSpec;

/// Makes one blocking client's connection.
pub type Connect<'a> = Box<dyn Fn() -> Result<Box<dyn blocking::Call>, Failure> + Sync + 'a>;

/// How a driver's clients send requests.
pub enum Client<'a> {
    /// Non-blocking connections on the event loop, speaking this protocol.
    Engine(Box<dyn Protocol + 'a>),
    /// A thread per client, one blocking call per request.
    Blocking(Connect<'a>),
}

/// One load driver.
pub trait DriverKind: Sync {
    /// The URL scheme and the experiment's `driver = "…"`.
    fn name(&self) -> &'static str;
    /// The URL form, for hints: `redis://HOST:PORT`.
    fn url_form(&self) -> &'static str;
    /// The port a URL without one gets.
    fn default_port(&self) -> u16;
    /// Whether the whole URL is the address (a libpq connection string).
    fn url_is_address(&self) -> bool {
        false
    }
    /// The request sent when none is given (`path`: the URL's).
    fn default_request(&self, path: &str) -> Option<String>;
    /// What a request is, then examples, for `load --help`.
    fn syntax(&self) -> &'static str;
    /// Whether requests are SQL with `{NAME}` parameters rather than
    /// shell-quoted words.
    fn sql(&self) -> bool {
        false
    }
    /// Whether each client is a thread making blocking calls (bounded by
    /// threads, not descriptors).
    fn blocking(&self) -> bool {
        false
    }
    /// How its clients talk, for `spec`.
    fn client<'a>(&self, spec: &'a LoadSpec) -> Result<Client<'a>>;
    /// The server's own count of the commands it ran and the time it spent
    /// in them so far (Redis `INFO commandstats`), where it keeps one;
    /// the difference over a run is the server-side latency.
    fn server_time(&self, _address: &str, _timeout: std::time::Duration) -> Option<ServerTime> {
        None
    }
    /// Whether `request` (a template's text) looks keys up, each found or
    /// missed (a memcached retrieval): its load then has a hit rate.
    fn looks_up(&self, _request: &str) -> bool {
        false
    }
    /// Whether [`DriverKind::server_time`] reads anything.
    fn keeps_server_time(&self) -> bool {
        false
    }
}

/// The metric of a server's mean time per command over a run, in µs.
pub const SERVER_MEAN: &str = "server_mean";

/// Commands a server ran and the time it spent running them.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ServerTime {
    pub calls: u64,
    /// Microseconds.
    pub busy_us: u64,
}

impl ServerTime {
    /// Mean time per command between `self` and a later reading, in µs.
    pub fn mean_us_until(self, later: ServerTime) -> Option<f64> {
        let calls = later.calls.checked_sub(self.calls)?;
        let us = later.busy_us.checked_sub(self.busy_us)?;
        (calls > 0).then(|| us as f64 / calls as f64)
    }
}

/// A load driver, by name.
#[derive(Clone, Copy)]
pub struct Driver(pub &'static dyn DriverKind);

impl Driver {
    pub const REDIS: Driver = Driver(&super::redis::Redis);
    pub const MEMCACHED: Driver = Driver(&super::memcached::Memcached);
    pub const HTTP: Driver = Driver(&super::http::HttpDriver);
    pub const EXEC: Driver = Driver(&super::exec::ExecDriver);
    pub const POSTGRES: Driver = Driver(&super::postgres::PostgresDriver);

    /// The driver named `name`.
    pub fn from_name(name: &str) -> Option<Self> {
        super::DRIVERS.iter().find(|d| d.name() == name).copied()
    }

    /// Every driver's name, for hints: `redis, memcached, …`.
    pub fn names() -> String {
        super::DRIVERS
            .iter()
            .map(|d| d.name())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

crate::named_handle!(Driver, DriverKind, name, |name| {
    Driver::from_name(name)
        .ok_or_else(|| format!("unknown driver `{name}`; the drivers: {}", Driver::names()))
});

/// `load --help`'s request syntax, from every driver's own.
pub fn request_syntax() -> String {
    let mut out =
        String::from("Requests, per driver (words split as a shell would; {NAME} is a --var):\n");
    for d in super::DRIVERS {
        let mut lines = d.syntax().lines();
        let _ = writeln!(
            out,
            "  {:<10} {}",
            d.name(),
            lines.next().unwrap_or_default()
        );
        for line in lines {
            let _ = writeln!(out, "             {line}");
        }
    }
    out.push_str(
        "Variables: --var k=uniform:LO:HI | zipf:LO:HI[:THETA] | seq:LO:HI | csv:FILE:COLUMN\n",
    );
    out.push_str(
        "Mix: -r A -r B --mix 9:1 draws A or B per request by weight (equal without --mix); not postgres, mysql\n",
    );
    out.push_str("Errors: the first error is printed in the server's own words (-ERR ..., CLIENT_ERROR ..., the SQL error).");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_driver_is_found_by_name_parsed_from_its_url_and_in_the_help() {
        let help = request_syntax();
        for d in super::super::DRIVERS {
            assert_eq!(Driver::from_name(d.name()), Some(*d));
            assert!(help.contains(&format!("  {:<10} ", d.name())), "{help}");
            let url = d
                .url_form()
                .replace("HOST", "localhost")
                .replace(":PORT", "");
            let (parsed, address, _) = super::super::parse_url(&url).unwrap();
            assert_eq!(parsed, *d, "{url}");
            if !d.url_is_address() && d.name() != "exec" {
                assert_eq!(address.unwrap(), format!("localhost:{}", d.default_port()));
            }
            let json = serde_json::to_string(d).unwrap();
            assert_eq!(serde_json::from_str::<Driver>(&json).unwrap(), *d);
        }
        let err = serde_json::from_str::<Driver>("\"gopher\"").unwrap_err();
        assert!(err.to_string().contains("redis, memcached, http"), "{err}");
    }
}
