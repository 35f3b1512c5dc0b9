//! What a load driver is: its name and URL, its default port and request,
//! its request syntax (for `load --help` and the README), how its clients
//! talk — over the event-loop engine with a [`Protocol`], or one blocking
//! call per request ([`blocking::Call`]) — how a service of it shows it is
//! ready, and whether its load can run on another node. [`Driver`] is a
//! handle on one, compared, printed and recorded by its name.

use std::path::Path;
use std::time::Duration;

use anyhow::Result;

use crate::engine::blocking;
use crate::engine::failure::Failure;
use crate::engine::protocol::Protocol;
use crate::request::mix::RequestMix;

/// What a driver's clients are made from: the parts of a load they read.
#[derive(Debug, Clone, Copy)]
pub struct ClientSpec<'a> {
    /// `host:port` (or a connection string) for network drivers.
    pub address: Option<&'a str>,
    /// The load's requests (a SQL driver prepares its one statement).
    pub requests: &'a RequestMix,
    /// A request unanswered for this long counts as a timeout.
    pub timeout: Duration,
    /// Working directory of `exec` requests.
    pub cwd: Option<&'a Path>,
}

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
    fn client<'a>(&self, spec: &ClientSpec<'a>) -> Result<Client<'a>>;
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
    /// Whether its requests go over the network to an address: a load of
    /// it then needs one, and can run on a node of its own (`[cluster]
    /// load = "separate"`). `exec` runs commands here.
    fn over_network(&self) -> bool {
        true
    }
    /// How a service's `ready = "…"` names this driver's readiness check in
    /// hints (`redis`, `http:/PATH`); `None`: it has none.
    fn ready_form(&self) -> Option<&'static str> {
        None
    }
    /// The request that shows a service is ready, sent once over this
    /// driver and answered: for `ready = "NAME"` (`arg` `None`) or `ready =
    /// "NAME:ARG"`; `None` where the driver has no check of that form.
    fn ready_request(&self, _arg: Option<&str>) -> Option<String> {
        None
    }
}

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

/// A load driver, by name (the list of them, its lookups and constants
/// such as `Driver::REDIS` are the drivers' module's: `drivers!`).
#[derive(Clone, Copy)]
pub struct Driver(pub &'static dyn DriverKind);
