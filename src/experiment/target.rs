//! `[target]` and `[[target.service]]`: what is built and the servers its
//! workloads talk to.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use serde::Serialize;

use super::{
    serde_regex_text, serialize_option_template, serialize_template, ExperimentError, Template,
};
use crate::toolchain::Compiler;

/// What is built, from where, how.
#[derive(Debug, Clone, Serialize)]
pub struct Target {
    pub name: String,
    pub source: Source,
    /// Gitignore-style patterns (`source = { path = ".", exclude = [...] }`)
    /// whose files a `path` source's fingerprint leaves out.
    pub exclude: Vec<String>,
    /// Shell command run in the variant's build directory.
    pub build: String,
    /// Binary name → path relative to the build directory (for a cargo
    /// target, to cargo's target directory for the host).
    pub binaries: BTreeMap<String, PathBuf>,
    /// A cargo target: afterburner runs cargo with `build` and RUSTFLAGS.
    pub cargo: Option<Cargo>,
    pub compiler: Compiler,
    /// The project's own compile flags (default `-O2`), before any variant's.
    pub cflags: String,
    /// The project's own link flags (default empty).
    pub ldflags: String,
    /// Upper bound for one build command.
    pub build_timeout: Duration,
    /// Debian packages the build needs; installed as root when missing.
    pub packages: Vec<String>,
    /// Servers started (in order) around every training and bench run.
    pub services: Vec<Service>,
}

/// A cargo package afterburner builds (`[target] cargo`): `cargo build
/// --release` of these binaries, each variant and stage in a target
/// directory of its own, for the host target.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Cargo {
    /// A workspace member by name; `None`: the package at the root.
    pub package: Option<String>,
    pub bins: Vec<String>,
    pub features: Vec<String>,
}

impl Cargo {
    /// The cargo command line that builds it (`-v`: cargo's log then holds
    /// each rustc command line, which the build's check reads).
    pub fn command(&self) -> String {
        let mut words = vec!["cargo build --release --verbose".to_owned()];
        if let Some(package) = &self.package {
            words.push(format!("--package {package}"));
        }
        words.extend(self.bins.iter().map(|b| format!("--bin {b}")));
        if !self.features.is_empty() {
            words.push(format!("--features {}", self.features.join(",")));
        }
        words.join(" ")
    }

    /// Where cargo leaves binary `bin` of a release build, relative to
    /// the target directory of the host target.
    pub fn binary(bin: &str) -> PathBuf {
        PathBuf::from("release").join(bin)
    }
}

/// A server the workloads talk to, started for each run with the variant's
/// binaries and a free port, and stopped after it.
#[derive(Debug, Clone, Serialize)]
pub struct Service {
    pub name: String,
    /// Command line; `{port}` is this service's port.
    #[serde(serialize_with = "serialize_template")]
    pub start: Template,
    /// Run once per variant before its first start, in its fresh state
    /// directory (`{state}`); untimed.
    #[serde(serialize_with = "serialize_option_template")]
    pub setup: Option<Template>,
    /// The user its setup and start run as; its state directory is theirs.
    pub user: Option<RunAs>,
    pub ready: Ready,
    pub ready_timeout: Duration,
    /// Signal number sent to stop it, and its name.
    pub stop_signal: (i32, String),
    /// After the stop signal, how long before SIGKILL.
    pub stop_timeout: Duration,
    /// Where it runs, when the experiment says (`cwd`); otherwise a
    /// directory of its own per run, beside the run's logs, so the files
    /// it writes (a database dump) stay out of the experiment's directory.
    pub cwd: Option<PathBuf>,
    /// CPUs the service runs on; `None`: the bench's default split.
    pub cpus: Option<crate::pinning::CpuSet>,
    pub env: BTreeMap<String, String>,
    /// What sampled training (`autofdo`, BOLT from perf) records of it.
    pub record: Recorded,
}

/// What sampled training records of a service.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Recorded {
    /// Each workload's window: `perf record -p` attached to its processes
    /// once it is ready and the load's warmup is done, stopped when the
    /// workload ends, so start-up and warmup stay out of the profile.
    #[default]
    Window,
    /// Its whole life: started under `perf record`, start-up included.
    Life,
}

/// A user a service runs as. It is looked up when the service is set up
/// or started, not when the experiment loads: validating a recipe needs no
/// such user here (installing mariadb-server creates `mysql`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RunAs {
    pub name: String,
    /// The experiment file and 1-based line that name the user, for the
    /// error when it is missing.
    pub file: PathBuf,
    pub line: usize,
}

impl RunAs {
    /// The user's uid and gid, looked up now; an error naming the
    /// experiment's file and line when there is no such user, or when
    /// afterburner (not root) cannot start a process as them.
    pub fn ids(&self) -> Result<(u32, u32), ExperimentError> {
        let name = &self.name;
        let invalid = |message: String, hint: &str| ExperimentError::Invalid {
            path: self.file.clone(),
            line: self.line,
            message,
            hint: hint.to_owned(),
        };
        let Some((uid, gid)) = crate::process::lookup_user(name) else {
            return Err(invalid(
                format!("no user `{name}` on this machine"),
                &format!("create it (`useradd --system {name}`), install the package that does (postgresql creates `postgres`, mariadb-server `mysql`), or remove user"),
            ));
        };
        // SAFETY: geteuid has no preconditions and cannot fail.
        let me = unsafe { libc::geteuid() };
        if me != 0 && me != uid {
            return Err(invalid(
                format!("user = \"{name}\" needs afterburner to run as root (it runs as uid {me})"),
                "run afterburner as root (sudo), or remove user and run it as that user",
            ));
        }
        Ok((uid, gid))
    }
}

/// How to tell a service is ready.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Ready {
    /// Its port accepts a TCP connection.
    Tcp,
    /// Its output (stdout or stderr) has a line matching the regex.
    Log(#[serde(with = "serde_regex_text")] regex::Regex),
    /// The command (templated) exits 0.
    Command(#[serde(serialize_with = "serialize_template")] Template),
    /// One request of this driver (redis PING, memcached `version`, HTTP GET path) is answered.
    Ping {
        driver: crate::load::Driver,
        request: String,
    },
}

/// Where the source comes from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    /// A directory on disk (absolute).
    Path(PathBuf),
    /// A Debian source package, fetched with `apt-get source`.
    Apt(String),
    /// A git repository at a revision.
    Git { url: String, rev: Option<String> },
    /// A tarball checked against its SHA-256.
    Url { url: String, sha256: String },
    /// A crate from the crates.io registry at one exact version, checked
    /// against the checksum the registry's index lists.
    Crate { name: String, version: String },
}

impl Source {
    /// `{ crate = NAME, version = X.Y.Z }`: a crates.io name and one exact
    /// version, so the checksum the index lists for it never changes; else
    /// what is wrong and its hint.
    pub fn from_crate(name: &str, version: Option<&str>) -> Result<Self, (String, String)> {
        if !is_crate_name(name) {
            return Err((
                format!("`{name}` is not a crates.io package name"),
                "write the name as crates.io shows it: letters, digits, `-` and `_`, starting with a letter".to_owned(),
            ));
        }
        let find = format!("find the version with `cargo search {name}` or on https://crates.io/crates/{name}, then write version = \"X.Y.Z\"");
        let Some(version) = version else {
            return Err((format!("the crate source `{name}` needs its version"), find));
        };
        if !is_exact_version(version) {
            return Err((format!("version `{version}` of crate `{name}` is not one exact version (X.Y.Z): a source is fetched once, so it takes no range"), find));
        }
        Ok(Source::Crate {
            name: name.to_owned(),
            version: version.to_owned(),
        })
    }
}

/// Whether `text` is one exact semver version, `X.Y.Z` with an optional
/// `-pre-release` and `+build` suffix (<https://semver.org/#spec-item-9>),
/// not a range such as `^1`, `1.2` or `>=1.0`.
fn is_exact_version(text: &str) -> bool {
    let (rest, build) = text
        .split_once('+')
        .map_or((text, None), |(r, b)| (r, Some(b)));
    let (core, pre) = rest
        .split_once('-')
        .map_or((rest, None), |(c, p)| (c, Some(p)));
    let numbers: Vec<&str> = core.split('.').collect();
    let identifiers = |s: &str| {
        s.split('.')
            .all(|id| !id.is_empty() && id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'))
    };
    numbers.len() == 3
        && numbers
            .iter()
            .all(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
        && pre.is_none_or(identifiers)
        && build.is_none_or(identifiers)
}

/// Whether `name` can be a crates.io package name: ASCII letters, digits,
/// `-` and `_`, starting with a letter, at most 64 characters (crates.io's
/// rule, <https://doc.rust-lang.org/cargo/reference/registry-index.html#name-restrictions>).
fn is_crate_name(name: &str) -> bool {
    name.len() <= 64
        && name.starts_with(|c: char| c.is_ascii_alphabetic())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}
