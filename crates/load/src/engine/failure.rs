//! Why a request failed, as a type: drivers say which kind of failure it
//! was, the engine decides from the kind what to do with the connection,
//! and the summary counts failures by kind.

use std::fmt;

use serde::{Deserialize, Serialize};

/// A failed request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// No reply within the timeout.
    Timeout(String),
    /// The connection could not be made or broke: make it again.
    Connection(String),
    /// The peer sent something that is not this protocol: drop the
    /// connection.
    Protocol(String),
    /// The server answered with an error, in its own words; the connection
    /// still works.
    Server(String),
    /// Nothing can mend it (a statement the server refuses to prepare):
    /// this client stops.
    Fatal(String),
}

/// The kinds of failure a summary counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FailureKind {
    Timeout,
    Connection,
    Protocol,
    Server,
    Fatal,
}

impl FailureKind {
    /// The kind's name, as `errors_by_kind` writes it.
    pub fn name(self) -> &'static str {
        match self {
            FailureKind::Timeout => "timeout",
            FailureKind::Connection => "connection",
            FailureKind::Protocol => "protocol",
            FailureKind::Server => "server",
            FailureKind::Fatal => "fatal",
        }
    }
}

impl Failure {
    pub fn kind(&self) -> FailureKind {
        match self {
            Failure::Timeout(_) => FailureKind::Timeout,
            Failure::Connection(_) => FailureKind::Connection,
            Failure::Protocol(_) => FailureKind::Protocol,
            Failure::Server(_) => FailureKind::Server,
            Failure::Fatal(_) => FailureKind::Fatal,
        }
    }

    /// Whether the connection must be made again before the next request.
    pub fn drops_connection(&self) -> bool {
        matches!(
            self,
            Failure::Timeout(_) | Failure::Connection(_) | Failure::Protocol(_)
        )
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::Timeout(why) => write!(f, "timed out: {why}"),
            Failure::Connection(why) => write!(f, "connection: {why}"),
            Failure::Protocol(why) => write!(f, "malformed reply: {why}"),
            Failure::Server(why) => write!(f, "the server answered: {why}"),
            Failure::Fatal(why) => write!(f, "cannot go on: {why}"),
        }
    }
}
