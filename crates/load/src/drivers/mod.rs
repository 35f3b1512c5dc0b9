//! The load drivers, each a file (or a folder) of its own implementing
//! [`DriverKind`], and the one list of them.
//!
//! To add a driver: write `drivers/<name>.rs` with a unit struct
//! implementing [`DriverKind`] — its name (the URL scheme and `driver =
//! "…"`), URL form, default port and request, request syntax, and its
//! `client`: a [`Protocol`](crate::engine::protocol::Protocol)
//! (encode a request, find where a reply ends) for the event loop, or a
//! blocking call per request; where it has them, its readiness check
//! (`ready_form`, `ready_request`) and whether it runs here only
//! (`over_network`) — then add `<name>::<Struct> as <CONSTANT>` to the
//! `drivers!` list below. `afterburner load URL`, experiments, `ready =`,
//! `load --help` and every hint then know it. Written by hand besides: the
//! README's table.

mod dburl;
mod kind;
mod socket;

use std::fmt::Write as _;

use anyhow::{Context as _, Result};

pub use kind::{Client, ClientSpec, Connect, Driver, DriverKind, ServerTime};

use crate::request::mix::{MixError, RequestMix};
use crate::request::RequestTemplate;

/// Declares each driver's module, lists the drivers and names each one a
/// constant of [`Driver`]: the one list. (rustfmt does not reach modules
/// a macro declares; `.ci/run` checks these files by name.)
macro_rules! drivers {
    ($($module:ident :: $driver:ident as $constant:ident),* $(,)?) => {
        $(pub mod $module;)*

        /// Every load driver, in the order help and hints list them.
        pub const DRIVERS: &[Driver] = &[$(Driver(&$module::$driver)),*];

        impl Driver {
            $(
                #[doc = concat!("The `", stringify!($module), "` driver.")]
                pub const $constant: Driver = Driver(&$module::$driver);
            )*
        }
    };
}

drivers! {
    redis::Redis as REDIS,
    memcached::Memcached as MEMCACHED,
    http::HttpDriver as HTTP,
    postgres::PostgresDriver as POSTGRES,
    mysql::MysqlDriver as MYSQL,
    exec::ExecDriver as EXEC,
}

impl Driver {
    /// The driver named `name`.
    pub fn from_name(name: &str) -> Option<Self> {
        DRIVERS.iter().find(|d| d.name() == name).copied()
    }

    /// Every driver's name, for hints: `redis, memcached, …`.
    pub fn names() -> String {
        DRIVERS
            .iter()
            .map(|d| d.name())
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// `templates` drawn by `weights` (in their order; equal when `None`)
    /// for this driver: the SQL drivers prepare one statement, so they take
    /// one request only.
    pub fn mix(
        self,
        templates: Vec<RequestTemplate>,
        weights: Option<&[i64]>,
    ) -> Result<RequestMix, MixError> {
        let requests = templates.len();
        let mix = RequestMix::new(templates, weights)?;
        if mix.is_mix() && self.sql() {
            return Err(MixError::Unsupported {
                driver: self.name(),
                requests,
            });
        }
        Ok(mix)
    }
}

afterburner_leaves::named_handle!(Driver, DriverKind, name, |name| {
    Driver::from_name(name)
        .ok_or_else(|| format!("unknown driver `{name}`; the drivers: {}", Driver::names()))
});

/// The readiness checks the drivers offer, for a hint: `"redis",
/// "memcached" or "http:/PATH"`.
pub fn ready_forms() -> String {
    crate::refusal::quoted_choices(DRIVERS.iter().filter_map(|d| d.ready_form()))
}

/// The drivers whose load can run on another node, for a hint: `redis,
/// memcached, …`.
pub fn network_names() -> String {
    DRIVERS
        .iter()
        .filter(|d| d.over_network())
        .map(|d| d.name())
        .collect::<Vec<_>>()
        .join(", ")
}

/// `load --help`'s request syntax, from every driver's own.
pub fn request_syntax() -> String {
    let mut out =
        String::from("Requests, per driver (words split as a shell would; {NAME} is a --var):\n");
    for d in DRIVERS {
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

/// Every driver's URL form, for help and hints: `redis://HOST:PORT, …`.
pub fn url_forms() -> String {
    DRIVERS
        .iter()
        .map(|d| d.url_form())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Split `scheme://host:port/path` into driver, address and path.
pub fn parse_url(url: &str) -> Result<(Driver, Option<String>, String)> {
    // A driver that sends nothing over the network is named alone.
    if let Some(local) = Driver::from_name(url).filter(|d| !d.over_network()) {
        return Ok((local, None, String::new()));
    }
    let forms = url_forms;
    let (scheme, rest) = url
        .split_once("://")
        .with_context(|| format!("`{url}` has no scheme\nhint: write {}", forms()))?;
    let driver = Driver::from_name(scheme).with_context(|| {
        format!(
            "unknown driver `{scheme}`\nhint: use one of {}",
            Driver::names()
        )
    })?;
    if driver.url_is_address() {
        // libpq's URL form is the connection string itself.
        return Ok((driver, Some(url.to_owned()), String::new()));
    }
    let (hostport, path) = match rest.find('/') {
        Some(i) => (&rest[..i], rest[i..].to_owned()),
        None => (rest, String::new()),
    };
    let address = if hostport.contains(':') {
        hostport.to_owned()
    } else {
        format!("{hostport}:{}", driver.default_port())
    };
    Ok((driver, Some(address), path))
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::request::RequestTemplate;

    #[test]
    fn every_driver_is_found_by_name_parsed_from_its_url_and_in_the_help() {
        let help = request_syntax();
        for d in DRIVERS {
            assert_eq!(Driver::from_name(d.name()), Some(*d));
            assert!(help.contains(&format!("  {:<10} ", d.name())), "{help}");
            let url = d
                .url_form()
                .replace("HOST", "localhost")
                .replace(":PORT", "");
            let (parsed, address, _) = parse_url(&url).unwrap();
            assert_eq!(parsed, *d, "{url}");
            if !d.url_is_address() && d.over_network() {
                assert_eq!(address.unwrap(), format!("localhost:{}", d.default_port()));
            }
            let json = serde_json::to_string(d).unwrap();
            assert_eq!(serde_json::from_str::<Driver>(&json).unwrap(), *d);
        }
        let err = serde_json::from_str::<Driver>("\"gopher\"").unwrap_err();
        assert!(err.to_string().contains("redis, memcached, http"), "{err}");
    }

    #[test]
    fn urls_name_the_driver_and_default_port() {
        let (d, a, p) = parse_url("redis://127.0.0.1").unwrap();
        assert_eq!(
            (d, a.as_deref(), p.as_str()),
            (Driver::REDIS, Some("127.0.0.1:6379"), "")
        );
        let (d, a, p) = parse_url("http://localhost:8080/x?y=1").unwrap();
        assert_eq!(
            (d, a.as_deref(), p.as_str()),
            (Driver::HTTP, Some("localhost:8080"), "/x?y=1")
        );
        assert!(format!("{:#}", parse_url("gopher://h").unwrap_err()).contains("unknown driver"));
        assert!(parse_url("localhost:80").is_err());
    }

    /// The SQL drivers prepare one statement per client: a mix is refused
    /// with a way out; one SQL request is no mix, and exec runs whatever
    /// command was drawn.
    #[test]
    fn sql_drivers_refuse_a_mix_with_a_way_out() {
        let vars = BTreeMap::new();
        let templates = |texts: &[&str]| -> Vec<RequestTemplate> {
            texts
                .iter()
                .map(|t| RequestTemplate::new(t, &vars).unwrap())
                .collect()
        };
        let two = || templates(&["GET a", "GET b"]);
        let err = Driver::POSTGRES.mix(two(), None).unwrap_err();
        assert!(err.to_string().contains("one statement"), "{err}");
        assert!(
            err.hint(false).contains("a workload each"),
            "{}",
            err.hint(false)
        );
        assert!(Driver::POSTGRES
            .mix(templates(&["SELECT 1"]), Some(&[3]))
            .is_ok());
        assert!(Driver::EXEC.mix(two(), None).is_ok());
        assert!(Driver::REDIS.mix(two(), Some(&[9, 1])).is_ok());
    }

    /// Readiness and placement are the drivers' own: the checks `ready =`
    /// offers and the requests they send, and which loads can run apart.
    #[test]
    fn drivers_say_how_a_service_shows_it_is_ready_and_where_they_run() {
        assert_eq!(ready_forms(), "\"redis\", \"memcached\" or \"http:/PATH\"");
        assert_eq!(Driver::REDIS.ready_request(None).as_deref(), Some("PING"));
        assert_eq!(Driver::REDIS.ready_request(Some("x")), None);
        assert_eq!(
            Driver::MEMCACHED.ready_request(None).as_deref(),
            Some("version")
        );
        assert_eq!(
            Driver::HTTP.ready_request(Some("/up")).as_deref(),
            Some("GET /up")
        );
        assert_eq!(Driver::HTTP.ready_request(None), None);
        assert_eq!(Driver::POSTGRES.ready_request(None), None);
        assert_eq!(network_names(), "redis, memcached, http, postgres, mysql");
        assert!(!Driver::EXEC.over_network());
    }
}
